// SPDX-License-Identifier: GPL-2.0-only
/*
 * MtJava - the Java workload of memtop's tests (docs/java.md), printing
 * its own ground truth.
 *
 * java -cp build/workloads/java memtop.workload.MtJava scenario
 *   prints "READY pid=N", waits for a byte on stdin, then runs three
 *   threads' worth of work on one thread, every 10 ms:
 *     Leaker.leak     keeps one byte[LEAK_BYTES] forever (a leak);
 *     Cache.put       puts CACHE_PER_TICK byte[CACHE_BYTES] into an LRU of
 *                     CACHE_ENTRIES entries (filled before READY, renewed
 *                     every second: plateaued);
 *     Churn.burn      allocates CHURN_PER_TICK short-lived byte[] and drops
 *                     them.
 *   Every second it prints one truth line:
 *     {"truth": "java", "t": S, "wall": UNIX_S, "leaked_bytes": B, "leaked_objects": N,
 *      "cache_bytes": B, "churn_bytes": B}
 *   where sizes are the JVM's object sizes (16-byte array header plus the
 *   payload, which is a multiple of 8). It exits at EOF on stdin.
 *
 * java ... MtJava bench [alloc|work]
 *   prints "READY pid=N", then allocates short-lived byte[64..575] as fast
 *   as it can (alloc), or allocates each and writes every byte of it, as a
 *   service builds its buffers (work), and prints "ROUND t_ms ops cpu_ns" every 250 ms: ops since the last
 *   line, the process's CPU time so far (a machine shared with other work
 *   gives the JVM a varying share of the CPUs: ops per CPU second is the
 *   figure that does not move with it).
 */
package memtop.workload;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.Map;

class Leaker {
	static final int LEAK_BYTES = 16 * 1024;
	static final ArrayList<byte[]> kept = new ArrayList<>(1 << 16);
	static long bytes, objects;

	static void leak() {
		byte[] b = new byte[LEAK_BYTES];
		b[0] = 1;
		kept.add(b);
		bytes += 16 + LEAK_BYTES;
		objects++;
	}
}

class Cache {
	static final int CACHE_BYTES = 8 * 1024;
	static final int CACHE_ENTRIES = 1024;
	static final int CACHE_PER_TICK = 10;
	static final LinkedHashMap<Integer, byte[]> lru = new LinkedHashMap<Integer, byte[]>(2048, 0.75f, true) {
		@Override
		protected boolean removeEldestEntry(Map.Entry<Integer, byte[]> e) {
			return size() > CACHE_ENTRIES;
		}
	};
	static int next;

	static void put() {
		byte[] b = new byte[CACHE_BYTES];
		b[1] = 2;
		lru.put(next++, b);
	}

	static long bytes() {
		return (long) lru.size() * (16 + CACHE_BYTES);
	}
}

class Churn {
	static final int CHURN_PER_TICK = 64;
	static final int CHURN_BYTES = 4096;
	static long bytes;
	static volatile Object sink;

	static void burn() {
		for (int i = 0; i < CHURN_PER_TICK; i++) {
			byte[] b = new byte[CHURN_BYTES];
			b[2] = 3;
			sink = b;
			bytes += 16 + CHURN_BYTES;
		}
	}
}

class Bench {
	static volatile Object sink;

	/* CPU time of the whole process (all its threads: GC, JIT, agent). */
	static long cpuNs() {
		return ProcessHandle.current().info().totalCpuDuration().map(d -> d.toNanos()).orElse(-1L);
	}

	static void run(boolean work) {
		long ops = 0, last = System.nanoTime();
		for (;;) {
			for (int i = 0; i < 4096; i++) {
				byte[] b = new byte[64 + (i & 511)];
				if (work)
					for (int k = 0; k < b.length; k++)
						b[k] = (byte) (k ^ i);
				sink = b;
				ops++;
			}
			long now = System.nanoTime();
			if (now - last >= 250_000_000L) {
				System.out.println("ROUND " + now / 1_000_000L + " " + ops + " " + cpuNs());
				ops = 0;
				last = now;
			}
		}
	}
}

public class MtJava {
	public static void main(String[] args) throws Exception {
		String mode = args.length > 0 ? args[0] : "scenario";
		if (!mode.equals("bench")) /* the cache is full before anyone watches */
			for (int i = 0; i < Cache.CACHE_ENTRIES; i++)
				Cache.put();
		System.out.println("READY pid=" + ProcessHandle.current().pid());
		System.out.flush();
		if (mode.equals("bench")) {
			boolean work = args.length > 1 && args[1].equals("work");
			Thread t = new Thread(() -> Bench.run(work), "bench");
			t.setDaemon(true);
			t.start();
			while (System.in.read() >= 0)
				;
			System.exit(0);
		}
		if (System.in.read() < 0)
			System.exit(0);
		Thread eof = new Thread(() -> {
			try {
				while (System.in.read() >= 0)
					;
			} catch (Exception e) {
			}
			System.exit(0);
		}, "eof");
		eof.setDaemon(true);
		eof.start();
		long start = System.nanoTime(), next = start;
		int tick = 0;
		for (;;) {
			Leaker.leak();
			for (int i = 0; i < Cache.CACHE_PER_TICK; i++)
				Cache.put();
			Churn.burn();
			tick++;
			if (tick % 100 == 0) {
				System.out.println("{\"truth\": \"java\", \"t\": " + (System.nanoTime() - start) / 1e9
						+ ", \"wall\": " + System.currentTimeMillis() / 1000.0
						+ ", \"leaked_bytes\": " + Leaker.bytes + ", \"leaked_objects\": " + Leaker.objects
						+ ", \"cache_bytes\": " + Cache.bytes() + ", \"churn_bytes\": " + Churn.bytes + "}");
				System.out.flush();
			}
			next += 10_000_000L;
			long wait = next - System.nanoTime();
			if (wait > 0)
				Thread.sleep(wait / 1_000_000L, (int) (wait % 1_000_000L));
		}
	}
}

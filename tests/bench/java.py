#!/usr/bin/env python3
"""tests/bench/java.py - what memtop costs a Java service (issue 25,
item 5), bare and watched side by side in one run (make bench runs it
through tests/bench/run). Not a test: it prints numbers.

    tests/bench/java.py [--quick] [--rate BYTES]

One JVM (Debian's OpenJDK, -XX:+UseSerialGC, a fixed 512 MiB heap) runs
an allocation-heavy loop of tests/workloads/java/MtJava.java (bench mode:
byte arrays of 64-575 bytes, dropped at once, as fast as it can; a line
every 250 ms with the allocations made and the process's CPU time), then
a second JVM the same loop writing every byte of each array ("work": a
service building its buffers). The
figure is allocations per CPU second of the whole JVM (its GC, JIT and
memtop's agent thread included), so the share of the machine the JVM gets
from other work does not move it. After the JIT has settled (two windows
of 8 lines within 25%), a "pristine" window runs before any memtop; then
rounds alternate a bare window (no memtop: the agent loaded by the first
round idles) and a watched one (`memtop -b --json -p PID` with its
defaults, or --rate). Each window skips its first 2 lines (the switch) and
takes WINDOW lines. Printed: the medians, watched/bare per round and their
median, the agent's samples per second, the CPU each sample costs the JVM
((CPU per allocation watched - bare) x allocations per sample), and beside
them memtop's own report of the target's slowdown (JSON slowdown_pct).

Knobs: ROUNDS=5 WINDOW=12.
"""

import json
import os
import queue
import signal
import statistics
import subprocess
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.path.join(ROOT, "build")
QUICK = "--quick" in sys.argv
ROUNDS = int(os.environ.get("ROUNDS", "3" if QUICK else "5"))
WINDOW = int(os.environ.get("WINDOW", "8" if QUICK else "12"))
RATE = sys.argv[sys.argv.index("--rate") + 1] if "--rate" in sys.argv else None
# The bench loop's objects: byte[64 + (i & 511)], 16 bytes of header, 8-byte
# aligned: 340 bytes on average.
MEAN_OBJECT = 340.0
JAVA = "/usr/lib/jvm/java-17-openjdk-amd64/bin/java"
if not os.path.exists(JAVA):
    JAVA = "java"


def rate_bytes():
    if not RATE:
        return 512 * 1024
    mult = {"K": 1024, "M": 1 << 20, "G": 1 << 30}.get(RATE[-1].upper(), 1)
    return int(RATE.rstrip("KkMmGg")) * mult


class Lines:
    def __init__(self, pipe):
        self.lines = []
        self.q = queue.Queue()
        threading.Thread(target=self._run, args=(pipe,), daemon=True).start()

    def _run(self, pipe):
        for raw in iter(pipe.readline, b""):
            line = raw.decode("utf-8", "replace").rstrip("\n")
            self.lines.append(line)
            self.q.put(line)
        self.q.put(None)


def rounds(jvm, n, skip=0):
    """Allocations per CPU ms over n ROUND lines printed from now on, after
    skip more (lines queued before the call are dropped)."""
    got = []
    while not jvm.out.q.empty():
        jvm.out.q.get_nowait()
    while len(got) < n + 1 + skip:
        line = jvm.out.q.get(timeout=60)
        if line is None:
            sys.exit("java ended: %s" % jvm.popen.poll())
        if line.startswith("ROUND"):
            got.append(line.split())
    got = got[skip:]
    rates = [int(b[2]) / max(1e-3, (int(b[3]) - int(a[3])) / 1e6) for a, b in zip(got, got[1:])]
    return statistics.median(rates)


class Jvm:
    def __init__(self, loop):
        self.popen = subprocess.Popen(
            [JAVA, "-XX:+UseSerialGC", "-Xms512m", "-Xmx512m", "-cp",
             os.path.join(BUILD, "workloads", "java"), "memtop.workload.MtJava", "bench", loop],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.out = Lines(self.popen.stdout)
        line = self.out.q.get(timeout=30)
        if not line or not line.startswith("READY"):
            sys.exit("java did not start: %r" % line)
        self.pid = self.popen.pid

    def warm(self):
        last, t0 = rounds(self, 8), time.monotonic()
        while True:
            now = rounds(self, 8)
            if time.monotonic() - t0 >= 10 and abs(now - last) <= 0.25 * max(now, last):
                return
            if time.monotonic() - t0 > 120:
                sys.exit("the JIT did not settle in 120 s")
            last = now


class Watch:
    def __init__(self, pid):
        args = [os.path.join(BUILD, "memtop"), "-b", "--json", "-p", str(pid)]
        if RATE:
            args += ["--rate", RATE]
        self.popen = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE)
        self.out = Lines(self.popen.stdout)
        self.err = Lines(self.popen.stderr)
        t0 = time.monotonic()
        while not any("Java heap sampled" in l for l in self.err.lines) or \
                not any(l.startswith("{") for l in self.out.lines):
            if self.popen.poll() is not None or time.monotonic() - t0 > 60:
                sys.exit("memtop did not attach: %s" % "\n".join(self.err.lines[-5:]))
            time.sleep(0.05)  # its stderr line is read on a thread

    def targets(self, pid):
        """(time, target) of each JSON record so far."""
        out = []
        for line in list(self.out.lines):
            if line.startswith("{"):
                rec = json.loads(line)
                out += [(rec["time"], t) for t in rec["targets"] if t["pid"] == pid]
        return out

    def stop(self):
        self.popen.send_signal(signal.SIGINT)
        try:
            self.popen.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.popen.kill()
            self.popen.wait()


def bench(loop):
    jvm = Jvm(loop)
    try:
        jvm.warm()
        pristine = rounds(jvm, WINDOW, 2)
        table, ratios, costs, slowdowns, sps = [], [], [], [], []
        for r in range(ROUNDS):
            m = Watch(jvm.pid)
            watched = rounds(jvm, WINDOW, 2)
            recs = m.targets(jvm.pid)
            m.stop()
            bare = rounds(jvm, WINDOW, 2)
            (ta, a), (tb, b) = recs[0], recs[-1]
            per_s = (b["java"]["samples"] - a["java"]["samples"]) / (tb - ta) if tb > ta else 0
            # memtop's report: its probes' (native) and its agent's cost
            said = (b["slowdown_pct"], b["java"]["slowdown_pct"])
            # extra CPU per allocation x allocations per sample (the loop's
            # objects average MEAN_OBJECT bytes; a sample every RATE bytes)
            extra_ns = (1e6 / watched - 1e6 / bare)
            cost = extra_ns * rate_bytes() / MEAN_OBJECT
            ratios.append(watched / bare)
            costs.append(cost)
            sps.append(per_s)
            slowdowns.append(sum(said))
            table.append((r + 1, bare, watched, watched / bare, per_s, cost) + said)
        print("JAVA  %s loop, allocations per CPU ms (rate %s)" % (loop, RATE or "default"))
        print("  pristine (no agent yet) %.0f" % pristine)
        print("  %-5s %10s %10s %8s %10s %12s %8s %8s" % ("round", "bare", "watched", "ratio",
                                                          "samples/s", "ns/sample", "native%",
                                                          "jvmti%"))
        for row in table:
            print("  %-5d %10.0f %10.0f %8.3f %10.0f %12.0f %8.2f %8.2f" % row)
        print("  median watched/bare %.3f (target >= 0.95); idle agent/pristine %.3f; "
              "memtop's reported slowdown (native + jvmti) %.2f%%; cost per sample %.0f ns (CPU)" %
              (statistics.median(ratios), statistics.median(r[1] for r in table) / pristine,
               statistics.median(slowdowns), statistics.median(costs)))
    finally:
        jvm.popen.kill()


def main():
    for loop in ("alloc", "work"):
        bench(loop)


if __name__ == "__main__":
    main()

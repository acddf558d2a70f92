#!/usr/bin/env python3
"""tests/bench/device.py - what memtop's device source costs a process
that allocates device memory (docs/device-memory.md): a loop of Vulkan
(lavapipe) or OpenCL (PoCL) allocations, tests/bench/device_loop.c, run
flat out and measured in alternating windows bare and with `memtop -p PID
-b` attached (default options), on the same process. Not a test: it prints
numbers (part of make bench).

    tests/bench/device.py [--quick]

Two loops per API:
  alloc   allocate and free a SMALL buffer (4 KiB: below malloc's mmap
          threshold, so a CPU driver's own host allocation adds no mmap
          record), nothing else: the difference of CPU time per iteration,
          watched minus bare, is the cost of one device allocation and its
          free (entry and return probes on the allocate call, an entry
          probe on the free);
  small   a SMALL device buffer (4 KiB) allocated and freed per iteration
          while a 1 MiB host buffer of the loop's own is written REPS
          times (512 for Vulkan, 384 for OpenCL: about 4 ms): a frame that allocates one
          small uniform buffer and works elsewhere, where the driver's own
          host allocation is too small for the heap's sampling to matter:
          the device source's share of a frame loop;
  frame   a SIZE buffer (1 MiB) written whole REPS times each iteration
          (vkMapMemory + memset 16 times; clEnqueueFillBuffer 256 times +
          clFinish): a few milliseconds of work per device allocation, as
          a renderer's frame at 60-200 fps allocating one buffer, or a
          compute job's step. On lavapipe and PoCL the device buffer is a
          host allocation too, which the host tier samples: part of the
          cost shown is the heap's, which a GPU's buffers do not have.
Two identical loops run side by side; in each round memtop watches one of
them and the other runs bare over the same seconds, so the machine's load
falls on both alike; the roles swap every round. The ratio is bare over
watched CPU time per iteration: the loop's speed watched, as a share of
bare, on its own CPU (iterations per second are printed too, but they also
move with memtop's own CPU use). Per round the median over WINDOWS
one-second windows of each loop; the table has the medians over ROUNDS
rounds. Knobs: ROUNDS=6 WINDOWS=3 SIZE=1048576
SMALL=4096, APIS="vulkan opencl", LOOPS="alloc small frame", MEMTOP_ARGS (more
options for memtop, e.g. "--rate 1G --no-inject" to take the host tier's
sampling out of the figure).
"""

import os
import re
import signal
import statistics
import subprocess
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.path.join(ROOT, "build")
QUICK = "--quick" in sys.argv
ROUNDS = int(os.environ.get("ROUNDS", "2" if QUICK else "6"))
WINDOWS = int(os.environ.get("WINDOWS", "2" if QUICK else "3"))
SIZE = int(os.environ.get("SIZE", str(1 << 20)))
SMALL = int(os.environ.get("SMALL", "4096"))
APIS = os.environ.get("APIS", "vulkan opencl").split()
LOOPS = os.environ.get("LOOPS", "alloc small frame").split()
MEMTOP_ARGS = os.environ.get("MEMTOP_ARGS", "").split()


def build():
    subprocess.run(["make", "--no-print-directory", "-C", ROOT, "build/memtop",
                    "build/libmemtop-inject.so", "build/libmemtop-sampler.so"], check=True,
                   stdout=subprocess.DEVNULL)
    out = os.path.join(BUILD, "bench", "device_loop")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    subprocess.run(["gcc", "-O2", "-DCL_TARGET_OPENCL_VERSION=300", "-o", out,
                    os.path.join(ROOT, "tests/bench/device_loop.c"), "-lvulkan", "-lOpenCL"],
                   check=True)
    return out


class Loop:
    """A device_loop process whose windows a thread collects."""

    def __init__(self, loop_bin, api, size, work, reps):
        self.p = subprocess.Popen([loop_bin, api, str(size), str(work), str(reps)],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        line = self.p.stdout.readline().decode()
        if not line.startswith("READY"):
            raise SystemExit("device_loop %s: %s" % (api, line))
        self.pid = self.p.pid
        self.wins = []
        self.lock = threading.Lock()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for raw in iter(self.p.stdout.readline, b""):
            f = raw.decode().split()
            if f and f[0] == "win":
                with self.lock:
                    self.wins.append(tuple(float(x) for x in f[1:4]))

    def since(self, t0):
        with self.lock:
            return [(it, ns) for start, it, ns in self.wins if start >= t0]

    def stop(self):
        self.p.stdin.close()
        self.p.wait(10)


def windows(loops, n):
    """n windows of each loop that began after now: per loop, (iters/s,
    cpu ns/iter) medians, taken over the same seconds."""
    t0 = time.monotonic()
    while any(len(l.since(t0)) < n for l in loops):
        if time.monotonic() - t0 > 60 + 2 * n:
            raise SystemExit("device_loop stopped printing windows")
        time.sleep(0.2)
    out = []
    for l in loops:
        got = l.since(t0)[:n]
        out.append((statistics.median(g[0] for g in got), statistics.median(g[1] for g in got)))
    return out


def attach(pid, api):
    """memtop -p pid -b, once it says it follows api's library."""
    m = subprocess.Popen([os.path.join(BUILD, "memtop"), "-p", str(pid), "-b", "-d", "5"] +
                         MEMTOP_ARGS,
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE)
    t0 = time.monotonic()
    while time.monotonic() - t0 < 60:
        line = m.stderr.readline().decode()
        if not line:
            raise SystemExit("memtop exited (rc %s) before following %s" % (m.wait(), api))
        if re.search(r"device memory: .*\b%s \(lib" % api, line):
            return m
    raise SystemExit("memtop never followed %s" % api)


def detach(m):
    m.send_signal(signal.SIGINT)
    m.wait(30)


def measure(loop_bin, api, size, work, reps):
    """Two identical loops side by side, one watched and one bare at the
    same moments (so the machine's load falls on both alike), swapping
    roles each round: per round the bare and the watched figures."""
    loops = [Loop(loop_bin, api, size, work, reps) for _ in range(2)]
    bare, watched = [], []
    for r in range(ROUNDS):
        w = r % 2
        m = attach(loops[w].pid, api)
        got = windows(loops, WINDOWS)
        detach(m)
        watched.append(got[w])
        bare.append(got[1 - w])
    for l in loops:
        l.stop()
    return bare, watched


def main():
    if os.geteuid() != 0:
        raise SystemExit("needs root (uprobes, BPF)")
    loop_bin = build()
    print("device memory source: two loops side by side, one watched and one bare, roles "
          "swapped each of %d rounds of %d one-second windows; ratio and ns/alloc: medians "
          "over the rounds" % (ROUNDS, WINDOWS))
    print("%-7s %-12s %13s %13s %14s %14s %9s %10s" %
          ("api", "loop", "bare iters/s", "watched it/s", "bare cpu ns/it", "watched ns/it",
           "ratio", "ns/alloc"))
    for api in APIS:
        reps = 16 if api == "vulkan" else 256
        for name, size, work, n in (("alloc 4K", SMALL, 0, 1),
                                    ("small 4K", SMALL, SIZE, 512 if api == "vulkan" else 384),
                                    ("frame 1M", SIZE, SIZE, reps)):
            if name.split()[0] not in LOOPS:
                continue
            bare, watched = measure(loop_bin, api, size, work, n)
            b_it = statistics.median(b[0] for b in bare)
            w_it = statistics.median(w[0] for w in watched)
            b_ns = statistics.median(b[1] for b in bare)
            w_ns = statistics.median(w[1] for w in watched)
            ratios = [b[1] / w[1] for b, w in zip(bare, watched)]
            per_round = " ".join("%.3f" % r for r in ratios)
            print("%-7s %-12s %13.1f %13.1f %14.0f %14.0f %9.3f %10.0f   rounds: %s" %
                  (api, name, b_it, w_it, b_ns, w_ns, statistics.median(ratios),
                   statistics.median(w[1] - b[1] for b, w in zip(bare, watched)), per_round))
            sys.stdout.flush()


if __name__ == "__main__":
    main()

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
  frame   a SIZE buffer (1 MiB) written whole REPS times each iteration
          (vkMapMemory + memset 16 times; clEnqueueFillBuffer 256 times +
          clFinish): a few milliseconds of work per device allocation, as
          a renderer's frame at 60-200 fps allocating one buffer, or a
          compute job's step. On lavapipe and PoCL the device buffer is a
          host allocation too, which the host tier samples: part of the
          cost shown is the heap's, which a GPU's buffers do not have.
The ratio is bare over watched CPU time per iteration: the loop's speed
watched, as a share of bare, on its own CPU (iterations per second are
printed too, but on a shared 2-CPU machine they also move with memtop's
own CPU and the neighbours'). Per phase the median over WINDOWS one-second
windows; ROUNDS alternations. Knobs: ROUNDS=5 WINDOWS=3 SIZE=1048576
SMALL=4096.
"""

import os
import re
import signal
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.path.join(ROOT, "build")
QUICK = "--quick" in sys.argv
ROUNDS = int(os.environ.get("ROUNDS", "2" if QUICK else "5"))
WINDOWS = int(os.environ.get("WINDOWS", "2" if QUICK else "3"))
SIZE = int(os.environ.get("SIZE", str(1 << 20)))
SMALL = int(os.environ.get("SMALL", "4096"))


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


def windows(loop, n):
    """n windows that began after now: (iters/s, cpu ns/iter) medians."""
    since, got = time.monotonic(), []
    while len(got) < n:
        line = loop.stdout.readline().decode()
        if not line:
            raise SystemExit("device_loop ended")
        if line.startswith("win "):
            start, it, ns = (float(x) for x in line.split()[1:4])
            if start >= since:
                got.append((it, ns))
    return statistics.median(g[0] for g in got), statistics.median(g[1] for g in got)


def attach(pid, api):
    """memtop -p pid -b, once it says it follows api's library."""
    m = subprocess.Popen([os.path.join(BUILD, "memtop"), "-p", str(pid), "-b", "-d", "5"],
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
    loop = subprocess.Popen([loop_bin, api, str(size), str(work), str(reps)],
                            stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE)
    line = loop.stdout.readline().decode()
    if not line.startswith("READY"):
        raise SystemExit("device_loop %s: %s" % (api, line))
    bare, watched = [], []
    for _ in range(ROUNDS):
        bare.append(windows(loop, WINDOWS))
        m = attach(loop.pid, api)
        watched.append(windows(loop, WINDOWS))
        detach(m)
    loop.stdin.close()
    loop.wait(10)
    return bare, watched


def main():
    if os.geteuid() != 0:
        raise SystemExit("needs root (uprobes, BPF)")
    loop_bin = build()
    print("device memory source: %d rounds of %d one-second windows, bare and watched "
          "alternately" % (ROUNDS, WINDOWS))
    print("%-7s %-12s %13s %13s %14s %14s %9s %10s" %
          ("api", "loop", "bare iters/s", "watched it/s", "bare cpu ns/it", "watched ns/it",
           "ratio", "ns/alloc"))
    for api in ("vulkan", "opencl"):
        reps = 16 if api == "vulkan" else 256
        for name, size, work, n in (("alloc 4K", SMALL, 0, 1), ("frame 1M", SIZE, SIZE, reps)):
            bare, watched = measure(loop_bin, api, size, work, n)
            b_it = statistics.median(b[0] for b in bare)
            w_it = statistics.median(w[0] for w in watched)
            b_ns = statistics.median(b[1] for b in bare)
            w_ns = statistics.median(w[1] for w in watched)
            per_round = " ".join("%.3f" % (b[1] / w[1]) for b, w in zip(bare, watched))
            print("%-7s %-12s %13.1f %13.1f %14.0f %14.0f %9.3f %10.0f   rounds: %s" %
                  (api, name, b_it, w_it, b_ns, w_ns, b_ns / w_ns, w_ns - b_ns, per_round))
            sys.stdout.flush()


if __name__ == "__main__":
    main()

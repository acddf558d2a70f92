#!/usr/bin/env python3
"""tests/bench/inject.py - what memtop --inject costs a running process
(issue 13): one long-running server-like loop (tests/bench/inject_loop.c),
paced to RATE malloc/free pairs per second, measured in alternating windows
bare and with `memtop -p PID --inject` attached, on the same process. Not a
test: it prints numbers (part of make bench through tests/bench/run).

    tests/bench/inject.py [--quick]

Per phase it takes the median over WINDOWS one-second windows of the CPU
time per pair (the loop is paced, so its throughput is fixed and its cost
shows as CPU time) and of pairs/s, and prints per round and overall the
ratio injected/bare; it also prints the hold times memtop reported. Knobs:
ROUNDS=4 WINDOWS=4 RATE=500000 (0: flat out, the ratio is then of pairs/s)
MEMTOP_RATE=512K (memtop's --rate; 1G samples almost nothing, which leaves
the cost of the sampler's own path without the probe hits).
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
ROUNDS = int(os.environ.get("ROUNDS", "2" if QUICK else "4"))
WINDOWS = int(os.environ.get("WINDOWS", "3" if QUICK else "4"))
RATE = int(os.environ.get("RATE", "500000"))
MEMTOP_RATE = os.environ.get("MEMTOP_RATE", "512K")


def build():
    subprocess.run(["make", "--no-print-directory", "-C", ROOT, "build/memtop",
                    "build/libmemtop-inject.so"], check=True, stdout=subprocess.DEVNULL)
    out = os.path.join(BUILD, "bench", "inject_loop")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    subprocess.run(["gcc", "-O2", "-o", out, os.path.join(ROOT, "tests/bench/inject_loop.c")],
                   check=True)
    return out


def windows(loop, n):
    """The next n windows after one to settle: (pairs/s, cpu ns/pair) medians."""
    got = []
    while len(got) < n + 1:
        line = loop.stdout.readline().decode()
        if not line:
            raise SystemExit("inject_loop ended")
        if line.startswith("win "):
            got.append(tuple(float(x) for x in line.split()[1:3]))
    got = got[1:]
    return statistics.median(g[0] for g in got), statistics.median(g[1] for g in got)


def main():
    if os.geteuid() != 0:
        raise SystemExit("needs root")
    loop_bin = build()
    loop = subprocess.Popen([loop_bin, "1000", str(RATE)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE)
    pid = int(loop.stdout.readline().split()[1])
    rows, holds = [], []
    try:
        for r in range(1, ROUNDS + 1):
            bare = windows(loop, WINDOWS)
            m = subprocess.Popen([os.path.join(BUILD, "memtop"), "-b", "-d", "1", "-p", str(pid),
                                  "--inject", "--rate", MEMTOP_RATE],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            line = m.stderr.readline().decode()  # "sampler injected ..." or the refusal
            if "GOT slots rerouted" not in line:
                raise SystemExit("memtop: %s" % line.strip())
            holds += [float(x) for x in re.findall(r"held ([0-9.]+) ms", line)]
            injected = windows(loop, WINDOWS)
            m.send_signal(signal.SIGINT)
            rest = m.communicate(timeout=60)[1].decode()
            holds += [float(x) for x in re.findall(r"held ([0-9.]+) ms", rest.split("longest")[0])]
            rows.append((bare, injected))
            print("round %d: bare %.0f pairs/s %.1f ns/pair, injected %.0f pairs/s %.1f ns/pair: "
                  "cost x%.3f" % (r, bare[0], bare[1], injected[0], injected[1],
                                  injected[1] / bare[1]), flush=True)
    finally:
        loop.stdin.close()
        loop.wait(timeout=30)
    b = statistics.median(x[0][1] for x in rows)
    i = statistics.median(x[1][1] for x in rows)
    bt = statistics.median(x[0][0] for x in rows)
    it = statistics.median(x[1][0] for x in rows)
    print("inject: %d rounds x %d windows, loop paced to %s pairs/s, memtop --rate %s" %
          (ROUNDS, WINDOWS, RATE or "unlimited", MEMTOP_RATE))
    print("  bare      %9.0f pairs/s  %6.1f ns CPU per pair" % (bt, b))
    print("  injected  %9.0f pairs/s  %6.1f ns CPU per pair" % (it, i))
    print("  throughput injected/bare %.3f; CPU per pair injected/bare %.3f" % (it / bt, i / b))
    if holds:
        print("  thread held: median %.2f ms, max %.2f ms over %d stops" %
              (statistics.median(holds), max(holds), len(holds)))


if __name__ == "__main__":
    main()

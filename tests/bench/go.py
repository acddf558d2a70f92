#!/usr/bin/env python3
"""tests/bench/go.py - what memtop costs a Go service (issue 14, item 3):
two copies of one long-running, allocation-heavy, server-like Go loop
(tests/workloads/go/mt_go.go -mode=server: requests that build and drop
buffers, paced to RATE requests/s, about 4.3 KB of allocations each, so
0.43 GB/s and some 850 runtime samples/s at the default) run side by side
under the same machine load; in each round both run bare for WINDOWS
one-second windows, then one of them (A, then B, alternating) is watched
by `memtop -b -p PID` with plain defaults (memtop probes only the Go
runtime's own sampled path, docs/go.md) for WINDOWS more. Not a test: it
prints numbers (part of make bench through tests/bench/run).

    tests/bench/go.py [--quick]

The figure is the CPU time per request of the whole process (its GC
threads and the traps are charged to it): per window the watched copy's
over the other's, divided by the same ratio in the bare windows of that
round, so load from elsewhere on the machine cancels; the median over
rounds is printed with the requests/s ratio measured the same way and
the slowdown memtop itself reported. The loops are paced so that their
cost shows as CPU time, not as a share of a busy machine. Knobs: ROUNDS=6
WINDOWS=5 RATE=100000 (0: flat out) GO_BIN=build/workloads/mt_go.
"""

import os
import queue
import re
import signal
import statistics
import subprocess
import sys
import threading

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.path.join(ROOT, "build")
QUICK = "--quick" in sys.argv
ROUNDS = int(os.environ.get("ROUNDS", "4" if QUICK else "6"))
WINDOWS = int(os.environ.get("WINDOWS", "4" if QUICK else "5"))
GO_BIN = os.environ.get("GO_BIN", os.path.join(BUILD, "workloads", "mt_go"))
RATE = int(os.environ.get("RATE", "100000"))


class Server:
    """One mt_go -mode=server; its "win" lines are read on a thread."""

    def __init__(self, name):
        self.name = name
        self.proc = subprocess.Popen([GO_BIN, "-mode=server", "-rate", str(RATE)],
                                     stdout=subprocess.PIPE)
        ready = self.proc.stdout.readline().decode().split()
        if ready[:1] != ["READY"]:
            raise SystemExit("mt_go: %s" % ready)
        self.version = ready[1]
        self.lines = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for raw in iter(self.proc.stdout.readline, b""):
            if raw.startswith(b"win "):
                self.lines.put(tuple(float(x) for x in raw.split()[1:3]))
        self.lines.put(None)

    def window(self):
        w = self.lines.get(timeout=30)
        if w is None:
            raise SystemExit("mt_go %s ended" % self.name)
        return w

    def skip(self):
        while not self.lines.empty():
            self.lines.get()


def phase(a, b, n):
    """n windows of both after one to settle: medians of B/A for requests/s
    and CPU ns/request."""
    a.skip()
    b.skip()
    a.window()
    b.window()
    tput, cpu = [], []
    for _ in range(n):
        wa, wb = a.window(), b.window()
        tput.append(wb[0] / wa[0])
        cpu.append(wb[1] / wa[1])
    return statistics.median(tput), statistics.median(cpu)


def main():
    if os.geteuid() != 0:
        raise SystemExit("needs root")
    subprocess.run(["make", "--no-print-directory", "-C", ROOT, "build/memtop",
                    os.path.relpath(GO_BIN, ROOT)], check=True, stdout=subprocess.DEVNULL)
    servers = [Server("A"), Server("B")]
    cpu_ratios, tput_ratios, reported = [], [], []
    try:
        for r in range(1, ROUNDS + 1):
            watched, other = servers[(r - 1) % 2], servers[r % 2]
            bare = phase(other, watched, WINDOWS)
            m = subprocess.Popen([os.path.join(BUILD, "memtop"), "-b", "-d", "1", "-p",
                                  str(watched.proc.pid)], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE)
            line = m.stderr.readline().decode()
            if "Go runtime" not in line:
                raise SystemExit("memtop: %s" % line.strip())
            on = phase(other, watched, WINDOWS)
            m.send_signal(signal.SIGINT)
            out = m.communicate(timeout=60)[0].decode()
            reported += [float(x) for x in re.findall(r"target slowdown ([0-9.]+)%", out)][1:]
            cpu_ratios.append(on[1] / bare[1])
            tput_ratios.append(on[0] / bare[0])
            print("round %d: %s watched: CPU per request x%.4f, requests/s x%.4f "
                  "(against %s, relative to the bare windows)" %
                  (r, watched.name, cpu_ratios[-1], tput_ratios[-1], other.name), flush=True)
    finally:
        for s in servers:
            s.proc.kill()
            s.proc.wait(timeout=30)
    print("go: %s, %d rounds x %d windows, two servers side by side, memtop -p with plain "
          "defaults (Go runtime probes)" % (servers[0].version, ROUNDS, WINDOWS))
    print("  CPU per request watched/bare %.4f (median; rounds %.4f..%.4f)" %
          (statistics.median(cpu_ratios), min(cpu_ratios), max(cpu_ratios)))
    print("  requests/s watched/bare %.4f (median)" % statistics.median(tput_ratios))
    print("  memtop's reported slowdown of the target: median %.2f%%" %
          (statistics.median(reported) if reported else float("nan")))


if __name__ == "__main__":
    main()

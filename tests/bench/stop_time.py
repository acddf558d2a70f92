#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""tests/bench/stop_time.py - how long memtop takes to end after SIGINT,
two builds side by side in one run (docs/reliability.md, Signals). Not a
test: it prints a table.

N targets (tests/workloads/hostile/hostile.c in its plain mode: a 64 KiB
block a millisecond) are watched by `MEMTOP -b --json -p PID,...`; at the
first record memtop gets SIGINT and the time to its exit is taken. The two
builds alternate, ROUNDS times per target count, optionally with BUSY
busy loops at nice 10 started (and stopped) by the bench itself.

    tests/bench/stop_time.py --before OLD_MEMTOP [--after build/memtop]
                             [--targets 1,4,8] [--rounds 5] [--busy 8]
"""

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def stop_time(memtop, pids):
    m = subprocess.Popen([memtop, "-b", "--json", "-d", "0.3", "--rate", "64K", "--max-overhead",
                          "none", "-p", ",".join(map(str, pids))],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    if not m.stdout.readline():
        sys.exit("%s printed no record" % memtop)
    t0 = time.monotonic()
    m.send_signal(signal.SIGINT)
    m.wait()
    return time.monotonic() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--before", required=True)
    ap.add_argument("--after", default=os.path.join(ROOT, "build", "memtop"))
    ap.add_argument("--targets", default="1,4,8")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--busy", type=int, default=0)
    a = ap.parse_args()
    exe = os.path.join(tempfile.mkdtemp(prefix="memtop-stop-"), "target")
    subprocess.run(["cc", "-O2", "-o", exe, os.path.join(ROOT, "tests", "workloads", "hostile",
                                                         "hostile.c")], check=True)
    busy = [subprocess.Popen(["nice", "-n", "10", "sh", "-c", "while :; do :; done"])
            for _ in range(a.busy)]
    try:
        print("load %.1f, %d busy loops" % (os.getloadavg()[0], a.busy))
        print("%7s  %-8s %8s %8s  rounds (s)" % ("targets", "build", "median", "max"))
        for n in map(int, a.targets.split(",")):
            ts = [subprocess.Popen([exe], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
                  for _ in range(n)]
            pids = [int(t.stdout.readline().split(b"pid=")[1]) for t in ts]
            took = {"before": [], "after": []}
            for _ in range(a.rounds):
                for name in took:
                    took[name].append(stop_time(getattr(a, name), pids))
            for t in ts:
                t.kill()
                t.wait()
            for name, v in took.items():
                print("%7d  %-8s %8.3f %8.3f  %s" % (n, name, statistics.median(v), max(v),
                                                     " ".join("%.2f" % x for x in v)))
            print("%7d  after/before median ratio %.2f" %
                  (n, statistics.median(took["after"]) / statistics.median(took["before"])))
        print("load %.1f at the end" % os.getloadavg()[0])
    finally:
        for b in busy:
            b.kill()
            b.wait()


if __name__ == "__main__":
    main()

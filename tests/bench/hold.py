#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""tests/bench/hold.py - what holding new programs at their start costs a
cgroup that starts many (docs/cgroup.md, "Held at its start"). Not a
test: it prints a table.

A shell in a cgroup of the bench's own runs /bin/true N times in a loop
and times it; the loop runs bare, under `memtop --cgroup` (each program
held at its loader's end until memtop's uprobes are on it), under
`memtop --cgroup --no-hold` (no hold: memtop attaches when it finds them),
and under `memtop --cgroup --no-inject` (the shell on uprobes: each child
also held at its fork). The modes alternate, ROUNDS times; the table has
each mode's median milliseconds per program and its ratio to bare, and
the holds memtop said with their median length.

    tests/bench/hold.py [--quick] [--rounds 5] [--programs 40]
"""

import argparse
import os
import re
import signal
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MEMTOP = os.environ.get("MEMTOP", os.path.join(ROOT, "build", "memtop"))
MODES = [("bare", None), ("default", []), ("--no-hold", ["--no-hold"]),
         ("--no-inject", ["--no-inject"])]


def v2_root():
    for path in ("/sys/fs/cgroup", "/sys/fs/cgroup/unified"):
        if os.path.exists(os.path.join(path, "cgroup.controllers")):
            return path
    sys.exit("no cgroup v2 hierarchy mounted")


def in_cgroup(path, argv, **kw):
    """argv started inside the cgroup at path (it joins before it execs)."""
    script = 'echo $$ > %s/cgroup.procs; exec "$@"' % path
    return subprocess.Popen(["sh", "-c", script, "sh"] + argv, **kw)


def loop_ms(path, n):
    """Milliseconds per program of n /bin/true run by a shell in the cgroup."""
    p = in_cgroup(path, ["sh", "-c", 's=$(date +%%s%%N); i=0; while [ $i -lt %d ]; do '
                         '/bin/true; i=$((i+1)); done; e=$(date +%%s%%N); echo $(((e-s)/1000))'
                         % n], stdout=subprocess.PIPE, stdin=subprocess.DEVNULL)
    out = p.communicate(timeout=300)[0]
    return int(out) / 1000.0 / n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--programs", type=int, default=40)
    a = ap.parse_args()
    rounds = 2 if a.quick else a.rounds
    path = os.path.join(v2_root(), "memtop-bench-hold-%d" % os.getpid())
    os.mkdir(path)
    resident = None
    per = {name: [] for name, _ in MODES}
    holds = []
    try:
        # memtop needs a process in the cgroup when it starts
        resident = in_cgroup(path, ["sleep", "100000"])
        t0 = time.monotonic()
        while not open(os.path.join(path, "cgroup.procs")).read().strip():
            if time.monotonic() - t0 > 10:
                sys.exit("the resident process did not join %s" % path)
            time.sleep(0.01)
        print("hold: %d rounds of %d programs (/bin/true from a shell in a cgroup), "
              "load %.1f" % (rounds, a.programs, os.getloadavg()[0]))
        for r in range(rounds):
            for name, opts in MODES:
                m = None
                if opts is not None:
                    m = subprocess.Popen([MEMTOP, "-b", "--json", "-d", "0.5", "--cgroup", path]
                                         + opts, stdout=subprocess.PIPE,
                                         stderr=subprocess.PIPE, text=True)
                    if not m.stdout.readline():
                        sys.exit("memtop printed no record: %s" % m.stderr.read()[-400:])
                per[name].append(loop_ms(path, a.programs))
                if m:
                    m.send_signal(signal.SIGINT)
                    err = m.communicate(timeout=60)[1]
                    if name == "default":
                        holds += [float(x) for x in
                                  re.findall(r"; held ([0-9.]+) ms at its start", err)]
        bare = statistics.median(per["bare"])
        print("%-12s %10s %8s  rounds (ms a program)" % ("mode", "ms/prog", "x bare"))
        for name, _ in MODES:
            med = statistics.median(per[name])
            print("%-12s %10.2f %8.2f  %s" % (name, med, med / bare,
                                               " ".join("%.2f" % x for x in per[name])))
        if holds:
            print("holds said by the default mode: %d, median %.1f ms, max %.1f ms" %
                  (len(holds), statistics.median(holds), max(holds)))
        print("load %.1f at the end" % os.getloadavg()[0])
    finally:
        if resident:
            resident.kill()
            resident.wait()
        for _ in range(50):
            try:
                os.rmdir(path)
                break
            except OSError:
                time.sleep(0.1)


if __name__ == "__main__":
    main()

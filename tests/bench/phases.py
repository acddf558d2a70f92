#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""tests/bench/phases.py - what each state of memtop's probes costs the
target, measured on the target (docs/probes.md sections 6.2-6.4). Not a
test: it prints a table.

One tests/bench/server.c runs bare, then watched by memtop -b --json for
WATCH seconds, then bare again. Its own 10 ms windows (requests, wall and
CPU time) are labelled by the state of the probes, read by polling the
first byte of malloc in /proc/PID/mem for an int3 every millisecond:
bare (before memtop attached and after it left), free-only (malloc not
probed while memtop watches: the budget's off-phases and the start-up
phases) and all probes. For each state it prints the CPU time per
request, the slowdown against bare and the CPU a probe hit costs (the
extra CPU per request over the probe hits a request makes: PAIRS frees,
plus PAIRS mallocs with every probe on), the same split by the time since
the last switch of the probes (does attaching or detaching cost the target
anything that lasts?), the utime/stime share the kernel's ticks give each
state (/proc/PID/stat), the real on/off phases of malloc's probe against
the duty memtop reports, and memtop's reported slowdown (median of its
records after WARM seconds) against the truth over the same span.

    tests/bench/phases.py [--pairs N] [--iters N] [--budget PCT|none]
                          [--bare S] [--watch S]
"""

import argparse
import bisect
import ctypes
import json
import os
import queue
import signal
import statistics
import subprocess
import sys
import threading
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
OUT = os.environ.get("BENCH_DIR", os.path.join(ROOT, "build", "bench"))
MEMTOP = os.path.join(ROOT, "build", "memtop")
WARM_S = 5.0


def malloc_address(pid):
    """malloc's address in pid, which maps the libc this script maps."""
    addr = ctypes.cast(ctypes.CDLL(None).malloc, ctypes.c_void_p).value
    for line in open("/proc/self/maps"):
        f = line.split()
        lo, hi = (int(x, 16) for x in f[0].split("-"))
        if lo <= addr < hi:
            lib, off = f[-1], addr - lo + int(f[2], 16)
    for line in open("/proc/%d/maps" % pid):
        f = line.split()
        lo, hi = (int(x, 16) for x in f[0].split("-"))
        if f[-1] == lib and "x" in f[1] and 0 <= off - int(f[2], 16) < hi - lo:
            return lo + off - int(f[2], 16)
    raise RuntimeError("PID %d does not map %s" % (pid, lib))


class Poller:
    """Every millisecond: (t_ns, malloc probed, utime ticks, stime ticks)."""

    def __init__(self, pid):
        self.fd = os.open("/proc/%d/mem" % pid, os.O_RDONLY)
        self.addr = malloc_address(pid)
        self.stat = "/proc/%d/stat" % pid
        self.v, self.running = [], True
        self.t = threading.Thread(target=self.run, daemon=True)
        self.t.start()

    def run(self):
        while self.running:
            on = os.pread(self.fd, 1, self.addr) == b"\xcc"
            f = open(self.stat).read().rsplit(")", 1)[1].split()
            self.v.append((time.monotonic_ns(), on, int(f[11]), int(f[12])))
            time.sleep(0.001)

    def stop(self):
        self.running = False
        self.t.join()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=int, default=20)
    ap.add_argument("--iters", type=int, default=2000)
    ap.add_argument("--budget", default="10")
    ap.add_argument("--bare", type=float, default=3)
    ap.add_argument("--watch", type=float, default=30)
    a = ap.parse_args()
    os.makedirs(OUT, exist_ok=True)
    exe = os.path.join(OUT, "server")
    subprocess.run(["gcc", "-O2", "-g", "-Wall", "-o", exe,
                    os.path.join(ROOT, "tests", "bench", "server.c")], check=True)
    srv = subprocess.Popen([exe, str(a.pairs), str(a.iters), "10"], stdin=subprocess.PIPE,
                           stdout=subprocess.PIPE, text=True)
    pid = int(srv.stdout.readline().split()[1])
    wins = []  # (end_ns, requests, wall_ns, cpu_ns)

    def read_windows():
        for line in srv.stdout:
            f = line.split()
            wins.append((int(f[4]), int(f[1]), int(f[2]), int(f[3])))
    threading.Thread(target=read_windows, daemon=True).start()
    polls = Poller(pid)
    time.sleep(a.bare)
    attach_ns = time.monotonic_ns()
    m = subprocess.Popen([MEMTOP, "-b", "--json", "-d", "0.5", "--max-overhead", a.budget,
                          "--no-inject", "-p", str(pid)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                         text=True)
    recs = queue.Queue()

    def read_records():
        for line in m.stdout:
            recs.put((time.monotonic_ns(), json.loads(line)))
    threading.Thread(target=read_records, daemon=True).start()
    time.sleep(a.watch)
    m.send_signal(signal.SIGINT)
    m.wait(15)
    left_ns = time.monotonic_ns()
    time.sleep(a.bare)
    polls.stop()
    srv.stdin.close()
    srv.wait(10)

    pt = [p[0] for p in polls.v]
    probed = [p[0] for p in polls.v if p[1]]
    # memtop's probes are in place from its first int3 to its last (it
    # starts up for a second before, and its free() probe is gone soon
    # after); a window partly outside is left out
    first, last = probed[0], probed[-1]

    def state(t0, t1):
        if t1 < attach_ns or t0 > left_ns + 500e6:
            return "bare"
        if t0 < first or t1 > last:
            return None
        seen = set(p[1] for p in polls.v[bisect.bisect_left(pt, t0):bisect.bisect_right(pt, t1)])
        return {frozenset([True]): "all", frozenset([False]): "free-only"}.get(frozenset(seen))

    switches = [b[0] for a_, b in zip(polls.v, polls.v[1:]) if a_[1] != b[1]]
    by, since = {}, {}
    for end, n, wall, cpu in wins:
        st = state(end - wall, end)
        if st is None or not n:
            continue
        by.setdefault(st, []).append((n, cpu))
        i = bisect.bisect_right(switches, end - wall) - 1
        if st != "bare" and i >= 0:
            key = (st, min(int((end - wall - switches[i]) / 20e6) * 20, 200))
            since.setdefault(key, []).append((n, cpu))

    def per_req(v):
        return sum(x[1] for x in v) / sum(x[0] for x in v)
    bare = per_req(by["bare"])
    hits = {"bare": 0, "free-only": a.pairs, "all": 2 * a.pairs}
    print("server: %d pairs + %d rounds a request; memtop --max-overhead %s; load %s" %
          (a.pairs, a.iters, a.budget, open("/proc/loadavg").read().split()[:3]))
    print("%-10s %8s %10s %14s %10s %13s" % ("state", "windows", "requests", "CPU/request",
                                             "slowdown", "CPU per hit"))
    for st in ("bare", "free-only", "all"):
        if st not in by:
            continue
        c = per_req(by[st])
        print("%-10s %8d %10d %11.0f ns %9.1f%% %10s" %
              (st, len(by[st]), sum(x[0] for x in by[st]), c, 100 * (c / bare - 1),
               "%.0f ns" % ((c - bare) / hits[st]) if hits[st] else "-"))
    print("CPU per hit by the time since the last switch of malloc's probe:")
    for key in sorted(since):
        v = since[key]
        print("  %-9s %3d-%3d ms: %5d windows, %6.0f ns" %
              (key[0], key[1], key[1] + 20, len(v), (per_req(v) - bare) / hits[key[0]]))
    ticks = {}
    for p, q in zip(polls.v, polls.v[1:]):
        st = "bare" if p[0] < attach_ns or p[0] > left_ns else ("all" if p[1] else "free-only")
        d = ticks.setdefault(st, [0, 0])
        d[0] += q[2] - p[2]
        d[1] += q[3] - p[3]
    for st, (u, s) in sorted(ticks.items()):
        print("ticks %-9s utime %5d stime %5d: stime share %.2f" % (st, u, s, s / max(u + s, 1)))
    watched = [p for p in polls.v if attach_ns + WARM_S * 1e9 < p[0] < left_ns]
    runs, cur = [], None
    for p in watched:
        if cur is None or cur[0] != p[1]:
            if cur:
                runs.append((cur[0], p[0] - cur[1]))
            cur = [p[1], p[0]]
    ons = [d / 1e6 for on, d in runs[1:] if on]
    offs = [d / 1e6 for on, d in runs[1:] if not on]
    out = []
    while not recs.empty():
        out.append(recs.get())
    # records with a figure (null: not measured yet, or only a lower bound)
    late = [r["overhead"] for t, r in out if t > attach_ns + WARM_S * 1e9 and
            r["overhead"]["est_slowdown_pct"] is not None]
    share = sum(p[1] for p in watched) / max(len(watched), 1)
    print("after %.0f s: malloc probed %.3f of the time (memtop's duty %s); on-phases %d, "
          "mean %.0f ms; off-phases %d, mean %.0f ms" %
          (WARM_S, share, "%.2f" % statistics.median(o["duty"] for o in late) if late else "-",
           len(ons), statistics.mean(ons) if ons else 0, len(offs),
           statistics.mean(offs) if offs else 0))
    span = [(n, c) for end, n, wall, c in wins if attach_ns + WARM_S * 1e9 < end - wall and
            end < left_ns and n]
    if late and span:
        truth = 100 * (sum(c for n, c in span) / sum(n for n, c in span) / bare - 1)
        said = statistics.median(o["est_slowdown_pct"] for o in late)
        print("slowdown over that span: measured %.0f%%, memtop reported %.0f%% (median of %d "
              "records, %.0f-%.0f): ratio %.2f; floor reported %.0f%%, hit_ns %.0f" %
              (truth, said, len(late), min(o["est_slowdown_pct"] for o in late),
               max(o["est_slowdown_pct"] for o in late), said / truth if truth > 0 else
               float("nan"), statistics.median(o["floor_pct"] for o in late),
               statistics.median(o["hit_ns"] for o in late)))
    return 0


if __name__ == "__main__":
    sys.exit(main())

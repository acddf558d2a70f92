#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""tests/bench/slowdown.py - does memtop report the slowdown its target
really suffers? (issue 12, make bench). Not a test: it prints a table.

The target is tests/bench/server.c, a server-like loop whose "request" is
PAIRS malloc/free pairs plus ITERS rounds of arithmetic, which prints its
own requests per 250 ms window. Each workload row runs one server for the
whole measurement; windows alternate bare (memtop not attached) and
watched, at full cost (--max-overhead none) and under the default budget,
round after round. The measured slowdown is the median bare throughput
over the median watched throughput, minus one, from the server's own
windows (wall clock; the CPU-time column divides by the server's CPU time
instead, which other load on the machine does not move). memtop's
reported slowdown is the median of its overhead.est_slowdown_pct over the
same watched span. The target: within 25% of the measured value plus 5
points, from 5% up to 10x and more; it is checked against both measures.
The spread column gives the lowest and highest reported / measured (CPU
time) of the single rounds. "on" is the share of the watched time that
malloc's first byte read as int3 in /proc/PID/mem (polled every 2 ms):
the allocation probes' real duty, against the one memtop reports.

    tests/bench/slowdown.py [--quick] [--rounds N] [--only NAME,...] [--preload LIB]

--preload runs the server with LD_PRELOAD=LIB: another allocator (e.g.
/usr/lib/x86_64-linux-gnu/libjemalloc.so.2), which memtop then probes.

memtop watches with --no-inject: the figure is the uprobe path's
(probes.md 6.2); the in-process paths' cost is measured elsewhere. Each
row also gives the spread of memtop's single records (lowest and
highest over the measured figure, CPU time) and how many records showed
no figure (null: not measured yet, or only a lower bound) and how many
records' range (overhead.est_slowdown_range_pct) held the measured
figure of their round (CPU time).
"""

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
# name, pairs per request, arithmetic rounds per request
WORKLOADS = [("light", 20, 200000), ("moderate", 20, 20000), ("heavy", 20, 2000)]
CONDITIONS = [("full cost", "none"), ("budget 10%", "10")]
WINDOW_MS = 250
BARE_S, WARM_S, WATCH_S = 2.0, 2.5, 4.0


def malloc_offset():
    """malloc's offset in the libc this process (and the server) maps."""
    addr = ctypes.cast(ctypes.CDLL(None).malloc, ctypes.c_void_p).value
    for line in open("/proc/self/maps"):
        f = line.split()
        lo, hi = (int(x, 16) for x in f[0].split("-"))
        if lo <= addr < hi:
            return f[-1], addr - lo + int(f[2], 16)
    raise RuntimeError("malloc is in no mapping")


class ProbeWatch:
    """Polls whether malloc's first byte in pid is an int3 (a uprobe)."""

    def __init__(self, pid):
        lib, off = malloc_offset()
        self.addr = None
        for line in open("/proc/%d/maps" % pid):
            f = line.split()
            if f[-1] == lib and int(f[2], 16) <= off and "x" in f[1]:
                lo, hi = (int(x, 16) for x in f[0].split("-"))
                if off - int(f[2], 16) < hi - lo:
                    self.addr = lo + off - int(f[2], 16)
        self.fd = os.open("/proc/%d/mem" % pid, os.O_RDONLY)
        self.on = self.n = 0
        self.running = False

    def start(self):
        self.running = True
        self.t = threading.Thread(target=self.poll, daemon=True)
        self.t.start()

    def poll(self):
        while self.running:
            self.on += os.pread(self.fd, 1, self.addr) == b"\xcc"
            self.n += 1
            time.sleep(0.002)

    def stop(self):
        self.running = False
        self.t.join()
        os.close(self.fd)
        return self.on / self.n if self.n else float("nan")


def lines(pipe, q):
    for line in pipe:
        q.put(line)
    q.put(None)


class Server:
    def __init__(self, exe, pairs, iters, preload=None):
        env = dict(os.environ, LD_PRELOAD=preload) if preload else None
        self.p = subprocess.Popen([exe, str(pairs), str(iters), str(WINDOW_MS)],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                  env=env)
        self.q = queue.Queue()
        threading.Thread(target=lines, args=(self.p.stdout, self.q), daemon=True).start()
        first = self.q.get(timeout=10)
        self.pid = int(first.split()[1])

    def windows(self, secs):
        """(requests/s, requests per CPU second) of the windows in the next secs."""
        out, end = [], time.monotonic() + secs
        self.drain()
        while time.monotonic() < end:
            line = self.q.get(timeout=10)
            _, n, wall, cpu = line.split()[:4]
            out.append((int(n) * 1e9 / int(wall), int(n) * 1e9 / max(int(cpu), 1)))
        return out

    def drain(self):
        while True:
            try:
                self.q.get_nowait()
            except queue.Empty:
                return

    def stop(self):
        self.p.stdin.close()
        self.p.wait(10)


def watched(server, budget):
    """Windows while memtop watches the server, and memtop's reports."""
    m = subprocess.Popen([MEMTOP, "-b", "--json", "-d", "0.5", "--max-overhead", budget,
                          "--no-inject", "-p", str(server.pid)], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    q = queue.Queue()
    threading.Thread(target=lines, args=(m.stdout, q), daemon=True).start()
    first = q.get(timeout=30)  # attached and calibrated: the first record
    if first is None:
        raise RuntimeError("memtop did not start: %s" % m.stderr.read()[-300:])
    time.sleep(WARM_S)  # the budget settles; not a synchronisation
    probes = ProbeWatch(server.pid)
    probes.start()
    t0 = time.time()
    wins = server.windows(WATCH_S)
    t1 = time.time()
    on_share = probes.stop()
    m.send_signal(signal.SIGINT)
    m.wait(15)
    reports, duty, ranges = [], [], []
    while True:
        line = q.get(timeout=5)
        if line is None:
            break
        rec = json.loads(line)
        if t0 <= rec["time"] <= t1 + 0.5:
            # null: no figure yet (counted apart, never as 0)
            reports.append(rec["overhead"]["est_slowdown_pct"])
            ranges.append(rec["overhead"]["est_slowdown_range_pct"])
            duty.append(rec["overhead"]["duty"])
    return wins, reports, duty, on_share, ranges


def main():
    quick = "--quick" in sys.argv
    rounds = 2 if quick else 3
    if "--rounds" in sys.argv:
        rounds = int(sys.argv[sys.argv.index("--rounds") + 1])
    os.makedirs(OUT, exist_ok=True)
    exe = os.path.join(OUT, "server")
    subprocess.run(["gcc", "-O2", "-g", "-Wall", "-o", exe,
                    os.path.join(ROOT, "tests", "bench", "server.c")], check=True)
    rows = []
    only, preload = None, None
    if "--preload" in sys.argv:
        preload = sys.argv[sys.argv.index("--preload") + 1]
    if "--only" in sys.argv:
        only = sys.argv[sys.argv.index("--only") + 1].split(",")
    for name, pairs, iters in WORKLOADS:
        if only and name not in only:
            continue
        s = Server(exe, pairs, iters, preload)
        bare, got = [], {c: ([], [], [], [], [], [0], [], [0, 0]) for c, _ in CONDITIONS}
        s.windows(1.0)  # warm
        for r in range(rounds):
            for cname, budget in CONDITIONS:
                before = s.windows(BARE_S)
                bare += before
                w, rep_all, duty, on, ranges = watched(s, budget)
                rep = [x for x in rep_all if x is not None]
                g = got[cname]
                g[0].extend(w)
                g[1].extend(rep)
                g[5][0] += len(rep_all) - len(rep)
                if w and rep:
                    mc = 100 * (statistics.median(x[1] for x in before) /
                                statistics.median(x[1] for x in w) - 1)
                    if mc > 0:
                        g[6].extend(x / mc for x in rep)
                if w:
                    mc = 100 * (statistics.median(x[1] for x in before) /
                                statistics.median(x[1] for x in w) - 1)
                    for rg in ranges:
                        g[7][1] += 1
                        g[7][0] += bool(rg) and rg[0] <= mc and (rg[1] is None or mc <= rg[1])
                g[2].extend(duty)
                g[3].append(on)
                # this round alone: against the bare windows just before
                if w and rep:
                    m = 100 * (statistics.median(x[1] for x in before) /
                               statistics.median(x[1] for x in w) - 1)
                    g[4].append(statistics.median(rep) / m if m > 0 else float("nan"))
                print("slowdown: %s round %d/%d %s: %.0f req/s, on %.2f, memtop says %s, "
                      "ranges %s" %
                      (name, r + 1, rounds, cname,
                       statistics.median(x[0] for x in w) if w else 0, on,
                       ["%.0f" % x for x in rep],
                       ["%.0f-%s" % (rg[0], "%.0f" % rg[1] if rg[1] is not None else "")
                        if rg else "-" for rg in ranges]), file=sys.stderr, flush=True)
            bare += s.windows(BARE_S)
        s.stop()
        b_wall = statistics.median(x[0] for x in bare)
        b_cpu = statistics.median(x[1] for x in bare)
        for cname, _ in CONDITIONS:
            w, rep, duty, on, ratios, nulls, singles, cover = got[cname]
            m_wall = 100 * (b_wall / statistics.median(x[0] for x in w) - 1)
            m_cpu = 100 * (b_cpu / statistics.median(x[1] for x in w) - 1)
            said = statistics.median(rep) if rep else float("nan")
            ok_wall = abs(said - m_wall) <= 0.25 * abs(m_wall) + 5
            ok_cpu = abs(said - m_cpu) <= 0.25 * abs(m_cpu) + 5
            ratios = [x for x in ratios if x == x]
            spread = "%.2f-%.2f" % (min(ratios), max(ratios)) if ratios else "-"
            rows.append((name, pairs, iters, cname, b_wall, statistics.median(x[0] for x in w),
                         m_wall, m_cpu, said, statistics.median(duty) if duty else 1,
                         statistics.median(on), spread, ok_wall, ok_cpu,
                         "%.2f-%.2f" % (min(singles), max(singles)) if singles else "-",
                         nulls[0], "%d/%d" % tuple(cover)))
    print("\nmemtop's reported slowdown against the target's own throughput "
          "(medians of %d alternating rounds; %d ms windows)" % (rounds, WINDOW_MS))
    print("%-9s %-9s %-10s %9s %9s %10s %10s %10s %6s %6s %11s %5s %5s %s %s %s %s" %
          ("workload", "request", "condition", "bare r/s", "watched", "measured",
           "(cpu)", "reported", "ratio", "(cpu)", "spread(cpu)", "duty", "on",
           "within 25%+5 (wall, cpu)", "records(cpu)", "null", "in range(cpu)"))
    for (name, pairs, iters, cname, bw, ww, mw, mc, said, duty, on, spread, okw, okc, sing,
         nulls, cov) in rows:
        print("%-9s %-9s %-10s %9.0f %9.0f %9.1f%% %9.1f%% %9.1f%% %6.2f %6.2f %11s %5.2f %5.2f "
              "%s, %s %s %d %s" %
              (name, "%dp+%dk" % (pairs, iters // 1000), cname, bw, ww, mw, mc, said,
               said / mw if mw > 0 else float("nan"), said / mc if mc > 0 else float("nan"),
               spread, duty, on, "yes" if okw else "NO", "yes" if okc else "NO", sing, nulls,
               cov))
    print("machine: %s, %d CPUs, load %s" % (os.uname().release, os.cpu_count(),
                                             open("/proc/loadavg").read().split()[:3]))


if __name__ == "__main__":
    main()

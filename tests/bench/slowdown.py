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
points, from 5% up to 10x and more.

    tests/bench/slowdown.py [--quick] [--rounds N]
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

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
OUT = os.environ.get("BENCH_DIR", os.path.join(ROOT, "build", "bench"))
MEMTOP = os.path.join(ROOT, "build", "memtop")
# name, pairs per request, arithmetic rounds per request
WORKLOADS = [("light", 20, 200000), ("moderate", 20, 20000), ("heavy", 20, 2000)]
CONDITIONS = [("full cost", "none"), ("budget 10%", "10")]
WINDOW_MS = 250
BARE_S, WARM_S, WATCH_S = 2.0, 2.5, 4.0


def lines(pipe, q):
    for line in pipe:
        q.put(line)
    q.put(None)


class Server:
    def __init__(self, exe, pairs, iters):
        self.p = subprocess.Popen([exe, str(pairs), str(iters), str(WINDOW_MS)],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
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
            _, n, wall, cpu = line.split()
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
                          "-p", str(server.pid)], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    q = queue.Queue()
    threading.Thread(target=lines, args=(m.stdout, q), daemon=True).start()
    first = q.get(timeout=30)  # attached and calibrated: the first record
    if first is None:
        raise RuntimeError("memtop did not start: %s" % m.stderr.read()[-300:])
    time.sleep(WARM_S)  # the budget settles; not a synchronisation
    t0 = time.time()
    wins = server.windows(WATCH_S)
    t1 = time.time()
    m.send_signal(signal.SIGINT)
    m.wait(15)
    reports, duty = [], []
    while True:
        line = q.get(timeout=5)
        if line is None:
            break
        rec = json.loads(line)
        if t0 <= rec["time"] <= t1 + 0.5:
            reports.append(rec["overhead"]["est_slowdown_pct"])
            duty.append(rec["overhead"]["duty"])
    return wins, reports, duty


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
    for name, pairs, iters in WORKLOADS:
        s = Server(exe, pairs, iters)
        bare, got = [], {c: ([], [], []) for c, _ in CONDITIONS}
        s.windows(1.0)  # warm
        for r in range(rounds):
            for cname, budget in CONDITIONS:
                bare += s.windows(BARE_S)
                w, rep, duty = watched(s, budget)
                got[cname][0].extend(w)
                got[cname][1].extend(rep)
                got[cname][2].extend(duty)
                print("slowdown: %s round %d/%d %s: %.0f req/s, memtop says %s" %
                      (name, r + 1, rounds, cname,
                       statistics.median(x[0] for x in w) if w else 0,
                       ["%.0f" % x for x in rep]), file=sys.stderr, flush=True)
            bare += s.windows(BARE_S)
        s.stop()
        b_wall = statistics.median(x[0] for x in bare)
        b_cpu = statistics.median(x[1] for x in bare)
        for cname, _ in CONDITIONS:
            w, rep, duty = got[cname]
            m_wall = 100 * (b_wall / statistics.median(x[0] for x in w) - 1)
            m_cpu = 100 * (b_cpu / statistics.median(x[1] for x in w) - 1)
            said = statistics.median(rep) if rep else float("nan")
            ok = abs(said - m_wall) <= 0.25 * abs(m_wall) + 5
            rows.append((name, pairs, iters, cname, b_wall, statistics.median(x[0] for x in w),
                         m_wall, m_cpu, said, statistics.median(duty) if duty else 1, ok))
    print("\nmemtop's reported slowdown against the target's own throughput "
          "(medians of %d alternating rounds; %d ms windows)" % (rounds, WINDOW_MS))
    print("%-9s %-11s %-10s %9s %9s %10s %10s %10s %6s %5s %s" %
          ("workload", "request", "condition", "bare r/s", "watched", "measured",
           "(cpu)", "reported", "ratio", "duty", "within 25%+5"))
    for (name, pairs, iters, cname, bw, ww, mw, mc, said, duty, ok) in rows:
        print("%-9s %-11s %-10s %9.0f %9.0f %9.1f%% %9.1f%% %9.1f%% %6.2f %5.2f %s" %
              (name, "%dp+%dk" % (pairs, iters // 1000), cname, bw, ww, mw, mc, said,
               said / mw if mw > 0 else float("nan"), duty, "yes" if ok else "NO"))
    print("machine: %s, %d CPUs, load %s" % (os.uname().release, os.cpu_count(),
                                             open("/proc/loadavg").read().split()[:3]))


if __name__ == "__main__":
    main()

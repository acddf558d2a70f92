#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""tests/bench/default_path.py - what memtop's default path costs, and
whether memtop says so (issue 23 items 6 and 7; make bench). Not a test:
it prints one table.

For each workload, one long-running process is measured in rounds; each
round runs the modes one after the other on that same process: bare
(memtop not attached), plain `memtop -p PID` (the default: in-process
where it can), `--no-inject` (uprobes) and `--inject`. The server, CPython
and Go loops run as two identical copies side by side, A watched and B
never: every figure of theirs is A's over B's in the same windows, so a
change in the machine's load cancels (the 2-vCPU VM this was built on
runs other engineers' builds at load averages of 10-15). The measured
slowdown of a mode is its round's bare throughput over its own, minus
one (the workloads are CPU-bound: a cost shows as fewer requests), and,
steadier, its CPU per unit of work over bare's, minus one; each the
median over the rounds. memtop's reported slowdown is the median of its
JSON overhead.est_slowdown_pct over the same windows. The check column
applies the project's rule to both: reported within 25% of measured plus
5 points. Where memtop withheld its figure in every window (the probes
take nearly all of the target's CPU: only a lower bound is known), the
column shows that bound as ">=N%", checked as not above the measured
(plus 25% and 5 points).

Workloads:
  server   tests/bench/server.c, 20 malloc/free pairs and 16,000 rounds of
           arithmetic a request (about 500k pairs/s bare here), one 4 KiB
           block kept every 16 requests (leak_session): the leak column is
           when leak_session was first the first site with a score >= 70,
           in seconds from memtop's start (each watched phase of it runs
           until then, or LEAK_WAIT_S)
  redis    redis-server (jemalloc) under redis-benchmark (SET and GET,
           pipelined): one benchmark run a window, two runs first to warm
           it up; one copy (its CPU per request is redis-server's)
  python   tests/bench/py_churn.py on python3 (small objects: pymalloc's)
  go       build/workloads/mt_go -mode=server, flat out

    tests/bench/default_path.py [--quick] [--only NAME,...]

Knobs: ROUNDS (3; --quick 2), WINDOWS (4; --quick 3), LEAK_WAIT_S (22).
The last line per workload is a bare phase after all rounds, against the
first: the process is back to bare once memtop has gone.
"""

import json
import os
import queue
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.path.join(ROOT, "build")
# a copy (with the samplers it looks for beside it), so that a rebuild
# during the run changes nothing under it
MEMTOP = None
QUICK = "--quick" in sys.argv
ROUNDS = int(os.environ.get("ROUNDS", "2" if QUICK else "3"))
WINDOWS = int(os.environ.get("WINDOWS", "3" if QUICK else "4"))
LEAK_WAIT_S = float(os.environ.get("LEAK_WAIT_S", "22"))
MODES = [("bare", None), ("-p", []), ("--no-inject", ["--no-inject"]), ("--inject", ["--inject"])]
SERVER_PAIRS, SERVER_ITERS, SERVER_LEAK_EVERY = 20, 16000, 16


class Lines:
    """A process's output lines, read on a thread into a queue."""

    def __init__(self, stream, parse):
        self.q = queue.Queue()
        self.parse = parse
        threading.Thread(target=self._read, args=(stream,), daemon=True).start()

    def _read(self, stream):
        for raw in iter(stream.readline, b""):
            v = self.parse(raw.decode(errors="replace"))
            if v is not None:
                self.q.put(v)
        self.q.put(None)

    def skip(self):
        while not self.q.empty():
            if self.q.get() is None:
                raise SystemExit("workload ended")

    def get(self, timeout=60):
        v = self.q.get(timeout=timeout)
        if v is None:
            raise SystemExit("workload ended")
        return v


class Paired:
    """Two identical copies of a workload that prints its own windows: A is
    the one watched, B runs beside it bare all along, so that a change in
    the machine's load, which slows both, cancels in A/B (as go.py does).
    A window is (A/B throughput, A/B CPU per unit of work)."""

    leak_site = None

    def start(self):
        self.procs = [self.spawn() for _ in range(2)]
        self.lines = [Lines(p.stdout, self.parse) for p in self.procs]
        return self.procs[0].pid

    def window(self):
        a, b = self.lines[0].get(), self.lines[1].get()
        return a[0] / b[0], a[1] / b[1]

    def skip(self):
        for l in self.lines:
            l.skip()

    def stop(self):
        for p in self.procs:
            p.kill()
            p.wait()


class Server(Paired):
    name, leak_site = "server", "leak_session"

    exe = os.path.join(BUILD, "bench", "server")

    def start(self):
        os.makedirs(os.path.dirname(self.exe), exist_ok=True)
        subprocess.run(["gcc", "-O2", "-g", "-Wall", "-o", self.exe,
                        os.path.join(ROOT, "tests", "bench", "server.c")], check=True)
        return super().start()

    def spawn(self):
        p = subprocess.Popen([self.exe, str(SERVER_PAIRS), str(SERVER_ITERS), "1000",
                              str(SERVER_LEAK_EVERY)], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE)
        p.stdout.readline()  # ready PID
        return p

    @staticmethod
    def parse(line):
        f = line.split()
        if f[:1] == ["win"]:
            # pairs/s, CPU ns per pair
            return (int(f[1]) * SERVER_PAIRS / (int(f[2]) / 1e9),
                    int(f[3]) / (int(f[1]) * SERVER_PAIRS))
        return None


class Python(Paired):
    name = "python"

    def spawn(self):
        return subprocess.Popen(["/usr/bin/python3",
                                 os.path.join(ROOT, "tests", "bench", "py_churn.py"),
                                 "/dev/stdout", "100000"], stdout=subprocess.PIPE,
                                env={k: v for k, v in os.environ.items() if k != "PYTHONMALLOC"})

    @staticmethod
    def parse(line):
        f = line.split()
        return (float(f[1]), float(f[2])) if f[:1] == ["win"] else None


class Go(Python):
    name = "go"

    def spawn(self):
        p = subprocess.Popen([os.path.join(BUILD, "workloads", "mt_go"), "-mode=server",
                              "-rate", "0"], stdout=subprocess.PIPE)
        if not p.stdout.readline().startswith(b"READY"):
            raise SystemExit("mt_go did not start")
        return p


class Redis:
    name, leak_site, unit = "redis", None, "requests/s"

    def start(self):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        self.port = s.getsockname()[1]
        s.close()
        self.p = subprocess.Popen(["redis-server", "--port", str(self.port), "--save", "",
                                   "--appendonly", "no", "--bind", "127.0.0.1"],
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        for raw in iter(self.p.stdout.readline, b""):
            if b"Ready to accept connections" in raw:
                break
        else:
            raise SystemExit("redis-server did not start")
        threading.Thread(target=lambda: [None for _ in iter(self.p.stdout.readline, b"")],
                         daemon=True).start()
        for _ in range(2):
            self.window()  # its keys made, its tables grown: not in any round
        return self.p.pid

    def cpu_ns(self):
        with open("/proc/%d/stat" % self.p.pid) as f:
            st = f.read().rsplit(")", 1)[1].split()
        return (int(st[11]) + int(st[12])) * 1e9 / os.sysconf("SC_CLK_TCK")

    def window(self):
        """One redis-benchmark run: SET and GET, their mean requests/s, and
        redis-server's CPU ns per request."""
        c0 = self.cpu_ns()
        out = subprocess.run(["redis-benchmark", "-p", str(self.port), "-t", "set,get",
                              "-n", "100000", "-P", "16", "-r", "100000", "-d", "64",
                              "--csv"], check=True, capture_output=True, text=True).stdout
        rps = [float(l.split(",")[1].strip('"')) for l in out.splitlines()
               if l.startswith('"SET"') or l.startswith('"GET"')]
        if len(rps) != 2:
            raise SystemExit("redis-benchmark: %s" % out[-200:])
        return statistics.mean(rps), (self.cpu_ns() - c0) / 200000

    def skip(self):
        pass

    def stop(self):
        self.p.terminate()
        self.p.wait(timeout=30)


class Watch:
    """memtop -b --json -p PID [flags]: its records, read on a thread."""

    def __init__(self, pid, flags, leak_site):
        self.t0 = time.time()
        self.m = subprocess.Popen([MEMTOP, "-b", "--json", "-d", "1", "-p", str(pid)] + flags,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.recs, self.leak_first, self.leak_site = [], None, leak_site
        self.first = threading.Event()
        self.err = []
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=lambda: self.err.extend(
            l.decode(errors="replace").strip() for l in iter(self.m.stderr.readline, b"")),
            daemon=True).start()

    def _read(self):
        for raw in iter(self.m.stdout.readline, b""):
            if not raw.startswith(b"{"):
                continue
            rec = json.loads(raw)
            self.recs.append(rec)
            self.first.set()
            sites = rec.get("sites") or []
            if (self.leak_site and self.leak_first is None and sites and
                    sites[0].get("function") == self.leak_site and
                    sites[0].get("leak_score", 0) >= 70):
                self.leak_first = (rec["time"] - self.t0, sites[0]["leak_score"])
        self.first.set()

    def started(self):
        self.first.wait(timeout=60)
        return bool(self.recs)

    def mechanism(self):
        for rec in reversed(self.recs):
            for t in rec.get("targets") or []:
                if t.get("mechanism"):
                    return t["mechanism"]
        return "?"

    def reported(self, t0, t1):
        """memtop's figure over the window, as (value, True), or where it
        withheld every figure (the probes take nearly all of the target's
        CPU: only a lower bound is known, probes.md 6.2) the lower bound
        it showed instead, as (bound, False); (nan, True) when neither."""
        window = [r["overhead"] for r in self.recs if t0 <= r["time"] <= t1 + 0.5]
        # null: not measured yet, or withheld (memtop shows no figure then)
        v = [o["est_slowdown_pct"] for o in window if o["est_slowdown_pct"] is not None]
        if v:
            return statistics.median(v), True
        b = [o["est_slowdown_range_pct"][0] for o in window
             if o.get("est_slowdown_range_pct") and o["est_slowdown_range_pct"][0] is not None]
        return (statistics.median(b), False) if b else (float("nan"), True)

    def shown_range(self, t0, t1):
        """The range memtop showed with its figure over the window: the
        medians of its low and high ends (a high end of null, unbounded,
        is infinite); None where it showed none."""
        r = [o["est_slowdown_range_pct"] for r in self.recs if t0 <= r["time"] <= t1 + 0.5
             for o in (r["overhead"],)
             if o.get("est_slowdown_range_pct") and o["est_slowdown_range_pct"][0] is not None]
        if not r:
            return None
        return (statistics.median(x[0] for x in r),
                statistics.median(float("inf") if x[1] is None else x[1] for x in r))

    def stop(self):
        self.m.send_signal(signal.SIGINT)
        try:
            self.m.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.m.kill()
            self.m.wait()
        time.sleep(0.2)  # the reader threads drain (not a synchronisation of the target)


def windows(w, n):
    """n windows after one to settle: their median throughput and CPU per
    unit of work."""
    w.skip()
    w.window()
    got = [w.window() for _ in range(n)]
    return statistics.median(g[0] for g in got), statistics.median(g[1] for g in got)


def run_workload(w):
    pid = w.start()
    res = {m: {"ratio": [], "cpu": [], "rep": [], "range": [], "leak": [], "mech": set(),
               "err": ""}
           for m, _ in MODES}
    try:
        first_bare = None
        for r in range(ROUNDS):
            bare = None
            for mode, flags in MODES:
                if flags is None:
                    bare = windows(w, WINDOWS)
                    first_bare = first_bare or bare
                    continue
                m = Watch(pid, flags, w.leak_site)
                if not m.started():
                    m.stop()
                    res[mode]["err"] = (m.err[-1] if m.err else "memtop did not start")[:60]
                    continue
                t0 = time.time()
                got = windows(w, WINDOWS)
                t1 = time.time()
                while w.leak_site and m.leak_first is None and time.time() - m.t0 < LEAK_WAIT_S:
                    w.window()
                res[mode]["rep"].append(m.reported(t0, t1))
                res[mode]["range"].append(m.shown_range(t0, t1))
                res[mode]["ratio"].append(got[0] / bare[0])
                res[mode]["cpu"].append(got[1] / bare[1])
                res[mode]["mech"].add(m.mechanism())
                if w.leak_site:
                    res[mode]["leak"].append(m.leak_first)
                m.stop()
            print("  %s round %d done" % (w.name, r + 1), file=sys.stderr, flush=True)
        after = windows(w, WINDOWS)
    finally:
        w.stop()
    return res, after[0] / first_bare[0]


def leak_text(leaks):
    if not leaks:
        return "-"
    got = [l for l in leaks if l]
    if len(got) < len(leaks):
        return "%d/%d not in %.0fs" % (len(leaks) - len(got), len(leaks), LEAK_WAIT_S)
    return "%.0f-%.0fs (%.0f)" % (min(l[0] for l in got), max(l[0] for l in got),
                                 min(l[1] for l in got))


def main():
    if os.geteuid() != 0:
        raise SystemExit("needs root")
    subprocess.run(["make", "--no-print-directory", "-C", ROOT, "build/memtop",
                    "build/libmemtop-inject.so", "build/libmemtop-sampler.so",
                    "build/workloads/mt_go"], check=True, stdout=subprocess.DEVNULL)
    global MEMTOP
    tmp = tempfile.mkdtemp(prefix="memtop-bench-default-")
    for f in ("memtop", "libmemtop-inject.so", "libmemtop-sampler.so"):
        shutil.copy2(os.path.join(BUILD, f), tmp)
    MEMTOP = os.path.join(tmp, "memtop")
    only = None
    if "--only" in sys.argv:
        only = sys.argv[sys.argv.index("--only") + 1].split(",")
    loads = [Server(), Redis(), Python(), Go()]
    if not shutil.which("redis-server") or not shutil.which("redis-benchmark"):
        print("redis-server/redis-benchmark not installed (make deps): redis skipped")
        loads = [w for w in loads if w.name != "redis"]
    print("default path: %d rounds x %d windows, modes alternating on one process" %
          (ROUNDS, WINDOWS))
    print("%-8s %-12s %-10s %7s %9s %9s %9s %-9s %-15s %s" %
          ("workload", "mode", "mechanism", "vs bare", "measured", "(CPU)", "reported",
           "check", "range (in)", "leak first (score)"), flush=True)
    try:
        for w in loads:
            if only and w.name not in only:
                continue
            res, after = run_workload(w)
            print_rows(w, res, after)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("vs bare: throughput ratio; measured: bare/watched throughput - 1; (CPU): the "
          "target's CPU per unit of work watched/bare - 1; check: reported within 25%% + 5 "
          "points of each (throughput/CPU); range: the one memtop showed with its figure "
          "(medians of its ends), and whether each truth is in it; load average at the end "
          "%.1f" % os.getloadavg()[0])


def range_text(ranges, truths):
    """The median of the ranges shown, and whether each measured truth
    (throughput, CPU) lies in it: "in" or "out"."""
    got = [r for r in ranges if r]
    if not got:
        return "-"
    lo = statistics.median(r[0] for r in got)
    hi = statistics.median(r[1] for r in got)
    inside = "/".join("in" if lo <= t <= hi else "out" for t in truths)
    return "%.0f-%s %s" % (lo, "inf" if hi == float("inf") else "%.0f" % hi, inside)


def print_rows(w, res, after):
    for mode, flags in MODES:
        if flags is None:
            continue
        c = res[mode]
        if not c["ratio"]:
            print("%-8s %-12s %s" % (w.name, mode, c["err"] or "no rounds"))
            continue
        ratio = statistics.median(c["ratio"])
        measured = 100.0 * (1 / ratio - 1)
        by_cpu = 100.0 * (statistics.median(c["cpu"]) - 1)
        figures = [v for v, is_figure in c["rep"] if is_figure and v == v]
        bounds = [v for v, is_figure in c["rep"] if not is_figure]
        if figures or not bounds:
            reported = statistics.median(figures) if figures else float("nan")
            shown = "%8.1f%%" % reported
            ok = ["ok" if abs(reported - m) <= 0.25 * abs(m) + 5 else "OFF"
                  for m in (measured, by_cpu)]
        else:
            # withheld in every round: the bound shown must not exceed the truth
            reported = statistics.median(bounds)
            shown = ">=%.0f%%" % reported
            ok = ["ok" if reported <= 1.25 * m + 5 else "OFF" for m in (measured, by_cpu)]
        print("%-8s %-12s %-10s %7.3f %8.1f%% %8.1f%% %9s %-9s %-15s %s" %
              (w.name, mode, ",".join(sorted(c["mech"])), ratio, measured, by_cpu,
               shown, "/".join(ok), range_text(c["range"], (measured, by_cpu)),
               leak_text(c["leak"])))
    print("%-8s %-12s %-10s %7.3f  (the last bare phase against the first)" %
          (w.name, "bare after", "-", after), flush=True)

if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""tests/bench/node.py - what memtop costs a Node.js process (issue 26):
an allocation-heavy loop (tests/bench/node_churn.js, /usr/bin/node),
bare and watched by memtop -p with default options (its native heap
in-process, its V8 heap by V8's sampling heap profiler run by memtop's
agent), measured side by side in one run: the same process alternates
bare windows and watched windows. Not a test: it prints numbers (part of
make bench through tests/bench/run; NODE=0 leaves it out).

    tests/bench/node.py [--quick]

Per phase the median over WINDOWS one-second windows of objects/s and CPU
ns per object; the ratios are watched/bare; beside them the slowdown
memtop itself reported for the process (JSON slowdown_pct, its last
record of each watched phase: its probes plus the agent's snapshots) and
memtop's own CPU (on a machine with few cores, the throughput of a
CPU-bound loop also loses what memtop itself uses).
ROUNDS=3 WINDOWS=4 (--quick: 2 and 3).
"""

import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MEMTOP = os.path.join(ROOT, "build", "memtop")
NODE = "/usr/bin/node"
CHURN = os.path.join(ROOT, "tests", "bench", "node_churn.js")
QUICK = "--quick" in sys.argv
ROUNDS = int(os.environ.get("ROUNDS", "2" if QUICK else "3"))
WINDOWS = int(os.environ.get("WINDOWS", "3" if QUICK else "4"))


def window_lines(path):
    return [l.split() for l in open(path) if l.startswith("win ")] if os.path.exists(path) else []


def windows(path, after, n):
    """n window lines of path past the first `after` (one more skipped to settle)."""
    deadline = time.monotonic() + 3 * (n + 2) + 10
    while time.monotonic() < deadline:
        lines = window_lines(path)
        if len(lines) >= after + n + 1:
            got = lines[after + 1:after + 1 + n]
            return (statistics.median(float(g[1]) for g in got),
                    statistics.median(float(g[2]) for g in got), after + 1 + n)
        time.sleep(0.2)
    raise SystemExit("node_churn wrote no windows")


def cpu_ticks(pid):
    """utime + stime of pid, in clock ticks."""
    with open("/proc/%d/stat" % pid) as f:
        parts = f.read().rsplit(")", 1)[1].split()
    return int(parts[11]) + int(parts[12])


def main():
    if os.geteuid() != 0:
        raise SystemExit("needs root")
    subprocess.run(["make", "--no-print-directory", "-C", ROOT, "build/memtop",
                    "build/libmemtop-inject.so", "build/libmemtop-v8.so"], check=True,
                   stdout=subprocess.DEVNULL)
    print("node churn: %d rounds x %d windows, load average %s" %
          (ROUNDS, WINDOWS, open("/proc/loadavg").read().split()[0]), flush=True)
    tmp = tempfile.mkdtemp(prefix="memtop-bench-node-")
    out = os.path.join(tmp, "win")
    secs = ROUNDS * (2 * WINDOWS + 10) + 20
    p = subprocess.Popen([NODE, CHURN, out, str(secs)])
    rows, reported, own, seen = [], [], [], 0
    try:
        for _ in range(ROUNDS):
            bare_ops, bare_ns, seen = windows(out, seen, WINDOWS)
            json_out = open(os.path.join(tmp, "json"), "w+")
            m = subprocess.Popen([MEMTOP, "-b", "--json", "-d", "1", "-p", str(p.pid)],
                                 stdout=json_out, stderr=subprocess.PIPE, text=True)
            # watched windows start once the agent runs (memtop says so)
            line = ""
            t0 = time.monotonic()
            while "sampling heap profiler started" not in line:
                line = m.stderr.readline()
                if not line and m.poll() is not None or time.monotonic() - t0 > 30:
                    m.kill()
                    raise SystemExit("memtop did not start V8's profiler: %s" % line)
            seen = len(window_lines(out))
            c0, t0 = cpu_ticks(m.pid), time.monotonic()
            w_ops, w_ns, seen = windows(out, seen, WINDOWS)
            own.append((cpu_ticks(m.pid) - c0) / os.sysconf("SC_CLK_TCK") /
                       (time.monotonic() - t0) * 100)
            m.send_signal(signal.SIGINT)
            m.communicate(timeout=60)
            json_out.seek(0)
            recs = [json.loads(l) for l in json_out if l.startswith("{")]
            json_out.close()
            slow = [t["slowdown_pct"] for t in recs[-1]["targets"] if t["pid"] == p.pid] \
                if recs else []
            reported.append(slow[0] if slow else float("nan"))
            rows.append(((bare_ops, bare_ns), (w_ops, w_ns)))
    finally:
        p.kill()
        p.wait()
    b_ops = statistics.median(r[0][0] for r in rows)
    w_ops = statistics.median(r[1][0] for r in rows)
    b_ns = statistics.median(r[0][1] for r in rows)
    w_ns = statistics.median(r[1][1] for r in rows)
    print("node churn, -p (in-process + v8-sampling): bare %9.0f obj/s %6.1f ns/obj, watched "
          "%9.0f obj/s %6.1f ns/obj: throughput x%.3f, CPU per object x%.3f; memtop reported "
          "slowdown %.2f%%; memtop's own CPU %.0f%% of a core" %
          (b_ops, b_ns, w_ops, w_ns, w_ops / b_ops, w_ns / b_ns, statistics.median(reported),
           statistics.median(own)), flush=True)
    for i, ((bo, bn), (wo, wn)) in enumerate(rows):
        print("  round %d: bare %.0f obj/s %.1f ns/obj, watched %.0f obj/s %.1f ns/obj (x%.3f, "
              "CPU x%.3f), memtop said %.2f%%, its own CPU %.0f%%" %
              (i + 1, bo, bn, wo, wn, wo / bo, wn / bn, reported[i], own[i]), flush=True)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""tests/bench/python.py - what memtop costs a CPython process (issue 15):
a churn of small objects (tests/bench/py_churn.py, Debian's python3.11,
its default allocator), bare and watched, measured side by side in one
run. Not a test: it prints numbers (part of make bench through
tests/bench/run; PYTHON=0 leaves it out).

    tests/bench/python.py [--quick]

Rows: `-p` (uprobes on malloc/free: pymalloc's objects are not seen) and
`-p --inject` (the sampler wraps CPython's object allocator) alternate
bare and watched windows on the same process; `-- CMD` (the preloaded
sampler wraps it) alternates runs of a bare process and of one started
under memtop. Per phase the median over WINDOWS one-second windows of
objects/s and CPU ns per object; the ratios are watched/bare.
ROUNDS=3 WINDOWS=4 (--quick: 2 and 3).
"""

import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MEMTOP = os.path.join(ROOT, "build", "memtop")
PY = "/usr/bin/python3"
CHURN = os.path.join(ROOT, "tests", "bench", "py_churn.py")
QUICK = "--quick" in sys.argv
ROUNDS = int(os.environ.get("ROUNDS", "2" if QUICK else "3"))
WINDOWS = int(os.environ.get("WINDOWS", "3" if QUICK else "4"))


def windows(path, after, n):
    """n window lines of path past the first `after` (one more skipped to settle)."""
    deadline = time.monotonic() + 3 * (n + 2) + 10
    while time.monotonic() < deadline:
        lines = [l.split() for l in open(path) if l.startswith("win ")] \
            if os.path.exists(path) else []
        if len(lines) >= after + n + 1:
            got = lines[after + 1:after + 1 + n]
            return (statistics.median(float(g[1]) for g in got),
                    statistics.median(float(g[2]) for g in got), after + 1 + n)
        time.sleep(0.2)
    raise SystemExit("py_churn wrote no windows")


def same_process(label, extra):
    """Alternate bare and watched windows on one process."""
    tmp = tempfile.mkdtemp(prefix="memtop-bench-py-")
    out = os.path.join(tmp, "win")
    secs = ROUNDS * (2 * WINDOWS + 8) + 20
    p = subprocess.Popen([PY, CHURN, out, str(secs)],
                         env={k: v for k, v in os.environ.items() if k != "PYTHONMALLOC"})
    rows, seen = [], 0
    try:
        for _ in range(ROUNDS):
            bare_ops, bare_ns, seen = windows(out, seen, WINDOWS)
            m = subprocess.Popen([MEMTOP, "-b", "-d", "1", "-p", str(p.pid)] + extra,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            time.sleep(1.5)  # attached (and, with --inject, wrapped)
            seen = len([l for l in open(out) if l.startswith("win ")])
            w_ops, w_ns, seen = windows(out, seen, WINDOWS)
            m.send_signal(signal.SIGINT)
            m.communicate(timeout=60)
            rows.append(((bare_ops, bare_ns), (w_ops, w_ns)))
    finally:
        p.kill()
        p.wait()
    report(label, rows)


def command_mode():
    """Alternate a bare run and a run under memtop -- CMD."""
    rows = []
    secs = WINDOWS + 3
    for _ in range(ROUNDS):
        got = []
        for watched in (False, True):
            tmp = tempfile.mkdtemp(prefix="memtop-bench-py-")
            out = os.path.join(tmp, "win")
            argv = [PY, CHURN, out, str(secs)]
            if watched:
                argv = [MEMTOP, "-b", "-d", "1", "--cmd-log", os.path.join(tmp, "log"),
                        "--"] + argv
            p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                 env={k: v for k, v in os.environ.items() if k != "PYTHONMALLOC"})
            ops, ns, _ = windows(out, 0, WINDOWS - 1)
            p.wait(timeout=60)
            got.append((ops, ns))
        rows.append(tuple(got))
    report("-- CMD (preloaded sampler)", rows)


def report(label, rows):
    b_ops = statistics.median(r[0][0] for r in rows)
    w_ops = statistics.median(r[1][0] for r in rows)
    b_ns = statistics.median(r[0][1] for r in rows)
    w_ns = statistics.median(r[1][1] for r in rows)
    print("python churn, %-28s bare %9.0f obj/s %6.1f ns/obj, watched %9.0f obj/s %6.1f ns/obj: "
          "throughput x%.3f, CPU per object x%.3f" % (label + ":", b_ops, b_ns, w_ops, w_ns,
                                                    w_ops / b_ops, w_ns / b_ns), flush=True)


def main():
    if os.geteuid() != 0:
        raise SystemExit("needs root")
    subprocess.run(["make", "--no-print-directory", "-C", ROOT, "build/memtop",
                    "build/libmemtop-inject.so", "build/libmemtop-sampler.so"], check=True,
                   stdout=subprocess.DEVNULL)
    print("python churn: %d rounds x %d windows, load average %s" %
          (ROUNDS, WINDOWS, open("/proc/loadavg").read().split()[0]), flush=True)
    same_process("-p (uprobes)", [])
    same_process("-p --inject", ["--inject"])
    command_mode()


if __name__ == "__main__":
    main()

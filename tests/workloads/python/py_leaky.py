"""A Python service with one leak, one bounded cache and churn, for memtop's
Python tests (tests/integration/test_python.py). Prints its own truth as
one JSON line: the bytes one leaked record costs, measured by tracemalloc
on 4000 records before READY (tracemalloc is then stopped, so its own
bookkeeping, which is allocated under the same Python frames, neither
slows the run nor inflates what memtop sees), times the records leaked.

    py_leaky.py [--duration S] [--auto --out FILE]

Protocol: prints READY, waits for a byte on stdin, runs until --duration
seconds have passed or another byte arrives (or stdin closes), then prints
{"truth": "py_leaky", ...} and churns lightly until stdin closes. With --auto
--out FILE (for memtop -- CMD, whose child shares no pipe with the test)
it starts at once, stops leaking at SIGUSR1 or after --duration, writes
the truth line to FILE, churns lightly (leaking nothing, so a reader can
take a figure that is not an interval behind) until a second SIGUSR1 or
30 s, and exits.

  leak_records   keeps every record it builds (small dicts and strs, each
                 well under pymalloc's 512-byte limit): about 2 MiB/s
  cache_put      a dict of 64 KiB bytes values, 48 entries at most: it
                 fills in about 6 s, then only replaces entries
  churn          short-lived lists and strs, freed at once

SIGUSR2 starts tracemalloc (printing "TRACEMALLOC started" unless --auto):
another hook over whatever wraps CPython's allocators then.
"""

import json
import os
import sys
import time
import tracemalloc

LEAKED = []
CACHE = {}
CACHE_MAX = 48


def leak_records(n, seq):
    for i in range(n):
        rec = {"id": seq + i, "name": "user-%08d" % (seq + i), "tags": ("a", "b")}
        rec["note"] = "x" * 120 + str(seq + i)   # LEAK_LINE
        LEAKED.append(rec)


def cache_put(key):
    CACHE[key % CACHE_MAX] = bytes(64 * 1024)


def churn(n, base=0):
    total = 0
    for i in range(n):
        tmp = [str(base + i)] * 20
        total += len(tmp)
    return total


def func_lines(f):
    import inspect
    src, start = inspect.getsourcelines(f)
    return start, start + len(src) - 1


def calibrate(n=4000):
    """Bytes tracemalloc attributes to leak_records per record."""
    here = os.path.abspath(__file__)
    lo, hi = func_lines(leak_records)
    tracemalloc.start()
    leak_records(n, 0)
    snap = tracemalloc.take_snapshot()
    tracemalloc.stop()
    total = sum(st.size for st in snap.statistics("lineno")
                if os.path.abspath(st.traceback[0].filename) == here
                and lo <= st.traceback[0].lineno <= hi)
    LEAKED.clear()
    return total / n


def start_tracemalloc(auto):
    """SIGUSR2: a tool of the program's own wraps the allocators over
    whatever wraps them now (memtop's sampler, say)."""
    tracemalloc.start()
    if not auto:
        print("TRACEMALLOC started", flush=True)


def line_of(func, marker):
    import inspect
    src, start = inspect.getsourcelines(func)
    for k, text in enumerate(src):
        if marker in text:
            return start + k
    raise SystemExit("marker not found")


def main():
    duration = 40.0
    if "--duration" in sys.argv:
        duration = float(sys.argv[sys.argv.index("--duration") + 1])
    auto = "--auto" in sys.argv
    out = sys.argv[sys.argv.index("--out") + 1] if "--out" in sys.argv else None
    stop = []
    import signal
    if auto:
        signal.signal(signal.SIGUSR1, lambda *a: stop.append(1))
    signal.signal(signal.SIGUSR2, lambda *a: start_tracemalloc(auto))
    per_record = calibrate()
    if not auto:  # under memtop -- CMD, stdout may be memtop's own
        print("READY %d" % os.getpid(), flush=True)
    # stdin is read unbuffered (os.read), so that select() below sees a
    # byte that arrived with the start byte
    if not auto and not os.read(0, 1):
        return
    t0 = time.monotonic()
    seq = tick = 0
    import select
    while time.monotonic() - t0 < duration:
        if stop or (not auto and select.select([0], [], [], 0)[0]):
            if not auto:
                os.read(0, 1)  # the stop byte (b"" at EOF)
            break
        leak_records(50, seq)
        seq += 50
        if tick % 16 == 0:
            cache_put(tick // 16)
        churn(20)
        tick += 1
        time.sleep(0.01)
    here = os.path.abspath(__file__)
    leak_line = line_of(leak_records, "LEAK_LINE")
    records = len(LEAKED)
    truth = json.dumps({"truth": "py_leaky", "pid": os.getpid(), "time": time.time(),
                      "file": here, "leak_function": "leak_records", "leak_line": leak_line,
                      "leak_lines": list(func_lines(leak_records)),
                      "bytes_per_record": per_record, "leak_bytes": per_record * records,
                      "cache_bytes": len(CACHE) * 64 * 1024, "records": records,
                      "tracemalloc_traced": tracemalloc.get_traced_memory()[0]
                      if tracemalloc.is_tracing() else None})
    if auto:
        with open(out + ".tmp", "w") as f:
            f.write(truth + "\n")
        os.rename(out + ".tmp", out)
        held = len(stop)
        t1 = time.monotonic()
        while len(stop) == held and time.monotonic() - t1 < 30:
            churn(5, 1000)
            time.sleep(0.01)
        return
    print(truth, flush=True)
    # until stdin closes, the main thread keeps running Python code (light
    # churn): a tool that needs it to (a pending call) is not held up
    while not select.select([0], [], [], 0.01)[0]:
        churn(5, 1000)
    while os.read(0, 4096):
        pass


if __name__ == "__main__":
    main()

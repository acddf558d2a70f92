"""Python churn for tests/bench/python.py: builds and drops small objects
(dicts and strs, all served by pymalloc) as fast as it can, and appends one
line per second to OUT: "win <objects/s> <CPU ns per object>".

    py_churn.py OUT SECONDS
"""

import sys
import time


def batch(base):
    keep = []
    for i in range(200):
        keep.append({"id": base + i, "name": "user-%08d" % (base + i)})
    return len(keep) * 3  # a dict, a str and an int per entry


def main():
    out, secs = open(sys.argv[1], "a", buffering=1), float(sys.argv[2])
    end = time.monotonic() + secs
    seq = 0
    while time.monotonic() < end:
        t0, c0, n = time.monotonic(), time.process_time(), 0
        while time.monotonic() - t0 < 1.0:
            n += batch(seq)
            seq += 200
        cpu = time.process_time() - c0
        out.write("win %.0f %.1f\n" % (n / (time.monotonic() - t0), cpu * 1e9 / n))


if __name__ == "__main__":
    main()

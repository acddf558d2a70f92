"""memtop's in-use of a Go program beside the Go runtime's own heap
profile taken at the same moment (docs/go.md, "Beside go tool pprof").

The workload (mt_go_pprof: mt_go with runtime/pprof imported,
tests/workloads/go/pprof_dump.go) starts its scenario only at SIGUSR2,
after memtop's probes are on, so both see every sample of it. On SIGUSR1
it stops between two ticks, runs a full GC (every dead object swept, the
profile published as of that cycle), writes its heap profile and prints
HEAPPROFILE, allocating nothing until the next SIGUSR2. The test reads
memtop's record taken after that line and `go tool pprof
-sample_index=inuse_space -top` of the profile: for the leak
(main.leakInner) and the cache (main.cacheFill) the two in-use figures
must agree within TOLERANCE. They are two readings of one sample stream
(the runtime's mProf_Malloc calls, which memtop probes, and the profile
records the GC's sweep frees, which memtop sees at freeSpecial), so only
the weighting differs: memtop weighs each sample by its own size, pprof
a bucket's samples by their average size."""

import os
import re
import shutil
import signal
import subprocess
import tempfile
import time

from memtop_test import WORKLOADS, Memtop, check, fail
from test_go import CACHE, LEAK, GoWorkload, heap_sites, truth_after

TOLERANCE = 0.02
SITES = (LEAK, CACHE)


def pprof_inuse(binary, profile):
    """{function: cumulative in-use bytes} from go tool pprof -top."""
    go = shutil.which("go")
    check(go is not None, "no go in PATH (make deps installs golang-go)")
    out = subprocess.run([go, "tool", "pprof", "-sample_index=inuse_space", "-top", "-unit=B",
                          "-nodecount=1000", binary, profile], capture_output=True, text=True,
                         timeout=120)
    check(out.returncode == 0, "go tool pprof: %s" % out.stderr[-400:])
    rows = {}
    for line in out.stdout.splitlines():
        m = re.match(r"^\s*(\d+)B?\s+\S+%\s+\S+%\s+(\d+)B?\s+\S+%\s+(\S+)\s*$", line)
        if m:
            rows[m.group(3)] = int(m.group(2))
    check(rows, "no rows in go tool pprof's output: %s" % out.stdout[-400:])
    return rows, out.stdout


def test_inuse_beside_pprof():
    tmp = tempfile.mkdtemp(prefix="memtop-go-pprof-")
    profile = os.path.join(tmp, "heap.pprof")
    binary = os.path.join(WORKLOADS, "mt_go_pprof")
    try:
        w = GoWorkload(binary, "-waitstart", "-heapprofile", profile).wait_ready()
        check(not w.ready_line.endswith(" 0"), "mt_go_pprof samples itself: %s" % w.ready_line)
        m = Memtop("-b", "--json", "-p", w.pid)
        m.first_record()
        w.send(signal.SIGUSR2)  # the scenario starts, watched from its first allocation
        t0 = time.monotonic()
        while True:
            truth = truth_after(w, 0, timeout=20)
            if truth["leak_bytes"] >= 12 * 2**20 and truth["cache_bytes"] >= 16 * 2**20:
                break
            check(time.monotonic() - t0 < 30, "the scenario did not get going: %s" % truth)
        w.send(signal.SIGUSR1)
        while True:
            line = w.out.get(30, "HEAPPROFILE")
            if line is None:
                fail("mt_go_pprof exited: %s" % w.err.text()[-400:])
            if line.startswith("HEAPPROFILE"):
                break
        # the program allocates nothing now: two records after the dump
        # have drained every sample and free the GC made before it
        rec = m.records_after(time.time(), count=2)
        mine = heap_sites(rec, w.pid)
        theirs, text = pprof_inuse(binary, profile)
        for site in SITES:
            check(site in mine and site in theirs, "%s: memtop %s, pprof %s" %
                  (site, sorted(mine), sorted(theirs)))
            a, b = mine[site]["inuse_bytes"], theirs[site]
            diff = (a - b) / b
            print("%s in use: memtop %d B (%d samples), go tool pprof %d B: %+.2f%%" %
                  (site, a, mine[site]["samples"], b, 100 * diff))
            check(abs(diff) <= TOLERANCE,
                  "%s: memtop's in-use %d B differs from pprof's %d B by %+.1f%% (> %.0f%%)\n%s" %
                  (site, a, b, 100 * diff, 100 * TOLERANCE, text[-1500:]))
        w.send(signal.SIGUSR2)
        m.kill()
        w.kill()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

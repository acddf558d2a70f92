"""memtop consuming the otel_memory USDT contract from a process that
samples itself: the core issue's site and estimate assertions on a
workload running with libmemtop-sampler.so preloaded and watched with -p
(issue 9). The sampler's own behaviour (correctness of every allocator
function, threads, fork+exec, no effect without a tool) is tested by
tests/sampler/run."""

import os
import subprocess

import test_core
from memtop_test import (BUILD, TEST_RATE, WORKLOADS, Memtop, Proc, Workload, check, fail,
                         target)

SAMPLER = os.path.join(BUILD, "libmemtop-sampler.so")


def start_preloaded(name, *args):
    """A ground-truth workload started with the sampler preloaded."""
    env = dict(os.environ, LD_PRELOAD=SAMPLER, MEMTOP_SAMPLE_RATE=str(TEST_RATE))
    w = Workload.__new__(Workload)
    Proc.__init__(w, [os.path.join(WORKLOADS, name)] + list(args), stdin=subprocess.PIPE,
                  name=name, env=env)
    return w


def test_usdt_mode_sites_and_estimates():
    """-p on a process running the sampler: memtop attaches to its USDT
    probes (mode usdt, two probes), does not pretend to count every call,
    and its per-site estimates and in-use bounds hold as with uprobes."""
    check(os.path.exists(SAMPLER), "%s is not built" % SAMPLER)
    w = start_preloaded("mt_sites", "--iterations=2000", "--duration=2").wait_ready()
    m = Memtop("-b", "--json", "-d", "0.5", "--rate", "4K", "-p", w.pid)
    first = m.first_record()
    check(first["overhead"]["mode"] == "usdt",
          "mode %s, expected usdt (stderr: %s)" % (first["overhead"]["mode"], m.err.text()))
    t = target(first, w.pid)
    check(t["counters_exact"] is False and t["alloc_calls"] is None,
          "usdt mode must not show exact counters: %s" % t)
    w.trigger()
    truth = w.read_truth(timeout=60)
    last = m.records_after(truth["time"], count=2)
    d = last["dropped"]
    check(d["events"] == 0 and d["live_map_full"] == 0, "memtop dropped data: %s" % d)
    test_core.check_site_estimates(last, truth, test_core.SITES)
    test_core.check_growth_and_bounds(m.records, truth)
    hits = target(last, w.pid)["probe_hits"]
    calls = sum(s["alloc_calls"] for s in truth["sites"])
    # only sampled calls trap (an alloc and maybe a free each); trapping the
    # allocator would cost at least one hit per call
    check(hits < calls / 2, "%d probe hits for %d allocation calls" % (hits, calls))
    w.release()
    if m.drain(timeout=20) != 0:
        fail("memtop did not end cleanly: %s" % m.err.text()[-500:])

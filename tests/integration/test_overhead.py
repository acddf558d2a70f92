"""The overhead budget of the uprobe path (--no-inject) end to end: on a
process whose allocator calls make
up most of its own work, memtop measures the probes' cost against the
target's CPU time, backs off to a duty cycle under --max-overhead, says
so (and stops claiming exact counts), and still finds the leak; with
--max-overhead none it never backs off. The cost of one probe hit is
calibrated at start-up and reported."""

from memtop_test import Memtop, Proc, check, target, workload_path, sites_by_function

MEASURED_WITHIN = 40  # records of 0.5 s


def start_leaker(rate_mib="0.5"):
    p = Proc([workload_path("cg_leaker"), rate_mib], name="cg_leaker")
    line = p.out.get(10, "cg_leaker READY")
    check(line and line.startswith("READY"), "cg_leaker did not start: %s" % line)
    return p


def slowdown(rec):
    """The slowdown a record shows: its figure, or the lower bound when only
    that is known; None while not measured (probes.md 6.2)."""
    o = rec["overhead"]
    if o["est_slowdown_pct"] is not None:
        return o["est_slowdown_pct"]
    return o["est_slowdown_range_pct"][0] if o["est_slowdown_range_pct"] else None


def records(m, n):
    out = []
    for _ in range(n):
        rec = m.record(10)
        check(rec is not None, "memtop exited early: %s" % m.err.text()[-500:])
        out.append(rec)
    return out


def test_budget_backs_off_and_says_so():
    # 2 MiB/s of leak at --rate 64K: about 2 samples/s even at the smallest
    # duty, so the leak stays in view
    w = start_leaker("2")
    m = Memtop("-b", "--json", "-d", "0.5", "--no-inject", "--rate", "64K", "--max-overhead", "10",
               "-p", w.pid)
    recs = records(m, 10)
    first, last = recs[0], recs[-1]
    check(first["overhead"]["trap_ns"] > 100,
          "no calibrated cost per probe hit: %s" % first["overhead"])
    o = last["overhead"]
    check(o["backed_off"] is True and o["duty"] < 1,
          "the probes cost this target %s%% of its own time but memtop did not back off: %s"
          % ([slowdown(r) for r in recs], o))
    check(o["counters_exact"] is False, "counters still claimed exact: %s" % o)
    t = target(last, w.pid)
    check(t["alloc_calls"] is None and t["counters_exact"] is False,
          "paused probes, yet counts are shown as exact: %s" % t)
    # measured while backed off, the slowdown is near the budget, or memtop
    # says the free() probes alone cost more. On a loaded machine the
    # target gets too little CPU for a measure in the last four records
    # (seen once in CI: none in 2 s); then memtop is followed until one
    # comes, for at most MEASURED_WITHIN more records
    for _ in range(MEASURED_WITHIN):
        if any(slowdown(r) is not None for r in recs[-4:]):
            break
        recs += records(m, 1)
    tail = [slowdown(r) for r in recs[-4:]]
    o = recs[-1]["overhead"]
    check(any(x is not None for x in tail),
          "no slowdown measured while backed off in %.0f s: %s" % (len(recs) * 0.5, o))
    check(min(x for x in tail if x is not None) <= 25 or o["budget_unreachable"],
          "slowdown stays at %s%% with a 10%% budget and memtop does not say it cannot "
          "do better: %s" % (tail, o))
    check("cg_leak_site" in sites_by_function(recs[-1]),
          "the leak is no longer seen while backed off: %s" % list(sites_by_function(recs[-1])))
    m.send(2)
    check(m.wait(10) == 0, "memtop did not end cleanly")


def test_no_budget_never_backs_off():
    w = start_leaker()
    m = Memtop("-b", "--json", "-d", "0.5", "--no-inject", "--max-overhead", "none", "-p", w.pid)
    recs = records(m, 6)
    for r in recs:
        check(r["overhead"]["backed_off"] is False and r["overhead"]["duty"] == 1,
              "backed off without a budget: %s" % r["overhead"])
    t = target(recs[-1], w.pid)
    check(t["counters_exact"] is True and t["alloc_calls"] > 0, "counts: %s" % t)
    # at full cost the only steps without the allocation probes are the
    # start-up's; a process that sleeps most of the time may not fill
    # them (5 ms of CPU each), and then nothing is measured: no figure, and
    # the note says so (the calibration's guess read 100000% here on a
    # loaded machine, 36 us a hit). The cost of one hit may be measured by
    # then while the target's own CPU per free() is not: still no figure.
    # A figure shown is this workload's.
    o = recs[-1]["overhead"]
    if o["est_slowdown_pct"] is None and o["est_slowdown_range_pct"] is None:
        check((o["est_slowdown_note"] or "").startswith("not measured yet") and
              o["floor_pct"] is None,
              "no slowdown shown, yet not said why: %s" % o)
    else:
        check(slowdown(recs[-1]) > 10,
              "this workload's probes should cost it more than 10%%: %s" % o)
    m.send(2)
    check(m.wait(10) == 0, "memtop did not end cleanly")

"""The overhead budget of the uprobe path under heavy churn (issue 12):
with --no-inject (uprobes only, the default's fallback), memtop watches a
server doing over 100k malloc/free pairs a second with a
480 KiB/s leak three library frames deep (libbusy.so) and a cache that
plateaus (tests/workloads/busy/). free() alone costs it more than the 10%
budget, so memtop backs off to its smallest duty, and says so once with
the way out; the samples survive the back-off (the sampling interval
shrinks with the duty), so the leak still ranks first with a score of at
least 70 within 60 s while the cache scores at most 30. How soon depends
on how the budget's phases fall on the workload's work (phase_seen,
probes.md 6.5): on a quiet machine it held after 17-36 s in 8 runs of
11, and not yet at 45 s in the other 3 (scores of 45-68, rising), where
the probes saw only about half of the promised share (phase_seen
0.47-0.64) and every estimate came slower (issue 23, item 8). The test
stops as soon as that holds and its in-use checks have their records.
The in-use figures are held to the workload's truth (issue 23: weighed
by the process's pace they read 1.3-1.5 times the leak and up to 1.8
times the cache here), and no slowdown is shown before it is measured
(the workload is idle until triggered: nothing to measure). A second
test checks that the back-off's visible state ends with its
cause: note gone, duty back, exact rates again."""

import math
import os
import shutil
import subprocess
import tempfile
import time

from memtop_test import (ROOT, Memtop, Proc, RedisServer, Workload, check, fail,
                         scratch_dir, target, workload_path)

SRC = os.path.join(ROOT, "tests", "workloads", "busy")
LEAK, CACHE = "busy_lib_leak", "cache_put"
WITHIN_S = 60.0
LEAK_MIN, CACHE_MAX = 70.0, 30.0
# in-use against the truth (the workload's own "inuse" lines), records
# from 10 s on, INUSE_RECORDS of them at least. The leak's live samples
# double from 10 s to 20 s, so a chance excursion of the first seconds
# fades where an inflation stays: the 5 records of 10-14 s that one CI
# run stopped at read 1.77 of the leak's truth, 3.0 of its errors over
# (the runs before: 0.65-1.33, -1.2 to 1.2). Each estimate is shown with
# its error (inuse_rel_error): the sampler's (Horvitz-Thompson over its
# live samples; the leak has 10-30 by then, the cache about 47), the
# schedule's (the share of time the probes were on over the cycles that
# drew them is the duty only on average, probes.md 6.5) and the pace
# range's width. Without the range that is the error of the figure
# itself, and each check allows for it:
# - not inflated: the two sites together (their sum over the truth's
#   sum, about 70 samples) read at most POOLED_WITHIN of the truth in
#   the median record, and each site's median excess is at most
#   EXCESS_SIGMAS of its own error. A 1.5-fold inflation (issue 23)
#   fails the first in about 9 runs of 10; chance alone in under 1 in
#   100 (a simulation of these counts);
# - honest range: the truth lies in the range shown with it (the pace
#   range, probes.md 6.5), widened by EXCESS_SIGMAS of those errors, in
#   80% of records.
# Where the figure sits in the range depends on how much the probes
# starve the process (probes.md 6.5): 0.9-1.1 of the truth at a load of
# 7, 0.45 at a load of 15 (high end 0.94).
POOLED_WITHIN = 1.3
EXCESS_SIGMAS = 3.0
INUSE_RECORDS = 10


def figure_error(site):
    """The relative error shown with a site's in-use, less the pace
    range's part (in quadrature): the error of the figure itself."""
    if not site or not site["live_samples"] or not site["inuse_bytes"]:
        return 1.0
    width = (site["inuse_bytes_high"] - site["inuse_bytes_low"]) / site["inuse_bytes"]
    return math.sqrt(max(site["inuse_rel_error"] ** 2 - width ** 2, 0.0)) or 1.0


def reports(w):
    """The workload's "inuse" lines: [(unix time, {name: value})]: what
    its sites held then, and "allocs", its malloc calls so far."""
    out = []
    for line in list(w.out.lines):
        f = line.split()
        if len(f) >= 4 and f[0] == "inuse":
            out.append((float(f[1]), {k: int(v) for k, v in (x.split("=") for x in f[2:])}))
    return out


def allocs_at(w, at):
    """The workload's malloc calls by unix time at, between its reports
    (linear), or None outside them."""
    r = reports(w)
    for (t0, a), (t1, b) in zip(r, r[1:]):
        if t0 <= at <= t1:
            return a["allocs"] + (b["allocs"] - a["allocs"]) * (at - t0) / (t1 - t0)
    return None


def held(w, at):
    """What the workload's sites held at its last report before unix time
    at (within a second): {function: bytes}, or None."""
    best = None
    for when, v in reports(w):
        if when <= at:
            best = (when, v)
    return best[1] if best and at - best[0] <= 1.5 else None


def build(d):
    """libbusy.so and busy_leak in d (found through $ORIGIN)."""
    flags = ["-O2", "-g", "-fno-omit-frame-pointer", "-Wall"]
    for argv in (["gcc"] + flags + ["-fPIC", "-shared", "-o", os.path.join(d, "libbusy.so"),
                                    os.path.join(SRC, "busy_lib.c")],
                 ["gcc"] + flags + ["-I", os.path.join(ROOT, "tests", "workloads"), "-o",
                                    os.path.join(d, "busy_leak"),
                                    os.path.join(SRC, "busy_main.c"), "-L", d, "-lbusy",
                                    "-Wl,-rpath,$ORIGIN"]):
        r = subprocess.run(argv, capture_output=True, text=True, timeout=120)
        if r.returncode:
            fail("building the workload failed: %s\n%s" % (" ".join(argv), r.stderr[-2000:]))
    return os.path.join(d, "busy_leak")


def score(sites, f):
    return sites[f]["leak_score"] if f in sites else 0.0


def test_leak_found_under_backoff():
    d = scratch_dir("memtop-busy-")
    w = Workload(build(d), "--duration=%d" % (WITHIN_S + 20)).wait_ready()
    m = Memtop("-b", "--json", "-d", "1", "--no-inject", "-p", w.pid)
    first = m.first_record()
    # idle until triggered: no free() to measure its own work by, so no
    # figure, but why
    o = first["overhead"]
    check(o["est_slowdown_pct"] is None and o["est_slowdown_range_pct"] is None and
          (o["est_slowdown_note"] or "").startswith("not measured yet"),
          "a slowdown shown before it was measured: %s" % o)
    w.trigger()
    truth = w.read_truth(timeout=10)
    check(truth.get("truth") == "busy_leak", "unexpected truth: %s" % truth)
    hits0, met, trace, note = None, None, [], None
    ratio, excess, in_range = {LEAK: [], CACHE: []}, {LEAK: [], CACHE: []}, {LEAK: [], CACHE: []}
    pooled, rated = [], []
    while True:
        rec = m.record(10)
        check(rec is not None, "memtop exited: %s" % m.err.text()[-500:])
        t = rec["time"] - truth["time"]
        if t < 0:
            continue
        o = rec["overhead"]
        sites = {s["function"]: s for s in rec["sites"]}
        tg = [x for x in rec["targets"] if x["pid"] == int(w.pid)][0]
        if hits0 is None:
            hits0 = (tg["probe_hits"], rec["time"])
        if t >= 3:
            rated.append(rec)
        first = max(sites, key=lambda f: sites[f]["leak_score"]) if sites else None
        inuse = {f: sites[f]["inuse_bytes"] if f in sites else 0 for f in (LEAK, CACHE)}
        truth_now = held(w, rec["time"]) or {LEAK: 0, CACHE: 0}
        for f in (LEAK, CACHE):
            if t >= 10 and truth_now[f]:
                err = figure_error(sites.get(f))
                ratio[f].append(inuse[f] / truth_now[f])
                excess[f].append((inuse[f] / truth_now[f] - 1) / err)
                lo, hi = ((sites[f]["inuse_bytes_low"], sites[f]["inuse_bytes_high"])
                          if f in sites else (0, 0))
                widen = 1 + EXCESS_SIGMAS * err
                in_range[f].append(lo / widen <= truth_now[f] <= hi * widen)
        if t >= 10 and truth_now[LEAK] and truth_now[CACHE]:
            pooled.append((inuse[LEAK] + inuse[CACHE]) / (truth_now[LEAK] + truth_now[CACHE]))
        trace.append("%4.0fs leak %5.1f (%.2f of its truth) cache %5.1f (%.2f) first %s "
                     "duty %.2f interval %d phase_seen %.2f slowdown %s (%s) floor %s" %
                     (t, score(sites, LEAK), inuse[LEAK] / max(truth_now[LEAK], 1),
                      score(sites, CACHE), inuse[CACHE] / max(truth_now[CACHE], 1), first,
                      o["duty"],
                      o["sampling_rate_bytes"], tg["phase_seen"], o["est_slowdown_pct"],
                      o["est_slowdown_range_pct"], o["floor_pct"]))
        if o["budget_unreachable"] and note is None:
            note = o["budget_note"]
        if (met is None and first == LEAK and score(sites, LEAK) >= LEAK_MIN and
                score(sites, CACHE) <= CACHE_MAX and t >= 5 and len(ratio[LEAK]) >= 5):
            met = (t, rec)
        if met is not None and len(ratio[LEAK]) >= INUSE_RECORDS:
            break
        if t > WITHIN_S + 1:
            break
    w.release()
    m.send(2)
    m.wait(10)
    if os.environ.get("MEMTOP_SCENARIO_TRACE") or met is None:
        print("\n".join(trace), flush=True)
    check(met is not None, "the leak did not rank first with a score >= %.0f (cache <= %.0f) "
          "within %.0f s under the default budget" % (LEAK_MIN, CACHE_MAX, WITHIN_S))
    # in-use against the workload's truth, under the back-off
    def median(v):
        return sorted(v)[len(v) // 2]
    for f in (LEAK, CACHE):
        print("%s: in-use / truth from 10 s on, median %.2f (%.2f-%.2f), median excess %.1f "
              "of its errors; truth in the range shown in %d of %d records" %
              (f, median(ratio[f]), min(ratio[f]), max(ratio[f]), median(excess[f]),
               sum(in_range[f]), len(in_range[f])), flush=True)
        check(median(excess[f]) <= EXCESS_SIGMAS,
              "%s's in-use read %.2f of its truth under the back-off, %.1f of its errors over" %
              (f, median(ratio[f]), median(excess[f])))
        check(sum(in_range[f]) >= 0.8 * len(in_range[f]),
              "%s's truth outside its shown range in %d of %d records" %
              (f, len(in_range[f]) - sum(in_range[f]), len(in_range[f])))
    print("both sites: in-use / truth from 10 s on, median %.2f" % median(pooled), flush=True)
    check_rates_under_backoff(w, rated)
    check(median(pooled) <= POOLED_WITHIN,
          "the two sites' in-use read %.2f of their truth under the back-off" % median(pooled))
    t, rec = met
    o = rec["overhead"]
    tg = [x for x in rec["targets"] if x["pid"] == int(w.pid)][0]
    pairs_per_s = (tg["probe_hits"] - hits0[0]) / max(rec["time"] - hits0[1], 1)
    check(pairs_per_s >= 100000 * 0.8,
          "the workload ran %.0f probe hits/s, not the heavy churn this test is about" %
          pairs_per_s)
    # the back-off's visible state: backed off, the interval shrunk with the
    # duty, the floor said in words with the way out
    check(o["backed_off"] and o["duty"] < 1, "no back-off under heavy churn: %s" % o)
    check(abs(o["sampling_rate_bytes"] - 524288 * o["duty"]) <= 2,
          "sampling interval %s at duty %s: samples do not survive the back-off" %
          (o["sampling_rate_bytes"], o["duty"]))
    # measured by now: a figure at or above the floor, or (the probes take
    # nearly all of its CPU) only a lower bound, said so
    lo_hi = o["est_slowdown_range_pct"]
    check(lo_hi is not None and o["floor_pct"] is not None and o["floor_pct"] > 0,
          "no measured slowdown and floor after %.0f s: %s" % (t, o))
    if o["est_slowdown_pct"] is None:
        check(lo_hi[1] is None and lo_hi[0] > 0 and "lower bound" in (o["est_slowdown_note"] or ""),
              "slowdown withheld without its lower bound and why: %s" % o)
    else:
        check(o["est_slowdown_pct"] >= o["floor_pct"] and
              lo_hi[0] <= o["est_slowdown_pct"] and
              (lo_hi[1] is None or lo_hi[1] >= o["est_slowdown_pct"]),
              "floor, slowdown and its range: %s" % o)
    check(note and "free() probes alone cost" in note and "memtop -- CMD" in note and
          "--inject" in note, "no note on the unreachable budget: %r (%s)" % (note, o))
    # ... and on stderr, where a user who sends the JSON to a file sees it:
    # once an episode, not at every refresh of the budget (4 a second)
    said = [l for l in m.stderr_lines() if "free() probes alone cost" in l]
    check(1 <= len(said) <= 3, "the unreachable budget said %d times on stderr: %s" %
          (len(said), said[:4]))


def check_rates_under_backoff(w, recs):
    """The process's alloc_calls_per_s under the back-off, summed over the
    records' intervals, against the calls the workload counted over the
    same span: within 40% (runs here: 0.88 and 1.02; the probes' share of
    the calls is learnt over the first seconds, phase_seen). Before, each
    interval said what the probes alone saw: the duty's share, 10% here.
    Each interval's figure is printed, "~" when estimated."""
    # the records the workload's reports span (it reports once a second)
    recs = [r for r in recs if allocs_at(w, r["time"]) is not None]
    check(len(recs) >= 5, "the workload's reports span %d records" % len(recs))
    tg = [[x for x in r["targets"] if x["pid"] == int(w.pid)][0] for r in recs]
    start, end = recs[0]["time"], recs[-1]["time"]
    made = allocs_at(w, end) - allocs_at(w, start)
    said = sum(x["alloc_calls_per_s"] * r["interval_s"] for x, r in zip(tg[1:], recs[1:]))
    inexact = sum(1 for x in tg[1:] if not x["rates_exact"])
    print("calls over %.1f s: made %.0f, said %.0f (%.2f); %d of %d intervals backed off: %s" %
          (end - start, made, said, said / max(made, 1), inexact, len(recs) - 1,
           " ".join("%.0f%s" % (x["alloc_calls_per_s"], "" if x["rates_exact"] else "~")
                    for x in tg[1:])), flush=True)
    check(made > 0 and inexact > 0, "no back-off, or no count from the workload: made %.0f, "
          "%d intervals backed off" % (made, inexact))
    check(abs(said / made - 1) <= 0.4, "alloc_calls_per_s under the back-off said %.0f calls "
          "where the workload made %.0f" % (said, made))


def test_backoff_ends_and_note_goes():
    """Two processes: busy_leak for 6 s, which drives the budget below its
    floor, and a light scenario workload that stays. Once busy_leak has exited, the
    note about the floor goes away, the duty climbs back to 1 and the light
    process's per-interval rates are exact again (the process list shows
    numbers, not estimates after "~")."""
    d = scratch_dir("memtop-busy-")
    heavy = Workload(build(d), "--duration=6", "--hold=0").wait_ready()
    # a light process: under 1,000 frees a second next to a fifth of a CPU
    light = Workload("scenario_steady_leak", "--duration=60").wait_ready()
    m = Memtop("-b", "--json", "-d", "0.5", "--no-inject", "-p",
               "%s,%s" % (heavy.pid, light.pid))
    m.first_record()
    light.trigger()
    heavy.trigger()
    saw_note, gone_at, back = False, None, None
    t0 = time.monotonic()
    while time.monotonic() - t0 < 40:
        rec = m.record(10)
        check(rec is not None, "memtop exited: %s" % m.err.text()[-500:])
        o = rec["overhead"]
        tg = {x["pid"]: x for x in rec["targets"]}
        alive = tg.get(int(heavy.pid), {}).get("alive", False)
        if o["budget_note"]:
            saw_note = True
            if not alive and gone_at is not None and time.monotonic() - gone_at >= 3:
                fail("the note stays %.1f s after its cause exited: %s" %
                     (time.monotonic() - gone_at, o["budget_note"]))
        if not alive and gone_at is None:
            gone_at = time.monotonic()
        lt = tg[int(light.pid)]
        if gone_at and o["duty"] == 1 and not o["budget_note"] and lt["rates_exact"]:
            back = rec
            break
    m.send(2)
    m.wait(10)
    light.release()
    check(saw_note, "busy_leak never drove the budget below its floor")
    check(gone_at is not None, "busy_leak did not exit")
    check(back is not None, "after busy_leak exited: duty back to 1, no note and exact rates "
          "for the light process never came together in 40 s")
    lt = {x["pid"]: x for x in back["targets"]}[int(light.pid)]
    check(lt["counters_exact"] is False and lt["rates_exact"] is True and
          lt["alloc_calls_per_s"] is not None,
          "totals stay not exact after a back-off, rates are exact again: %s" % lt)


# The bytes redis 7 allocates for each key of redis-benchmark's SET with
# -r and -d 100, at _sdsnewlen: its name ("key:" and 12 digits, 16 bytes)
# and its value (100 bytes) as two sds strings with a 3-byte header and a
# terminator each (sdshdr8): 20 + 104. The request's own copies are freed
# when it ends.
REDIS_KEY_SDS_BYTES = 20 + 104
REDIS_WITHIN_S = 45.0


def test_redis_key_space_ranks_first_under_uprobes():
    """Debian's redis-server whose key space grows (redis-benchmark SETs
    random keys out of 10^9, flat out), watched through uprobes only
    (--no-inject, the default's fallback): the growing key space is a
    leak in memtop's sense and must rank first with a score of at least
    70 within 45 s (issue 23 item 8: it stayed at 0 for 90 s), though the
    budget backs off. Its strings' in-use is held to redis's own key count
    (DBSIZE times the bytes each key allocates at _sdsnewlen): inside the
    range memtop shows, widened by three of its errors."""
    bench = shutil.which("redis-benchmark")
    check(shutil.which("redis-server") and bench and shutil.which("redis-cli"),
          "redis-server, redis-benchmark and redis-cli are needed (make deps)")
    tmp = tempfile.mkdtemp(prefix="memtop-redis-")
    r = b = m = None
    try:
        server = RedisServer(tmp, "redis")
        r, sock = server.proc, server.sock
        m = Memtop("-b", "--json", "-d", "1", "--no-inject", "-p", r.pid)
        first = m.first_record()
        tg = target(first, r.pid)
        check(tg["mechanism"] == "uprobes" and tg["allocator"] == "jemalloc",
              "redis-server under --no-inject: %s" % tg)
        b = Proc([bench, "-s", sock, "-t", "set", "-r", "1000000000", "-n", "100000000",
                  "-d", "100", "-c", "2", "-q"], name="redis-benchmark")
        t0, met, trace, last = time.monotonic(), None, [], None
        while time.monotonic() - t0 < REDIS_WITHIN_S:
            rec = m.record(10)
            check(rec is not None, "memtop exited: %s" % m.err.text()[-500:])
            keys = int(server.cli("DBSIZE"))
            sites = sorted(rec["sites"], key=lambda s: -s["leak_score"])
            top = sites[0] if sites else None
            sds = [s for s in rec["sites"] if s["function"] == "_sdsnewlen"]
            trace.append("%4.1fs keys %d top %s %.0f; _sdsnewlen %s duty %s" % (
                time.monotonic() - t0, keys, top and top["function"], top["leak_score"] if top else 0,
                sds and "%.1f MB (%.1f-%.1f)" % (sds[0]["inuse_bytes"] / 1e6,
                                                sds[0]["inuse_bytes_low"] / 1e6,
                                                sds[0]["inuse_bytes_high"] / 1e6),
                rec["overhead"]["duty"]))
            last = (keys, sds[0] if sds else None, rec)
            if top and top["function"] == "_sdsnewlen" and top["leak_score"] >= 70:
                met = last
                break
        check(r.poll() is None, "redis-server died under memtop: rc %s" % r.poll())
        print("\n".join(trace), flush=True)
        check(met is not None, "redis's growing key space (_sdsnewlen) did not rank first with "
              "a score >= 70 within %.0f s under --no-inject" % REDIS_WITHIN_S)
        keys, s, rec = met
        check(rec["overhead"]["duty"] < 1, "redis flat out never made the budget back off: %s" %
              rec["overhead"])
        truth = keys * REDIS_KEY_SDS_BYTES
        widen = 1 + EXCESS_SIGMAS * figure_error(s)
        print("_sdsnewlen: %.1f MB (range %.1f-%.1f, error %.2f) for %d keys, %.1f MB" %
              (s["inuse_bytes"] / 1e6, s["inuse_bytes_low"] / 1e6, s["inuse_bytes_high"] / 1e6,
               figure_error(s), keys, truth / 1e6), flush=True)
        check(s["inuse_bytes_low"] / widen <= truth <= s["inuse_bytes_high"] * widen,
              "_sdsnewlen's in-use %.1f MB (range %.1f-%.1f) against redis's %d keys, %.1f MB" %
              (s["inuse_bytes"] / 1e6, s["inuse_bytes_low"] / 1e6,
               s["inuse_bytes_high"] / 1e6, keys, truth / 1e6))
    finally:
        for p in (b, m, r):
            if p is not None and p.poll() is None:
                p.send(15)
                p.wait(10)
        shutil.rmtree(tmp, ignore_errors=True)


def test_backoff_leaves_in_process_counts_exact():
    """Two processes under the default options: a je_-prefixed jemalloc
    program calling every entry point back to back (uprobes: a second
    allocator beside glibc's), heavy enough that the budget pauses its
    allocation probes, and inject_target in sum mode (memtop's sampler in
    it), whose batches say how many calls they made. Once the budget has
    paused: the uprobes process's counts are not exact (they missed
    calls), the in-process one's still are, and they move by exactly
    what its batches made; its rates stay exact throughout."""
    # every entry point 100 times a second for 40 s (it keeps one block
    # in two: some 300 KiB/s), under a budget of 2% it cannot keep
    heavy = Workload("mt_jemalloc_prefixed", "--mode=apis", "--iterations=4000",
                     "--duration=40").wait_ready()
    light = Proc([workload_path("inject_target"), "sum", "0", "20000"],
                 stdin=subprocess.PIPE, name="inject_target sum")
    check(light.out.get(10, "READY").startswith("READY"), "inject_target did not start")
    m = Memtop("-b", "--json", "-d", "0.5", "--max-overhead", "2", "-p",
               "%s,%s" % (heavy.pid, light.pid))
    rec = m.first_record()
    check(target(rec, heavy.pid)["mechanism"] == "uprobes" and
          target(rec, light.pid)["mechanism"] == "in-process",
          "not one process of each: %s" % [(t["pid"], t["mechanism"]) for t in rec["targets"]])
    before = target(rec, light.pid)
    heavy.trigger()
    t0 = time.monotonic()
    while not (rec["overhead"]["duty"] < 1 and target(rec, heavy.pid)["counters_exact"] is False):
        check(time.monotonic() - t0 < 30, "the budget did not pause the heavy process's probes "
              "in 30 s: %s" % rec["overhead"])
        rec = m.record(10)
        check(rec is not None, "memtop exited: %s" % m.err.text()[-400:])
    made = [0, 0]
    for n in range(1, 4):  # batches while the budget is backed off
        light.popen.stdin.write(b"go\n")
        light.popen.stdin.flush()
        line = light.out.get(30, "batch %d" % n)
        check(line and line.startswith("sum %d " % n), "inject_target printed %r" % line)
        truth = dict(kv.split("=") for kv in line.split()[3:])
        made[0] += int(truth["allocs"])
        made[1] += int(truth["frees"])
    rec = m.records_after(time.time(), count=1)
    lt = target(rec, light.pid)
    check(rec["overhead"]["backed_off"] or rec["overhead"]["duty"] < 1,
          "the back-off ended before the batches were counted: %s" % rec["overhead"])
    check(lt["counters_exact"] is True and lt["alloc_calls"] is not None,
          "the in-process process lost its exact counts to the uprobes one's back-off: %s" % lt)
    check(all(target(r, light.pid)["rates_exact"] for r in m.records[1:]),
          "the in-process process's rates were marked estimates while the budget paused "
          "the other one's probes: %s" %
          [(r["time"], target(r, light.pid)["rates_exact"]) for r in m.records])
    got = [lt["alloc_calls"] - before["alloc_calls"], lt["free_calls"] - before["free_calls"]]
    check(got == made, "3 batches under the back-off: memtop counted %s, they made %s" %
          (got, made))
    check(rec["overhead"]["counters_exact"] is False,
          "the run's counters_exact is true though one process missed calls: %s" %
          rec["overhead"])
    m.send(2)
    check(m.wait(20) == 0, "memtop: %s" % m.err.text()[-300:])

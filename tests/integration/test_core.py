"""End-to-end tests of memtop's core: -p and -- CMD, batch text and JSON,
exact per-target counters against the workloads' ground truth, per-site
estimates within the sampling tolerances derived in memtop_test.py.

Counters are read as cumulative since attach (the JSON's per-target
alloc_calls/free_calls/alloc_bytes, and per-site alloc_bytes/alloc_objects
and inuse_*)."""

import os
import re
import signal
import subprocess
import tempfile
import time

from memtop_test import RATE_ARGS as TRUTH_RATE_ARGS
from memtop_test import (TEST_RATE, Memtop, Proc, Workload, assert_counters_equal, assert_estimate,
                         assert_eq, assert_nothing_left, bpf_snapshot, check, fail,
                         read_truth_file, rss_bytes, site_value, sites_by_function, target,
                         truth_site, upper_bound, workload_path)

INTERVAL = "0.5"
# Every site printed (--top 0): check_site_estimates looks for each of the
# truth's sites, and one whose in-use ends at zero ranks last, so the default
# --top 20 cut it where the run had more than 20 stacks (a wrapper shell's own).
RATE_ARGS = TRUTH_RATE_ARGS + ("--top", "0")
SITES = ("leak_site", "cache_site", "churn_site", "big_site")
ZERO = {"alloc_calls": 0, "free_calls": 0, "alloc_bytes": 0}


# ==== Helpers ====

def watch_pid(name, wl_args=(), memtop_args=()):
    """Start workload `name`, attach memtop -p in JSON mode, check that an
    idle workload counts nothing, run the phase and return (workload,
    memtop, truth, record) with a record taken after the phase ended."""
    w = Workload(name, *wl_args).wait_ready()
    m = Memtop("-b", "--json", "-d", INTERVAL, *RATE_ARGS, *memtop_args, "-p", w.pid)
    first = m.first_record()
    assert_eq("rate in the JSON", first["rate"], TEST_RATE)
    t = target(first, w.pid)
    check(t["alive"] is True, "target not alive in the first record: %s" % t)
    assert_counters_equal(first, w.pid, ZERO, "counters of the idle workload before its phase")
    w.trigger()
    truth = w.read_truth(timeout=60)
    last = m.records_after(truth["time"], count=2)
    check(target(last, w.pid)["alive"] is True, "target reported dead while it is alive")
    return w, m, truth, last


def check_no_drops(rec):
    for t in rec["targets"]:
        check(t.get("counters_exact") is not False,
              "memtop says the counters of pid %d are not exact (overhead: %s)" %
              (t["pid"], rec.get("overhead")))
    d = rec["dropped"]
    check(d["events"] == 0 and d["live_map_full"] == 0,
          "memtop dropped data at --rate 4K, so estimates cannot be checked: %s" % d)


def check_site_estimates(rec, truth, functions, rate=TEST_RATE):
    """Cumulative allocation and current in-use estimates of each function
    against its truth."""
    sites = sites_by_function(rec)
    for f in functions:
        ts = truth_site(truth, f)
        ms = sites.get(f)
        if ms is None:
            fail("site %s not reported; reported: %s" % (f, sorted(map(str, sites))))
        for k in ("alloc_bytes", "alloc_objects"):
            check(k in ms, "site %s has no cumulative %r: %s" % (f, k, ms["entries"][0]))
        assert_estimate("%s alloc_bytes" % f, ms["alloc_bytes"], ts["alloc_bytes"],
                        ts["alloc_sizes"], rate)
        assert_estimate("%s alloc_objects" % f, ms["alloc_objects"], ts["alloc_calls"],
                        ts["alloc_sizes"], rate, objects=True)
        assert_estimate("%s inuse_bytes" % f, ms["inuse_bytes"], ts["inuse_bytes"],
                        ts["live_sizes"], rate)
        assert_estimate("%s inuse_objects" % f, ms["inuse_objects"], ts["inuse_objects"],
                        ts["live_sizes"], rate, objects=True)


def function_lines(source, function):
    """(first, last) line of a top-level C function definition in source."""
    path = os.path.join(os.path.dirname(__file__), "..", "workloads", source)
    with open(path) as f:
        lines = f.read().split("\n")
    for i, l in enumerate(lines):
        if re.search(r"\b%s\(" % re.escape(function), l) and not l.endswith(";") and \
                not l.startswith((" ", "\t")):
            for j in range(i + 1, len(lines)):
                if lines[j].startswith("}"):
                    return i + 1, j + 1
    fail("no definition of %s in %s" % (function, source))


def check_site_location(rec, function, binary, source):
    """The site names the workload binary as module and a file:line inside
    the function (the workloads are built with -g)."""
    entries = sites_by_function(rec)[function]["entries"]
    first, last = function_lines(source, function)
    for s in entries:
        check(s["module"] and os.path.basename(s["module"]) == binary,
              "%s: module %r, expected the %s binary" % (function, s["module"], binary))
        check(s["file"] and os.path.basename(s["file"]) == source,
              "%s: file %r, expected %s" % (function, s["file"], source))
        check(s["line"] is not None and first <= s["line"] <= last,
              "%s: line %r is not inside the function (%s:%d-%d)" %
              (function, s["line"], source, first, last))


def check_rates(records, functions):
    """Per-interval rates add up to the cumulative estimate: sum of
    alloc_bytes_per_s * interval_s over all records == alloc_bytes of the
    last (both come from the same samples; 10% covers interval jitter)."""
    last = records[-1]
    for f in functions:
        for rate_key, cum_key in (("alloc_bytes_per_s", "alloc_bytes"),
                                  ("alloc_objects_per_s", "alloc_objects")):
            total = sum(site_value(r, f, rate_key) * r["interval_s"] for r in records)
            cum = site_value(last, f, cum_key)
            check(abs(total - cum) <= 0.10 * cum + 1,
                  "%s: sum of %s * interval_s over %d records is %.0f, but the cumulative "
                  "%s is %.0f" % (f, rate_key, len(records), total, cum_key, cum))


def check_growth_and_bounds(records, truth, rate=TEST_RATE):
    """leak_site's in-use never shrinks and grows the most; cache_site and
    churn_site stay within what they ever had live; churn and big end at 0."""
    first, last = records[0], records[-1]
    series = [site_value(r, "leak_site", "inuse_bytes") for r in records]
    for a, b in zip(series, series[1:]):
        check(b >= a - 1e-6, "leak_site in-use went down although it never frees: %s" %
              [round(x) for x in series])
    growth = {f: site_value(last, f, "inuse_bytes") - site_value(first, f, "inuse_bytes")
              for f in SITES}
    others = max(v for f, v in growth.items() if f != "leak_site")
    check(growth["leak_site"] > others,
          "leak_site should have the largest in-use growth: %s" %
          {f: round(v) for f, v in growth.items()})
    for f in ("cache_site", "churn_site", "big_site"):
        ts = truth_site(truth, f)
        bound = upper_bound(ts["peak_inuse_bytes"], ts["peak_live_sizes"], rate)
        worst = max(site_value(r, f, "inuse_bytes") for r in records)
        check(worst <= bound, "%s in-use reached %.0f, above anything it ever had live "
              "(peak %d bytes, bound %.0f): frees not matched?" %
              (f, worst, ts["peak_inuse_bytes"], bound))
    for f in ("churn_site", "big_site"):
        v = site_value(last, f, "inuse_bytes")
        check(v == 0, "%s frees everything it allocates, but memtop still shows %.0f bytes "
              "in use: frees not matched" % (f, v))


def end_by_exit(w, m, truth, timeout=15):
    """The workload exits: memtop must end cleanly with its last numbers."""
    w.release()
    rc = m.drain(timeout)
    assert_eq("memtop exit status after its only target exited", rc, 0)
    final = m.records[-1]
    t = target(final, w.pid)
    check(t["alive"] is False, "last record must show the target dead: %s" % t)
    assert_counters_equal(final, w.pid, truth, "last numbers after the target exited")
    return final


# ==== Tests ====

def test_sites_pid_mode():
    """-p: exact counters, per-site estimates, leak growth, bounded cache and
    churn, rates, location, RSS, clean end when the target exits."""
    w, m, truth, last = watch_pid("mt_sites", ("--iterations=2000", "--duration=2"))
    check_no_drops(last)
    assert_counters_equal(last, w.pid, truth)
    check_site_estimates(last, truth, SITES)
    check_growth_and_bounds(m.records, truth)
    check_rates(m.records, ("leak_site", "churn_site"))
    check_site_location(last, "leak_site", "mt_sites", "mt_sites.c")
    check(max(site_value(r, "leak_site", "samples") for r in m.records) > 0,
          "leak_site never has samples")
    rss = rss_bytes(w.pid)
    shown = target(last, w.pid)["rss_bytes"]
    check(abs(shown - rss) <= 0.1 * rss + 256 * 1024,
          "rss_bytes %d, but /proc says %d for the idle workload" % (shown, rss))
    check(shown - target(m.records[0], w.pid)["rss_bytes"] >= truth_site(truth, "leak_site")
          ["inuse_bytes"] // 2, "RSS did not grow with the leak: %d -> %d" %
          (target(m.records[0], w.pid)["rss_bytes"], shown))
    end_by_exit(w, m, truth)


def test_apis_pid_mode():
    """Every allocator entry point: exact counters under the counting rules
    (realloc(NULL, n) is a malloc, realloc(p, 0) a free, free(NULL) nothing,
    nested glibc calls not counted twice) and per-function estimates;
    seed_block's blocks all moved by realloc, so its in-use ends at 0."""
    w, m, truth, last = watch_pid("mt_apis", ("--iterations=200", "--duration=2"))
    check_no_drops(last)
    assert_counters_equal(last, w.pid, truth)
    funcs = [s["function"] for s in truth["sites"] if s["alloc_calls"] > 0]
    check_site_estimates(last, truth, funcs)
    for f in ("api_realloc_zero", "api_free_null"):
        check(site_value(last, f, "alloc_bytes", 0) == 0,
              "%s allocates nothing but memtop shows %s" % (f, sites_by_function(last).get(f)))
    end_by_exit(w, m, truth)


def test_threads_pid_mode():
    """Four threads at once: exact totals, each thread's leak function
    estimated on its own, the shared churn site ends with nothing in use."""
    w, m, truth, last = watch_pid("mt_threads", ("--iterations=1000", "--duration=3"))
    check_no_drops(last)
    assert_counters_equal(last, w.pid, truth)
    check_site_estimates(last, truth, ["thread_leak_%d" % n for n in range(4)] + ["shared_site"])
    v = site_value(last, "shared_site", "inuse_bytes")
    check(v == 0, "shared_site frees everything, memtop shows %.0f bytes in use" % v)
    end_by_exit(w, m, truth)


def run_command(*memtop_args):
    """memtop -- mt_sites: memtop starts the command, watches it and ends
    (exit 0) with the last numbers when it exits. Returns (memtop, truth,
    the command's last target entry)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "truth")
        m = Memtop("-b", "--json", "-d", INTERVAL, *RATE_ARGS, *memtop_args, "--",
                   workload_path("mt_sites"), "--start=1", "--hold=0.5", "--out=" + out,
                   "--iterations=2000", "--duration=2")
        rc = m.drain(timeout=60)
        assert_eq("memtop exit status when the command exits", rc, 0)
        check(m.records, "memtop -- CMD printed no record")
        truth = read_truth_file(out)
    final = m.records[-1]
    t = target(final, truth["pid"])
    check(t["alive"] is False, "last record must show the command dead: %s" % t)
    return m, truth, t


def check_command_counters(t, truth):
    """The C runtime may allocate before main, so counters are >= the truth
    (and not far above it)."""
    check(t.get("counters_exact") is not False,
          "counters of the command are not exact: %s" % t)
    for k, slack in (("alloc_calls", 100), ("free_calls", 100), ("alloc_bytes", 1 << 20)):
        check(truth[k] <= t[k] <= truth[k] + slack,
              "%s %d: expected the truth %d plus at most %d from the C runtime" %
              (k, t[k], truth[k], slack))


def test_command_mode_uprobes():
    """-- CMD with the glibc uprobes (--no-preload): exact counters from the
    first allocation, per-site estimates, leak growth, the command's name."""
    m, truth, t = run_command("--no-preload")
    check_no_drops(m.records[-1])
    check_command_counters(t, truth)
    check_site_estimates(m.records[-1], truth, SITES)
    check_growth_and_bounds(m.records, truth)
    assert_eq("comm of the command", t["comm"], "mt_sites")


def test_command_mode_default():
    """-- CMD with the defaults (memtop may preload its own sampler): the
    same per-site estimates; counters, when memtop calls them exact, are
    right."""
    m, truth, t = run_command()
    d = m.records[-1]["dropped"]
    check(d["events"] == 0 and d["live_map_full"] == 0, "memtop dropped data: %s" % d)
    check_site_estimates(m.records[-1], truth, SITES)
    check_growth_and_bounds(m.records, truth)
    if t.get("counters_exact") is not False:
        check_command_counters(t, truth)
    assert_eq("comm of the command", t["comm"], "mt_sites")


def test_text_batch():
    """-b without --json prints a table naming the sites; -n ends it. The
    workload outlasts memtop's start-up in every probe mode (uretprobe
    mode's takes about 6 s here: each on/off phase of the cost measure
    attaches or releases a link per probe)."""
    w = Workload("mt_sites", "--iterations=30000", "--duration=40").wait_ready()
    w.trigger()
    m = Memtop("-b", "-n", "4", "-d", INTERVAL, *RATE_ARGS, "-p", w.pid)
    rc = m.wait(30)
    assert_eq("memtop -b -n 4 exit status", rc, 0)
    text = m.out.text()
    for f in ("leak_site", "cache_site", "churn_site"):
        check(f in text, "text output does not name %s:\n%s" % (f, text[-2000:]))


def test_count_and_interval():
    """-n COUNT prints exactly COUNT JSON records, -d sets interval_s."""
    w = Workload("mt_sites").wait_ready()
    t0 = time.monotonic()
    m = Memtop("-b", "--json", "-n", "3", "-d", "0.3", "-p", w.pid)
    rc = m.drain(timeout=30)
    elapsed = time.monotonic() - t0
    assert_eq("exit status", rc, 0)
    assert_eq("number of records with -n 3", len(m.records), 3)
    for r in m.records:
        check(abs(r["interval_s"] - 0.3) < 0.15, "interval_s %r with -d 0.3" % r["interval_s"])
        check(abs(r["time"] - time.time()) < 60, "time %r is not the current unix time" %
              r["time"])
    times = [r["time"] for r in m.records]
    check(all(b > a for a, b in zip(times, times[1:])), "times not increasing: %s" % times)
    check(elapsed >= 0.8, "3 intervals of 0.3s took only %.2fs" % elapsed)


def test_rate_option():
    """--rate accepts plain bytes and K/M suffixes; the default is 512 KiB
    and the default interval 1 s."""
    w = Workload("mt_sites").wait_ready()
    for arg, want in (("4K", 4096), ("1M", 1 << 20), ("65536", 65536)):
        m = Memtop("-b", "--json", "-n", "1", "-d", "0.2", "--rate", arg, "-p", w.pid)
        assert_eq("exit status with --rate %s" % arg, m.drain(20), 0)
        check(m.records, "no record with --rate %s" % arg)
        assert_eq("rate with --rate %s" % arg, m.records[0]["rate"], want)
    m = Memtop("-b", "--json", "-n", "1", "-p", w.pid)
    assert_eq("exit status with defaults", m.drain(20), 0)
    check(m.records, "no record with the defaults")
    assert_eq("default rate", m.records[0]["rate"], 512 * 1024)
    check(abs(m.records[0]["interval_s"] - 1.0) < 0.25,
          "default interval_s %r, expected 1.0" % m.records[0]["interval_s"])


def test_multiple_pids():
    """-p A,B: each target's counters are its own; the run goes on while one
    is alive and ends cleanly when both have exited."""
    a = Workload("mt_apis", "--iterations=50", "--duration=0.3").wait_ready()
    b = Workload("mt_sites", "--iterations=300", "--duration=0.3").wait_ready()
    m = Memtop("-b", "--json", "-d", INTERVAL, *RATE_ARGS, "-p", "%d,%d" % (a.pid, b.pid))
    first = m.first_record()
    assert_eq("targets", sorted(t["pid"] for t in first["targets"]), sorted([a.pid, b.pid]))
    a.trigger()
    b.trigger()
    ta, tb = a.read_truth(), b.read_truth()
    last = m.records_after(max(ta["time"], tb["time"]), count=2)
    assert_counters_equal(last, a.pid, ta, "counters of %d" % a.pid)
    assert_counters_equal(last, b.pid, tb, "counters of %d" % b.pid)
    a.release()
    deadline = time.monotonic() + 15
    while True:
        rec = m.record(max(0.1, deadline - time.monotonic()))
        check(rec is not None, "memtop exited while %d was still alive; stderr: %s" %
              (b.pid, m.stderr_lines()[:3]))
        if target(rec, a.pid)["alive"] is False:
            break
    check(target(rec, b.pid)["alive"] is True, "the other target shown dead: %s" % rec["targets"])
    assert_counters_equal(rec, a.pid, ta, "last numbers of the exited %d" % a.pid)
    b.release()
    assert_eq("exit status once every target exited", m.drain(15), 0)
    final = m.records[-1]
    check(all(t["alive"] is False for t in final["targets"]),
          "last record must show both dead: %s" % final["targets"])
    assert_counters_equal(final, b.pid, tb, "last numbers of %d" % b.pid)


def test_ctrl_c_detaches():
    """SIGINT ends memtop with status 0 and leaves nothing attached: the
    workload keeps running and its phase completes normally afterwards."""
    before = bpf_snapshot()
    w = Workload("mt_sites", "--iterations=200", "--duration=0.2").wait_ready()
    m = Memtop("-b", "--json", "-d", "0.3", *RATE_ARGS, "-p", w.pid)
    m.first_record()
    m.send(signal.SIGINT)
    assert_eq("exit status after Ctrl-C", m.wait(10), 0)
    assert_nothing_left(before)
    check(w.poll() is None, "the workload died when memtop detached")
    w.trigger()
    truth = w.read_truth(timeout=30)
    check(truth["alloc_calls"] > 0, "workload phase did not run after detach")


def test_live_map_full_is_said_on_the_site():
    """A live map too small for the live samples (--live-max 1K at a 256-byte
    rate): the sites whose samples could not be tracked say so, in JSON
    (untracked_samples) and in -b ([in-use low: N untracked]), so an in-use
    figure that stopped growing is never shown as if it were whole."""
    w = Workload("mt_sites", "--iterations=3000", "--duration=1").wait_ready()
    m = Memtop("-b", "--json", "-d", INTERVAL, "--rate", "256", "--max-overhead", "none",
               "--live-max", "1K", "-p", w.pid)
    m.first_record()
    w.trigger()
    truth = w.read_truth(timeout=60)
    last = m.records_after(truth["time"], count=2)
    full = last["dropped"]["live_map_full"]
    check(full > 0, "the live map never filled: %s" % last["dropped"])
    untracked = {s["function"]: s["untracked_samples"] for s in last["sites"]
                 if s.get("untracked_samples")}
    check(untracked, "live map full (%d) but no site says so" % full)
    check(sum(untracked.values()) <= full, "sites count %d untracked, the map %d" %
          (sum(untracked.values()), full))
    w.release()
    m.drain(20)
    w = Workload("mt_sites", "--iterations=3000", "--duration=1").wait_ready()
    t = Memtop("-b", "-d", INTERVAL, "--rate", "256", "--max-overhead", "none",
               "--live-max", "1K", "-p", w.pid)
    t.out.get(20, "memtop's first table")
    w.trigger()
    w.read_truth(timeout=60)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not any("[in-use low:" in l for l in t.out.lines):
        t.out.get(2, "memtop -b table")
    check(any("[in-use low:" in l and "untracked" in l for l in t.out.lines),
          "-b marks no site as low: %s" % "\n".join(t.out.lines[-15:]))
    w.release()
    t.send(2)
    t.wait(20)


def thread_batches_counted(m, pid, go, batch_line):
    """inject_target sum 4 N watched by m: a first batch (its threads get
    their stacks made), then three whose threads are made and ended; go()
    starts a batch, batch_line(n) returns its line. memtop's counts move
    by exactly what the three batches made."""
    made, before = [0, 0], None
    for n in range(1, 5):
        go()
        line = batch_line(n)
        check(line and line.startswith("sum %d " % n), "inject_target printed %r" % line)
        truth = dict(kv.split("=") for kv in line.split()[3:])
        if n == 1:
            before = target(m.records_after(time.time(), count=1), pid)
            check(before["mechanism"] == "uprobes", "not on uprobes: %s" % before)
            continue
        made[0] += int(truth["allocs"])
        made[1] += int(truth["frees"])
    t = target(m.records_after(time.time(), count=1), pid)
    got = [t["alloc_calls"] - before["alloc_calls"], t["free_calls"] - before["free_calls"]]
    print("made %s, counted %s" % (made, got))
    check(got == made, "3 batches of 4 threads made and ended: memtop counted %s, they made %s"
          % (got, made))


def test_thread_exit_frees_counted_once():
    """glibc empties an exiting thread's cache (tcache) by calling free()
    on blocks the program freed already: under uprobes those frees are the
    C library's, not the program's, and are not counted again; with -p,
    and with -- CMD, whose probes go on before its exec."""
    sum_args = [workload_path("inject_target"), "sum", "4", "3000"]
    w = Proc(sum_args, stdin=subprocess.PIPE, name="inject_target sum")
    check(w.out.get(10, "READY").startswith("READY"), "inject_target did not start")
    m = Memtop("-b", "--json", "-d", INTERVAL, "--no-inject", "--max-overhead", "none",
               "-p", w.pid)
    m.first_record()

    def go_pid():
        w.popen.stdin.write(b"go\n")
        w.popen.stdin.flush()
    thread_batches_counted(m, w.pid, go_pid, lambda n: w.out.get(30, "batch %d" % n))
    m.send(2)
    check(m.wait(20) == 0, "memtop: %s" % m.err.text()[-300:])

    with tempfile.TemporaryDirectory() as tmp:
        log = os.path.join(tmp, "cmd.log")
        m = Memtop("-b", "--json", "-d", INTERVAL, "--no-preload", "--max-overhead", "none",
                   "--cmd-log", log, "--", *sum_args, stdin=subprocess.PIPE)
        pid = m.first_record()["targets"][0]["pid"]

        def go_cmd():
            m.popen.stdin.write(b"go\n")
            m.popen.stdin.flush()

        def cmd_line(n):
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                m.record(10)  # a refresh: the log has had time to grow
                with open(log) as f:
                    lines = [l for l in f if l.startswith("sum %d " % n)]
                if lines:
                    return lines[0].strip()
            fail("no batch %d in %s" % (n, log))
        thread_batches_counted(m, pid, go_cmd, cmd_line)
        m.popen.stdin.close()
        check(m.wait(20) == 0, "memtop: %s" % m.err.text()[-300:])

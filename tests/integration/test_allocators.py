"""jemalloc and tcmalloc (gperftools) under uprobes: linked, preloaded, in
-p and --cgroup, and Debian's redis-server, which uses jemalloc.

The workloads (tests/workloads/mt_jemalloc.c, its static and
je_-prefixed builds mt_jemalloc_static.c and mt_jemalloc_prefixed.c,
mt_tcmalloc.c, mt_family_libc.c, all on alloc_family.h) print their exact
truth:
  - --mode=apis calls every entry point memtop probes in that allocator
    from its own site; memtop's exact counters must equal the truth (no
    call counted twice through a forwarder such as tcmalloc's sized delete
    of a page-aligned block, none missed) and each site's estimates must
    hold at --rate 4K;
  - --mode=scenario runs a leak, a plateaued cache and churn gently enough
    for memtop's plain defaults (512 KiB rate, 10% budget) to keep every
    probe on: counters exact, the leak ranks first by leak score, the
    cache and the churn score low.
The JSON names the allocator memtop probes in each target."""

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time

from memtop_test import (WORKLOADS, Memtop, Proc, RedisServer, Workload,
                         assert_counters_equal, assert_eq, check, parse_truth, read_truth_file,
                         scratch_dir, sites_by_function, target, workload_path)
from test_cgroup import Cgroup, wait_ready
from test_core import RATE_ARGS, check_no_drops, check_site_estimates

LIBDIR = "/usr/lib/x86_64-linux-gnu"
JEMALLOC = os.path.join(LIBDIR, "libjemalloc.so.2")
TCMALLOC = os.path.join(LIBDIR, "libtcmalloc.so.4")
LEAK_MIN = 50.0     # the leak's score by the end of a 20 s run ...
LOW_MAX = 30.0      # ... and the most the cache and the churn may score
SCENARIO_S = 20


class EnvWorkload(Workload):
    """A workload started with its own environment (LD_PRELOAD)."""

    def __init__(self, name, *args, env=None):
        Proc.__init__(self, [os.path.join(WORKLOADS, name)] + list(args), name=name, env=env)


def run_apis(name, allocator, env=None, mechanism="in-process", extra=()):
    """--mode=apis under memtop -p at --rate 4K: exact counters, estimates
    per entry point, the allocator and the mechanism named."""
    w = EnvWorkload(name, "--mode=apis", "--iterations=200", "--duration=2",
                    env=env).wait_ready()
    m = Memtop("-b", "--json", "-d", "0.5", *RATE_ARGS, *extra, "-p", w.pid)
    first = m.first_record()
    assert_eq("allocator of pid %d" % w.pid, target(first, w.pid).get("allocator"), allocator)
    assert_eq("mechanism of pid %d" % w.pid, target(first, w.pid).get("mechanism"), mechanism)
    w.trigger()
    truth = w.read_truth(timeout=60)
    last = m.records_after(truth["time"], count=2)
    check_no_drops(last)
    assert_counters_equal(last, w.pid, truth)
    funcs = [s["function"] for s in truth["sites"] if s["alloc_calls"] > 0]
    check_site_estimates(last, truth, funcs)
    w.release()
    m.drain(15)


def said_paused(records):
    """The records of a run that say the budget paused its probes (a duty
    below 1, or backed off)."""
    return [r["overhead"] for r in records if r["overhead"].get("backed_off") or
            r["overhead"].get("duty", 1) < 1]


def why_scored(site, rec, pid):
    """What a site's best-scored entry was made of, and how its process
    was watched, for a failure to say why a score was low."""
    e = max(site["entries"], key=lambda e: e["leak_score"])
    keys = ("leak_score", "leak_confidence", "leak_reasons", "samples", "live_samples",
            "inuse_bytes", "slope_bytes_per_s", "slope_r2", "freed_fraction", "mechanism")
    t = target(rec, pid)
    return "its entry %s of %d; the process: mechanism %s, duty %s" % (
        {k: e.get(k) for k in keys}, len(site["entries"]), t.get("mechanism"),
        rec["overhead"].get("duty"))


def check_scenario(name, during, last, truth, pid, startup_slack=0, seen=()):
    """Exact counters after the phase (with startup_slack, a -- CMD run:
    at most that many more calls, those of its start-up, which memtop
    counts and the truth does not); in the phase's last record, the leak
    ranks first by score and the cache and the churn score low.

    The scenario is gentle: the probes stay on at full duty, unless the
    machine is so loaded (or memtop so slowed, under ASan) that each hit
    costs the target more than the budget allows; then the counters are
    estimates, said so (counters_exact false), and one of the run's
    records (seen) must have said the probes were paused."""
    if target(last, pid).get("counters_exact") is False:
        check(said_paused(seen), "%s: memtop paused its probes and no record said so: %s" %
              (name, last["overhead"]))
    else:
        assert_counters_equal(last, pid, truth, "%s scenario counters" % name,
                              startup_slack or 0)
    sites = sites_by_function(during)
    for f in ("leak_site", "cache_site", "churn_site"):
        check(f in sites, "%s: site %s not reported: %s" % (name, f, sorted(map(str, sites))))
    score = {f: max(e["leak_score"] for e in s["entries"]) for f, s in sites.items()}
    top = max(score, key=score.get)
    check(top == "leak_site" and score["leak_site"] >= LEAK_MIN,
          "%s: leak_site should rank first with a score >= %.0f: %s; %s" %
          (name, LEAK_MIN, score, why_scored(sites["leak_site"], during, pid)))
    for f in ("cache_site", "churn_site"):
        check(score[f] <= LOW_MAX, "%s: %s scores %.0f, above %.0f: %s" %
              (name, f, score[f], LOW_MAX, score))


def run_scenario(name, allocator, env=None):
    """--mode=scenario under memtop -p with plain defaults."""
    w = EnvWorkload(name, "--mode=scenario", "--duration=%d" % SCENARIO_S,
                    env=env).wait_ready()
    m = Memtop("-b", "--json", "-p", w.pid)
    first = m.first_record()
    assert_eq("allocator of pid %d" % w.pid, target(first, w.pid).get("allocator"), allocator)
    w.trigger()
    during, seen = first, [first]
    while not any(line.startswith("{") for line in w.out.lines):
        rec = m.record(10)
        check(rec is not None, "memtop exited during the scenario: %s" % m.err.text()[-300:])
        during = rec
        seen.append(rec)
    truth = w.read_truth(timeout=10)
    last = m.records_after(truth["time"], count=2, keep=seen)
    check_scenario(name, during, last, truth, w.pid, seen=seen)
    w.release()
    m.drain(15)


# ==== jemalloc ====

def test_jemalloc_apis_pid():
    """A -ljemalloc program: malloc ... valloc, mallocx, rallocx, sdallocx,
    dallocx, operator new/delete (sized, aligned, nothrow)."""
    run_apis("mt_jemalloc", "jemalloc")


def test_allocator_tables_without_inject():
    """The uprobe path's probe tables (--no-inject, the default's fallback)
    over every entry point of glibc, jemalloc and tcmalloc: exact counters
    and estimates, as in-process."""
    run_apis("mt_jemalloc", "jemalloc", mechanism="uprobes", extra=("--no-inject",))
    run_apis("mt_tcmalloc", "tcmalloc", mechanism="uprobes", extra=("--no-inject",))
    run_apis("mt_family_libc", "glibc", mechanism="uprobes", extra=("--no-inject",))


def test_jemalloc_scenario_pid():
    run_scenario("mt_jemalloc", "jemalloc")


def test_jemalloc_preloaded_pid():
    """A plain C program with LD_PRELOAD=libjemalloc.so.2: jemalloc serves
    malloc, so it is the one probed, not glibc."""
    env = dict(os.environ, LD_PRELOAD=JEMALLOC)
    run_apis("mt_family_libc", "jemalloc", env=env)


def test_jemalloc_static_apis_pid():
    """mt_jemalloc linked with Debian's static libjemalloc_pic.a: jemalloc
    lives in the executable (mallocx in its .symtab only) and is probed
    there, every entry point counted exactly."""
    run_apis("mt_jemalloc_static", "jemalloc", mechanism="uprobes")


def test_jemalloc_linked_scenarios_pid_and_command():
    """The leak, cache and churn of jemalloc compiled into the program,
    both ways at once: the je_-prefixed build (je_malloc ... by name,
    glibc serving malloc) under memtop -p with plain defaults, probed
    beside glibc, and the static unprefixed build under memtop -- CMD
    (no sampler: the executable's malloc is jemalloc's). In both, the leak
    ranks first by score, the cache and the churn score low, and
    jemalloc's extents (mapped under its je_ functions) never show as mmap
    sites. -- CMD of the prefixed build is test_sampler's
    test_command_mode_jemalloc_prefixed_program, -p of the static one
    test_jemalloc_static_apis_pid."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "truth")
        # a leak of 2 MiB/s (twice the family's default): some 80 samples
        # of growth in the phase, so its score stands clear of the noise
        # in both runs
        leak = "--leak-rate=%d" % (2 << 20)
        mc = Memtop("-b", "--json", "--", workload_path("mt_jemalloc_static"),
                    "--mode=scenario", "--duration=%d" % SCENARIO_S, leak, "--start=1",
                    "--hold=10", "--out=" + out)
        w = EnvWorkload("mt_jemalloc_prefixed", "--mode=scenario",
                        "--duration=%d" % SCENARIO_S, leak).wait_ready()
        mp = Memtop("-b", "--json", "-p", w.pid)
        during_p = mp.first_record()
        seen_p, seen_c = [during_p], []
        assert_eq("allocator of pid %d" % w.pid, target(during_p, w.pid).get("allocator"),
                  "glibc+jemalloc")
        during_c = mc.first_record()
        seen_c.append(during_c)
        cpid = during_c["targets"][0]["pid"]
        assert_eq("allocator under -- CMD", during_c["targets"][0].get("allocator"), "jemalloc")
        check("not glibc's" in mc.err.text(),
              "-- CMD gave no reason for not preloading: %s" % mc.err.text()[-300:])
        # the two phases overlap but not their busiest part, the cache's
        # fill (FAM_ENTRIES inserts in 4 s): the -p one starts once the
        # command's cache is full, so neither run's budget sees both
        fill_deadline = time.monotonic() + 20
        while (target(during_c, cpid).get("alloc_calls") or 0) < 512 + 100:
            check(time.monotonic() < fill_deadline, "the command's cache did not fill: %s" %
                  target(during_c, cpid))
            during_c = mc.record(10)
            check(during_c is not None, "memtop -- exited: %s" % mc.err.text()[-300:])
            seen_c.append(during_c)
            rec = mp.record(10)
            if rec is not None:
                seen_p.append(rec)
        w.trigger()
        done_p = done_c = False
        deadline = time.monotonic() + SCENARIO_S + 30
        while not (done_p and done_c):
            check(time.monotonic() < deadline, "no truth from the two scenario runs")
            if not done_p:
                done_p = any(line.startswith("{") for line in w.out.lines)
                if not done_p:
                    rec = mp.record(10)
                    check(rec is not None, "memtop -p exited: %s" % mp.err.text()[-300:])
                    during_p = rec
                    seen_p.append(rec)
            if not done_c:
                with open(out) as f:
                    done_c = any(line.startswith("{") for line in f)
                if not done_c:
                    rec = mc.record(10)
                    check(rec is not None, "memtop -- exited: %s" % mc.err.text()[-300:])
                    during_c = rec
                    seen_c.append(rec)
        truth_p = w.read_truth(timeout=10)
        truth_c = read_truth_file(out)
        last_p = mp.records_after(truth_p["time"], count=2, keep=seen_p)
        last_c = mc.records_after(truth_c["time"], count=2, keep=seen_c)
        check_scenario("prefixed -p", during_p, last_p, truth_p, w.pid, seen=seen_p)
        check_scenario("static -- CMD", during_c, last_c, truth_c, cpid, startup_slack=64,
                       seen=seen_c)
        for what, rec in (("prefixed -p", last_p), ("static -- CMD", last_c)):
            # every site counts, one with no named frame too (jemalloc's
            # start-up extents, mapped while memtop's first read of the
            # command's maps still lacked libc, once showed as one)
            extra = [(s["function"], s["inuse_bytes"], s["stack"][:2]) for s in rec["sites"]
                     if s.get("source") == "mmap"
                     and not (s["function"] or "").startswith("_dl_")]
            check(not extra, "%s: jemalloc's own mappings shown as mmap sites: %s" %
                  (what, extra))
        w.release()
        mp.drain(15)
        mc.send(signal.SIGINT)
        mc.drain(30)


# ==== tcmalloc ====

def test_tcmalloc_apis_pid():
    """A -ltcmalloc program: its C names, tc_*, operator new/delete; sized
    delete of page-aligned blocks forwards to tc_free and counts once."""
    # it calls tcmalloc's own API (tc_malloc ...), which the sampler does
    # not reroute: uprobes, by default too
    run_apis("mt_tcmalloc", "tcmalloc", mechanism="uprobes")


def test_tcmalloc_scenario_pid():
    run_scenario("mt_tcmalloc", "tcmalloc")


def test_tcmalloc_preloaded_pid():
    env = dict(os.environ, LD_PRELOAD=TCMALLOC)
    run_apis("mt_family_libc", "tcmalloc", env=env)


def test_tcmalloc_behind_a_wrapper_command():
    """memtop -- sh -c 'PROG; true': the command's child links tcmalloc, in
    front of which the preloaded sampler passes every call through
    (memtop_sampler.c); memtop probes tcmalloc in the child with uprobes,
    where a watch of the sampler's USDT probes saw nothing, and its sites
    hold against the child's truth."""
    out = os.path.join(scratch_dir("mt-wrapped-"), "truth")
    child = "%s --mode=apis --iterations=200 --duration=2 --start=2 --hold=60 --out=%s" % (
        workload_path("mt_tcmalloc"), out)
    m = Memtop("-b", "--json", "-d", "0.5", *RATE_ARGS, "--", "sh", "-c", child + "; true")
    deadline = time.monotonic() + 60

    def has_truth():
        if not os.path.exists(out):
            return False
        with open(out) as f:
            return any(line.startswith("{") for line in f)

    while not has_truth():
        check(time.monotonic() < deadline, "no truth from the command's child")
        check(m.record(10) is not None, "memtop exited: %s" % m.err.text()[-300:])
    truth = read_truth_file(out)
    last = m.records_after(truth["time"], count=2)
    kids = [t for t in last["targets"] if t["comm"] == "mt_tcmalloc"]
    check(kids, "the child is not a target: %s" % [t["comm"] for t in last["targets"]])
    assert_eq("allocator of the child", kids[0]["allocator"], "tcmalloc")
    check(kids[0]["samples"] > 0 and kids[0]["counters_exact"],
          "the child has no sample or no exact counters: %s" % kids[0])
    d = last["dropped"]
    check(d["events"] == 0 and d["live_map_full"] == 0, "memtop dropped data: %s" % d)
    check_site_estimates(last, truth, [s["function"] for s in truth["sites"]
                                       if s["alloc_calls"] > 0])
    m.send(signal.SIGINT)
    m.drain(30)


def test_glibc_family_pid():
    """The same C program without a preload: glibc, with the same truth."""
    run_apis("mt_family_libc", "glibc")


# ==== --cgroup ====

def test_cgroup_mixed_allocators():
    """One cgroup with a jemalloc, a tcmalloc and a glibc process, and a
    tcmalloc one started after memtop attached: each is probed with its own
    allocator's table and counted exactly."""
    cg = Cgroup("memtop-allocs")
    procs = []
    try:
        for name in ("mt_jemalloc", "mt_tcmalloc", "mt_family_libc"):
            p = cg.spawn(workload_path(name), "--mode=apis", "--iterations=100",
                         "--duration=1")
            wait_ready(p)
            procs.append(p)
        m = Memtop("-b", "--json", "-d", "0.5", *RATE_ARGS, "--cgroup", cg.name)
        first = m.first_record()
        got = {t["pid"]: t.get("allocator") for t in first["targets"]}
        want = {procs[0].pid: "jemalloc", procs[1].pid: "tcmalloc", procs[2].pid: "glibc"}
        assert_eq("allocators in the cgroup", got, want)
        # each "attached" line lists that process's own probes: tcmalloc's
        # operator new (_Znwm) is probed in the tcmalloc process only
        attached = {int(l.split()[4]): l for l in m.err.text().splitlines()
                    if l.startswith("memtop: attached to PID ")}
        check(set(attached) == set(want), "attached lines: %s" % sorted(attached))
        check("_Znwm@" in attached[procs[1].pid] and "_Znwm@" not in attached[procs[2].pid],
              "the attached lines do not list each process's own probes:\n%s" %
              "\n".join(attached[p.pid] for p in procs))
        late = cg.spawn(workload_path("mt_tcmalloc"), "--mode=apis", "--iterations=100",
                        "--duration=1")
        wait_ready(late)
        procs.append(late)
        t0 = time.monotonic()
        rec = first
        while late.pid not in {t["pid"] for t in rec["targets"]}:
            check(time.monotonic() - t0 < 5, "tcmalloc process started in the cgroup was not "
                  "attached within 5 s")
            rec = m.record(5)
        got[late.pid] = target(rec, late.pid).get("allocator")
        assert_eq("allocator of the process that arrived later", got[late.pid], "tcmalloc")
        truths = {}
        for p in procs:
            p.popen.stdin.write(b"g")
            p.popen.stdin.flush()
        for p in procs:
            truths[p.pid] = parse_truth(p.out.get(60, "%s truth" % p.name), p.name)
        last = m.records_after(max(t["time"] for t in truths.values()), count=2)
        for pid, truth in truths.items():
            # the late one may be caught before its READY, start-up and all
            assert_counters_equal(last, pid, truth, "pid %d (%s)" % (pid, got[pid]),
                                  startup_slack=64 if pid == late.pid else 0)
    finally:
        for p in procs:
            p.kill()
        cg.remove()


# ==== redis-server ====

def test_redis_server_pid():
    """Debian's redis-server (jemalloc 5.3) on a unix socket, fed a bounded
    redis-benchmark: with default options memtop samples it in-process
    (jemalloc behind the sampler; redis frees with sdallocx, rerouted too),
    shows redis's own call sites (zmalloc's callers, not zmalloc), and
    redis stays alive."""
    bench = shutil.which("redis-benchmark")
    check(shutil.which("redis-server") and bench,
          "redis-server and redis-benchmark are needed (make deps)")
    tmp = tempfile.mkdtemp(prefix="memtop-redis-")
    try:
        server = RedisServer(tmp, "redis")
        r, sock = server.proc, server.sock
        m = Memtop("-b", "--json", "-d", "0.5", "--rate", "64K", "-p", r.pid)
        first = m.first_record()
        assert_eq("allocator of redis-server", target(first, r.pid).get("allocator"),
                  "jemalloc")
        subprocess.run([bench, "-s", sock, "-n", "20000", "-q", "-t", "set,lpush,get",
                        "-d", "256", "-r", "10000"], check=True, timeout=60,
                       stdout=subprocess.DEVNULL)
        rec = m.record(10)
        rec = m.record(10)
        check(r.poll() is None, "redis-server died under memtop: rc %s" % r.poll())
        t = target(rec, r.pid)
        # in-process by default: every call counted, the sampled ones fire
        check(t["alive"] and t["samples"] > 20 and t["mechanism"] == "in-process" and
              t["counters_exact"] and t["alloc_calls"] > 20000,
              "redis-server: expected its 20000 requests to be counted and sampled "
              "in-process: %s" % t)
        sites = sites_by_function(rec)
        named = [f for f in sites if f and not f.startswith(("zmalloc", "ztrymalloc", "zcalloc",
                                                             "zrealloc", "je_"))]
        check(len(named) >= 3, "redis-server: expected its own call sites, got %s" %
              sorted(map(str, sites)))
        check(not any(f and f.startswith("zmalloc") for f in sites),
              "zmalloc is redis's allocator wrapper, not a call site: %s" % sorted(map(str, sites)))
        r.send(15)
        r.wait(10)
        m.drain(15)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

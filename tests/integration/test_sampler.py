"""memtop consuming the otel_memory USDT contract from a process that
samples itself: the core issue's site and estimate assertions on a
workload running with libmemtop-sampler.so preloaded and watched with -p
(issue 9). The sampler's own behaviour (correctness of every allocator
function, threads, fork+exec, no effect without a tool) is tested by
tests/sampler/run."""

import errno
import os
import signal
import subprocess
import time

import test_core
from test_allocators import TCMALLOC
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
    m = Memtop("-b", "--json", "-d", "0.5", "--rate", "4K", "--top", "0", "-p", w.pid)
    first = m.first_record()
    check(first["overhead"]["mode"] == "usdt",
          "mode %s, expected usdt (stderr: %s)" % (first["overhead"]["mode"], m.err.text()))
    t = target(first, w.pid)
    check(t["counters_exact"] is False and t["alloc_calls"] is None,
          "usdt mode must not show exact counters: %s" % t)
    check(first["overhead"]["counters_exact"] is False,
          "the run claims exact counters while its one target's are not: %s" % first["overhead"])
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


REDIS_SCRIPT = "".join("SET key:%d %s\n" % (i, "v%d" % (i * 7919) * (1 + i % 40))
                       for i in range(2000)) + \
    "".join("GET key:%d\nAPPEND key:%d tail\n" % (i, i) for i in range(0, 2000, 7)) + \
    "DBSIZE\nFLUSHALL\nDBSIZE\n"


def redis_answers(sock, server):
    """REDIS_SCRIPT's answers from the redis-server listening on sock (it
    must be up within 30 s: the socket file appears when it is)."""
    deadline = time.monotonic() + 30
    while not os.path.exists(sock):
        check(server.poll() is None, "redis-server exited %s before listening" % server.poll())
        check(time.monotonic() < deadline, "redis-server did not listen within 30 s")
        time.sleep(0.05)
    return subprocess.run(["redis-cli", "-s", sock], input=REDIS_SCRIPT.encode(),
                          capture_output=True, timeout=60).stdout.decode()


def with_targets(m, first):
    """The first record that lists a target: a command that calls another
    allocator than glibc's is injected once its loader is done."""
    rec = first
    deadline = time.monotonic() + 30
    while not rec["targets"]:
        check(time.monotonic() < deadline, "no target listed within 30 s")
        rec = m.record()
    return rec


def test_command_mode_foreign_allocator():
    """memtop -- redis-server (jemalloc): the sampler is not preloaded in
    front of another allocator; memtop says so and puts its sampler into
    redis once its loader is done, as --inject does (usdt mode, in-process);
    redis lives and answers exactly as when run bare."""
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        argv = ["redis-server", "--port", "0", "--save", "", "--appendonly", "no",
                "--dir", tmp, "--logfile", os.path.join(tmp, "log")]
        bare = Proc(argv + ["--unixsocket", os.path.join(tmp, "bare.sock")])
        expected = redis_answers(os.path.join(tmp, "bare.sock"), bare)
        bare.kill()
        check("\n2000\nOK\n0\n" in expected, "bare redis answered %r" % expected[-200:])
        sock = os.path.join(tmp, "watched.sock")
        m = Memtop("-b", "--json", "-d", "0.5", "--", *argv, "--unixsocket", sock)
        with_targets(m, m.first_record())
        got = redis_answers(sock, m)
        check(got == expected, "redis under memtop answered differently: %r" % got[-200:])
        # a record made after the answers: the next one queued may be
        # older (CI: one made 49 ms after the first, before them, counted 0)
        rec = m.records_after(time.time(), count=1)
        check(rec["targets"][0]["alive"], "redis-server died under memtop: %s" % rec["targets"])
        err = m.err.text()
        check("not glibc's" in err and "jemalloc" in err,
              "memtop did not say why it does not preload: %s" % err[-500:])
        check(rec["targets"][0]["mechanism"] == "in-process" and
              rec["overhead"]["mode"] == "usdt",
              "redis not in-process: %s, mode %s" % (rec["targets"][0]["mechanism"],
                                                     rec["overhead"]["mode"]))
        check(rec["targets"][0]["alloc_calls"] > 0, "no call counted: %s" % rec["targets"][0])
        m.send(signal.SIGINT)
        check(m.drain(timeout=30) == 0, "memtop: %s" % m.err.text()[-400:])



def start_through_fifo(path, m, after=None, timeout=30):
    """The workload waits on the FIFO at path (--start=fifo:PATH): one byte
    starts it, once memtop's stderr says `after` (if given). Opened without
    blocking, again until the workload has its end open, so a workload that
    died fails the test instead of hanging it."""
    deadline = time.monotonic() + timeout
    while after and after not in m.err.text():
        check(time.monotonic() < deadline, "memtop never said %r: %s" % (after,
                                                                        m.err.text()[-300:]))
        m.record(0.2)  # memtop's output is read meanwhile
    while True:
        try:
            fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
            break
        except OSError as e:
            check(e.errno == errno.ENXIO and time.monotonic() < deadline,
                  "the workload never opened %s (%s): %s" % (path, e, m.err.text()[-300:]))
            m.record(0.2)  # memtop's output is read meanwhile
    os.write(fd, b"g")
    os.close(fd)


def command_mode_foreign_counts(name, allocator, reason="not glibc's",
                                mechanism="in-process", env=None, binary=None):
    """memtop -- WORKLOAD for a program linked with another allocator: no
    sampler preload (memtop says why); memtop's sampler put in once the
    loader is done, as --inject does (or, for a second prefixed allocator
    the sampler would not see, both probed with uprobes from the first
    call), so memtop's exact counters hold every call of the workload's
    truth (its phase starts once memtop's first record is out: a byte on a
    FIFO), plus only the few calls of its start-up (the loader,
    libstdc++'s emergency pool) that were seen."""
    import tempfile
    from memtop_test import read_truth_file
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "truth")
        go = os.path.join(tmp, "go")
        os.mkfifo(go)
        m = Memtop("-b", "--json", "-d", "0.5", *test_core.RATE_ARGS, "--",
                   os.path.join(WORKLOADS, name), "--mode=apis", "--iterations=100",
                   "--duration=1", "--start=fifo:" + go, "--hold=3", "--out=" + out,
                   env=env, binary=binary)
        first = with_targets(m, m.first_record())
        pid = first["targets"][0]["pid"]
        check(first["targets"][0].get("allocator") == allocator,
              "allocator %s, expected %s" % (first["targets"][0].get("allocator"), allocator))
        check(first["targets"][0].get("mechanism") == mechanism,
              "mechanism %s, expected %s" % (first["targets"][0].get("mechanism"), mechanism))
        check(reason in m.err.text(), "no reason given: %s" % m.err.text()[-300:])
        # the sampler goes in once the loader is done, at memtop's next
        # retry (2.3 s once on a loaded machine): calls before it would
        # not be counted (a command is not held until then)
        start_through_fifo(go, m, "sampler injected" if mechanism == "in-process" else None)
        deadline = time.monotonic() + 60
        while True:
            m.record()
            with open(out) as f:
                if any(l.startswith("{") for l in f):
                    break
            check(time.monotonic() < deadline, "no truth from %s" % name)
        truth = read_truth_file(out)
        last = m.records_after(truth["time"], count=2)
        t = target(last, pid)
        check(t["counters_exact"], "counters not exact: %s" % t)
        for key, slack in (("alloc_calls", 64), ("free_calls", 64), ("alloc_bytes", 256 << 10)):
            extra = t[key] - truth[key]
            check(0 <= extra <= slack, "%s %d, truth %d: more than start-up can explain" %
                  (key, t[key], truth[key]))
        m.send(signal.SIGINT)
        m.drain(timeout=30)


def test_command_mode_jemalloc_program():
    command_mode_foreign_counts("mt_jemalloc", "jemalloc")


def test_command_mode_jemalloc_prefixed_program():
    """je_malloc ... of a static je_-prefixed jemalloc next to glibc's malloc:
    both probed with uprobes, no sampler preloaded."""
    command_mode_foreign_counts("mt_jemalloc_prefixed", "glibc+jemalloc",
                                reason="besides its malloc", mechanism="uprobes")


def test_command_mode_tcmalloc_program():
    """mt_tcmalloc calls tc_malloc ... itself, which no GOT slot of malloc
    reroutes: uprobes, as -p and --inject decide for it, and why."""
    command_mode_foreign_counts("mt_tcmalloc", "tcmalloc", mechanism="uprobes",
                                reason="calls tc_")


def test_command_mode_tcmalloc_preloaded():
    """A plain C program under LD_PRELOAD=libtcmalloc.so.4: tcmalloc serves
    its malloc, and memtop's sampler goes into it (in-process, exact
    counts), not uprobes. memtop itself runs with that LD_PRELOAD (under
    make asan: its plain build, memtop_unsanitized())."""
    from memtop_test import memtop_unsanitized
    command_mode_foreign_counts("mt_family_libc", "tcmalloc",
                                env=dict(os.environ, LD_PRELOAD=TCMALLOC),
                                binary=memtop_unsanitized())


def test_command_mode_foreign_ends_before_injection():
    """A jemalloc command that ends at once (a bad option: exit status 2),
    before its loader is done and memtop's sampler can go in: it is listed
    all the same, ended with code 2, reaped, and memtop exits 2, as for
    any command."""
    m = Memtop("-b", "--json", "-d", "0.3", "--", os.path.join(WORKLOADS, "mt_jemalloc"),
               "--no-such-option")
    rc = m.drain(timeout=30)
    check(rc == 2, "memtop exit status %s, expected the command's 2: %s" %
          (rc, m.err.text()[-300:]))
    check("exited with code 2" in m.err.text(), "no end said: %s" % m.err.text()[-300:])
    ends = [t["end"] for r in m.records for t in r["targets"] if t.get("end")]
    check(ends and ends[-1]["how"] == "exit" and ends[-1]["exit_code"] == 2,
          "the command's end is not listed: %s" % ends)

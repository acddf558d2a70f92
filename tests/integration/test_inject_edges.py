"""The default in-process path at its edges (issue 23 item 4): a process
with thousands of threads, a process in another PID namespace and in
another mount namespace, and memtop SIGKILLed at random moments of a
session. Each target is tests/workloads/inject_target.c's "sum" mode:
batches of seeded allocator calls whose checksum of every byte it checked
depends only on the batch, so every batch run under memtop must print what
a bare run prints; memtop must either sample the process in-process (its
holds bounded) or watch it with uprobes and say why, never fail."""

import os
import random
import re
import shutil
import signal
import subprocess
import tempfile
import time

from memtop_test import (Memtop, Proc, assert_one_error_line, check, fail, target,
                         workload_path)
from test_inject import MAX_PAUSE_MS, pauses, sampler_mapped

SUM = ("sum", "2", "20000")


def start_sum(argv_prefix=(), idle=0, name="inject_target sum", env=None, mode=SUM):
    """inject_target sum under argv_prefix (unshare ...); returns (Proc,
    the PID memtop sees: the workload itself, not the wrapper)."""
    argv = list(argv_prefix) + [workload_path("inject_target")] + list(mode)
    if idle:
        argv.append(str(idle))
    p = Proc(argv, stdin=subprocess.PIPE, name=name, env=env)
    line = p.out.get(120, "%s READY" % name)
    check(line and line.startswith("READY"), "%s did not start: %r %s" %
          (name, line, p.err.text()[-300:]))
    if idle:
        check("idle=%d" % idle in line, "%s started fewer idle threads: %s" % (name, line))
    return p, workload_pid(p.pid)


def workload_pid(pid):
    """pid, or its only descendant running inject_target (unshare forks)."""
    for _ in range(4):
        with open("/proc/%d/comm" % pid) as f:
            if f.read().strip() == "inject_target":
                return pid
        kids = []
        for t in os.listdir("/proc/%d/task" % pid):
            with open("/proc/%d/task/%s/children" % (pid, t)) as f:
                kids += [int(k) for k in f.read().split()]
        check(len(kids) == 1, "PID %d has children %s" % (pid, kids))
        pid = kids[0]
    fail("no inject_target under PID %d" % pid)


def batch(p, n, timeout=180):
    p.popen.stdin.write(b"go\n")
    p.popen.stdin.flush()
    return batch_line(p, n, timeout)


def batch_line(p, n, timeout=180):
    line = p.out.get(timeout, "%s sum %d" % (p.name, n))
    check(line and line.startswith("sum %d " % n), "%s printed %r: %s" %
          (p.name, line, p.err.text()[-300:]))
    return line



def check_counts(m, pid, line, what):
    """memtop's exact counts since it attached (before the batch) against
    the batch's own "allocs=A frees=F", read from a record made after the
    batch ended."""
    truth = dict(kv.split("=") for kv in line.split()[3:])
    rec = m.records_after(time.time(), count=1, timeout=20)
    t = target(rec, pid)
    check(t["counters_exact"], "%s: counts not exact: %s" % (what, t))
    for key, field in (("allocs", "alloc_calls"), ("frees", "free_calls")):
        want, got = int(truth[key]), t[field]
        check(got == want, "%s: memtop counted %s %s, the batch "
              "made %d" % (what, got, field, want))
    print("%s: memtop counted %d allocation and %d free calls, the batch made %s and %s" %
          (what, t["alloc_calls"], t["free_calls"], truth["allocs"], truth["frees"]))


def bare_sums(n):
    p, _ = start_sum(name="bare inject_target")
    sums = [batch(p, i + 1) for i in range(n)]
    p.popen.stdin.close()
    check(p.wait(20) == 0, "bare inject_target failed")
    return sums


def end(p):
    p.popen.stdin.close()
    check(p.wait(60) == 0, "%s failed: %s" % (p.name, p.err.text()[-300:]))


def watched_batch(p, pid, want):
    """A default memtop on pid while batch 1 runs: in-process with every
    hold bounded and GOT put back, or uprobes with a reason; the batch's
    sum is the bare one and memtop counted the calls. Returns the target's
    first JSON entry."""
    m = Memtop("-b", "--json", "-d", "0.3", "-p", pid)
    t = target(m.first_record(60), pid)
    line = batch(p, 1)
    if t["mechanism"] == "in-process":
        check_counts(m, pid, line, "PID %d" % pid)
    rec = m.record(20)
    check(rec is not None, "memtop ended: %s" % m.err.text()[-400:])
    now = target(rec, pid)
    m.send(signal.SIGINT)
    check(m.drain(60) == 0, "memtop: %s" % m.err.text()[-600:])
    err = m.err.text()
    if t["mechanism"] == "in-process":
        check("GOT restored" in err, "PID %d not put back: %s" % (pid, err[-400:]))
        check(pauses(m), "no hold reported: %s" % err[-400:])
        for ms in pauses(m):
            check(ms < MAX_PAUSE_MS, "a thread was held %.1f ms: %s" % (ms, err[-400:]))
    else:
        check(t["mechanism"] == "uprobes" and t["mechanism_reason"],
              "neither in-process nor uprobes with a reason: %s (%s)" % (t, err[-400:]))
        check(not sampler_mapped(pid), "refused, yet the sampler is mapped")
        check(now["samples"] > 0, "uprobes sampled nothing: %s" % now)
    check(line == want, "under memtop: %s, bare: %s" % (line, want))
    print("PID %d: %s (%s), holds %s ms" % (pid, t["mechanism"], t["mechanism_reason"],
                                             pauses(m)))
    return t, m


def test_inject_thousands_of_threads():
    """3000 threads waiting on a condition variable beside 2 working ones:
    injected with each hold under the bound, the work's sums unchanged."""
    want = bare_sums(1)[0]
    p, pid = start_sum(idle=3000, name="inject_target 3000 threads")
    check(len(os.listdir("/proc/%d/task" % pid)) >= 3001, "fewer than 3001 threads")
    t, _ = watched_batch(p, pid, want)
    check(t["mechanism"] == "in-process", "3000 threads: not in-process: %s" % t)
    end(p)


def test_inject_other_pid_namespace():
    """A process in a PID namespace of its own (unshare -p -f): the PID
    memtop is given is the one in memtop's namespace."""
    want = bare_sums(1)[0]
    p, pid = start_sum(("unshare", "-p", "-f", "--mount-proc"), name="inject_target pidns")
    check(os.readlink("/proc/%d/ns/pid" % pid) != os.readlink("/proc/self/ns/pid"),
          "not in another PID namespace")
    t, _ = watched_batch(p, pid, want)
    check(t["mechanism"] == "in-process", "PID namespace: not in-process: %s" % t)
    end(p)


def test_inject_other_mount_namespace():
    """A process in a mount namespace of its own, running an executable on
    a tmpfs mounted only there: no path of it exists in memtop's
    namespace."""
    want = bare_sums(1)[0]
    d = tempfile.mkdtemp(prefix="memtop-mntns-")
    try:
        script = ("mount -t tmpfs none %s && cp %s %s/ && exec %s/inject_target %s" %
                  (d, workload_path("inject_target"), d, d, " ".join(SUM)))
        p = Proc(["unshare", "-m", "--propagation", "private", "sh", "-c", script],
                 stdin=subprocess.PIPE, name="inject_target mntns")
        line = p.out.get(60, "inject_target mntns READY")
        check(line and line.startswith("READY"), "did not start: %r %s" %
              (line, p.err.text()[-300:]))
        pid = workload_pid(p.pid)
        check(not os.path.exists(os.path.join(d, "inject_target")),
              "the executable is visible outside its mount namespace")
        t, _ = watched_batch(p, pid, want)
        check(t["mechanism"] == "in-process", "mount namespace: not in-process: %s" % t)
        end(p)
    finally:
        shutil.rmtree(d, ignore_errors=True)


def test_unknown_allocator_in_process():
    """malloc served by an allocator memtop has no uprobe table for
    (mt_bump_alloc, preloaded): by default the sampler goes in front of
    it, as with --inject (was: "no probe table", status 1); sums and
    exact counts as bare. Under a seccomp filter as well, neither way
    works: one line with both reasons, status 1, nothing mapped."""
    want = bare_sums(1)[0]
    env = dict(os.environ, LD_PRELOAD=workload_path("mt_bump_alloc"))
    p, pid = start_sum(env=env, name="inject_target bump")
    t, _ = watched_batch(p, pid, want)
    check(t["mechanism"] == "in-process", "unknown allocator: not in-process: %s" % t)
    end(p)
    s = Proc([workload_path("inject_target"), "seccomp"], stdin=subprocess.PIPE,
             name="inject_target bump seccomp", env=env)
    check(s.out.get(20, "seccomp READY").startswith("READY"), "did not start")
    m = Memtop("-b", "-n", "1", "-p", s.pid)
    assert_one_error_line(m, m.wait(30), r"no probe table for.*; and not in-process: .*seccomp")
    check(not sampler_mapped(s.pid), "refused, yet the sampler is mapped")
    s.popen.stdin.close()
    check(s.wait(10) == 0, "the seccomp process failed")


def traced(pid):
    for t in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/status" % (pid, t)) as f:
                if re.search(r"^TracerPid:\s+[1-9]", f.read(), re.M):
                    return True
        except OSError:
            pass
    return False


def test_sigkill_memtop_at_random_moments():
    """Ten default memtops on one process, each SIGKILLed at a random
    moment (0 to 1.5 s after it starts: while it prepares, holds a thread,
    attaches or samples) while a batch runs: every batch sums what it sums
    bare; once a sampler is in the process, every later memtop that says
    anything reuses it; a last memtop reuses it, samples and puts the GOT
    back."""
    rounds = 10
    want = bare_sums(rounds + 1)
    seed = int(os.environ.get("MEMTOP_TEST_SEED", time.time()))
    rng = random.Random(seed)
    p, pid = start_sum(name="inject_target killed memtops")
    injected = False
    for i in range(rounds):
        p.popen.stdin.write(b"go\n")
        p.popen.stdin.flush()
        m = Memtop("-b", "--json", "-d", "0.3", "-p", pid)
        delay = rng.uniform(0, 1.5)
        time.sleep(delay)  # the random moment itself, not a synchronisation
        m.send(signal.SIGKILL)
        m.wait(10)
        err = m.err.text()
        said = re.search(r"sampler (injected|reused)", err)
        if injected and said:
            check(said.group(1) == "reused", "seed %d, round %d (%.2f s): a second sampler "
                  "injected: %s" % (seed, i, delay, err[-400:]))
        injected = injected or sampler_mapped(pid)
        got = batch_line(p, i + 1)
        check(got == want[i], "seed %d, round %d (killed after %.2f s): %s, bare %s" %
              (seed, i, delay, got, want[i]))
    check(p.poll() is None, "the process died")
    t0 = time.monotonic()
    while traced(pid):  # a holder of a killed memtop finishes its hold
        check(time.monotonic() - t0 < 10, "a thread is still traced 10 s on")
        time.sleep(0.05)
    m = Memtop("-b", "--json", "-d", "0.3", "-p", pid)
    t = target(m.first_record(30), pid)
    check(t["mechanism"] == "in-process", "after the kills: %s (%s)" % (t, m.err.text()[-400:]))
    check(not injected or "sampler reused" in m.err.text(),
          "the last memtop did not reuse the sampler: %s" % m.err.text()[-400:])
    got = batch(p, rounds + 1)
    check_counts(m, pid, got, "the last memtop")
    m.send(signal.SIGINT)
    check(m.drain(30) == 0, "memtop: %s" % m.err.text()[-400:])
    check("GOT restored" in m.err.text(), "not put back: %s" % m.err.text()[-400:])
    check(got == want[rounds], "after the kills: %s, bare %s" % (got, want[rounds]))
    end(p)


def test_cgroup_newcomer_in_process_exact():
    """A process that joins a watched cgroup after memtop started is counted
    by its allocator's uprobes from the moment memtop finds it, then handed
    over to memtop's sampler while it churns, without a gap or a double
    count: from the first record that shows it (on uprobes, idle) to the
    end, memtop's exact counts move by exactly what its batches say they
    made, the handover among them (docs/inject.md, "The handover")."""
    from test_cgroup import Cgroup
    cg = Cgroup("memtop-newcomer")
    p = first = None
    try:
        first, m = cg.watched()
        # its batches in its main thread: a thread's start and end make
        # calls of the C library's own (glibc frees a thread's cached
        # blocks at its exit), which the uprobes see and the program never
        # made, so they are not in its truth
        spawned = time.time()
        p = cg.spawn(workload_path("inject_target"), "sum", "0", "40000")
        line = p.out.get(20, "newcomer READY")
        check(line and line.startswith("READY"), "newcomer did not start: %r" % line)
        # the first record that shows it: still on uprobes, and idle (it
        # waits for its first batch), so its counts are those of that moment
        t0 = time.monotonic()
        while True:
            rec = m.record(5)
            check(rec is not None, "memtop exited: %s" % m.err.text()[-400:])
            t = [x for x in rec["targets"] if x["pid"] == p.pid]
            if t:
                break
            check(time.monotonic() - t0 < 10, "newcomer not watched: %s" % m.err.text()[-400:])
        t = t[0]
        check(t["mechanism"] == "uprobes" and t["counters_exact"],
              "first seen: %s (%s)" % (t, m.err.text()[-400:]))
        # its counts are said to be from when memtop found it, after its start
        check(t["counted_since"] is not None and spawned <= t["counted_since"] <= rec["time"],
              "counted_since %s: spawned at %.3f, first shown at %.3f" %
              (t["counted_since"], spawned, rec["time"]))
        print("newcomer counted from %.0f ms after its spawn" %
              (1000 * (t["counted_since"] - spawned)))
        check("PID %d: sampler injected" % p.pid not in m.err.text(),
              "the sampler went in before the first record showed it on uprobes")
        before = (t["alloc_calls"], t["free_calls"])
        # batches back to back while memtop puts its sampler in (at its next
        # refresh) and takes the uprobes off
        made = [0, 0]
        n = 0
        handed = "memtop: PID %d: handed over from glibc uprobes to the sampler" % p.pid
        while n < 2 or not any(l.startswith(handed) for l in m.err.lines):
            n += 1
            check(n <= 200, "no handover after %d batches: %s" % (n, m.err.text()[-400:]))
            truth = dict(kv.split("=") for kv in batch(p, n).split()[3:])
            made[0] += int(truth["allocs"])
            made[1] += int(truth["frees"])
        rec = m.records_after(time.time(), count=1)
        t = target(rec, p.pid)
        check(t["mechanism"] == "in-process" and t["counters_exact"],
              "after the handover: %s (%s)" % (t, m.err.text()[-400:]))
        check("PID %d: sampler injected" % p.pid in m.err.text(), "not injected: %s" %
              m.err.text()[-400:])
        got = (t["alloc_calls"] - before[0], t["free_calls"] - before[1])
        check(got == tuple(made), "%d batches across the handover: memtop counted %s, they "
              "made %s" % (n, got, made))
        # every batch frees all it made: a block the uprobes sampled and the
        # sampler did not take over would stay in use for ever
        check(t["inuse_bytes"] == 0, "in use after the batches: %s" % t)
        print("handover: %d batches, %d allocs and %d frees, all counted once; %s" %
              (n, made[0], made[1], [l for l in m.err.lines if l.startswith(handed)]))
        m.send(signal.SIGINT)
        check(m.drain(30) == 0, "memtop: %s" % m.err.text()[-400:])
        check("PID %d: GOT restored" % p.pid in m.err.text(), "not put back: %s" %
              m.err.text()[-400:])
        end(p)
    finally:
        for q in (p, first):
            if q:
                q.kill()
        cg.remove()


def last_batch_until_end(m, out, pid, made, what):
    """SIGUSR2: the prefork worker pid makes a last batch and exits at
    once (no read of its memory can see that batch; the BPF side's sums as
    it ends do). Adds it to made; returns its target in the first record
    that shows it ended."""
    os.kill(pid, signal.SIGUSR2)
    line = out.get(60, "%s last" % what)
    check(line and line.startswith("last "), "%s printed %r" % (what, line))
    truth = dict(kv.split("=") for kv in line.split()[1:])
    made[0] += int(truth["allocs"])
    made[1] += int(truth["frees"])
    t0 = time.monotonic()
    while True:
        rec = m.record(5)
        check(rec is not None, "memtop exited: %s" % m.err.text()[-400:])
        t = target(rec, pid)
        if not t["alive"]:
            return t
        check(time.monotonic() - t0 < 10, "the %s's end not seen: %s" % (what, t))


def test_cgroup_exec_newcomer_held_exact():
    """A fresh program exec'd in a watched cgroup is held at its loader's
    end (its first mprotect(PROT_READ), before any allocator has run) until
    memtop's probes are on it, then runs on: memtop counts it from its
    first allocation. The `prefork born` program makes 20,000 pairs as the
    first thing its main() does, then batches one per signal, then a last
    one as it exits: memtop counts every call, its birth's included, once,
    across the handover to the sampler; its counted_since is its hold,
    after its spawn and before its first allocation; it was held a few
    milliseconds, and nothing stays held (docs/cgroup.md, "Held at its
    start")."""
    from test_cgroup import Cgroup
    cg = Cgroup("memtop-held")
    first = p = None
    try:
        first, m = cg.watched()
        spawned = time.time()
        p = cg.spawn(workload_path("prefork"), "born")
        line = p.out.get(20, "born")
        check(line and " born " in line, "the newcomer did not start: %r (%s)" %
              (line, m.err.text()[-400:]))
        truth = dict(kv.split("=") for kv in line.split()[3:])
        made = [int(truth["allocs"]), int(truth["frees"])]
        joined = "memtop: PID %d (prefork) joined " % p.pid
        t0 = time.monotonic()
        while not any(l.startswith(joined) for l in m.err.lines):
            check(time.monotonic() - t0 < 10, "not joined: %s" % m.err.text()[-400:])
            m.record(5)
        said = [l for l in m.err.lines if l.startswith(joined)][0]
        check("counted from its first allocation" in said, "not held: %s" % said)
        held_ms = float(said.split("; held ")[1].split(" ms")[0])
        # batches (each read back before the next) until the uprobes have
        # handed it over to the sampler (it hands over as calls come)
        handed = "memtop: PID %d: handed over from glibc uprobes to the sampler" % p.pid
        n = 0
        while n < 3 or not any(l.startswith(handed) for l in m.err.lines):
            n += 1
            check(n <= 100, "no handover after %d batches: %s" % (n, m.err.text()[-400:]))
            os.kill(p.pid, signal.SIGUSR1)
            line = p.out.get(60, "batch %d" % n)
            check(line and line.startswith("batch %d " % n), "newcomer printed %r" % line)
            truth = dict(kv.split("=") for kv in line.split()[2:])
            made[0] += int(truth["allocs"])
            made[1] += int(truth["frees"])
            m.record(5)
        rec = m.records_after(time.time(), count=1)
        t = target(rec, p.pid)
        check(t["counters_exact"], "not exact: %s" % t)
        check(spawned <= t["counted_since"] <= spawned + 5,
              "counted since %.3f, spawned at %.3f" % (t["counted_since"], spawned))
        got = (t["alloc_calls"], t["free_calls"])
        check(got == tuple(made), "an exec'd newcomer held at its start: memtop counted %s, it "
              "made %s (%s)" % (got, made, " | ".join(l for l in m.err.lines if str(p.pid) in l)))
        t = last_batch_until_end(m, p.out, p.pid, made, "newcomer")
        check((t["alloc_calls"], t["free_calls"]) == tuple(made),
              "after its last batch and its end: memtop counted %s, it made %s" %
              ((t["alloc_calls"], t["free_calls"]), made))
        print("exec'd newcomer: held %.1f ms at its start; %d allocs and %d frees, its "
              "birth's included, all counted once; counted since %.3f s after the spawn" %
              (held_ms, made[0], made[1], t["counted_since"] - spawned))
        m.send(signal.SIGINT)
        check(m.drain(30) == 0, "memtop: %s" % m.err.text()[-400:])
    finally:
        for q in (p, first):
            if q:
                q.kill()
        cg.remove()


def fork_worker(master):
    """Ask the prefork master for a worker; returns (its PID, [allocs,
    frees] its birth made)."""
    master.popen.stdin.write(b"f")
    master.popen.stdin.flush()
    line = master.out.get(20, "worker")
    check(line and line.startswith("worker ") and " born " in line, "no worker: %r" % line)
    truth = dict(kv.split("=") for kv in line.split()[3:])
    return int(line.split()[1]), [int(truth["allocs"]), int(truth["frees"])]


def worker_batches(master, worker, made, first, last):
    """Batches first..last of the worker, one per SIGUSR1, each read back
    before the next; what they made is added to made."""
    for n in range(first, last + 1):
        os.kill(worker, signal.SIGUSR1)
        line = master.out.get(60, "worker batch %d" % n)
        check(line and line.startswith("batch %d " % n), "worker printed %r" % line)
        truth = dict(kv.split("=") for kv in line.split()[2:])
        made[0] += int(truth["allocs"])
        made[1] += int(truth["frees"])


def end_prefork(master, worker, cg):
    if worker:
        try:
            os.kill(worker, signal.SIGKILL)
        except ProcessLookupError:
            pass
    if master:
        master.kill()
    cg.remove()


def test_cgroup_forked_worker_of_uprobes_master_exact():
    """With --no-inject a pre-forking master is watched with uprobes; a
    worker it forks carries its breakpoints but no probe of its own, so it
    is held before its first instruction until its uprobes are on, then
    let go: counted from its fork, its birth's 20,000 pairs included, every
    call once (docs/cgroup.md, "Held at its start")."""
    from test_cgroup import Cgroup
    cg = Cgroup("memtop-prefork-uprobes")
    master = None
    worker = 0
    try:
        master = cg.spawn(workload_path("prefork"))
        check(master.out.get(20, "master READY").startswith("READY"), "master did not start")
        # no budget: its back-off would make the uprobes' counts estimates
        m = Memtop("-b", "--json", "-d", "0.3", "--no-inject", "--max-overhead", "none",
                   "--cgroup", cg.name)
        m.first_record()
        forked_at = time.time()
        worker, made = fork_worker(master)
        joined = "memtop: PID %d (prefork) joined " % worker
        t0 = time.monotonic()
        while not any(l.startswith(joined) for l in m.err.lines):
            check(time.monotonic() - t0 < 10, "not joined: %s" % m.err.text()[-400:])
            m.record(5)
        said = [l for l in m.err.lines if l.startswith(joined)][0]
        check(said.endswith(" ms at its start: counted from its first allocation"),
              "the worker was not held: %s" % said)
        worker_batches(master, worker, made, 1, 3)
        rec = m.records_after(time.time(), count=1)
        t = target(rec, worker)
        check(t["mechanism"] == "uprobes" and t["counters_exact"], "the worker: %s" % t)
        check(forked_at <= t["counted_since"] <= forked_at + 2,
              "counted since %.3f, forked at %.3f" % (t["counted_since"], forked_at))
        got = (t["alloc_calls"], t["free_calls"])
        check(got == tuple(made), "a worker of a master on uprobes, held at its fork: memtop "
              "counted %s, it made %s (%s)" % (got, made, said))
        print("worker of a master on uprobes: %s; %d allocs and %d frees, its birth's included, "
              "all counted once" % (said.split("; ")[1], made[0], made[1]))
        m.send(signal.SIGINT)
        check(m.drain(30) == 0, "memtop: %s" % m.err.text()[-400:])
    finally:
        end_prefork(master, worker, cg)


def test_cgroup_forked_worker_of_injected_master_exact():
    """A pre-forking server in a watched cgroup: memtop puts its sampler in
    the master, then the master forks a worker, which carries the sampler
    (its rerouted GOT) from its first instruction, with its counters zeroed
    at the fork (MADV_WIPEONFORK). The worker makes 20,000 pairs at once,
    before memtop can have found it, then batches one per signal. memtop
    reuses the sampler it finds there, with no uprobes in between, and
    counts the worker from its fork: every call it made, its birth's
    included, once; its counted_since is its start. Its last batch, made
    just before it exits, is counted too (summed by the BPF side as it
    ends)."""
    from test_cgroup import Cgroup
    cg = Cgroup("memtop-prefork")
    master = None
    worker = 0
    try:
        master = cg.spawn(workload_path("prefork"))
        check(master.out.get(20, "master READY").startswith("READY"), "master did not start")
        m = Memtop("-b", "--json", "-d", "0.3", "--cgroup", cg.name)
        m.first_record()
        injected = "memtop: PID %d: sampler injected" % master.pid
        t0 = time.monotonic()
        while not any(l.startswith(injected) for l in m.err.lines):
            check(time.monotonic() - t0 < 20, "the master was not injected: %s" %
                  m.err.text()[-400:])
            m.record(5)
        forked_at = time.time()
        worker, made = fork_worker(master)
        t0 = time.monotonic()
        while True:
            rec = m.record(5)
            check(rec is not None, "memtop exited: %s" % m.err.text()[-400:])
            t = [x for x in rec["targets"] if x["pid"] == worker]
            if t:
                break
            check(time.monotonic() - t0 < 10, "worker not watched: %s" % m.err.text()[-400:])
        t = t[0]
        check(t["mechanism"] == "in-process" and t["counters_exact"],
              "first seen: %s (%s)" % (t, m.err.text()[-400:]))
        reused = "memtop: PID %d: sampler reused" % worker
        said = [l for l in m.err.lines if l.startswith(reused)]
        check(said and said[0].endswith("its calls counted from its fork"),
              "the worker's sampler (the master's, forked) was not reused from its fork: %s" %
              m.err.text()[-600:])
        # its start, to the kernel's clock tick, not when memtop found it
        check(forked_at - 0.05 <= t["counted_since"] <= forked_at + 0.5,
              "counted since %.3f, forked at %.3f" % (t["counted_since"], forked_at))
        worker_batches(master, worker, made, 1, 3)
        rec = m.records_after(time.time(), count=1)
        t = target(rec, worker)
        check(t["mechanism"] == "in-process" and t["counters_exact"],
              "after the batches: %s (%s)" % (t, m.err.text()[-400:]))
        got = (t["alloc_calls"], t["free_calls"])
        if got != tuple(made):
            series = ["%.2f %s/%s %s%s" % (r["time"], x["alloc_calls"], x["free_calls"],
                                            x["mechanism"], "" if x["counters_exact"] else " ~")
                      for r in m.records for x in r["targets"] if x["pid"] == worker]
            fail("a forked worker counted from its fork: memtop counted %s, it made %s (the "
                 "worker's counts by record: %s; memtop's words: %s)" %
                 (got, made, "; ".join(series),
                  " | ".join(l for l in m.err.lines if str(worker) in l)))
        check(not any("handed over" in l and str(worker) in l for l in m.err.lines),
              "a handover for a worker that needed none: %s" % m.err.text()[-400:])
        check(t["inuse_bytes"] == 0, "in use after the batches: %s" % t)
        t = last_batch_until_end(m, master.out, worker, made, "worker")
        since = [x["counted_since"] for r in m.records for x in r["targets"]
                 if x["pid"] == worker]
        # one time, whatever a record took to make (its end's released links)
        check(max(since) - min(since) < 0.01, "counted_since moved: %s" % since)
        check((t["alloc_calls"], t["free_calls"]) == tuple(made),
              "after its last batch and its end: memtop counted %s, it made %s" %
              ((t["alloc_calls"], t["free_calls"]), made))
        print("forked worker: %d allocs and %d frees from its fork, its birth's and the last "
              "batch before its exit included, all counted once; counted since %.3f s after "
              "the fork was asked" % (made[0], made[1], t["counted_since"] - forked_at))
        m.send(signal.SIGINT)
        check(m.drain(30) == 0, "memtop: %s" % m.err.text()[-400:])
    finally:
        end_prefork(master, worker, cg)

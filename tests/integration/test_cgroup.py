"""End-to-end tests of `memtop --cgroup`: real cgroup v2 groups made by the
test (and removed after it), processes inside them started before and
after memtop attaches, an OOM kill under a small memory limit, and the
error paths (unknown cgroup, a v1 path, an empty cgroup).

On a hybrid layout (cgroup2 at /sys/fs/cgroup/unified, memory controller on
v1, as on this project's machines) the limit is set on the v1 memory cgroup
of the same name and the processes join both; memtop reads memory from
there, as it would on such a node."""

import os
import signal
import subprocess
import time

from memtop_test import (Memtop, Proc, assert_nothing_left, assert_one_error_line, bpf_snapshot,
                         check, fail, sites_by_function, workload_path)

V1_MEMORY = "/sys/fs/cgroup/memory"
MIB = 1024 * 1024


def v2_root():
    for path in ("/sys/fs/cgroup", "/sys/fs/cgroup/unified"):
        if os.path.exists(os.path.join(path, "cgroup.controllers")):
            return path
    fail("no cgroup v2 hierarchy mounted")


class Cgroup:
    """A cgroup v2 directory of the test's own (plus, when memory is not on
    the v2 hierarchy, the v1 memory cgroup of the same name)."""

    def __init__(self, name, limit=None):
        self.name = "%s-%d" % (name, os.getpid())
        self.root = v2_root()
        self.path = os.path.join(self.root, self.name)
        os.mkdir(self.path)
        with open(os.path.join(self.root, "cgroup.controllers")) as f:
            v2_memory = "memory" in f.read().split()
        self.v1 = None
        if v2_memory:
            with open(os.path.join(self.root, "cgroup.subtree_control"), "w") as f:
                f.write("+memory")
            if limit:
                self._write(os.path.join(self.path, "memory.max"), limit)
        elif os.path.isdir(V1_MEMORY):
            self.v1 = os.path.join(V1_MEMORY, self.name)
            os.mkdir(self.v1)
            if limit:
                self._write(os.path.join(self.v1, "memory.limit_in_bytes"), limit)
                self._write(os.path.join(self.v1, "memory.memsw.limit_in_bytes"), limit,
                            optional=True)

    @staticmethod
    def _write(path, value, optional=False):
        try:
            with open(path, "w") as f:
                f.write(str(value))
        except OSError:
            if not optional:
                raise

    def spawn(self, *argv):
        """Start argv inside this cgroup (it joins before it execs)."""
        joins = ["echo $$ > %s/cgroup.procs" % self.path]
        if self.v1:
            joins.append("echo $$ > %s/cgroup.procs" % self.v1)
        script = "; ".join(joins) + '; exec "$@"'
        return Proc(["sh", "-c", script, "sh"] + [str(a) for a in argv], name=argv[0])

    def watched(self):
        """One resident process in the cgroup (memtop --cgroup needs one to
        start) and `memtop -b --json -d 0.3 --cgroup` on it, its first
        record read: (the resident, the memtop). The resident is killed if
        memtop does not start."""
        first = self.spawn(workload_path("inject_target"), "read")
        try:
            check(first.out.get(20, "first READY").startswith("READY"), "first did not start")
            m = Memtop("-b", "--json", "-d", "0.3", "--cgroup", self.name)
            m.first_record()
        except BaseException:
            first.kill()
            raise
        return first, m

    def move_in(self, pid):
        """Move a running process in (no fork or exec there: no event)."""
        for d in (self.path, self.v1):
            if d:
                self._write(os.path.join(d, "cgroup.procs"), pid)

    def remove(self):
        for d in (self.path, self.v1):
            if not d:
                continue
            for _ in range(50):
                try:
                    os.rmdir(d)
                    break
                except OSError:
                    time.sleep(0.1)


def wait_ready(proc, timeout=10):
    line = proc.out.get(timeout, "%s READY" % proc.name)
    check(line and line.startswith("READY"), "%s did not start: %s" % (proc.name, line))


def pids_in(rec):
    return {t["pid"] for t in rec["targets"] if t["alive"]}


def test_cgroup_follows_new_processes():
    """Two processes inside before attach, a third started after: all three
    are watched (their sites appear), the third is said on stderr in one
    line, and the cgroup block is reported. A fourth, running, is moved in
    (no fork or exec inside, so no event): found and said all the same."""
    cg = Cgroup("memtop-follow")
    try:
        a = cg.spawn(workload_path("cg_leaker"), "0.5")
        b = cg.spawn(workload_path("cg_leaker"), "0.5")
        wait_ready(a)
        wait_ready(b)
        m = Memtop("-b", "--json", "-d", "0.5", "--rate", "16K", "--max-overhead", "none",
                   "--cgroup", cg.name)
        rec = m.first_record()
        check(pids_in(rec) == {a.pid, b.pid},
              "first record watches %s, expected %s" % (pids_in(rec), {a.pid, b.pid}))
        check(rec["cgroup"]["path"] == cg.path, "cgroup path %s" % rec["cgroup"])
        c = cg.spawn(workload_path("cg_leaker"), "0.5")
        wait_ready(c)
        t0 = time.monotonic()
        while c.pid not in pids_in(rec):
            check(time.monotonic() - t0 < 3, "process %d started in the cgroup was not "
                  "attached within 3 s: %s" % (c.pid, pids_in(rec)))
            rec = m.record(5)
        # and its allocations arrive: the leak site keeps growing
        for _ in range(4):
            rec = m.record(5)
        check("cg_leak_site" in sites_by_function(rec),
              "cg_leak_site missing: %s" % list(sites_by_function(rec)))
        check(rec["cgroup"]["processes"] == 3, "processes %s" % rec["cgroup"])
        # the newcomer is said once on stderr, those there at the start never
        joined = [l for l in m.err.lines if " joined " in l]
        # (an exec'd program, held at its start: docs/cgroup.md)
        check(len(joined) == 1 and joined[0].startswith(
            "memtop: PID %d (cg_leaker) joined %s: watched; held " % (c.pid, cg.path)) and
              joined[0].endswith(" ms at its start: counted from its first allocation"),
              "one line for the process that joined: %r" % joined)
        # a running process moved in makes no fork or exec there (no event):
        # memtop's look at cgroup.procs finds it
        d = Proc([workload_path("cg_leaker"), "0.5"], name="cg_leaker")
        wait_ready(d)
        cg.move_in(d.pid)
        t0 = time.monotonic()
        while d.pid not in pids_in(rec):
            check(time.monotonic() - t0 < 3, "process %d moved into the cgroup was not "
                  "attached within 3 s: %s" % (d.pid, pids_in(rec)))
            rec = m.record(5)
        joined = [l for l in m.err.lines if " joined " in l]
        check(joined[1:] == ["memtop: PID %d (cg_leaker) joined %s: watched" % (d.pid, cg.path)],
              "one line for the process moved in: %r" % joined)
    finally:
        for p in list(locals().values()):
            if isinstance(p, Proc):
                p.kill()
        cg.remove()


def start_with_pid(argv, pid, name):
    """argv started as the process with PID pid (free now) by
    tests/workloads/with_pid, which asks clone3() for that very number, so
    no fork elsewhere on the host can take it first. The Proc is
    with_pid's (argv's output is its output, killing it kills argv), its
    pid argv's; None when the number is taken."""
    q = Proc([workload_path("with_pid"), pid] + list(argv), name=name)
    q.pid = pid
    line = q.out.get(10, "%s READY" % name)
    if line is None or not line.startswith("READY"):
        q.kill()
        return None
    return q


def test_cgroup_pid_reused_is_watched():
    """A process of the cgroup ends and a new one takes its PID into the
    cgroup: the newcomer is watched and said as joined, not taken for the
    process that ended (which memtop keeps, refusing it nothing twice)."""
    cg = Cgroup("memtop-reuse")
    try:
        a = cg.spawn(workload_path("cg_leaker"), "0.5")
        wait_ready(a)
        m = Memtop("-b", "--json", "-d", "0.5", "--rate", "16K", "--max-overhead", "none",
                   "--cgroup", cg.name)
        rec = m.first_record()
        check(pids_in(rec) == {a.pid}, "first record watches %s" % pids_in(rec))
        a.kill()
        t0 = time.monotonic()
        while a.pid in pids_in(rec):
            check(time.monotonic() - t0 < 5, "the killed process is still alive in the JSON")
            rec = m.record(5)
        q = start_with_pid([workload_path("cg_leaker"), "0.5"], a.pid, "cg_leaker")
        check(q is not None, "could not start a process with the ended one's PID %d" % a.pid)
        cg.move_in(q.pid)
        t0 = time.monotonic()
        while q.pid not in pids_in(rec):
            check(time.monotonic() - t0 < 3, "process %d, new in the cgroup with a reused PID, "
                  "was not attached within 3 s" % q.pid)
            rec = m.record(5)
        joined = [l for l in m.err.lines if " joined " in l]
        check(joined == ["memtop: PID %d (cg_leaker) joined %s: watched" % (q.pid, cg.path)],
              "one line for the process with the reused PID: %r" % joined)
        calls = []
        while len(calls) < 3:
            rec = m.record(5)
            check(rec is not None, "memtop exited: %s" % m.err.text()[-500:])
            t = [x for x in rec["targets"] if x["pid"] == q.pid]
            check(t and t[0]["alive"], "the newcomer is not alive in the JSON: %s" % t)
            calls.append(t[0]["alloc_calls"] or 0)
        check(calls[-1] > calls[0], "the newcomer's malloc calls are not counted: %s" % calls)
    finally:
        for p in list(locals().values()):
            if isinstance(p, Proc):
                p.kill()
        cg.remove()


def test_cgroup_oom_kill_is_seen_and_projected():
    """A leak under a 48 MiB limit: before the kill memtop projects the time
    to the limit; the OOM kill shows in oom_kill and memtop keeps going."""
    limit = 48 * MIB
    cg = Cgroup("memtop-oom", limit=limit)
    try:
        victim = cg.spawn(workload_path("cg_leaker"), "6")
        wait_ready(victim)
        m = Memtop("-b", "--json", "-d", "0.5", "--max-overhead", "none", "--cgroup", cg.name)
        rec = m.first_record()
        mem = rec["cgroup"]
        check(mem.get("memory_max") == limit, "memory_max %s, expected %d" % (mem, limit))
        projections = []
        while victim.poll() is None:
            rec = m.record(10)
            check(rec is not None, "memtop exited while the cgroup was alive")
            eta = rec["cgroup"].get("time_to_max_s")
            if eta is not None:
                projections.append((time.monotonic(), eta, rec["cgroup"].get("memory_current")))
            check(len(m.records) < 60, "the leaker was not OOM-killed within 30 s")
        killed_at = time.monotonic()
        check(projections, "no projection to the limit before the kill")
        # the last projections pointed at the kill: within 3 s or 50%
        # the last projection before the kill freed the memory: the one
        # made at the highest usage
        when, eta, _ = max(projections, key=lambda p: p[2])
        predicted = when + eta
        check(abs(predicted - killed_at) < max(3.0, 0.5 * (killed_at - when)),
              "projected the limit at +%.1fs, the kill came at +%.1fs (projections: %s)" %
              (eta, killed_at - when, projections[-6:]))
        deadline = time.monotonic() + 5
        while True:
            rec = m.record(5)
            check(rec is not None, "memtop stopped after the OOM kill: %s" % m.err.text()[-500:])
            if (rec["cgroup"].get("oom_kill") or 0) >= 1:
                break
            check(time.monotonic() < deadline, "oom_kill never reported: %s" % rec["cgroup"])
        check(m.poll() is None, "memtop exited after the OOM kill")
    finally:
        for p in list(locals().values()):
            if isinstance(p, Proc):
                p.kill()
        cg.remove()


def _state(pid):
    """/proc/PID/stat's state letter, or None once it is gone."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return None


def _guard_of(memtop_pid):
    """The hold guard memtop forked: (PID, start time)."""
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % name) as f:
                stat = f.read()
        except OSError:
            continue
        comm = stat[stat.index("(") + 1:stat.rindex(")")]
        fields = stat.rsplit(")", 1)[1].split()
        if comm == "memtop-guard" and int(fields[1]) == memtop_pid:
            return int(name), fields[19]
    return None


def _wait_state(pid, states, timeout):
    t0 = time.monotonic()
    while _state(pid) not in states:
        check(time.monotonic() - t0 < timeout, "PID %d: state %s, not %s after %.0f s" %
              (pid, _state(pid), states, timeout))
        time.sleep(0.01)


def _joined_worker(m, p, what):
    """The PID of the prefork worker p's output names, once memtop has said
    it joined."""
    line = p.out.get(20, "born %s" % what)
    check(line and " born " in line, "no worker %s: %r" % (what, line))
    pid = int(line.split()[1])
    said = "memtop: PID %d (" % pid
    t0 = time.monotonic()
    while not any(l.startswith(said) and " joined " in l for l in m.err.lines):
        check(time.monotonic() - t0 < 10, "PID %d (%s) not joined: %s" %
              (pid, what, m.err.text()[-400:]))
        m.record(5)
    return pid


def test_held_newcomer_never_stays_stopped():
    """A program exec'd in the watched cgroup is held at its loader's end
    only until memtop has attached to it, and never longer than a second
    whatever becomes of memtop (docs/cgroup.md, "Held at its start"). With
    memtop stopped (SIGSTOP), the guard lets the newcomer go at its
    deadline, and memtop then says it was not held through its attach;
    with memtop stopped and then SIGKILLed, the guard lets a held one go at
    once and exits. A program exec'd with a terminal is never held. A
    parent that stops itself when its child stops (runuser, script) is
    continued with its child, never left stopped."""
    cg = Cgroup("memtop-hold-guard")
    first = a = b = c = None
    wrappers = []
    prefork = workload_path("prefork")
    try:
        first, m = cg.watched()
        guard = _guard_of(m.popen.pid)
        check(guard is not None, "no memtop-guard process under memtop %d" % m.popen.pid)
        # memtop stopped: nothing lets the newcomer go but the guard's deadline
        m.send(signal.SIGSTOP)
        t0 = time.monotonic()
        a = cg.spawn(workload_path("prefork"), "born")
        line = a.out.get(20, "born")
        waited = time.monotonic() - t0
        check(line and " born " in line, "the newcomer did not run on: %r" % line)
        check(0.9 <= waited <= 5, "born %.2f s after its spawn: not held to the guard's "
              "deadline (1 s)" % waited)
        m.send(signal.SIGCONT)
        said = "memtop: PID %d (prefork) joined " % a.pid
        t0 = time.monotonic()
        while not any(l.startswith(said) for l in m.err.lines):
            check(time.monotonic() - t0 < 10, "not joined: %s" % m.err.text()[-400:])
            m.record(5)
        line = [l for l in m.err.lines if l.startswith(said)][0]
        check("not held through its attach (its guard let it go" in line, "said: %s" % line)
        # with a terminal: never held at its exec. script(1), outside the
        # cgroup, gives its child a terminal; the child joins the cgroup
        # and execs the program there
        joins = "; ".join("echo $$ > %s/cgroup.procs" % d for d in (cg.path, cg.v1) if d)
        c = Proc(["script", "-qfec", "sh -c '%s; exec %s born'" % (joins, prefork), "/dev/null"],
                 name="script")
        pid_c = _joined_worker(m, c, "under a terminal")
        said = [l for l in m.err.lines if l.startswith("memtop: PID %d (" % pid_c)
                and " joined " in l]
        check(said and "held" not in said[0], "a program with a terminal was held: %s" % said)
        # parents that pass their child's stop on to themselves (su,
        # runuser, sudo, script): continued with it, never left stopped.
        # script's child has its terminal by its exec, so it is held at its
        # fork: "exec" keeps the program in that process whichever shell
        # script runs (bash execs a lone command, dash forks it)
        for argv in (["runuser", "-u", "nobody", "--", prefork, "born"],
                     ["script", "-qfec", "exec %s born" % prefork, "/dev/null"]):
            w = cg.spawn(*argv)
            wrappers.append(w)
            pid_w = _joined_worker(m, w, argv[0])
            said = [l for l in m.err.lines if l.startswith("memtop: PID %d (" % pid_w)
                    and " joined " in l][0]
            check("; held " in said, "%s's program was not held: %s" % (argv[0], said))
            m.record(5)  # the refresh that looks at its parent again
            check(_state(w.pid) != "T", "%s (PID %d) left stopped after its child's hold: %s" %
                  (argv[0], w.pid, said))
        # memtop stopped, a newcomer held, then memtop killed: let go at once
        m.send(signal.SIGSTOP)
        b = cg.spawn(workload_path("prefork"), "born")
        _wait_state(b.pid, ("T",), 5)
        m.send(signal.SIGKILL)
        t0 = time.monotonic()
        line = b.out.get(20, "born after the kill")
        after_kill = time.monotonic() - t0
        check(line and " born " in line, "the held newcomer did not run on: %r" % line)
        check(after_kill < 0.3, "let go %.2f s after memtop's SIGKILL: not at once" % after_kill)
        m.wait(10)
        t0 = time.monotonic()
        while _state(guard[0]) not in (None, "Z"):
            check(time.monotonic() - t0 < 5, "the guard (PID %d) outlived memtop" % guard[0])
            time.sleep(0.01)
        print("held newcomer: let go after %.2f s with memtop stopped (its guard's deadline); "
              "%.3f s after memtop's SIGKILL" % (waited, after_kill))
    finally:
        for q in [a, b, c, first] + wrappers:
            if q:
                q.kill()
        subprocess.run(["pkill", "-KILL", "-f", "%s born" % prefork])
        cg.remove()


def test_holds_budget():
    """A shell in the watched cgroup starts 40 programs back to back: at
    most MT_HOLDS_PER_S (10) a second are held, the others counted from
    when memtop finds them, and memtop says so once (docs/cgroup.md, "Held
    at its start")."""
    cg = Cgroup("memtop-hold-budget")
    first = sh = None
    try:
        first, m = cg.watched()
        t0 = time.monotonic()
        sh = cg.spawn("sh", "-c", "i=0; while [ $i -lt 40 ]; do /bin/true; i=$((i+1)); done; "
                      "echo done")
        check(sh.out.get(60, "the loop's end") == "done", "the loop did not end")
        took = time.monotonic() - t0
        over = "memtop: more than 10 new processes a second: those over it are not held"
        while not any(l.startswith(over) for l in m.err.lines):
            check(time.monotonic() - t0 < 10, "the budget was not said: %s" %
                  m.err.text()[-400:])
            m.record(5)
        held = [l for l in m.err.lines if " joined " in l and "; held " in l]
        # one more per window edge at most (two CPUs at once), and one
        # window more if the loop crossed a second
        check(len(held) <= 10 * (int(took) + 2),
              "%d programs held in %.2f s: %s" % (len(held), took, held[-3:]))
        check(len(held) >= 5, "only %d held: %s" % (len(held), m.err.text()[-400:]))
        print("holds budget: 41 programs in %.2f s, %d held" % (took, len(held)))
        m.send(signal.SIGINT)
        check(m.drain(30) == 0, "memtop: %s" % m.err.text()[-400:])
    finally:
        for q in (sh, first):
            if q:
                q.kill()
        cg.remove()


def test_cgroup_errors():
    """Unknown, v1 and empty cgroups: one clear line, non-zero exit, nothing
    left attached."""
    before = bpf_snapshot()
    m = Memtop("-b", "--cgroup", "no-such-cgroup-%d" % os.getpid())
    assert_one_error_line(m, m.wait(20), r"no cgroup matches|no such cgroup")
    if os.path.isdir(V1_MEMORY):
        m = Memtop("-b", "--cgroup", V1_MEMORY)
        assert_one_error_line(m, m.wait(20), r"v1")
    cg = Cgroup("memtop-empty")
    try:
        m = Memtop("-b", "--cgroup", cg.name)
        assert_one_error_line(m, m.wait(20), r"empty")
    finally:
        cg.remove()
    assert_nothing_left(before)

"""Bad input and faults: each must end memtop with a non-zero status and
exactly one stderr line starting with "memtop: ", print nothing on stdout,
and leave no BPF program, link or uprobe behind (compared with bpftool
before and after). A workload watched through a failed attach must keep
running undisturbed."""

import os
import shutil
import signal
import subprocess
import tempfile
import time

from memtop_test import (Memtop, Workload, assert_nothing_left, assert_one_error_line,
                         bpf_snapshot, check, fail, workload_path)

QUICK = ("-b", "--json", "-n", "2", "-d", "0.2")
PRIV_RE = r"root|CAP_BPF|CAP_PERFMON"


def expect_error(args, pattern=None, prefix=(), timeout=20):
    """Run memtop with args; it must fail cleanly. Returns the error line."""
    before = bpf_snapshot()
    m = Memtop(*args, prefix=prefix)
    rc = m.wait(timeout)
    line = assert_one_error_line(m, rc, pattern)
    check(not m.out.lines, "stdout must stay empty on error, got: %s" % m.out.lines[:3])
    assert_nothing_left(before)
    return line


def check_undisturbed(w):
    """The workload survived the failed attach and still runs its phase."""
    check(w.poll() is None, "the workload died while memtop failed to attach")
    w.trigger()
    check(w.read_truth(timeout=30)["alloc_calls"] > 0, "workload phase did not run")


def free_pid():
    """A pid no process has: one that just exited (pids are not reused until
    the counter wraps)."""
    p = subprocess.Popen(["true"])
    p.wait()
    check(not os.path.exists("/proc/%d" % p.pid), "pid %d still exists" % p.pid)
    return p.pid


def test_nonexistent_pid():
    """Said as such with -b, and without it where there is no terminal: what
    to watch is the first question, before what to show it on."""
    pid = free_pid()
    expect_error(QUICK + ("-p", pid), r"no process with PID %d$" % pid)
    expect_error(("-p", pid), r"no process with PID %d$" % pid)


def test_kernel_thread():
    with open("/proc/2/comm") as f:
        check(f.read().strip() == "kthreadd", "pid 2 is not kthreadd here")
    expect_error(QUICK + ("-p", "2"), r"kernel")


def bpf_fds(pid):
    """The kinds of BPF objects pid holds open: 'bpf-prog', 'bpf_link', ..."""
    kinds = set()
    try:
        for fd in os.listdir("/proc/%d/fd" % pid):
            try:
                link = os.readlink("/proc/%d/fd/%s" % (pid, fd))
            except OSError:
                continue
            if link.startswith("anon_inode:bpf"):
                kinds.add(link.split(":", 1)[1].strip("[]"))
    except OSError:
        pass
    return kinds


def stopped(pid, deadline):
    """Wait (polling, with a deadline) until pid is in the stopped state."""
    while True:
        with open("/proc/%d/stat" % pid) as f:
            if f.read().rsplit(")", 1)[1].split()[0] == "T":
                return
        check(time.monotonic() < deadline, "memtop %d did not stop" % pid)
        time.sleep(0.001)


def test_pid_exits_during_attach():
    """The target dies, and is reaped, after memtop found and prepared it and
    before memtop attached: memtop is stopped (SIGSTOP) once it holds its
    BPF programs but no link (prepared, not attached: the target's links
    are its first ones after the calibration's), the target is killed and
    reaped, memtop goes on. One line says that the target exited while
    memtop was attaching (was: `cannot read /proc/N/map_files/...: No such
    file or directory`), status 1, nothing on stdout, nothing left. A stop
    that lands on the calibration's link is let go and the moment waited
    for again; a round that missed it (memtop attached) starts afresh.
    The uprobe path (--no-inject), whose attach has that window; an exit
    during an injection is test_inject_hostile's."""
    before = bpf_snapshot()
    for attempt in range(5):
        w = Workload("mt_sites").wait_ready()
        m = Memtop(*QUICK, "--no-inject", "-p", w.pid)
        deadline = time.monotonic() + 30
        caught = False
        while m.poll() is None and time.monotonic() < deadline:
            kinds = bpf_fds(m.pid)
            if "bpf-prog" not in kinds or "bpf_link" in kinds:
                time.sleep(0.001)  # polling memtop's descriptors, not synchronising
                continue
            m.send(signal.SIGSTOP)
            stopped(m.pid, deadline)
            kinds = bpf_fds(m.pid)
            if "bpf-prog" in kinds and "bpf_link" not in kinds and not m.err.lines:
                caught = True
                break
            m.send(signal.SIGCONT)
        if not caught:
            m.kill()
            w.kill()
            continue
        pid = w.pid
        w.popen.kill()
        w.popen.wait(10)  # reaped: no zombie either
        m.send(signal.SIGCONT)
        rc = m.wait(30)
        assert_one_error_line(m, rc, r"^memtop: PID %d \(mt_sites\) exited while memtop was "
                              r"attaching$" % pid)
        check(not m.out.lines, "stdout must stay empty on error, got: %s" % m.out.lines[:3])
        assert_nothing_left(before)
        return
    fail("memtop was never caught between loading its programs and attaching (5 rounds)")


def test_thread_id_given_to_p():
    """-p with the ID of a thread that is not its process's leader: one line
    naming the process it belongs to and the -p to give (was: `process N
    exited while attaching`), the process undisturbed."""
    w = Workload("mt_threads").wait_ready()
    tids = sorted(int(t) for t in os.listdir("/proc/%d/task" % w.pid) if int(t) != w.pid)
    check(tids, "mt_threads has no thread besides its leader")
    expect_error(QUICK + ("-p", tids[0]),
                 r"^memtop: %d is a thread of PID %d \(mt_threads\), not a process: use -p %d$"
                 % (tids[0], w.pid, w.pid))
    check(w.poll() is None, "the process died while memtop refused its thread")
    check(os.path.exists("/proc/%d/task/%d" % (w.pid, tids[0])), "the thread is gone")


def test_static_binary():
    w = Workload("mt_static").wait_ready()
    line = expect_error(QUICK + ("-p", w.pid), r"static|glibc|allocator")
    check("mt_static" in line or str(w.pid) in line,
          "the message should name the target: %r" % line)
    check_undisturbed(w)


def test_static_command():
    before = bpf_snapshot()
    m = Memtop(*QUICK, "--", workload_path("mt_static"), "--start=0", "--hold=0",
               "--iterations=77")
    rc = m.wait(20)
    assert_one_error_line(m, rc, r"static|glibc|allocator")
    assert_nothing_left(before)
    time.sleep(0.2)
    left = subprocess.run(["pgrep", "-f", "mt_static --start=0 --hold=0 --iterations=77"],
                          capture_output=True, text=True).stdout.split()
    check(not left, "the refused command is still running: pids %s" % left)


def test_unexecutable_command():
    expect_error(QUICK + ("--", "/nonexistent/program", "arg"), r"/nonexistent/program")
    # exists but is not executable
    expect_error(QUICK + ("--", os.path.abspath(__file__)), r"test_errors\.py")


def test_failed_command_leaves_no_log():
    """A command that never ran leaves no memtop-cmd-PID.log behind: neither
    one refused before the fork (no such file) nor one whose exec fails in
    the child (its interpreter does not exist), where the log was already
    made and named after the child's pid. A --cmd-log file the user gave
    is kept."""
    cwd = tempfile.mkdtemp(prefix="memtop-cwd-")
    state = os.path.join(cwd, "state")
    env = dict(os.environ, XDG_STATE_HOME=state)
    try:
        script = os.path.join(cwd, "bad-interpreter")
        with open(script, "w") as f:
            f.write("#!/nonexistent/interpreter\n")
        os.chmod(script, 0o755)
        for cmd, pattern in (("/nonexistent/cmd", r"/nonexistent/cmd"),
                             (script, r"cannot execute")):
            before = bpf_snapshot()
            m = Memtop(*QUICK, "--", cmd, cwd=cwd, env=env)
            assert_one_error_line(m, m.wait(20), pattern)
            assert_nothing_left(before)
            left = sorted(n for n in os.listdir(cwd) if n.endswith(".log"))
            if os.path.isdir(os.path.join(state, "memtop")):
                left += os.listdir(os.path.join(state, "memtop"))
            check(not left, "%s: left %s behind" % (cmd, left))
        given = os.path.join(cwd, "mine.log")
        with open(given, "w") as f:
            f.write("kept\n")
        m = Memtop(*QUICK, "--cmd-log", given, "--", script, cwd=cwd, env=env)
        assert_one_error_line(m, m.wait(20), r"cannot execute")
        check(os.path.exists(given), "the user's --cmd-log file was removed")
    finally:
        shutil.rmtree(cwd, ignore_errors=True)


def test_bad_flags():
    w = Workload("mt_sites").wait_ready()
    pid = str(w.pid)
    cases = [
        ("no target", ("-b", "--json")),
        ("unknown option", ("-b", "--bogus", "-p", pid)),
        ("pid not a number", ("-b", "-p", "abc")),
        ("negative pid", ("-b", "-p", "-5")),
        ("empty pid in list", ("-b", "-p", pid + ",,")),
        ("zero interval", ("-b", "-d", "0", "-p", pid)),
        ("negative interval", ("-b", "-d", "-1", "-p", pid)),
        ("interval not a number", ("-b", "-d", "soon", "-p", pid)),
        ("zero rate", ("-b", "--rate", "0", "-p", pid)),
        ("bad rate suffix", ("-b", "--rate", "12Q", "-p", pid)),
        ("count not a number", ("-b", "-n", "many", "-p", pid)),
        ("empty command", ("-b", "--")),
    ]
    failures = []
    for what, args in cases:
        try:
            expect_error(args)
        except AssertionError as e:
            failures.append("%s %s: %s" % (what, " ".join(args), e))
    if failures:
        fail("%d of %d bad command lines not rejected cleanly:\n    %s" %
             (len(failures), len(cases), "\n    ".join(failures)))
    check_undisturbed(w)


def test_no_preload_without_command():
    """--no-preload only means something for a command memtop starts: with
    -p it is refused on one line, status 2 as for every bad command line,
    and the process is not touched."""
    w = Workload("mt_sites").wait_ready()
    m = Memtop(*QUICK, "--no-preload", "-p", w.pid)
    rc = m.wait(20)
    assert_one_error_line(m, rc, r"--no-preload is for -- CMD.*\(-p\)")
    check(rc == 2, "exit status %s, not 2 (a bad command line)" % rc)
    check_undisturbed(w)


def test_not_root():
    w = Workload("mt_sites").wait_ready()
    expect_error(QUICK + ("-p", w.pid), PRIV_RE,
                 prefix=("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"))
    check_undisturbed(w)


def test_missing_capabilities():
    """Root without CAP_BPF, CAP_PERFMON and CAP_SYS_ADMIN (dropped from the
    bounding set, so the exec'd memtop never gets them)."""
    drop = "-bpf,-perfmon,-sys_admin"
    w = Workload("mt_sites").wait_ready()
    expect_error(QUICK + ("-p", w.pid), PRIV_RE,
                 prefix=("setpriv", "--inh-caps=" + drop, "--bounding-set=" + drop))
    check_undisturbed(w)

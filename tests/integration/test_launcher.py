"""memtop -- CMD as a launcher: the command's stdout and stderr go to a
file (never into memtop's -b/--json stdout or onto its stderr), named in
every record; the command's children and what they exec are followed, so
a leak in a child started by a shell is found; in the TUI, q asks whether
the command keeps running (detached, probes removed) or is stopped."""

import os
import re
import shutil
import signal
import tempfile
import time

from memtop_test import (MEMTOP, RATE_ARGS, TEST_RATE, Memtop, assert_estimate, assert_nothing_left,
                         bpf_snapshot, check, fail, read_truth_file, site_value, target, truth_site,
                         workload_path)
from test_tui import Pane

INTERVAL = "0.5"


def sh_quote(s):
    return "'" + s.replace("'", "'\\''") + "'"


def test_cmd_output_goes_to_a_file():
    """A command that prints JSON-looking and plain lines on stdout and a
    line on stderr: memtop's stdout holds only its own records, each
    naming memtop-cmd-PID.log (the command's pid) in $XDG_STATE_HOME/memtop,
    which holds what the command printed; with --output the file does not
    go beside it, nor in the current directory; -b text names it too."""
    with tempfile.TemporaryDirectory() as tmp:
        truth = os.path.join(tmp, "truth")
        script = ('echo \'{"time": 1, "targets": [], "sites": []}\'; echo plain-stdout; '
                  'echo to-stderr >&2; exec %s --start=0.5 --hold=0.3 --out=%s '
                  '--iterations=200 --duration=0.5' % (sh_quote(workload_path("mt_sites")),
                                                       sh_quote(truth)))
        m = Memtop("-b", "--json", "-d", INTERVAL, *RATE_ARGS, "--", "sh", "-c", script)
        rc = m.drain(timeout=60)
        check(rc == 0, "memtop exited %s: %s" % (rc, m.err.text()[-500:]))
        check(len(m.records) >= 2, "only %d records" % len(m.records))
        pid = read_truth_file(truth)["pid"]
        name = os.path.join(m.log_dir, "memtop-cmd-%d.log" % pid)
        for r in m.records:
            check(r.get("cmd_log") == name, "record names cmd_log %r, expected %r" %
                  (r.get("cmd_log"), name))
            check(r["rate"] == TEST_RATE, "a line of the command's passed for a record: %s" % r)
        check(all("to-stderr" not in l for l in m.err.lines),
              "the command's stderr reached memtop's: %s" % m.err.lines)
        check(any(name in l for l in m.err.lines), "stderr does not name %s: %s" %
              (name, m.err.lines))
        with open(name) as f:
            log = f.read()
        for line in ('"targets": []', "plain-stdout", "to-stderr"):
            check(line in log, "%r is not in %s: %r" % (line, name, log[:300]))

        out = os.path.join(tmp, "prof", "heap.pb.gz")
        os.mkdir(os.path.dirname(out))
        m = Memtop("-b", "-d", "0.3", "-n", "2", "--output", out, "--", "sh", "-c",
                   "echo text-mode; sleep 2")
        rc = m.wait(30)
        check(rc == 0, "memtop -b exited %s: %s" % (rc, m.err.text()[-500:]))
        check(os.listdir(os.path.dirname(out)) == ["heap.pb.gz"],
              "beside --output: %s" % os.listdir(os.path.dirname(out)))
        check(os.listdir(m.cwd) == ["state"], "in the current directory: %s" % os.listdir(m.cwd))
        logs = [f for f in os.listdir(m.log_dir) if re.match(r"memtop-cmd-\d+\.log$", f)]
        check(len(logs) == 1, "no single memtop-cmd-PID.log in %s: %s" %
              (m.log_dir, os.listdir(m.log_dir)))
        shown = [l for l in m.out.lines if l.startswith("command output: ")]
        check(shown and shown[0].endswith(os.path.join(m.log_dir, logs[0])),
              "-b does not name the log: %s" % m.out.lines[:5])
        check(all("text-mode" not in l for l in m.out.lines), "the command's output is in -b's")
        with open(os.path.join(m.log_dir, logs[0])) as f:
            check("text-mode" in f.read(), "the command's line is not in its log")


def test_cmd_log_default_leaves_cwd_empty():
    """memtop -b -n 1 -- true from an empty directory leaves it empty: the
    command's log goes to ~/.local/state/memtop (or $XDG_STATE_HOME/memtop),
    which memtop names on stderr at the start and in -b; that directory
    keeps the 20 newest memtop-cmd-PID.log files and nothing else of it is
    touched."""
    cwd = tempfile.mkdtemp(prefix="memtop-cwd-")
    home = tempfile.mkdtemp(prefix="memtop-home-")
    try:
        state = os.path.join(home, ".local", "state", "memtop")
        os.makedirs(state)
        for i in range(1, 26):  # 25 old logs, memtop-cmd-1.log the oldest
            path = os.path.join(state, "memtop-cmd-%d.log" % i)
            with open(path, "w") as f:
                f.write("old %d\n" % i)
            os.utime(path, (1000000 + i, 1000000 + i))
        for other in ("notes.txt", "memtop-cmd-x.log"):
            with open(os.path.join(state, other), "w") as f:
                f.write("mine\n")
            os.utime(os.path.join(state, other), (1, 1))
        env = {k: v for k, v in os.environ.items() if k != "XDG_STATE_HOME"}
        env["HOME"] = home
        m = Memtop("-b", "-n", "1", "-d", "0.2", "--", "true", cwd=cwd, env=env)
        check(m.wait(30) == 0, "memtop -b -n 1 -- true: %s" % m.err.text()[-500:])
        check(os.listdir(cwd) == [], "left in the current directory: %s" % os.listdir(cwd))
        said = [re.match(r"^memtop: the output of true goes to (/\S+)$", l) for l in m.err.lines]
        said = [g.group(1) for g in said if g]
        check(len(said) == 1, "stderr does not say where the output goes: %s" % m.err.lines)
        log = said[0]
        check(os.path.dirname(log) == state and re.match(r"memtop-cmd-\d+\.log$",
                                                          os.path.basename(log)),
              "the log %s is not in %s" % (log, state))
        check(os.path.isfile(log), "%s, named on stderr, does not exist" % log)
        check(any(l == "command output: " + log for l in m.out.lines),
              "-b does not name %s: %s" % (log, m.out.lines[:5]))
        left = sorted(os.listdir(state))
        logs = [n for n in left if re.match(r"memtop-cmd-\d+\.log$", n)]
        check(len(logs) == 20, "%d logs kept, expected 20: %s" % (len(logs), left))
        gone = ["memtop-cmd-%d.log" % i for i in range(1, 7)]
        check(not set(gone) & set(left) and "notes.txt" in left and "memtop-cmd-x.log" in left,
              "not the 6 oldest logs removed, or other files touched: %s" % left)
        # $XDG_STATE_HOME wins over HOME
        env["XDG_STATE_HOME"] = os.path.join(home, "xdg")
        m = Memtop("-b", "-n", "1", "-d", "0.2", "--", "true", cwd=cwd, env=env)
        check(m.wait(30) == 0, "memtop with XDG_STATE_HOME: %s" % m.err.text()[-500:])
        check(os.listdir(cwd) == [], "left in the current directory: %s" % os.listdir(cwd))
        made = os.listdir(os.path.join(home, "xdg", "memtop"))
        check(len(made) == 1 and any(l.endswith(os.path.join(home, "xdg", "memtop", made[0]))
                                     for l in m.err.lines),
              "XDG_STATE_HOME/memtop holds %s; stderr: %s" % (made, m.err.lines))
    finally:
        shutil.rmtree(cwd, ignore_errors=True)
        shutil.rmtree(home, ignore_errors=True)


def test_cmd_children_are_followed():
    """-- sh -c 'mt_sites ... & wait': the shell's child (forked, then
    exec'd) is watched too, and its leak is found with the size the
    child's truth says; --cmd-log puts the output where asked."""
    with tempfile.TemporaryDirectory() as tmp:
        truth, log = os.path.join(tmp, "truth"), os.path.join(tmp, "cmd.log")
        script = "%s --start=1 --hold=0.5 --out=%s --iterations=2000 --duration=2 & wait" % (
            sh_quote(workload_path("mt_sites")), sh_quote(truth))
        m = Memtop("-b", "--json", "-d", INTERVAL, *RATE_ARGS, "--cmd-log", log, "--",
                   "sh", "-c", script)
        rc = m.drain(timeout=60)
        check(rc == 0, "memtop exited %s: %s" % (rc, m.err.text()[-500:]))
        t = read_truth_file(truth)
        last = m.records[-1]
        check(last.get("cmd_log") == log, "cmd_log %r, expected %r" % (last.get("cmd_log"), log))
        child = target(last, t["pid"])
        check(child["comm"] == "mt_sites", "the child is shown as %r" % child["comm"])
        leak = truth_site(t, "leak_site")
        est = max(site_value(r, "leak_site", "inuse_bytes") for r in m.records)
        assert_estimate("leak_site in use in the shell's child", est, leak["inuse_bytes"],
                        leak["live_sizes"], TEST_RATE)
        check(os.path.exists(log), "--cmd-log %s was not created" % log)


def family_in(cwd, but=()):
    """Live processes (zombies aside: this machine's PID 1 reaps none) whose
    working directory is cwd, Memtop's own temporary one: the command and
    whatever it started, wherever they moved in the process tree."""
    pids = set()
    for d in os.listdir("/proc"):
        if not d.isdigit() or int(d) in but:
            continue
        try:
            if os.readlink("/proc/%s/cwd" % d) != cwd:
                continue
            with open("/proc/%s/stat" % d) as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if state not in ("Z", "X"):
            pids.add(int(d))
    return pids


def wait_family(cwd, but, done, timeout, what):
    """Poll family_in(cwd) until done(pids) holds; fails after timeout."""
    deadline = time.monotonic() + timeout
    while True:
        pids = family_in(cwd, but)
        if done(pids):
            return pids
        if time.monotonic() > deadline:
            fail("%s within %.0f s: processes %s" % (what, timeout, describe(pids)))
        time.sleep(0.05)


def describe(pids):
    out = []
    for pid in sorted(pids):
        try:
            with open("/proc/%d/cmdline" % pid, "rb") as f:
                out.append("%d %s" % (pid, f.read().replace(b"\0", b" ").decode().strip()))
        except OSError:
            out.append(str(pid))
    return out


def end_family_run(args, command, size, end):
    """memtop ARGS -- COMMAND; once SIZE processes of it run,
    end(m) makes memtop end: returns memtop's status and the command's log,
    failing if any process of the family outlives memtop by 3 s."""
    before = bpf_snapshot()
    m = Memtop(*args, "--", *command)
    try:
        wait_family(m.cwd, {m.pid}, lambda p: len(p) >= size, 15,
                    "the command and its children did not start")
        end(m)
        rc = m.wait(20)
        wait_family(m.cwd, {m.pid}, lambda p: not p, 3,
                    "the command's family outlived memtop")
        assert_nothing_left(before)
        logs = [n for n in os.listdir(m.log_dir) if n.startswith("memtop-cmd-")]
        check(len(logs) == 1, "the command's log: %s" % logs)
        with open(os.path.join(m.log_dir, logs[0])) as f:
            return rc, f.read()
    finally:
        for pid in family_in(m.cwd, {m.pid}):
            os.kill(pid, 9)
        m.kill()


def test_cmd_family_ends_with_memtop():
    """The evaluation's command: when -n ends memtop, the shell and the
    sleep it started get SIGTERM (its trap runs: "got TERM", then "end"),
    and nothing of them is left; on SIGINT the same goes for a child that
    left the command's session (setsid), which memtop followed."""
    command = ["sh", "-c", 'trap "echo got TERM" TERM; sleep 30 & wait; echo end']
    # -n 2 intervals of 1 s: the shell and its sleep are seen running first
    rc, log = end_family_run(("-b", "-n", "2"), command, 2, lambda m: None)
    check(rc == 0, "memtop -n 2 exited %s" % rc)
    check("got TERM" in log and "end" in log,
          "the shell did not get SIGTERM (its trap did not run): log %r" % log)

    escapee = ["sh", "-c", "setsid sleep 31 & sleep 32 & wait"]

    def interrupt(m):
        # memtop follows the setsid'd sleep: three targets in a record
        while True:
            rec = m.record(15)
            check(rec is not None, "memtop exited early: %s" % m.err.text()[-500:])
            if sum(1 for t in rec["targets"] if t["alive"]) >= 3:
                break
        m.send(signal.SIGINT)

    rc, _ = end_family_run(("-b", "--json", "-d", "0.3"), escapee, 3, interrupt)
    check(rc is not None, "memtop did not exit on SIGINT")


def tui_quit(keys):
    """memtop -- sh -c 'sleep 301 & exec sleep 300' in the TUI (a tmux
    pane; memtop in a directory of its own, which the command inherits),
    then keys: returns (the command's pid, whether it still runs once
    memtop exited, memtop's stderr, the family left running), with BPF
    objects checked gone."""
    d = tempfile.mkdtemp(prefix="memtop-tui-cmd-")
    cwd = os.path.join(d, "cmd")
    os.mkdir(cwd)
    p = Pane(120, 30, {"TERM": "screen-256color", "LANG": "C.UTF-8"}, d)
    pid = None
    try:
        before = bpf_snapshot()
        p.run("(cd cmd && exec %s --rate 4K -d 0.5 -- sh -c 'sleep 301 & exec sleep 300' "
              "2>../memtop.err); echo MEMTOP-RC=$?" % MEMTOP)
        s = p.wait_for(lambda s: re.search(r"^memtop +\d+ +sleep +alive", s, re.M), 20,
                       "the header naming sleep")
        pid = int(re.search(r"^memtop +(\d+) +sleep", s, re.M).group(1))
        wait_family(cwd, (), lambda f: len(f) >= 3, 10, "memtop, the command and its child")
        p.keys("q")
        s = p.wait_for(lambda s: "d leaves it running" in s, 10, "the quit question")
        check("(default)" in s, "the question does not show the default:\n%s" % s)
        p.keys(*keys)
        s = p.wait_for(lambda s: re.search(r"MEMTOP-RC=\d", s), 15, "memtop to exit")
        check("MEMTOP-RC=0" in s, "memtop exit status: %s" % s)
        assert_nothing_left(before)
        if keys == ("d",):
            family = family_in(cwd)
        else:
            family = wait_family(cwd, (), lambda f: not f, 5, "the command's family outlived memtop")
        running = os.path.exists("/proc/%d" % pid)
        with open(os.path.join(d, "memtop.err")) as f:
            err = f.read()
        return pid, running, err, family
    finally:
        p.kill()
        for left in family_in(cwd):
            os.kill(left, 9)
        shutil.rmtree(d, ignore_errors=True)


def test_cmd_tui_quit_asks_what_becomes_of_it():
    """q with -- CMD running asks, showing the default: d leaves the
    command and its child running with no probe left (memtop names its
    pid), q again stops both (the command's process group, its own
    session: the TUI's terminal does not stop it) and names the command's
    log again once the live view is gone."""
    pid, running, err, family = tui_quit(("d",))
    check(running, "d: the command (pid %d) did not keep running" % pid)
    check(len(family) == 2, "d: the command and its child do not both run: %s" % describe(family))
    check("PID %d" % pid in err and "keeps running" in err,
          "memtop did not say the command keeps running: %r" % err)
    check("the output of sh is in" not in err, "d: the log named twice: %r" % err)
    pid, running, err, family = tui_quit(("q",))
    check(not running, "q q: the command (pid %d) still runs" % pid)
    # where its output went, said at the start (under the live view) and
    # again once the terminal is memtop's no more
    start = re.findall(r"^memtop: the output of sh goes to (\S+)$", err, re.M)
    end = re.findall(r"^memtop: the output of sh is in (\S+)$", err, re.M)
    check(len(start) == 1 and end == start and
          re.search(r"/\.local/state/memtop/memtop-cmd-%d\.log$" % pid, start[0]),
          "the log is not named at the start and after the TUI: %r" % err)


def test_cmd_counted_from_its_first_allocation():
    """Following the command's descendants does not cost the command its
    start: its own exec (the one memtop releases it into) is not taken for
    a new program, so with uprobes (--no-preload) a phase that starts at
    once is counted whole (the C runtime may add a few calls before
    main)."""
    with tempfile.TemporaryDirectory() as tmp:
        truth = os.path.join(tmp, "truth")
        m = Memtop("-b", "--json", "-d", INTERVAL, *RATE_ARGS, "--no-preload", "--",
                   workload_path("mt_sites"), "--start=0", "--hold=0.5", "--out=" + truth,
                   "--iterations=2000", "--duration=1")
        rc = m.drain(timeout=60)
        check(rc == 0, "memtop exited %s: %s" % (rc, m.err.text()[-500:]))
        t = read_truth_file(truth)
        got = target(m.records[-1], t["pid"])
        for k, slack in (("alloc_calls", 100), ("free_calls", 100), ("alloc_bytes", 1 << 20)):
            check(t[k] <= got[k] <= t[k] + slack, "%s: memtop %s, truth %d (+%d allowed)" %
                  (k, got[k], t[k], slack))

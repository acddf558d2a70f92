"""memtop -- CMD as a launcher: the command's stdout and stderr go to a
file (never into memtop's -b/--json stdout or onto its stderr), named in
every record; the command's children and what they exec are followed, so
a leak in a child started by a shell is found."""

import os
import re
import tempfile

from memtop_test import (TEST_RATE, Memtop, assert_estimate, check, read_truth_file,
                         site_value, target, truth_site, workload_path)

INTERVAL = "0.5"
RATE_ARGS = ("--rate", "4K", "--max-overhead", "none")


def sh_quote(s):
    return "'" + s.replace("'", "'\\''") + "'"


def test_cmd_output_goes_to_a_file():
    """A command that prints JSON-looking and plain lines on stdout and a
    line on stderr: memtop's stdout holds only its own records, each
    naming memtop-cmd-PID.log (the command's pid) in memtop's directory,
    which holds what the command printed; with --output the file goes
    beside it; -b text names it too."""
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
        name = "memtop-cmd-%d.log" % pid
        for r in m.records:
            check(r.get("cmd_log") == name, "record names cmd_log %r, expected %r" %
                  (r.get("cmd_log"), name))
            check(r["rate"] == TEST_RATE, "a line of the command's passed for a record: %s" % r)
        check(all("to-stderr" not in l for l in m.err.lines),
              "the command's stderr reached memtop's: %s" % m.err.lines)
        check(any(name in l for l in m.err.lines), "stderr does not name %s: %s" %
              (name, m.err.lines))
        with open(os.path.join(m.cwd, name)) as f:
            log = f.read()
        for line in ('"targets": []', "plain-stdout", "to-stderr"):
            check(line in log, "%r is not in %s: %r" % (line, name, log[:300]))

        out = os.path.join(tmp, "prof", "heap.pb.gz")
        os.mkdir(os.path.dirname(out))
        m = Memtop("-b", "-d", "0.3", "-n", "2", "--output", out, "--", "sh", "-c",
                   "echo text-mode; sleep 2")
        rc = m.wait(30)
        check(rc == 0, "memtop -b exited %s: %s" % (rc, m.err.text()[-500:]))
        logs = [f for f in os.listdir(os.path.dirname(out)) if re.match(r"memtop-cmd-\d+\.log$", f)]
        check(len(logs) == 1, "no single memtop-cmd-PID.log beside --output: %s" %
              os.listdir(os.path.dirname(out)))
        shown = [l for l in m.out.lines if l.startswith("command output: ")]
        check(shown and shown[0].endswith(logs[0]), "-b does not name the log: %s" % m.out.lines[:5])
        check(all("text-mode" not in l for l in m.out.lines), "the command's output is in -b's")
        with open(os.path.join(os.path.dirname(out), logs[0])) as f:
            check("text-mode" in f.read(), "the command's line is not in its log")


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

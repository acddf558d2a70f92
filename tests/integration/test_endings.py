"""How a target ends, and what memtop keeps of it (issue 16 item 1, the
reporting half of issue 14 item 2).

  - a leaking target killed mid-run: its sites freeze at the moment of
    death; 20 s later every figure of its sites (score, slope, age,
    history, rates) and its end are exactly what they were at death;
  - `-- CMD` that dies of SIGSEGV, of abort(), or exits 3: the JSON says
    how, memtop says so in one line and exits as a shell would (139, 134,
    3), never as a clean exit;
  - -p of a process memtop did not start that aborts: the signal is
    reported (from the kernel's process-events connector);
  - a target OOM-killed under a cgroup limit: reported as an OOM kill with
    the cgroup's limit and its oom_kill count.

The workload is tests/workloads/scenario_dies.c (its truth: the leaking
function and how it will die)."""

import os
import shutil
import signal
import tempfile
import time

from memtop_test import Memtop, Proc, Workload, check, fail, target, workload_path

INTERVAL = "0.5"
LEAK = "leak_until_death"


def site(rec, function):
    for s in rec["sites"]:
        if s["function"] == function:
            return s
    return None


def test_killed_target_freezes_at_death():
    """SIGKILL a leaking target once its leak scores high; the record that
    sees the death and every record of the next 20 s hold the same site
    figures and history, and say how it ended. (A second, idle target
    keeps batch mode running after the death.)"""
    w = Workload("scenario_dies", "--die=never").wait_ready()
    idle = Workload("scenario_dies", "--die=never").wait_ready()
    m = Memtop("-b", "--json", "-d", INTERVAL, "-p", "%d,%d" % (w.pid, idle.pid))
    m.first_record()
    w.trigger()
    w.read_truth()
    deadline = time.monotonic() + 40
    while True:
        rec = m.record(10)
        check(rec is not None, "memtop exited early: %s" % m.err.text()[-500:])
        s = site(rec, LEAK)
        if s and s["leak_score"] >= 90:
            break
        check(time.monotonic() < deadline, "the leak never scored 90: %s" % (s,))
    w.send(signal.SIGKILL)
    # the first record that knows the target is dead
    while target(rec, w.pid)["alive"]:
        rec = m.record(10)
        check(rec is not None, "memtop exited before reporting the death")
    at_death = site(rec, LEAK)
    t0 = target(rec, w.pid)
    check(at_death is not None and at_death["ended"] is True,
          "the leak's site is not marked ended at death: %s" % (at_death,))
    check(at_death["leak_score"] >= 90,
          "the score at death is %.1f: it decayed before the death was seen" %
          at_death["leak_score"])
    check(t0["end"] and t0["end"]["how"] == "signal" and t0["end"]["signal"] == "SIGKILL",
          "the end of a SIGKILLed target: %s" % t0["end"])
    seen_at = time.monotonic()
    later = rec
    while time.monotonic() - seen_at < 20:
        later = m.record(10)
        check(later is not None, "memtop exited after the death: %s" % m.err.text()[-500:])
        s = site(later, LEAK)
        check(s == at_death, "the dead target's site changed %.1fs after its death:\n"
              "at death: %s\nnow:      %s" %
              (time.monotonic() - seen_at,
               {k: v for k, v in at_death.items() if s.get(k) != v},
               {k: v for k, v in s.items() if at_death.get(k) != v}))
        t = target(later, w.pid)
        for k in ("end", "rss_bytes", "inuse_bytes", "alloc_bytes_per_s", "samples",
                  "heap_explains_rss_growth"):
            check(t.get(k) == t0.get(k), "target %s changed after death: %s -> %s" %
                  (k, t0.get(k), t.get(k)))
    check(target(later, idle.pid)["alive"], "the idle target died")
    m.kill()


def run_command(die, export=None):
    """memtop -- scenario_dies --die=DIE (and --output EXPORT): (exit status,
    stderr, last record)."""
    with tempfile.TemporaryDirectory() as tmp:
        extra = ("--output", export) if export else ()
        m = Memtop("-b", "--json", "-d", INTERVAL, *extra, "--",
                   workload_path("scenario_dies"), "--start=0", "--after=2.5", "--die=" + die,
                   "--out=" + os.path.join(tmp, "t"))
        rc = m.drain(timeout=30)
    check(m.records, "memtop printed no record")
    return rc, m.stderr_lines(), m.records[-1]


def export_inuse(path, function):
    """In-use bytes of the samples through function in a pprof export."""
    from test_export import decode_profile  # the profile.proto reader

    with open(path, "rb") as f:
        p = decode_profile(f.read())
    idx = [t for t, _ in p["sample_types"]].index("inuse_space")
    return sum(s["values"][idx] for s in p["samples"] if function in s["stack"])


def test_command_killed_by_signal_is_reported():
    """-- CMD dies of SIGSEGV, then of abort(): named in the JSON and on
    stderr, and memtop exits 128 + the signal."""
    tmp = tempfile.mkdtemp(prefix="memtop-endings-")
    for die, sig, rc_want in (("segv", "SIGSEGV", 128 + signal.SIGSEGV),
                              ("abort", "SIGABRT", 128 + signal.SIGABRT)):
        export = os.path.join(tmp, die + ".pb.gz")
        rc, err, last = run_command(die, export)
        t = last["targets"][0]
        check(t["alive"] is False, "%s: target still alive in the last record" % die)
        end = t["end"]
        check(end["how"] == "signal" and end["signal"] == sig and
              end["signal_number"] == getattr(signal, sig),
              "%s: end %s, expected the signal %s" % (die, end, sig))
        check(rc == rc_want, "%s: memtop exit status %s, expected %d" % (die, rc, rc_want))
        lines = [l for l in err if sig in l and "killed by" in l]
        check(len(lines) == 1, "%s: no single stderr line naming %s: %s" % (die, sig, err))
        s = site(last, LEAK)
        check(s is not None and s["ended"], "%s: the leak's site is not ended: %s" % (die, s))
        # the export written at exit still holds what the dead process held
        held = export_inuse(export, LEAK)
        check(s["inuse_bytes"] > 0 and abs(held - s["inuse_bytes"]) <= 0.01 * s["inuse_bytes"],
              "%s: the export holds %d bytes in use at %s, the JSON %d" %
              (die, held, LEAK, s["inuse_bytes"]))
    shutil.rmtree(tmp, ignore_errors=True)


def test_command_exit_code_is_reported():
    """-- CMD exits 3: "exited with code 3", and memtop exits 3."""
    rc, err, last = run_command("exit3")
    end = last["targets"][0]["end"]
    check(end["how"] == "exit" and end["exit_code"] == 3, "end of an _exit(3): %s" % end)
    check(rc == 3, "memtop exit status %s, expected the command's 3" % rc)
    check(any("exited with code 3" in l for l in err), "no stderr line: %s" % err)


def test_pid_target_signal_is_reported():
    """-p of a process memtop did not start, which aborts: the signal comes
    from the kernel's exit events; memtop itself ends cleanly."""
    w = Workload("scenario_dies", "--die=abort", "--after=1.5").wait_ready()
    m = Memtop("-b", "--json", "-d", INTERVAL, "-p", w.pid)
    m.first_record()
    w.trigger()
    rc = m.drain(timeout=30)
    end = target(m.records[-1], w.pid)["end"]
    check(end and end["how"] == "signal" and end["signal"] == "SIGABRT",
          "end of a -p target that aborted: %s" % end)
    check(rc == 0, "memtop exit status %s with -p" % rc)


def test_oom_kill_is_reported_with_cgroup_figures():
    """A leaker under a 48 MiB limit, watched with -p: its end is an OOM
    kill, with the limit and the cgroup's oom_kill count."""
    from test_cgroup import MIB, Cgroup, wait_ready  # the cgroup helpers

    limit = 48 * MIB
    cg = Cgroup("memtop-oomend", limit=limit)
    try:
        victim = cg.spawn(workload_path("cg_leaker"), "8")
        wait_ready(victim)
        m = Memtop("-b", "--json", "-d", INTERVAL, "--max-overhead", "none", "-p", victim.pid)
        rc = m.drain(timeout=40)
        check(victim.poll() is not None, "the leaker was not killed")
        end = target(m.records[-1], victim.pid)["end"]
        check(end and end["how"] == "oom", "end of an OOM-killed target: %s" % end)
        check(end["signal"] == "SIGKILL" and end["cgroup"] is not None,
              "OOM end without signal or cgroup figures: %s" % end)
        check(end["cgroup"]["memory_max"] == limit and end["cgroup"]["oom_kill"] >= 1,
              "cgroup figures at the OOM kill: %s (limit %d)" % (end["cgroup"], limit))
        check(end["cgroup"]["memory_current"] > limit // 2,
              "memory.current before the kill %s: not near the limit" % end["cgroup"])
        check("OOM-killed" in end["description"], "description %r" % end["description"])
        check(rc == 0, "memtop exit status %s" % rc)
    finally:
        for p in list(locals().values()):
            if isinstance(p, Proc):
                p.kill()
        cg.remove()


def test_tui_site_view_freezes_with_a_marker():
    """In the TUI, the site view of a target killed by SIGSEGV says how and
    when it ended, its in-use graph ends in a marker column, and the page
    stays exactly as it was at the death while memtop keeps running."""
    import re

    from test_tui import Pane  # the tmux helpers
    from memtop_test import MEMTOP

    w = Workload("scenario_dies", "--die=never").wait_ready()
    tmp = tempfile.mkdtemp(prefix="memtop-endings-")
    pane = Pane(120, 45, {"TERM": "xterm-256color", "LANG": "C.UTF-8"}, tmp)
    try:
        pane.run("%s -d 0.5 -p %d 2>memtop.err; echo MEMTOP-RC=$?" % (MEMTOP, w.pid))
        pane.wait_for(lambda s: re.search(r"^memtop +%d +scenario_dies" % w.pid, s, re.M),
                      20, "the header")
        w.trigger()
        pane.wait_for(lambda s: LEAK in s, 20, "the leaking site in the table")
        pane.keys("Enter")

        def score(s):
            m = re.search(r"leak score (\d+)", s)
            return int(m.group(1)) if m else -1

        pane.wait_for(lambda s: LEAK in s and score(s) >= 90, 40, "the leak scoring 90")
        os.kill(w.pid, signal.SIGSEGV)
        marker = re.compile(r"\u2502 ended \d\d:\d\d:\d\d: PID %d killed by SIGSEGV" % w.pid)
        at_death = pane.wait_for(lambda s: marker.search(s), 10, "the end marker")
        check(re.search(r"ended \d\d:\d\d:\d\d: PID %d killed by SIGSEGV; every figure" % w.pid,
                        at_death), "no end line in the site view:\n%s" % at_death)
        check(score(at_death) >= 90, "score %d at death" % score(at_death))
        graph = [l for l in at_death.splitlines() if l.rstrip().endswith("\u2502")]
        check(len(graph) >= 4, "no marker column at the graph's end:\n%s" % at_death)
        body = at_death.splitlines()[3:-2]  # header and status/key lines move
        t0 = time.monotonic()
        while time.monotonic() - t0 < 6:
            now = pane.screen()
            check(now.splitlines()[3:-2] == body,
                  "the dead target's site view changed after %.1fs:\n%s" %
                  (time.monotonic() - t0, now))
            time.sleep(0.5)  # sampling the screen, not synchronising
        pane.keys("q", "q")  # q in the site view goes back; in the table it quits
        pane.wait_for(lambda s: "MEMTOP-RC=0" in s, 10, "memtop to quit")
    finally:
        pane.kill()
        w.kill()
        shutil.rmtree(tmp, ignore_errors=True)

"""End-to-end tests of recordings and sessions (docs/recording.md):
--record under a live -b --json run killed with SIGKILL, replayed with
--json and compared interval by interval with what the live run printed;
--record-max's bound; cut and corrupt files; a --daemon session watched
from the TUI in tmux, detached, reattached, hung up, watched by two
viewers at once, while it keeps counting; and the session socket against
an unprivileged user.

The workload is scenario_steady_leak (a leak under churn), attached with
-p. Sessions use a run directory of their own (MEMTOP_RUN_DIR), so the
tests never meet another session."""

import json
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import tempfile
import time

from memtop_test import (MEMTOP, ROOT, Memtop, Workload, assert_replay_equals_live, check,
                         fail, scratch_dir)
from test_tui import Pane

NOBODY = ("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups")
SESSION = re.compile(r"^memtop: session (\d+) runs in the background", re.M)
HEADER_POS = re.compile(r"(?:SESSION|ENDED) (\d+)/(\d+)")
LIVE = ("-d", "0.3", "--rate", "64K", "--max-overhead", "none")
WL = ("--start=0", "--duration=60", "--hold=60")


def wait(pred, timeout, what):
    deadline = time.monotonic() + timeout
    while True:
        v = pred()
        if v:
            return v
        if time.monotonic() > deadline:
            fail("waited %.0fs for %s" % (timeout, what))
        time.sleep(0.05)


def lines_of(path):
    with open(path) as f:
        return [json.loads(l) for l in f if l.strip()]


def replay(*args, timeout=30):
    return subprocess.run([MEMTOP, "--replay"] + [str(a) for a in args], capture_output=True,
                          text=True, timeout=timeout)


def leak_in_use(line):
    return any(s["function"] == "leak_steady" and s["inuse_bytes"] > 0 for s in line["sites"])


def record_and_kill(d, n_lines, extra=()):
    """A live -b --json --record run SIGKILLed after n_lines intervals, and
    once its last interval shows the leak in use (on a loaded machine the
    first samples come later): (the live JSON lines, the recording's
    path)."""
    wl = Workload("scenario_steady_leak", *WL).wait_ready()
    rec = os.path.join(d, "run.mtr")
    m = Memtop("-b", "--json", *LIVE, "-p", wl.pid, "--record", rec, *extra)
    live = []
    while len(live) < n_lines or not leak_in_use(live[-1]):
        check(len(live) < n_lines + 60, "no leak_steady in use after %d intervals" % len(live))
        line = m.out.get(20, "a JSON line")
        check(line is not None, "memtop exited early: %s" % m.err.text()[-500:])
        live.append(json.loads(line))
    m.send(signal.SIGKILL)
    check(m.wait(10) == -signal.SIGKILL, "memtop was not killed by SIGKILL")
    for line in iter(lambda: m.out.get(2, "the rest"), None):
        live.append(json.loads(line))  # what its writer thread had queued
    wl.release()
    return live, rec


def test_record_sigkill_replay_json_equal():
    d = tempfile.mkdtemp(prefix="memtop-rec-")
    try:
        live, rec = record_and_kill(d, 8)
        check(os.stat(rec).st_mode & 0o777 == 0o600, "the recording is not mode 0600")
        assert_replay_equals_live(live, rec, "--output", os.path.join(d, "end.pb.gz"),
                                  "--folded", os.path.join(d, "end.folded"))
        # the exports are those of the last interval
        check(os.path.getsize(os.path.join(d, "end.pb.gz")) > 100, "no pprof written")
        check("leak_steady" in open(os.path.join(d, "end.folded")).read(),
              "the folded stacks lack the leak")
        # -b shows the same intervals, -n stops early
        r = replay(rec, "-b", "-n", "2", "--top", "3")
        check(r.returncode == 0 and r.stdout.count("FUNCTION (MODULE") == 2,
              "replay -b -n 2: rc %d, %d tables" % (r.returncode,
                                                  r.stdout.count("FUNCTION (MODULE")))
    finally:
        shutil.rmtree(d, ignore_errors=True)


GOLDEN = os.path.join(ROOT, "tests", "golden")


def test_golden_replays():
    """Each recording under tests/golden/ (a -- CMD run of
    scenario_steady_leak, written by an earlier memtop) replays to exactly
    the JSON and -b text kept beside it: a change that was not meant to
    change what memtop prints does not, and older recordings still read
    the same. A change that means to: tests/golden/update, and commit
    its differences with it."""
    recs = sorted(f for f in os.listdir(GOLDEN) if f.endswith(".mtr"))
    check(recs, "no golden recording in %s" % GOLDEN)
    env = dict(os.environ, TZ="UTC", COLUMNS="120")
    for rec in recs:
        name = rec[:-len(".mtr")]
        for args, ext in ((["--json"], ".jsonl"), (["-b", "--top", "5"], ".txt")):
            r = subprocess.run([MEMTOP, "--replay", os.path.join(GOLDEN, rec)] + args,
                               capture_output=True, text=True, timeout=60, env=env)
            check(r.returncode == 0, "replay of %s failed: %s" % (rec, r.stderr))
            with open(os.path.join(GOLDEN, name + ext)) as f:
                want = f.read().splitlines()
            got = r.stdout.splitlines()
            for i, (a, b) in enumerate(zip(want, got)):
                if a != b:
                    at = next(k for k in range(min(len(a), len(b)) + 1)
                              if k == min(len(a), len(b)) or a[k] != b[k])
                    fail("%s%s line %d differs at column %d:\nwant ...%s\ngot  ...%s\n"
                         "(a change meant to: tests/golden/update)" %
                         (name, ext, i + 1, at, a[max(0, at - 80):at + 120],
                          b[max(0, at - 80):at + 120]))
            check(len(want) == len(got), "%s%s: %d lines kept, the replay printed %d" %
                  (name, ext, len(want), len(got)))


def inside_a_frame(data, near):
    """An offset at or after `near` that is strictly inside a frame (docs/
    recording.md: an 8-byte magic, then frames of u32 length, u16 type, u16
    flags, payload[length], u32 CRC), so a file cut there has a cut tail:
    cutting at a frame's boundary would leave a whole file, rightly shown
    without a note."""
    at = 8
    while at + 8 <= len(data):
        end = at + 8 + struct.unpack_from("<I", data, at)[0] + 4
        if end > near:
            return max(near, at + 1) if max(near, at + 1) < end else at + 1
        at = end
    fail("no frame ends after byte %d of a %d-byte recording" % (near, len(data)))


def inside_a_payload(data, near):
    """An offset at or after `near` inside a frame's payload: a byte flipped
    there is caught by the frame's CRC. (One flipped in a length field
    makes the frame run past the end of the file instead: a cut tail, shown
    with a note and rc 0.)"""
    at = 8
    while at + 8 <= len(data):
        length = struct.unpack_from("<I", data, at)[0]
        end = at + 8 + length + 4
        if end > near and length:
            return min(max(near, at + 8), at + 8 + length - 1)
        at = end
    fail("no payload ends after byte %d of a %d-byte recording" % (near, len(data)))


def test_replay_cut_and_corrupt_files():
    d = tempfile.mkdtemp(prefix="memtop-rec-")
    try:
        live, rec = record_and_kill(d, 4)
        data = open(rec, "rb").read()
        full = [json.loads(l) for l in replay(rec, "--json").stdout.splitlines()]
        # the first interval shown holds the stacks' and names' definitions,
        # the bulk of a short recording (more of it on a loaded machine,
        # where fewer samples come later): the cuts and the flipped byte
        # below are past its end, so something comes back before them
        shown = [end for end, ftype, flags in frame_ends(data) if ftype == 10 and not flags & 2]
        check(len(shown) >= 2 and shown[0] < len(data) - 16,
              "a recording of %d bytes with %d shown intervals" % (len(data), len(shown)))
        past_first = (shown[0] + len(data)) // 2
        # cut inside the last frames: the intervals before the cut, a note, rc 0
        cut = os.path.join(d, "cut.mtr")
        for keep in (len(data) - 5, inside_a_frame(data, past_first)):
            open(cut, "wb").write(data[:keep])
            r = replay(cut, "--json")
            got = [json.loads(l) for l in r.stdout.splitlines()]
            check(r.returncode == 0, "a cut file: rc %d: %s" % (r.returncode, r.stderr))
            check(got == full[:len(got)] and len(got) < len(full),
                  "a file cut at %d: %d intervals, not a prefix of the %d" %
                  (keep, len(got), len(full)))
            check(re.search(r"ends inside a frame .* last complete interval", r.stderr),
                  "no note on the cut tail: %r" % r.stderr)
        # cut before the first interval: nothing to show is an error
        open(cut, "wb").write(data[:200])
        r = replay(cut, "--json")
        check(r.returncode == 1 and r.stdout == "" and "no complete interval" in r.stderr,
              "a file cut before its first interval: rc %d %r" % (r.returncode, r.stderr))
        # a flipped byte in the middle: what came before, one error line, rc 1
        bad = bytearray(data)
        bad[inside_a_payload(data, past_first)] ^= 0xff
        open(cut, "wb").write(bytes(bad))
        r = replay(cut, "--json")
        check(r.returncode == 1, "a corrupt file: rc %d" % r.returncode)
        errs = [l for l in r.stderr.splitlines() if l.strip()]
        check(len(errs) == 1 and re.match(r"memtop: .*cut\.mtr: at byte \d+: ", errs[0]),
              "not one error line at a byte offset: %r" % r.stderr)
        got = [json.loads(l) for l in r.stdout.splitlines()]
        check(got == full[:len(got)], "the intervals before the bad frame differ")
        # not a recording at all; nothing; a directory
        for name, content in (("junk", os.urandom(4096)), ("empty", b"")):
            p = os.path.join(d, name)
            open(p, "wb").write(content)
            r = replay(p, "-b")
            check(r.returncode == 1 and r.stdout == "" and
                  len(r.stderr.splitlines()) == 1 and "not a memtop recording" in r.stderr,
                  "%s: rc %d, %r" % (name, r.returncode, r.stderr))
        r = replay(d, "-b")
        check(r.returncode == 1 and len(r.stderr.splitlines()) == 1, "a directory: %r" % r.stderr)
    finally:
        shutil.rmtree(d, ignore_errors=True)


def frame_ends(data):
    """(end offset, type, flags) of every frame of a one-segment recording
    (docs/recording.md: an 8-byte magic, then u32 length, u16 type, u16
    flags, the payload, u32 CRC)."""
    out, at = [], 8
    while at + 8 <= len(data):
        length, ftype, flags = struct.unpack_from("<IHH", data, at)
        at += 8 + length + 4
        if at > len(data):
            break
        out.append((at, ftype, flags))
    return out


def test_replay_cut_before_a_shown_interval():
    """A recording cut (by a full disk, or memtop stopped while attaching)
    before the first interval its live run showed holds nothing to replay:
    at frame boundaries up to that interval's end (each interval's among
    them), and inside frames, --replay (-b and --json) says so in one line and exits 1, with
    nothing on stdout (was: the intervals recorded before the display
    started, none of them shown, status 0 and not a word). With that
    interval complete, the live run's first line comes back, status 0."""
    d = tempfile.mkdtemp(prefix="memtop-rec-")
    try:
        live, rec = record_and_kill(d, 2)
        data = open(rec, "rb").read()
        frames = frame_ends(data)
        intervals = [(end, flags) for end, ftype, flags in frames if ftype == 10]
        shown = [end for end, flags in intervals if not flags & 2]
        check(shown, "no interval the live run showed in %d frames" % len(frames))
        check(any(end < shown[0] for end, _ in intervals),
              "no interval recorded before the display started: nothing to cut before")
        cut = os.path.join(d, "cut.mtr")
        # every interval's end before it, the first frames' ends, twenty
        # frame ends spread over the rest, and a few bytes into each
        ends = [end for end, _, _ in frames if end < shown[0]]
        picked = set(ends[:8]) | set(ends[::max(1, len(ends) // 20)]) | {
            end for end, _ in intervals if end < shown[0]}
        cuts = sorted(picked | {e + 3 for e in picked if e + 3 < shown[0]} | {shown[0] - 1})
        for keep in cuts:
            open(cut, "wb").write(data[:keep])
            for mode in ("-b", "--json"):
                r = replay(cut, mode)
                errs = [l for l in r.stderr.splitlines() if l.strip()]
                check(r.returncode == 1 and r.stdout == "" and len(errs) == 1 and
                      re.match(r"^memtop: .*cut\.mtr: no complete interval in it", errs[0]),
                      "cut at %d of %d (first shown interval ends at %d), %s: rc %d, "
                      "stdout %r, stderr %r" % (keep, len(data), shown[0], mode, r.returncode,
                                                r.stdout[:200], r.stderr))
        open(cut, "wb").write(data[:shown[0]])
        r = replay(cut, "--json")
        got = [json.loads(l) for l in r.stdout.splitlines()]
        check(r.returncode == 0 and got == live[:1],
              "cut after the first shown interval: rc %d, %d lines: %r" %
              (r.returncode, len(got), r.stderr))
    finally:
        shutil.rmtree(d, ignore_errors=True)


def test_record_max_bound():
    d = tempfile.mkdtemp(prefix="memtop-rec-")
    try:
        # 256K: two segments of 128K; the workload fills one in about a second
        bound = 256 << 10
        live, rec = record_and_kill(d, 16, ("--record-max", "256K", "--rate", "16K"))
        older = rec + ".1"
        check(os.path.exists(older), "no rotation into %s" % older)
        total = os.path.getsize(rec) + os.path.getsize(older)
        last = max(len(json.dumps(x)) for x in live)  # an interval's size, roughly
        check(total <= bound + 4 * last, "the two segments hold %d bytes, bound %d" %
              (total, bound))
        r = replay(rec, "--json")
        check(r.returncode == 0, "replay of a rotated recording: %s" % r.stderr)
        got = [json.loads(l) for l in r.stdout.splitlines()]
        check(got and got[-1]["targets"][0]["pid"] == live[-1]["targets"][0]["pid"],
              "the replay does not end with the run's target")
        # the data path's own figures are the live run's, interval for interval
        tail = {round(x["time"], 3): x for x in live}
        same = [x for x in got if round(x["time"], 3) in tail]
        check(len(same) >= 3, "the replay shares only %d intervals with the live run" % len(same))
        for x in same:
            y = tail[round(x["time"], 3)]
            check(x["targets"][0]["rss_bytes"] == y["targets"][0]["rss_bytes"] and
                  x["overhead"] == y["overhead"],
                  "interval at %s differs from the live run" % x["time"])
    finally:
        shutil.rmtree(d, ignore_errors=True)


class Daemon:
    """A --daemon session in a run directory of its own."""

    def __init__(self, run_dir, pid, extra=()):
        self.run_dir = run_dir
        env = dict(os.environ, MEMTOP_RUN_DIR=run_dir)
        r = subprocess.run([MEMTOP, "--daemon", *LIVE, "-p", str(pid), *extra],
                           capture_output=True, text=True, timeout=30, env=env)
        self.rc, self.err = r.returncode, r.stderr
        g = SESSION.search(r.stderr)
        self.id = int(g.group(1)) if r.returncode == 0 and g else None
        self.sock = os.path.join(run_dir, "%s.sock" % self.id)

    def alive(self):
        try:
            os.kill(self.id, 0)
            return True
        except OSError:
            return False

    def rec_size(self):
        return os.path.getsize(os.path.join(self.run_dir, "%d.rec" % self.id))

    def stop(self):
        if self.id and self.alive():
            os.kill(self.id, signal.SIGTERM)
            wait(lambda: not self.alive(), 10, "the session to end")


def session_pos(pane):
    g = HEADER_POS.search(pane.screen())
    return (int(g.group(1)), int(g.group(2))) if g else None


def attach(pane, sid):
    pane.run("%s attach %d 2>attach.err; echo ATTACH-RC=$?" % (MEMTOP, sid))
    return pane.wait_for(lambda s: HEADER_POS.search(s), 15, "the session's header")


def test_daemon_attach_detach_reattach_two_viewers():
    run_dir = tempfile.mkdtemp(prefix="memtop-run-")
    os.chmod(run_dir, 0o700)
    wl = Workload("scenario_steady_leak", *WL).wait_ready()
    env = {"TERM": "screen-256color", "LANG": "C.UTF-8", "MEMTOP_RUN_DIR": run_dir}
    p1 = p2 = None
    dm = Daemon(run_dir, wl.pid)
    try:
        check(dm.id, "--daemon failed (%d): %s" % (dm.rc, dm.err))
        st = os.lstat(dm.sock)
        check(st.st_mode & 0o777 == 0o600 and st.st_uid == 0, "socket mode %o uid %d" %
              (st.st_mode & 0o777, st.st_uid))
        # listed
        r = subprocess.run([MEMTOP, "attach"], capture_output=True, text=True, timeout=10,
                           env=dict(os.environ, MEMTOP_RUN_DIR=run_dir))
        check(r.returncode == 0 and re.search(r"^ +%d +\S+ \S+ +-p %d$" % (dm.id, wl.pid),
                                              r.stdout, re.M),
              "memtop attach does not list the session: %r %r" % (r.stdout, r.stderr))
        # under ASan, LeakSanitizer's exit check (it stops every thread
        # through /proc/self/task) spun for hours at 100% of a core in a
        # viewer whose terminal was hung up and whose parent had gone, and
        # slowed every later test: not for the viewer whose terminal this
        # test takes away
        p1_env = dict(env, ASAN_OPTIONS="detect_leaks=0") if "ASAN_OPTIONS" in os.environ \
            else env
        p1 = Pane(120, 30, p1_env, run_dir)
        attach(p1, dm.id)
        p1.wait_for(lambda s: "leak_steady" in s, 15, "the leak in the viewer")
        # it follows the session live
        at, _ = session_pos(p1)
        p1.wait_for(lambda s: session_pos(p1) and session_pos(p1)[0] > at + 3, 10,
                    "the viewer to follow new intervals")
        # a second viewer at the same time
        p2 = Pane(100, 30, env, run_dir)
        attach(p2, dm.id)
        a2 = session_pos(p2)[0]
        p2.wait_for(lambda s: session_pos(p2) and session_pos(p2)[0] > a2 + 2, 10,
                    "the second viewer to follow")
        check(session_pos(p1)[0] > at + 3, "the first viewer stopped")
        # back in time in one viewer: the other goes on
        p1.keys("{")
        p1.wait_for(lambda s: session_pos(p1) and session_pos(p1)[0] < session_pos(p1)[1] - 5,
                    5, "the viewer to go back 10 intervals")
        # detach with d: the viewer ends, the session counts on
        p1.keys("d")
        p1.wait_for(lambda s: "ATTACH-RC=0" in s, 10, "the viewer to detach")
        size = dm.rec_size()
        wait(lambda: dm.rec_size() > size, 5, "the session to keep recording after a detach")
        check(dm.alive(), "the session ended with its viewer")
        # reattach: later intervals than before
        before = session_pos(p2)[1]
        attach(p1, dm.id)
        check(session_pos(p1)[1] >= before, "the reattached viewer starts in the past")
        # SIGHUP of a viewer (its terminal goes away): it ends, and the
        # session runs on
        viewer = p1.child_pid("memtop")
        p1.kill()
        p1 = None
        wait(lambda: process_gone(viewer), 10, "the viewer to end once its terminal went away")
        os.kill(dm.id, signal.SIGHUP)  # and of the session itself
        size = dm.rec_size()
        wait(lambda: dm.rec_size() > size, 5, "the session to keep recording after SIGHUPs")
        check(dm.alive(), "the session did not survive SIGHUP")
        a2 = session_pos(p2)[0]
        p2.wait_for(lambda s: session_pos(p2) and session_pos(p2)[0] > a2 + 2, 10,
                    "the other viewer to go on after the first one hung up")
        # the session ends: its socket goes, the viewer says so and stays
        dm.stop()
        check(not os.path.exists(dm.sock), "the socket outlived the session")
        p2.wait_for(lambda s: "session closed the connection" in s and "ENDED" in s, 10,
                    "the viewer to say the session ended")
        p2.keys("q")
        p2.wait_for(lambda s: "ATTACH-RC=0" in s, 10, "the viewer to quit")
    finally:
        for p in (p1, p2):
            if p:
                p.kill()
        dm.stop()
        wl.release()
        shutil.rmtree(run_dir, ignore_errors=True)


def as_nobody(*argv, env=None):
    return subprocess.run(list(NOBODY) + list(argv), capture_output=True, text=True, timeout=20,
                          env=env)


def test_session_socket_against_unprivileged_user():
    lab = tempfile.mkdtemp(prefix="memtop-run-")
    os.chmod(lab, 0o755)
    run_dir = os.path.join(lab, "run")
    wl = Workload("scenario_steady_leak", *WL).wait_ready()
    dm = None
    try:
        # a run directory nobody owns, or reached through nobody's symlink: refused
        theirs = os.path.join(lab, "theirs")
        os.mkdir(theirs, 0o700)
        os.chown(theirs, 65534, 65534)
        link = os.path.join(lab, "link")
        os.symlink(theirs, link)
        for d, why in ((theirs, r"owned by uid 65534"), (link, r"symbolic link")):
            bad = Daemon(d, wl.pid)
            errs = [l for l in bad.err.splitlines() if l.strip() and "attached to" not in l]
            check(bad.rc == 1 and bad.id is None and len(errs) == 1 and re.search(why, errs[0]),
                  "--daemon with run dir %s: rc %d, %r" % (d, bad.rc, bad.err))
            check(os.listdir(theirs) == [], "something was created in %s" % theirs)
        # the real session: nobody cannot connect, list or attach
        os.mkdir(run_dir, 0o700)
        dm = Daemon(run_dir, wl.pid)
        check(dm.id, "--daemon failed: %s" % dm.err)
        code = ("import socket,sys\ns=socket.socket(socket.AF_UNIX)\n"
                "try:\n s.connect(sys.argv[1]); print('CONNECTED', s.recv(8))\n"
                "except OSError as e: print('REFUSED', e.errno)\n")
        r = as_nobody("python3", "-c", code, dm.sock)
        check(r.stdout.startswith("REFUSED 13"), "nobody reached the socket: %r %r" %
              (r.stdout, r.stderr))
        r = as_nobody(MEMTOP, "attach", str(dm.id), env=dict(os.environ, MEMTOP_RUN_DIR=run_dir))
        check(r.returncode == 1 and len(r.stderr.splitlines()) == 1 and
              "ermission denied" in r.stderr, "nobody's attach: rc %d %r" % (r.returncode,
                                                                           r.stderr))
        # a planted symlink named like a session is not followed by attach
        fake = os.path.join(lab, "1.sock")
        os.symlink(dm.sock, fake)
        r = subprocess.run([MEMTOP, "attach", fake], capture_output=True, text=True, timeout=10)
        check(r.returncode == 1 and "not a socket" in r.stderr, "attach followed a symlink: %r" %
              r.stderr)
        check(dm.alive(), "the session did not survive the attempts")
    finally:
        if dm:
            dm.stop()
        wl.release()
        shutil.rmtree(lab, ignore_errors=True)


def test_stalled_viewer_never_stalls_the_session():
    run_dir = tempfile.mkdtemp(prefix="memtop-run-")
    os.chmod(run_dir, 0o700)
    wl = Workload("scenario_steady_leak", *WL).wait_ready()
    dm = Daemon(run_dir, wl.pid, ("--record-max", "256K", "--rate", "16K"))
    stalled = None
    try:
        check(dm.id, "--daemon failed: %s" % dm.err)
        stalled = socket.socket(socket.AF_UNIX)
        stalled.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        stalled.connect(dm.sock)
        rec = os.path.join(run_dir, "%d.rec" % dm.id)
        # the session rotates three times while the viewer reads nothing:
        # it holds at most 64K here and 64K (twice that, accounted) in the
        # kernel, less than the two segments of 128K it would need
        rotations, last = 0, 0
        deadline = time.monotonic() + 30
        while rotations < 3:
            check(time.monotonic() < deadline, "only %d rotations in 30 s" % rotations)
            now = os.path.getsize(rec)
            rotations += now < last  # FILE became FILE.1: a new, smaller FILE
            last = now
            time.sleep(0.05)
        check(dm.alive(), "the session died with a stalled viewer")
        # the viewer was dropped: what it is sent ends
        stalled.settimeout(10)
        got = 0
        while True:
            b = stalled.recv(1 << 16)
            if not b:
                break
            got += len(b)
        check(got > 0, "the stalled viewer got nothing at all")
        # the session still serves others
        r = subprocess.run([MEMTOP, "attach"], capture_output=True, text=True, timeout=10,
                           env=dict(os.environ, MEMTOP_RUN_DIR=run_dir))
        check(re.search(r"^ +%d +" % dm.id, r.stdout, re.M), "the session is not listed: %r" %
              r.stdout)
    finally:
        if stalled:
            stalled.close()
        dm.stop()
        wl.release()
        shutil.rmtree(run_dir, ignore_errors=True)


def proc_rss_cpu(pid):
    """(RSS bytes, CPU seconds, open descriptors) of a process."""
    with open("/proc/%d/status" % pid) as f:
        rss = int(re.search(r"^VmRSS:\s+(\d+) kB", f.read(), re.M).group(1)) << 10
    with open("/proc/%d/stat" % pid) as f:
        st = f.read()
    fields = st[st.rindex(")") + 2:].split()
    cpu = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return rss, cpu, len(os.listdir("/proc/%d/fd" % pid))


def lsq_slope(points):
    n = len(points)
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    sxx = sum((x - mx) ** 2 for x, _ in points)
    return sum((x - mx) * (y - my) for x, y in points) / sxx if sxx else 0.0


def test_viewer_memory_flat_and_up_to_date():
    """Issue 28: a viewer kept every byte of the stream (+0.53 MB/s while
    the session's files stayed at 4 MB), and counted each later segment's
    opening interval as one more it had not shown, so it never stood at
    the end: its loop polled with no timeout, a third of a core, and its
    header fell one interval behind per rotation. A session rotating every
    few seconds (--record-max 256K) is followed for 60 s: the viewer's RSS
    is flat once it holds two segments, it uses little CPU, and it shows
    every interval it received, the newest within a few intervals (3 s)
    of the clock. { then goes back no further than the oldest interval kept."""
    run_dir = tempfile.mkdtemp(prefix="memtop-run-")
    os.chmod(run_dir, 0o700)
    wl = Workload("scenario_bursts", "--start=0", "--duration=150",
                  "--hold=150").wait_ready()
    dm = Daemon(run_dir, wl.pid, ("--record-max", "256K"))
    pane = None
    try:
        check(dm.id, "--daemon failed (%d): %s" % (dm.rc, dm.err))
        pane = Pane(120, 30, {"TERM": "screen-256color", "LANG": "C.UTF-8",
                              "MEMTOP_RUN_DIR": run_dir}, run_dir)
        attach(pane, dm.id)
        viewer = pane.child_pid("memtop")
        rec = os.path.join(run_dir, "%d.rec" % dm.id)
        samples, t0 = [], time.monotonic()
        cpu0 = proc_rss_cpu(viewer)[1]
        rotations, last = 0, 0
        while time.monotonic() - t0 < 60:
            time.sleep(2)  # the sampling period, not a wait for an event
            rss, cpu, fds = proc_rss_cpu(viewer)
            screen = pane.screen()
            g = re.search(r"SESSION (\d+)/(\d+) (\d\d):(\d\d):(\d\d)", screen)
            check(g, "no session header on the viewer:\n%s" % screen)
            shown, received = int(g.group(1)), int(g.group(2))
            now = time.localtime()
            lag = (now.tm_hour * 3600 + now.tm_min * 60 + now.tm_sec -
                   (int(g.group(3)) * 3600 + int(g.group(4)) * 60 + int(g.group(5)))) % 86400
            size = os.path.getsize(rec)
            rotations += size < last
            last = size
            samples.append((time.monotonic() - t0, rss, fds, shown, received, lag))
        cpu = proc_rss_cpu(viewer)[1] - cpu0
        table = "\n".join("%5.1fs rss %6d KiB fds %d %d/%d lag %ds" %
                          (t, r >> 10, f, a, b, l) for t, r, f, a, b, l in samples)
        check(rotations >= 4, "the session rotated %d times in 60 s:\n%s" % (rotations, table))
        # it stands at the newest interval it received, within a few
        # intervals of live (the header shows whole seconds; -d 0.3, and a
        # second of slack for a loaded machine)
        for t, _, _, shown, received, lag in samples:
            check(shown == received and lag <= 3,
                  "at %.0fs the viewer shows %d of %d intervals, %d s behind:\n%s" %
                  (t, shown, received, lag, table))
        check(samples[-1][3] > 150, "only %d intervals in 60 s" % samples[-1][3])
        # memory: flat over the last half (the stream came at ~20 KiB/s)
        half = [(t, r) for t, r, *_ in samples if t >= 30]
        slope = lsq_slope(half)
        rise = max(r for _, r in half) - min(r for _, r in half)
        check(slope < 4096 and rise < (1 << 20),
              "the viewer's RSS grows %.1f KiB/s (rose %d KiB) over the last 30 s:\n%s" %
              (slope / 1024, rise >> 10, table))
        check(len({f for _, _, f, *_ in samples}) == 1, "the viewer's descriptors changed:\n%s"
              % table)
        check(cpu / 60 < 0.10, "the viewer used %.0f%% of a core" % (100 * cpu / 60))
        # back in time: no further than the oldest interval kept
        pane.keys(*["{"] * 40)
        pane.wait_for(lambda s: session_pos(pane) and
                      session_pos(pane)[0] < session_pos(pane)[1] - 20, 10,
                      "the viewer to go back")
        at, _ = session_pos(pane)
        check(at > 20, "the viewer went back to interval %d: the oldest segments were kept" %
              at)
        pane.keys("q")
        pane.wait_for(lambda s: "ATTACH-RC=0" in s, 10, "the viewer to quit")
    finally:
        if pane:
            pane.kill()
        dm.stop()
        wl.release()
        shutil.rmtree(run_dir, ignore_errors=True)


def process_gone(pid):
    """No process pid runs: none, or a zombie not reaped yet."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            st = f.read()
    except OSError:
        return True
    return st[st.rindex(")") + 2] in "ZX"


def session_files(run_dir, sid):
    return sorted(f for f in os.listdir(run_dir) if f.split(".")[0] == str(sid))


def rotated_daemon(run_dir, pid):
    """A session at --record-max 64K that has rotated once: ID.rec.1, and
    the new ID.rec."""
    dm = Daemon(run_dir, pid, ("--record-max", "64K"))
    check(dm.id, "--daemon failed (%d): %s" % (dm.rc, dm.err))

    def rotated():
        seg = [os.path.join(run_dir, "%d.%s" % (dm.id, x)) for x in ("rec.1", "rec")]
        try:
            return all(os.path.getsize(f) > 0 for f in seg)
        except FileNotFoundError:
            return False

    wait(rotated, 30, "session %d to rotate its recording" % dm.id)
    return dm


def test_session_files_go_when_it_ends():
    """Issue 28: sessions' .rec files piled up in /run/memtop. A session
    that ends (SIGTERM) removes its socket, its recording (both segments)
    and its ID.pid mark; one whose recording --record named keeps that
    file, which is the user's, and leaves nothing in the run directory."""
    run_dir = tempfile.mkdtemp(prefix="memtop-run-")
    os.chmod(run_dir, 0o700)
    keep = tempfile.mkdtemp(prefix="memtop-rec-")
    wl = Workload("scenario_bursts", "--start=0", "--duration=60", "--hold=60").wait_ready()
    dm = None
    try:
        dm = rotated_daemon(run_dir, wl.pid)
        # (and ID.rec.new for the moment a rotation writes it)
        names = [n for n in session_files(run_dir, dm.id) if not n.endswith(".rec.new")]
        check(names == ["%d.%s" % (dm.id, x) for x in ("pid", "rec", "rec.1", "sock")],
              "the session's files: %s" % names)
        mark = open(os.path.join(run_dir, "%d.pid" % dm.id)).read().split()
        with open("/proc/%d/stat" % dm.id) as f:
            start = f.read().rsplit(")", 1)[1].split()[19]
        check(mark == [str(dm.id), start], "%d.pid holds %r, the process started at %s" %
              (dm.id, mark, start))
        dm.stop()
        check(os.listdir(run_dir) == [], "left behind after the session ended: %s" %
              os.listdir(run_dir))
        # --record FILE: that file stays, the run directory is left empty
        rec = os.path.join(keep, "mine.rec")
        dm = Daemon(run_dir, wl.pid, ("--record", rec))
        check(dm.id, "--daemon --record failed: %s" % dm.err)
        wait(lambda: os.path.exists(os.path.join(run_dir, "%d.sock" % dm.id)), 10,
             "the session's socket")
        # a recording with an interval to show (one cut before it is refused)
        wait(lambda: replay(rec, "-b", "-n", "1").returncode == 0, 20,
             "a shown interval in the session's recording")
        dm.stop()
        check(os.listdir(run_dir) == [], "left behind by a --record session: %s" %
              os.listdir(run_dir))
        r = replay(rec, "-b", "-n", "1")
        check(r.returncode == 0, "the --record FILE of a session did not stay: %s" % r.stderr)
    finally:
        if dm:
            dm.stop()
        wl.release()
        shutil.rmtree(run_dir, ignore_errors=True)
        shutil.rmtree(keep, ignore_errors=True)


def test_killed_session_files_removed_by_next_run():
    """Issue 28: a session killed with SIGKILL cannot clean up. Its files
    (socket, both segments, mark) stay until the next run that looks:
    `memtop attach` listing, or a daemon starting, removes them and says
    so with their size. A process that reused a gone session's PID (its
    start time differs from the mark's) does not keep that session's files;
    a session that runs keeps its own."""
    run_dir = tempfile.mkdtemp(prefix="memtop-run-")
    os.chmod(run_dir, 0o700)
    env = dict(os.environ, MEMTOP_RUN_DIR=run_dir)
    wl = Workload("scenario_bursts", "--start=0", "--duration=90", "--hold=90").wait_ready()
    live = None
    try:
        killed = rotated_daemon(run_dir, wl.pid)
        os.kill(killed.id, signal.SIGKILL)
        wait(lambda: process_gone(killed.id), 30, "the killed session to be gone")
        # (ID.rec.new too when the kill came inside a rotation)
        left = set(session_files(run_dir, killed.id)) - {"%d.rec.new" % killed.id}
        check(left == set("%d.%s" % (killed.id, x) for x in ("pid", "rec", "rec.1", "sock")),
              "a killed session's files: %s" % session_files(run_dir, killed.id))
        # a gone session whose PID another process (the workload) has now:
        # its mark names another start time, nobody listens on its socket
        reused = int(wl.pid)
        with open(os.path.join(run_dir, "%d.pid" % reused), "w") as f:
            f.write("%d 12345\n" % reused)
        with open(os.path.join(run_dir, "%d.rec" % reused), "wb") as f:
            f.write(b"x" * 5000)
        s = socket.socket(socket.AF_UNIX)
        s.bind(os.path.join(run_dir, "%d.sock" % reused))
        s.close()
        live = Daemon(run_dir, wl.pid)
        check(live.id, "--daemon failed: %s" % live.err)
        removed = re.findall(r"^memtop: removed the files of session (\d+) \((\d+) KiB\), "
                             r"whose process is gone", live.err, re.M)
        check(sorted(int(i) for i, _ in removed) == sorted([killed.id, reused]),
              "the next daemon said %r" % live.err)
        check(dict((int(i), int(k)) for i, k in removed)[reused] == 5,
              "the reused PID's files were not counted as 5 KiB: %r" % removed)
        check(session_files(run_dir, killed.id) == [] and session_files(run_dir, reused) == [],
              "still there: %s" % os.listdir(run_dir))
        # another one killed: `memtop attach` (the list) removes its files,
        # says so, and lists the session that runs, whose files stay
        killed2 = rotated_daemon(run_dir, wl.pid)
        os.kill(killed2.id, signal.SIGKILL)
        wait(lambda: process_gone(killed2.id), 30, "the second killed session to be gone")
        r = subprocess.run([MEMTOP, "attach"], capture_output=True, text=True, timeout=20,
                           env=env)
        check(r.returncode == 0 and re.search(r"^ +%d +" % live.id, r.stdout, re.M) and
              not re.search(r"^ +%d " % killed2.id, r.stdout, re.M),
              "memtop attach listed %r" % r.stdout)
        check(re.search(r"^memtop: removed the files of session %d \(\d+ KiB\)" % killed2.id,
                        r.stderr, re.M), "memtop attach did not say it removed them: %r" %
              r.stderr)
        check(session_files(run_dir, killed2.id) == [], "still there: %s" % os.listdir(run_dir))
        check(len(session_files(run_dir, live.id)) == 3, "the running session's files: %s" %
              session_files(run_dir, live.id))
        live.stop()
        check(os.listdir(run_dir) == [], "left behind: %s" % os.listdir(run_dir))
    finally:
        if live:
            live.stop()
        wl.release()
        shutil.rmtree(run_dir, ignore_errors=True)


def test_rotation_keeps_file_whole():
    """A memtop killed inside a rotation leaves FILE a recording --replay
    reads: the new segment is written whole under FILE.new and renamed
    over FILE. Before, FILE was renamed to FILE.1, then created and
    written, and this poll saw it missing or empty 272 times in 11
    segments. Here FILE, polled as fast as Python can through 8 segments,
    always opens with the recording's magic; then memtop is SIGKILLed,
    and FILE replays."""
    magic = make_seeds().REC_MAGIC
    d = scratch_dir("memtop-rec-")
    wl = Workload("scenario_bursts", *WL).wait_ready()
    rec = os.path.join(d, "run.mtr")
    m = Memtop("-b", "--json", "-d", "0.1", "--rate", "4K", "--max-overhead", "none",
               "--record", rec, "--record-max", "64K", "-p", wl.pid)
    try:
        wait(lambda: os.path.exists(rec + ".1"), 30, "a first rotation")
        polls, bad, segments = 0, [], set()
        end = time.monotonic() + 30
        while len(segments) < 8 and time.monotonic() < end:
            polls += 1
            try:
                with open(rec, "rb") as f:
                    head = f.read(len(magic))
                    segments.add(os.fstat(f.fileno()).st_ino)
            except FileNotFoundError:
                head = None
            if head != magic:
                bad.append(head)
        check(m.poll() is None, "memtop exited: %s" % m.err.text()[-500:])
        print("%d polls of FILE over %d segments: %d not whole" % (polls, len(segments), len(bad)))
        # the code before missed FILE about 25 times a rotation here
        check(len(segments) >= 4, "only %d segments in 30 s: the poll saw too few rotations" %
              len(segments))
        check(not bad, "FILE was not a whole recording %d times of %d: %r" %
              (len(bad), polls, bad[:5]))
        m.send(signal.SIGKILL)
        m.wait(10)
        r = replay(rec, "-b", "-n", "1")
        check(r.returncode == 0, "the killed run's FILE does not replay: %s" % r.stderr)
    finally:
        m.send(signal.SIGKILL)
        wl.release()


REPLAY_POS = re.compile(r"(PAUSED )?REPLAY (\d+)/(\d+)")


def test_replay_tui_moves_through_time():
    d = tempfile.mkdtemp(prefix="memtop-rec-")
    pane = None
    try:
        live, rec = record_and_kill(d, 14)
        pane = Pane(120, 30, {"TERM": "screen-256color", "LANG": "C.UTF-8"}, d)
        # -d 0.2: plays a little faster than it was recorded
        pane.run("%s --replay %s -d 0.2 2>replay.err; echo REPLAY-RC=$?" % (MEMTOP, rec))

        def pos():
            g = REPLAY_POS.search(pane.screen())
            return (bool(g.group(1)), int(g.group(2)), int(g.group(3))) if g else None

        pane.wait_for(lambda s: pos() and pos()[1] >= 3, 10, "the replay to play")
        pane.keys("Space")
        paused = pane.wait_for(lambda s: pos() and pos()[0], 5, "PAUSED")
        at = pos()[1]
        time.sleep(0.6)  # three intervals' worth of playing time: it must not move
        check(pos()[1] == at, "a paused replay moved from %d to %d" % (at, pos()[1]))
        pane.keys("[")
        pane.wait_for(lambda s: pos()[1] == at - 1, 5, "[ to go back one interval")
        pane.keys("]", "]")
        pane.wait_for(lambda s: pos()[1] == at + 1, 5, "] ] to go forward two")
        pane.keys("{")
        back = max(1, at - 9)
        pane.wait_for(lambda s: pos()[1] == back, 5, "{ to go back ten")
        pane.keys("}", "}")
        end = pos()[2]
        pane.wait_for(lambda s: pos()[1] == min(end, back + 20), 5, "} } to go forward twenty")
        # the recording holds more intervals than were waited for when its
        # leak took long to show (28 in one CI run): on to the last one
        while pos()[1] < end:
            was = pos()[1]
            pane.keys("}")
            pane.wait_for(lambda s: pos()[1] == min(end, was + 10), 5, "} to go forward ten")
        check("leak_steady" in pane.screen(), "the leak is not shown:\n%s" % pane.screen())
        pane.keys("q")
        pane.wait_for(lambda s: "REPLAY-RC=0" in s, 10, "the replay to quit")
    finally:
        if pane:
            pane.kill()
        shutil.rmtree(d, ignore_errors=True)


def test_record_disk_full():
    d = tempfile.mkdtemp(prefix="memtop-rec-")
    disk = os.path.join(d, "small")
    os.mkdir(disk)
    # room for a few intervals of in-process sampling at 16K from the start
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=384k", "tmpfs", disk], check=True)
    wl = None
    try:
        wl = Workload("scenario_steady_leak", *WL).wait_ready()
        rec = os.path.join(disk, "run.mtr")
        m = Memtop("-b", "--json", *LIVE, "--rate", "16K", "-p", wl.pid, "--record", rec)
        stopped = re.compile(r"^memtop: recording to .*run\.mtr stopped: No space left on "
                             r"device \(it holds every interval before\)$")
        wait(lambda: any(stopped.match(l) for l in m.err.lines) or m.poll() is not None, 30,
             "the recording to stop on a full disk")
        check(m.poll() is None, "memtop ended with the disk: %s" % m.err.text()[-500:])
        n = len(m.out.lines)
        wait(lambda: len(m.out.lines) > n + 2, 10, "memtop to go on after the disk filled")
        check(sum(bool(stopped.match(l)) for l in m.err.lines) == 1, "not said once: %s" %
              m.err.text()[-800:])
        m.send(signal.SIGTERM)
        m.wait(10)
        live = [json.loads(l) for l in m.out.lines if l.startswith("{")]
        r = replay(rec, "--json")
        got = [json.loads(l) for l in r.stdout.splitlines()]
        # cut back to its last complete frame: a clean end, and the live run's start
        check(r.returncode == 0 and "ends inside a frame" not in r.stderr,
              "replay of the full disk's file: rc %d %r" % (r.returncode, r.stderr))
        check(len(got) >= 2 and got == live[:len(got)],
              "the %d intervals recorded are not the live run's first ones" % len(got))
    finally:
        if wl:
            wl.release()
        subprocess.run(["umount", disk])
        shutil.rmtree(d, ignore_errors=True)


def test_hostile_recordings_and_record_paths():
    """Files an unprivileged user wrote or planted: every seed of the
    recording fuzzer's corpus (a version 3 file, a bad checksum, a cut
    tail, an allocation of an unknown stack, well-formed ones) and random
    bytes, replayed by root with --json: exit 0 or 1, never a signal, at
    most one memtop line on stderr, one exactly when it ends with 1. Then
    --record onto nobody's symlink and FIFO: refused in one line before
    anything is attached, nothing created or opened through them."""
    lab = tempfile.mkdtemp(prefix="memtop-rec-hostile-")
    os.chmod(lab, 0o755)
    theirs = os.path.join(lab, "theirs")
    os.mkdir(theirs, 0o755)
    os.chown(theirs, 65534, 65534)
    seeds = os.path.join(ROOT, "tests", "fuzz", "recording")
    wl = None
    try:
        names = sorted(os.listdir(seeds))
        check(len(names) >= 5, "the recording corpus is missing: %s" % names)
        code = ("import os,shutil,sys\nsrc,dst=sys.argv[1],sys.argv[2]\n"
                "for n in os.listdir(src): shutil.copyfile(os.path.join(src,n),os.path.join(dst,n))\n"
                "open(os.path.join(dst,'random'),'wb').write(b'MEMTOPRC'+os.urandom(8192))\n")
        r = as_nobody("python3", "-c", code, seeds, theirs)
        check(r.returncode == 0, "nobody could not write the files: %r" % r.stderr)
        for name in names + ["random"]:
            r = replay(os.path.join(theirs, name), "--json")
            errs = [l for l in r.stderr.splitlines() if l.strip()]
            check(r.returncode in (0, 1), "%s: rc %d (a signal is a crash): %r" %
                  (name, r.returncode, r.stderr[-300:]))
            check(len(errs) <= 1 and all(l.startswith("memtop: ") for l in errs),
                  "%s: not at most one memtop line: %r" % (name, errs))
            check(r.returncode == 0 or len(errs) == 1, "%s: rc 1 without a line" % name)
            for line in r.stdout.splitlines():
                json.loads(line)  # every interval shown is whole JSON
        r = replay(os.path.join(theirs, "seed-version-3"), "--json")
        check(r.returncode == 1 and "format version 3" in r.stderr,
              "a version 3 recording: rc %d %r" % (r.returncode, r.stderr))
        # --record through nobody's symlink to a file of root's, or onto a FIFO
        victim = os.path.join(lab, "victim")
        r = as_nobody("sh", "-c", "ln -s %s %s/link && mkfifo %s/fifo" % (victim, theirs, theirs))
        check(r.returncode == 0, "nobody could not plant: %r" % r.stderr)
        wl = Workload("scenario_steady_leak", *WL).wait_ready()
        for target in ("link", "fifo"):
            t0 = time.monotonic()
            r = subprocess.run([MEMTOP, "-b", "-n", "2", "-p", str(wl.pid), "--record",
                                os.path.join(theirs, target)], capture_output=True, text=True,
                               timeout=30)
            errs = [l for l in r.stderr.splitlines() if l.strip()]
            check(r.returncode == 1 and len(errs) == 1 and errs[0].startswith("memtop: ") and
                  "attached to" not in r.stderr,
                  "--record onto nobody's %s: rc %d %r" % (target, r.returncode, r.stderr))
            check(time.monotonic() - t0 < 10, "--record onto a %s blocked" % target)
        check(not os.path.lexists(victim), "--record created %s through the symlink" % victim)
    finally:
        if wl:
            wl.release()
        shutil.rmtree(lab, ignore_errors=True)


# ==== Bounds on what a pattern or a recording costs (issue 28) ====

PEAK = ("import resource,subprocess,sys\n"
        "r=subprocess.run(sys.argv[1:],stdout=subprocess.PIPE,stderr=subprocess.PIPE)\n"
        "sys.stdout.buffer.write(r.stdout)\nsys.stderr.buffer.write(r.stderr)\n"
        "sys.stderr.write('PEAK_RSS_KB %d\\n' % "
        "resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
        "sys.exit(r.returncode if r.returncode >= 0 else 128 - r.returncode)\n")
AUDIT_PATTERN = "a" + "+" * 26  # glibc's regcomp: killed for memory at 24 GB


def run_peak(argv, timeout):
    """argv run as the only child of a fresh python, which reports its peak
    RSS: (returncode, stdout, stderr without that line, peak RSS in bytes,
    seconds taken). The child starts as a copy of that python, whose RSS
    (about 14 MB) is thus a floor: compare two runs, not one with a
    constant."""
    t0 = time.monotonic()
    r = subprocess.run(["python3", "-c", PEAK] + [str(a) for a in argv], capture_output=True,
                       text=True, timeout=timeout)
    took = time.monotonic() - t0
    m = re.search(r"^PEAK_RSS_KB (\d+)$", r.stderr, re.M)
    check(m, "no peak RSS reported: %r" % r.stderr[-300:])
    err = r.stderr[:m.start()] + r.stderr[m.end() + 1:]
    return r.returncode, r.stdout, err, int(m.group(1)) << 10, took


def make_seeds():
    """tests/fuzz/make-seeds as a module: its recording encoder, written
    from docs/recording.md."""
    import importlib.machinery
    import importlib.util
    loader = importlib.machinery.SourceFileLoader(
        "make_seeds", os.path.join(ROOT, "tests", "fuzz", "make-seeds"))
    mod = importlib.util.module_from_spec(importlib.util.spec_from_loader("make_seeds", loader))
    loader.exec_module(mod)
    return mod


def with_skip(data, pattern):
    """The recording data with its first header's --skip set to pattern
    (HEADER: u16 version, u16 0, u64 session, u32 segment, u64 rate, u8
    grouping, then str --skip), its length and CRC made good."""
    s = make_seeds()
    check(data[:8] == s.REC_MAGIC, "not a recording")
    length, ftype, flags = struct.unpack_from("<IHH", data, 8)
    check(ftype == s.R_HEADER, "no header after the magic")
    payload = data[16:16 + length]
    old = struct.unpack_from("<I", payload, 25)[0]
    rest = payload[29 + (0 if old == 0xFFFFFFFF else old):]
    return (data[:8] + s.rframe(ftype, payload[:25] + s.rstr(pattern) + rest, flags) +
            data[16 + length + 4:])


def test_skip_pattern_bounded():
    """--skip is compiled by memtop's bounded matcher (util/pattern.c): the
    audit's "a" and 26 '+' (glibc: 12.5 GB and 37 s at 24, killed at 26)
    runs a live -b with memtop's peak RSS as without it; past the bounds (a
    pattern of 300 bytes, a {m,n} nesting that would expand to 255^4
    states) and a back reference are refused in one line, status 2, in
    well under a second; a recording whose header carries those patterns
    replays (the accepted one, within the same RSS) or is refused in one
    line, exit 1."""
    seed_path = os.path.join(ROOT, "tests", "fuzz", "recording", "seed-one-segment")
    rc, plain, err, small, took = run_peak([MEMTOP, "--replay", seed_path, "--json"], 30)
    check(rc == 0 and plain, "the seed does not replay: %r" % err)
    wl = Workload("scenario_steady_leak", *WL).wait_ready()
    d = tempfile.mkdtemp(prefix="memtop-pattern-")
    try:
        rss = {}
        for name, extra in (("plain", ()), ("audit", ("--skip", AUDIT_PATTERN))):
            rc, out, err, rss[name], took = run_peak(
                [MEMTOP, "-b", "--json", "-n", "3", "-d", "0.3", "--max-overhead", "none",
                 "-p", wl.pid] + list(extra), 90)
            check(rc == 0 and len(out.splitlines()) == 3,
                  "%s: rc %d, %d lines: %s" % (name, rc, len(out.splitlines()), err[-300:]))
        print("peak RSS: %d MB without --skip, %d MB with the audit's pattern" %
              (rss["plain"] >> 20, rss["audit"] >> 20))
        check(rss["audit"] < rss["plain"] + (32 << 20),
              "--skip %s: peak RSS %d MB against %d MB without it" %
              (AUDIT_PATTERN, rss["audit"] >> 20, rss["plain"] >> 20))
        for pattern, why in (("a" * 300, "a pattern of 300 bytes refused: longer than 256 bytes"),
                             ("(((a{255}){255}){255}){255}", "more than 1024 states"),
                             ("(a)\\1", "\\1 is not supported")):
            rc, out, err, peak, took = run_peak([MEMTOP, "-b", "-p", wl.pid, "--skip", pattern],
                                                30)
            errs = err.splitlines()
            check(rc == 2 and out == "" and len(errs) == 1 and errs[0].startswith("memtop: --skip: ")
                  and why in errs[0], "--skip %.40s: rc %d, %r" % (pattern, rc, err))
            check(took < 5 and peak < small + (16 << 20),
                  "--skip %.40s: refused in %.1f s, peak %d MB" % (pattern, took, peak >> 20))
        # the same patterns in a recording's header
        seed = open(seed_path, "rb").read()
        crafted = os.path.join(d, "crafted.mtr")
        open(crafted, "wb").write(with_skip(seed, AUDIT_PATTERN))
        rc, out, err, peak, took = run_peak([MEMTOP, "--replay", crafted, "--json"], 30)
        check(rc == 0 and err == "" and len(out.splitlines()) == len(plain.splitlines()),
              "a header with the audit's pattern: rc %d, %d lines, %r" %
              (rc, len(out.splitlines()), err))
        check(took < 10 and peak < small + (16 << 20),
              "a header with the audit's pattern: %.1f s, %d MB" % (took, peak >> 20))
        for pattern, why in (("a" * 300, "(300 bytes) is refused: longer than 256 bytes"),
                             ("(((a{255}){255}){255}){255}", "more than 1024 states"),
                             ("(a)\\1", "\\1 is not supported")):
            open(crafted, "wb").write(with_skip(seed, pattern))
            rc, out, err, peak, took = run_peak([MEMTOP, "--replay", crafted, "--json"], 30)
            errs = err.splitlines()
            check(rc == 1 and out == "" and len(errs) == 1 and
                  "crafted.mtr: at byte 8: its --skip pattern" in errs[0] and why in errs[0],
                  "a header with %.40s: rc %d, %r" % (pattern, rc, err))
            check(took < 5 and peak < small + (16 << 20),
                  "a header with %.40s: %.1f s, %d MB" % (pattern, took, peak >> 20))
    finally:
        wl.release()
        shutil.rmtree(d, ignore_errors=True)


def large_recording(path, size):
    """A valid recording of at least size bytes, written with make-seeds'
    encoder: one target and stack, then intervals of 1000 allocations and
    their 1000 frees each (so the model stays small however long it is).
    Returns the number of intervals shown (the first is quiet)."""
    s = make_seeds()
    k = 0
    with open(path, "wb") as f:
        strings = b"".join(s.rframe(s.R_STRING, struct.pack("<I", i + 1) + s.rstr(n))
                           for i, n in enumerate(["leak_here", "app", "/usr/bin/app", "app.c",
                                                  "malloc"]))
        f.write(s.rheader(0x5eed, 0) + s.rinterval(10 ** 9, [], s.F_QUIET) +
                s.rframe(s.R_TARGET, struct.pack("<I", 7)) + strings +
                s.rstack(1, [(0x401000, 5, 0), (0x401100, 1, 42)]))
        while f.tell() < size:
            k += 1
            t = k * 10 ** 9
            f.write(b"".join(s.ralloc(1, 7, 0x10000 + 16 * i, 1000, t + i) for i in range(1000)))
            f.write(b"".join(s.rframe(s.R_FREE, struct.pack("<IQQ", 7, 0x10000 + 16 * i,
                                                            t + 5000 + i))
                             for i in range(1000)))
            f.write(s.rinterval(t + 10 ** 9 - 1, [7]))
    return k


def test_replay_streams_and_refuses_devices():
    """--replay reads a file where it needs it, not into memory: a 64 MiB
    recording replays (--json, every interval; -b -n 2) with memtop's peak
    RSS within 16 MiB of a replay of a 6 KB one (was: the file's size on
    top). /dev/zero (was: 2.3 GB in 10 s), /dev/urandom, a FIFO nobody
    writes (which an open for reading would wait on), a directory: refused
    in one line, exit 1, at once, /dev/zero still the device."""
    d = tempfile.mkdtemp(prefix="memtop-stream-")
    try:
        seed = os.path.join(ROOT, "tests", "fuzz", "recording", "seed-one-segment")
        rc, out, err, small, took = run_peak([MEMTOP, "--replay", seed, "--json"], 30)
        check(rc == 0 and out, "the seed does not replay: %r" % err)
        big = os.path.join(d, "big.mtr")
        n = large_recording(big, 64 << 20)
        size = os.path.getsize(big)
        rc, out, err, peak, took = run_peak([MEMTOP, "--replay", big, "--json"], 120)
        lines = out.splitlines()
        print("a %d MB recording of %d intervals replayed in %.1f s, peak RSS %.1f MB "
              "(a 6 KB one: %.1f MB)" % (size >> 20, n, took, peak / 2 ** 20, small / 2 ** 20))
        check(rc == 0 and err == "" and len(lines) == n,
              "the large recording: rc %d, %d of %d intervals, %r" % (rc, len(lines), n, err))
        last = json.loads(lines[-1])
        check(last["targets"][0]["pid"] == 7 and last["sites"][0]["function"] == "leak_here",
              "the last interval is not the recording's: %s" % lines[-1][:300])
        check(peak < small + (16 << 20),
              "replaying %d MB took a peak RSS of %.1f MB (a small recording: %.1f MB)" %
              (size >> 20, peak / 2 ** 20, small / 2 ** 20))
        r = replay(big, "-b", "-n", "2")
        check(r.returncode == 0 and r.stdout.count("FUNCTION (MODULE") == 2,
              "-b -n 2 of the large recording: rc %d %r" % (r.returncode, r.stderr))
        fifo = os.path.join(d, "fifo")
        os.mkfifo(fifo)
        for path in ("/dev/zero", "/dev/urandom", fifo, d):
            rc, out, err, peak, took = run_peak([MEMTOP, "--replay", path, "--json"], 30)
            errs = err.splitlines()
            check(rc == 1 and out == "" and len(errs) == 1 and
                  errs[0] == "memtop: %s: not a regular file (a device, FIFO, socket or "
                  "directory): --replay reads a recording from a regular file only" % path,
                  "--replay %s: rc %d %r" % (path, rc, err))
            check(took < 5 and peak < small + (16 << 20),
                  "--replay %s: %.1f s, peak %.1f MB" % (path, took, peak / 2 ** 20))
        check(os.path.exists("/dev/zero") and os.stat("/dev/zero").st_rdev == os.makedev(1, 5),
              "/dev/zero is no longer the device 1:5")
    finally:
        shutil.rmtree(d, ignore_errors=True)

"""Outputs (issue 18, item 1 and part of 5): whatever --output/--folded
name, memtop never replaces anything but a regular file, and its exports
survive the reader of its stdout going away or stalling.

  - /dev/null as --output and --folded is written through and stays the
    character device 1:3;
  - a FIFO with no reader is refused before anything is attached (one
    line, nothing left); with a reader it gets the gzip stream and stays
    a FIFO;
  - a new profile is 0600 minus the umask; an existing file keeps its
    owner and is never made more open (0644 -> 0600, 0400 stays 0400);
  - `memtop -b ... --output f | head -1`: memtop ends with status 0 and
    f is a complete gzip;
  - a reader of -b --json that stops reading: memtop says so on stderr
    once, keeps draining, says when reading resumes, and still ends on
    SIGINT within 1 s with its --output written;
  - -d outside 0.05..3600 is refused with the valid range;
  - /dev/full is said to be full and stays the device; /dev/stdout (a
    pipe here) is written through; a directory or a block device is
    refused before anything is attached; a FIFO reader that stops
    reading makes the write give up after 5 s, said, the FIFO left;
  - -- CMD runs with SIGPIPE at its default, not memtop's ignored one.
The workload is the hostile target's plain mode (allocations every ms,
run as nobody), built by test_hostile.
"""

import fcntl
import gzip
import os
import re
import shutil
import signal
import stat
import subprocess
import tempfile
import threading
import time

from memtop_test import (MEMTOP, Memtop, _Lines, assert_nothing_left, assert_one_error_line,
                         bpf_snapshot, check, fail, scratch_dir)
from test_hostile import STOP_WITHIN_S, build, lab, start

QUICK = ("-b", "-n", "2", "-d", "0.2")


def busy():
    d = lab()
    exe = build(d, lib=False)[0]
    _, pid = start([exe])
    return d, pid


def is_gzip(path):
    with open(path, "rb") as f:
        data = f.read()
    check(data[:2] == b"\x1f\x8b", "%s is not gzip: %r" % (path, data[:8]))
    check(len(gzip.decompress(data)) > 0, "%s is an empty profile" % path)


def test_dev_null_stays_a_device():
    _, pid = busy()
    m = Memtop(*QUICK, "--output", "/dev/null", "--folded", "/dev/null", "-p", pid)
    rc = m.wait(20)
    check(rc == 0, "memtop exited %s: %s" % (rc, m.err.text()[-300:]))
    st = os.lstat("/dev/null")
    check(stat.S_ISCHR(st.st_mode) and os.major(st.st_rdev) == 1 and os.minor(st.st_rdev) == 3,
          "/dev/null is no longer the null device: mode %o" % st.st_mode)
    # numbered snapshots would be new files beside the device: refused
    m = Memtop(*QUICK, "--output", "/dev/null", "--output-every", "1", "-p", pid)
    assert_one_error_line(m, m.wait(10), r"--output-every: /dev/null is not a regular file")
    check(not [f for f in os.listdir("/dev") if f.startswith("null.")], "files appeared in /dev")


def test_two_outputs_one_file_refused():
    """Two file options naming one file would lose one of them (before,
    `--output F --record F` replaced the recording with the profile at the
    end). Every spelling is refused at parse time, one line, status 2,
    before anything is attached or created: the same string, ./F, a
    directory through a symlink or "..", a symlink to the file, a hard link
    of it, --record-max's second segment FILE.1, one of --output-every's
    numbered snapshots, --cmd-log, and the recording --replay reads.
    Existing files keep their bytes. /dev/null given twice is still
    written through (test_dev_null_stays_a_device)."""
    _, pid = busy()
    d = tempfile.mkdtemp(prefix="memtop-same-")
    try:
        os.mkdir(os.path.join(d, "sub"))
        os.symlink("sub", os.path.join(d, "sublink"))
        with open(os.path.join(d, "G"), "w") as f:
            f.write("keep\n")
        os.symlink("G", os.path.join(d, "L"))
        os.link(os.path.join(d, "G"), os.path.join(d, "H"))
        same = r"name the same file: each would overwrite the other$"
        cases = [
            (("--output", "F", "--record", "F"), r"--output F and --record F " + same),
            (("--output", "F", "--folded", "./F"), r"--output F and --folded \./F " + same),
            (("--output", "sub/../sub/x", "--record", "sublink/x"),
             r"--output sub/\.\./sub/x and --record sublink/x " + same),
            (("--output", "L", "--folded", "G"), r"--output L and --folded G " + same),
            (("--folded", "H", "--record", "G"), r"--folded H and --record G " + same),
            (("--record", "r", "--record-max", "1M", "--output", "r.1"),
             r"--output r\.1 is the second segment of --record r \(with --record-max\)"),
            (("--output", "h.pb.gz", "--output-every", "5", "--folded", "./h.0002.pb.gz"),
             r"--folded \./h\.0002\.pb\.gz is one of --output-every's numbered snapshots of "
             r"--output h\.pb\.gz"),
        ]
        before = bpf_snapshot()
        for args, pattern in cases:
            m = Memtop(*QUICK, *args, "-p", pid, cwd=d)
            rc = m.wait(20)
            assert_one_error_line(m, rc, r"^memtop: " + pattern)
            check(rc == 2, "%s: exit status %s, not 2" % (" ".join(args), rc))
        m = Memtop(*QUICK, "--output", "F", "--cmd-log", "./F", "--", "true", cwd=d)
        rc = m.wait(20)
        assert_one_error_line(m, rc, r"^memtop: --output F and --cmd-log \./F " + same)
        check(rc == 2, "--cmd-log: exit status %s, not 2" % rc)
        m = Memtop("-b", "--replay", "G", "--folded", "L", cwd=d)
        rc = m.wait(20)
        assert_one_error_line(m, rc, r"^memtop: --folded L would overwrite the recording "
                              r"--replay G reads$")
        check(rc == 2, "--replay: exit status %s, not 2" % rc)
        assert_nothing_left(before)
        left = sorted(os.listdir(d))
        check(left == ["G", "H", "L", "sub", "sublink"], "files were created: %s" % left)
        check(not os.listdir(os.path.join(d, "sub")), "files were created in sub/")
        with open(os.path.join(d, "G")) as f:
            check(f.read() == "keep\n", "G was written")
    finally:
        shutil.rmtree(d, ignore_errors=True)


def test_fifo_output():
    d, pid = busy()
    fifo = os.path.join(d, "out.fifo")
    os.mkfifo(fifo, 0o600)
    before = bpf_snapshot()
    m = Memtop(*QUICK, "--output", fifo, "-p", pid)
    rc = m.wait(10)
    assert_one_error_line(m, rc, r"out\.fifo: a FIFO with no reader")
    assert_nothing_left(before)
    # a reader that holds the FIFO open; the profile (a few KiB) waits in
    # the pipe once memtop has written it and exited
    fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        m = Memtop(*QUICK, "--output", fifo, "-p", pid)
        rc = m.wait(20)
        check(rc == 0, "memtop exited %s: %s" % (rc, m.err.text()[-300:]))
        data = os.read(fd, 1 << 20)
    finally:
        os.close(fd)
    check(data[:2] == b"\x1f\x8b" and gzip.decompress(data), "the FIFO's reader got %r" % data[:8])
    check(stat.S_ISFIFO(os.lstat(fifo).st_mode), "the FIFO was replaced")


def assert_export_failed(m, rc, pattern):
    """The run went on and its export failed at the end: status 1, the
    last stderr line the one error."""
    lines = m.stderr_lines()
    check(rc == 1 and lines and re.match(r"memtop: .*" + pattern, lines[-1]),
          "expected status 1 and a last line matching %r: rc %s, %s" % (pattern, rc, lines[-3:]))


def test_full_stdout_dir_and_block_device():
    d, pid = busy()
    m = Memtop(*QUICK, "--output", "/dev/full", "-p", pid)
    assert_export_failed(m, m.wait(20), r"cannot write /dev/full: No space left on device")
    st = os.lstat("/dev/full")
    check(stat.S_ISCHR(st.st_mode) and (os.major(st.st_rdev), os.minor(st.st_rdev)) == (1, 7),
          "/dev/full is no longer the full device: mode %o" % st.st_mode)
    # /dev/stdout is memtop's stdout, a pipe here: the folded stacks (of
    # what is in use: the target leaks) arrive there, after -b's tables
    _, leaker = start([os.path.join(d, "hostile"), "--leak", "yes"])
    m = Memtop(*QUICK, "--folded", "/dev/stdout", "-p", leaker)
    check(m.wait(20) == 0, "memtop --folded /dev/stdout failed: %s" % m.err.text()[-300:])
    check(any(l.rstrip().split(" ")[-1].isdigit() and "hostile_main_alloc" in l
              for l in m.out.lines), "no folded stack on stdout: %s" % m.out.text()[-300:])
    # stdout a regular file (`memtop ... --folded /dev/stdout > out`): the
    # stacks are appended after the tables, and /dev/stdout stays the
    # host's link (it was once renamed over: a regular file in /dev)
    out = os.path.join(scratch_dir("memtop-stdout-"), "out")
    with open(out, "w") as f:
        r = subprocess.run([MEMTOP] + list(QUICK) + ["--folded", "/dev/stdout", "-p", str(leaker)],
                           stdout=f, stderr=subprocess.PIPE, text=True, timeout=30)
    st = os.lstat("/dev/stdout")
    check(stat.S_ISLNK(st.st_mode) and os.readlink("/dev/stdout") == "/proc/self/fd/1",
          "/dev/stdout is no longer the link to /proc/self/fd/1: mode %o" % st.st_mode)
    text = open(out).read()
    check(r.returncode == 0 and "\nmemtop " in text and any(
        l.rstrip().split(" ")[-1].isdigit() and "hostile_main_alloc" in l
        for l in text.splitlines()),
        "--folded /dev/stdout into a file: rc %d, %r, %r" % (r.returncode, text[-300:], r.stderr))
    folded = re.search(r"^\S*hostile_main_alloc \d+$", text, re.M)
    check(folded and folded.start() > text.rindex("\nmemtop "),
          "the folded stacks are not after the tables: %r" % text[-400:])
    blockdevs = [os.path.join("/dev", f) for f in sorted(os.listdir("/dev"))
                 if stat.S_ISBLK(os.lstat(os.path.join("/dev", f)).st_mode)]
    check(blockdevs, "no block device in /dev to try")
    before = bpf_snapshot()
    for path, why in ((d, "Is a directory"), (blockdevs[0], "a block device")):
        m = Memtop(*QUICK, "--output", path, "-p", pid)
        assert_one_error_line(m, m.wait(10), why)
    check(stat.S_ISBLK(os.lstat(blockdevs[0]).st_mode), "%s was replaced" % blockdevs[0])
    assert_nothing_left(before)


def test_fifo_reader_stops_reading():
    """A reader that opens the FIFO, shrinks its buffer to a page and never
    reads: the profile (the JIT target's 400 sites, far over a page) cannot
    go through; memtop gives up after 5 s with one line and ends."""
    d = lab()
    exe = build(d, lib=False)[0]
    _, pid = start([exe, "--jit", "400"])
    fifo = os.path.join(d, "stall.fifo")
    os.mkfifo(fifo, 0o600)
    fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        fcntl.fcntl(fd, 1031, 4096)  # F_SETPIPE_SZ
        m = Memtop("-b", "-n", "3", "-d", "0.5", "--rate", "64K", "--max-overhead", "none",
                   "--output", fifo, "-p", pid)
        t0 = time.monotonic()
        rc = m.wait(40)
        took = time.monotonic() - t0
    finally:
        os.close(fd)
    assert_export_failed(m, rc, r"its reader stopped reading")
    check(took < 15, "memtop took %.1fs to give up" % took)
    check(stat.S_ISFIFO(os.lstat(fifo).st_mode), "the FIFO was replaced")


def test_command_gets_default_sigpipe():
    """memtop ignores SIGPIPE itself; the command it runs must not inherit
    that (a pipeline in it would never end on a closed reader)."""
    # an interval long enough for grep, held a few ms at its start under a
    # loaded machine (docs/cgroup.md, "Held at its start"), to print
    m = Memtop("-b", "-n", "1", "-d", "0.6", "--cmd-log", "cmd.log", "--",
               "sh", "-c", "grep SigIgn /proc/self/status; sleep 1")
    check(m.wait(30) == 0, "memtop -- sh failed: %s" % m.err.text()[-300:])
    with open(os.path.join(m.cwd, "cmd.log")) as f:
        line = [l for l in f if l.startswith("SigIgn")]
    check(line, "the command printed no SigIgn line")
    mask = int(line[0].split()[1], 16)
    check(not mask & (1 << (signal.SIGPIPE - 1)),
          "the command runs with SIGPIPE ignored: SigIgn %x" % mask)


def test_modes_and_owner():
    d, pid = busy()
    new, loose, strict = (os.path.join(d, n) for n in ("new.pb.gz", "loose.pb.gz", "strict.pb.gz"))
    for p, mode in ((loose, 0o644), (strict, 0o400)):
        with open(p, "w") as f:
            f.write("old")
        os.chmod(p, mode)
        os.chown(p, 65534, 65534)
    old = os.umask(0o027)
    try:
        for p in (new, loose, strict):
            m = Memtop(*QUICK, "--output", p, "-p", pid)
            rc = m.wait(20)
            check(rc == 0, "memtop --output %s exited %s: %s" % (p, rc, m.err.text()[-300:]))
    finally:
        os.umask(old)
    for p, mode, uid in ((new, 0o600, 0), (loose, 0o600, 65534), (strict, 0o400, 65534)):
        st = os.stat(p)
        check(stat.S_IMODE(st.st_mode) == mode, "%s: mode %o, expected %o" %
              (p, stat.S_IMODE(st.st_mode), mode))
        check(st.st_uid == uid, "%s: owner %d, expected %d" % (p, st.st_uid, uid))
        is_gzip(p)


def test_sigpipe_still_writes_exports():
    d, pid = busy()
    out, folded = os.path.join(d, "f.pb.gz"), os.path.join(d, "f.folded")
    r = subprocess.run(["bash", "-c", '"$@" | head -1; echo "rc=${PIPESTATUS[0]}" >&2', "sh",
                        MEMTOP, "-b", "-d", "0.2", "--output", out, "--folded", folded,
                        "-p", str(pid)], capture_output=True, text=True, timeout=30)
    check(r.stdout.count("\n") == 1 and r.stdout.strip(),
          "head did not get one line of the table: %r" % r.stdout[:200])
    check("rc=0" in r.stderr, "memtop did not end cleanly when its reader left: %s" %
          r.stderr[-400:])
    is_gzip(out)
    check(os.path.exists(folded), "the folded export was not written")


def test_stalled_reader():
    d, pid = busy()
    out = os.path.join(d, "stall.pb.gz")
    rfd, wfd = os.pipe()
    before = bpf_snapshot()
    # stdout is a pipe nobody reads (yet)
    p = subprocess.Popen([MEMTOP, "-b", "--json", "-d", "0.05", "--rate", "16K",
                          "--output", out, "-p", str(pid)],
                         stdin=subprocess.DEVNULL, stdout=wfd, stderr=subprocess.PIPE)
    os.close(wfd)
    err = _Lines(p.stderr, "memtop stderr")

    def wait_for(text, timeout):
        t0 = time.monotonic()
        while not any(text in l for l in err.lines):
            left = timeout - (time.monotonic() - t0)
            check(left > 0, "memtop never said %r within %.0fs: %s" % (text, timeout, err.lines))
            check(err.get(left, "memtop stderr") is not None,
                  "memtop ended before saying %r: %s" % (text, err.lines))

    try:
        wait_for("stdout is not being read", 30)
        got = []

        def reader():
            while True:
                b = os.read(rfd, 65536)
                if not b:
                    break
                got.append(b)

        threading.Thread(target=reader, daemon=True).start()
        wait_for("stdout is read again", 10)
        check(sum("stdout is not being read" in l for l in err.lines) == 1,
              "the stall should be said once: %s" % err.lines)
        p.send_signal(signal.SIGINT)
        try:
            rc = p.wait(timeout=STOP_WITHIN_S)
        except subprocess.TimeoutExpired:
            fail("memtop still running %.1fs after SIGINT" % STOP_WITHIN_S)
        check(rc == 0, "memtop exited %s: %s" % (rc, err.lines))
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        os.close(rfd)
    is_gzip(out)
    assert_nothing_left(before)


def test_interval_range():
    _, pid = busy()
    for bad in ("0.0000001", "0.049", "3601"):
        m = Memtop("-b", "-d", bad, "-p", pid)
        assert_one_error_line(m, m.wait(10), r"-d: '%s' is out of range \(0\.05 to 3600\)" %
                              bad.replace(".", r"\."))


def test_push_failures_said_once_per_change():
    """--push to a port nobody listens on: one "failing" line on stderr and
    one note in -b, however many attempts fail; once an endpoint answers
    there, one "accepted again" line."""
    import http.server
    import socket

    _, pid = busy()
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    m = Memtop("-b", "-d", "0.25", "--push", "http://127.0.0.1:%d" % port, "--push-every", "1",
               "-p", pid)

    def wait_err(text, timeout):
        t0 = time.monotonic()
        while not any(text in l for l in m.err.lines):
            left = timeout - (time.monotonic() - t0)
            check(left > 0, "memtop never said %r: %s" % (text, m.err.lines))
            check(m.err.get(left, "memtop stderr") is not None,
                  "memtop ended before saying %r: %s" % (text, m.err.lines))

    wait_err("failing: ", 15)

    class Ok(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            self.send_response(200)
            self.end_headers()

        def log_message(self, *a):
            pass

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", port), Ok)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        wait_err("profiles accepted again", 20)
        m.send(signal.SIGINT)
        rc = m.wait(10)
    finally:
        srv.shutdown()
    check(rc == 0, "memtop exited %s" % rc)
    said = [l for l in m.err.lines if "--push" in l]
    check(len(said) == 2 and "failing" in said[0] and "accepted again" in said[1],
          "push state should be said once per change: %s" % said)
    notes = [l for l in m.out.lines if l.startswith("note: --push")]
    check(len(notes) == 2, "-b should carry one note per change: %s" % notes)

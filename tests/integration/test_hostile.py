"""Hostile targets (issue 18): a target that attacks the root memtop
watching it, run as an unprivileged user (nobody) from a directory it owns.
The attacker (tests/workloads/hostile/, built here at test time) maps a
file and then swaps its name for a FIFO or a symlink to /etc/shadow,
names a FIFO in .gnu_debuglink, runs chrooted with a FIFO at the doubled
path a host reader would build and an absolute symlink at its build-ID
debug path, or gives itself a name with terminal escapes. memtop is also
given a FIFO as --theme, and /dev/null as --output.

Every test asserts what must hold whatever the target does:
  - memtop attaches and names the site from the real mapped file (the
    mapping itself, not whatever its name resolves to now);
  - SIGINT, SIGTERM or SIGHUP ends memtop within 1 s with status 0 (on a
    loaded machine, later but with at most 0.5 s of memtop's own CPU spent
    between the signal and its end), and nothing is left attached (bpftool's programs and links, and
    uprobe_events, before and after): while the target has a FIFO where
    memtop might open, while memtop loads and attaches its probes, and
    while a target floods it with more samples than it can take;
  - /etc/shadow is never opened: an inotify watch on it sees no IN_OPEN
    while memtop runs (opens with O_PATH, which memtop uses to look before
    it reads, raise no such event; reading it would);
  - host files stay what they were (/dev/null a character device).
"""

import atexit
import ctypes
import os
import pty
import re
import shutil
import signal
import stat
import struct
import subprocess
import tempfile
import threading
import time
import tty

from memtop_test import (MEMTOP, ROOT, Memtop, Proc, assert_nothing_left, bpf_snapshot, check, fail,
                         sites_by_function)

SRC = os.path.join(ROOT, "tests", "workloads", "hostile")
NOBODY = ("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups")
MEMTOP_ARGS = ("-b", "--json", "-d", "0.3", "--rate", "64K", "--max-overhead", "none")
STOP_WITHIN_S = 1.0
# A stop not over by then is a hang. A target that blocks memtop blocks
# it for good; 5 s once failed in CI on a machine stalled long enough that
# another lane's tmux server did not answer for 10 s.
BLOCKED_AFTER_S = 15.0
STOP_CPU_S = 0.5  # memtop's own CPU from the signal to its end (0.05-0.1 s measured)
SHADOW = "/etc/shadow"
IN_ACCESS, IN_OPEN = 0x1, 0x20


# ==== The attacker's directory ====

_lab = None


def lab():
    """A fresh directory tree: LAB (root's) / a (nobody's), with the hostile
    program and library built into it."""
    global _lab
    if _lab is None:
        _lab = tempfile.mkdtemp(prefix="memtop-hostile-")
        atexit.register(shutil.rmtree, _lab, True)
        os.chmod(_lab, 0o755)
    d = tempfile.mkdtemp(dir=_lab)
    os.chmod(d, 0o755)
    os.chown(d, 65534, 65534)
    return d


def cc(*args):
    r = subprocess.run(["cc"] + list(args), capture_output=True, text=True, timeout=120)
    if r.returncode:
        fail("building the hostile target failed: cc %s\n%s" % (" ".join(args), r.stderr[-1500:]))


def as_nobody(*argv):
    r = subprocess.run(list(NOBODY) + list(argv), capture_output=True, text=True, timeout=20)
    if r.returncode:
        fail("as nobody: %s: %s" % (" ".join(argv), r.stderr.strip()))


def build(d, lib=True, lib_flags=("-O2",), exe_flags=("-O2",)):
    """hostile (and libhostile.so) into d, owned by nobody."""
    exe = os.path.join(d, "hostile")
    cc(*exe_flags, "-Wall", "-o", exe, os.path.join(SRC, "hostile.c"))
    out = [exe]
    if lib:
        so = os.path.join(d, "libhostile.so")
        cc(*lib_flags, "-Wall", "-shared", "-fPIC", "-o", so, os.path.join(SRC, "libhostile.c"))
        out.append(so)
    for p in out:
        os.chown(p, 65534, 65534)
    return out


def start(argv, prefix=NOBODY):
    """Start the attacker and wait for its READY line."""
    p = Proc(list(prefix) + list(argv), name="hostile")
    line = p.out.get(15, "hostile READY")
    if not line or not line.startswith("READY"):
        fail("the hostile target did not start (rc %s): %s" % (p.poll(), p.err.text()[-500:]))
    return p, int(line.split("pid=")[1])


# ==== What memtop does ====

class OpenWatch:
    """inotify IN_OPEN|IN_ACCESS on one file, counted while it lives."""

    def __init__(self, path):
        self.libc = ctypes.CDLL(None, use_errno=True)
        self.fd = self.libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        check(self.fd >= 0, "inotify_init1 failed")
        wd = self.libc.inotify_add_watch(self.fd, path.encode(), IN_OPEN | IN_ACCESS)
        check(wd >= 0, "cannot watch %s: errno %d" % (path, ctypes.get_errno()))
        self.path = path

    def opens(self):
        n = 0
        while True:
            try:
                buf = os.read(self.fd, 4096)
            except BlockingIOError:
                break
            off = 0
            while off + 16 <= len(buf):
                _, mask, _, ln = struct.unpack_from("iIII", buf, off)
                n += bool(mask & (IN_OPEN | IN_ACCESS))
                off += 16 + ln
        return n

    def close(self):
        os.close(self.fd)


def watch_until(pid, function, extra=(), timeout=20):
    """memtop -b --json on pid until a record names `function`."""
    m = Memtop(*MEMTOP_ARGS, *extra, "-p", pid)
    t0 = time.monotonic()
    while True:
        left = timeout - (time.monotonic() - t0)
        check(left > 0, "no site %s within %.0fs" % (function, timeout))
        rec = m.record(left)
        if rec is None:
            fail("memtop exited (rc %s) before naming %s; stderr: %s" %
                 (m.wait(5), function, m.err.text()[-600:]))
        if function in sites_by_function(rec):
            return m, rec


def cpu_s(pid):
    """utime + stime of a live process, in seconds."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def where_waiting(pid):
    """Each thread of pid: its state and the kernel function it waits in."""
    try:
        tids = sorted(os.listdir("/proc/%d/task" % pid))
    except OSError:
        return "(it has just ended)"
    out = []
    for tid in tids:
        try:
            with open("/proc/%d/task/%s/stat" % (pid, tid)) as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
            with open("/proc/%d/task/%s/wchan" % (pid, tid)) as f:
                wchan = f.read().strip()
        except OSError:
            continue
        out.append("%s %s %s" % (tid, state, wchan or "-"))
    return "; ".join(out)


def stop_quickly(m, before, sig=signal.SIGINT):
    """sig (INT, TERM or HUP) ends memtop within STOP_WITHIN_S, status 0,
    nothing left. On a loaded machine any exit takes longer, whatever the
    target does (the probes' grace periods, the frees, waiting for a
    core): a stop past STOP_WITHIN_S passes when memtop spent at most
    STOP_CPU_S of its own CPU time between the signal and its end, which
    load does not stretch, so what fails is work a target made memtop do
    (as five reads of a 17 MiB maps text once did: over a second of CPU)."""
    cpu0 = cpu_s(m.pid)
    t0 = time.monotonic()
    m.send(sig)
    while True:
        pid, status, usage = os.wait4(m.pid, os.WNOHANG)
        if pid:
            break
        if time.monotonic() - t0 > BLOCKED_AFTER_S:
            fail("memtop still running %.1fs after %s (blocked?), %.2f s of its CPU since; "
                 "where its threads wait: %s" % (BLOCKED_AFTER_S, sig.name, cpu_s(m.pid) - cpu0,
                                                  where_waiting(m.pid)))
        time.sleep(0.01)  # polling the exit: wait4 has no timeout
    took = time.monotonic() - t0
    rc = m.popen.returncode = os.waitstatus_to_exitcode(status)
    cpu = usage.ru_utime + usage.ru_stime - cpu0
    m.out.join()
    m.err.join()
    check(rc == 0, "memtop exited with %s after %s; stderr: %s" % (rc, sig.name,
                                                                  m.err.text()[-500:]))
    print("stop: %.2f s after %s, %.2f s of memtop's CPU" % (took, sig.name, cpu))
    check(took < STOP_WITHIN_S or cpu <= STOP_CPU_S,
          "memtop took %.2fs to end after %s and %.2fs of its CPU (at most %.1fs, or %.1fs "
          "of CPU on a loaded machine)" % (took, sig.name, cpu, STOP_WITHIN_S, STOP_CPU_S))
    assert_nothing_left(before)
    return took


# ==== The attacks ====

def test_mapped_library_replaced_by_fifo():
    """The target maps libhostile.so, deletes it and puts a FIFO at its
    name: a reader that opens the name waits forever for a writer."""
    d = lab()
    _, so = build(d)
    before = bpf_snapshot()
    _, pid = start([os.path.join(d, "hostile"), "--lib", so, "--tamper", "fifo"])
    check(stat.S_ISFIFO(os.lstat(so).st_mode), "the attacker's FIFO is not there")
    m, _ = watch_until(pid, "hostile_lib_alloc")
    stop_quickly(m, before, signal.SIGTERM)


def test_deleted_mapping_now_a_symlink_to_shadow():
    """The mapped library is deleted and its name made a symlink to
    /etc/shadow: the site is named from the mapping, /etc/shadow is never
    opened."""
    d = lab()
    _, so = build(d)
    before = bpf_snapshot()
    _, pid = start([os.path.join(d, "hostile"), "--lib", so, "--tamper", "symlink:" + SHADOW])
    check(os.readlink(so) == SHADOW, "the attacker's symlink is not there")
    w = OpenWatch(SHADOW)
    try:
        m, _ = watch_until(pid, "hostile_lib_alloc")
        stop_quickly(m, before)
        n = w.opens()
    finally:
        w.close()
    check(n == 0, "%s was opened or read %d times while memtop ran" % (SHADOW, n))


def test_debuglink_names_a_fifo_and_shadow():
    """A stripped library whose .gnu_debuglink names a FIFO in its own
    directory, and in .debug/ a symlink to /etc/shadow: memtop names the
    site from .dynsym and opens neither."""
    d = lab()
    _, so = build(d, lib_flags=("-O2", "-g"))
    dbg = os.path.join(d, "libhostile.debug")
    subprocess.run(["objcopy", "--only-keep-debug", so, dbg], check=True)
    subprocess.run(["strip", "--strip-debug", "--strip-unneeded", so], check=True)
    subprocess.run(["objcopy", "--add-gnu-debuglink=" + dbg, so], check=True)
    os.unlink(dbg)
    as_nobody("mkfifo", dbg)
    as_nobody("mkdir", os.path.join(d, ".debug"))
    as_nobody("ln", "-s", SHADOW, os.path.join(d, ".debug", "libhostile.debug"))
    before = bpf_snapshot()
    _, pid = start([os.path.join(d, "hostile"), "--lib", so])
    w = OpenWatch(SHADOW)
    try:
        m, _ = watch_until(pid, "hostile_lib_alloc")
        stop_quickly(m, before, signal.SIGHUP)
        n = w.opens()
    finally:
        w.close()
    check(n == 0, "%s was opened or read %d times while memtop ran" % (SHADOW, n))


def chroot_lab(root):
    """root made a chroot nobody owns (glibc and its loader copied in), and
    the doubled path a host reader would build (ROOT/ROOT/lib/...), made by
    nobody: where an attacker plants what it wants. Returns that path."""
    libdir = os.path.join(root, "lib", "x86_64-linux-gnu")
    for src, dst in (("/lib/x86_64-linux-gnu/libc.so.6", libdir),
                     ("/lib64/ld-linux-x86-64.so.2", os.path.join(root, "lib64"))):
        os.makedirs(dst, exist_ok=True)
        shutil.copy(src, dst)
    subprocess.run(["chown", "-R", "65534:65534", root], check=True)
    doubled = os.path.join(root, libdir.lstrip("/"))
    as_nobody("mkdir", "-p", doubled)
    return doubled


def test_chrooted_target_plants_paths():
    """A target chrooted into a directory nobody owns: its maps show host
    paths (ROOT/lib/.../libc.so.6), so a host reader that prefixes
    /proc/PID/root reads ROOT/ROOT/lib/...: the attacker puts a FIFO there.
    It also plants absolute symlinks to /etc/shadow at its build-ID debug
    path (the executable has no DWARF, so memtop looks there) and as its
    /etc/ld.so.preload (read to find the allocator), which resolved on the
    host would be the host's shadow file. memtop must probe
    the real libc (allocations counted), name the site, and open neither."""
    root = lab()
    exe = build(root, lib=False)[0]
    doubled = chroot_lab(root)
    as_nobody("mkfifo", os.path.join(doubled, "libc.so.6"))
    bid = subprocess.run(["readelf", "-n", exe], capture_output=True, text=True).stdout
    bid = [l.split(":")[1].strip() for l in bid.splitlines() if "Build ID" in l]
    check(bid, "the hostile executable has no build ID")
    bdir = os.path.join(root, "usr/lib/debug/.build-id", bid[0][:2])
    as_nobody("mkdir", "-p", bdir)
    as_nobody("ln", "-s", SHADOW, os.path.join(bdir, bid[0][2:] + ".debug"))
    # and its /etc/ld.so.preload, which memtop reads to find the allocator
    as_nobody("mkdir", "-p", os.path.join(root, "etc"))
    as_nobody("ln", "-s", SHADOW, os.path.join(root, "etc", "ld.so.preload"))
    before = bpf_snapshot()
    _, pid = start(["/hostile"], prefix=("chroot", "--userspec=65534:65534", root))
    w = OpenWatch(SHADOW)
    try:
        m, rec = watch_until(pid, "hostile_main_alloc")
        t = [x for x in rec["targets"] if x["pid"] == pid]
        check(t and (t[0]["alloc_calls"] or 0) > 0,
              "the real libc is not what was probed: %s" % t)
        stop_quickly(m, before)
        n = w.opens()
    finally:
        w.close()
    check(n == 0, "%s was opened or read %d times while memtop ran" % (SHADOW, n))


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


def test_signals_while_attaching():
    """A signal at three moments of start-up: once its programs are loaded
    (before any link), once it attaches (a link exists), and once it has
    said it is attached (the unprobed measure or the loop). Each ends it
    within 1 s, status 0, nothing left."""
    d = lab()
    exe = build(d, lib=False)[0]
    _, pid = start([exe])
    before = bpf_snapshot()
    moments = (("programs loaded", signal.SIGINT, lambda m: "bpf-prog" in bpf_fds(m.pid)),
               ("attaching", signal.SIGTERM, lambda m: "bpf_link" in bpf_fds(m.pid)),
               ("attached", signal.SIGHUP, lambda m: "attached" in m.err.text()))
    for what, sig, reached in moments:
        m = Memtop(*MEMTOP_ARGS, "-p", pid)
        t0 = time.monotonic()
        while not reached(m):
            check(m.poll() is None, "memtop exited (rc %s) before %s: %s" %
                  (m.poll(), what, m.err.text()[-300:]))
            check(time.monotonic() - t0 < 20, "memtop never reached '%s'" % what)
            time.sleep(0.002)  # polling memtop's descriptors, not synchronising
        stop_quickly(m, before, sig)


def test_signal_while_flooded():
    """A target that allocates without pause at --rate 4K (a sample per
    call, far more than memtop can unwind): SIGINT still ends memtop
    within 1 s, the ring's backlog notwithstanding."""
    d = lab()
    exe = build(d, lib=False)[0]
    _, pid = start([exe, "--flood", "yes"])
    before = bpf_snapshot()
    m = Memtop("-b", "--json", "-d", "0.3", "--rate", "4K", "--max-overhead", "none", "-p", pid)
    rec = m.first_record()
    for _ in range(20):
        if rec["overhead"]["events_per_s"] > 2000 or rec["dropped"]["events"]:
            break
        rec = m.record()
    check(rec["overhead"]["events_per_s"] > 2000 or rec["dropped"]["events"],
          "the flood did not reach memtop: %s" % rec["overhead"])
    stop_quickly(m, before)


def tui_until(args, text, what, before):
    """memtop's TUI (in a pty) with args until its screen shows text; then
    SIGINT ends it within STOP_WITHIN_S, status 0, nothing left. Returns
    everything it wrote to the terminal."""
    master, slave = pty.openpty()
    env = dict(os.environ, TERM="xterm-256color", LANG="C.UTF-8")
    p = subprocess.Popen([os.path.join(os.environ.get("MEMTOP_BUILD", os.path.join(ROOT, "build")),
                                       "memtop")] + [str(a) for a in args],
                         stdin=slave, stdout=slave, stderr=slave, env=env, close_fds=True)
    os.close(slave)
    screen = []
    done = threading.Event()

    def drain():
        while True:
            try:
                b = os.read(master, 65536)
            except OSError:
                break
            if not b:
                break
            screen.append(b.decode("utf-8", "replace"))
        done.set()

    threading.Thread(target=drain, daemon=True).start()
    try:
        t0 = time.monotonic()
        while text not in "".join(screen):
            if time.monotonic() - t0 > 15 or p.poll() is not None:
                fail("the TUI never said %s (rc %s): %r" % (what, p.poll(), "".join(screen)[-400:]))
            time.sleep(0.05)  # polling the screen, not synchronising
        p.send_signal(signal.SIGINT)
        try:
            rc = p.wait(timeout=STOP_WITHIN_S)
        except subprocess.TimeoutExpired:
            fail("memtop TUI still running %.1fs after SIGINT" % STOP_WITHIN_S)
        check(rc == 0, "memtop TUI exited with %s after SIGINT" % rc)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        done.wait(2)
        os.close(master)
    assert_nothing_left(before)
    return "".join(screen)


def elf_headers(data):
    """(section headers as lists, {name: index}, program headers) of an
    ELF64 little-endian image."""
    phoff, shoff = struct.unpack_from("<QQ", data, 0x20)
    phentsize, phnum, shentsize, shnum, shstrndx = struct.unpack_from("<HHHHH", data, 0x36)
    shdrs = [list(struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize))
             for i in range(shnum)]
    base = shdrs[shstrndx][4]
    names = {bytes(data[base + h[0]:data.index(b"\0", base + h[0])]).decode(): i
             for i, h in enumerate(shdrs)}
    phdrs = [struct.unpack_from("<IIQQQQQQ", data, phoff + i * phentsize) for i in range(phnum)]
    return shdrs, names, phdrs


def test_malformed_libraries():
    """Three libraries the loader maps happily but whose ELF is wrong for a
    reader: one whose .comment section claims to lie 128 TiB into the file,
    one cut after its last loaded segment (its section headers gone), one
    stripped with a 1-byte build ID (too short to name a debug file). One
    memtop watches the three targets: no crash, each library's site is
    there (module+offset for the first two, named from .dynsym for the
    third), and it stops within 1 s."""
    d = lab()
    exe, so = build(d)
    libs = {}
    with open(so, "rb") as f:
        data = bytearray(f.read())
    shdrs, names, phdrs = elf_headers(data)
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, = struct.unpack_from("<H", data, 0x3a)
    bogus = bytearray(data)
    struct.pack_into("<Q", bogus, shoff + names[".comment"] * shentsize + 0x18, 1 << 47)
    cut_at = max(p[2] + p[5] for p in phdrs if p[0] == 1)  # PT_LOAD: offset + filesz
    for name, body in (("libbogus.so", bogus), ("libcut.so", data[:cut_at])):
        libs[name] = os.path.join(d, name)
        with open(libs[name], "wb") as f:
            f.write(body)
    libs["libbid.so"] = os.path.join(d, "libbid.so")
    cc("-O2", "-shared", "-fPIC", "-Wl,--build-id=0x01", "-o", libs["libbid.so"],
       os.path.join(SRC, "libhostile.c"))
    subprocess.run(["strip", "--strip-unneeded", libs["libbid.so"]], check=True)
    for p in libs.values():
        os.chown(p, 65534, 65534)
    before = bpf_snapshot()
    pids = [start([exe, "--lib", libs[n]])[1] for n in sorted(libs)]
    m = Memtop(*MEMTOP_ARGS, "-p", ",".join(map(str, pids)))
    want = {"libbogus.so": None, "libcut.so": None, "libbid.so": "hostile_lib_alloc"}
    t0 = time.monotonic()
    while True:
        rec = m.record(10)
        if rec is None:
            fail("memtop exited (rc %s): %s" % (m.wait(5), m.err.text()[-400:]))
        got = {s["module"]: s["function"] for s in rec["sites"] if s["module"] in want}
        if got == want:
            break
        check(time.monotonic() - t0 < 20, "sites of the libraries: %s, expected %s" % (got, want))
    stop_quickly(m, before)


def test_exec_while_attaching():
    """The target execs another program the moment memtop creates its
    first probe link: memtop goes on, watches the new program (COMM
    follows, its site appears), and stops within 1 s, nothing left."""
    d = lab()
    exe = build(d, lib=False)[0]
    again = os.path.join(d, "hostile2")
    shutil.copy(exe, again)
    os.chown(again, 65534, 65534)
    p, pid = start([exe, "--exec", again])
    before = bpf_snapshot()
    m = Memtop(*MEMTOP_ARGS, "-p", pid)
    t0 = time.monotonic()
    while "bpf_link" not in bpf_fds(m.pid):
        check(m.poll() is None, "memtop exited (rc %s): %s" % (m.poll(), m.err.text()[-300:]))
        check(time.monotonic() - t0 < 20, "memtop never attached")
        time.sleep(0.002)  # polling memtop's descriptors, not synchronising
    exec_and_see_new_image(p, pid, m, within_s=10, alive=True)
    stop_quickly(m, before)


def exec_and_see_new_image(p, pid, m, within_s, alive=False):
    """Make the hostile program (started with --exec hostile2) exec, then
    read m's records until its target has COMM hostile2 (and, with alive,
    is alive) with the new image's hostile_main_alloc site; the last record."""
    p.popen.stdin.write(b"x")
    p.popen.stdin.flush()
    line = p.out.get(10, "the exec'd program's READY")
    check(line and line.startswith("READY pid=%d" % pid), "the exec did not happen: %r" % line)
    t0 = time.monotonic()
    while True:
        rec = m.record(10)
        if rec is None:
            fail("memtop exited (rc %s): %s" % (m.wait(5), m.err.text()[-400:]))
        t = [x for x in rec["targets"] if x["pid"] == pid]
        if t and t[0]["comm"] == "hostile2" and (t[0]["alive"] or not alive) and \
                "hostile_main_alloc" in sites_by_function(rec):
            return rec
        check(time.monotonic() - t0 < within_s, "after the exec: %s, sites %s" %
              (t, list(sites_by_function(rec))))


def test_theme_fifo():
    """--theme naming a FIFO (nobody's, nobody writes to it): the TUI comes
    up with the built-in theme and says why; SIGINT still ends it."""
    d = lab()
    exe = build(d, lib=False)[0]
    fifo = os.path.join(d, "evil.theme")
    as_nobody("mkfifo", fifo)
    _, pid = start([exe])
    before = bpf_snapshot()
    tui_until(["--theme", fifo, "-d", "0.3", "-p", pid], "not a regular file",
              "the theme is not a regular file", before)


def test_escape_sequences_in_comm():
    """A target names itself, and the function that allocates, with
    terminal escapes (OSC title, clear screen, BEL): -b stdout and every
    stderr line show them as '?', the JSON keeps the real names, escaped."""
    d = lab()
    exe = build(d, lib=False)[0]
    evil = "ev\x1b]0;PWN\x07\x1b[2J"
    _, pid = start([exe, "--comm", evil, "--evil-sym", "yes"])
    with open("/proc/%d/comm" % pid) as f:
        check(f.read().rstrip("\n") == evil, "the target did not take its name")
    m = Memtop("-b", "-n", "3", "-d", "0.3", "-p", pid)
    rc = m.wait(40)
    check(rc == 0, "memtop -b exited with %s: %s" % (rc, m.err.text()[-300:]))
    for label, text in (("stdout", m.out.text()), ("stderr", m.err.text())):
        bad = sorted({c for c in text if ord(c) < 0x20 and c != "\n" or ord(c) == 0x7f})
        check(not bad, "control characters %r reach %s: %r" % (bad, label, text[-300:]))
    check("ev?]0;PWN??[2J" in m.out.text(), "the sanitized name is not in the table: %s" %
          m.out.text()[-300:])
    check("hostile_evil?]0;PWN??[2J" in m.out.text(), "the sanitized symbol name is not a "
          "site: %s" % m.out.text()[-400:])
    check("(ev?]0;PWN??[2J)" in m.err.text(), "the attached line does not show the sanitized "
          "name: %s" % m.err.text()[-300:])
    j = Memtop("-b", "--json", "-n", "10", "-d", "0.2", "-p", pid)
    rec = j.first_record()
    check([t["comm"] for t in rec["targets"]] == [evil],
          "JSON should carry the real name, escaped: %r" % [t["comm"] for t in rec["targets"]])
    for _ in range(10):
        if rec["sites"]:
            break
        rec = j.record()
    check("hostile_evil" + evil[2:] in [x["function"] for x in rec["sites"]],
          "JSON should carry the real symbol name, escaped: %r" %
          [x["function"] for x in rec["sites"]])
    j.wait(30)


def on_a_terminal(args, timeout=60):
    """memtop with args, its stdin, stdout and stderr one pty (raw: the
    bytes memtop writes are the bytes the terminal gets): (exit status,
    those bytes)."""
    master, slave = pty.openpty()
    tty.setraw(slave)
    env = dict(os.environ, TERM="xterm-256color", LANG="C.UTF-8")
    p = subprocess.Popen([MEMTOP] + [str(a) for a in args], stdin=slave, stdout=slave,
                         stderr=slave, env=env, close_fds=True)
    os.close(slave)
    got = []
    try:
        while True:
            try:
                b = os.read(master, 65536)
            except OSError:  # EIO: every writer closed the terminal
                break
            if not b:
                break
            got.append(b)
        rc = p.wait(timeout=timeout)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        os.close(master)
    return rc, b"".join(got)


def control_bytes(data):
    """Control characters in data that a terminal would act on: C0 but the
    newline, DEL, C1 (raw bytes 0x80-0x9f outside a UTF-8 sequence, or
    U+0080-U+009F encoded), as a sorted list of code points."""
    text = data.decode("utf-8", "surrogateescape")
    bad = set()
    for c in text:
        o = ord(c)
        if (o < 0x20 and c != "\n") or o == 0x7f or 0x80 <= o <= 0x9f:
            bad.add(o)
        elif 0xdc80 <= o <= 0xdc9f:  # an undecodable byte 0x80-0x9f
            bad.add(o - 0xdc00)
    return sorted(bad)


def test_escape_sequences_on_a_terminal():
    """Two targets (nobody's) that name themselves with terminal escapes:
    one allocates through a function whose symbol carries them, the other
    runs from a stripped copy of the program whose file name carries them
    (its frames are FILE+0xOFFSET). memtop -b with --folded /dev/stdout,
    its stdout and stderr a terminal: neither the tables, nor the folded
    stacks (comm-PID prefixes, function and file names), nor any stderr
    line puts an ESC, another C0 or a C1 byte on it; the folded lines are
    there, sanitized ('?'; ';' as '_'). The same with --json. --output
    /dev/stdout on the terminal (a gzipped profile) is refused in one
    line before anything is attached."""
    d = lab()
    exe = build(d, lib=False)[0]
    named = os.path.join(d, "hos\x1b[2Jtile\x1b]0;T\x07")
    shutil.copy(exe, named)
    subprocess.run(["strip", "-s", named], check=True)
    os.chown(named, 65534, 65534)
    evil = "ev\x1b]0;PWN\x07\x1b[2J"
    _, a = start([exe, "--comm", evil, "--evil-sym", "yes", "--leak", "yes"])
    _, b = start([named, "--comm", "st\x1b[31mripped", "--leak", "yes"])
    before = bpf_snapshot()
    pids = "%d,%d" % (a, b)
    for mode in (("-b",), ("-b", "--json")):
        rc, out = on_a_terminal([*mode, "-n", "4", "-d", "0.3", "--rate", "4K",
                                 "--folded", "/dev/stdout", "-p", pids])
        text = out.decode("utf-8", "replace")
        check(rc == 0, "memtop %s exited with %s: %r" % (" ".join(mode), rc, text[-400:]))
        bad = control_bytes(out)
        check(not bad, "%s: control characters %s reach the terminal: %r" %
              (" ".join(mode), ["0x%02x" % c for c in bad], text[-400:]))
        folded = [l for l in text.splitlines() if re.match(r"^\S.*-\d+;.* \d+$", l)]
        check(any(l.startswith("ev?]0_PWN??[2J-%d;" % a) and "hostile_evil?]0_PWN??[2J" in l
                  for l in folded),
              "no sanitized folded line of the evil symbol: %r" % folded[:6])
        check(any(l.startswith("st?[31mripped-%d;" % b) and "hos?[2Jtile?]0_T?+0x" in l
                  for l in folded),
              "no sanitized folded line of the evil file name: %r" % folded[:6])
    assert_nothing_left(before)
    rc, out = on_a_terminal(["-b", "-n", "2", "--output", "/dev/stdout", "-p", pids])
    text = out.decode("utf-8", "replace")
    lines = [l for l in text.splitlines() if l.strip()]
    check(rc == 1 and len(lines) == 1 and re.match(
        r"^memtop: cannot write /dev/stdout: a terminal \(the profile is gzip-compressed binary",
        lines[0]), "--output on a terminal: rc %s, %r" % (rc, text[-400:]))
    assert_nothing_left(before)

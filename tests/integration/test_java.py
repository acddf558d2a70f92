"""Java services through the JVM's own sampled allocation events
(docs/java.md): memtop loads its JVMTI agent (build/libmemtop-jvmti.so)
into a running JVM through HotSpot's attach mechanism, as the JVM's user
and inside its mount namespace, and the JVM's samples (SampledObjectAlloc,
at --rate) and frees (ObjectFree of tagged objects) enter the model as
MT_EV_NAMED and MT_EV_FREE records.

The workload (tests/workloads/java/MtJava.java, Debian's OpenJDK 17)
prints READY, waits for a byte on stdin, and then prints its truth once a
second: a leak (memtop.workload.Leaker.leak, 1.6 MB/s kept forever), a
bounded LRU cache (memtop.workload.Cache.put, full before READY, renewed
every second) and churn (memtop.workload.Churn.burn).

With plain `memtop -b --json -p PID` the leak must rank first by leak
score (>= 70) within 30 s of memtop's start and the cache score <= 30,
the leak's in-use within 25% of what the program kept since the trigger
(memtop is attached before it); libjvm's native sites are shown beside
them with their own mechanism. A JVM with -XX:+DisableAttachMechanism is
refused in one line, untouched (no trigger file, no thread dump), its
native allocations still shown; so is a process that looks like a JVM and
never answers (within the attach's bound). A JVM in another mount namespace (its own
/tmp) running as nobody is attached all the same. SIGKILL of memtop ends
the agent's session: the JVM runs on at its bare speed and the next memtop
reuses the agent and says so."""

import json
import os
import shutil
import signal
import statistics
import subprocess
import tempfile
import time

from memtop_test import (BUILD, WORKLOADS, Memtop, Proc, assert_nothing_left, bpf_snapshot,
                         check, fail, parse_truth)

JAVA = shutil.which("java") or "/usr/lib/jvm/java-17-openjdk-amd64/bin/java"
CLASSES = os.path.join(WORKLOADS, "java")
LEAK = "memtop.workload.Leaker.leak"
CACHE = "memtop.workload.Cache.put"
LEAK_MIN = 70.0
CACHE_MAX = 30.0
DEADLINE_S = 30.0
INUSE_TOLERANCE = 0.25
# in-use is compared once the leak holds this many live samples: a
# relative sampling error of 1/sqrt(100) = 10%, the tolerance 2.5 of them
ESTIMATE_SAMPLES = 100
# The bench loop's JVM: one GC thread and a fixed heap, so a machine shared
# with other work moves its figures less.
BENCH_JVM = ["-XX:+UseSerialGC", "-Xms512m", "-Xmx512m"]
SAMPLED = "Java heap sampled through memtop's JVMTI agent"
# include/memtop/jvm_wire.h: the agent's cap on samples a second
SAMPLES_PER_S_MAX = 8000


class JavaWorkload(Proc):
    """MtJava in a JVM; its truth lines are read on a thread."""

    def __init__(self, mode="scenario", jvm_args=(), argv=None):
        super().__init__(argv or [JAVA, "-Xmx768m"] + list(jvm_args) +
                         ["-cp", CLASSES, "memtop.workload.MtJava", mode], name="java")

    def wait_ready(self, timeout=30):
        t0 = time.monotonic()
        while True:
            line = self.out.get(max(0.1, timeout - (time.monotonic() - t0)), "java READY")
            if line is None:
                fail("java exited before READY (rc %s): %s" % (self.poll(),
                                                               self.err.text()[-400:]))
            if line.startswith("READY"):
                return self

    def trigger(self):
        self.popen.stdin.write(b"g")
        self.popen.stdin.flush()

    def truths(self):
        return [parse_truth(l, "java") for l in self.out.lines if l.startswith("{")]

    def truth_at(self, wall):
        """The truth line printed nearest to wall (unix seconds)."""
        ts = self.truths()
        check(ts, "the Java workload printed no truth")
        return min(ts, key=lambda t: abs(t["wall"] - wall))


def wait_stderr(m, needle, timeout=30):
    """The first stderr line of memtop containing needle."""
    t0 = time.monotonic()
    while True:
        line = m.err.get(max(0.1, timeout - (time.monotonic() - t0)), "memtop: %r" % needle)
        if line is None:
            fail("memtop exited (rc %s) before saying %r: %s" % (m.poll(), needle,
                                                                 m.err.text()[-600:]))
        if needle in line:
            return line


def sites_by_function(rec):
    out = {}
    for s in rec["sites"]:
        acc = out.setdefault(s["function"], {"leak_score": 0, "inuse_bytes": 0, "samples": 0,
                                             "mechanism": s["mechanism"], "file": s["file"],
                                             "line": s["line"]})
        acc["leak_score"] = max(acc["leak_score"], s["leak_score"])
        acc["inuse_bytes"] += s["inuse_bytes"]
        acc["samples"] += s["samples"]
    return out


def java_target(rec, pid):
    for t in rec["targets"]:
        if t["pid"] == pid:
            return t
    fail("pid %d is not among memtop's targets" % pid)


def verdict(rec):
    sites = sites_by_function(rec)
    if LEAK not in sites or CACHE not in sites:
        return "sites so far: %s" % sorted(f for f in sites if f)[:8]
    scores = {f: s["leak_score"] for f, s in sites.items()}
    top = max(scores, key=scores.get)
    if top != LEAK or scores[LEAK] < LEAK_MIN or scores[CACHE] > CACHE_MAX:
        return "scores %s" % {f: scores[f] for f in sorted(scores, key=scores.get)[-4:]}
    return None


def watch_java(w, m, t_start):
    """Records until the leak ranks first and the cache scores low, within
    DEADLINE_S of memtop's start; returns that record."""
    why = "no record yet"
    while time.monotonic() - t_start < DEADLINE_S:
        rec = m.record(5)
        if rec is None:
            fail("memtop exited (rc %s): %s" % (m.poll(), m.err.text()[-400:]))
        why = verdict(rec)
        if why is None:
            return rec, time.monotonic() - t_start
    fail("within %.0f s of memtop's start %s should rank first by leak score (>= %.0f) and "
         "%s score <= %.0f: %s" % (DEADLINE_S, LEAK, LEAK_MIN, CACHE, CACHE_MAX, why))


def inuse_record(m, rec, timeout=60):
    """rec, or a later record once the leak's sites hold ESTIMATE_SAMPLES
    live samples: when it first ranks (some 10 s in) they hold 20-30, a
    relative sampling error of about 20%, too close to INUSE_TOLERANCE
    for one comparison to say anything."""
    t0 = time.monotonic()
    while sum(s["live_samples"] for s in rec["sites"] if s["function"] == LEAK) < \
            ESTIMATE_SAMPLES:
        check(time.monotonic() - t0 < timeout, "the leak's sites hold %d live samples after "
              "%.0f s" % (sum(s["live_samples"] for s in rec["sites"] if s["function"] == LEAK),
                          timeout))
        rec = m.record(5)
        check(rec is not None, "memtop exited: %s" % m.err.text()[-300:])
    return rec


def check_inuse(rec, w):
    truth = w.truth_at(rec["time"])
    est = sites_by_function(rec)[LEAK]["inuse_bytes"]
    err = abs(est - truth["leaked_bytes"]) / truth["leaked_bytes"]
    check(err <= INUSE_TOLERANCE,
          "%s in use %.1f MiB, the program kept %.1f MiB (%.0f%% off, at most %.0f%%)" %
          (LEAK, est / 2**20, truth["leaked_bytes"] / 2**20, 100 * err, 100 * INUSE_TOLERANCE))
    return err


def test_java_leak_first():
    """-p with plain defaults: the leak first, the cache low, in-use right,
    named package.Class.method (File.java:LINE), native sites beside."""
    before = bpf_snapshot()
    w = JavaWorkload().wait_ready()
    rec_dir = tempfile.mkdtemp(prefix="memtop-java-rec-")
    recording = os.path.join(rec_dir, "java.rec")
    t_start = time.monotonic()
    m = Memtop("-b", "--json", "-p", w.pid, "--record", recording)
    wait_stderr(m, SAMPLED)
    w.trigger()
    rec, took = watch_java(w, m, t_start)
    err = check_inuse(inuse_record(m, rec), w)
    sites = sites_by_function(rec)
    leak = sites[LEAK]
    check(leak["mechanism"] == "jvmti" and leak["file"] == "MtJava.java" and leak["line"] > 0,
          "the leak's site should be named by the JVM: %s" % leak)
    native = [s for s in rec["sites"] if s["mechanism"] not in ("jvmti", None)]
    check(native, "libjvm's native sites should stay visible beside the Java ones")
    t = java_target(rec, w.pid)
    check(t["java"] and t["java"]["mechanism"] == "jvmti" and t["java"]["samples"] > 0,
          "the target should say its Java heap is sampled: %s" % t["java"])
    print("leak first after %.1f s of memtop (score %.1f), cache %.1f, in-use %.1f%% off" %
          (took, leak["leak_score"], sites[CACHE]["leak_score"], 100 * err))
    m.send(signal.SIGINT)
    check(m.drain() == 0, "memtop should end cleanly on SIGINT")
    w.kill()
    assert_nothing_left(before)
    # the recording holds the Java samples as any other: a replay names them
    r = Memtop("--replay", recording, "-b", "--json")
    last = None
    while True:
        rec = r.record(20)
        if rec is None:
            break
        last = rec
    shutil.rmtree(rec_dir, ignore_errors=True)
    check(last is not None, "the replay printed nothing: %s" % r.err.text()[-300:])
    replayed = sites_by_function(last).get(LEAK)
    check(replayed and replayed["mechanism"] == "jvmti" and replayed["file"] == "MtJava.java" and
          replayed["line"] == leak["line"] and replayed["inuse_bytes"] > 0,
          "the replay should show the Java leak as it was live: %s" % replayed)


def test_java_attach_refused():
    """-XX:+DisableAttachMechanism: one line, the JVM untouched (no trigger
    file, no thread dump), its native allocations still watched."""
    w = JavaWorkload(jvm_args=["-XX:+DisableAttachMechanism"]).wait_ready()
    w.trigger()
    m = Memtop("-b", "--json", "-p", w.pid, "-n", "3")
    line = wait_stderr(m, "is not sampled")
    check("DisableAttachMechanism" in line and "native allocations are" in line,
          "the refusal should say why and that native allocations are still seen: %s" % line)
    rec = m.first_record()
    t = java_target(rec, w.pid)
    check(t["java"] and t["java"]["mechanism"] is None, "java should be refused: %s" % t["java"])
    check(t["mechanism"] in ("in-process", "uprobes"), "native mechanism: %s" % t["mechanism"])
    check(m.drain() == 0, "memtop should run on without the Java heap")
    check(not os.path.exists("/tmp/.attach_pid%d" % w.pid), "a trigger file was left")
    check(not any("Full thread dump" in l for l in w.out.lines),
          "the JVM was sent SIGQUIT (it printed a thread dump)")
    check(w.poll() is None, "the JVM should still run")
    check(not any(SAMPLED in l for l in m.err.lines), "the JVM was attached")
    w.kill()


def test_java_other_mount_namespace():
    """A JVM in a mount namespace of its own (a private /tmp), running as
    nobody: memtop reaches it as its user, through its root."""
    tmp = tempfile.mkdtemp(prefix="memtop-java-", dir="/var/tmp")  # /tmp is hidden there
    try:
        shutil.copytree(CLASSES, os.path.join(tmp, "classes"))
        os.chmod(tmp, 0o755)
        script = ("mount -t tmpfs -o mode=1777 tmpfs /tmp && exec setpriv --reuid nobody "
                  "--regid nogroup --clear-groups %s -Xmx256m -cp %s/classes "
                  "memtop.workload.MtJava scenario" % (JAVA, tmp))
        w = JavaWorkload(argv=["unshare", "-m", "--propagation", "private", "sh", "-c",
                               script])
        # the Proc's argv[0] is unshare: READY comes from the JVM
        w.wait_ready()
        w.trigger()
        jpid = int([l for l in w.out.lines if l.startswith("READY")][0].split("=")[1])
        check(os.readlink("/proc/%d/ns/mnt" % jpid) != os.readlink("/proc/self/ns/mnt"),
              "the JVM should be in a mount namespace of its own")
        # (its /tmp a file system of its own: a name in ours could be an
        # earlier JVM's that had its PID)
        check(os.stat("/proc/%d/root/tmp" % jpid).st_dev != os.stat("/tmp").st_dev,
              "its /tmp should be its own")
        ours = "/tmp/.memtop-jvmti-%d" % jpid
        # an earlier test's killed JVM with this PID (PIDs wrap) may have
        # left its socket here: only a new one would be this agent's
        before = os.lstat(ours) if os.path.lexists(ours) else None
        m = Memtop("-b", "--json", "-p", jpid)
        wait_stderr(m, SAMPLED)
        t0 = time.monotonic()
        while time.monotonic() - t0 < 20:
            rec = m.record(5)
            check(rec is not None, "memtop exited: %s" % m.err.text()[-400:])
            s = sites_by_function(rec).get(LEAK)
            if s and s["samples"] >= 5:
                break
        else:
            fail("no Java samples from a JVM in another mount namespace")
        after = os.lstat(ours) if os.path.lexists(ours) else None
        check(after is None or (before is not None and
                                (after.st_ino, after.st_ctime_ns) ==
                                (before.st_ino, before.st_ctime_ns)),
              "the agent's socket should be in the JVM's /tmp, not memtop's")
        m.kill()
        w.kill()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def rounds_rate(w, since, n):
    """Allocations per CPU millisecond of the JVM (all its threads) over n
    ROUND lines of the bench workload printed after line index since: the
    machine's other load moves wall time, not this. Returns the median."""
    t0 = time.monotonic()
    while sum(1 for l in w.out.lines[since:] if l.startswith("ROUND")) < n + 1:
        check(time.monotonic() - t0 < 60, "the Java bench loop stopped printing rounds")
        time.sleep(0.05)  # its lines arrive every 250 ms; we wait for them
    lines = [l.split() for l in w.out.lines[since:] if l.startswith("ROUND")][:n + 1]
    rates = [int(b[2]) / max(1, (int(b[3]) - int(a[3])) / 1e6) for a, b in zip(lines, lines[1:])]
    return statistics.median(rates)


def warm_up(w, timeout=90):
    """Wait until the JIT has compiled the bench loop: on a loaded machine
    C2's code comes seconds after the start and runs some 50 times faster
    than before. Warm: at least 10 s, and two windows of 8 rounds in a
    row within 25% of each other."""
    t0 = time.monotonic()
    last = rounds_rate(w, 0, 8)
    while True:
        check(time.monotonic() - t0 < timeout, "the JVM's bench loop did not settle")
        now = rounds_rate(w, len(w.out.lines), 8)
        if time.monotonic() - t0 >= 10 and abs(now - last) <= 0.25 * max(now, last):
            return
        last = now


def test_java_sigkill_then_reuse():
    """SIGKILL of memtop: the agent's session ends (events off, interval
    back: the agent serves one session at a time, so the next memtop's
    session, which reuses the agent, says so and gets samples, begins only
    after that end). When the JVM then ends, the agent's socket goes from
    its /tmp. The JVM's speed bare, watched at 64K and after the kill is
    printed, not checked: sampling at 64K costs this loop nothing
    measurable (64,004 against 64,205 allocations per CPU ms bare), while
    the loop's compiled code comes in two shapes whose speeds differ by a
    third (the JIT may recompile it when the session's events go off), so
    a speed check could not tell sampling left on from the slower shape
    and failed on that shape in a CI run (0.59-0.65 of bare in four
    windows)."""
    w = JavaWorkload(mode="bench", jvm_args=BENCH_JVM).wait_ready()
    warm_up(w)
    bare = rounds_rate(w, len(w.out.lines), 12)
    m = Memtop("-b", "--json", "-p", w.pid, "--rate", "64K")
    wait_stderr(m, SAMPLED)
    m.first_record()
    m.record()
    watched = rounds_rate(w, len(w.out.lines), 6)
    m.send(signal.SIGKILL)
    m.wait(10)
    after = rounds_rate(w, len(w.out.lines) + 4, 12)
    m2 = Memtop("-b", "--json", "-p", w.pid, "-n", "3")
    line = wait_stderr(m2, SAMPLED)
    check("reused" in line, "the second memtop should reuse the agent and say so: %s" % line)
    last = None
    while True:
        rec = m2.record(10)
        if rec is None:
            break
        last = rec
    check(last and java_target(last, w.pid)["java"]["samples"] > 0,
          "the reused agent should stream samples")
    print("allocations per CPU ms: bare %.0f, watched (64K) %.0f, after SIGKILL %.0f" % (bare, watched, after))
    # the JVM's own end (EOF on its stdin: System.exit) takes the agent's
    # socket out of its /tmp
    sock = "/tmp/.memtop-jvmti-%d" % w.pid
    check(os.path.exists(sock), "the agent's socket %s should be there while the JVM runs" % sock)
    w.popen.stdin.close()
    rc = w.wait(30)
    check(rc == 0, "the JVM should end on EOF with 0, not %s: %s" % (rc, w.err.text()[-300:]))
    check(not os.path.exists(sock), "the JVM ended and left the agent's socket %s" % sock)


def test_java_sample_cap():
    """The bench loop allocates some 50 million arrays a second: over
    8,000 samples a second at 512 KiB. The agent widens its interval, says
    so once, keeps the samples near the cap, and since each sample is
    weighed by the interval it was drawn with, the loop's allocation rate
    shown stays its true one (the loop counts its arrays)."""
    w = JavaWorkload(mode="bench", jvm_args=BENCH_JVM).wait_ready()
    warm_up(w)
    m = Memtop("-b", "--json", "-p", w.pid, "-d", "1")
    line = wait_stderr(m, "Java samples a second")
    check("widened to" in line, "the widening should be said: %s" % line)
    recs = []
    while len(recs) < 10:  # past the rate window (8 s) of the first record
        rec = m.record(10)
        check(rec is not None, "memtop exited: %s" % m.err.text()[-300:])
        recs.append(rec)
    (ta, a), (tb, b) = [(r["time"], java_target(r, w.pid)["java"]) for r in (recs[-5], recs[-1])]
    per_s = (b["samples"] - a["samples"]) / (tb - ta)
    check(per_s <= 1.5 * SAMPLES_PER_S_MAX,
          "%.0f samples a second, past the cap of %d" % (per_s, SAMPLES_PER_S_MAX))
    # shown: the loop's arrays a second over the last five intervals (each
    # record's rate is over its own interval); counted: the loop's ROUND
    # lines (stamped with System.nanoTime(), CLOCK_MONOTONIC on Linux) of
    # the same span, the record times moved from the wall clock to the
    # monotonic one: on a loaded machine the loop's rate moves by half
    # from one second to the next
    span = recs[-5:]
    objects = 0
    for r in span:
        sites = [x for x in r["sites"] if x["function"] == "memtop.workload.Bench.run"]
        check(sites, "the loop's site is not shown: %s" % list(sites_by_function(r)))
        objects += sum(x["alloc_objects_per_s"] for x in sites) * r["interval_s"]
    t0 = span[0]["time"] - span[0]["interval_s"]
    shown = objects / (span[-1]["time"] - t0)
    to_mono_ms = lambda wall: (wall - (time.time() - time.monotonic())) * 1000
    rounds = [(int(r[1]), int(r[2])) for r in (l.split() for l in list(w.out.lines)
                                               if l.startswith("ROUND"))]
    inside = [i for i, (t, _) in enumerate(rounds)
              if to_mono_ms(t0) < t <= to_mono_ms(span[-1]["time"])]
    check(len(inside) >= 8 and inside[0] > 0,
          "%d rounds of the loop in memtop's last five intervals" % len(inside))
    truth = sum(rounds[i][1] for i in inside) / (
        (rounds[inside[-1]][0] - rounds[inside[0] - 1][0]) / 1000)
    print("sample cap: %.0f samples/s; %s; arrays/s shown %.0f, counted %.0f (%+.1f%%)" %
          (per_s, line.split(": ", 2)[-1], shown, truth, 100 * (shown / truth - 1)))
    check(abs(shown / truth - 1) <= 0.25,
          "arrays a second shown %.0f, counted %.0f: the widened samples are misweighed" %
          (shown, truth))
    m.send(signal.SIGINT)
    check(m.wait(15) == 0, "memtop did not end cleanly")
    w.kill()


FAKE_JVM = r"""
import ctypes, os, signal, sys
signal.signal(signal.SIGQUIT, lambda *a: print("QUIT", flush=True))  # never answered
ctypes.CDLL(sys.argv[1])                        # mapped as libjvm.so
print("READY pid=%d" % os.getpid(), flush=True)
sys.stdin.read()
"""


def test_java_attach_unanswered():
    """A process that looks like a JVM (libjvm.so mapped, SIGQUIT caught)
    and never starts an attach listener, running as nobody: memtop gives
    up within its bound, in one line, leaves no trigger file, and watches
    its native allocations."""
    tmp = tempfile.mkdtemp(prefix="memtop-fakejvm-", dir="/var/tmp")
    try:
        os.chmod(tmp, 0o755)
        lib = os.path.join(tmp, "libjvm.so")
        shutil.copy("/lib/x86_64-linux-gnu/libz.so.1", lib)
        os.chmod(lib, 0o755)
        w = JavaWorkload(argv=["setpriv", "--reuid", "nobody", "--regid", "nogroup",
                               "--clear-groups", "python3", "-c", FAKE_JVM, lib])
        w.wait_ready()
        t0 = time.monotonic()
        m = Memtop("-b", "--json", "-p", w.pid, "-n", "2")
        line = wait_stderr(m, "is not sampled")
        took = time.monotonic() - t0
        check("did not start within" in line and "native allocations are" in line,
              "the refusal should say the JVM did not answer: %s" % line)
        check(took < 15, "memtop waited %.1f s for a JVM that never answers" % took)
        rec = m.first_record()
        check(java_target(rec, w.pid)["mechanism"] in ("in-process", "uprobes"),
              "its native allocations should be watched")
        check(m.drain() == 0, "memtop should run on")
        check(not os.path.exists("/tmp/.attach_pid%d" % w.pid), "a trigger file was left")
        # a copy is .memtop-jvmti-PID-STAMP.so; .memtop-jvmti-PID alone is
        # the socket an agent listens on, which a killed JVM of an earlier
        # test (its PID a prefix of this one's, or this one's before the
        # PIDs wrapped) leaves
        copies = [f for f in os.listdir("/tmp") if f.startswith(".memtop-jvmti-%d-" % w.pid)]
        check(not copies, "an agent copy was left in /tmp: %s" % copies)
        check(w.poll() is None, "the process should still run")
        w.kill()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def test_java_too_old_untouched():
    """A JVM whose Java home's release file says Java 10 (read inside its
    root, as its user): refused in one line before anything is sent to it
    (its SIGQUIT handler never runs), its native allocations watched."""
    tmp = tempfile.mkdtemp(prefix="memtop-oldjvm-", dir="/var/tmp")
    try:
        os.chmod(tmp, 0o755)
        server = os.path.join(tmp, "lib", "server")
        os.makedirs(server)
        for d in (os.path.join(tmp, "lib"), server):
            os.chmod(d, 0o755)
        lib = os.path.join(server, "libjvm.so")
        shutil.copy("/lib/x86_64-linux-gnu/libz.so.1", lib)
        os.chmod(lib, 0o755)
        with open(os.path.join(tmp, "release"), "w") as f:
            f.write('IMPLEMENTOR="test"\nJAVA_VERSION="10.0.2"\n')
        os.chmod(os.path.join(tmp, "release"), 0o644)
        w = JavaWorkload(argv=["setpriv", "--reuid", "nobody", "--regid", "nogroup",
                               "--clear-groups", "python3", "-c", FAKE_JVM, lib])
        w.wait_ready()
        m = Memtop("-b", "--json", "-p", w.pid, "-n", "2")
        line = wait_stderr(m, "is not sampled")
        check("Java 10" in line and "needs Java 11" in line,
              "the refusal should name the version: %s" % line)
        check(m.drain() == 0, "memtop should run on")
        check(not any("QUIT" in l for l in w.out.lines), "the JVM was sent SIGQUIT")
        check(not os.path.exists("/tmp/.attach_pid%d" % w.pid), "a trigger file was created")
        w.kill()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def wait_java_leak_samples(m, when):
    """Records until a target's JVMTI agent has samples and the leak has a
    Java site, within DEADLINE_S; that target. when: the failure's words."""
    t0, target, leak = time.monotonic(), None, None
    while not (target and leak):
        check(time.monotonic() - t0 < DEADLINE_S,
              "no Java samples of the leak %s within %.0fs (target: %s)" %
              (when, DEADLINE_S, target))
        rec = m.record(5)
        check(rec is not None, "memtop exited: %s" % m.err.text()[-400:])
        target = next((t for t in rec["targets"] if t.get("java") and
                       t["java"]["mechanism"] == "jvmti" and t["java"]["samples"] > 0), None)
        leak = next((s for s in rec["sites"]
                     if s["mechanism"] == "jvmti" and s["function"] == LEAK), None)
    return target


def test_java_under_command():
    """memtop -- java: memtop attaches to its command once the loader is
    done, before the `java` launcher (libjli.so) has loaded its VM
    (libjvm.so): the JVM row waits for the VM instead of deciding the
    process is not a JVM (the same race a JVM joining a --cgroup meets),
    then samples its Java heap, and the JVM is no longer named as a heap
    memtop cannot see."""
    m = Memtop("-b", "--json", "-d", "0.5", "--", JAVA, "-Xmx256m", "-cp", CLASSES,
               "memtop.workload.MtJava", "scenario", stdin=subprocess.PIPE)
    try:
        wait_stderr(m, SAMPLED)
        m.popen.stdin.write(b"g")
        m.popen.stdin.flush()
        target = wait_java_leak_samples(m, "under -- java")
        check(target.get("runtime", "") != "JVM",
              "a JVM whose heap is sampled is not named unseen: %s" % target.get("runtime"))
        m.send(signal.SIGINT)
        m.drain(20)
    finally:
        m.kill()


def test_java_after_exec():
    """memtop -p on a shell that then execs java (a container's entrypoint
    script): the exec is a new program, looked at afresh, so its Java heap
    is sampled although the shell was no JVM when memtop attached."""
    sh = Proc(["sh", "-c", 'read go; exec "$@"', "sh", JAVA, "-Xmx256m", "-cp", CLASSES,
               "memtop.workload.MtJava", "scenario"], name="entrypoint")
    m = Memtop("-b", "--json", "-d", "0.5", "-p", sh.pid)
    try:
        rec = m.first_record()
        check(rec["targets"][0]["pid"] == sh.pid, "not the shell: %s" % rec["targets"])
        sh.popen.stdin.write(b"exec\n")
        sh.popen.stdin.flush()
        wait_stderr(m, SAMPLED)
        sh.popen.stdin.write(b"g")
        sh.popen.stdin.flush()
        target = wait_java_leak_samples(m, "after the exec")
        check(target["pid"] == sh.pid, "another target: %s" % target["pid"])
        check(target["comm"] == "java", "the target's name after the exec: %s" % target["comm"])
        m.send(signal.SIGINT)
        check(m.wait(20) == 0, "memtop exited %s" % m.poll())
    finally:
        m.kill()
        sh.kill()


def test_java_cgroup():
    """--cgroup: a JVM there before memtop and one started after (attached
    once its VM handles SIGQUIT) both have their Java heap sampled."""
    from test_cgroup import Cgroup
    cg = Cgroup("memtop-java")
    try:
        argv = [JAVA, "-Xmx256m", "-cp", CLASSES, "memtop.workload.MtJava", "scenario"]
        first = cg.spawn(*argv)
        JavaWorkload.wait_ready(first)
        JavaWorkload.trigger(first)
        m = Memtop("-b", "--json", "--cgroup", cg.path)
        wait_stderr(m, "PID %d: %s" % (first.pid, SAMPLED))
        second = cg.spawn(*argv)
        JavaWorkload.wait_ready(second)
        JavaWorkload.trigger(second)
        wait_stderr(m, "PID %d: %s" % (second.pid, SAMPLED))
        seen = set()
        t0 = time.monotonic()
        while seen != {first.pid, second.pid}:
            check(time.monotonic() - t0 < 30, "Java samples of %s only" % sorted(seen))
            rec = m.record(5)
            check(rec is not None, "memtop exited: %s" % m.err.text()[-400:])
            seen = {t["pid"] for t in rec["targets"]
                    if t.get("java") and t["java"]["mechanism"] == "jvmti" and
                    t["java"]["samples"] > 0}
        check(any(s["mechanism"] == "jvmti" and s["function"] == LEAK for s in rec["sites"]),
              "the leak's Java site should be shown")
        m.kill()
        first.kill()
        second.kill()
    finally:
        cg.remove()

"""Node.js services (issue 26): memtop names the JavaScript function, file
and line that leaks, from V8's sampling heap profiler, run inside the
process by memtop's agent (libmemtop-v8.so, docs/node.md), started on the
JavaScript thread while it waits in its event loop: no inspector, no port,
no socket. The workload (tests/workloads/node/node_leaky.js) measures its
own truth with V8's accounting (used_heap_size between full collections).

These run the node `make deps` installs (/usr/bin/node); MEMTOP_TEST_NODE
names another (a wrapper that sets its library path is fine: Debian's
Node 18 unpacked aside, tests/node18 says how)."""

import json
import os
import re
import signal
import subprocess
import time

from memtop_test import ROOT, MEMTOP, Memtop, Proc, check, fail, target

NODE = os.environ.get("MEMTOP_TEST_NODE", "/usr/bin/node")
WORKLOAD = os.path.join(ROOT, "tests", "workloads", "node", "node_leaky.js")
AGENT = os.path.join(os.path.dirname(MEMTOP), "libmemtop-v8.so")
LEAK_MIN = 70.0
CACHE_MAX = 30.0
WITHIN_S = 30.0
# in-use of the leaking site against V8's own accounting, compared once
# the site has ESTIMATE_SAMPLES live samples: a relative sampling error of
# 1/sqrt(144) = 8%, so 30% is more than three standard deviations
INUSE_TOLERANCE = 0.30
ESTIMATE_SAMPLES = 144
# The leak reaches ESTIMATE_SAMPLES in about 13 s of its full speed (8,000
# records of 723 bytes a second, one sample per 512 KiB); a loaded machine
# slows the workload's timer, so the wait is bounded by this, and the
# workload runs long enough to leak on through it.
SAMPLES_WAIT_S = 75.0


def start_node(duration):
    p = Proc([NODE, "--expose-gc", WORKLOAD, "--duration", str(duration)], name="node_leaky")
    line = p.out.get(20, "node_leaky READY")
    check(line and line.startswith("READY"), "node_leaky did not start: %s" % p.err.text()[-300:])
    return p


def go(p):
    p.popen.stdin.write(b"g")
    p.popen.stdin.flush()


def stop_truth(p):
    p.popen.stdin.write(b"s")
    p.popen.stdin.flush()
    line = p.out.get(30, "node_leaky truth")
    check(line and line.startswith("{"), "no truth from node_leaky")
    return json.loads(line)


def function_line(name):
    """The line where the workload defines function name (V8's line)."""
    with open(WORKLOAD) as f:
        for i, line in enumerate(f, 1):
            if re.match(r"\s*function %s\(" % name, line):
                return i
    fail("no function %s in %s" % (name, WORKLOAD))


def sockets(pid):
    """The socket inodes pid holds, and those of them listening (TCP, UDP,
    Unix): what another user could reach."""
    held = set()
    for fd in os.listdir("/proc/%d/fd" % pid):
        try:
            link = os.readlink("/proc/%d/fd/%s" % (pid, fd))
        except OSError:
            continue
        m = re.match(r"socket:\[(\d+)\]", link)
        if m:
            held.add(int(m.group(1)))
    listening = set()
    for name in ("tcp", "tcp6", "udp", "udp6"):
        with open("/proc/%d/net/%s" % (pid, name)) as f:
            for line in f.readlines()[1:]:
                parts = line.split()
                # state 0A: LISTEN (tcp); udp sockets are reachable bound
                if int(parts[9]) in held and (name.startswith("udp") or parts[3] == "0A"):
                    listening.add(int(parts[9]))
    with open("/proc/%d/net/unix" % pid) as f:
        for line in f.readlines()[1:]:
            parts = line.split()
            # flags 00010000: __SO_ACCEPTCON, a listening socket
            if int(parts[6]) in held and int(parts[3], 16) & 0x10000:
                listening.add(int(parts[6]))
    return held, listening


def agent_state(pid):
    """The agent's state in pid (v8_abi.h, enum mt_v8_state), read through
    /proc/PID/mem at its control block; None when no agent is mapped."""
    out = subprocess.run(["readelf", "-sW", AGENT], capture_output=True, text=True).stdout
    ctl = next(int(l.split()[1], 16) for l in out.splitlines() if l.endswith(" mt_v8_ctl"))
    base = None
    with open("/proc/%d/maps" % pid) as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 6 and parts[5] == "/memfd:memtop-v8" and int(parts[2], 16) == 0:
                base = int(parts[0].split("-")[0], 16)
    if base is None:
        return None
    with open("/proc/%d/mem" % pid, "rb") as f:
        f.seek(base + ctl + 12)  # magic (8), version (4), state (4)
        return int.from_bytes(f.read(4), "little")


def wait_leak_first(m, pid, within_s=WITHIN_S):
    """Records until leakRecords tops the sites by leak score with at least
    LEAK_MIN while cacheStep scores at most CACHE_MAX; returns (site,
    seconds it took) or fails naming the last top sites."""
    t0 = time.monotonic()
    ss = []
    while time.monotonic() - t0 < within_s + 2:
        rec = m.record(10)
        if rec is None:
            fail("memtop exited: %s" % m.err.text()[-500:])
        ss = sorted([s for s in rec["sites"]], key=lambda s: -s["leak_score"])
        if not ss:
            continue
        top = ss[0]
        cache = max((s["leak_score"] for s in ss if s["function"] == "cacheStep"), default=0)
        if top["function"] == "leakRecords" and top["leak_score"] >= LEAK_MIN and \
                cache <= CACHE_MAX:
            return top, time.monotonic() - t0, rec
    fail("leakRecords never ranked first with a score >= %.0f and cacheStep <= %.0f within "
         "%.0f s; last sites: %s" % (LEAK_MIN, CACHE_MAX, within_s,
                                     [(s["mechanism"], s["function"][:40], s.get("line"),
                                       round(s["leak_score"])) for s in ss[:6]]))


def test_node_leak_first():
    """memtop -p NODE_PID with default options: the leaking JavaScript
    function ranks first by leak score (>= 70) within 30 s, named
    `leakRecords (node_leaky.js:LINE)` with V8's line; the bounded cache
    scores <= 30; the leak's in-use is within 30% of V8's own accounting;
    native sites stay beside the JavaScript ones; memtop adds no socket to
    the process, listening or not; at exit V8's profiler is stopped and
    the process runs on."""
    p = start_node(WITHIN_S + SAMPLES_WAIT_S + 20)
    held0, listening0 = sockets(p.pid)
    m = Memtop("-b", "--json", "-d", "1", "-p", p.pid)
    rec = m.first_record()
    t = target(rec, p.pid)
    check(t["mechanism"] == "in-process+v8-sampling",
          "mechanism %r, expected in-process+v8-sampling: %s" % (t["mechanism"],
                                                                 m.err.text()[-500:]))
    check("sampling heap profiler started in-process" in m.err.text(),
          "memtop did not say it started V8's profiler: %s" % m.err.text()[-500:])
    go(p)
    top, took, rec = wait_leak_first(m, p.pid)
    check(top["mechanism"] == "v8-sampling" and top["module"] == "[js]",
          "the leak site is not a V8 one: %s" % {k: top[k] for k in ("mechanism", "module")})
    check((top.get("file") or "").endswith("node_leaky.js"), "file %r" % top.get("file"))
    check(top["line"] == function_line("leakRecords"),
          "line %s, leakRecords is defined at %d" % (top["line"], function_line("leakRecords")))
    # no socket added: the agent opens none, and nothing listens
    held1, listening1 = sockets(p.pid)
    check(held1 <= held0 and listening1 == listening0,
          "sockets before %s (listening %s), while watched %s (listening %s)" %
          (sorted(held0), sorted(listening0), sorted(held1), sorted(listening1)))
    # native allocations beside the JavaScript sites, each named by its source
    native = [s for s in rec["sites"] if s["mechanism"] != "v8-sampling"]
    check(native, "no native site beside the V8 ones: %s" %
          sorted(set(s["source"] for s in rec["sites"])))
    # in-use against V8's accounting, once the leak stopped
    t1 = time.monotonic()
    while sum(s["live_samples"] for s in rec["sites"] if s["function"] == "leakRecords") < \
            ESTIMATE_SAMPLES:
        check(time.monotonic() - t1 < SAMPLES_WAIT_S,
              "leakRecords has fewer than %d live samples after %.0f s" %
              (ESTIMATE_SAMPLES, SAMPLES_WAIT_S))
        rec = m.record(10)
        check(rec is not None, "memtop exited: %s" % m.err.text()[-500:])
    truth = stop_truth(p)
    rec = m.records_after(truth["time"], 2)
    est = sum(s["inuse_bytes"] for s in rec["sites"] if s["function"] == "leakRecords")
    want = truth["leak_bytes"]
    check(abs(est - want) <= INUSE_TOLERANCE * want,
          "in-use of leakRecords %.0f, V8's accounting %d (more than %d%% apart)" %
          (est, want, INUSE_TOLERANCE * 100))
    print("leak first after %.1f s (score %.0f); in-use %.1f MB, truth %.1f MB (%.1f%%)" %
          (took, top["leak_score"], est / 1e6, want / 1e6, 100.0 * (est - want) / want))
    m.send(signal.SIGINT)
    rc = m.drain(20)
    check(rc == 0, "memtop exited %s: %s" % (rc, m.err.text()[-500:]))
    check("sampling heap profiler stopped" in m.err.text(),
          "memtop did not stop V8's profiler: %s" % m.err.text()[-800:])
    check(agent_state(p.pid) == 2, "the agent's state is %s, not stopped" % agent_state(p.pid))
    check(p.poll() is None, "node_leaky died after memtop detached")
    p.popen.stdin.close()
    check(p.wait(10) == 0, "node_leaky failed after memtop detached: %s" % p.err.text()[-300:])


def test_node_sigkill_memtop():
    """SIGKILL of memtop: nobody tells the agent, so its lease (5 s) runs
    out and it stops V8's profiler itself on the JavaScript thread; the
    process runs on and ends normally, and a later memtop starts the agent
    again."""
    p = start_node(120)
    go(p)
    m = Memtop("-b", "--json", "-d", "1", "-p", p.pid)
    t0 = time.monotonic()
    while True:
        # a first record may take long on a loaded machine (the attach, the
        # agent's start on the JavaScript thread, the unprobed measure):
        # this test is about what a SIGKILL leaves, not about that time
        rec = m.record(30)
        check(rec is not None, "memtop gave no record in 30 s (rc %s): %s" %
              (m.poll(), m.err.text()[-500:]))
        if any(s["mechanism"] == "v8-sampling" for s in rec["sites"]):
            break
        check(time.monotonic() - t0 < 40, "no V8 site in 40 s")
    check(agent_state(p.pid) == 1, "the agent is not on: %s" % agent_state(p.pid))
    m.send(signal.SIGKILL)
    m.wait(10)
    killed = time.monotonic()
    while agent_state(p.pid) != 2:
        check(time.monotonic() - killed < 10,
              "the agent still runs 10 s after memtop's SIGKILL (state %s)" % agent_state(p.pid))
        time.sleep(0.2)
    print("agent stopped itself %.1f s after memtop's SIGKILL" % (time.monotonic() - killed))
    check(p.poll() is None, "node_leaky died after memtop's SIGKILL")
    # a later memtop reuses the mapped agent and starts it again
    m2 = Memtop("-b", "--json", "-d", "1", "-n", "4", "-p", p.pid)
    rc = m2.drain(30)
    check(rc == 0, "the second memtop exited %s: %s" % (rc, m2.err.text()[-500:]))
    check("sampling heap profiler started in-process" in m2.err.text(),
          "the second memtop did not start V8's profiler: %s" % m2.err.text()[-500:])
    check(any(s["mechanism"] == "v8-sampling" for r in m2.records for s in r["sites"]),
          "the second memtop saw no V8 site")
    truth = stop_truth(p)
    check(truth["leaked_records"] > 0, "no truth")
    p.popen.stdin.close()
    check(p.wait(10) == 0, "node_leaky failed: %s" % p.err.text()[-300:])


def test_node_no_inject():
    """--no-inject writes nothing into any process: no V8 agent mapped,
    no V8 site, the mechanism is uprobes."""
    p = start_node(60)
    go(p)
    m = Memtop("-b", "--json", "-d", "1", "-n", "3", "--no-inject", "-p", p.pid)
    rc = m.drain(30)
    check(rc == 0, "memtop exited %s: %s" % (rc, m.err.text()[-500:]))
    check(agent_state(p.pid) is None, "an agent was mapped under --no-inject")
    check(not any(s["mechanism"] == "v8-sampling" for r in m.records for s in r["sites"]),
          "a V8 site under --no-inject")
    p.popen.stdin.close()
    check(p.wait(10) == 0, "node_leaky failed: %s" % p.err.text()[-300:])


def test_node_cgroup():
    """--cgroup with Node processes in it: one there before memtop, one
    that joins after (started while memtop watches): both get V8's
    profiler (mechanism in-process+v8-sampling, said on stderr), and the
    leaking function ranks first."""
    from test_cgroup import Cgroup

    cg = Cgroup("memtop-node")
    procs = []
    try:
        a = cg.spawn(NODE, "--expose-gc", WORKLOAD, "--duration", "60")
        procs.append(a)
        check((a.out.get(20, "node READY") or "").startswith("READY"), "node did not start")
        m = Memtop("-b", "--json", "-d", "1", "--cgroup", cg.name)
        procs.append(m)
        rec = m.first_record()
        check(target(rec, a.pid)["mechanism"] == "in-process+v8-sampling",
              "mechanism of the first node: %s" % target(rec, a.pid)["mechanism"])
        b = cg.spawn(NODE, "--expose-gc", WORKLOAD, "--duration", "60")
        procs.append(b)
        check((b.out.get(20, "node READY") or "").startswith("READY"), "node did not start")
        go(a)
        go(b)
        wait_leak_first(m, a.pid)
        t0 = time.monotonic()
        while "PID %d: V8 " % b.pid not in m.err.text():
            check(time.monotonic() - t0 < 15, "the node that joined has no V8 profiler: %s" %
                  m.err.text()[-800:])
            check(m.record(10) is not None, "memtop exited: %s" % m.err.text()[-500:])
        rec = m.record(10)
        check(target(rec, b.pid)["mechanism"] == "in-process+v8-sampling",
              "mechanism of the node that joined: %s" % target(rec, b.pid)["mechanism"])
        m.send(signal.SIGINT)
        check(m.drain(20) == 0, "memtop failed: %s" % m.err.text()[-500:])
        for p in (a, b):
            check(agent_state(p.pid) == 2, "PID %d: the agent was not stopped" % p.pid)
            check(p.poll() is None, "PID %d died" % p.pid)
    finally:
        for p in procs:
            p.kill()
        cg.remove()


def test_node_hostile_agent():
    """A process of nobody's that exports V8's and libuv's function names
    (so memtop takes it for node) and maps its own memfd named memtop-v8,
    a fake agent "on, for a memtop that is gone", whose snapshots it
    rewrites every 20 ms with hostile contents (tests/workloads/hostile/
    fake_node.c: noise, overflowing counts, offsets past the text, parent
    cycles, NUL and escape bytes in names, names past the bound). memtop
    takes it over without running anything in it, refuses every bad
    snapshot, never crashes or stalls, shows no escape byte, and ends in
    time on SIGINT; the process lives."""
    from test_hostile import NOBODY, SRC, cc, lab, start as start_hostile

    d = lab()
    exe = os.path.join(d, "fake_node")
    cc("-O2", "-Wall", "-rdynamic", "-I", os.path.join(ROOT, "include"), "-o", exe,
       os.path.join(SRC, "fake_node.c"))
    os.chown(exe, 65534, 65534)
    syms = subprocess.run(["readelf", "-sW", AGENT], capture_output=True, text=True).stdout
    off = {l.split()[-1]: l.split()[1] for l in syms.splitlines()
           if l.strip().endswith((" mt_v8_ctl", " mt_v8_buf"))}
    p, pid = start_hostile([exe, off["mt_v8_ctl"], off["mt_v8_buf"]], prefix=NOBODY)
    m = Memtop("-b", "--json", "-d", "0.3", "-p", pid)
    rec = m.first_record()
    check(target(rec, pid)["mechanism"].endswith("+v8-sampling"),
          "memtop did not take the fake agent over: %s %s" % (target(rec, pid)["mechanism"],
                                                               m.err.text()[-500:]))
    t0 = time.monotonic()
    while time.monotonic() - t0 < 6:
        rec = m.record(5)
        check(rec is not None, "memtop exited: %s" % m.err.text()[-800:])
    for r in m.records:
        for s in r["sites"]:
            for f in s.get("stack", []):
                for k in ("function", "file"):
                    v = f.get(k) or ""
                    check("\x1b" not in v and "\x00" not in v and len(v) <= 256,
                          "a bad name taken in: %r" % v[:80])
    said = [l for l in m.err.lines if "does not hold together" in l]
    check(len(said) == 1, "the bad snapshots were not said once: %r" % said)
    m.send(signal.SIGINT)
    t1 = time.monotonic()
    rc = m.drain(10)
    check(rc == 0 and time.monotonic() - t1 < 5, "memtop ended %s after %.1f s: %s" %
          (rc, time.monotonic() - t1, m.err.text()[-500:]))
    check(p.poll() is None, "the fake node died")
    p.kill()


def test_node_version_refused():
    """A V8 the agent does not know the layouts of is refused in one line
    before anything but V8::GetVersion is called (MEMTOP_TEST_V8_NONE makes
    memtop accept none): the process is watched as native code, its agent
    says refused, V8's profiler was never started (a second memtop starts
    it: nothing of the first was left running), and the process is
    unharmed."""
    p = start_node(60)
    go(p)
    env = dict(os.environ, MEMTOP_TEST_V8_NONE="1")
    m = Memtop("-b", "--json", "-d", "1", "-n", "3", "-p", p.pid, env=env)
    rc = m.drain(30)
    check(rc == 0, "memtop exited %s: %s" % (rc, m.err.text()[-500:]))
    said = [l for l in m.err.lines if "V8 version not supported" in l]
    check(len(said) == 1 and "its V8 heap is not sampled" in said[0],
          "not one line for the refused V8: %r" % m.err.text()[-800:])
    check(re.search(r"PID %d: V8 \d+\.\d+\.\d+" % p.pid, said[0]), "the line names no version: %r"
          % said[0])
    check(target(m.records[-1], p.pid)["mechanism"] == "in-process",
          "mechanism %r" % target(m.records[-1], p.pid)["mechanism"])
    check(not any(s["mechanism"] == "v8-sampling" for r in m.records for s in r["sites"]),
          "a V8 site from a refused V8")
    check(agent_state(p.pid) == 3, "the agent's state is %s, not refused" % agent_state(p.pid))
    m2 = Memtop("-b", "--json", "-d", "1", "-n", "3", "-p", p.pid)
    check(m2.drain(30) == 0 and "sampling heap profiler started" in m2.err.text(),
          "a later memtop could not start V8's profiler: %s" % m2.err.text()[-500:])
    p.popen.stdin.close()
    check(p.wait(10) == 0, "node_leaky failed: %s" % p.err.text()[-300:])

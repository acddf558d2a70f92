"""Integrity of a process memtop changed (issue 23 item 4): with default
options memtop loads its sampler into the process, and whatever the
process computes must be what it computes bare. Each test runs the same
deterministic work twice, bare and under a default memtop that attaches
before the work, samples some of it and exits (putting the process back)
while or after it runs, and
compares what the program itself reports: redis-server's DEBUG DIGEST and
key count after a fixed command stream (jemalloc behind the sampler), and
a CPython program's checksum of the objects it built (the object
allocator wrapped), a C program's checksum of every byte of every block
it checked (inject_target sum) with glibc, jemalloc and tcmalloc serving
its malloc, and a Go program's checksum of what it built (the Go
runtime's profile rate set and put back). glibc programs also check their
own bytes in test_inject (inject_target churn: CORRUPT on any byte not
written)."""

import os
import shutil
import signal
import subprocess
import tempfile
import time

from memtop_test import Memtop, Proc, RedisServer, check, target, workload_path


# ==== redis-server ====

def redis_commands(n=20000):
    """A fixed stream of SET, LPUSH and HSET commands in the protocol."""
    out = []
    for i in range(n):
        k = i % 5000
        for args in (("SET", "key:%d" % k, "v%d-%s" % (i, "x" * (i % 300))),
                     ("LPUSH", "list:%d" % (k % 97), "item%d" % i),
                     ("HSET", "hash:%d" % (k % 31), "f%d" % k, "%d" % (i * 7))):
            out.append("*%d\r\n" % len(args) +
                       "".join("$%d\r\n%s\r\n" % (len(a), a) for a in args))
    return "".join(out).encode()


def test_redis_digest_same_as_bare():
    check(shutil.which("redis-server") and shutil.which("redis-cli"),
          "redis-server and redis-cli are needed (make deps)")
    data = redis_commands()
    tmp = tempfile.mkdtemp(prefix="memtop-integrity-")
    try:
        bare = RedisServer(tmp, "bare")
        bare.load(data)
        bare.load(data)
        want = bare.state()
        watched = RedisServer(tmp, "watched")
        m = Memtop("-b", "--json", "-d", "0.5", "-p", watched.proc.pid)
        t = target(m.first_record(), watched.proc.pid)
        check(t["mechanism"] == "in-process", "redis-server not sampled in-process: %s" % t)
        watched.load(data)
        rec = m.record(10)
        check(rec and target(rec, watched.proc.pid)["samples"] > 0,
              "nothing sampled while redis loaded the stream")
        m.send(signal.SIGINT)
        check(m.wait(10) == 0, "memtop: %s" % m.err.text()[-400:])
        check("GOT restored" in m.err.text(), "redis-server not put back: %s" %
              m.err.text()[-400:])
        watched.load(data)  # after memtop: through the GOT put back
        got = watched.state()
        check(got == want, "redis-server under memtop: digest and keys %s, bare %s" %
              (got, want))
        check(watched.proc.poll() is None, "redis-server died")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# ==== CPython ====

PY_WORK = r"""
import hashlib, sys
print("READY", flush=True)
sys.stdin.readline()
h = hashlib.sha256()
keep = {}
for i in range(300000):
    s = "%d:%s" % (i, "y" * (i % 200))
    keep[i % 20000] = (s, [i, i * 3, str(i)], {"k": s[:17]})
    if i % 1000 == 0:
        h.update(repr(sorted(keep.items())[:50]).encode())
print("SUM", h.hexdigest(), len(keep), flush=True)
sys.stdin.readline()
"""


def python_sum(watch):
    p = Proc(["/usr/bin/python3", "-c", PY_WORK], stdin=subprocess.PIPE, name="python3")
    line = p.out.get(20, "python READY")
    check(line == "READY", "python3 did not start: %r %s" % (line, p.err.text()[-300:]))
    m = None
    if watch:
        m = Memtop("-b", "--json", "-d", "0.5", "-p", p.pid)
        t = target(m.first_record(), p.pid)
        check(t["mechanism"] == "in-process", "python3 not sampled in-process: %s" % t)
    p.popen.stdin.write(b"go\n")
    p.popen.stdin.flush()
    if m:
        m.record(10)
        m.send(signal.SIGINT)  # memtop leaves while the work goes on
        check(m.wait(10) == 0, "memtop: %s" % m.err.text()[-400:])
        check("GOT restored" in m.err.text(), "python3 not put back: %s" % m.err.text()[-400:])
    line = p.out.get(120, "python SUM")
    check(line and line.startswith("SUM"), "python3 printed %r: %s" % (line, p.err.text()[-300:]))
    p.popen.stdin.close()
    check(p.wait(20) == 0, "python3 failed: %s" % p.err.text()[-300:])
    return line


def test_cpython_result_same_as_bare():
    want = python_sum(False)
    got = python_sum(True)
    check(got == want, "CPython under memtop computed %s, bare %s" % (got, want))


# ==== a C program, behind glibc, jemalloc and tcmalloc ====

SUM_ARGS = ("sum", "3", "20000")
SUM_BATCHES = 3


def c_sums(preload, watch):
    """The lines "sum N HEX" of inject_target sum: batch 1 with memtop
    attached, batch 2 while memtop leaves (SIGINT sent as it starts),
    batch 3 after it. The allocator is the one preloaded (None: glibc)."""
    env = dict(os.environ)
    if preload:
        env["LD_PRELOAD"] = preload
    p = Proc([workload_path("inject_target")] + list(SUM_ARGS), stdin=subprocess.PIPE,
             name="inject_target sum", env=env)
    line = p.out.get(20, "inject_target READY")
    check(line and line.startswith("READY"), "inject_target did not start: %r %s" %
          (line, p.err.text()[-300:]))
    m = None
    if watch:
        m = Memtop("-b", "--json", "-d", "0.3", "-p", p.pid)
        t = target(m.first_record(), p.pid)
        check(t["mechanism"] == "in-process", "not sampled in-process: %s (%s)" %
              (t, m.err.text()[-300:]))
        want = {None: "glibc", "libjemalloc.so.2": "jemalloc",
                "libtcmalloc.so.4": "tcmalloc"}[preload]
        check(t["allocator"] == want,
              "memtop did not find %s: allocator %s (%s)" % (want, t["allocator"],
                                                              m.err.text()[-300:]))
    sums = []
    for n in range(1, SUM_BATCHES + 1):
        p.popen.stdin.write(b"go\n")
        p.popen.stdin.flush()
        if m and n == 2:
            m.send(signal.SIGINT)  # memtop leaves while the batch runs
        line = p.out.get(180, "inject_target sum %d" % n)
        check(line and line.startswith("sum %d " % n), "inject_target printed %r: %s" %
              (line, p.err.text()[-300:]))
        sums.append(line)
        if m and n == 1:
            rec = m.record(10)
            check(rec and target(rec, p.pid)["samples"] > 0, "nothing sampled in batch 1")
            check(target(rec, p.pid)["alloc_calls"] >= 20000,
                  "memtop counted %s calls of at least 60000" % target(rec, p.pid)["alloc_calls"])
    if m:
        check(m.drain(20) == 0, "memtop: %s" % m.err.text()[-400:])
        check("GOT restored" in m.err.text(), "not put back: %s" % m.err.text()[-400:])
    p.popen.stdin.close()
    check(p.wait(20) == 0, "inject_target failed: %s" % p.err.text()[-300:])
    return sums


def c_same_as_bare(preload):
    want = c_sums(preload, False)
    got = c_sums(preload, True)
    check(got == want, "under memtop: %s, bare: %s" % (got, want))


def test_glibc_sums_same_as_bare():
    c_same_as_bare(None)


def test_jemalloc_sums_same_as_bare():
    c_same_as_bare("libjemalloc.so.2")


def test_tcmalloc_sums_same_as_bare():
    c_same_as_bare("libtcmalloc.so.4")


# ==== Go ====

def go_sums(name, watch):
    """The lines "sum N HEX KEYS" of mt_go -mode=sum: batch 1 with memtop
    attached (the Go runtime's sampled path), batch 2 while memtop leaves,
    batch 3 after it."""
    p = Proc([workload_path(name), "-mode=sum"], stdin=subprocess.PIPE, name=name)
    line = p.out.get(20, "%s READY" % name)
    check(line and line.startswith("READY"), "%s did not start: %r %s" %
          (name, line, p.err.text()[-300:]))
    m = None
    if watch:
        m = Memtop("-b", "--json", "-d", "0.3", "-p", p.pid)
        t = target(m.first_record(), p.pid)
        check(t["mechanism"] == "go-runtime", "%s not watched through the Go runtime: %s (%s)" %
              (name, t, m.err.text()[-300:]))
    sums = []
    for n in range(1, 4):
        p.popen.stdin.write(b"go\n")
        p.popen.stdin.flush()
        if m and n == 2:
            m.send(signal.SIGINT)
        line = p.out.get(120, "%s sum %d" % (name, n))
        check(line and line.startswith("sum %d " % n), "%s printed %r: %s" %
              (name, line, p.err.text()[-300:]))
        sums.append(line)
        if m and n == 1:
            rec = m.record(10)
            check(rec and target(rec, p.pid)["samples"] > 0, "%s: nothing sampled" % name)
    if m:
        check(m.drain(20) == 0, "memtop: %s" % m.err.text()[-400:])
    p.popen.stdin.close()
    check(p.wait(20) == 0, "%s failed: %s" % (name, p.err.text()[-300:]))
    return sums


def test_go_sums_same_as_bare():
    """mt_go (profile rate 512 KiB) and mt_go_noprof (rate 0, which memtop
    sets while it watches and puts back)."""
    for name in ("mt_go", "mt_go_noprof"):
        want = go_sums(name, False)
        got = go_sums(name, True)
        check(got == want, "%s under memtop: %s, bare: %s" % (name, got, want))

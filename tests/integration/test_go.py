"""Go programs through their runtime's own sampling (docs/go.md): entry
probes on runtime.mProf_Malloc and freeSpecial, no trap on an allocation
the runtime did not sample.

The workload (tests/workloads/go/mt_go.go, built static, cgo, stripped and
with each Go of bookworm-backports) prints READY and then its truth once a
second: a leak three frames deep (main.leakOuter -> leakMiddle ->
leakInner, the site), a cache (main.cacheFill) that fills to 16 MiB in its
first seconds and then plateaus, and churn (main.churn).

With plain `memtop -b --json -p PID` defaults the leak must rank first by
leak score (>= 70) and the cache score <= 30 within 45 s, for the static
and the cgo binary; -- CMD watches a static, stripped Go binary with names
from its Go symbol table; --cgroup watches the Go processes in the
cgroup and one started in it later; every Go version memtop knows is watched; a
program whose MemProfileRate is 0 (mt_go_noprof: nothing references
runtime.MemProfile) gets memtop's rate, said, and its 0 back when memtop
exits, also when memtop is killed; with --no-inject its rate stays 0 and is
said to give no samples; a version
memtop does not know is refused in one line; a target whose section
headers lie about its Go symbol table is still watched, named from its
ELF symbols."""

import os
import shutil
import signal
import struct
import tempfile
import time

from memtop_test import (WORKLOADS, Memtop, Proc, assert_nothing_left, assert_one_error_line,
                         bpf_snapshot, check, fail, parse_truth)
from test_cgroup import Cgroup, wait_ready

LEAK = "main.leakInner"
CACHE = "main.cacheFill"
CHURN = "main.churn"
LEAK_MIN = 70.0
CACHE_MAX = 30.0
DEADLINE_S = 45.0
HOLD_RECORDS = 3   # ... in this many records in a row


class GoWorkload(Proc):
    """mt_go (a variant from build/workloads) with its truth lines."""

    def __init__(self, binary, *args):
        path = binary if os.path.isabs(binary) else os.path.join(WORKLOADS, binary)
        super().__init__([path] + list(args), name=os.path.basename(path))
        self.ready_line = None

    def wait_ready(self, timeout=15):
        t0 = time.monotonic()
        while True:
            line = self.out.get(max(0.1, timeout - (time.monotonic() - t0)), "%s READY" % self.name)
            if line is None:
                fail("%s exited before READY (rc %s): %s" % (self.name, self.poll(),
                                                             self.err.text()[-400:]))
            if line.startswith("READY"):
                self.ready_line = line
                return self

    def last_truth(self):
        truths = [l for l in self.out.lines if l.startswith("{")]
        return parse_truth(truths[-1], self.name) if truths else None


def heap_sites(rec, pid):
    """{function: site} over the heap sites (memtop watches one process
    here): the highest leak score of a function's entries, their in-use and
    samples summed."""
    out = {}
    for s in rec["sites"]:
        if s.get("source") != "heap":
            continue
        acc = out.setdefault(s["function"], {"leak_score": 0, "inuse_bytes": 0, "samples": 0})
        acc["leak_score"] = max(acc["leak_score"], s["leak_score"])
        acc["inuse_bytes"] += s["inuse_bytes"]
        acc["samples"] += s["samples"]
    return out


def target_of(rec, pid):
    for t in rec["targets"]:
        if t["pid"] == pid:
            return t
    fail("pid %d is not in memtop's targets: %s" % (pid, [t["pid"] for t in rec["targets"]]))


def verdict(rec, pid):
    """None when the leak ranks first with a high score and the cache scores
    low; else what is still wrong."""
    sites = heap_sites(rec, pid)
    if LEAK not in sites or CACHE not in sites:
        return "sites so far: %s" % sorted(sites)
    scores = {f: s["leak_score"] for f, s in sites.items()}
    top = max(scores, key=scores.get)
    if top != LEAK or scores[LEAK] < LEAK_MIN or scores[CACHE] > CACHE_MAX:
        return "scores %s" % {f: scores[f] for f in sorted(scores, key=scores.get)[-4:]}
    return None


def watch_until_verdict(pairs):
    """pairs: [(workload, memtop)]. Read every memtop's records until each
    one's verdict holds in HOLD_RECORDS records in a row, within DEADLINE_S;
    fail with what is wrong."""
    t0 = time.monotonic()
    pending = {id(m): (w, m, "no record yet") for w, m in pairs}
    held = {id(m): 0 for w, m in pairs}
    while pending and time.monotonic() - t0 < DEADLINE_S:
        # each memtop prints a record a second: read them in turn
        for key, (w, m, _) in list(pending.items()):
            rec = m.record(5)
            if rec is None:
                fail("memtop -p %d exited (rc %s): %s" % (w.pid, m.poll(), m.err.text()[-400:]))
            why = verdict(rec, w.pid)
            held[key] = held[key] + 1 if why is None else 0
            if held[key] >= HOLD_RECORDS:
                check_inuse(rec, w)
                check_leak_stack(rec, w.name)
                check_rate_estimated(rec, w)
                del pending[key]
            else:
                pending[key] = (w, m, why or "held %d records" % held[key])
    for w, m, why in pending.values():
        fail("%s: within %.0f s %s should rank first by leak score (>= %.0f) and %s score "
             "<= %.0f: %s" % (w.name, DEADLINE_S, LEAK, LEAK_MIN, CACHE, CACHE_MAX, why))


def check_rate_estimated(rec, w):
    """memtop counts none of a Go program's calls: its allocation rate is
    the samples' estimate (not 0), and says it is not exact."""
    t = target_of(rec, w.pid)
    check(t["rates_exact"] is False and t["alloc_bytes_per_s"] > 0 and
          t["alloc_calls_per_s"] > 0, "%s: allocation rate not estimated: %s" % (w.name, t))


def check_inuse(rec, w):
    """The leak's in-use is what the program leaked since memtop attached,
    within sampling error (the run is short: a wide band)."""
    truth = w.last_truth()
    check(truth is not None, "%s printed no truth" % w.name)
    est = heap_sites(rec, w.pid)[LEAK]["inuse_bytes"]
    check(0.3 * truth["leak_bytes"] <= est <= 1.5 * truth["leak_bytes"],
          "%s: %s in use %.1f MiB, the program leaked %.1f MiB" %
          (w.name, LEAK, est / 2**20, truth["leak_bytes"] / 2**20))


def test_leak_ranks_first_static_and_cgo():
    """-p with plain defaults on the static and the cgo build, side by side."""
    pairs = []
    for binary in ("mt_go", "mt_go_cgo"):
        w = GoWorkload(binary).wait_ready()
        m = Memtop("-b", "--json", "-p", w.pid)
        first = m.first_record()
        t = target_of(first, w.pid)
        check(t["allocator"] == "go", "%s: allocator %r, expected go" % (binary, t["allocator"]))
        check(t["unseen_memory"] and "GC has swept" in t["unseen_memory"],
              "%s: the JSON should say frees come after the GC sweeps: %r" %
              (binary, t["unseen_memory"]))
        pairs.append((w, m))
    watch_until_verdict(pairs)
    for w, m in pairs:
        m.kill()
        w.kill()


def check_leak_stack(rec, what):
    """The leak's stack: leakInner called by leakMiddle called by leakOuter
    (frame pointers, with the runtime's frames below as allocator
    machinery)."""
    for s in rec["sites"]:
        if s.get("source") == "heap" and s["function"] == LEAK:
            names = [f.get("function") for f in s.get("stack", [])]
            i = names.index(LEAK) if LEAK in names else -1
            check(i >= 0 and names[i + 1:i + 3] == ["main.leakMiddle", "main.leakOuter"],
                  "%s: the leak's stack is %s" % (what, names[:12]))
            check(any(n and n.startswith("runtime.") for n in names[:i]),
                  "%s: no runtime frames below the site: %s" % (what, names[:12]))
            check(not s["truncated"] and names[-1] == "runtime.goexit",
                  "%s: a whole goroutine stack (down to runtime.goexit) is not truncated: "
                  "truncated %s, %s" % (what, s["truncated"], names[-4:]))
            return
    fail("%s: no heap site %s" % (what, LEAK))


def first_sample_record(m, what, timeout=20):
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        rec = m.record(max(0.1, timeout - (time.monotonic() - t0)))
        if rec is None:
            fail("%s: memtop exited (rc %s): %s" % (what, m.poll(), m.err.text()[-400:]))
        funcs = {s["function"]: s for s in rec["sites"] if s.get("source") == "heap"}
        if LEAK in funcs and funcs[LEAK]["samples"] >= 3 and CHURN in funcs:
            return rec, funcs
    fail("%s: no samples of %s and %s in %.0f s" % (what, LEAK, CHURN, timeout))


def test_command_static_stripped():
    """-- CMD on a static, stripped Go binary: no preload (the runtime samples
    itself), names and file:line from .gopclntab."""
    m = Memtop("-b", "--json", "--", os.path.join(WORKLOADS, "mt_go_stripped"), "-duration", "20")
    rec, funcs = first_sample_record(m, "-- mt_go_stripped")
    check(rec["targets"][0]["allocator"] == "go", "allocator: %s" % rec["targets"][0])
    leak = funcs[LEAK]
    check(leak.get("file", "").endswith("mt_go.go") and leak.get("line", 0) > 0,
          "%s named without its file:line from .gopclntab: %s" % (LEAK, leak))
    check_leak_stack(rec, "-- mt_go_stripped")
    m.kill()


def test_cgroup():
    """--cgroup: a Go process already in the cgroup and one that starts in
    it later are both watched through the Go runtime."""
    cg = Cgroup("memtop-go")
    try:
        first = cg.spawn(os.path.join(WORKLOADS, "mt_go"), "-duration", "30")
        wait_ready(first)
        m = Memtop("-b", "--json", "--cgroup", cg.path)
        m.first_record()
        later = cg.spawn(os.path.join(WORKLOADS, "mt_go_cgo"), "-duration", "30")
        wait_ready(later)
        t0, seen = time.monotonic(), {}
        while len(seen) < 2 and time.monotonic() - t0 < 20:
            rec = m.record(5)
            check(rec is not None, "memtop exited: %s" % m.err.text()[-400:])
            for t in rec["targets"]:
                if t["allocator"] == "go" and t["samples"] > 0:
                    seen[t["pid"]] = t
        check(set(seen) >= {first.pid, later.pid},
              "--cgroup: Go targets with samples %s, expected pids %d and %d: %s" %
              (sorted(seen), first.pid, later.pid,
               [(t["pid"], t["allocator"], t["samples"]) for t in rec["targets"]]))
        m.kill()
        first.kill()
        later.kill()
    finally:
        cg.remove()


def test_go_versions():
    """Every Go of bookworm-backports memtop knows (1.21, 1.22: mProf_Malloc(p,
    size); 1.23: mProf_Malloc(mp, p, size)), side by side."""
    runs = []
    for v in ("1.21", "1.22", "1.23"):
        w = GoWorkload("mt_go_" + v).wait_ready()
        check(("go" + v) in w.ready_line, "mt_go_%s runs %s" % (v, w.ready_line))
        runs.append((v, w, Memtop("-b", "--json", "-p", w.pid)))
    for v, w, m in runs:
        rec, funcs = first_sample_record(m, "go" + v)
        t = target_of(rec, w.pid)
        check(t["allocator"] == "go" and ("go" + v) in (t["unseen_memory"] or ""),
              "go%s: %s" % (v, t))
        # a sample weighs by the rate the runtime sampled at: bytes/sample
        # near the allocation sizes' weights, not zero or absurd
        check(0 < funcs[LEAK]["inuse_bytes"] < 64 * 2**20, "go%s: %s" % (v, funcs[LEAK]))
    for v, w, m in runs:
        m.kill()
        w.kill()


def truth_after(w, t_wall, timeout=10):
    """The first truth line w prints with a time after t_wall (unix s)."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        line = w.out.get(max(0.1, timeout - (time.monotonic() - t0)), "%s truth" % w.name)
        if line is None:
            fail("%s exited (rc %s)" % (w.name, w.poll()))
        if line.startswith("{"):
            truth = parse_truth(line, w.name)
            if truth["time"] > t_wall:
                return truth
    fail("%s: no truth line after %.1f within %.0f s" % (w.name, t_wall, timeout))


def rate_guards():
    """PIDs of the guards that put a MemProfileRate back (comm memtop-gorate)."""
    out = set()
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open("/proc/%s/comm" % d) as f:
                    if f.read().strip() == "memtop-gorate":
                        out.add(int(d))
            except OSError:
                pass
    return out


RATE_SET = "runtime.MemProfileRate was 0"


def test_no_pprof_leak_ranks_first():
    """A Go program that references nothing of runtime.MemProfile (no
    runtime/pprof: the linker sets MemProfileRate to 0), go1.19 and go1.23
    side by side, under plain `memtop -b --json -p PID`: memtop sets the
    rate to its own (512 KiB), says so, and the leak ranks first as with a
    program that samples itself. When memtop exits (SIGINT) the program's
    rate is 0 again; the runtime's profile buckets (BuckHashSys) stay."""
    pairs, before_rate, t_attach = [], {}, {}
    for binary in ("mt_go_noprof", "mt_go_noprof_1.23"):
        w = GoWorkload(binary).wait_ready()
        check(w.ready_line.endswith(" 0"), "%s starts with rate 0: %s" % (binary, w.ready_line))
        before_rate[w.pid] = truth_after(w, 0)
        t_attach[w.pid] = time.time()
        m = Memtop("-b", "--json", "-p", w.pid)
        rec = m.first_record()
        said = [l for l in m.stderr_lines() if RATE_SET in l]
        check(len(said) == 1 and "set to 524288" in said[0] and "put back at exit" in said[0],
              "%s: memtop should say it set the rate: %s" % (binary, m.err.text()[-400:]))
        pairs.append((w, m))
    watch_until_verdict(pairs)
    for w, m in pairs:
        first = next(r for r in m.records if verdict(r, w.pid) is None)
        print("%s: leak first (score %.0f, cache %.0f) %.1f s after memtop started; "
              "at the end: score %.0f, cache %.0f, the heap explains %s of RSS growth" %
              (w.name, heap_sites(first, w.pid)[LEAK]["leak_score"],
               heap_sites(first, w.pid)[CACHE]["leak_score"], first["time"] - t_attach[w.pid],
               heap_sites(m.records[-1], w.pid)[LEAK]["leak_score"],
               heap_sites(m.records[-1], w.pid)[CACHE]["leak_score"],
               target_of(m.records[-1], w.pid)["heap_explains_rss_growth"]))
        truth = truth_after(w, time.time())
        check(truth["mem_profile_rate"] == 524288, "%s: rate while watched: %s" %
              (w.name, truth))
        check(target_of(m.records[-1], w.pid)["unseen_memory"].find("set by memtop") >= 0,
              "%s: the JSON should say memtop set the rate: %s" %
              (w.name, target_of(m.records[-1], w.pid)["unseen_memory"]))
        m.send(signal.SIGINT)
        check(m.wait(10) == 0, "%s: memtop's status %s" % (w.name, m.poll()))
        after = truth_after(w, time.time())
        check(after["mem_profile_rate"] == 0,
              "%s: the rate after memtop exits: %s" % (w.name, after["mem_profile_rate"]))
        # what stays: the runtime's bucket hash table (about 1.4 MB) and
        # the buckets of the stacks sampled while memtop watched
        print("%s: BuckHashSys %d before memtop, %d after it exited" %
              (w.name, before_rate[w.pid]["buckhash_sys"], after["buckhash_sys"]))
        check(after["buckhash_sys"] > before_rate[w.pid]["buckhash_sys"],
              "%s: BuckHashSys %d before, %d after" %
              (w.name, before_rate[w.pid]["buckhash_sys"], after["buckhash_sys"]))
        w.kill()
    check(not rate_guards(), "guards left after memtop exited: %s" % rate_guards())


def test_no_pprof_memtop_killed():
    """memtop killed with SIGKILL while the rate is its own: its guard puts
    the 0 back and ends; nothing of memtop stays attached."""
    w = GoWorkload("mt_go_noprof").wait_ready()
    before = bpf_snapshot()
    m = Memtop("-b", "--json", "-p", w.pid)
    m.first_record()
    check(truth_after(w, time.time())["mem_profile_rate"] == 524288, "rate not set")
    guards = rate_guards()
    check(len(guards) >= 1, "no guard process")
    m.kill()  # SIGKILL
    t_kill = time.time()
    after = truth_after(w, t_kill)
    if after["mem_profile_rate"] != 0:  # the guard runs at the pipe's EOF
        after = truth_after(w, after["time"])
    check(after["mem_profile_rate"] == 0, "rate after SIGKILL of memtop: %s" %
          after["mem_profile_rate"])
    t0 = time.monotonic()
    while rate_guards() & guards and time.monotonic() - t0 < 5:
        time.sleep(0.1)
    check(not (rate_guards() & guards), "the guard outlived its work: %s" % guards)
    assert_nothing_left(before)
    check(w.poll() is None, "the target died")
    w.kill()


def test_no_pprof_command():
    """-- CMD on a program without pprof: the rate is set once its runtime
    has started (runtime.main_init_done; before that the runtime writes its
    own 0), and samples come."""
    m = Memtop("-b", "--json", "--", os.path.join(WORKLOADS, "mt_go_noprof"), "-duration", "20")
    rec, funcs = first_sample_record(m, "-- mt_go_noprof")
    check(any(RATE_SET in l for l in m.stderr_lines()), "-- CMD: the rate was not said set: %s" %
          m.err.text()[-400:])
    words = rec["targets"][0]["unseen_memory"] or ""
    check("set by memtop" in words, "-- CMD: the JSON does not say memtop set the rate: %r" %
          words)
    m.kill()


def test_mem_profile_rate_zero():
    """With --no-inject memtop changes nothing: a process with
    runtime.MemProfileRate = 0 (the linker's, in mt_go_noprof) samples
    nothing, which is said in the JSON, in -b and in the live view's
    header, not shown as an empty table; the rate stays 0. A program that
    set 0 itself (mt_go -rate0) under plain defaults gets memtop's rate."""
    w = GoWorkload("mt_go_noprof").wait_ready()
    check(w.ready_line.endswith(" 0"), "READY line: %s" % w.ready_line)
    m = Memtop("-b", "--json", "-n", "2", "--no-inject", "-p", w.pid)
    rec = m.first_record()
    words = target_of(rec, w.pid)["unseen_memory"] or ""
    check("MemProfileRate is 0" in words and "no samples" in words,
          "the JSON should say MemProfileRate is 0: %r" % words)
    m.drain(10)
    check(not any(RATE_SET in l for l in m.stderr_lines()), "--no-inject set the rate: %s" %
          m.err.text()[-300:])
    check(truth_after(w, time.time())["mem_profile_rate"] == 0, "--no-inject changed the rate")
    b = Memtop("-b", "-n", "1", "--no-inject", "-p", w.pid)
    rc = b.wait(15)
    check(rc == 0 and "MemProfileRate is 0" in b.out.text(), "-b: rc %s, %s" %
          (rc, b.out.text()[-400:]))
    # and the live view's header (a tmux pane, as test_tui.py drives it)
    from test_tui import MEMTOP_ARGS, Pane  # noqa: E402 (the TUI test's harness)
    from memtop_test import MEMTOP
    d = tempfile.mkdtemp(prefix="memtop-go-tui-")
    p = Pane(120, 30, {"TERM": "screen-256color", "LANG": "C.UTF-8"}, d)
    try:
        p.run("%s %s --no-inject -p %d 2>memtop.err; echo MEMTOP-RC=$?" %
              (MEMTOP, " ".join(MEMTOP_ARGS), w.pid))
        p.wait_for(lambda scr: "Go MemProfileRate is 0" in scr or "GO RATE 0" in scr, 15,
                   "the header's warning that MemProfileRate is 0")
        p.keys("q")
        p.wait_for(lambda scr: "MEMTOP-RC=0" in scr, 10, "memtop to quit cleanly")
    finally:
        p.kill()
        shutil.rmtree(d, ignore_errors=True)
    w.kill()
    own = GoWorkload("mt_go", "-rate0").wait_ready()
    check(own.ready_line.endswith(" 0"), "READY line: %s" % own.ready_line)
    m = Memtop("-b", "--json", "-p", own.pid)
    rec, funcs = first_sample_record(m, "mt_go -rate0")
    check(any(RATE_SET in l for l in m.stderr_lines()), "not said: %s" % m.err.text()[-300:])
    m.send(signal.SIGINT)
    check(m.wait(10) == 0, "memtop's status %s" % m.poll())
    check(truth_after(own, time.time())["mem_profile_rate"] == 0, "mt_go -rate0: not put back")
    own.kill()


def test_unknown_version_refused():
    """A Go version memtop has no signatures for is refused in one line, with
    nothing attached: a copy of mt_go whose build info says go1.99.0."""
    tmp = tempfile.mkdtemp(prefix="memtop-go-")
    path = os.path.join(tmp, "mt_go_future")
    with open(os.path.join(WORKLOADS, "mt_go"), "rb") as f:
        data = f.read()
    real = GoWorkload("mt_go", "-duration", "1")
    real.wait_ready()
    version = real.ready_line.split()[1].encode()
    real.kill()
    i = data.find(b"\xff Go buildinf:")
    j = data.find(version, i)
    check(i >= 0 and 0 < j - i < 64, "no build info with %s in mt_go" % version)
    fake = b"go1.99" + b"." * (len(version) - 6)
    with open(path, "wb") as f:
        f.write(data[:j] + fake + data[j + len(version):])
    os.chmod(path, 0o755)
    try:
        w = GoWorkload(path).wait_ready()
        before = bpf_snapshot()
        m = Memtop("-b", "--json", "-n", "1", "-p", w.pid)
        assert_one_error_line(m, m.wait(15), r"go1\.99.*go1\.19 to go1\.23")
        assert_nothing_left(before)
        check(w.poll() is None, "the refused process died")
        w.kill()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def elf_sections(data):
    """{name: (header offset, sh_offset, sh_size)} of a 64-bit ELF file."""
    shoff = struct.unpack_from("<Q", data, 0x28)[0]
    entsize, num, strndx = struct.unpack_from("<HHH", data, 0x3a)
    heads = [shoff + i * entsize for i in range(num)]
    str_off = struct.unpack_from("<Q", data, heads[strndx] + 24)[0]
    out = {}
    for h in heads:
        name_off = struct.unpack_from("<I", data, h)[0]
        name = data[str_off + name_off:data.index(b"\0", str_off + name_off)].decode()
        off, size = struct.unpack_from("<QQ", data, h + 24)
        out[name] = (h, off, size)
    return out


def test_hostile_symbol_table():
    """A Go target (run as nobody, from a directory it owns) whose section
    headers lie about its .gopclntab, which the runtime itself never reads
    (it finds its table through its module data). Placed on its code: memtop
    watches it, names the leak from the ELF symbol table, stops on SIGINT
    within 2 s with status 0, nothing left attached. Sized far past the end
    of the file: the file is not a valid ELF file, and memtop refuses it in
    one line, nothing attached; the target lives on in both."""
    with open(os.path.join(WORKLOADS, "mt_go"), "rb") as f:
        data = bytearray(f.read())
    secs = elf_sections(bytes(data))
    head = secs[".gopclntab"][0]
    text_off, text_size = secs[".text"][1], secs[".text"][2]
    lies = {"huge": (secs[".gopclntab"][1], 1 << 62),
            "on-code": (text_off, min(text_size, 1 << 20))}
    tmp = tempfile.mkdtemp(prefix="memtop-go-hostile-")
    os.chmod(tmp, 0o755)
    os.chown(tmp, 65534, 65534)
    try:
        for what, (off, size) in lies.items():
            bad = bytearray(data)
            struct.pack_into("<QQ", bad, head + 24, off, size)
            path = os.path.join(tmp, "mt_go_" + what)
            with open(path, "wb") as f:
                f.write(bad)
            os.chmod(path, 0o755)
            os.chown(path, 65534, 65534)
            w = Proc(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", path,
                      "-duration", "30"], name="mt_go_" + what)
            line = w.out.get(15, "mt_go_%s READY" % what)
            check(line and line.startswith("READY"), "%s did not start: %s" % (what, line))
            before = bpf_snapshot()
            m = Memtop("-b", "--json", "-p", w.pid)
            if what == "huge":
                assert_one_error_line(m, m.wait(15), "PID %d" % w.pid)
                assert_nothing_left(before)
            else:
                rec, funcs = first_sample_record(m, what)
                check(target_of(rec, w.pid)["allocator"] == "go", "%s: %s" % (what, rec["targets"]))
                m.send(signal.SIGINT)
                t0 = time.monotonic()
                rc = m.wait(10)
                check(rc == 0 and time.monotonic() - t0 < 2.0,
                      "%s: memtop took %.1f s to stop, status %s: %s" %
                      (what, time.monotonic() - t0, rc, m.err.text()[-300:]))
                assert_nothing_left(before)
            check(w.poll() is None, "%s: the target died" % what)
            w.kill()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

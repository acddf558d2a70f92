"""Never a silent empty table (issue 14, item 5): when a process's memory
does not come from the allocator memtop probes, the JSON and -b say so in
words, with the runtime found and the tool that sees its heap.

  - mt_arena, a C program with its own mmap-based allocator: RSS grows
    8 MiB/s while malloc is hardly called, so unseen_growth turns true and
    the words say the growth is not from glibc's malloc; the mmap source
    shows arena_grow as the site that maps it, every byte of it, outside
    the heap figures;
  - mt_brk_arena, an allocator of its own that grows through brk (sbrk)
    and mremap: the mmap source names the sites that move the break and
    resize the mapping, with their bytes, in -p and -- CMD at once, and
    the one that leaks ranks first by score; no other site, named or not
    (under -- CMD not the mappings memtop's child makes before its exec);
  - Debian's python3 growing a list of small objects (pymalloc arenas):
    runtime CPython, the words name tracemalloc;
  - node growing a JavaScript array: runtime Node/V8, with -p and with
    -- CMD (found once the command runs, never called "usdt");
  - a JVM (java running a single-file program): runtime JVM, with -p and
    with -- CMD."""

import os
import re
import shutil
import signal
import tempfile
import time

from memtop_test import (MEMTOP, Memtop, Proc, Workload, check, fail, read_truth_file, target,
                         workload_path)

GROWTH_WITHIN_S = 10


def wait_target(m, pid, cond, timeout, what):
    """Records until cond(target) holds; returns that target."""
    t0 = time.monotonic()
    last = None
    while time.monotonic() - t0 < timeout:
        rec = m.record(5)
        if rec is None:
            fail("memtop exited: %s" % m.err.text()[-300:])
        last = target(rec, pid)
        if cond(last):
            return last
    fail("%s not seen within %.0f s; last target: %s" % (what, timeout, last))


def test_custom_allocator_growth_is_said():
    w = Workload("mt_arena", "--duration=10").wait_ready()
    m = Memtop("-b", "--json", "-d", "0.5", "-p", w.pid)
    t = target(m.first_record(), w.pid)
    check(t.get("runtime") is None and t.get("unseen_growth") is False,
          "an idle C program has nothing unseen: %s" % t)
    w.trigger()
    t = wait_target(m, w.pid, lambda t: t.get("unseen_growth"), GROWTH_WITHIN_S,
                    "unseen_growth for a growing mmap arena")
    words = t.get("unseen_memory") or ""
    check("RSS grows" in words and "does not come from glibc's malloc" in words,
          "the words do not say where the growth is not from: %r" % words)
    truth = w.read_truth(timeout=20)
    rec = m.records_after(truth["time"], count=2)
    mmap_sites = [s for s in rec["sites"] if s.get("source") == "mmap"]
    check([s["function"] for s in mmap_sites] == ["arena_grow"],
          "the mmap source should show arena_grow alone: %s" %
          [(s.get("source"), s["function"]) for s in rec["sites"]])
    check(mmap_sites[0]["inuse_bytes"] == truth["mapped"],
          "arena_grow maps %d bytes, the mmap site shows %s" %
          (truth["mapped"], mmap_sites[0]["inuse_bytes"]))
    check(target(rec, w.pid)["inuse_bytes"] < 1024 * 1024,
          "mappings must stay out of the heap figure: %s" % target(rec, w.pid))
    w.release()
    m.drain(15)


BRK_S = 10
# The break memtop learns at attach for -p is the end of the [heap]
# mapping: a page above the real one at worst, once.
BRK_TOLERANCE = 4096


def check_brk_arena(what, rec, truth):
    """mt_brk_arena's truth against memtop's mmap sites after the phase:
    heap_grow's brk growth within BRK_TOLERANCE, cache_resize's mapping
    exact (cache_create's record taken over by the first mremap), the brk
    spikes and the munmapped scratch maps given back; heap_grow (the leak)
    ranks first by leak score, the cache and the churn score low."""
    want = {s["function"]: s["inuse_bytes"] for s in truth["sites"]}
    got, stacks = {}, {}
    for s in rec["sites"]:
        # under -- CMD the dynamic loader's own anonymous mappings (the
        # libraries' .bss, _dl_map_segments) are seen from the exec on;
        # every other site, one without a name included, must be the
        # program's
        if s.get("source") == "mmap" and not (s["function"] or "").startswith("_dl_"):
            got[s["function"]] = got.get(s["function"], 0) + s["inuse_bytes"]
            stacks[s["function"]] = s["stack"][:3]
    check(set(got) <= set(want), "%s: mmap sites that are not the program's: %s" %
          (what, [(f, got[f], stacks[f]) for f in sorted(set(got) - set(want), key=str)]))
    check(abs(got.get("heap_grow", 0) - want["heap_grow"]) <= BRK_TOLERANCE,
          "%s: heap_grow moved the break by %d bytes, memtop shows %s" %
          (what, want["heap_grow"], got.get("heap_grow")))
    check(got.get("cache_resize") == want["cache_resize"],
          "%s: cache_resize holds a %d-byte mapping, memtop shows %s" %
          (what, want["cache_resize"], got.get("cache_resize")))
    for f in ("spike_heap", "scratch_map", "cache_create"):
        check(got.get(f, 0) == 0, "%s: %s gave its memory back, memtop shows %s in use" %
              (what, f, got.get(f)))
    score = {s["function"]: s["leak_score"] for s in rec["sites"]
             if s.get("source") == "mmap" and s["function"] in got}
    check(max(score, key=score.get) == "heap_grow" and score["heap_grow"] >= 50,
          "%s: heap_grow should rank first with a score >= 50: %s" % (what, score))
    for f in ("cache_resize", "scratch_map"):
        check(score.get(f, 0) <= 30, "%s: %s scores %s: %s" % (what, f, score.get(f), score))


def test_brk_and_mremap_growth_pid_and_command():
    """A custom allocator growing through brk and mremap, watched by
    memtop -p (plain defaults) and by memtop -- CMD at the same time."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "truth")
        # 20,000 more variables in the environment: memtop's child, held
        # before its exec and still memtop's image, then maps the copy of
        # it that setenv makes (LD_PRELOAD of the sampler), 160 KiB the
        # exec discards. That mapping is not the program's: memtop used to
        # record it and show it in use for ever, an [unknown] mmap site.
        env = dict(os.environ, **{"MT_PAD_%05d" % i: "x" for i in range(20000)})
        mc = Memtop("-b", "--json", "--", workload_path("mt_brk_arena"),
                    "--duration=%d" % BRK_S, "--start=1", "--hold=10", "--out=" + out, env=env)
        w = Workload("mt_brk_arena", "--duration=%d" % BRK_S).wait_ready()
        mp = Memtop("-b", "--json", "-p", w.pid)
        mp.first_record()
        w.trigger()
        cpid = mc.first_record()["targets"][0]["pid"]
        truth_p = w.read_truth(timeout=BRK_S + 20)
        deadline = time.monotonic() + 20
        while not os.path.exists(out) or "truth" not in open(out).read():
            check(time.monotonic() < deadline, "no truth from memtop -- mt_brk_arena")
            check(mc.record(5) is not None, "memtop -- exited: %s" % mc.err.text()[-300:])
        truth_c = read_truth_file(out)
        check_brk_arena("-p", mp.records_after(truth_p["time"], count=2), truth_p)
        rec_c = mc.records_after(truth_c["time"], count=2)
        check(target(rec_c, cpid)["alive"], "the command ended early")
        check_brk_arena("-- CMD", rec_c, truth_c)
        w.release()
        mp.drain(15)
        mc.send(signal.SIGINT)
        mc.drain(30)


def run_runtime(argv, runtime, tool_word, env=None, ready="READY", timeout=GROWTH_WITHIN_S,
                extra=()):
    """Start a runtime that prints `ready` and then grows its own heap;
    memtop -b (text) must print the runtime's note naming the tool, and the
    JSON must carry the runtime."""
    p = Proc(argv, name=os.path.basename(argv[0]), env=env)
    line = p.out.get(30, "%s ready" % p.name)
    check(line is not None and ready in line, "%s did not start: %s %s" %
          (p.name, line, p.err.text()[-300:]))
    m = Memtop("-b", "--json", "-d", "0.5", *extra, "-p", p.pid)
    t = target(m.first_record(), p.pid)
    check(t.get("runtime") == runtime, "runtime of %s: %r, expected %r" %
          (p.name, t.get("runtime"), runtime))
    check(tool_word in (t.get("unseen_memory") or ""),
          "%s: the words do not name %s: %r" % (p.name, tool_word, t.get("unseen_memory")))
    m.kill()
    text = Memtop("-b", "-n", "2", "-d", "0.5", *extra, "-p", p.pid)
    rc = text.wait(20)
    out = text.out.text()
    check(rc == 0, "memtop -b exited %s: %s" % (rc, text.err.text()[-300:]))
    check(("PID %d" % p.pid) in out and runtime in out and tool_word in out,
          "-b does not say %s's heap is unseen:\n%s" % (runtime, out[-800:]))
    p.kill()


def test_cpython_runtime_is_said():
    """With uprobes (--no-inject) pymalloc's objects are not seen: memtop
    says so and names tracemalloc. By default its sampler wraps CPython's
    object allocator and sees them (test_python's inject tests)."""
    py = "/usr/bin/python3"
    check(os.path.exists(py), "Debian's python3 is needed")
    run_runtime([py, "-c",
                 "import time\nprint('READY', flush=True)\nkeep = []\n"
                 "while True:\n    keep.extend(str(i) for i in range(20000))\n"
                 "    time.sleep(0.01)\n"], "CPython", "tracemalloc", extra=("--no-inject",))


def test_node_runtime_is_said():
    """With --no-inject memtop writes nothing into the process, so it does
    not see V8's heap and says so (by default it samples that heap by
    JavaScript call site: test_node.py)."""
    node = shutil.which("node")
    check(node, "node is needed")
    run_runtime([node, "-e",
                 "console.log('READY'); const keep = [];"
                 "setInterval(() => { for (let i = 0; i < 20000; i++) keep.push({i}); }, 10);"],
                "Node/V8", "heapsnapshot", extra=("--no-inject",))


def test_node_runtime_is_said_under_command():
    """memtop -- node: the command is attached before its exec, so its
    runtime is looked for again once it runs; the words name Node/V8 and
    its tool, never "usdt" (how memtop listens to the preloaded sampler)."""
    node = shutil.which("node")
    check(node, "node is needed")
    m = Memtop("-b", "--json", "-d", "0.5", "--", node, "-e",
               "const keep = [];"
               "setInterval(() => { for (let i = 0; i < 4000; i++) keep.push({i}); }, 10);")
    rec = m.first_record()
    pid = rec["targets"][0]["pid"]
    t = wait_target(m, pid, lambda t: t.get("runtime") == "Node/V8", 10,
                    "runtime Node/V8 for memtop -- node")
    words = t.get("unseen_memory") or ""
    check("heapsnapshot" in words and "usdt" not in words,
          "the words for node under -- CMD: %r" % words)
    t = wait_target(m, pid, lambda t: t.get("unseen_growth"), GROWTH_WITHIN_S + 10,
                    "node's heap growth, unseen")
    words = t.get("unseen_memory") or ""
    check("Node/V8 allocates" in words and "usdt" not in words,
          "the growth is not said to be Node's: %r" % words)
    m.send(signal.SIGINT)
    m.drain(20)


def test_jvm_runtime_is_said():
    java = shutil.which("java")
    check(java, "java is needed")
    tmp = tempfile.mkdtemp(prefix="memtop-jvm-")
    try:
        src = os.path.join(tmp, "Grow.java")
        with open(src, "w") as f:
            f.write("public class Grow { public static void main(String[] a) throws Exception {"
                    " System.out.println(\"READY\"); java.util.List<int[]> keep ="
                    " new java.util.ArrayList<>(); while (true) { keep.add(new int[1024]);"
                    " Thread.sleep(1); } } }\n")
        # --no-inject: no agent is loaded, so the JVM's heap is unseen and
        # said so (by default memtop's JVMTI agent samples it: test_java)
        run_runtime([java, "-Xmx256m", src], "JVM", "jcmd", extra=("--no-inject",))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def test_jvm_runtime_is_said_under_command():
    """memtop --no-preload -- java: libjvm.so is mapped only once the
    launcher runs, after memtop attached; the runtime is found then, and
    the words name the JVM and jcmd, never "usdt" (by default memtop's
    JVMTI agent samples that heap: test_java.test_java_under_command)."""
    java = shutil.which("java")
    check(java, "java is needed")
    tmp = tempfile.mkdtemp(prefix="memtop-jvm-")
    try:
        src = os.path.join(tmp, "Grow.java")
        with open(src, "w") as f:
            f.write("public class Grow { public static void main(String[] a) throws Exception {"
                    " java.util.List<int[]> keep = new java.util.ArrayList<>();"
                    " while (true) { keep.add(new int[1024]); Thread.sleep(1); } } }\n")
        m = Memtop("-b", "--json", "-d", "0.5", "--no-preload", "--", java, "-Xmx256m", src)
        pid = m.first_record()["targets"][0]["pid"]
        t = wait_target(m, pid, lambda t: t.get("runtime") == "JVM", 10,
                        "runtime JVM for memtop -- java")
        words = t.get("unseen_memory") or ""
        check("jcmd" in words and "usdt" not in words,
              "the words for java under -- CMD: %r" % words)
        m.send(signal.SIGINT)
        m.drain(20)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def test_tui_header_says_it():
    """The live view's header warns about the same growth (tmux pane, as
    test_tui.py drives it) and names the allocator probed; memtop quits
    cleanly."""
    from test_tui import MEMTOP_ARGS, Pane  # noqa: E402 (the TUI test's harness)
    import tempfile as _tf
    d = _tf.mkdtemp(prefix="memtop-unseen-tui-")
    w = Workload("mt_arena", "--duration=10").wait_ready()
    p = Pane(120, 30, {"TERM": "screen-256color", "LANG": "C.UTF-8"}, d)
    try:
        p.run("%s %s -p %d 2>memtop.err; echo MEMTOP-RC=$?" %
              (MEMTOP, " ".join(MEMTOP_ARGS), w.pid))
        p.wait_for(lambda s: "mt_arena" in s, 20, "the header naming mt_arena")
        w.trigger()
        scr = p.wait_for(lambda s: "of RSS growth" in s or "RSS UNSEEN" in s, GROWTH_WITHIN_S + 5,
                         "the header's warning about growth the heap does not explain")
        check("PID %d" % w.pid in scr or "RSS UNSEEN" in scr,
              "the warning does not name the target:\n%s" % scr)
        check(re.search(r"mode \S+ glibc", scr), "the header does not name the allocator "
              "probed (glibc):\n%s" % scr)
        scr = p.wait_for(lambda s: re.search(r"arena_grow .*\[mmap\]", s), 10,
                         "arena_grow marked as an mmap site in the table")
        p.keys("q")
        p.wait_for(lambda s: "MEMTOP-RC=0" in s, 10, "memtop to quit cleanly")
    finally:
        p.kill()
        w.release()
        shutil.rmtree(d, ignore_errors=True)

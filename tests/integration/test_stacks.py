"""Complete, named stacks on real-world binaries (issue 3).

The workloads (tests/workloads/stacks/) are built here, at test time, into
a temporary directory with the flags distributions use: -O2
-fomit-frame-pointer -g. Each one prints "READY pid=N", waits for a byte on
stdin, leaks 64 KiB every 10 ms through a known chain of STK_FN (noipa)
functions for a few seconds, prints "DONE" and waits for EOF
(stacks_common.h). memtop watches it with

    memtop -b --json -d 0.5 --rate 16K --max-overhead none -p PID

and the tests read the last record taken after DONE. They assert:

  - the site is the innermost user function, never allocator code
    (malloc, operator new, std:: internals);
  - its "stack" (innermost first) holds the chain by name, in order, the
    chain's functions consecutive (inlined frames, marked "inlined", are
    not counted: none of the chain's functions can be inlined);
  - the walk is complete: "truncated" is false and the outermost frame is
    _start;
  - the "module" of every frame is the basename of its file, and file:line
    lie inside the function;
for a chain through a shared library in a PIE and in a non-PIE, a C++ leak
through new inside containers, a stripped executable (module+offset, the
offsets inside the right functions of the unstripped twin), an executable
deleted before memtop attached, and a library dlopen()ed after memtop
attached. Then --group function|line|stack, --skip REGEX, and --stack-copy
0 (frame pointers only): on the same -fomit-frame-pointer chain the walk
must come out short and marked truncated, which shows that the CFI
unwinder is what makes the other stacks complete; a frame-pointer build is
the control that frame-pointer walks work where they can.
"""

import atexit
import contextlib
import http.server
import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time

from memtop_test import ROOT, Memtop, Proc, Workload, check, fail

SRC = os.path.join(ROOT, "tests", "workloads", "stacks")
DISTRO_CFLAGS = ("-O2", "-fomit-frame-pointer", "-g", "-Wall", "-Wextra")
FP_CFLAGS = ("-O2", "-fno-omit-frame-pointer", "-g", "-Wall", "-Wextra")
MEMTOP_ARGS = ("-b", "--json", "-d", "0.5", "--rate", "16K", "--max-overhead", "none")
SECONDS = 2.5          # leaking phase of a workload
MIN_SAMPLES = 50       # ~250 allocations of 64 KiB at a 16 KiB rate give ~250 samples

CHAIN = ("lib_level4_leak", "lib_level3", "app_level2", "app_level1", "main")
LIB_FUNCS = ("lib_level4_leak", "lib_level3")
SOURCE_OF = {"lib_level4_leak": "libchain.c", "lib_level3": "libchain.c",
             "app_level2": "chain_main.c", "app_level1": "chain_main.c",
             "main": "chain_main.c"}
# Function names that are allocator machinery: never a site.
ALLOCATOR_RE = re.compile(r"^(malloc|calloc|realloc|free|operator new|operator delete|std::|"
                          r"__gnu_cxx::|__libc_|_int_malloc)")


# ==== Building the workloads ====

_tmp = None
_built = {}


def _tmpdir():
    global _tmp
    if _tmp is None:
        _tmp = tempfile.mkdtemp(prefix="memtop-stacks-")
        atexit.register(shutil.rmtree, _tmp, True)
    return _tmp


def _cc(compiler, args):
    argv = [compiler] + list(args)
    r = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        fail("building a workload failed: %s\n%s" % (" ".join(argv), r.stderr[-2000:]))


def _build_chain_into(d, cflags, pie=True):
    """libchain.so and the chain executable `chain` in directory d; the
    executable finds the library next to itself ($ORIGIN)."""
    os.makedirs(d, exist_ok=True)
    src = lambda f: os.path.join(SRC, f)  # noqa: E731
    _cc("gcc", list(cflags) + ["-fPIC", "-shared", "-o", os.path.join(d, "libchain.so"),
                               src("libchain.c")])
    _cc("gcc", list(cflags) + (["-fPIE", "-pie"] if pie else ["-fno-PIE", "-no-pie"]) +
        ["-o", os.path.join(d, "chain"), src("chain_main.c"), "-L", d, "-lchain",
         "-Wl,-rpath,$ORIGIN"])


def built(variant):
    """Directory holding the workload binaries of variant, built once per
    run: chain (PIE), chain_nopie, chain_fp (frame pointers), group,
    cxx_leak, cxx_noexc, dlopen."""
    if variant in _built:
        return _built[variant]
    d = os.path.join(_tmpdir(), variant)
    os.makedirs(d)
    src = lambda f: os.path.join(SRC, f)  # noqa: E731
    if variant == "chain":
        _build_chain_into(d, DISTRO_CFLAGS, pie=True)
        _cc("strip", ["--strip-all", "-o", os.path.join(d, "chain_stripped"),
                      os.path.join(d, "chain")])
    elif variant == "chain_nopie":
        _build_chain_into(d, DISTRO_CFLAGS, pie=False)
    elif variant == "chain_fp":
        _build_chain_into(d, FP_CFLAGS, pie=True)
    elif variant == "group":
        _cc("gcc", list(DISTRO_CFLAGS) + ["-o", os.path.join(d, "group"), src("group_main.c")])
    elif variant == "cxx_leak":
        _cc("g++", list(DISTRO_CFLAGS) + ["-o", os.path.join(d, "cxx_leak"), src("cxx_leak.cpp")])
    elif variant == "cxx_noexc":
        _cc("g++", list(DISTRO_CFLAGS) + ["-fno-exceptions", "-o", os.path.join(d, "cxx_noexc"),
                                          src("cxx_leak.cpp")])
    elif variant == "dlopen":
        _cc("gcc", list(DISTRO_CFLAGS) + ["-fPIC", "-shared", "-o",
                                          os.path.join(d, "libplugin.so"), src("plugin.c")])
        _cc("gcc", list(DISTRO_CFLAGS) + ["-o", os.path.join(d, "dlopen_main"),
                                          src("dlopen_main.c"), "-ldl"])
    else:
        fail("no workload variant %r" % variant)
    _built[variant] = d
    return d


def elf_type(path):
    """e_type of an ELF file: 2 ET_EXEC, 3 ET_DYN."""
    with open(path, "rb") as f:
        head = f.read(18)
    check(head[:4] == b"\x7fELF", "%s is not an ELF file" % path)
    return int.from_bytes(head[16:18], "little")


def function_offsets(path):
    """{symbol: (first, end)} file offsets of the function symbols of an
    unstripped ELF file (from nm -S and its PT_LOAD segments)."""
    segs = []
    out = subprocess.run(["readelf", "-lW", path], capture_output=True, text=True,
                         check=True).stdout
    for l in out.splitlines():
        f = l.split()
        if f and f[0] == "LOAD":
            segs.append((int(f[1], 16), int(f[2], 16), int(f[4], 16)))  # off, vaddr, filesz
    funcs = {}
    out = subprocess.run(["nm", "-S", "--defined-only", path], capture_output=True, text=True,
                         check=True).stdout
    for l in out.splitlines():
        f = l.split()
        if len(f) != 4 or f[2] not in "tT":
            continue
        vaddr, size = int(f[0], 16), int(f[1], 16)
        for off, va, filesz in segs:
            if va <= vaddr < va + filesz:
                funcs[f[3]] = (vaddr - va + off, vaddr - va + off + size)
    return funcs


def function_lines(source, function):
    """(first, last) line of a top-level function definition in a file of
    tests/workloads/stacks."""
    with open(os.path.join(SRC, source)) as f:
        lines = f.read().split("\n")
    for i, l in enumerate(lines):
        if re.search(r"\b%s\(" % re.escape(function), l) and not l.rstrip().endswith(";") \
                and not l.startswith((" ", "\t")):
            for j in range(i + 1, len(lines)):
                if lines[j].startswith("}"):
                    return i + 1, j + 1
    fail("no definition of %s in %s" % (function, source))


def marker_line(source, marker):
    """The line carrying the comment /* MARKER */ in a stacks source."""
    with open(os.path.join(SRC, source)) as f:
        for i, l in enumerate(f, 1):
            if "/* %s */" % marker in l:
                return i
    fail("no line marked %s in %s" % (marker, source))


# ==== Running one profile ====

class StackWorkload(Workload):
    """A workload binary built by this module (protocol: stacks_common.h)."""

    def __init__(self, path, *args):
        Proc.__init__(self, [path] + list(args), stdin=subprocess.PIPE,
                      name=os.path.basename(path))

    def wait_done(self, timeout):
        t0 = time.monotonic()
        while True:
            line = self.out.get(max(0.1, timeout - (time.monotonic() - t0)),
                                "%s DONE" % self.name)
            if line is None:
                fail("%s exited before DONE (rc %s): %s" %
                     (self.name, self.poll(), self.err.text()[-500:]))
            if line.startswith("DONE"):
                return


def profile(path, memtop_args=(), wl_args=(), before_attach=None, before_trigger=None):
    """Run workload `path` under memtop -p; returns (workload, the last
    record, taken after the workload's phase ended). memtop must exit 0 on
    SIGINT."""
    w = StackWorkload(path, *wl_args, "--seconds=%g" % SECONDS).wait_ready()
    if before_attach:
        before_attach(w)
    m = Memtop(*MEMTOP_ARGS, *memtop_args, "-p", w.pid)
    m.first_record()
    if before_trigger:
        before_trigger(w)
    w.trigger()
    w.wait_done(SECONDS + 15)
    last = m.records_after(time.time(), count=1)
    m.send(signal.SIGINT)
    rc = m.drain(15)
    check(rc == 0, "memtop exit status %s after SIGINT; stderr: %s" %
          (rc, m.stderr_lines()[-5:]))
    check(w.poll() is None, "the workload died while memtop watched it (rc %s)" % w.poll())
    w.release()
    return w, last


# ==== Assertions on sites and stacks ====

def names_match(function, name):
    """A reported function is `name` (C) or `name(params...)` (demangled C++)."""
    return function is not None and (function == name or function.startswith(name + "("))


def show_stack(site):
    return " <- ".join("%s[%s%s]" % (f.get("function"), f.get("module"),
                                      ",inl" if f.get("inlined") else "")
                       for f in site.get("stack", []))


def sites_of(rec, name):
    return [s for s in rec["sites"] if names_match(s["function"], name)]


def the_site(rec, name, module=None, min_samples=MIN_SAMPLES):
    """The one site named `name`; it has enough samples, a stack and a
    truncated flag."""
    found = sites_of(rec, name)
    check(len(found) == 1, "expected one site %s, found %d; sites: %s" %
          (name, len(found), [(s["function"], s["module"], s["samples"]) for s in rec["sites"]]))
    s = found[0]
    check(s["samples"] >= min_samples, "site %s has only %d samples" % (name, s["samples"]))
    check(isinstance(s.get("stack"), list) and s["stack"],
          "site %s has no stack: %s" % (name, s.get("stack")))
    check(isinstance(s.get("truncated"), bool), "site %s: 'truncated' is %r" %
          (name, s.get("truncated")))
    if module is not None:
        check(s["module"] == module, "site %s: module %r, expected %r" %
              (name, s["module"], module))
    return s


def check_no_allocator_sites(rec):
    bad = [s["function"] for s in rec["sites"]
           if s["function"] and ALLOCATOR_RE.match(s["function"]) and s["samples"] > 0]
    check(not bad, "allocator code reported as call sites: %s" % bad)


def chain_frames(site, chain):
    """The frames of `site`'s stack that hold `chain` (innermost first),
    consecutive apart from inlined frames. Fails unless the chain is there."""
    stack = site["stack"]
    real = [(i, f) for i, f in enumerate(stack) if not f.get("inlined")]
    for k, (_, f) in enumerate(real):
        if names_match(f["function"], chain[0]):
            got = real[k:k + len(chain)]
            names = [f["function"] for _, f in got]
            if len(got) == len(chain) and all(names_match(n, c) for n, c in zip(names, chain)):
                return [f for _, f in got]
            fail("stack of %s: after %s expected %s consecutively, got %s%s (truncated: %s); "
                 "stack: %s" % (site["function"], chain[0], list(chain[1:]), names[1:],
                                " and then the stack ends" if len(got) < len(chain) else "",
                                site.get("truncated"), show_stack(site)))
    fail("stack of %s does not contain %s; stack: %s" %
         (site["function"], chain[0], show_stack(site)))


def check_complete(site):
    """Walked to the end: not truncated, outermost frame _start."""
    check(site["truncated"] is False, "stack of %s marked truncated: %s" %
          (site["function"], show_stack(site)))
    check(site["stack"][-1]["function"] == "_start",
          "outermost frame of %s is %r, not _start: %s" %
          (site["function"], site["stack"][-1]["function"], show_stack(site)))


def check_chain_site(rec, exe, chain=CHAIN, lib="libchain.so", lib_funcs=LIB_FUNCS,
                     sources=SOURCE_OF):
    """The site is chain[0] in `lib`, its stack holds the chain in order
    with the right module and file:line for every frame, and is complete."""
    check_no_allocator_sites(rec)
    site = the_site(rec, chain[0], module=lib)
    frames = chain_frames(site, chain)
    for name, f in zip(chain, frames):
        want = lib if name in lib_funcs else exe
        check(f["module"] == want, "frame %s: module %r, expected %r; stack: %s" %
              (name, f["module"], want, show_stack(site)))
        src = sources.get(name)
        if src:
            first, last = function_lines(src, name)
            check(f["file"] and os.path.basename(f["file"]) == src and
                  isinstance(f["line"], int) and first <= f["line"] <= last,
                  "frame %s: %s:%s, expected %s:%d-%d" %
                  (name, f["file"], f["line"], src, first, last))
    check_complete(site)
    return site


# ==== Tests ====

def test_chain_pie_shared_library():
    """A PIE (gcc's default on Debian) calling into a shared library:
    main -> app_level1 -> app_level2 -> lib_level3 -> lib_level4_leak ->
    malloc, all -O2 -fomit-frame-pointer. The site is lib_level4_leak in
    libchain.so, the whole chain is named in order, down to _start."""
    d = built("chain")
    exe = os.path.join(d, "chain")
    check(elf_type(exe) == 3, "chain is not a PIE (ET_DYN)")
    _, rec = profile(exe)
    check_chain_site(rec, "chain")


def test_chain_non_pie():
    """The same chain in a fixed-address (ET_EXEC) executable."""
    d = built("chain_nopie")
    exe = os.path.join(d, "chain")
    check(elf_type(exe) == 2, "chain built with -no-pie is not ET_EXEC")
    _, rec = profile(exe)
    check_chain_site(rec, "chain")


def test_cxx_new_in_containers():
    """C++: cxx_leak_site news std::strings into a std::vector and grows a
    std::map. Every sampled allocation (operator new, libstdc++'s string,
    the containers' std:: internals) is reported at cxx_leak_site, by its
    demangled name; the stack goes on through cxx_run and main to _start."""
    _, rec = profile(os.path.join(built("cxx_leak"), "cxx_leak"))
    check_no_allocator_sites(rec)
    site = the_site(rec, "cxx_leak_site", module="cxx_leak")
    check(site["function"].startswith("cxx_leak_site(std::vector<"),
          "cxx_leak_site not demangled with its parameters: %r" % site["function"])
    chain_frames(site, ("cxx_leak_site", "cxx_run", "main"))
    check_complete(site)


def test_cxx_without_exceptions():
    """The same C++ leak built with -fno-exceptions (no LSDA, no personality
    routine in the CIEs): the chain is complete too."""
    _, rec = profile(os.path.join(built("cxx_noexc"), "cxx_noexc"))
    check_no_allocator_sites(rec)
    site = the_site(rec, "cxx_leak_site", module="cxx_noexc")
    chain_frames(site, ("cxx_leak_site", "cxx_run", "main"))
    check_complete(site)


def test_stripped_executable():
    """strip --strip-all of the chain executable (libchain.so is not
    stripped): memtop keeps running and exits 0; the library frames keep
    their names; the executable's frames have function null, module
    chain_stripped and an offset inside the right function of the
    unstripped twin, in chain order; the walk is complete (.eh_frame
    survives stripping)."""
    d = built("chain")
    stripped = os.path.join(d, "chain_stripped")
    funcs = function_offsets(os.path.join(d, "chain"))
    _, rec = profile(stripped)
    site = the_site(rec, "lib_level4_leak", module="libchain.so")
    check(site["truncated"] is False, "stack marked truncated: %s" % show_stack(site))
    stack = site["stack"]
    for i, name in enumerate(("lib_level4_leak", "lib_level3")):
        check(stack[i]["function"] == name and stack[i]["module"] == "libchain.so",
              "frame %d: expected %s in libchain.so: %s" % (i, name, show_stack(site)))
    ours = [(i, f) for i, f in enumerate(stack) if f["module"] == "chain_stripped"]
    check([i for i, _ in ours][:3] == [2, 3, 4],
          "expected frames 2-4 in chain_stripped: %s" % show_stack(site))
    expected = ["app_level2", "app_level1", "main"]
    if len(ours) > 3:
        expected.append("_start")
    for (i, f), name in zip(ours, expected):
        check(f["function"] is None,
              "frame %d of the stripped executable is named %r" % (i, f["function"]))
        off = f.get("offset")
        lo, hi = funcs[name]
        check(isinstance(off, int) and lo < off <= hi,
              "frame %d: offset %r is not inside %s (file offsets %#x-%#x of the unstripped "
              "binary)" % (i, off, name, lo, hi))
    check(len(ours) == 4, "the outermost frame is not _start in chain_stripped: %s" %
          show_stack(site))


def build_id(path):
    out = subprocess.run(["readelf", "-n", path], capture_output=True, text=True,
                         check=True).stdout
    m = re.search(r"Build ID:\s*([0-9a-f]+)", out)
    check(m, "%s has no build ID" % path)
    return m.group(1)


@contextlib.contextmanager
def debuginfod(files, hang=False):
    """A debuginfod server on 127.0.0.1 in this process, named by
    $DEBUGINFOD_URLS (with a fresh $DEBUGINFOD_CACHE_PATH) for the
    processes started inside the block: GET /buildid/ID/debuginfo answers
    the file files[ID], anything else 404; with hang, every request is
    accepted and never answered. Yields the list of paths asked for."""
    asked, release = [], threading.Event()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            asked.append(self.path)
            if hang:
                release.wait(60)
                return
            m = re.fullmatch(r"/buildid/([0-9a-f]+)/debuginfo", self.path)
            if not m or m.group(1) not in files:
                self.send_error(404)
                return
            with open(files[m.group(1)], "rb") as f:
                body = f.read()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    cache = tempfile.mkdtemp(prefix="memtop-debuginfod-", dir=_tmpdir())
    saved = {k: os.environ.get(k) for k in ("DEBUGINFOD_URLS", "DEBUGINFOD_CACHE_PATH")}
    os.environ["DEBUGINFOD_URLS"] = "http://127.0.0.1:%d" % srv.server_address[1]
    os.environ["DEBUGINFOD_CACHE_PATH"] = cache
    try:
        yield asked
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        release.set()
        srv.shutdown()
        srv.server_close()


def test_stripped_executable_debuginfod():
    """With $DEBUGINFOD_URLS set, the stripped executable's debug file comes
    from the server (here: the unstripped twin, answered for its build ID):
    memtop asks for it once and, once it has arrived, names the
    executable's frames app_level2, app_level1, main in chain_stripped, with
    file:line. The fetch runs in the background, so stacks sampled before
    it arrived keep module+offset; with --group stack they are other sites,
    and the named stack holds most samples."""
    d = built("chain")
    stripped = os.path.join(d, "chain_stripped")
    bid = build_id(stripped)
    with debuginfod({bid: os.path.join(d, "chain")}) as asked:
        _, rec = profile(stripped, memtop_args=("--group", "stack"))
    want = "/buildid/%s/debuginfo" % bid
    check(asked.count(want) == 1, "the server was asked %d times for %s: %s" %
          (asked.count(want), want, asked))
    chain = [s for s in rec["sites"] if names_match(s["function"], "lib_level4_leak")]
    named = [s for s in chain if [f.get("function") for f in s["stack"]
                                  if f.get("module") == "chain_stripped"][:3] == list(CHAIN[2:])]
    check(named, "no stack names the stripped executable's frames: %s" %
          [show_stack(s) for s in chain])
    for f in named[0]["stack"]:
        if f.get("module") == "chain_stripped" and f.get("function") in CHAIN:
            check(f.get("file", "").endswith("chain_main.c") and f.get("line"),
                  "frame %s has no file:line from the fetched debug file: %s" %
                  (f.get("function"), show_stack(named[0])))
    n_named = sum(s["samples"] for s in named)
    n_all = sum(s["samples"] for s in chain)
    check(n_named >= MIN_SAMPLES and n_named * 2 > n_all,
          "named stacks hold %d of %d samples" % (n_named, n_all))


def test_debuginfod_server_that_never_answers():
    """A debuginfod server that accepts and never answers does not hold
    memtop up: records keep their interval (-d 0.5) while the fetch hangs,
    the stripped executable's frames stay module+offset, and SIGINT ends
    memtop at once (the fetch is cancelled), with exit status 0."""
    d = built("chain")
    stripped = os.path.join(d, "chain_stripped")
    with debuginfod({}, hang=True) as asked:
        w = StackWorkload(stripped, "--seconds=%g" % SECONDS).wait_ready()
        m = Memtop(*MEMTOP_ARGS, "-p", w.pid)
        m.first_record()
        w.trigger()
        times = []
        while len(times) < 6:
            rec = m.record(10)
            check(rec is not None, "memtop exited while the server hung; stderr: %s" %
                  m.stderr_lines()[-5:])
            times.append(time.monotonic())
        gaps = [b - a for a, b in zip(times, times[1:])]
        check(max(gaps) < 2.0, "records %s s apart while the fetch hung" %
              ["%.2f" % g for g in gaps])
        check(asked, "memtop never asked the server")
        site = the_site(rec, "lib_level4_leak", module="libchain.so")
        ours = [f for f in site["stack"] if f["module"] == "chain_stripped"]
        check(ours and all(f["function"] is None for f in ours),
              "the stripped executable's frames are named without a debug file: %s" %
              show_stack(site))
        t0 = time.monotonic()
        m.send(signal.SIGINT)
        rc = m.drain(15)
        took = time.monotonic() - t0
        w.wait_done(SECONDS + 15)
        w.release()
    check(rc == 0, "memtop exit status %s after SIGINT" % rc)
    check(took < 5, "memtop took %.1f s to exit while a fetch hung" % took)


def test_deleted_executable():
    """The executable and its library are deleted after the process
    started and before memtop attaches: names still resolve (memtop reads
    the mapped files through /proc/PID/map_files); module is the name the
    file had."""
    d = os.path.join(_tmpdir(), "deleted-%d" % time.monotonic_ns())
    shutil.copytree(built("chain"), d)
    exe = os.path.join(d, "chain_deleted")
    os.rename(os.path.join(d, "chain"), exe)

    def delete(w):
        shutil.rmtree(d)
        target = os.readlink("/proc/%d/exe" % w.pid)
        check(target.endswith(" (deleted)"), "/proc/PID/exe is %r, not deleted" % target)

    _, rec = profile(exe, before_attach=delete)
    check_chain_site(rec, "chain_deleted")


def test_dlopen_after_attach():
    """dlopen_main dlopen()s libplugin.so on the trigger, after memtop
    attached: plugin_leak_site in libplugin.so is named, and the stack goes
    on through plugin_entry, host_call_plugin and main to _start."""
    d = built("dlopen")
    lib = os.path.join(d, "libplugin.so")

    def not_loaded(w):
        with open("/proc/%d/maps" % w.pid) as f:
            check("libplugin.so" not in f.read(), "libplugin.so mapped before the trigger")

    _, rec = profile(os.path.join(d, "dlopen_main"), wl_args=(lib,), before_trigger=not_loaded)
    check_no_allocator_sites(rec)
    site = the_site(rec, "plugin_leak_site", module="libplugin.so")
    frames = chain_frames(site, ("plugin_leak_site", "plugin_entry", "host_call_plugin", "main"))
    for f, mod in zip(frames, ("libplugin.so", "libplugin.so", "dlopen_main", "dlopen_main")):
        check(f["module"] == mod, "frame %s: module %r, expected %r" %
              (f["function"], f["module"], mod))
    first, last = function_lines("plugin.c", "plugin_leak_site")
    check(site["file"] and os.path.basename(site["file"]) == "plugin.c" and
          first <= site["line"] <= last, "plugin_leak_site at %s:%s, expected plugin.c:%d-%d" %
          (site["file"], site["line"], first, last))
    check_complete(site)


def _group_run(how):
    _, rec = profile(os.path.join(built("group"), "group"), memtop_args=("--group", how))
    check_no_allocator_sites(rec)
    return rec


def _caller(site):
    """The function of the frame right after leak_common in site's stack."""
    frames = [f for f in site["stack"] if not f.get("inlined")]
    for i, f in enumerate(frames[:-1]):
        if f["function"] == "leak_common":
            return frames[i + 1]["function"]
    fail("leak_common not in its own stack: %s" % show_stack(site))


def test_group_function():
    """--group function: leak_common, called from caller_alpha and
    caller_beta, is one site; leak_two_lines (malloc and calloc on two
    lines) is one site."""
    rec = _group_run("function")
    the_site(rec, "leak_common", module="group")
    the_site(rec, "leak_two_lines", module="group")


def test_group_stack():
    """--group stack: leak_common is two sites, one per caller, each with
    its own stack and about half of the samples."""
    rec = _group_run("stack")
    found = sites_of(rec, "leak_common")
    check(len(found) == 2, "expected two leak_common sites (one per caller), got %d: %s" %
          (len(found), [show_stack(s) for s in found]))
    callers = sorted(_caller(s) for s in found)
    check(callers == ["caller_alpha", "caller_beta"],
          "callers of the two leak_common sites: %s" % callers)
    check(found[0]["id"] != found[1]["id"], "both leak_common sites have id %s" % found[0]["id"])
    total = sum(s["samples"] for s in found)
    for s in found:
        check(s["samples"] >= 0.3 * total and s["samples"] >= MIN_SAMPLES // 2,
              "leak_common via %s has %d of %d samples; the callers allocate equally" %
              (_caller(s), s["samples"], total))
        check_complete(s)


def test_group_line():
    """--group line: leak_common (one malloc line, two callers) is one site
    at its malloc line; leak_two_lines is two sites, at the malloc line and
    at the calloc line."""
    rec = _group_run("line")
    common = the_site(rec, "leak_common", module="group")
    first, last = function_lines("group_main.c", "leak_common")
    check(first <= common["line"] <= last, "leak_common at line %s, outside %d-%d" %
          (common["line"], first, last))
    two = sites_of(rec, "leak_two_lines")
    want = sorted([marker_line("group_main.c", "GROUP_LINE_MALLOC"),
                   marker_line("group_main.c", "GROUP_LINE_CALLOC")])
    got = sorted(s["line"] for s in two)
    check(got == want, "leak_two_lines sites at lines %s, expected %s" % (got, want))
    for s in two:
        check(s["samples"] >= MIN_SAMPLES // 4, "leak_two_lines:%d has %d samples" %
              (s["line"], s["samples"]))


def test_skip_innermost():
    """--skip '^lib_level4_leak$' treats lib_level4_leak as allocator code:
    its caller lib_level3 becomes the site, and the stack is unchanged."""
    _, rec = profile(os.path.join(built("chain"), "chain"),
                     memtop_args=("--skip", "^lib_level4_leak$"))
    check(not sites_of(rec, "lib_level4_leak"), "lib_level4_leak still a site with --skip")
    site = the_site(rec, "lib_level3", module="libchain.so")
    chain_frames(site, CHAIN)
    check_complete(site)


def test_skip_alternation():
    """--skip with an extended regex matching both library levels: the
    site moves out of the library to app_level2 in the executable."""
    _, rec = profile(os.path.join(built("chain"), "chain"),
                     memtop_args=("--skip", "^lib_level(3|4_leak)$"))
    for name in LIB_FUNCS:
        check(not sites_of(rec, name), "%s still a site with --skip: %s" %
              (name, [s["function"] for s in rec["sites"]]))
    site = the_site(rec, "app_level2", module="chain")
    chain_frames(site, CHAIN)
    check_complete(site)


def test_frame_pointers_only_is_truncated():
    """--stack-copy 0 walks frame pointers only. The -fomit-frame-pointer
    chain then cannot be walked: the stack is short, and memtop must say
    so with truncated: true. (With the default stack copy the same binary
    gives the complete chain: test_chain_pie_shared_library.)"""
    _, rec = profile(os.path.join(built("chain"), "chain"), memtop_args=("--stack-copy", "0"))
    check_no_allocator_sites(rec)
    site = the_site(rec, "lib_level4_leak", module="libchain.so")
    names = [f["function"] for f in site["stack"]]
    check(not ("main" in names and "app_level1" in names and "app_level2" in names),
          "a frame-pointer walk of a -fomit-frame-pointer build gave the whole chain: %s" %
          show_stack(site))
    check(site["truncated"] is True,
          "frame-pointer walk without frame pointers gave %d frames (%s) but truncated is %r" %
          (len(names), show_stack(site), site["truncated"]))


def test_frame_pointer_build_with_stack_copy_0():
    """Control for the test above: the chain built with
    -fno-omit-frame-pointer, watched with --stack-copy 0, is named in order
    from lib_level4_leak to main by the frame-pointer walk alone."""
    _, rec = profile(os.path.join(built("chain_fp"), "chain"), memtop_args=("--stack-copy", "0"))
    check_no_allocator_sites(rec)
    site = the_site(rec, "lib_level4_leak", module="libchain.so")
    frames = chain_frames(site, CHAIN)
    for name, f in zip(CHAIN, frames):
        want = "libchain.so" if name in LIB_FUNCS else "chain"
        check(f["module"] == want, "frame %s: module %r, expected %r" %
              (name, f["module"], want))

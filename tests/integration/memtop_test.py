"""memtop_test - helpers for memtop's end-to-end tests (Python 3 stdlib only).

The tests run the real build/memtop as root against the workloads in
tests/workloads/ (built into build/workloads/). A workload prints
"READY pid=N", waits for a byte on stdin, runs its measured phase, prints its
ground truth as one JSON line and waits for EOF on stdin before it _exit()s;
after READY it makes no allocator call outside the phase
(tests/workloads/mt_workload.h). So in -p mode, with memtop attached before
the trigger, memtop's exact per-target counters must equal the truth.

Every process a test starts is registered here; tests/run-integration calls
cleanup_all() after each test, so nothing outlives a failing test, and
describe_processes() to show what each process printed when a test fails.

Sampling tolerances (used by assert_estimate and friends)
---------------------------------------------------------
memtop samples like pprof: a per-thread byte countdown drawn from an
exponential distribution with mean R (--rate). Because the exponential is
memoryless, an allocation of s bytes contains at least one sampling point,
independently of every other allocation, with probability

    p(s) = 1 - exp(-s/R)

and a sampled allocation is weighted by 1/p(s) objects and s/p(s) bytes
(Go's scaleHeapSample). For a set of allocations with n_i of size s_i the
estimates are unbiased sums of independent Bernoulli terms with variances

    Var(bytes)   = sum_i n_i * s_i^2 * (1 - p_i) / p_i
    Var(objects) = sum_i n_i * (1 - p_i) / p_i

The same holds for in-use: the live blocks form such a set (each was sampled
or not when allocated), and memtop's in-use estimate is the sum of the
weights of live samples. Tests assert |estimate - truth| <= K_SIGMA * sigma
+ slack with K_SIGMA = 5: a correct memtop fails a single check with
probability < 1e-6 (Gaussian tails; with >= ~30 expected samples per check
the binomial is close enough), while a wrong weight (say R/s instead of
1/p), lost events or unmatched frees move estimates by far more. The slack
is REL_SLACK of the truth (memtop draws the countdown from a quantised table
of exponential quantiles, which biases the mean rate by well under 1%) plus
one sample's weight max(s/p(s)), because an estimate moves in steps of whole
samples. Tests use --rate 4K so every check rests on hundreds of samples.
"""

import json
import math
import os
import queue
import re
import shutil
import signal
import stat
import subprocess
import tempfile
import threading
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = os.path.abspath(os.environ.get("MEMTOP_BUILD", os.path.join(ROOT, "build")))
MEMTOP = os.environ.get("MEMTOP", os.path.join(BUILD, "memtop"))
WORKLOADS = os.path.join(BUILD, "workloads")

K_SIGMA = 5.0
REL_SLACK = 0.02
TEST_RATE = 4096
# A run whose magnitudes are checked against a workload's truth: a small
# rate for many samples, and no overhead budget, since duty-cycling the
# probes (memtop's default above 10% slowdown) makes counters inexact and
# the workloads allocate as fast as they can.
RATE_ARGS = ("--rate", "4K", "--max-overhead", "none")

TARGET_FIELDS = {"pid": int, "comm": str, "alive": bool, "rss_bytes": int,
                 "alloc_calls": int, "free_calls": int, "alloc_bytes": int,
                 "mechanism": str, "mechanism_reason": (str, type(None)),
                 # null until measured on it (probes.md 6.2)
                 "slowdown_pct": (int, float, type(None)),
                 "slowdown_range_pct": (list, type(None)), "phase_seen": (int, float)}
EXACT_COUNTERS = ("alloc_calls", "free_calls", "alloc_bytes")
SITE_FIELDS = {"function": (str, type(None)), "module": (str, type(None)),
               "file": (str, type(None)), "line": (int, type(None)),
               "alloc_bytes_per_s": (int, float), "alloc_objects_per_s": (int, float),
               "inuse_bytes": (int, float), "inuse_objects": (int, float),
               "inuse_bytes_low": (int, float), "inuse_bytes_high": (int, float),
               "samples": int}


class TestFailure(AssertionError):
    """A test's assertion failed; the message says what and by how much."""


def fail(msg):
    raise TestFailure(msg)


def check(cond, msg):
    if not cond:
        fail(msg)


# ==== Processes ====

_started = []
_dirs = []  # scratch_dir()'s
JVM_SOCKET = re.compile(r"^\.(?:java_pid|memtop-jvmti-)(\d+)$")


class _Lines:
    """Collects a pipe's lines on a thread; get() waits with a timeout."""

    def __init__(self, pipe, label):
        self.label = label
        self.lines = []
        self.eof = False
        self._q = queue.Queue()
        self._pipe = pipe
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self):
        for raw in iter(self._pipe.readline, b""):
            line = raw.decode("utf-8", "replace").rstrip("\n")
            self.lines.append(line)
            self._q.put(line)
        self.eof = True
        self._q.put(None)

    def get(self, timeout, what):
        """Next line, or None at EOF; fails after timeout seconds."""
        try:
            line = self._q.get(timeout=timeout)
        except queue.Empty:
            fail("%s: nothing on %s within %.1fs" % (what, self.label, timeout))
        if line is None:
            self._q.put(None)  # stay at EOF for later callers
        return line

    def join(self, timeout=5):
        self._thread.join(timeout)

    def text(self):
        return "\n".join(self.lines)


class Proc:
    """A started process with its stdout/stderr read line by line."""

    def __init__(self, argv, stdin=subprocess.PIPE, name=None, **kw):
        self.argv = [str(a) for a in argv]
        self.name = name or os.path.basename(self.argv[0])
        self.popen = subprocess.Popen(self.argv, stdin=stdin, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, **kw)
        self.pid = self.popen.pid
        self.started = time.monotonic()
        self.out = _Lines(self.popen.stdout, "%s stdout" % self.name)
        self.err = _Lines(self.popen.stderr, "%s stderr" % self.name)
        _started.append(self)

    def poll(self):
        return self.popen.poll()

    def wait(self, timeout):
        """Exit status (negative: killed by that signal); fails on timeout."""
        try:
            rc = self.popen.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            fail("%s did not exit within %.1fs" % (self.name, timeout))
        self.out.join()
        self.err.join()
        return rc

    def send(self, sig):
        if self.popen.poll() is None:
            self.popen.send_signal(sig)

    def kill(self):
        if self.popen.poll() is None:
            self.popen.kill()
        try:
            self.popen.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        for f in (self.popen.stdin, self.popen.stdout, self.popen.stderr):
            try:
                if f:
                    f.close()
            except OSError:
                pass

    def stderr_lines(self):
        return [l for l in self.err.lines if l.strip()]


class Workload(Proc):
    """A ground-truth workload from build/workloads."""

    def __init__(self, name, *args, stdin=subprocess.PIPE):
        super().__init__([os.path.join(WORKLOADS, name)] + list(args), stdin=stdin, name=name)

    def wait_ready(self, timeout=10):
        while True:
            line = self.out.get(max(0.1, timeout - (time.monotonic() - self.started)),
                                "%s READY" % self.name)
            if line is None:
                fail("%s exited before READY (rc %s): %s" %
                     (self.name, self.poll(), self.err.text()[-500:]))
            if line.startswith("READY"):
                return self

    def trigger(self):
        self.popen.stdin.write(b"g")
        self.popen.stdin.flush()

    def read_truth(self, timeout=30):
        t0 = time.monotonic()
        while True:
            line = self.out.get(max(0.1, timeout - (time.monotonic() - t0)),
                                "%s truth" % self.name)
            if line is None:
                fail("%s exited without its truth (rc %s): %s" %
                     (self.name, self.poll(), self.err.text()[-500:]))
            if line.startswith("{"):
                return parse_truth(line, self.name)

    def release(self):
        """Close stdin: the workload _exit()s (after its truth, if started)."""
        try:
            self.popen.stdin.close()
        except OSError:
            pass


def parse_truth(line, what):
    try:
        truth = json.loads(line)
    except ValueError as e:
        fail("%s printed a bad truth line (%s): %s" % (what, e, line[:300]))
    check("truth" in truth, "%s: not a truth line: %s" % (what, line[:300]))
    return truth


def read_truth_file(path):
    with open(path) as f:
        for line in f:
            if line.startswith("{"):
                return parse_truth(line, path)
    fail("no truth line in %s" % path)


# MEMTOP_TEST_PROBE_MODE=uretprobe runs every live memtop of the tests
# with --probe-mode uretprobe: the mode of every kernel before 6.13
# (make check runs test_core so in a lane of its own).
PROBE_MODE = os.environ.get("MEMTOP_TEST_PROBE_MODE", "")


class Memtop(Proc):
    """build/memtop with the given arguments; stdin is /dev/null. With
    -- CMD it runs in a temporary directory (self.cwd, removed by kill())
    with XDG_STATE_HOME in it, so the command's output file
    memtop-cmd-PID.log lands in self.log_dir (self.cwd/state/memtop)
    unless --cmd-log says otherwise. env: memtop's environment (the
    command's too), else the test's."""

    def __init__(self, *args, stdin=subprocess.DEVNULL, prefix=(), cwd=None, env=None,
                 binary=None):
        args = [str(a) for a in args]
        if PROBE_MODE and "--probe-mode" not in args and not args[:1] == ["attach"] and \
                "--replay" not in args:
            args = ["--probe-mode", PROBE_MODE] + args
        self.own_cwd = cwd is None and "--" in args
        self.cwd = tempfile.mkdtemp(prefix="memtop-cwd-") if self.own_cwd else cwd
        self.log_dir = None
        if self.own_cwd:
            env = dict(os.environ if env is None else env)
            env.setdefault("XDG_STATE_HOME", os.path.join(self.cwd, "state"))
            self.log_dir = os.path.join(env["XDG_STATE_HOME"], "memtop")
        super().__init__(list(prefix) + [binary or MEMTOP] + args, stdin=stdin, name="memtop",
                         cwd=self.cwd, env=env)
        self.records = []

    def kill(self):
        super().kill()
        if self.own_cwd:
            shutil.rmtree(self.cwd, ignore_errors=True)
            self.own_cwd = False

    def record(self, timeout=15):
        """Next JSON record (schema-checked), or None once memtop has exited."""
        line = self.out.get(timeout, "memtop JSON record")
        if line is None:
            return None
        try:
            rec = json.loads(line)
        except ValueError as e:
            fail("memtop printed a line that is not JSON (%s): %s" % (e, line[:300]))
        check_schema(rec)
        self.records.append(rec)
        return rec

    def first_record(self, timeout=20):
        rec = self.record(timeout)
        if rec is None:
            fail("memtop exited (rc %s) before its first record; stderr: %s" %
                 (self.wait(5), self.err.text()[-800:]))
        return rec

    def records_after(self, t_wall, count=2, timeout=20, keep=None):
        """Read records until `count` of them have a time after t_wall (unix
        seconds); returns the last one read (each one read is appended to
        the list keep, if given)."""
        seen, rec = 0, None
        t0 = time.monotonic()
        while seen < count:
            left = timeout - (time.monotonic() - t0)
            check(left > 0, "memtop: fewer than %d records after the truth in %.0fs" %
                  (count, timeout))
            rec = self.record(left)
            if rec is None:
                fail("memtop exited (rc %s) while records were expected; stderr: %s" %
                     (self.wait(5), self.err.text()[-800:]))
            if keep is not None:
                keep.append(rec)
            if rec["time"] > t_wall:
                seen += 1
        return rec

    def drain(self, timeout=20):
        """Read records until memtop exits; returns its exit status."""
        t0 = time.monotonic()
        while self.record(max(0.1, timeout - (time.monotonic() - t0))) is not None:
            pass
        return self.wait(max(0.1, timeout - (time.monotonic() - t0)))


def assert_replay_equals_live(live, recording, *extra):
    """memtop --replay RECORDING --json prints what the live run printed
    (the JSON records `live`), interval by interval (docs/recording.md);
    the recording may hold one interval more (it is written before each
    line is printed). Returns the replayed records."""
    r = subprocess.run([MEMTOP, "--replay", recording, "--json"] + [str(a) for a in extra],
                       capture_output=True, text=True, timeout=60)
    check(r.returncode == 0, "replay failed (%d): %s" % (r.returncode, r.stderr))
    replayed = [json.loads(l) for l in r.stdout.splitlines()]
    check(len(replayed) >= len(live), "replay has %d intervals, the live run printed %d" %
          (len(replayed), len(live)))
    for i, (a, b) in enumerate(zip(live, replayed)):
        if a != b:
            diff = [k for k in a if a[k] != b.get(k)]
            fail("interval %d differs in %s:\nlive   %s\nreplay %s" %
                 (i, diff, json.dumps({k: a[k] for k in diff})[:800],
                  json.dumps({k: b.get(k) for k in diff})[:800]))
    return replayed


def memtop_unsanitized():
    """The memtop to run where memtop itself must load another allocator
    (LD_PRELOAD=libtcmalloc in its own environment, which a command it
    launches inherits): the build under test, unless that is an ASan build
    (make asan), which cannot share its process with another malloc (ASan
    refuses to start; told not to check, it crashes); then the plain
    build beside it, which make asan's callers build first."""
    with open(MEMTOP, "rb") as f:
        sanitized = b"libasan.so" in f.read()
    if not sanitized:
        return MEMTOP
    plain = os.path.join(ROOT, "build", "memtop")
    check(os.path.exists(plain), "an ASan build needs the plain one beside it: %s" % plain)
    return plain


def workload_path(name):
    return os.path.join(WORKLOADS, name)


def scratch_dir(prefix):
    """A directory of the current test's own, removed when it ends (after
    its processes are killed)."""
    d = tempfile.mkdtemp(prefix=prefix)
    _dirs.append(d)
    return d


def _sweep_jvm_sockets():
    """Take out of /tmp the sockets that JVMs killed with SIGKILL left (the
    attach listener's, memtop's agent's): PIDs wrap at 32,768 here, and a
    later test whose JVM had the PID met them (a day of runs left 235)."""
    for name in os.listdir("/tmp"):
        g = JVM_SOCKET.match(name)
        if not g or os.path.exists("/proc/%s" % g.group(1)):
            continue
        path = os.path.join("/tmp", name)
        try:
            if stat.S_ISSOCK(os.lstat(path).st_mode):
                os.unlink(path)
        except FileNotFoundError:
            pass


def cleanup_all():
    """Kill every process started by the current test, then remove its
    directories, and the sockets of JVMs gone."""
    while _started:
        _started.pop().kill()
    while _dirs:
        shutil.rmtree(_dirs.pop(), ignore_errors=True)
    _sweep_jvm_sockets()


def describe_processes(max_lines=15):
    """What each process of the current test printed, for failure reports."""
    out = []
    for p in _started:
        out.append("  $ %s  (rc %s)" % (" ".join(p.argv), p.poll()))
        report = _sanitizer_report(p.err.lines)
        for l in report:
            out.append("    sanitizer| %s" % l[:240])
        for label, lines in (("stderr", p.err.lines), ("stdout", p.out.lines)):
            for l in lines[-max_lines:]:
                out.append("    %s| %s" % (label, l[:240]))
    return "\n".join(out)


def _sanitizer_report(lines, max_lines=40):
    """The head of an ASan or UBSan report in lines (its first line and
    the stacks under it), which the tail alone cuts off."""
    for i, l in enumerate(lines):
        if "ERROR: AddressSanitizer" in l or "ERROR: LeakSanitizer" in l or \
                "runtime error:" in l:
            return lines[i:i + max_lines]
    return []


# ==== JSON records ====

def _type_ok(v, types):
    if not isinstance(types, tuple):
        types = (types,)
    if isinstance(v, bool) and bool not in types:
        return False
    return isinstance(v, types)


def check_schema(rec):
    """Fail unless rec has the documented fields with the documented types."""
    def need(obj, key, types, where):
        check(key in obj, "%s: no field %r in %s" % (where, key, json.dumps(obj)[:300]))
        check(_type_ok(obj[key], types), "%s: field %r has type %s: %r" %
              (where, key, type(obj[key]).__name__, obj[key]))

    need(rec, "time", (int, float), "record")
    need(rec, "interval_s", (int, float), "record")
    need(rec, "rate", int, "record")
    need(rec, "targets", list, "record")
    need(rec, "sites", list, "record")
    need(rec, "dropped", dict, "record")
    need(rec["dropped"], "events", int, "record.dropped")
    need(rec["dropped"], "live_map_full", int, "record.dropped")
    for t in rec["targets"]:
        for k, ty in TARGET_FIELDS.items():
            # a target whose counters are not exact (probes duty-cycled, or
            # a USDT source) shows them as null rather than wrong
            if t.get("counters_exact") is False and k in EXACT_COUNTERS and t.get(k) is None:
                continue
            need(t, k, ty, "target")
    for s in rec["sites"]:
        for k, ty in SITE_FIELDS.items():
            need(s, k, ty, "site")


class RedisServer:
    """Debian's redis-server on a unix socket in tmp, no persistence, its
    DEBUG command on for local clients; started and ready (its socket
    made) when built."""

    def __init__(self, tmp, name):
        self.sock = os.path.join(tmp, name + ".sock")
        self.proc = Proc([shutil.which("redis-server"), "--port", "0", "--unixsocket",
                          self.sock, "--save", "", "--appendonly", "no", "--dir", tmp,
                          "--enable-debug-command", "local"], name="redis-server " + name)
        t0 = time.monotonic()
        while not os.path.exists(self.sock):
            check(self.proc.poll() is None, "redis-server exited: %s" %
                  self.proc.err.text()[-300:])
            check(time.monotonic() - t0 < 10, "redis-server made no socket in 10 s")
            time.sleep(0.05)

    def cli(self, *args, stdin=None):
        r = subprocess.run([shutil.which("redis-cli"), "-s", self.sock] + list(args),
                           input=stdin, capture_output=True, timeout=120)
        check(r.returncode == 0, "redis-cli %s: %s" % (" ".join(args), r.stderr[-300:]))
        return r.stdout.decode().strip()

    def load(self, data):
        self.cli("--pipe", stdin=data)

    def state(self):
        return self.cli("DEBUG", "DIGEST"), self.cli("DBSIZE")


def target(rec, pid):
    for t in rec["targets"]:
        if t["pid"] == pid:
            return t
    fail("pid %d not among the record's targets %s" % (pid, [t["pid"] for t in rec["targets"]]))


SUMMED = ("alloc_bytes_per_s", "alloc_objects_per_s", "inuse_bytes", "inuse_objects",
          "samples", "alloc_bytes", "alloc_objects")


def sites_by_function(rec):
    """{function: site} with numbers summed over entries of one function
    (memtop may split a function by line or stack)."""
    out = {}
    for s in rec["sites"]:
        acc = out.setdefault(s["function"], {"function": s["function"], "entries": []})
        acc["entries"].append(s)
        for k in SUMMED:
            if k in s:
                acc[k] = acc.get(k, 0) + s[k]
    return out


def site_value(rec, function, key, default=0):
    return sites_by_function(rec).get(function, {}).get(key, default)


def truth_site(truth, function):
    for s in truth["sites"]:
        if s["function"] == function:
            return s
    fail("no site %s in the truth" % function)


# ==== Sampling maths (see the module comment) ====

def p_sample(size, rate):
    return -math.expm1(-size / rate)


def sigma(sizes, rate):
    """Sampling error of the estimates of a set of allocations [[size,
    count], ...]: (bytes sigma, objects sigma, largest one-sample weight in
    bytes, largest one-sample weight in objects)."""
    vb = vo = step_b = step_o = 0.0
    for size, n in sizes:
        if n <= 0 or size <= 0:
            continue
        p = p_sample(size, rate)
        vb += n * size * size * (1 - p) / p
        vo += n * (1 - p) / p
        step_b = max(step_b, size / p)
        step_o = max(step_o, 1 / p)
    return math.sqrt(vb), math.sqrt(vo), step_b, step_o


def tolerance(truth, sig, step):
    return K_SIGMA * sig + REL_SLACK * abs(truth) + step


def assert_estimate(what, est, truth, sizes, rate, objects=False):
    """est must be within the sampling tolerance of truth."""
    sb, so, step_b, step_o = sigma(sizes, rate)
    sig, step = (so, step_o) if objects else (sb, step_b)
    tol = tolerance(truth, sig, step)
    if abs(est - truth) > tol:
        fail("%s: estimate %.0f, truth %.0f, off by %+.0f (%.1f sigma); tolerance %.0f "
             "(%g sigma of %.0f + %g%% + one sample %.0f)" %
             (what, est, truth, est - truth, (est - truth) / sig if sig else float("inf"),
              tol, K_SIGMA, sig, REL_SLACK * 100, step))


def upper_bound(truth_peak, peak_sizes, rate):
    """Largest in-use estimate a correct memtop shows for a site whose live
    blocks never exceeded truth_peak bytes (peak_sizes at that moment)."""
    sb, _, step, _ = sigma(peak_sizes, rate)
    return truth_peak + tolerance(truth_peak, sb, step)


# ==== Assertions ====

def assert_eq(what, actual, expected):
    if actual != expected:
        fail("%s: got %r, expected %r (diff %+r)" %
             (what, actual, expected,
              actual - expected if isinstance(actual, (int, float)) and
              isinstance(expected, (int, float)) else "n/a"))


def assert_counters_equal(rec, pid, truth, what="counters", startup_slack=0):
    """The target's exact counters equal the truth. With startup_slack (a
    process memtop may have caught before its READY: a -- CMD child, one
    that joined a watched cgroup) the call counters may exceed it by at most
    that many calls and the bytes by at most 256 KiB (libstdc++'s emergency
    pool alone is about 72 KiB): its start-up's, which memtop counts and the
    truth does not."""
    t = target(rec, pid)
    check(t.get("counters_exact") is not False and None not in (
        t["alloc_calls"], t["free_calls"], t["alloc_bytes"]),
        "%s of pid %d: memtop says they are not exact: %s" % (what, pid, t))
    bound = {"alloc_calls": startup_slack, "free_calls": startup_slack,
             "alloc_bytes": 256 << 10 if startup_slack else 0}
    diffs = ["%s %d != truth %d (%+d)" % (k, t[k], truth[k], t[k] - truth[k])
             for k in ("alloc_calls", "free_calls", "alloc_bytes")
             if not 0 <= t[k] - truth[k] <= bound[k]]
    if diffs:
        fail("%s of pid %d: %s%s" % (what, pid, "; ".join(diffs),
                                     " (start-up allows +%d calls)" % startup_slack
                                     if startup_slack else ""))


def assert_one_error_line(proc, rc, pattern=None):
    """memtop failed: non-zero exit (not a crash), exactly one stderr line
    starting with "memtop: ", matching pattern (a regex, case-insensitive)."""
    lines = proc.stderr_lines()
    check(rc is not None and rc > 0,
          "expected a non-zero exit, got %s; stderr: %s" % (rc, lines[:5]))
    check(len(lines) == 1, "expected exactly one stderr line, got %d: %s" %
          (len(lines), lines[:8]))
    check(lines[0].startswith("memtop: "),
          "stderr line does not start with 'memtop: ': %r" % lines[0])
    if pattern:
        check(re.search(pattern, lines[0], re.I),
              "stderr line %r does not match /%s/" % (lines[0], pattern))
    return lines[0]


# ==== Leftovers ====

def _bpftool(kind):
    try:
        out = subprocess.run(["bpftool", "-j", kind, "show"], capture_output=True,
                             timeout=10, check=False).stdout
        return {(kind, x.get("id"), x.get("name", x.get("type"))) for x in json.loads(out or b"[]")}
    except (OSError, ValueError, subprocess.TimeoutExpired) as e:
        fail("bpftool %s show failed: %s" % (kind, e))


def _uprobe_events():
    for path in ("/sys/kernel/tracing/uprobe_events", "/sys/kernel/debug/tracing/uprobe_events"):
        try:
            with open(path) as f:
                return {("uprobe_event", l.strip(), "") for l in f if l.strip()}
        except OSError:
            continue
    return set()


def _memtop_pids():
    pids = set()
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open("/proc/%s/comm" % d) as f:
                    if f.read().strip() == "memtop":
                        pids.add(int(d))
            except OSError:
                pass
    return pids


def bpf_snapshot():
    """BPF programs, links and uprobe events present now."""
    return _bpftool("prog") | _bpftool("link") | _uprobe_events()


def _runner_pid():
    """The test runner this process runs under (tests/run-integration sets
    MEMTOP_TEST_RUNNER in the lanes it starts), or None."""
    v = os.environ.get("MEMTOP_TEST_RUNNER", "")
    return int(v) if v.isdigit() else None


def _descends_from(pid, ancestor):
    seen = 0
    while pid > 1 and seen < 64:
        if pid == ancestor:
            return True
        try:
            with open("/proc/%d/stat" % pid) as f:
                pid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            return False
        seen += 1
    return False


def bpf_descriptors(pid):
    """[("prog"|"link"|"map", id)] of the BPF objects whose descriptors
    pid holds open (its /proc/PID/fdinfo; a link's names its program too)."""
    found = []
    try:
        fds = os.listdir("/proc/%d/fdinfo" % pid)
    except OSError:
        return found
    for fd in fds:
        try:
            with open("/proc/%d/fdinfo/%s" % (pid, fd)) as f:
                info = f.read()
        except OSError:
            continue
        for key, kind in (("prog_id", "prog"), ("link_id", "link"), ("map_id", "map")):
            m = re.search(r"^%s:\s+(\d+)" % key, info, re.M)
            if m:
                found.append((kind, int(m.group(1))))
    return found


def _of_runner(pid, runner):
    """pid belongs to the test runner's lanes: it descends from it, or it
    carries its MEMTOP_TEST_RUNNER in its environment (a memtop in a tmux
    pane: tmux's server is not the runner's child)."""
    if _descends_from(pid, runner):
        return True
    try:
        with open("/proc/%d/environ" % pid, "rb") as f:
            env = f.read().split(b"\0")
    except OSError:
        return False
    return ("MEMTOP_TEST_RUNNER=%d" % runner).encode() in env


def _bpf_held_by(pids):
    """{("prog"|"link", id)} of the BPF programs and links the processes
    pids hold open."""
    return {x for pid in pids for x in bpf_descriptors(pid) if x[0] != "map"}


def assert_nothing_left(before, settle=3.0):
    """No BPF program, link or uprobe event that was not there before
    outlives our memtop. The only ones excused are those a live memtop of
    the same test runner's other lanes (its children, or carrying its
    MEMTOP_TEST_RUNNER: a TUI test's memtop in tmux) holds open (its /proc/PID/fdinfo
    names them); uprobe events, which name no holder, only while such a
    memtop runs. A memtop that is not the runner's (a developer's) excuses
    nothing, unless MEMTOP_TEST_EXCUSE_OTHERS=1 (a shared development
    machine; never in CI)."""
    ours = {p.pid for p in _started}
    runner = _runner_pid()
    others = os.environ.get("MEMTOP_TEST_EXCUSE_OTHERS") == "1"
    deadline = time.monotonic() + settle
    longest = deadline + EXITING_WAIT_S
    while True:
        extra = bpf_snapshot() - before
        lanes = {pid for pid in _memtop_pids() - ours
                 if others or (runner is not None and _of_runner(pid, runner))}
        held = _bpf_held_by(lanes)
        left = {x for x in extra
                if not (x[0] in ("prog", "link") and (x[0], x[1]) in held)
                and not (x[0] == "uprobe_event" and lanes)}
        if not left:
            return
        # a lane's memtop in the middle of its exit has no descriptor
        # table to show, while the kernel still releases its links (a
        # uretprobe-mode memtop under load takes seconds): wait for it
        # to end, bounded, rather than blame this test
        now = time.monotonic()
        if now > deadline and not (now < longest and any(_exiting(p) for p in lanes)):
            holders = _holders_of(left)
            # held by no process at all: the kernel is still releasing
            # them (a link's release can go through a work queue and a
            # grace period after its last holder died); wait, bounded
            if holders or now >= longest:
                fail("left behind after memtop exited: %s; held by %s" %
                     (sorted(left, key=str)[:10], holders or "no process"))
        time.sleep(0.2)


def _holders_of(objs):
    """[(pid, comm, ppid)] of every process holding a descriptor of one of
    the BPF programs or links in objs."""
    want = {(k, i) for k, i, *_ in objs if k in ("prog", "link")}
    found = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        pid = int(d)
        if want & set(bpf_descriptors(pid)):
            try:
                with open("/proc/%d/stat" % pid) as f:
                    st = f.read()
                comm = st[st.index("(") + 1:st.rindex(")")]
                ppid = int(st.rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                comm, ppid = "?", 0
            found.append((pid, comm, ppid))
    return found


# How long assert_nothing_left() waits for another lane's memtop that is
# exiting (its links being released) before it counts what is left.
EXITING_WAIT_S = 30.0


def _exiting(pid):
    """pid is between the start of its exit and its end: not a zombie yet,
    its descriptor table already gone."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
        if state == "Z":
            return False
        return not os.listdir("/proc/%d/fd" % pid)
    except (OSError, IndexError):
        return False


def rss_bytes(pid):
    with open("/proc/%d/statm" % pid) as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

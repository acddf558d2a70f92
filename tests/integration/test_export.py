"""End-to-end tests of memtop's exports: pprof files read by the real pprof
tool (`go tool pprof`, Debian package golang-go), --output-every series,
folded stacks, --push to a Pyroscope-style receiver started by the test, and
the failure paths (unwritable path, full disk, unreachable endpoint).

The workload is mt_sites, whose leak_site leaks --leak-size bytes per round
and never frees them; every magnitude is checked against its ground truth
with the sampling tolerances of memtop_test.assert_estimate."""

import gzip
import http.server
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import urllib.parse

from memtop_test import (RATE_ARGS, TEST_RATE, Memtop, Workload, assert_estimate, assert_one_error_line,
                         check, fail, site_value, truth_site, workload_path)

INTERVAL = "0.5"
WL_ARGS = ("--iterations=2000", "--duration=2")
SAMPLE_TYPES = [("alloc_objects", "count"), ("alloc_space", "bytes"),
                ("inuse_objects", "count"), ("inuse_space", "bytes"),
                ("device_alloc_objects", "count"), ("device_alloc_space", "bytes"),
                ("device_inuse_objects", "count"), ("device_inuse_space", "bytes")]


# ==== A small profile.proto reader (independent of memtop's encoder) ====

def _varint(buf, i):
    v = shift = 0
    while True:
        b = buf[i]
        i += 1
        v |= (b & 0x7F) << shift
        if not b & 0x80:
            return v, i
        shift += 7


def _fields(buf):
    """(field number, wire type, value) of one message: ints for varints,
    bytes for length-delimited fields."""
    i, out = 0, []
    while i < len(buf):
        key, i = _varint(buf, i)
        num, wire = key >> 3, key & 7
        if wire == 0:
            v, i = _varint(buf, i)
        elif wire == 2:
            n, i = _varint(buf, i)
            v, i = buf[i:i + n], i + n
        elif wire == 1:
            v, i = int.from_bytes(buf[i:i + 8], "little"), i + 8
        elif wire == 5:
            v, i = int.from_bytes(buf[i:i + 4], "little"), i + 4
        else:
            fail("bad wire type %d in profile" % wire)
        out.append((num, wire, v))
    return out


def _ints(wire, v):
    """A repeated integer field, packed or not."""
    if wire == 0:
        return [v]
    out, i = [], 0
    while i < len(v):
        x, i = _varint(v, i)
        out.append(x)
    return out


def _signed(x):
    return x - (1 << 64) if x >= 1 << 63 else x


def decode_profile(data):
    """Gunzip and decode a Profile into plain Python values."""
    raw = gzip.decompress(data)
    p = {"strings": [], "sample_types": [], "samples": [], "locations": {}, "functions": {},
         "mappings": [], "comments": [], "period": 0, "period_type": None}
    for num, wire, v in _fields(raw):
        if num == 1:
            f = dict((n, x) for n, _, x in _fields(v))
            p["sample_types"].append((f.get(1, 0), f.get(2, 0)))
        elif num == 2:
            s = {"locs": [], "values": [], "labels": []}
            for n, w, x in _fields(v):
                if n == 1:
                    s["locs"] += _ints(w, x)
                elif n == 2:
                    s["values"] += [_signed(y) for y in _ints(w, x)]
                elif n == 3:
                    f = dict((a, b) for a, _, b in _fields(x))
                    s["labels"].append((f.get(1, 0), f.get(2, 0)))
            p["samples"].append(s)
        elif num == 3:
            p["mappings"].append(dict((n, x) for n, _, x in _fields(v)))
        elif num == 4:
            loc = {"lines": []}
            for n, _, x in _fields(v):
                if n == 4:
                    f = dict((a, b) for a, _, b in _fields(x))
                    loc["lines"].append(f.get(1, 0))
                else:
                    loc[n] = x
            p["locations"][loc[1]] = loc
        elif num == 5:
            f = dict((n, x) for n, _, x in _fields(v))
            p["functions"][f[1]] = f.get(2, 0)
        elif num == 6:
            p["strings"].append(v.decode("utf-8", "replace"))
        elif num == 11:
            f = dict((n, x) for n, _, x in _fields(v))
            p["period_type"] = (f.get(1, 0), f.get(2, 0))
        elif num == 12:
            p["period"] = v
        elif num == 13:
            p["comments"] += _ints(wire, v)
    s = p["strings"]
    check(s and s[0] == "", "string_table[0] is not \"\"")
    p["sample_types"] = [(s[t], s[u]) for t, u in p["sample_types"]]
    if p["period_type"]:
        p["period_type"] = (s[p["period_type"][0]], s[p["period_type"][1]])
    p["comments"] = [s[c] for c in p["comments"]]
    for smp in p["samples"]:
        smp["labels"] = dict((s[k], s[v]) for k, v in smp["labels"])
        # leaf first; an inlined location's lines are callee first
        smp["stack"] = [s[p["functions"][fid]]
                        for lid in smp["locs"] for fid in p["locations"][lid]["lines"]]
    return p


def leaf_total(p, function, sample_type):
    """Sum of sample_type over samples whose leaf function is function."""
    idx = [t for t, _ in p["sample_types"]].index(sample_type)
    return sum(s["values"][idx] for s in p["samples"] if s["stack"] and s["stack"][0] == function)


# ==== Helpers ====

def run_until_truth(memtop_args, wl_args=WL_ARGS, records_after=2):
    """Start mt_sites, attach memtop in JSON mode with memtop_args, run the
    phase; return (workload, memtop, truth) once memtop has shown
    records_after records taken after the phase."""
    w = Workload("mt_sites", *wl_args).wait_ready()
    m = Memtop("-b", "--json", "-d", INTERVAL, *RATE_ARGS, *memtop_args, "-p", w.pid)
    m.first_record()
    w.trigger()
    truth = w.read_truth(timeout=60)
    m.records_after(truth["time"], count=records_after)
    return w, m, truth


def assert_same(what, exported, shown, count=1):
    """An exported value must equal what memtop's own JSON showed for the
    same (idle) moment, up to the rounding of count integers."""
    if abs(exported - shown) > 0.001 * abs(shown) + count:
        fail("%s: exported %.0f, but memtop's JSON shows %.0f" % (what, exported, shown))


def stop(m, timeout=20):
    """SIGINT memtop (its target still alive) and return its exit status."""
    m.send(signal.SIGINT)
    return m.drain(timeout)


def go_pprof(*args):
    r = subprocess.run(["go", "tool", "pprof"] + list(args), capture_output=True, text=True,
                       timeout=120, env=dict(os.environ, HOME=os.environ.get("HOME", "/root"),
                                             PPROF_TMPDIR=tempfile.gettempdir()))
    check(r.returncode == 0, "go tool pprof %s failed (%d): %s" %
          (" ".join(args), r.returncode, r.stderr[-800:]))
    return r.stdout


def top_rows(out):
    """-top -unit=B rows: [(flat bytes, cum bytes, name)]."""
    rows = []
    for line in out.splitlines():
        m = re.match(r"\s*(\d+)B?\s+[\d.]+%\s+[\d.]+%\s+(\d+)B?\s+[\d.]+%\s+(.+?)\s*$", line)
        if m:
            rows.append((int(m.group(1)), int(m.group(2)), m.group(3)))
    return rows


def build_id(path):
    out = subprocess.run(["readelf", "-n", path], capture_output=True, text=True).stdout
    m = re.search(r"Build ID:\s*([0-9a-f]+)", out)
    return m.group(1) if m else None


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def mount_tmpfs(path, opts):
    os.makedirs(path, exist_ok=True)
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", opts, "tmpfs", path],
                       capture_output=True, text=True)
    check(r.returncode == 0, "mount tmpfs %s on %s: %s" % (opts, path, r.stderr))


def umount(path):
    subprocess.run(["umount", "-l", path], capture_output=True)


# ==== pprof files ====

def test_pprof_read_by_go_pprof():
    """--output: `go tool pprof -top` names leak_site as the largest in-use
    site with the leak's size; -traces shows its stack down to main; the
    profile carries the Go heap sample types, the sampling period, the
    workload's mapping with its build ID and a comment naming the target."""
    d = tempfile.mkdtemp(prefix="memtop-export-")
    try:
        out = os.path.join(d, "heap.pb.gz")
        w, m, truth = run_until_truth(("--output", out, "--top", "0"))
        shown = m.records[-1]
        rc = stop(m)
        check(rc == 0, "memtop exit status %s; stderr: %s" % (rc, m.err.text()[-500:]))
        check(os.path.exists(out), "memtop did not write %s" % out)
        check(sorted(os.listdir(d)) == ["heap.pb.gz"],
              "files besides the profile: %s" % os.listdir(d))
        leak = truth_site(truth, "leak_site")

        rows = top_rows(go_pprof("-top", "-sample_index=inuse_space", "-unit=B", out))
        check(rows, "no rows in go tool pprof -top output")
        check(rows[0][2] == "leak_site", "top in-use entry is %r, not leak_site: %s" %
              (rows[0][2], rows[:5]))
        flat = sum(r[0] for r in rows if r[2] == "leak_site")
        assert_estimate("pprof leak_site inuse_space", flat, leak["inuse_bytes"],
                        leak["live_sizes"], TEST_RATE)
        assert_same("pprof leak_site inuse_space", flat,
                    site_value(shown, "leak_site", "inuse_bytes"))
        rows = top_rows(go_pprof("-top", "-sample_index=alloc_space", "-unit=B", out))
        flat = sum(r[0] for r in rows if r[2] == "leak_site")
        assert_estimate("pprof leak_site alloc_space", flat, leak["alloc_bytes"],
                        leak["alloc_sizes"], TEST_RATE)
        assert_same("pprof leak_site alloc_space", flat,
                    site_value(shown, "leak_site", "alloc_bytes"))
        check(not any(r[2] in ("malloc", "__libc_malloc") and r[0] for r in rows),
              "allocator frames carry flat cost: %s" % rows[:5])

        traces = go_pprof("-traces", "-sample_index=inuse_space", out)
        blocks = [b for b in traces.split("-----------+") if "leak_site" in b]
        check(blocks, "no trace with leak_site:\n%s" % traces[:2000])
        frames = [l.split()[-1] for l in blocks[0].splitlines() if l.strip()]
        check("main" in frames and frames.index("main") > frames.index("leak_site"),
              "leak_site's trace does not reach main below it: %s" % frames)

        raw = go_pprof("-raw", out)
        check("PeriodType: space bytes" in raw and "Period: 4096" in raw,
              "period type/period wrong:\n%s" % raw[:400])
        check("alloc_objects/count alloc_space/bytes inuse_objects/count inuse_space/bytes"
              in raw, "sample types wrong:\n%s" % raw[:600])
        bid = build_id(workload_path("mt_sites"))
        maps = raw[raw.find("Mappings"):]
        check(any("mt_sites" in l and (not bid or bid in l) for l in maps.splitlines()),
              "no mapping of mt_sites with build ID %s:\n%s" % (bid, maps[:800]))

        with open(out, "rb") as f:
            p = decode_profile(f.read())
        check(p["sample_types"] == SAMPLE_TYPES, "sample types %s" % p["sample_types"])
        check(p["period_type"] == ("space", "bytes") and p["period"] == TEST_RATE,
              "period %s %s" % (p["period_type"], p["period"]))
        check(any("memtop" in c and "pid %d" % w.pid in c for c in p["comments"]),
              "no comment names memtop and pid %d: %s" % (w.pid, p["comments"]))
        check(all(not s["labels"] for s in p["samples"]),
              "one target, yet samples carry labels")
    finally:
        shutil.rmtree(d, ignore_errors=True)


def test_output_every_numbered_files():
    """--output-every 1: numbered snapshots while running, each a valid
    profile, plus the final one at the --output path."""
    d = tempfile.mkdtemp(prefix="memtop-export-")
    try:
        out = os.path.join(d, "heap.pb.gz")
        w, m, truth = run_until_truth(("--output", out, "--output-every", "1"),
                                      records_after=6)
        rc = stop(m)
        check(rc == 0, "memtop exit status %s" % rc)
        names = sorted(os.listdir(d))
        numbered = [n for n in names if re.fullmatch(r"heap\.\d{4}\.pb\.gz", n)]
        check(len(numbered) >= 2, "expected numbered snapshots, found %s" % names)
        check("heap.0001.pb.gz" in numbered, "the series does not start at 0001: %s" % names)
        check("heap.pb.gz" in names, "no final snapshot at %s: %s" % (out, names))
        check(set(names) == set(numbered) | {"heap.pb.gz"}, "stray files: %s" % names)
        for n in numbered[-1:] + ["heap.pb.gz"]:
            with open(os.path.join(d, n), "rb") as f:
                p = decode_profile(f.read())
            check(p["sample_types"] == SAMPLE_TYPES, "%s: sample types %s" % (n, p["sample_types"]))
            check(leaf_total(p, "leak_site", "inuse_space") > 0, "%s has no leak_site" % n)
            go_pprof("-raw", os.path.join(d, n))
    finally:
        shutil.rmtree(d, ignore_errors=True)


def test_folded():
    """--folded: "root;...;leaf bytes" lines; leak_site's line ends the
    stack main;...;leak_site with its in-use estimate."""
    d = tempfile.mkdtemp(prefix="memtop-export-")
    try:
        out = os.path.join(d, "heap.folded")
        w, m, truth = run_until_truth(("--folded", out, "--top", "0"))
        shown = m.records[-1]
        rc = stop(m)
        check(rc == 0, "memtop exit status %s" % rc)
        with open(out) as f:
            lines = f.read().splitlines()
        check(lines, "empty folded file")
        total = 0
        for l in lines:
            mm = re.fullmatch(r"(\S(?:.*\S)?) (\d+)", l)
            check(mm, "not a folded line: %r" % l)
            frames = mm.group(1).split(";")
            if frames[-1] == "leak_site":
                check("main" in frames[:-1], "leak_site's stack lacks main: %r" % l)
                total += int(mm.group(2))
        leak = truth_site(truth, "leak_site")
        assert_estimate("folded leak_site bytes", total, leak["inuse_bytes"],
                        leak["live_sizes"], TEST_RATE)
        assert_same("folded leak_site bytes", total, site_value(shown, "leak_site", "inuse_bytes"))
    finally:
        shutil.rmtree(d, ignore_errors=True)


# ==== Failure paths ====

def test_unwritable_output():
    """A path in a missing directory or on a read-only file system: one
    clear error line and a non-zero exit, nothing created."""
    d = tempfile.mkdtemp(prefix="memtop-export-")
    ro = os.path.join(d, "ro")
    try:
        w = Workload("mt_sites").wait_ready()
        bad = os.path.join(d, "missing", "heap.pb.gz")
        m = Memtop("-b", "-n", "3", *RATE_ARGS, "--output", bad, "-p", w.pid)
        rc = m.wait(20)
        assert_one_error_line(m, rc, r"cannot write .*missing/heap\.pb\.gz.*No such file")

        mount_tmpfs(ro, "ro,size=1m")
        m = Memtop("-b", "-n", "3", *RATE_ARGS, "--folded", os.path.join(ro, "x.folded"),
                   "-p", w.pid)
        rc = m.wait(20)
        assert_one_error_line(m, rc, r"cannot write .*x\.folded.*read-only")
        check(os.listdir(ro) == [], "files left on the read-only mount: %s" % os.listdir(ro))
    finally:
        umount(ro)
        shutil.rmtree(d, ignore_errors=True)


def test_full_disk_leaves_no_partial_file():
    """The disk fills up before the profile is written at exit: a clear
    message naming the cause, a non-zero exit, and no partial or temporary
    file next to the filler."""
    d = tempfile.mkdtemp(prefix="memtop-export-")
    mnt = os.path.join(d, "small")
    try:
        mount_tmpfs(mnt, "size=256k")
        w, m, truth = run_until_truth(("--output", os.path.join(mnt, "heap.pb.gz")))
        fd = os.open(os.path.join(mnt, "filler"), os.O_WRONLY | os.O_CREAT, 0o644)
        try:
            while os.write(fd, b"\0" * 4096) > 0:
                pass
        except OSError:
            pass  # full
        finally:
            os.close(fd)
        rc = stop(m)
        check(rc is not None and rc > 0, "memtop exit status %s after a failed write" % rc)
        err = m.err.text()
        check(re.search(r"cannot write .*heap\.pb\.gz.*No space left on device", err),
              "no clear message about the full disk: %r" % err[-500:])
        check(os.listdir(mnt) == ["filler"], "left behind: %s" % os.listdir(mnt))
    finally:
        umount(mnt)
        shutil.rmtree(d, ignore_errors=True)


# ==== --push ====

class _Receiver(http.server.BaseHTTPRequestHandler):
    """Records every POST (path, headers, body) and answers 200."""

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(n)
        self.server.requests.append((self.path, dict(self.headers), body, time.time()))
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


def start_receiver():
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Receiver)
    srv.requests = []
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


def test_push_to_receiver():
    """--push: gzipped profiles with the Go heap sample types arrive at
    /ingest with name memtop.alloc{host,pid,comm}, from/until and
    format=pprof; leak_site's in-use matches the truth, and its alloc_space
    summed over all pushes (each carries the growth since the previous one)
    matches the truth's cumulative allocations."""
    srv = start_receiver()
    try:
        url = "http://127.0.0.1:%d" % srv.server_address[1]
        w, m, truth = run_until_truth(("--push", url, "--push-every", "1", "--top", "0"))
        deadline = time.time() + 20
        while time.time() < deadline:
            if any(float(urllib.parse.parse_qs(urllib.parse.urlsplit(r[0]).query)
                         .get("until", ["0"])[0]) >= truth["time"] + 1 for r in srv.requests):
                break
            time.sleep(0.2)
        reqs = list(srv.requests)
        shown = m.records[-1]
        rc = stop(m)
        check(rc == 0, "memtop exit status %s" % rc)
        check(reqs, "the receiver got no request")
        leak = truth_site(truth, "leak_site")
        alloc_sum, last_inuse, last_until = 0, None, 0
        for path, headers, body, _ in reqs:
            u = urllib.parse.urlsplit(path)
            q = urllib.parse.parse_qs(u.query)
            check(u.path == "/ingest", "POST to %s, not /ingest" % u.path)
            check(q.get("format") == ["pprof"], "format is %s" % q.get("format"))
            name = q["name"][0]
            mm = re.fullmatch(r"memtop\.alloc\{host=([^,]+),pid=(\d+),comm=([^,}]+)\}", name)
            check(mm, "name %r is not memtop.alloc{host=..,pid=..,comm=..}" % name)
            check(int(mm.group(2)) == w.pid and mm.group(3) == "mt_sites",
                  "labels %r do not name pid %d (mt_sites)" % (name, w.pid))
            frm, until = int(q["from"][0]), int(q["until"][0])
            check(frm < until, "from %d >= until %d" % (frm, until))
            check(body[:2] == b"\x1f\x8b", "body is not gzip")
            p = decode_profile(body)
            check(p["sample_types"] == SAMPLE_TYPES, "sample types %s" % p["sample_types"])
            alloc_sum += leaf_total(p, "leak_site", "alloc_space")
            if until >= last_until:
                last_until, last_inuse = until, leaf_total(p, "leak_site", "inuse_space")
        check(last_until >= truth["time"], "no push covered the end of the phase")
        assert_estimate("pushed leak_site inuse_space", last_inuse, leak["inuse_bytes"],
                        leak["live_sizes"], TEST_RATE)
        assert_estimate("pushed leak_site alloc_space (sum of pushes)", alloc_sum,
                        leak["alloc_bytes"], leak["alloc_sizes"], TEST_RATE)
        assert_same("pushed leak_site inuse_space", last_inuse,
                    site_value(shown, "leak_site", "inuse_bytes"))
        assert_same("pushed leak_site alloc_space (sum of pushes)", alloc_sum,
                    site_value(shown, "leak_site", "alloc_bytes"), count=len(reqs))
    finally:
        srv.shutdown()


def test_push_unreachable_keeps_running():
    """Nothing listens at the --push URL: memtop keeps producing records,
    and the JSON reports the failures under "push"."""
    url = "http://127.0.0.1:%d" % free_port()
    w, m, truth = run_until_truth(("--push", url, "--push-every", "1"), records_after=6)
    rec = m.records[-1]
    check("push" in rec, "no \"push\" object in the JSON record: %s" % sorted(rec))
    push = rec["push"]
    for k in ("sent", "failed", "last_error"):
        check(k in push, "push object lacks %r: %s" % (k, push))
    check(push["sent"] == 0 and push["failed"] >= 1, "push counters %s" % push)
    check(push["last_error"], "empty last_error while every push fails: %s" % push)
    check(m.poll() is None, "memtop stopped")
    rc = stop(m)
    check(rc == 0, "memtop exit status %s with an unreachable endpoint" % rc)

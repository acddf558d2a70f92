"""memtop in the collectors' hands, with the configurations of
docs/export.md ("Copy-paste configurations"), read from the page itself so
they cannot drift from what is tested:

  - Debian's Prometheus, on loopback with a data directory of its own,
    scrapes memtop --serve with the page's prometheus.yml (a scrape every
    second) while mt_sites leaks: once it has scraped twice, the query API
    holds leak_site's memtop_site_inuse_bytes with the documented labels,
    equal to memtop's --json record of the same interval and within the
    sampling bound of the workload's truth;
  - the same against a target whose every sample comes from a new call
    site (thousands of sites, tests/workloads/hostile --jit): at every
    scrape Prometheus holds at most 40 sites, the rest as one site="other"
    series, and the documented maximum of samples, however many sites
    memtop knows;
  - `promtool check metrics` finds nothing to say about /metrics;
  - the page's parca.yaml: every enabled pprof path is read over HTTP by
    `go tool pprof -raw`, as Parca's scraper would, with the default
    sample type Parca expects and leak_site's in-use as the JSON shows;
  - the page's Pyroscope command line, run as it is (only the PID and the
    URL replaced) against a receiver that decodes what arrives.

Prometheus is stopped and its directory removed at the end of each test,
pass or fail (and killed by the harness if the test dies)."""

import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request

from memtop_test import (ROOT, TEST_RATE, Memtop, Proc, Workload, assert_estimate, check, fail,
                         site_value, truth_site)
from test_export import (RATE_ARGS, WL_ARGS, decode_profile, go_pprof, leaf_total,
                         start_receiver, top_rows)

EXPORT_DOC = os.path.join(ROOT, "docs", "export.md")
PROMETHEUS = "/usr/bin/prometheus"
PROMTOOL = "/usr/bin/promtool"
DOC_SERVE = "127.0.0.1:6060"  # the address every configuration of the page uses
SERVING = re.compile(r"^memtop: serving http://(127\.0\.0\.1:\d+)/")
SITE_LABELS = {"__name__", "job", "instance", "site", "function", "module", "file", "line"}
MAX_SITES = 40
MAX_SAMPLES = 12 + 6 * 64 + 4 * MAX_SITES + 2 + 2  # docs/export.md, "Bounded label cardinality"


# ==== The page ====

def doc_block(tag):
    """The fenced block after <!-- tested: tag --> in docs/export.md."""
    with open(EXPORT_DOC) as f:
        text = f.read()
    m = re.search(r"<!-- tested: %s -->\n```[a-z]*\n(.*?)\n```" % re.escape(tag), text, re.S)
    check(m, "docs/export.md has no block marked <!-- tested: %s -->" % tag)
    return m.group(1)


def doc_command(block, program):
    """The argv of the line of a sh block that runs program (continuation
    lines joined), without sudo, redirections and a trailing &."""
    text = block.replace("\\\n", " ")
    for line in text.split("\n"):
        argv = shlex.split(line, comments=True)
        if argv and argv[0] == "sudo":
            argv = argv[1:]
        if argv and argv[0] == program:
            out = []
            for a in argv:
                if a in (">", "&") or a.startswith((">", "2>")):
                    break
                out.append(a)
            return out
    fail("no %s command in the block:\n%s" % (program, block))


# ==== memtop ====

def served_address(m, timeout=20):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for line in list(m.err.lines):
            g = SERVING.match(line)
            if g:
                return g.group(1)
        check(m.poll() is None, "memtop exited (rc %s): %s" % (m.poll(), m.err.text()[-500:]))
        time.sleep(0.05)
    fail("memtop never printed the address it serves on: %s" % m.err.text()[-500:])


def serve(pid, *extra, top=0):
    m = Memtop("-b", "--json", "-d", "1", "--top", top, "--serve", "127.0.0.1:0", *extra,
               "-p", pid)
    addr = served_address(m)
    m.first_record()
    return m, addr


def record_at(m, ts):
    """memtop's JSON record of the interval that closed at ts (unix time,
    as memtop_snapshot_timestamp_seconds says)."""
    rec = next((r for r in m.records if abs(r["time"] - ts) < 0.2), None)
    while rec is None:
        r = m.record()
        check(r is not None, "memtop exited before the record of the interval at %.3f" % ts)
        check(r["time"] < ts + 5, "no JSON record for the interval at %.3f" % ts)
        if abs(r["time"] - ts) < 0.2:
            rec = r
    return rec


def http_get(url, timeout=30):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.status, r.read()


# ==== Prometheus ====

def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def port_open(port):
    s = socket.socket()
    try:
        s.settimeout(1)
        return s.connect_ex(("127.0.0.1", port)) == 0
    finally:
        s.close()


class Prometheus:
    """Debian's prometheus with the page's command line and the given
    configuration, on a free loopback port, its storage in a temporary
    directory. close() stops it and removes the directory."""

    def __init__(self, config):
        check(os.path.exists(PROMETHEUS), "%s is missing (make deps installs prometheus)" %
              PROMETHEUS)
        self.dir = tempfile.mkdtemp(prefix="memtop-prometheus-")
        self.proc = None
        try:
            self._start(config)
        except BaseException:
            self.close()
            raise

    def _start(self, config):
        cfg = os.path.join(self.dir, "prometheus.yml")
        with open(cfg, "w") as f:
            f.write(config + "\n")
        for _ in range(3):  # a port taken between free_port() and its bind: another
            self.port = free_port()
            argv = []
            for a in doc_command(doc_block("prometheus.yml-run"), "prometheus"):
                key = a.split("=", 1)[0]
                argv.append({"--config.file": "--config.file=" + cfg,
                             "--storage.tsdb.path": "--storage.tsdb.path=" +
                             os.path.join(self.dir, "data"),
                             "--web.listen-address": "--web.listen-address=127.0.0.1:%d" %
                             self.port}.get(key, a))
            check(len(argv) == 4, "the page's prometheus command is not the one tested: %s" % argv)
            self.proc = Proc([PROMETHEUS] + argv[1:] + ["--log.level=warn"],
                             stdin=subprocess.DEVNULL, name="prometheus")
            self.url = "http://127.0.0.1:%d" % self.port
            if self.wait_ready():
                return
        fail("prometheus did not start: %s" % self.proc.err.text()[-800:])

    def wait_ready(self, timeout=60):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                return False
            try:
                if http_get(self.url + "/-/ready", timeout=5)[0] == 200:
                    return True
            except (urllib.error.URLError, ConnectionError, OSError):
                pass
            time.sleep(0.2)
        fail("prometheus not ready within %ds: %s" % (timeout, self.proc.err.text()[-800:]))

    def api(self, path, **params):
        url = "%s/api/v1/%s?%s" % (self.url, path, urllib.parse.urlencode(params))
        try:
            status, body = http_get(url)
        except urllib.error.HTTPError as e:
            fail("%s: HTTP %d %s" % (url, e.code, e.read()[:300]))
        out = json.loads(body)
        check(out.get("status") == "success", "%s: %s" % (url, out))
        return out["data"]

    def query(self, q, at):
        data = self.api("query", query=q, time="%.3f" % at)
        check(data["resultType"] == "vector", "%s: %s" % (q, data))
        return [(r["metric"], float(r["value"][1])) for r in data["result"]]

    def scalar(self, q, at):
        got = self.query(q, at)
        check(len(got) == 1, "%s: %d series, expected one: %s" % (q, len(got), got))
        return got[0][1]

    def wait_scrapes(self, n, timeout=30):
        """Until the memtop target is up and was scraped n times; returns
        the time of the query that saw it."""
        deadline = time.monotonic() + timeout
        last = None
        while time.monotonic() < deadline:
            active = self.api("targets", state="active")["activeTargets"]
            last = active
            if active and all(t["health"] == "up" for t in active):
                now = time.time()
                got = self.query('count_over_time(up{job="memtop"}[10m])', now)
                if got and got[0][1] >= n:
                    return now
            time.sleep(0.2)
        fail("prometheus did not scrape memtop %d times within %ds; targets: %s" %
             (n, timeout, last))

    def close(self):
        if self.proc:
            if self.proc.poll() is None:
                self.proc.send(signal.SIGTERM)
                try:
                    self.proc.popen.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    pass
            self.proc.kill()
            check(not port_open(self.port), "prometheus still listens on %d" % self.port)
        shutil.rmtree(self.dir, ignore_errors=True)
        check(not os.path.exists(self.dir), "%s was not removed" % self.dir)


def load_yaml(text):
    import yaml  # python3-yaml (make deps); imported here, so that a
    return yaml.safe_load(text)  # machine without it fails these tests only


def prometheus_for(addr):
    """The page's prometheus.yml, its target moved to where memtop serves."""
    config = doc_block("prometheus.yml")
    parsed = load_yaml(config)
    job = parsed["scrape_configs"][0]
    check(job["job_name"] == "memtop" and job["scrape_interval"] == "1s" and
          job["static_configs"][0]["targets"] == [DOC_SERVE],
          "the page's prometheus.yml is not the one tested: %s" % parsed)
    run = doc_command(doc_block("prometheus.yml-run"), "memtop")
    check(run[run.index("--serve") + 1] == DOC_SERVE,
          "the page's memtop command serves elsewhere than its scrape target: %s" % run)
    return Prometheus(config.replace(DOC_SERVE, addr))


# ==== Tests ====

def test_prometheus_scrapes_memtop():
    w = Workload("mt_sites", *WL_ARGS).wait_ready()
    m, addr = serve(w.pid, *RATE_ARGS)
    w.trigger()
    truth = w.read_truth(timeout=60)
    m.records_after(truth["time"], count=2)
    prom = prometheus_for(addr)
    try:
        at = prom.wait_scrapes(2)
        got = prom.query('memtop_site_inuse_bytes{function="leak_site"}', at)
        check(len(got) == 1, "leak_site: %d series in Prometheus: %s" % (len(got), got))
        labels, value = got[0]
        check(set(labels) == SITE_LABELS, "labels %s, documented %s" %
              (sorted(labels), sorted(SITE_LABELS)))
        check(labels["job"] == "memtop" and labels["instance"] == addr,
              "job/instance: %s" % labels)
        ts = prom.scalar('memtop_snapshot_timestamp_seconds{job="memtop"}', at)
        rec = record_at(m, ts)
        site = [s for s in rec["sites"] if s["function"] == "leak_site"][0]
        check(labels["site"] == str(site["id"]) and labels["file"] == (site["file"] or "") and
              labels["line"] == str(site["line"] or 0) and
              os.path.basename(labels["module"]) == "mt_sites",
              "labels %s do not name the JSON's site %s" % (labels, site))
        check(abs(value - site["inuse_bytes"]) <= 0.5,
              "Prometheus has %.0f bytes in use at leak_site, the JSON of that interval %.0f" %
              (value, site["inuse_bytes"]))
        leak = truth_site(truth, "leak_site")
        assert_estimate("Prometheus leak_site in-use", value, leak["inuse_bytes"],
                        leak["live_sizes"], TEST_RATE)
        nsites = prom.scalar('count(memtop_site_inuse_bytes{job="memtop"})', at)
        known = prom.scalar('memtop_sites{job="memtop"}', at)
        check(nsites == known == len(rec["sites"]) and nsites <= MAX_SITES,
              "%d site series in Prometheus, memtop knows %d sites (JSON: %d)" %
              (nsites, known, len(rec["sites"])))
    finally:
        prom.close()
    w.release()
    m.drain(20)


def test_prometheus_cardinality_bounded_as_sites_churn():
    """hostile --jit: every sample has a call site memtop has not seen
    (--rate 1M, so they keep coming for the whole test instead of
    reaching --max-stacks in a second). Over the scrapes memtop learns
    hundreds of new sites a second, while every scrape Prometheus stored
    holds at most 40 of them (the rest summed in one site="other" series)
    and at most MAX_SAMPLES samples, and the series stay the same ones."""
    from test_hostile import build, lab, start as start_hostile
    exe = build(lab(), lib=False)[0]
    _, pid = start_hostile([exe, "--jit", "65536", "--leak", "yes"])
    m, addr = serve(pid, "--rate", "1M", "--max-overhead", "none", top=5)
    prom = prometheus_for(addr)
    try:
        t0 = time.time()
        at = prom.wait_scrapes(8)
        rng = prom.api("query_range", start="%.3f" % t0, end="%.3f" % at, step="1",
                       query='count(memtop_site_inuse_bytes{job="memtop",site!="other"})')["result"]
        counts = [float(v) for _, v in rng[0]["values"]] if rng else []
        check(len(counts) >= 4 and max(counts) <= MAX_SITES,
              "site series per scrape: %s (at most %d)" % (counts, MAX_SITES))
        # the sites left out are there as one series, in both additive families
        for fam in ("memtop_site_inuse_bytes", "memtop_site_alloc_bytes_per_second"):
            got = prom.query('%s{job="memtop",site="other"}' % fam, at)
            check(len(got) == 1 and got[0][0]["function"] == "[other sites]",
                  "%s: no single site=\"other\" series: %s" % (fam, got))
        check(not prom.query('memtop_site_leak_score{job="memtop",site="other"}', at),
              "a leak score is summed into site=\"other\"")
        samples = prom.api("query_range", start="%.3f" % t0, end="%.3f" % at, step="1",
                           query='scrape_samples_scraped{job="memtop"}')["result"]
        per_scrape = [float(v) for _, v in samples[0]["values"]]
        check(max(per_scrape) <= MAX_SAMPLES, "samples per scrape: %s (at most %d)" %
              (per_scrape, MAX_SAMPLES))
        known = prom.api("query_range", start="%.3f" % t0, end="%.3f" % at, step="1",
                         query='memtop_sites{job="memtop"}')["result"]
        known = [float(v) for _, v in known[0]["values"]]
        distinct = prom.scalar('count(count_over_time('
                               'memtop_site_inuse_bytes{job="memtop",site!="other"}[10m]))', at)
        check(known[-1] > 10 * MAX_SITES and known[-1] > known[0],
              "the sites did not churn (memtop_sites %s): the test shows nothing" % known)
        # new sites no bigger than those shown never push them out (ties
        # keep the older site): the same series all along
        check(distinct <= MAX_SITES, "%d distinct site series over %d scrapes while memtop "
              "learnt %d new sites" % (distinct, len(counts), known[-1] - known[0]))
    finally:
        prom.close()
    m.send(signal.SIGINT)
    m.drain(20)


def test_promtool_check_metrics():
    w = Workload("mt_sites", *WL_ARGS).wait_ready()
    m, addr = serve(w.pid, *RATE_ARGS)
    w.trigger()
    truth = w.read_truth(timeout=60)
    m.records_after(truth["time"], count=2)
    status, body = http_get("http://%s/metrics" % addr)
    check(status == 200 and b"memtop_site_inuse_bytes{" in body, "/metrics: %d %r" %
          (status, body[:200]))
    r = subprocess.run([PROMTOOL, "check", "metrics"], input=body, capture_output=True,
                       timeout=30)
    check(r.returncode == 0 and not r.stdout.strip() and not r.stderr.strip(),
          "promtool check metrics (%d): %s %s" % (r.returncode, r.stdout.decode()[-800:],
                                                  r.stderr.decode()[-800:]))
    w.release()
    m.drain(20)


def test_parca_config_paths_read_by_go_pprof():
    parsed = load_yaml(doc_block("parca.yaml"))
    job = parsed["scrape_configs"][0]
    check(job["static_configs"][0]["targets"] == [DOC_SERVE], "parca.yaml targets %s" % job)
    enabled = {name: c for name, c in job["profiling_config"]["pprof_config"].items()
               if c.get("enabled")}
    check(sorted(enabled) == ["allocs", "memory"] and
          not any(c.get("delta") for c in enabled.values()),
          "parca.yaml's profiles are not the ones tested: %s" % enabled)
    w = Workload("mt_sites", *WL_ARGS).wait_ready()
    m, addr = serve(w.pid, *RATE_ARGS)
    w.trigger()
    truth = w.read_truth(timeout=60)
    shown = m.records_after(truth["time"], count=2)
    leak = truth_site(truth, "leak_site")
    default = {"memory": "inuse_space/bytes[dflt]", "allocs": "alloc_space/bytes[dflt]"}
    for name, c in sorted(enabled.items()):
        url = "http://%s%s" % (addr, c["path"])
        raw = go_pprof("-raw", url)
        check(default[name] in raw, "%s (%s): the default sample type is not %s:\n%s" %
              (name, url, default[name], raw[:400]))
        rows = top_rows(go_pprof("-top", "-unit=B", "-sample_index=inuse_space", url))
        flat = sum(r[0] for r in rows if r[2] == "leak_site")
        assert_estimate("%s leak_site inuse_space" % url, flat, leak["inuse_bytes"],
                        leak["live_sizes"], TEST_RATE)
        inuse = site_value(shown, "leak_site", "inuse_bytes")
        check(abs(flat - inuse) <= 0.001 * inuse + 1,
              "%s: inuse_space %d, JSON shows %.0f" % (url, flat, inuse))
    w.release()
    m.drain(20)


def test_pyroscope_doc_command_pushes():
    argv = doc_command(doc_block("pyroscope"), "memtop")
    check("4242" in argv and "http://127.0.0.1:4040" in argv,
          "the page's Pyroscope command is not the one tested: %s" % argv)
    srv = start_receiver()
    try:
        url = "http://127.0.0.1:%d" % srv.server_address[1]
        # the command keeps memtop's default budget (--max-overhead 10):
        # few, large leaks and little churn keep the probes' cost far below
        # it, so the budget never thins the samples the bound assumes
        w = Workload("mt_sites", "--iterations=100", "--duration=2", "--leak-size=655360",
                     "--churn-per-round=1").wait_ready()
        args = [str(w.pid) if a == "4242" else url if a == "http://127.0.0.1:4040" else a
                for a in argv[1:]]
        m = Memtop(*args)
        deadline = time.monotonic() + 20
        while not any(l.startswith("memtop: attached to PID %d " % w.pid) for l in m.err.lines):
            check(m.poll() is None and time.monotonic() < deadline,
                  "memtop did not attach (rc %s): %s" % (m.poll(), m.err.text()[-400:]))
            time.sleep(0.05)
        w.trigger()
        truth = w.read_truth(timeout=60)
        deadline = time.monotonic() + 40
        got = None
        while got is None:
            for path, headers, body, _ in list(srv.requests):
                q = urllib.parse.parse_qs(urllib.parse.urlsplit(path).query)
                if float(q.get("until", ["0"])[0]) >= truth["time"] + 1:
                    got = (path, q, body)
            check(got or time.monotonic() < deadline,
                  "no push covering the end of the phase within 40 s (%d requests): %s" %
                  (len(srv.requests), m.err.text()[-400:]))
            check(m.poll() is None, "memtop exited: %s" % m.err.text()[-400:])
            time.sleep(0.2)
        path, q, body = got
        check(urllib.parse.urlsplit(path).path == "/ingest" and q.get("format") == ["pprof"],
              "pushed to %s" % path)
        check(q["name"][0].startswith("memtop.alloc{") and
              ",pid=%d,comm=mt_sites}" % w.pid in q["name"][0], "name %r" % q["name"])
        p = decode_profile(body)
        leak = truth_site(truth, "leak_site")
        assert_estimate("pushed leak_site inuse_space (default rate)",
                        leaf_total(p, "leak_site", "inuse_space"), leak["inuse_bytes"],
                        leak["live_sizes"], 512 * 1024)
        w.release()
        m.send(signal.SIGINT)
        check(m.wait(20) == 0, "memtop exit status %s: %s" % (m.poll(), m.err.text()[-400:]))
    finally:
        srv.shutdown()

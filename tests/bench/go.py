#!/usr/bin/env python3
"""tests/bench/go.py - what memtop costs a Go service (issue 14, item 3),
measured two ways in one run (make bench runs it through tests/bench/run).
Not a test: it prints numbers.

    tests/bench/go.py [--quick]

1. The service. Two copies of one long-running, allocation-heavy,
   server-like Go loop (tests/workloads/go/mt_go.go -mode=server: requests
   that build and drop buffers, about 4.3 KB of allocations each, paced to
   RATE requests/s: 0.43 GB/s and some 850 runtime samples/s each at the
   default) run side by side under the same machine load. In each round
   both run bare for WINDOWS one-second windows, then one of them (A,
   then B) is watched by `memtop -b -p PID` with plain defaults (memtop
   probes only the Go runtime's own sampled path, docs/go.md) for WINDOWS
   more. The figure is the CPU time per request of the whole process (GC
   threads and traps included): per window the watched copy's over the
   other's, divided by the same ratio in that round's bare windows, so
   the load of the rest of the machine cancels, mostly: the same run on
   two copies with MemProfileRate 0 (memtop attached, nothing sampled:
   nothing to cost) is printed beside it as the control, whose spread is
   the noise of the measure on this machine.

2. The cost of one sample, where it is large enough to measure exactly:
   one loop with runtime.MemProfileRate = 4096 (about one sample per
   request), paced to 20,000 requests/s, bare and watched windows
   alternating: (CPU per request watched - bare) / samples per request,
   the samples counted by memtop. With it, the service's overhead at the
   default rate follows from its own sample rate and CPU time:
   samples/s x cost / CPU s per s, printed as "expected", beside memtop's
   own report of the target's slowdown.

3. A program that does not import runtime/pprof (mt_go_noprof: its
   MemProfileRate is 0, which memtop sets to 512 KiB while it watches,
   docs/go.md): the same side-by-side rounds on two copies of it, so the
   figure is what watching costs such a program in all: the runtime's own
   sampling, now on, and memtop's probes.

Knobs: ROUNDS=6 WINDOWS=5 RATE=100000 GO_BIN=build/workloads/mt_go
NOPROF_BIN=build/workloads/mt_go_noprof.
"""

import json
import os
import queue
import re
import signal
import statistics
import subprocess
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.path.join(ROOT, "build")
QUICK = "--quick" in sys.argv
ROUNDS = int(os.environ.get("ROUNDS", "4" if QUICK else "6"))
WINDOWS = int(os.environ.get("WINDOWS", "4" if QUICK else "5"))
GO_BIN = os.environ.get("GO_BIN", os.path.join(BUILD, "workloads", "mt_go"))
NOPROF_BIN = os.environ.get("NOPROF_BIN", os.path.join(BUILD, "workloads", "mt_go_noprof"))
RATE = int(os.environ.get("RATE", "100000"))


class Server:
    """One mt_go -mode=server; its "win" lines are read on a thread."""

    def __init__(self, name, rate=None, *extra, binary=None):
        self.name = name
        self.proc = subprocess.Popen([binary or GO_BIN, "-mode=server", "-rate", str(rate or RATE)] +
                                     list(extra), stdout=subprocess.PIPE)
        ready = self.proc.stdout.readline().decode().split()
        if ready[:1] != ["READY"]:
            raise SystemExit("mt_go: %s" % ready)
        self.version = ready[1]
        self.lines = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for raw in iter(self.proc.stdout.readline, b""):
            if raw.startswith(b"win "):
                self.lines.put(tuple(float(x) for x in raw.split()[1:3]))
        self.lines.put(None)

    def window(self):
        w = self.lines.get(timeout=30)
        if w is None:
            raise SystemExit("mt_go %s ended" % self.name)
        self.last = w
        return w

    def skip(self):
        while not self.lines.empty():
            self.lines.get()


def phase(a, b, n):
    """n windows of both after one to settle: medians of B/A for requests/s
    and CPU ns/request."""
    a.skip()
    b.skip()
    a.window()
    b.window()
    tput, cpu = [], []
    for _ in range(n):
        wa, wb = a.window(), b.window()
        tput.append(wb[0] / wa[0])
        cpu.append(wb[1] / wa[1])
    return statistics.median(tput), statistics.median(cpu)


def watch(pid):
    """memtop -b --json -p pid with plain defaults, once its probes are on."""
    m = subprocess.Popen([os.path.join(BUILD, "memtop"), "-b", "--json", "-d", "1", "-p",
                          str(pid)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    line = m.stderr.readline().decode()
    if "runtime.MemProfileRate was 0" in line:  # a NOPROF_BIN server: memtop sets it
        line = m.stderr.readline().decode()
    if "Go runtime" not in line:
        raise SystemExit("memtop: %s" % line.strip())
    return m


def stop(m):
    """Stop memtop; its JSON records."""
    m.send_signal(signal.SIGINT)
    out = m.communicate(timeout=60)[0].decode()
    return [json.loads(l) for l in out.splitlines() if l.startswith("{")]


def per_sample_cost():
    """ns of the target's CPU per sample memtop adds, and ns per sample the
    runtime's own sampling costs (the same loop at MemProfileRate 0 beside
    it, bare windows side by side)."""
    srv = Server("S", 20000, "-profrate", "4096")
    zero = Server("Z", 20000, "-profrate", "0")
    costs, own = [], []
    try:
        for _ in range(max(2, ROUNDS // 2)):
            srv.skip()
            zero.skip()
            srv.window()
            zero.window()
            pairs = [(srv.window()[1], zero.window()[1]) for _ in range(WINDOWS)]
            bare = statistics.median(p[0] for p in pairs)
            bare_zero = statistics.median(p[1] for p in pairs)
            m = watch(srv.proc.pid)
            srv.skip()
            srv.window()
            t0 = time.monotonic()
            on = [srv.window() for _ in range(WINDOWS)]
            recs = stop(m)
            span = time.monotonic() - t0
            samples = recs[-1]["targets"][0]["samples"] if recs else 0
            requests = sum(w[0] for w in on) * span / len(on)
            per_req = samples / requests if requests else 0
            cpu = statistics.median(w[1] for w in on)
            if per_req > 0:
                costs.append((cpu - bare) / per_req)
                own.append((bare - bare_zero) / per_req)
                print("per sample: bare %.0f ns/request (%.0f at MemProfileRate 0), watched %.0f, "
                      "%.2f samples/request: memtop %.0f ns per sample, the runtime's own "
                      "sampling %.0f" % (bare, bare_zero, cpu, per_req, costs[-1], own[-1]),
                      flush=True)
    finally:
        for p in (srv, zero):
            p.proc.kill()
            p.proc.wait(timeout=30)
    nan = float("nan")
    return (statistics.median(costs) if costs else nan), (statistics.median(own) if own else nan)


def side_by_side(label, *extra, binary=None):
    """Part 1 on two servers started with extra arguments: per-round CPU
    ratios, memtop's reported slowdowns, samples/s and CPU s/s of the
    watched copy (and, in tput_ratios, its requests/s ratio the same
    way)."""
    servers = [Server("A", None, *extra, binary=binary), Server("B", None, *extra, binary=binary)]
    cpu_ratios, reported, rates, cpus = [], [], [], []
    tput_ratios = []
    try:
        for r in range(1, ROUNDS + 1):
            watched, other = servers[(r - 1) % 2], servers[r % 2]
            bare = phase(other, watched, WINDOWS)
            m = watch(watched.proc.pid)
            t0 = time.monotonic()
            on = phase(other, watched, WINDOWS)
            recs = stop(m)
            span = time.monotonic() - t0
            reported += [r["targets"][0]["slowdown_pct"] for r in recs[1:]
                         if r["targets"][0]["slowdown_pct"] is not None]
            if recs:
                rates.append(recs[-1]["targets"][0]["samples"] / span)
                cpus.append(watched.last[1] * watched.last[0] / 1e9)
            cpu_ratios.append(on[1] / bare[1])
            tput_ratios.append(on[0] / bare[0])
            print("%s round %d: %s watched: CPU per request x%.4f (against %s, relative to "
                  "the bare windows)" % (label, r, watched.name, cpu_ratios[-1], other.name),
                  flush=True)
    finally:
        for s in servers:
            s.proc.kill()
            s.proc.wait(timeout=30)
    side_by_side.tput_ratios = tput_ratios
    return cpu_ratios, reported, rates, cpus, servers[0].version


def main():
    if os.geteuid() != 0:
        raise SystemExit("needs root")
    subprocess.run(["make", "--no-print-directory", "-C", ROOT, "build/memtop",
                    os.path.relpath(GO_BIN, ROOT), os.path.relpath(NOPROF_BIN, ROOT)],
                   check=True, stdout=subprocess.DEVNULL)
    cost_ns, own_ns = per_sample_cost()
    ratios, reported, rates, cpus, version = side_by_side("service")
    control, _, _, _, _ = side_by_side("control", "-profrate", "0")
    noprof, np_reported, np_rates, np_cpus, _ = side_by_side("no-pprof", binary=NOPROF_BIN)
    np_tput = side_by_side.tput_ratios
    rate, cpu = statistics.median(rates), statistics.median(cpus)
    print("go: %s, %d rounds x %d windows, memtop -p with plain defaults (Go runtime probes)" %
          (version, ROUNDS, WINDOWS))
    print("  one sample costs the target %.0f ns for memtop's probes and %.0f ns for the "
          "runtime's own sampling (measured on a MemProfileRate 4096 loop)" % (cost_ns, own_ns))
    print("  the service: %.0f samples/s on %.0f ms of CPU per s: expected overhead %.2f%%; "
          "memtop reported %.2f%% (median)" %
          (rate, cpu * 1e3, 100 * rate * cost_ns / 1e9 / cpu,
           statistics.median(reported) if reported else float("nan")))
    print("  side by side, CPU per request watched/bare: service %.4f (rounds %.4f..%.4f), "
          "control without samples (MemProfileRate 0) %.4f (rounds %.4f..%.4f): the spread "
          "of the control is this machine's noise" %
          (statistics.median(ratios), min(ratios), max(ratios), statistics.median(control),
           min(control), max(control)))
    np_rate = statistics.median(np_rates) if np_rates else float("nan")
    np_cpu = statistics.median(np_cpus) if np_cpus else float("nan")
    print("  a program without pprof (MemProfileRate 0, memtop sets it to 512 KiB while it "
          "watches): %.0f samples/s on %.0f ms of CPU per s: expected overhead %.2f%% (the "
          "runtime's own sampling and memtop's probes); side by side, CPU per request "
          "watched/bare %.4f (rounds %.4f..%.4f), requests/s watched/bare %.4f (paced); "
          "memtop reported %.2f%%" %
          (np_rate, 1e3 * np_cpu, 100 * np_rate * (cost_ns + own_ns) / 1e9 / np_cpu,
           statistics.median(noprof), min(noprof), max(noprof), statistics.median(np_tput),
           statistics.median(np_reported) if np_reported else float("nan")))


if __name__ == "__main__":
    main()

"""Allocation wrappers are seen through without --skip (stacks/wrappers.c):
the call site is the first frame that is the program's own, and a frame of
a stripped file says how to get its symbols.

sqlite is the hard case: Debian's libsqlite3 is stripped and its
allocation wrappers (sqlite3Malloc, sqlite3MemMalloc) are static, so they
have no name at all; the whole library is machinery to the table. The
other families (GLib, xmalloc, CPython, C++) are checked by
tests/unit/test_wrappers.c on their demangled names, and redis's zmalloc by
test_allocators.py. Rust's standard library is checked on a real program
too (mt_rust, built with Debian's rustc: make deps installs it), since
which of its frames stay out of line depends on the compiler."""

import re
import shutil
import time

from memtop_test import RATE_ARGS, Memtop, Proc, Workload, check, sites_by_function, target


def sqlite_modules(sites):
    return [s for s in sites.values()
            if any((e.get("module") or "").startswith("libsqlite3") for e in s["entries"])]


def test_sqlite_sites_are_the_programs():
    """A C program on Debian's libsqlite3: leak_statements (never finalized)
    and query_rows are the sites, leak_statements holds the most, and no
    site is a frame of libsqlite3."""
    w = Workload("mt_sqlite", "--duration=3").wait_ready()
    m = Memtop("-b", "--json", "-d", "0.5", *RATE_ARGS, "-p", w.pid)
    m.first_record()
    w.trigger()
    truth = w.read_truth(timeout=30)
    check(truth["leaked"] > 100, "the workload leaked only %d statements" % truth["leaked"])
    rec = m.records_after(time.time(), count=2)
    sites = sites_by_function(rec)
    check(not sqlite_modules(sites), "sites inside libsqlite3: %s" %
          [(s["function"], s["entries"][0].get("module")) for s in sqlite_modules(sites)])
    for f in ("leak_statements", "query_rows"):
        check(f in sites, "site %s missing: %s" % (f, sorted(map(str, sites))))
    top = max(sites.values(), key=lambda s: s.get("inuse_bytes", 0))
    check(top["function"] == "leak_statements",
          "leak_statements should hold the most in use: %s" %
          {str(f): round(s.get("inuse_bytes", 0)) for f, s in sites.items()})
    w.release()
    m.drain(15)


def test_sqlite_cli_stripped():
    """Debian's sqlite3 shell (stripped, on stripped libsqlite3): the sites
    are frames of the shell, not of the library, and frames without a
    symbol carry a hint naming the -dbgsym package and the build-ID path."""
    cli = shutil.which("sqlite3")
    check(cli, "sqlite3 is needed (make deps)")
    p = Proc([cli, ":memory:"], name="sqlite3")

    def run(sql, mark):
        p.popen.stdin.write(("%s\nSELECT '%s';\n" % (sql, mark)).encode())
        p.popen.stdin.flush()
        while True:
            line = p.out.get(30, "sqlite3 output")
            check(line is not None, "sqlite3 exited: %s" % p.err.text()[-300:])
            if line == mark:
                return

    run("CREATE TABLE t(k INTEGER PRIMARY KEY, v TEXT);", "ready")
    m = Memtop("-b", "--json", "-d", "0.5", *RATE_ARGS, "-p", p.pid)
    m.first_record()
    run("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 20000) "
        "INSERT INTO t SELECT x, hex(randomblob(64)) FROM c; "
        "SELECT count(*), sum(length(v)) FROM t GROUP BY k % 100;", "done")
    rec = m.records_after(time.time(), count=2)
    check(target(rec, p.pid)["samples"] > 50, "too few samples: %s" % target(rec, p.pid))
    sites = sites_by_function(rec)
    check(sites, "no sites")
    check(not sqlite_modules(sites), "sites inside libsqlite3: %s" %
          [(s["function"], s["entries"][0].get("module")) for s in sqlite_modules(sites)])
    hints = [f["symbol_hint"] for s in rec["sites"] for f in s["stack"] if "symbol_hint" in f]
    check(hints, "no frame of the stripped sqlite3 carries a symbol hint")
    check(any("sqlite3-dbgsym" in h and "/usr/lib/debug/.build-id/" in h for h in hints),
          "hints do not name sqlite3-dbgsym and a build-ID path: %s" % sorted(set(hints))[:3])
    p.popen.stdin.close()
    p.wait(10)
    m.drain(15)


RUST_SITES = ("grow_vec", "fill_map", "build_string", "format_text", "collect_squares")


def rust_function(name):
    """memtop's name of mt_rust's function (legacy Rust mangling demangles to
    mt_rust::NAME)."""
    return "mt_rust::" + name


def test_rust_std_growth_frames():
    """A Rust program (Debian's rustc, -O) whose allocations all go through
    the standard library's growth frames: Vec growth (alloc::raw_vec),
    HashMap growth (hashbrown), String growth (alloc::string), format!
    (alloc::fmt, core::fmt) and Iterator::collect. Each of the program's
    five functions is a site of its own, no site is a frame of std, and
    each one's in-use is what it kept (its truth) within sampling error."""
    w = Workload("mt_rust").wait_ready()
    m = Memtop("-b", "--json", "-d", "0.5", "--rate", "8K", "--max-overhead", "none", "-p", w.pid)
    m.first_record()
    w.trigger()
    truth = w.read_truth(timeout=60)
    rec = m.records_after(time.time(), count=2)
    check(rec["dropped"]["events"] == 0, "memtop dropped samples: %s" % rec["dropped"])
    sites = sites_by_function(rec)
    names = sorted(map(str, sites))
    std = [n for n in names if re.match(r"<?(alloc|core|std|hashbrown)::|__rust|__rdl", n)]
    check(not std, "sites that are frames of Rust's standard library: %s" % std)
    for name in RUST_SITES:
        f = rust_function(name)
        check(f in sites, "site %s missing: %s" % (f, names))
        est, kept = sites[f].get("inuse_bytes", 0), truth[name + "_bytes"]
        print("%s: in use %.2f MiB, kept %.2f MiB" % (f, est / 2**20, kept / 2**20))
        check(0.85 * kept <= est <= 1.15 * kept,
              "%s: in use %.2f MiB, the program kept %.2f MiB (dropped: %s; sites: %s)" %
              (f, est / 2**20, kept / 2**20, rec["dropped"],
               {str(n): round(s.get("inuse_bytes", 0)) for n, s in sites.items()}))
    w.release()
    m.drain(15)

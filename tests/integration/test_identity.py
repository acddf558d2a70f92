"""Which process memtop watches (issue 18, item 4), against targets run as
nobody (tests/workloads/hostile/, built by test_hostile):

  - exec in -p mode: the old program's live samples are dropped (its
    in-use goes to 0 and stays), COMM follows, the new program is probed;
  - PID reuse: the target dies and another process gets its PID at once
    (tests/workloads/with_pid): memtop ends the target as exited instead
    of reporting the impostor as it, and a -b run ends;
  - memtop inside a PID namespace refuses with one line (its PIDs are not
    the ones its probes report);
  - a target that maps and unmaps without pause (torn /proc/PID/maps
    reads): every one of several attaches succeeds.
"""

import os
import shutil
import subprocess
import time

from memtop_test import (Memtop, Proc, assert_one_error_line, check, fail, sites_by_function,
                         workload_path)
from test_hostile import NOBODY, build, exec_and_see_new_image, lab, start

ARGS = ("-b", "--json", "-d", "0.25", "--rate", "64K", "--max-overhead", "none")


def inuse(rec, function):
    return sites_by_function(rec).get(function, {}).get("inuse_bytes", 0)


def test_exec_in_p_mode():
    d = lab()
    exe, so = build(d)
    again = os.path.join(d, "hostile2")
    shutil.copy(exe, again)
    os.chown(again, 65534, 65534)
    p, pid = start([exe, "--lib", so, "--leak", "yes", "--exec", again])
    m = Memtop(*ARGS, "-p", pid)
    rec = m.first_record()
    for _ in range(20):
        if inuse(rec, "hostile_lib_alloc") > 2e6:
            break
        rec = m.record()
    check(inuse(rec, "hostile_lib_alloc") > 2e6, "the leak is not seen before the exec: %s" %
          sites_by_function(rec).keys())
    exec_and_see_new_image(p, pid, m, within_s=5)
    for _ in range(3):
        rec = m.record()
        check(inuse(rec, "hostile_lib_alloc") == 0,
              "the old program's live samples survived the exec: %.0f bytes in use" %
              inuse(rec, "hostile_lib_alloc"))


def test_pid_reuse():
    d = lab()
    exe = build(d, lib=False)[0]
    p, pid = start([exe])
    m = Memtop(*ARGS, "-p", pid)
    m.first_record()
    p.popen.kill()
    p.popen.wait()
    # the impostor takes the very number (clone3's set_tid: no other fork
    # on the host can take it first), then drops to nobody
    impostor = Proc([workload_path("with_pid"), pid] + list(NOBODY) + [exe], name="impostor")
    line = impostor.out.get(10, "impostor READY")
    check(line is not None and line.startswith("READY"),
          "the impostor did not run as PID %d: %s" % (pid, impostor.err.text()[-300:]))
    rc = m.drain(timeout=10)
    check(rc == 0, "memtop exited %s" % rc)
    last = [x for x in m.records[-1]["targets"] if x["pid"] == pid]
    check(last and last[0]["alive"] is False,
          "the impostor is reported as the target: %s" % last)


def test_pid_namespace_refused():
    d = lab()
    exe = build(d, lib=False)[0]
    _, pid = start([exe])
    m = Memtop("-b", "-n", "1", "-p", pid, prefix=("unshare", "--pid", "--fork", "--mount-proc"))
    assert_one_error_line(m, m.wait(10), r"PID namespace")


def test_torn_maps_attach():
    d = lab()
    exe = build(d, lib=False)[0]
    _, pid = start([exe, "--churn", "3000"])
    with open("/proc/%d/maps" % pid) as f:
        check(sum(1 for _ in f) > 3000, "the target has too few mappings to tear a read")
    failed = []
    for i in range(3):
        m = Memtop("-b", "--json", "-n", "1", "-d", "0.05", "-p", pid)
        rc = m.wait(20)
        if rc != 0:
            failed.append((rc, m.err.text()[-200:]))
    check(not failed, "%d of 3 attaches failed: %s" % (len(failed), failed[:2]))

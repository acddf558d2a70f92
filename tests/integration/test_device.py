"""The device tier (docs/device-memory.md): Vulkan, OpenCL and CUDA
allocations per call site, checked against workloads that print their own
truth, on real CPU implementations (Mesa's lavapipe through the Vulkan
loader, PoCL through the OpenCL ICD loader) and, for CUDA, on a STAND-IN
libcuda.so.1 (tests/device/cuda_standin.c: the driver API's memory calls
over host memory; no GPU here).

Every device allocation is recorded (weight 1), so the figures are exact:
each site's in-use and allocated bytes and its allocation count equal the
truth, byte for byte, and each device's total is their sum. With default
options the leaking function ranks first by leak score among the device
sites, and the bounded pool scores low.

  - mt_vulkan: vkAllocateMemory / vkFreeMemory; the kind comes from the
    memory type's flags (vkGetPhysicalDeviceMemoryProperties, or ...2),
    or, when the process never read them while watched, the type index;
  - mt_opencl: clCreateBuffer / clReleaseMemObject with clRetainMemObject
    honoured (a retained buffer stays in use after a release), and
    clSVMAlloc / clSVMFree;
  - mt_cuda: each allocate/free pair of the driver API, the library opened
    with dlopen after memtop attached (found at a refresh)."""

import os
import re
import time

from memtop_test import Memtop, Workload, check, fail, target

STANDIN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "build",
                       "workloads", "cuda-standin", "libcuda.so.1")
os.environ["MT_CUDA_LIB"] = os.path.abspath(STANDIN)

LONG_S = 25  # the leak-score runs: the score's confidence is full at 10 s


def wait_err(m, pattern, timeout=20):
    """Read memtop's stderr until a line matches pattern; returns it."""
    t0 = time.monotonic()
    rx = re.compile(pattern)
    for line in m.err.lines:
        if rx.search(line):
            return line
    while True:
        left = timeout - (time.monotonic() - t0)
        check(left > 0, "memtop never said %r; stderr: %s" % (pattern, m.err.text()[-800:]))
        line = m.err.get(left, "memtop stderr")
        if line is None:
            fail("memtop exited before saying %r (rc %s): %s" %
                 (pattern, m.wait(5), m.err.text()[-800:]))
        if rx.search(line):
            return line


def run(workload, api, args=(), mapped_later=False, memtop_args=()):
    """Start workload, watch it with memtop --json --tier device, run its
    phase once memtop follows the API; returns (truth, last record, memtop)."""
    w = Workload(workload, *args).wait_ready()
    m = Memtop("-p", w.pid, "--json", "-d", "1", "--tier", "device", *memtop_args)
    m.first_record()
    if mapped_later:
        w.trigger()  # it dlopens the library now
        line = w.out.get(20, "%s MAPPED" % workload)
        check(line == "MAPPED", "%s: %r instead of MAPPED" % (workload, line))
    wait_err(m, r"PID %d: device memory: %s \(" % (w.pid, api))
    w.trigger()
    truth = w.read_truth(timeout=LONG_S + 30)
    rec = m.records_after(time.time(), count=2)
    return w, truth, rec, m


def device_sites(rec):
    out = {}
    for s in rec["sites"]:
        check(s["tier"] == "device", "--tier device shows a %s site: %s" % (s["tier"], s))
        check(s["function"] not in out, "two device sites for %s" % s["function"])
        out[s["function"]] = s
    return out


def check_exact(rec, truth, api, kind, pool_kind=None):
    """Each truth site's figures are memtop's, exactly; so are the device
    and target totals."""
    sites = device_sites(rec)
    total = 0
    for t in truth["sites"]:
        s = sites.get(t["function"])
        check(s is not None, "no device site %s among %s" % (t["function"], sorted(sites)))
        want = kind if t["leaks"] or pool_kind is None else pool_kind
        check(s["device"]["api"] == api and s["device"]["index"] == 0,
              "%s: device %s, expected %s:0" % (t["function"], s["device"], api))
        check(s["device"]["kind"] == want, "%s: kind %r, truth %r" %
              (t["function"], s["device"]["kind"], want))
        check(s["inuse_bytes"] == t["inuse_bytes"], "%s: in use %d bytes, truth %d" %
              (t["function"], s["inuse_bytes"], t["inuse_bytes"]))
        check(s["samples"] == t["alloc_calls"], "%s: %d allocations seen, truth %d" %
              (t["function"], s["samples"], t["alloc_calls"]))
        check(s["live_samples"] == t["alloc_calls"] - t["free_calls"],
              "%s: %d live, truth %d allocated - %d freed" %
              (t["function"], s["live_samples"], t["alloc_calls"], t["free_calls"]))
        total += t["inuse_bytes"]
    devs = [d for d in rec["devices"] if d["api"] == api]
    check(len(devs) == 1 and devs[0]["inuse_bytes"] == total,
          "devices %s: expected %s:0 holding %d" % (rec["devices"], api, total))
    tg = target(rec, truth["pid"])
    check(tg["device_inuse_bytes"] == total, "target device_inuse_bytes %d, truth %d" %
          (tg["device_inuse_bytes"], total))
    return sites


def seconds_to_score(m, truth, function, score=50):
    """Seconds from the start of the phase to the first record in which
    function's leak score reached score; None if it never did."""
    for r in m.records:
        for s in r["sites"]:
            if s["function"] == function and s["leak_score"] >= score:
                return r["time"] - truth["time"]
    return None


def check_leak_first(rec, truth, sites):
    """The leaking function is the first device site by leak score, the
    pool's score is low, and the device's growth is the leak's pace."""
    leak = [t for t in truth["sites"] if t["leaks"]][0]
    pool = [t for t in truth["sites"] if not t["leaks"]][0]
    order = [s["function"] for s in rec["sites"]]  # sorted by leak score
    check(order[0] == leak["function"], "leak %s not first by score: %s" %
          (leak["function"], [(s["function"], s["leak_score"]) for s in rec["sites"]]))
    ls, ps = sites[leak["function"]]["leak_score"], sites[pool["function"]]["leak_score"]
    check(ls >= 50 and ps <= 20, "scores: leak %.1f (>= 50), pool %.1f (<= 20)" % (ls, ps))
    pace = leak["inuse_bytes"] / truth["duration_s"]
    growth = rec["devices"][0]["growth_bytes_per_s"]
    check(0.7 * pace <= growth <= 1.3 * pace,
          "device growth %.0f B/s, the leak's pace %.0f B/s" % (growth, pace))
    return ls, ps


def test_vulkan_leak_first_and_exact():
    w, truth, rec, m = run("mt_vulkan", "vulkan", ["--duration=%d" % LONG_S])
    check(truth["kind"] == "device-local,host-visible", "lavapipe's memory type: %s" % truth)
    sites = check_exact(rec, truth, "vulkan", truth["kind"])
    ls, ps = check_leak_first(rec, truth, sites)
    check(sites["leak_vk_memory"]["device"]["memory_type"] == 0, "memory type index")
    print("vulkan: leak score %.1f (>= 50 after %.0f s), pool %.1f, leak %d bytes in %d "
          "allocations (truth equal)" %
          (ls, seconds_to_score(m, truth, "leak_vk_memory"), ps,
           sites["leak_vk_memory"]["inuse_bytes"], sites["leak_vk_memory"]["samples"]))
    w.release()


def test_vulkan_properties2_and_type_index():
    """...Properties2 gives the flags too; without the properties, the
    memory type index is what memtop says, with kind unknown."""
    for mode, kind in (("props2", "device-local,host-visible"), ("noprops", "unknown")):
        w, truth, rec, m = run("mt_vulkan", "vulkan", ["--duration=2", "--mode=" + mode])
        check(truth["kind"] == kind, "%s: truth kind %s" % (mode, truth["kind"]))
        sites = check_exact(rec, truth, "vulkan", kind)
        check(sites["leak_vk_memory"]["device"]["memory_type"] == 0, "%s: type index" % mode)
        w.release()
        m.kill()


def test_opencl_leak_first_and_exact():
    w, truth, rec, m = run("mt_opencl", "opencl", ["--duration=%d" % LONG_S])
    sites = check_exact(rec, truth, "opencl", "device-local")
    ls, ps = check_leak_first(rec, truth, sites)
    print("opencl: leak score %.1f (>= 50 after %.0f s), pool %.1f, leak %d bytes in %d "
          "buffers (truth equal)" %
          (ls, seconds_to_score(m, truth, "leak_cl_buffers"), ps,
           sites["leak_cl_buffers"]["inuse_bytes"], sites["leak_cl_buffers"]["samples"]))
    w.release()


def test_opencl_reference_counts_svm_and_host_memory():
    """A buffer retained by a second owner stays in use after the pool's
    release (freed only by the last one); SVM blocks are managed memory;
    CL_MEM_ALLOC_HOST_PTR buffers host-visible."""
    for mode, kind, pool_kind in (("retain", "device-local", None),
                                  ("svm", "device-local", "managed"),
                                  ("hostptr", "host-visible", "device-local")):
        w, truth, rec, m = run("mt_opencl", "opencl", ["--duration=3", "--mode=" + mode])
        pool = truth["sites"][1]
        if mode == "retain":
            check(pool["alloc_calls"] - pool["free_calls"] > 16,
                  "retain: the truth kept no retained buffer: %s" % pool)
        check_exact(rec, truth, "opencl", kind, pool_kind)
        w.release()
        m.kill()


def test_cuda_standin_every_pair():
    """Each driver-API allocate/free pair, over the stand-in library
    (tests/device/cuda_standin.c), opened with dlopen once memtop watches:
    found at a refresh, and exact."""
    kinds = {"alloc": "device-local", "async": "device-local", "pitch": "device-local",
             "managed": "managed", "vmm": "device-local", "host": "pinned-host"}
    for mode, kind in kinds.items():
        w, truth, rec, m = run("mt_cuda", "cuda", ["--duration=2", "--mode=" + mode],
                               mapped_later=True)
        check_exact(rec, truth, "cuda", "device-local", kind)
        w.release()
        m.kill()


def test_cuda_standin_leak_first():
    w, truth, rec, m = run("mt_cuda", "cuda", ["--duration=%d" % LONG_S], mapped_later=True)
    sites = check_exact(rec, truth, "cuda", "device-local")
    ls, ps = check_leak_first(rec, truth, sites)
    print("cuda (stand-in): leak score %.1f (>= 50 after %.0f s), pool %.1f" %
          (ls, seconds_to_score(m, truth, "leak_cuda_memory"), ps))
    w.release()


def test_host_tier_filter():
    """--tier host shows no device site; all shows both tiers."""
    w = Workload("mt_vulkan", "--duration=2").wait_ready()
    mh = Memtop("-p", w.pid, "--json", "-d", "1", "--tier", "host")
    ma = Memtop("-p", w.pid, "--json", "-d", "1", "--top", "0")
    mh.first_record()
    ma.first_record()
    wait_err(ma, r"PID %d: device memory: vulkan \(" % w.pid)
    wait_err(mh, r"PID %d: device memory: vulkan \(" % w.pid)
    w.trigger()
    w.read_truth()
    t = time.time()
    rh, ra = mh.records_after(t), ma.records_after(t)
    check(rh["sites"] and all(s["tier"] == "host" for s in rh["sites"]),
          "--tier host: %s" % [(s["function"], s["tier"]) for s in rh["sites"]])
    tiers = {s["tier"] for s in ra["sites"]}
    check(tiers == {"host", "device"}, "--tier all shows tiers %s" % tiers)
    w.release()


def test_recording_replays_the_device_tier():
    """A recording keeps each sample's tier, device and kind: its replay's
    JSON equals the live run's, interval for interval."""
    import json
    import shutil
    import signal
    import subprocess
    import tempfile
    from memtop_test import MEMTOP

    d = tempfile.mkdtemp(prefix="memtop-dev-rec-")
    try:
        path = os.path.join(d, "run.mtr")
        w, truth, rec, m = run("mt_opencl", "opencl", ["--duration=3", "--mode=svm"],
                               memtop_args=("--record", path))
        m.send(signal.SIGINT)
        m.drain()
        live = m.records
        r = subprocess.run([MEMTOP, "--replay", path, "--json", "--tier", "device"],
                           capture_output=True, text=True, timeout=60)
        check(r.returncode == 0, "replay failed (%d): %s" % (r.returncode, r.stderr))
        replayed = [json.loads(l) for l in r.stdout.splitlines()]
        check(len(replayed) >= len(live), "replay: %d intervals, live %d" %
              (len(replayed), len(live)))
        for i, (a, b) in enumerate(zip(live, replayed)):
            for k in ("sites", "devices"):
                check(a[k] == b[k], "interval %d: %s differ:\nlive   %s\nreplay %s" %
                      (i, k, json.dumps(a[k])[:600], json.dumps(b[k])[:600]))
        check_exact(live[-1], truth, "opencl", "device-local", "managed")
        w.release()
    finally:
        shutil.rmtree(d, ignore_errors=True)


def test_hostile_library_is_refused_whole():
    """A process running as nobody maps a file of its own named
    libcuda.so.1 that lacks cuMemAlloc_v2: memtop says in one line that
    CUDA memory is not followed and why, attaches none of that API's
    probes (nothing of it is left: no device site, no link), and goes on
    watching the heap; the target is unharmed."""
    import shutil
    import subprocess
    import tempfile
    from memtop_test import Proc, assert_nothing_left, bpf_snapshot, workload_path

    nobody = ("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups")
    d = tempfile.mkdtemp(prefix="memtop-dev-hostile-")
    try:
        os.chmod(d, 0o755)
        src, lib = os.path.join(d, "fake.c"), os.path.join(d, "libcuda.so.1")
        with open(src, "w") as f:
            f.write("int cuInit(unsigned f) { return 0; }\n"
                    "int cuMemFree_v2(unsigned long p) { return 0; }\n")
        r = subprocess.run(["cc", "-shared", "-fPIC", "-o", lib, src], capture_output=True,
                           text=True, timeout=60)
        check(r.returncode == 0, "cc: %s" % r.stderr)
        os.chown(lib, 65534, 65534)
        before = bpf_snapshot()
        env = dict(os.environ, MT_CUDA_LIB=lib)
        w = Proc(list(nobody) + [workload_path("mt_cuda"), "--duration=1"], env=env,
                 name="mt_cuda")
        line = w.out.get(15, "mt_cuda READY")
        check(line and line.startswith("READY"), "mt_cuda did not start: %s" % w.err.text())
        m = Memtop("-p", w.pid, "--json", "-d", "1")
        m.first_record()
        w.popen.stdin.write(b"g")
        w.popen.stdin.flush()
        check(w.out.get(15, "MAPPED") == "MAPPED", "mt_cuda did not map the library")
        said = wait_err(m, r"PID %d: device memory: cuda memory not followed: " % w.pid)
        check("does not export cuMemAlloc_v2" in said, "the line says why: %r" % said)
        rec = m.records_after(time.time(), count=1)
        check(not rec["devices"] and all(s["tier"] == "host" for s in rec["sites"]),
              "a device site or total from a refused library: %s" % rec["devices"])
        check(w.poll() is None, "the target died (rc %s)" % w.poll())
        check(sum("device memory" in l for l in m.err.lines) == 1,
              "said more than once: %s" % [l for l in m.err.lines if "device memory" in l])
        m.send(2)
        m.drain()
        w.kill()
        assert_nothing_left(before)
    finally:
        shutil.rmtree(d, ignore_errors=True)

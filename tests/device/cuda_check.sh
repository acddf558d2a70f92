#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# tests/device/cuda_check.sh - memtop's device source on a machine with an
# NVIDIA GPU and its driver: NOT RUN YET. It was written in a session with
# no GPU (docs/device-memory.md, "Still to be done"); the tests that run
# everywhere use the stand-in library instead (tests/device/cuda_standin.c).
#
#   tests/device/cuda_check.sh        (root, from the repository root,
#                                      after make all and the workloads)
#
# Steps, each one line PASS or FAIL with its numbers; exits 1 on a FAIL:
#   1. uprobes work on this machine at all: memtop -p on a process that
#      calls malloc sees its samples (a VM or container may forbid them);
#   2. the real libcuda.so.1 under mt_cuda, every allocate/free pair
#      (alloc, async, pitch, managed, vmm, host): each site's in-use bytes
#      and allocation count equal the workload's truth exactly (a driver
#      whose cuMemAllocPitch calls cuMemAlloc_v2 itself would show here);
#   3. PyTorch: a program that leaks CUDA tensors from leak_tensors() and
#      keeps a bounded cache in cache_tensors(), first with the caching
#      allocator off (PYTORCH_NO_CUDA_MEMORY_CACHING=1: one cuMemAlloc per
#      tensor) and then with it on (its segments are what memtop sees:
#      held, used or not): the device's held bytes cover the truth, its
#      growth is the leak's pace, and with caching off the leak is first
#      by score.
# Budget: about 5 minutes in all (STEP_S seconds per run).
set -u
cd "$(dirname "$0")/../.." || exit 1
MEMTOP=$PWD/build/memtop
WL=$PWD/build/workloads
OUT=${OUT:-$(mktemp -d)}
STEP_S=${STEP_S:-20}
fails=0

say() { printf '%s\n' "$*"; }
pass() { say "PASS $*"; }
failed() { say "FAIL $*"; fails=$((fails + 1)); }

[ "$(id -u)" = 0 ] || { say "FAIL needs root"; exit 1; }
[ -x "$MEMTOP" ] && [ -x "$WL/mt_cuda" ] || { say "FAIL build first: make all build/workloads/mt_cuda"; exit 1; }
LIBCUDA=$(ldconfig -p | awk '/libcuda\.so\.1 .*x86-64/ { print $NF; exit }')
[ -n "$LIBCUDA" ] || { say "FAIL no libcuda.so.1 in ldconfig's cache"; exit 1; }
nvidia-smi -L 2>&1 | head -3

# Run a READY/truth workload under memtop -p --json --tier device: start
# it, wait for memtop to follow API, trigger (twice for mt_cuda: it
# dlopens first), keep memtop's last record. Usage: watch NAME API CMD...
watch() {
	local name=$1 api=$2
	shift 2
	local fifo=$OUT/$name.in
	rm -f "$fifo" && mkfifo "$fifo"
	"$@" <"$fifo" >"$OUT/$name.out" 2>"$OUT/$name.wlerr" &
	local wpid=$!
	exec 7>"$fifo"
	until grep -q '^READY' "$OUT/$name.out"; do
		kill -0 $wpid 2>/dev/null || { failed "$name: the workload ended: $(tail -2 "$OUT/$name.wlerr")"; exec 7>&-; return 1; }
		sleep 0.2
	done
	"$MEMTOP" -p $wpid --json -d 1 --tier device >"$OUT/$name.json" 2>"$OUT/$name.err" &
	local mpid=$!
	until grep -q 'attached to PID' "$OUT/$name.err"; do
		kill -0 $mpid 2>/dev/null || { failed "$name: memtop ended: $(tail -2 "$OUT/$name.err")"; kill $wpid; exec 7>&-; return 1; }
		sleep 0.2
	done
	if [ "$name" != torch ] && [ "$name" != torch-cached ]; then
		printf g >&7 # mt_cuda: dlopen now
		until grep -q '^MAPPED' "$OUT/$name.out"; do sleep 0.2; done
	fi
	local t=0
	until grep -q "device memory: .*$api (" "$OUT/$name.err"; do
		sleep 0.5; t=$((t + 1))
		[ $t -lt 60 ] || { failed "$name: memtop never followed $api: $(tail -3 "$OUT/$name.err")"; kill $mpid $wpid; exec 7>&-; return 1; }
	done
	printf g >&7
	until grep -q '^{' "$OUT/$name.out"; do
		kill -0 $wpid 2>/dev/null || { failed "$name: no truth: $(tail -3 "$OUT/$name.wlerr")"; kill $mpid; exec 7>&-; return 1; }
		sleep 0.5
	done
	local n0
	n0=$(wc -l <"$OUT/$name.json")
	until [ "$(wc -l <"$OUT/$name.json")" -ge $((n0 + 2)) ]; do sleep 0.5; done
	kill -INT $mpid
	wait $mpid
	exec 7>&-
	wait $wpid 2>/dev/null
	return 0
}

# Compare memtop's last record with the truth (exact, as test_device.py).
compare() {
	python3 - "$OUT/$1.out" "$OUT/$1.json" "$2" <<'PY'
import json, sys
truth = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")][0]
rec = [json.loads(l) for l in open(sys.argv[2]) if l.strip()][-1]
mode = sys.argv[3]
sites = {s["function"]: s for s in rec["sites"]}
bad = []
for t in truth["sites"]:
    s = sites.get(t["function"])
    if not s:
        bad.append("no site %s" % t["function"])
        continue
    if s["inuse_bytes"] != t["inuse_bytes"] or s["samples"] != t["alloc_calls"]:
        bad.append("%s: %d bytes in %d allocations, truth %d in %d" % (
            t["function"], s["inuse_bytes"], s["samples"], t["inuse_bytes"], t["alloc_calls"]))
print("%s: %s" % (mode, "; ".join(bad) if bad else "exact: " + ", ".join(
    "%s %d bytes" % (t["function"], t["inuse_bytes"]) for t in truth["sites"])))
sys.exit(1 if bad else 0)
PY
}

# 1. uprobes at all (host tier: any process that calls malloc).
HOSTPY=$OUT/host.py
cat >"$HOSTPY" <<'PY'
import os, sys, time
print("READY pid=%d" % os.getpid(), flush=True)
sys.stdin.read(1)
keep = [bytearray(64 * 1024) for _ in range(800)]
time.sleep(3)
PY
rm -f "$OUT/host.in" && mkfifo "$OUT/host.in"
python3 "$HOSTPY" >"$OUT/host.out" <"$OUT/host.in" &
hp=$!
exec 8>"$OUT/host.in"
until grep -q READY "$OUT/host.out"; do sleep 0.2; done
"$MEMTOP" -p $hp --json -d 1 -n 4 >"$OUT/host.json" 2>"$OUT/host.err" &
mp=$!
until grep -q 'attached to PID' "$OUT/host.err" || ! kill -0 $mp 2>/dev/null; do sleep 0.2; done
printf g >&8
wait $mp
exec 8>&-
samples=$(python3 -c 'import json,sys; r=[json.loads(l) for l in open(sys.argv[1]) if l.strip()]; print(sum(s["samples"] for s in r[-1]["sites"]) if r else 0)' "$OUT/host.json" 2>/dev/null)
if [ "${samples:-0}" -gt 0 ]; then pass "uprobes: $samples host samples of a python3 filling 50 MiB"; else failed "uprobes: no sample ($(tail -2 "$OUT/host.err"))"; fi

# 2. the real driver, every pair.
for mode in alloc async pitch managed vmm host; do
	if MT_CUDA_LIB=$LIBCUDA watch "cuda-$mode" cuda "$WL/mt_cuda" --duration=3 --mode=$mode; then
		if r=$(compare "cuda-$mode" "$mode"); then pass "$r"; else failed "$r"; fi
	fi
done

# 3. PyTorch.
cat >"$OUT/torch_leak.py" <<'PY'
import collections, json, os, sys, time
import torch
print("READY pid=%d" % os.getpid(), flush=True)
sys.stdin.read(1)
leaked, cache = [], collections.OrderedDict()
MB = 1 << 20
def leak_tensors(i):
    leaked.append(torch.empty(2 * MB, dtype=torch.uint8, device="cuda"))
def cache_tensors(i):
    cache[i] = torch.empty(4 * MB, dtype=torch.uint8, device="cuda")
    while len(cache) > 16:
        cache.popitem(last=False)
torch.cuda.init()
t0, i = time.monotonic(), 0
d = float(os.environ.get("STEP_S", "20"))
while time.monotonic() - t0 < d:
    leak_tensors(i); cache_tensors(i); i += 1
    torch.cuda.synchronize(); time.sleep(0.05)
print(json.dumps({"truth": "torch", "pid": os.getpid(), "duration_s": d,
                  "leak_bytes": len(leaked) * 2 * MB, "cache_bytes": len(cache) * 4 * MB,
                  "reserved": torch.cuda.memory_reserved()}), flush=True)
sys.stdin.read()
PY
for variant in torch torch-cached; do
	if [ $variant = torch ]; then export PYTORCH_NO_CUDA_MEMORY_CACHING=1; else unset PYTORCH_NO_CUDA_MEMORY_CACHING; fi
	if STEP_S=$STEP_S watch $variant cuda python3 "$OUT/torch_leak.py"; then
		r=$(python3 - "$OUT/$variant.out" "$OUT/$variant.json" "$variant" <<'PY'
import json, sys
truth = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")][0]
rec = [json.loads(l) for l in open(sys.argv[2]) if l.strip()][-1]
dev = [d for d in rec["devices"] if d["api"] == "cuda"]
held = sum(d["inuse_bytes"] for d in dev)
want = truth["leak_bytes"] + truth["cache_bytes"]
pace = truth["leak_bytes"] / truth["duration_s"]
growth = sum(d["growth_bytes_per_s"] for d in dev)
top = rec["sites"][0]["function"] if rec["sites"] else None
ok = held >= want and 0.5 * pace <= growth <= 2 * pace
print("%s: held %d bytes (tensors %d, reserved %d), growth %.0f B/s (leak %.0f B/s), "
      "first by score: %s (score %.1f)" % (sys.argv[3], held, want, truth["reserved"], growth, pace,
      top, rec["sites"][0]["leak_score"] if rec["sites"] else 0))
sys.exit(0 if ok else 1)
PY
)
		if [ $? = 0 ]; then pass "$r"; else failed "$r"; fi
	fi
done
say "outputs in $OUT"
exit $((fails > 0))

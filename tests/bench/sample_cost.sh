#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# tests/bench/sample_cost.sh - memtop's own CPU per sample (unwind from the
# stack copy, symbolize, aggregate), at about 1000 samples per second.
# Prints memtop's CPU as % of one core and microseconds per sample, with
# and without the stack copy (CFI unwinding), side by side. Not a test.
set -eu
cd "$(dirname "$0")/../.."
OUT=build/bench
mkdir -p "$OUT"
gcc -O2 -fomit-frame-pointer -g -o "$OUT/sample_storm" tests/bench/sample_storm.c
SECS=${SECS:-10}

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

run() { # label memtop-args...
	local label=$1
	shift
	"$OUT/sample_storm" 3000 4096 $((SECS + 4)) > "$OUT/storm.out" &
	local w=$!
	sleep 0.2
	build/memtop -b --json -d 1 --rate 4K --max-overhead none "$@" -p "$w" \
		> "$OUT/storm.json" 2>/dev/null &
	local m=$!
	sleep 2 # attached and warm
	local t0 c0 t1 c1 s0 s1
	t0=$(date +%s.%N); c0=$(cpu_ticks $m)
	s0=$(tail -1 "$OUT/storm.json" | python3 -c 'import json,sys; print(json.load(sys.stdin)["targets"][0]["samples"])')
	sleep "$SECS"
	t1=$(date +%s.%N); c1=$(cpu_ticks $m)
	s1=$(tail -1 "$OUT/storm.json" | python3 -c 'import json,sys; print(json.load(sys.stdin)["targets"][0]["samples"])')
	kill -INT $m; wait $m || true
	kill $w 2>/dev/null; wait $w 2>/dev/null || true
	python3 - "$label" "$t0" "$t1" "$c0" "$c1" "$s0" "$s1" "$(getconf CLK_TCK)" <<'PY'
import sys
label, t0, t1, c0, c1, s0, s1, hz = sys.argv[1:]
wall = float(t1) - float(t0)
cpu = (int(c1) - int(c0)) / int(hz)
samples = int(s1) - int(s0)
print("%-26s %7.0f samples/s  memtop CPU %5.1f%% of a core  %6.1f us/sample" %
      (label, samples / wall, 100 * cpu / wall, 1e6 * cpu / max(samples, 1)))
PY
}

run "CFI unwind (--stack-copy 8K)"
run "frame pointers only" --stack-copy 0

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# tests/bench/sample_cost.sh - memtop's own CPU per sample (unwind from the
# stack copy, symbolize, aggregate), at about 1000 samples per second.
# Prints memtop's CPU as % of one core and microseconds per sample, with
# and without the stack copy (CFI unwinding), and with --record FILE (what
# writing the recording adds, and the bytes it writes per second), side by
# side. Not a test.
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
	rm -f "$OUT/storm.json"
	"$OUT/sample_storm" 3000 4096 $((SECS + 6)) > "$OUT/storm.out" &
	local w=$!
	sleep 0.2
	build/memtop -b --json -d 1 --rate 4K --max-overhead none "$@" -p "$w" \
		> "$OUT/storm.json" 2>/dev/null &
	local m=$!
	local waited=0
	until [ -s "$OUT/storm.json" ]; do # attached: the first record is out
		sleep 0.1
		waited=$((waited + 1))
		[ $waited -lt 300 ] || { echo "sample_cost: memtop wrote no record in 30 s" >&2; exit 1; }
	done
	sleep 1 # warm: not a synchronisation
	local t0 c0 t1 c1 s0 s1 r0=0 r1=0
	t0=$(date +%s.%N); c0=$(cpu_ticks $m)
	[ -n "$REC" ] && r0=$(stat -c %s "$REC")
	s0=$(tail -1 "$OUT/storm.json" | python3 -c 'import json,sys; print(json.load(sys.stdin)["targets"][0]["samples"])')
	sleep "$SECS"
	t1=$(date +%s.%N); c1=$(cpu_ticks $m)
	[ -n "$REC" ] && r1=$(stat -c %s "$REC")
	s1=$(tail -1 "$OUT/storm.json" | python3 -c 'import json,sys; print(json.load(sys.stdin)["targets"][0]["samples"])')
	kill -INT $m; wait $m || true
	kill $w 2>/dev/null; wait $w 2>/dev/null || true
	python3 - "$label" "$t0" "$t1" "$c0" "$c1" "$s0" "$s1" "$(getconf CLK_TCK)" "$r0" "$r1" <<'PY'
import sys
label, t0, t1, c0, c1, s0, s1, hz, r0, r1 = sys.argv[1:]
wall = float(t1) - float(t0)
cpu = (int(c1) - int(c0)) / int(hz)
samples = int(s1) - int(s0)
rec = (int(r1) - int(r0)) / wall
print("%-30s %7.0f samples/s  memtop CPU %5.1f%% of a core  %6.1f us/sample%s" %
      (label, samples / wall, 100 * cpu / wall, 1e6 * cpu / max(samples, 1),
       "  recording %.1f KB/s, %.0f B/sample" % (rec / 1e3, rec * wall / max(samples, 1))
       if rec else ""))
PY
}

REC=
for round in 1 2; do
	REC=
	run "CFI unwind (--stack-copy 8K)"
	REC="$OUT/storm.rec"
	rm -f "$REC" "$REC.1"
	run "CFI unwind, --record FILE" --record "$REC"
	REC=
	run "frame pointers only" --stack-copy 0
done
rm -f "$OUT/storm.rec" "$OUT/storm.rec.1"

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# tests/bench/sampler.sh - what libmemtop-sampler.so costs. Not a test: it
# prints numbers.
#
#   loop     ns per malloc+free pair (tests/bench/sampler_pairs.c), the
#            median of ROUNDS rounds of PAIRS pairs, for each of SIZES
#   sqlite   sqlite3 :memory: on a 400k-row script, CPU seconds
#   python   python3 building and serialising a large dict, CPU seconds
#   cxx      g++ -O2 on a small regex/map/sort C++ file, CPU seconds
#
# in four modes:
#   bare      not preloaded
#   preload   preloaded, no tool attached: one load and a branch per call
#   forced    preloaded with MEMTOP_SAMPLER_FORCE=1: sampling on, the USDT
#             sites are nops (the sampling work without probe hits)
#   attached  preloaded with bpftrace counting on both USDT probes: the real
#             cost with a tool. bpftrace attaches by path (all processes
#             that map the .so, i.e. only the preloaded workloads), so the
#             probes are live before each program starts. Needs root and
#             bpftrace (apt-get install bpftrace); skipped otherwise.
#
# Rounds alternate the modes; the table shows medians of RUNS rounds and
# the difference (loop) or ratio (programs) against bare.
# Knobs (environment): PAIRS=10000000 ROUNDS=5 LOOP_STAT=median (or min:
# the loop's fastest round, steadier when other load shares the CPU)
# SIZES="64 1024 4096" RUNS=3
# WORKLOADS="loop sqlite python cxx" MODES="bare preload forced attached"
# MEMTOP_SAMPLE_RATE (default 512 KiB) MEMTOP_SAMPLER_SO=path.
set -u

cd "$(dirname "$0")/../.." || exit 1
TOP=$PWD
SO=${MEMTOP_SAMPLER_SO:-$TOP/build/libmemtop-sampler.so}
OUT=${BENCH_DIR:-$TOP/build/bench}
PAIRS=${PAIRS:-10000000}
ROUNDS=${ROUNDS:-5}
LOOP_STAT=${LOOP_STAT:-median}
SIZES=${SIZES:-64 1024 4096}
RUNS=${RUNS:-3}
WORKLOADS=${WORKLOADS:-loop sqlite python cxx}
MODES=${MODES:-bare preload forced attached}

say() { printf 'sampler bench: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }

mkdir -p "$OUT" || exit 1
[ -f "$SO" ] || make --no-print-directory build/libmemtop-sampler.so >&2 || die "no $SO"
gcc -O2 -g -Wall -o "$OUT/sampler_pairs" tests/bench/sampler_pairs.c || die "build failed"

cat >"$OUT/sampler.sql" <<'EOF'
CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, val REAL, tag TEXT);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 400000)
INSERT INTO t(name, val, tag) SELECT 'name-' || i, i + 0.5, 'tag-' || (i % 997) FROM n;
CREATE INDEX t_tag ON t(tag);
SELECT tag, count(*), avg(val) FROM t GROUP BY tag ORDER BY 2 DESC, 1 LIMIT 3;
UPDATE t SET name = name || '-x' WHERE id % 3 = 0;
DELETE FROM t WHERE id % 5 = 0;
SELECT count(*), sum(length(name)) FROM t;
EOF

cat >"$OUT/sampler.py" <<'EOF'
import json, random
r = random.Random(1)
d = {"k%d" % i: [r.random() for _ in range(i % 23)] for i in range(300000)}
s = json.dumps(d, sort_keys=True)
print(len(s), len(json.loads(s)))
EOF

cat >"$OUT/sampler.cc" <<'EOF'
#include <algorithm>
#include <map>
#include <regex>
#include <string>
#include <vector>
std::map<std::string, std::vector<int>> index_words(const std::vector<std::string> &w)
{
	std::map<std::string, std::vector<int>> m;
	std::regex re("[a-z]+([0-9]*)");
	for (size_t i = 0; i < w.size(); i++)
		if (std::regex_match(w[i], re))
			m[w[i]].push_back((int)i);
	for (auto &kv : m)
		std::sort(kv.second.begin(), kv.second.end(), std::greater<int>());
	return m;
}
EOF

# The environment of the workloads (only theirs: not the timing tools').
WL_ENV=()

# Run workload $1 once; print its metric: the loop's median ns per pair, or
# a program's CPU seconds (user + system of its whole process tree: other
# load on the machine inflates that less than wall time, and probe traps
# are counted as the target's system time).
run_workload() {
	local tf=$OUT/sampler.time
	case $1 in
	loop:*)
		env "${WL_ENV[@]}" "$OUT/sampler_pairs" "$PAIRS" "${1#loop:}" "$ROUNDS" |
			awk -v k="${LOOP_STAT}_ns" '$1 == k { print $2 }'
		return
		;;
	sqlite) env "${WL_ENV[@]}" /usr/bin/time -o "$tf" -f '%U %S' \
		sqlite3 :memory: <"$OUT/sampler.sql" >/dev/null ;;
	python) env "${WL_ENV[@]}" /usr/bin/time -o "$tf" -f '%U %S' \
		python3 "$OUT/sampler.py" >/dev/null ;;
	cxx) env "${WL_ENV[@]}" /usr/bin/time -o "$tf" -f '%U %S' \
		g++ -O2 -S -o /dev/null "$OUT/sampler.cc" ;;
	esac
	awk '{ printf "%.2f\n", $1 + $2 }' "$tf"
}

# One run of every workload in mode $1, appended to $OUT/sampler.$1.
measure_mode() {
	local mode=$1 w v
	case $mode in
	bare) WL_ENV=(-u LD_PRELOAD -u MEMTOP_SAMPLER_FORCE) ;;
	forced) WL_ENV=(LD_PRELOAD="$SO" MEMTOP_SAMPLER_FORCE=1) ;;
	*) WL_ENV=(-u MEMTOP_SAMPLER_FORCE LD_PRELOAD="$SO") ;;
	esac
	for w in $ITEMS; do
		v=$(run_workload "$w")
		echo "$w $v" >>"$OUT/sampler.$mode"
		say "$mode $w: $v"
	done
}

TRACER=
stop_tracer() {
	[ -n "$TRACER" ] || return 0
	kill -INT "$TRACER" 2>/dev/null
	wait "$TRACER" 2>/dev/null
	TRACER=
}
trap stop_tracer EXIT

# bpftrace on both probes, by path; 0 once its probes are live.
start_tracer() {
	local i
	if [ "$(id -u)" != 0 ] || ! command -v bpftrace >/dev/null; then
		say "attached: skipped (needs root and bpftrace)"
		return 1
	fi
	bpftrace -e "usdt:$SO:otel_memory:alloc { @allocs = count(); @bytes = sum(arg2); }
		usdt:$SO:otel_memory:free { @frees = count(); }" >"$OUT/sampler.bpftrace" 2>&1 &
	TRACER=$!
	for ((i = 0; i < 300; i++)); do
		grep -q '^Attaching' "$OUT/sampler.bpftrace" && { sleep 1; return 0; }
		kill -0 "$TRACER" 2>/dev/null || break
		sleep 0.1
	done
	say "attached: bpftrace did not attach: $(grep -v RLIMIT "$OUT/sampler.bpftrace" | tail -1)"
	stop_tracer
	return 1
}

ITEMS=
for w in $WORKLOADS; do
	case $w in
	loop) for s in $SIZES; do ITEMS="$ITEMS loop:$s"; done ;;
	sqlite) command -v sqlite3 >/dev/null && ITEMS="$ITEMS sqlite" || say "no sqlite3" ;;
	*) ITEMS="$ITEMS $w" ;;
	esac
done

# Rounds alternate the modes, so that drifting load on the machine hits
# them alike; the table shows the median of RUNS rounds.
for mode in $MODES; do rm -f "$OUT/sampler.$mode"; done
for ((run = 0; run < RUNS; run++)); do
	for mode in $MODES; do
		case $mode in
		attached)
			start_tracer || continue
			measure_mode attached
			stop_tracer
			;;
		*) measure_mode "$mode" ;;
		esac
	done
done

# Median of the values of workload $2 in mode $1.
median() {
	awk -v w="$2" '$1 == w { print $2 }' "$OUT/sampler.$1" 2>/dev/null | sort -g |
		awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'
}

# --- table ----------------------------------------------------------------------
printf '\nlibmemtop-sampler.so, rate %s bytes (%s)\n' "${MEMTOP_SAMPLE_RATE:-524288}" "$SO"
printf '%-14s' workload
for mode in $MODES; do [ -f "$OUT/sampler.$mode" ] && printf ' %18s' "$mode"; done
printf '\n'
for w in $ITEMS; do
	case $w in loop:*) label="loop ${w#loop:} B ns"; unit=ns ;; *) label="$w cpu s"; unit=s ;; esac
	base=$(median bare "$w")
	printf '%-14s' "$label"
	for mode in $MODES; do
		[ -f "$OUT/sampler.$mode" ] || continue
		v=$(median "$mode" "$w")
		if [ -z "$base" ] || [ "$mode" = bare ]; then
			printf ' %18s' "$v"
		elif [ "$unit" = ns ]; then
			printf ' %18s' "$(awk -v v="$v" -v b="$base" 'BEGIN { printf "%s (%+.1f)", v, v - b }')"
		else
			printf ' %18s' "$(awk -v v="$v" -v b="$base" 'BEGIN { printf "%s (%.3fx)", v, v / b }')"
		fi
	done
	printf '\n'
done
if [ -f "$OUT/sampler.attached" ]; then
	printf '\nbpftrace saw: %s\n' "$(grep -E '^@' "$OUT/sampler.bpftrace" | tr '\n' ' ')"
fi

#!/bin/bash
# demo.sh - what `make demo` runs: start build/workloads/demo_leaky_server (a
# pretend server with a slow leak in session_cache_leak, a bounded LRU cache
# and request churn) and watch it with memtop: the TUI when stdout is a
# terminal, otherwise twelve batch intervals (the leak score needs about ten
# seconds of history). The server is killed on every way out, Ctrl-C
# included. Needs root (memtop attaches uprobes).
set -u

cd "$(dirname "$0")/.." || exit 1
build=${OUTPUT:-build}
server=$build/workloads/demo_leaky_server
memtop=$build/memtop

for f in "$server" "$memtop"; do
	if [ ! -x "$f" ]; then
		echo "demo: $f is not built (run make demo)" >&2
		exit 1
	fi
done

"$server" </dev/null &
pid=$!
cleanup() {
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Let it serve a few requests so the first screen already has data.
sleep 0.5
if ! kill -0 "$pid" 2>/dev/null; then
	echo "demo: $server exited at once" >&2
	exit 1
fi

echo "demo: watching demo_leaky_server (pid $pid); the leak is in session_cache_leak"
if [ -t 1 ]; then
	"$memtop" -p "$pid"
else
	"$memtop" -b -n 12 -p "$pid"
fi

// SPDX-License-Identifier: GPL-2.0-only
/*
 * legend.c - the legend of the live view: every header field, warning and
 * column, in the words a responder needs at a glance. The help's second
 * page draws these rows; docs/tui.md lists them (test_legend checks it).
 */
#include "ui/tui/legend.h"

const struct legend_row legend_rows[] = {
	{ "Header", "PID COMM alive", "a watched process; else how it ended (SIGSEGV...), frozen" },
	{ NULL, "every 1s", "refresh interval (+ and - change it); PAUSED: display frozen" },
	{ NULL, "RSS", "resident memory of the live targets, not only their heap" },
	{ NULL, "heap since attach", "in-use bytes of sampled blocks allocated since attaching" },
	{ NULL, "slowdown", "how much the probes slow the target (JSON est_slowdown_pct)" },
	{ NULL, "events/s", "kernel records per second: samples, frees of sampled blocks" },
	{ NULL, "1 sample/512K", "one sample per this many bytes allocated on average (--rate)" },
	{ NULL, "mode", "session, uretprobe or usdt, and the allocator probed" },
	{ NULL, "heap (sparkline)", "heap since attach, one point per interval, newest right" },
	{ NULL, "cgroup USED/MAX", "charged to the cgroup / its limit; limit in ~T at this slope" },

	{ "Warnings (after !; never hidden)", "target ended",
	  "(ENDED) every target exited: numbers frozen at its end" },
	{ NULL, "budget unreachable", "(OVER BUDGET) free() probes alone exceed --max-overhead" },
	{ NULL, "backed off", "(BACKOFF N%) over --max-overhead: probes on part of the time" },
	{ NULL, "lost N events", "(LOST N) ring buffer full, records dropped; raise --rate" },
	{ NULL, "live map full", "(MAP FULL) past --live-max: in-use stalls; raise --live-max" },
	{ NULL, "heap seen explains", "(RSS UNSEEN) RSS grows where no probe sees: allocators.md" },
	{ NULL, "runs RUNTIME", "(RUNTIME HEAP) JVM, V8, pymalloc or Go heap: its own tool" },
	{ NULL, "memtop's sampler", "(INJECTED N) memtop changed it; put back when memtop exits" },

	{ "Site table", "PID", "several targets: the process with most in-use; +: others too" },
	{ NULL, "ALLOC/s", "bytes/s at the site over the last 10 s; ~: error above 25%" },
	{ NULL, "OBJ/s", "allocations/s at the site over the last 10 s (from samples)" },
	{ NULL, "IN-USE", "bytes allocated at the site, not freed yet; ~: few samples" },
	{ NULL, "GROWTH/m", "IN-USE slope per minute; -: not distinguishable from noise" },
	{ NULL, "LEAK", "0-100: steady growth, old live blocks, few frees" },
	{ NULL, "AGE", "age of the oldest live sampled block at the site; -: none" },
	{ NULL, "FUNCTION", "the call site: first frame outside allocator code, file:line" },

	{ "Process list", "PID COMM", "a watched process; the first line, *, stands for all of them" },
	{ NULL, "STATE", "alive, or how it ended: exited, exit N, SIGSEGV..., OOM" },
	{ NULL, "HOW", "in-process, go-runtime, preloaded or uprobes: inject.md" },
	{ NULL, "RSS", "its resident memory, all of it (/proc)" },
	{ NULL, "ALLOC/s", "bytes allocated per second, counted exactly by the probes" },
	{ NULL, "HEAP", "the process's heap since attach, as in the header" },
	{ NULL, "CALLS/s", "allocation calls per second, counted exactly by the probes" },
	{ NULL, "HITS/s", "probe hits per second: what the slowdown is made of" },
	{ NULL, "~", "an estimate: probes off part of the time, or not counted" },
};

const size_t legend_rows_len = sizeof(legend_rows) / sizeof(legend_rows[0]);

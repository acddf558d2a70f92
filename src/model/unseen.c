// SPDX-License-Identifier: GPL-2.0-only
/*
 * unseen.c - the words for memory memtop does not see (unseen.h), from a
 * target's RSS and in-use fits (stats.h: heap_explains is the in-use slope
 * over the RSS slope, -1 while RSS does not grow measurably) and the
 * runtime found at attach. Pure: reads the target, writes a string.
 *
 * A Go heap is weighed with the room its GC leaves it: the runtime lets
 * the heap grow to go_heap_goal times its live part (1 + GOGC/100) before
 * it collects, and RSS keeps that peak, so a leak of L bytes/s grows RSS
 * by about goal * L (Go's runtime documentation, package runtime, GOGC).
 */
#include "model/unseen.h"

#include <stdio.h>
#include <string.h>

/* The GC's room for t's heap: 1 unless a Go heap with a known goal. */
static double gc_room(const struct mt_target *t)
{
	return t->go_version[0] && t->go_heap_goal > 1 ? t->go_heap_goal : 1;
}

bool unseen_growth(const struct mt_target *t)
{
	return t->stats.heap_explains >= 0 &&
	       t->stats.heap_explains * gc_room(t) < UNSEEN_EXPLAINS_MAX &&
	       t->stats.window_s >= UNSEEN_MIN_WINDOW_S;
}

bool unseen_describe(const struct mt_target *t, char *buf, size_t len)
{
	/* usdt is how memtop listens, not an allocator: the process's own
	 * sampler sees its malloc */
	bool named = t->allocator[0] && strcmp(t->allocator, "usdt");
	int n;

	if (!len)
		return false;
	buf[0] = '\0';
	if (t->go_version[0] && !t->go_rate) {
		snprintf(buf, len,
			 "Go (%s): runtime.MemProfileRate is 0 in this process, so the Go "
			 "runtime samples nothing and no samples will come (the linker sets it to 0 "
			 "when nothing references runtime.MemProfile: importing runtime/pprof or "
			 "net/http/pprof, or setting runtime.MemProfileRate, turns it on; memtop "
			 "sets it itself unless --no-inject)",
			 t->go_version);
		return true;
	}
	if (unseen_growth(t)) {
		char room[96] = "";

		if (gc_room(t) > 1)
			snprintf(room, sizeof(room),
				 ", %.0f%% with the room the Go GC leaves it (GOGC=%.0f)",
				 100 * t->stats.heap_explains * gc_room(t), 100 * (gc_room(t) - 1));
		n = snprintf(
			buf, len,
			"RSS grows %.1f MiB/min but the heap memtop sees explains %.0f%% of it%s: ",
			t->stats.rss_fit.slope * 60 / (1024.0 * 1024.0),
			100 * t->stats.heap_explains, room);
		if (n < 0 || (size_t)n >= len)
			return true;
		if (t->runtime[0])
			snprintf(buf + n, len - n,
				 "%s allocates %s itself, which memtop does not see; use %s",
				 t->runtime, t->runtime_heap, t->runtime_tool);
		else
			snprintf(buf + n, len - n,
				 "the rest does not come from %s%smalloc (a custom allocator, mmap, "
				 "a runtime's own heap); the mmap sites show who maps it",
				 named ? t->allocator : "", named ? "'s " : "");
		return true;
	}
	if (t->go_version[0]) {
		char rate[64];

		if (t->go_rate > 0)
			snprintf(rate, sizeof(rate), "%lld bytes%s", (long long)t->go_rate,
				 t->go_rate_by_memtop ? ", set by memtop: it was 0" : "");
		else
			snprintf(rate, sizeof(rate), "unknown, 512 KiB assumed");
		snprintf(buf, len,
			 "Go (%s): the Go heap as its runtime samples it (MemProfileRate %s); "
			 "frees appear only once the GC has swept them",
			 t->go_version, rate);
		return true;
	}
	if (t->runtime[0]) {
		snprintf(buf, len,
			 "%s: the memory of %s does not come from malloc, so memtop does not "
			 "see it; for it use %s",
			 t->runtime, t->runtime_heap, t->runtime_tool);
		return true;
	}
	return false;
}

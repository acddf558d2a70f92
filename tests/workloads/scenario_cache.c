// cflags: -O2 -fno-omit-frame-pointer
/*
 * scenario_cache - a bounded cache next to a smaller real leak, the case
 * outstanding-bytes profilers get wrong. cache_insert fills a FIFO cache
 * of 1024 entries of 64 KiB (64 MiB) over the first 15 s, then only
 * replaces entries, 64 a second (each entry lives 16 s). session_leak
 * keeps 1 MiB/s in 16 KiB blocks from the start, so it holds less than
 * the cache for the whole default run; churn allocates 16 MiB/s in 64 KiB
 * blocks freed at once. Only session_leak leaks.
 * Options: --duration=SECS (default 50) and those of mt_workload.h.
 */
#include <stdlib.h>

#include "scenario_common.h"

#define ENTRIES 1024
#define ENTRY_SIZE (64 * KiB)
#define FILL_S 15.0
#define REPLACE_PER_S 64.0

static const struct scn scenario = {
	.name = "scenario_cache",
	.duration_s = 50,
	.cpu_share = 0.15,
	.sites = {
		{ "cache_insert" },
		{ "session_leak", true, 0, -1, 1 * MiB },
		{ "churn" },
	},
};

static void *cache[ENTRIES];
static unsigned long inserted;

WL_SITE static void cache_insert(unsigned long size)
{
	unsigned long slot = inserted++ % ENTRIES;
	char *p;

	free(cache[slot]); /* the oldest entry; NULL while filling */
	p = malloc(size);
	scn_fill(p, size);
	cache[slot] = p;
}

WL_SITE static void session_leak(unsigned long size)
{
	char *p = malloc(size);

	scn_fill(p, size);
	wl_sink = p;
}

WL_SITE static void churn(unsigned long size)
{
	char *p = malloc(size);

	scn_fill(p, size);
	wl_sink = (void *)scn_work(p, size);
	free(p);
}

static void step(void *arg, double t, double dt)
{
	static double c_leak, c_churn;
	unsigned long due, n;

	/* entries due by t: ENTRIES over FILL_S, then REPLACE_PER_S */
	due = t < FILL_S ? (unsigned long)(t * ENTRIES / FILL_S)
			 : ENTRIES + (unsigned long)((t - FILL_S) * REPLACE_PER_S);
	while (inserted < due)
		cache_insert(ENTRY_SIZE);
	for (n = scn_quota(&c_leak, 1 * MiB, dt, 16 * KiB); n; n--)
		session_leak(16 * KiB);
	for (n = scn_quota(&c_churn, 16 * MiB, dt, 64 * KiB); n; n--)
		churn(64 * KiB);
}

int main(int argc, char **argv)
{
	return scn_main(argc, argv, &scenario, step);
}

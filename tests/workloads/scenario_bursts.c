// cflags: -O2 -fno-omit-frame-pointer
/*
 * scenario_bursts - bursts of large transient allocations: every 2 s
 * (from 0.5 s) load_batch allocates 16 blocks of 4 MiB (64 MiB), holds them
 * for 0.3 s and frees them all. churn allocates 16 MiB/s in 64 KiB blocks
 * freed at once. Nothing leaks.
 * Options: --duration=SECS (default 40) and those of mt_workload.h.
 */
#include <stdlib.h>

#include "scenario_common.h"

#define BLOCKS 16
#define BLOCK_SIZE (4 * MiB)
#define PERIOD_S 2.0
#define HOLD_S 0.3

static const struct scn scenario = {
	.name = "scenario_bursts",
	.duration_s = 40,
	.cpu_share = 0.15,
	.sites = {
		{ "load_batch" },
		{ "churn" },
	},
};

static void *batch[BLOCKS];

WL_SITE static void load_batch(unsigned long size)
{
	for (int i = 0; i < BLOCKS; i++) {
		batch[i] = malloc(size);
		scn_fill(batch[i], size);
	}
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
	static double c_churn;
	static long bursts;
	unsigned long n;

	if (batch[0] && t >= (bursts - 1) * PERIOD_S + 0.5 + HOLD_S)
		for (int i = 0; i < BLOCKS; i++) {
			free(batch[i]);
			batch[i] = NULL;
		}
	if (!batch[0] && t >= bursts * PERIOD_S + 0.5) {
		load_batch(BLOCK_SIZE);
		bursts++;
	}
	for (n = scn_quota(&c_churn, 16 * MiB, dt, 64 * KiB); n; n--)
		churn(64 * KiB);
}

int main(int argc, char **argv)
{
	return scn_main(argc, argv, &scenario, step);
}

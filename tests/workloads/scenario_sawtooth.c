// cflags: -O2 -fno-omit-frame-pointer
/*
 * scenario_sawtooth - batches allocated, then freed: in every 10 s cycle
 * batch_build allocates 3 MiB/s in 64 KiB blocks for 8 s (24 MiB), frees
 * the whole batch at 8.5 s and idles until the next cycle. churn allocates
 * 8 MiB/s in 32 KiB blocks freed at once. Nothing leaks.
 * Options: --duration=SECS (default 45) and those of mt_workload.h.
 */
#include <math.h>
#include <stdlib.h>

#include "scenario_common.h"

#define CYCLE_S 10.0
#define BUILD_S 8.0
#define FREE_AT_S 8.5
#define BLOCK (64 * KiB)
#define MAX_BLOCKS 512 /* 24 MiB / 64 KiB = 384, with room */

static const struct scn scenario = {
	.name = "scenario_sawtooth",
	.duration_s = 45,
	.cpu_share = 0.15,
	.sites = {
		{ "batch_build" },
		{ "churn" },
	},
};

static void *batch[MAX_BLOCKS];
static int nbatch;

WL_SITE static void batch_build(unsigned long size)
{
	char *p = malloc(size);

	scn_fill(p, size);
	if (nbatch == MAX_BLOCKS)
		wl_die("batch overflow", NULL);
	batch[nbatch++] = p;
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
	static double c_build, c_churn;
	double phase = fmod(t, CYCLE_S);
	unsigned long n;

	if (phase < BUILD_S) {
		for (n = scn_quota(&c_build, 3 * MiB, dt, BLOCK); n; n--)
			batch_build(BLOCK);
	} else if (phase >= FREE_AT_S && nbatch) {
		while (nbatch)
			free(batch[--nbatch]);
	}
	for (n = scn_quota(&c_churn, 8 * MiB, dt, 32 * KiB); n; n--)
		churn(32 * KiB);
}

int main(int argc, char **argv)
{
	return scn_main(argc, argv, &scenario, step);
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * rate.c - the sampler's choice of blocks, seen from inside the process:
 * allocates a known mix of sizes, counts the blocks that came back with a
 * sampler header, and checks the estimate a consumer would make from the
 * alloc probe's weight (round(size / (1 - exp(-size/rate))) bytes per
 * sample) against the true total, within 5 standard deviations of the
 * Horvitz-Thompson estimator. Also checks the per-size sampling fraction.
 *
 *   rate RATE     sampling must be on (MEMTOP_SAMPLER_FORCE=1) at RATE
 *   rate none     nothing may be sampled
 *
 * Prints "rate ok ..." or FAIL and exits 1.
 */
#define _GNU_SOURCE
#include "sampler_check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static const size_t sizes[] = { 16, 256, 4096, 65536, 1 << 20 };
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))
/* Allocations of each size: about 1.4 GB in all, freed as it goes. */
static const long counts[NSIZES] = { 2000000, 400000, 100000, 10000, 600 };

int main(int argc, char **argv)
{
	double est = 0, truth = 0, var = 0, rate = 0;
	long sampled[NSIZES] = { 0 }, total = 0;
	bool none = argc > 1 && !strcmp(argv[1], "none");
	size_t i;

	if (!none)
		CHECK(argc > 1 && (rate = atof(argv[1])) > 1);
	for (i = 0; i < NSIZES; i++) {
		double p = none ? 0 : -expm1(-(double)sizes[i] / rate), mean, sd;
		long n;

		for (n = 0; n < counts[i]; n++) {
			void *b = malloc(sizes[i]);

			CHECK(b != NULL);
			if (block_looks_sampled(b, MT_SAMPLER_HEADER_SIZE)) {
				sampled[i]++;
				est += floor((double)sizes[i] / p + 0.5);
			}
			free(b);
		}
		truth += (double)sizes[i] * counts[i];
		total += sampled[i];
		if (none)
			continue;
		var += (double)sizes[i] * sizes[i] * counts[i] * (1 - p) / p;
		/* Binomial count of samples of this size. */
		mean = counts[i] * p;
		sd = sqrt(counts[i] * p * (1 - p));

		if (fabs(sampled[i] - mean) > 5 * sd + 1) {
			fprintf(stderr, "FAIL size %zu: %ld sampled, expected %.1f +- %.1f\n",
				sizes[i], sampled[i], mean, sd);
			return 1;
		}
	}
	if (none) {
		CHECK(total == 0);
		printf("rate ok: nothing sampled\n");
		return 0;
	}
	if (fabs(est - truth) > 5 * sqrt(var)) {
		fprintf(stderr, "FAIL estimate %.0f bytes, truth %.0f, sd %.0f\n", est, truth,
			sqrt(var));
		return 1;
	}
	printf("rate ok: %ld samples, estimate %.4f of the true bytes (sd %.4f)\n", total,
	       est / truth, sqrt(var) / truth);
	return 0;
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_free_duty.c - could free() be duty-cycled too? (issue 12, item 5;
 * docs/probes.md section 6.6). A simulation of the obvious estimator:
 * free() probes on a share q of the time, and each observed free of a
 * sampled block subtracts its weight divided by q (Horvitz-Thompson), so
 * in-use stays unbiased. The workload is the plateaued cache of the
 * busy_leak workload (1024 entries of 32 KiB, 64 replaced a second),
 * sampled at 512 KiB. The test checks what docs/probes.md says:
 *
 *  - the estimate is unbiased for every q (mean over many runs);
 *  - with free() always probed its error stays bounded (it estimates a set
 *    of fixed size); with q < 1 every replaced entry adds a step of
 *    (1/q - 1) of a weight, so the error is a random walk that grows like
 *    sqrt(t): at q = 1/2 its spread after ten minutes is several times
 *    that after 45 s and as large as what a 480 KiB/s leak adds in a
 *    minute, the size of the signal the leak score looks for;
 *  - and the live set is lost: a sampled block whose free was not seen
 *    stays "live" (only its weight is compensated), so after ten minutes
 *    at q = 1/2 such ghosts outnumber the cache's real live samples more
 *    than tenfold, all older than any real entry: the age of live samples,
 *    the score's strongest evidence against a cache, would call it a leak.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <cmocka.h>

#include "util/sampling.h"

#define ENTRIES 1024
#define ENTRY (32 * 1024)
#define REPLACE_PER_S 64
#define RATE (512 * 1024)
#define RUNS 300

static __u32 table[MT_EXP_TABLE_SIZE];

static double uniform(__u64 *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return (double)((*s * 0x2545F4914F6CDD1DULL) >> 11) / 9007199254740992.0;
}

static long ghosts, live_samples; /* of the last run */

/* Error of the in-use estimate (bytes) after each of the n checkpoints. */
static void run(double q, __u64 seed, const double *at_s, int n, double *err)
{
	static double w[ENTRIES]; /* weight of the live sample in each slot, 0: none */
	struct sampler sm;
	double est = 0, weight = sampling_weight(ENTRY, RATE);
	__u64 rng = seed * 0x9E3779B97F4A7C15ULL + 1;
	long k = 0, total;
	int c = 0;

	ghosts = 0;
	sampler_init(&sm, RATE, table, seed);
	/* the cache is full when watching starts at t = 0: its entries were
	 * sampled when allocated, as if watched since then */
	for (int i = 0; i < ENTRIES; i++) {
		w[i] = sampler_take(&sm, ENTRY) ? weight : 0;
		est += w[i] * ENTRY;
	}
	total = (long)(at_s[n - 1] * REPLACE_PER_S);
	for (k = 1; k <= total; k++) {
		int slot = (int)(k % ENTRIES);

		/* the free of the oldest entry, seen with probability q */
		if (w[slot] > 0 && uniform(&rng) < q)
			est -= w[slot] * ENTRY / q;
		else if (w[slot] > 0)
			ghosts++; /* stays in the live set, never to leave */
		w[slot] = sampler_take(&sm, ENTRY) ? weight : 0;
		est += w[slot] * ENTRY;
		while (c < n && k == (long)(at_s[c] * REPLACE_PER_S))
			err[c++] = est - (double)ENTRIES * ENTRY;
	}
	live_samples = 0;
	for (int i = 0; i < ENTRIES; i++)
		live_samples += w[i] > 0;
}

static void spread(double q, const double *at_s, int n, double *mean, double *sd)
{
	double sum[4] = { 0 }, sq[4] = { 0 }, e[4];

	for (int r = 0; r < RUNS; r++) {
		run(q, (__u64)r + 1, at_s, n, e);
		for (int i = 0; i < n; i++) {
			sum[i] += e[i];
			sq[i] += e[i] * e[i];
		}
	}
	for (int i = 0; i < n; i++) {
		mean[i] = sum[i] / RUNS;
		sd[i] = sqrt(sq[i] / RUNS - mean[i] * mean[i]);
	}
}

static void test_free_duty_random_walk(void **state)
{
	const double at[] = { 45, 600 };
	const double leak_per_min = 480.0 * 1024 * 60;
	double m1[2], s1[2], mh[2], sh[2], mq[2], sq[2];

	spread(1.0, at, 2, m1, s1);
	spread(0.5, at, 2, mh, sh);
	spread(0.25, at, 2, mq, sq);
	print_message("in-use error sd (MiB) at 45 s / 600 s: q=1 %.1f / %.1f, q=1/2 %.1f / %.1f, "
		      "q=1/4 %.1f / %.1f; a 480 KiB/s leak adds %.1f MiB a minute\n",
		      s1[0] / 1048576, s1[1] / 1048576, sh[0] / 1048576, sh[1] / 1048576,
		      sq[0] / 1048576, sq[1] / 1048576, leak_per_min / 1048576);
	/* unbiased: every mean within 5 standard errors of zero */
	for (int i = 0; i < 2; i++) {
		assert_true(fabs(m1[i]) <= 5 * s1[i] / sqrt(RUNS));
		assert_true(fabs(mh[i]) <= 5 * sh[i] / sqrt(RUNS));
		assert_true(fabs(mq[i]) <= 5 * sq[i] / sqrt(RUNS));
	}
	/* bounded with free() always probed ... */
	assert_true(s1[1] < 1.3 * s1[0]);
	/* ... a random walk without: sqrt(600/45) = 3.7 */
	assert_true(sh[1] > 2.5 * sh[0]);
	assert_true(sq[1] > 2.5 * sq[0]);
	/* after ten minutes the walk is as large as a minute of the leak */
	assert_true(sh[1] > 0.5 * leak_per_min);
	assert_true(sh[1] > 3 * s1[1]);
	/* and ghosts swamp the live set */
	run(0.5, 12345, at, 2, mh);
	print_message("q=1/2 after 600 s: %ld ghost samples, %ld real live samples\n", ghosts,
		      live_samples);
	assert_true(ghosts > 10 * live_samples);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_free_duty_random_walk),
	};

	sampling_exp_table(table);
	return cmocka_run_group_tests(tests, NULL, NULL);
}

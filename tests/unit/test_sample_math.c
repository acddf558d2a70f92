// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_sample_math.c - the arithmetic the in-process samplers share
 * (src/sampler/sample_math.h, no libm behind it): its logarithm and
 * 1 - exp(-x) against libm's over their whole ranges, the gap's mean and
 * its lower bound, and the weight's limits.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "sampler/sample_math.h"

static void test_log_matches_libm(void **state)
{
	double u, worst = 0;

	for (u = 0x1p-53; u <= 1.0; u *= 1.0007) {
		double d = fabs(sm_log(u) - log(u)) / fmax(fabs(log(u)), 1e-300);

		worst = fmax(worst, d);
	}
	assert_true(worst < 1e-12);
	assert_true(sm_log(1.0) == 0.0);
}

static void test_one_minus_exp_matches_libm(void **state)
{
	double x, worst = 0;

	for (x = 1e-12; x < 800; x *= 1.0011)
		worst = fmax(worst, fabs(sm_one_minus_exp_neg(x) + expm1(-x)) / -expm1(-x));
	assert_true(worst < 1e-12);
	assert_true(sm_one_minus_exp_neg(1000) == 1.0);
}

static void test_gap_mean_and_bounds(void **state)
{
	__u64 s = 88172645463325252ULL, i, n = 400000;
	double rate = 524288, sum = 0;

	for (i = 0; i < n; i++) {
		__s64 g = sm_gap(sm_next(&s), rate);

		assert_true(g >= 1);
		sum += (double)g;
	}
	/* mean rate + 0.5 (the floor of an exponential plus one); the sample
	 * mean's standard deviation is rate / sqrt(n) */
	assert_true(fabs(sum / n - rate - 0.5) < 5 * rate / sqrt((double)n));
	assert_true(sm_gap(0, rate) >= 1);     /* u = 2^-53: large, finite */
	assert_true(sm_gap(~0ULL, rate) == 1); /* u = 1: the smallest gap */
}

static void test_weight(void **state)
{
	/* size / (1 - exp(-size / rate)) */
	assert_true(sm_weight(524288, 524288) == (__u64)(524288 / (1 - exp(-1.0)) + 0.5));
	assert_true(sm_weight(64, 524288) >= 524288 && sm_weight(64, 524288) <= 524288 + 64);
	assert_true(sm_weight(1 << 30, 524288) == 1 << 30);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_log_matches_libm),
		cmocka_unit_test(test_one_minus_exp_matches_libm),
		cmocka_unit_test(test_gap_mean_and_bounds),
		cmocka_unit_test(test_weight),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_clock.c - the clock helpers agree with each other: the monotonic
 * clocks never go back, the wall clock in seconds is the one in
 * nanoseconds, and a timed-wait deadline lies the asked time ahead, with
 * its nanoseconds normalised.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "util/clock.h"

static void test_monotonic(void **state)
{
	__u64 a = clock_mono_ns(), b = clock_mono_ns();
	__u64 c = clock_mono_coarse_ns(), d = clock_mono_coarse_ns();

	assert_true(b >= a);
	assert_true(d >= c);
	/* the coarse clock lags by at most a few ticks */
	assert_true(c <= clock_mono_ns() && clock_mono_ns() - c < 100000000ULL);
}

static void test_wall(void **state)
{
	__u64 ns = clock_wall_ns();
	double s = clock_wall_s();

	assert_true(ns > 1600000000ULL * 1000000000ULL); /* after 2020 */
	/* read after ns, so not before it (a double of ~1.8e9 s holds
	 * about 0.2 us) and well within a second of it */
	assert_true(s >= ns / 1e9 - 1e-6 && s - ns / 1e9 < 1.0);
}

static void test_deadline(void **state)
{
	static const __u64 ahead[] = { 0, 1, 999999999ULL, 1000000000ULL, 2500000000ULL };

	for (size_t i = 0; i < sizeof(ahead) / sizeof(ahead[0]); i++) {
		__u64 before = clock_wall_ns();
		struct timespec t = clock_wall_deadline(ahead[i]);
		__u64 after = clock_wall_ns();
		__u64 at = (__u64)t.tv_sec * 1000000000ULL + (__u64)t.tv_nsec;

		assert_true(t.tv_nsec >= 0 && t.tv_nsec < 1000000000L);
		assert_true(at >= before + ahead[i] && at <= after + ahead[i]);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_monotonic),
		cmocka_unit_test(test_wall),
		cmocka_unit_test(test_deadline),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

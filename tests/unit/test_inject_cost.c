// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_inject_cost.c - the in-process path's cost (inject_cost.h,
 * slowdown.h): the built libmemtop-inject.so timed on this machine gives
 * costs per call that are positive and of the order a few loads and
 * atomic adds take, a sampled call costing more than an unsampled one and
 * CPython's wrapper installed through the fake C API; the cost of counted
 * calls is their sum; and the slowdown of a process that samples itself
 * counts its sampler's own path and the BPF program's time on samples,
 * not only its traps.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "probe/inject_cost.h"
#include "probe/slowdown.h"

/* build/libmemtop-inject.so, next to build/tests/<this binary> */
static void sampler_path(char *path, size_t len)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *slash;

	assert_true(n > 0);
	self[n] = '\0';
	slash = strrchr(self, '/');
	assert_non_null(slash);
	*slash = '\0';
	snprintf(path, len, "%s/../libmemtop-inject.so", self);
}

static void test_calibrate_the_built_sampler(void **state)
{
	struct inject_cost c;
	char path[PATH_MAX + 32], err[256] = "";
	int e;

	(void)state;
	sampler_path(path, sizeof(path));
	e = inject_cost_calibrate(path, &c, err, sizeof(err));
	if (e)
		fail_msg("calibrate %s: %s", path, err);
	assert_true(c.measured);
	/* a count, a countdown, an indirect jump: nanoseconds, not hundreds */
	assert_true(c.alloc_ns > 0 && c.alloc_ns < 500);
	assert_true(c.free_ns >= 0 && c.free_ns < 500);
	/* a table insert and remove beyond that */
	assert_true(c.sample_ns > 0 && c.sample_ns < 5000);
	/* the wrapper was installed through the fake C API and timed */
	assert_true(c.py_ns > 0 && c.py_ns < 500);
	printf("alloc %.1f ns, free %.1f ns, sample %.1f ns, py call %.1f ns\n", c.alloc_ns,
	       c.free_ns, c.sample_ns, c.py_ns);
}

static void test_calibrate_refuses_a_bad_file(void **state)
{
	struct inject_cost c;
	char err[256] = "";

	(void)state;
	assert_true(inject_cost_calibrate("/nonexistent/libmemtop-inject.so", &c, err, sizeof(err)) <
		    0);
	assert_false(c.measured);
	assert_true(strlen(err) > 0);
	/* a shared object, but not the sampler: no symbols, no semaphores */
	assert_true(inject_cost_calibrate("/proc/self/exe", &c, err, sizeof(err)) < 0);
	assert_false(c.measured);
}

static void test_cost_of_counts(void **state)
{
	struct inject_cost c = {
		.alloc_ns = 3, .free_ns = 2, .sample_ns = 100, .py_ns = 5, .measured = true
	};
	/* 1000 allocations and 900 frees, 4 and 3 of them small objects the
	 * CPython wrapper counted in its 10 calls: those are in the calls'
	 * cost */
	struct mt_inject_counts n = {
		.alloc_calls = 1000, .free_calls = 900, .py_calls = 10, .py_allocs = 4, .py_frees = 3
	};

	(void)state;
	assert_true(fabs(inject_cost_ns(&c, &n, 7) - (2988 + 1794 + 50 + 700)) < 1e-9);
}

/* A process that samples itself: 1 s of CPU, 1000 hits at 1 us, 2 ms of
 * BPF time on samples and 100 ms of its sampler's own path per second:
 * 103 ms of 1 s watched, 897 ms its own: 11.48 %. */
static void test_usdt_slowdown_counts_everything(void **state)
{
	struct slowdown s;
	struct slowdown_est est;
	struct slowdown_reading r = { 0 };
	__u64 t = 1000000000ULL;
	int i;

	(void)state;
	slowdown_init(&s, 1000, true);
	slowdown_feed(&s, t, &r, SLOWDOWN_OFF);
	for (i = 0; i < 3; i++) {
		t += 1000000000ULL;
		r.cpu_ns += 1000000000ULL;
		r.hits += 1000;
		r.sample_ns += 2000000;
		r.self_ns += 100000000;
		slowdown_feed(&s, t, &r, SLOWDOWN_OFF);
	}
	assert_int_equal(slowdown_window(&s, 0, SLOWDOWN_REPORT_NS, &est), 0);
	assert_true(fabs(est.slowdown_pct - 100.0 * 103 / 897) < 0.01);
	/* without its own path it is the traps and the samples only */
	slowdown_init(&s, 1000, true);
	memset(&r, 0, sizeof(r));
	t = 1000000000ULL;
	slowdown_feed(&s, t, &r, SLOWDOWN_OFF);
	t += 1000000000ULL;
	r.cpu_ns += 1000000000ULL;
	r.hits += 1000;
	slowdown_feed(&s, t, &r, SLOWDOWN_OFF);
	assert_int_equal(slowdown_window(&s, 0, SLOWDOWN_REPORT_NS, &est), 0);
	assert_true(fabs(est.slowdown_pct - 100.0 * 1 / 999) < 0.001);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_calibrate_the_built_sampler),
		cmocka_unit_test(test_calibrate_refuses_a_bad_file),
		cmocka_unit_test(test_cost_of_counts),
		cmocka_unit_test(test_usdt_slowdown_counts_everything),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

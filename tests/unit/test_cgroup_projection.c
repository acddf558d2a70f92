// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_cgroup_projection.c - a cgroup's memory.current fitted over the
 * last minute and projected to its limit (model/cgroup_projection.h), on
 * readings at given times: a steady growth reaches the limit when the
 * arithmetic says, a plateau after growth stops projecting once the
 * growth leaves the window, and no limit, a cgroup at its limit or one
 * that shrinks have no time to the limit.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "model/cgroup_projection.h"

#define MIB (1024.0 * 1024.0)

static void feed(struct cgroup_projection *p, struct mt_cgroup_status *cg, double t0, double t1,
		 double v0, double slope)
{
	for (double t = t0; t <= t1 + 1e-9; t += 1.0) {
		cg->mem.current = (__u64)(v0 + slope * (t - t0));
		cgroup_projection_add(p, t, cg);
	}
}

static void test_steady_growth_reaches_the_limit(void **state)
{
	struct cgroup_projection p;
	struct mt_cgroup_status cg = { .have_mem = true, .mem = { .max = (__u64)(512 * MIB) } };

	(void)state;
	cgroup_projection_init(&p);
	feed(&p, &cg, 1000, 1030, 100 * MIB, 2 * MIB); /* 2 MiB/s for 30 s: at 160 MiB */
	assert_true(fabs(cg.growth_bytes_per_s - 2 * MIB) < 0.01 * MIB);
	assert_true(cg.growth_r2 > 0.999);
	/* (512 - 160) MiB at 2 MiB/s */
	assert_true(fabs(cg.time_to_max_s - 176.0) < 1.0);
}

static void test_plateau_after_growth_stops_projecting(void **state)
{
	struct cgroup_projection p;
	struct mt_cgroup_status cg = { .have_mem = true, .mem = { .max = (__u64)(512 * MIB) } };

	(void)state;
	cgroup_projection_init(&p);
	feed(&p, &cg, 0, 30, 100 * MIB, 4 * MIB);
	assert_true(cg.time_to_max_s > 0);
	feed(&p, &cg, 31, 200, 220 * MIB, 0); /* flat for well over the window */
	assert_true(fabs(cg.growth_bytes_per_s) < 1.0);
	assert_true(cg.time_to_max_s < 0);
}

static void test_no_projection_without_limit_at_it_or_shrinking(void **state)
{
	struct cgroup_projection p;
	struct mt_cgroup_status cg = { .have_mem = true };

	(void)state;
	cgroup_projection_init(&p);
	feed(&p, &cg, 0, 20, 100 * MIB, 1 * MIB); /* no memory.max */
	assert_true(cg.growth_bytes_per_s > 0.9 * MIB);
	assert_true(cg.time_to_max_s < 0);

	cgroup_projection_init(&p);
	cg.mem.max = (__u64)(110 * MIB);
	feed(&p, &cg, 0, 20, 100 * MIB, 1 * MIB); /* past memory.max: at it */
	assert_true(cg.time_to_max_s < 0);

	cgroup_projection_init(&p);
	cg.mem.max = (__u64)(512 * MIB);
	feed(&p, &cg, 0, 20, 300 * MIB, -1 * MIB);
	assert_true(cg.growth_bytes_per_s < 0);
	assert_true(cg.time_to_max_s < 0);
}

static void test_one_reading_has_no_slope(void **state)
{
	struct cgroup_projection p;
	struct mt_cgroup_status cg = { .have_mem = true, .mem = { .max = (__u64)(512 * MIB) } };

	(void)state;
	cgroup_projection_init(&p);
	cg.mem.current = (__u64)(100 * MIB);
	cgroup_projection_add(&p, 5.0, &cg);
	assert_true(cg.growth_bytes_per_s == 0);
	assert_true(cg.time_to_max_s < 0);
}

/* A SIGKILL is the OOM killer's when oom_kill rose since the last
 * refresh, or since the one before it; not when it did not, when the
 * cgroup was never read, or when the count is unknown. */
static void test_oom_end(void **state)
{
	struct mt_cgroup_status cg = {
		.have_mem = true,
		.mem = { .current = (__u64)(100 * MIB), .max = (__u64)(128 * MIB), .oom_kill = 2 },
	};
	struct cgroup_mem now = { .oom_kill = 3 };
	struct mt_target_end e = { .kind = MT_END_SIGNAL, .signal = 9, .cg_oom_kill = -1 };

	(void)state;
	assert_true(cgroup_oom_end(&cg, -1, &now, &e));
	assert_int_equal(e.kind, MT_END_OOM);
	assert_true(e.have_cgroup);
	assert_int_equal(e.cg_current, (__u64)(100 * MIB));
	assert_int_equal(e.cg_max, (__u64)(128 * MIB));
	assert_int_equal(e.cg_oom_kill, 3);
	assert_int_equal(e.signal, 9);

	e = (struct mt_target_end){ .kind = MT_END_SIGNAL, .cg_oom_kill = -1 };
	now.oom_kill = 2; /* the same count: a SIGKILL from someone else */
	assert_false(cgroup_oom_end(&cg, -1, &now, &e));
	assert_int_equal(e.kind, MT_END_SIGNAL);
	/* a refresh ran between the kill and its notice: it rose against the
	 * reading before */
	cg.mem.oom_kill = 2;
	assert_true(cgroup_oom_end(&cg, 1, &now, &e));
	assert_int_equal(e.kind, MT_END_OOM);

	e = (struct mt_target_end){ .kind = MT_END_SIGNAL, .cg_oom_kill = -1 };
	now.oom_kill = -1; /* v1: not reported */
	assert_false(cgroup_oom_end(&cg, 1, &now, &e));
	now.oom_kill = 5;
	cg.have_mem = false;
	assert_false(cgroup_oom_end(&cg, 1, &now, &e));
	assert_int_equal(e.kind, MT_END_SIGNAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_steady_growth_reaches_the_limit),
		cmocka_unit_test(test_plateau_after_growth_stops_projecting),
		cmocka_unit_test(test_no_projection_without_limit_at_it_or_shrinking),
		cmocka_unit_test(test_one_reading_has_no_slope),
		cmocka_unit_test(test_oom_end),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_budget.c - the --max-overhead controller: slowdown from measured
 * probe time, duty that converges under the limit, increases capped,
 * and the on/off schedule within each period.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "probe/budget.h"

static void test_slowdown(void **state)
{
	/* half of the target's CPU time in probes: it ran twice as long */
	assert_true(fabs(budget_slowdown_pct(5e8, 1e9) - 100.0) < 1e-9);
	assert_true(fabs(budget_slowdown_pct(1e8, 1e9) - 100.0 / 9) < 1e-9);
	assert_true(budget_slowdown_pct(0, 1e9) == 0);
	assert_true(budget_slowdown_pct(1e6, 0) == 0);
	assert_true(budget_slowdown_pct(2e9, 1e9) > 1000); /* capped, finite */
}

/* A target whose probes cost `full` % at duty 1 converges under the limit. */
static void test_converges(void **state)
{
	struct budget b;
	double full = 80, s = full;
	int i;

	budget_init(&b, 10);
	for (i = 0; i < 10; i++) {
		budget_update(&b, s);
		s = full * b.duty; /* allocation probes' cost scales with duty */
	}
	assert_true(s <= 10.0 + 1e-9);
	assert_true(s > 5.0); /* and does not back off more than needed */
	assert_true(b.ever_paused);
}

static void test_recovers_slowly(void **state)
{
	struct budget b;

	budget_init(&b, 10);
	budget_update(&b, 1000);
	assert_true(fabs(b.duty - BUDGET_MIN_DUTY) < 1e-9); /* floor */
	assert_false(b.unreachable);		  /* not yet tried at the floor */
	budget_update(&b, 400);			  /* free() alone is above the limit */
	assert_true(b.unreachable);
	budget_update(&b, 0.0);			  /* load went away */
	assert_false(b.unreachable);
	assert_true(fabs(b.duty - 2 * BUDGET_MIN_DUTY) < 1e-9); /* at most doubles */
	budget_update(&b, 9.0);			  /* close to the limit: hold */
	assert_true(fabs(b.duty - 2 * BUDGET_MIN_DUTY) < 1e-9);
	for (int i = 0; i < 10; i++)
		budget_update(&b, 0);
	assert_true(b.duty == 1.0);
}

static void test_phase(void **state)
{
	struct budget b;
	__u64 next, t0 = 5 * BUDGET_PERIOD_NS;

	budget_init(&b, 10);
	assert_true(budget_phase(&b, t0, &next));
	assert_true(next == t0 + BUDGET_PERIOD_NS);
	b.duty = 0.25;
	assert_true(budget_phase(&b, t0 + BUDGET_PERIOD_NS, &next));
	assert_true(next == t0 + BUDGET_PERIOD_NS + BUDGET_PERIOD_NS / 4);
	assert_false(budget_phase(&b, next, &next));
	assert_true(next == t0 + 2 * BUDGET_PERIOD_NS);
	assert_true(budget_phase(&b, next, &next)); /* a new period */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_slowdown),
		cmocka_unit_test(test_converges),
		cmocka_unit_test(test_recovers_slowly),
		cmocka_unit_test(test_phase),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

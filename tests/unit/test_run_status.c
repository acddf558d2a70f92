// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_run_status.c - the status's figures that follow from the model
 * (src/run_status.h): exact counters only while every target's are and
 * the budget never paused, the CPU the probe hits cost at the measured
 * cost per hit (the calibration's until then), records per second over
 * the model's interval, and "all exited" never while a cgroup may bring
 * a newcomer.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "run_status.h"
#include "target_fixture.h"

#define NS 1000000000ULL

static struct mt_model *two_targets(void)
{
	struct mt_model_opts o = { .rate = 4096, .group = MT_GROUP_FUNCTION };
	struct mt_model *m = model_new(&o);

	assert_non_null(m);
	test_target(m, 7);
	test_target(m, 8);
	model_apply(m, MT_INPUT_TICK(NS));
	model_apply(m, MT_INPUT_TICK(3 * NS)); /* an interval of 2 s */
	return m;
}

static void test_counters_exact(void **state)
{
	struct mt_model *m = two_targets();
	struct mt_target_facts usdt = { .pid = 8, .set = MT_FACT_EXACT, .counters_exact = false };

	(void)state;
	assert_true(run_status_counters_exact(m, false));
	assert_false(run_status_counters_exact(m, true)); /* the budget paused the probes */
	model_apply(m, MT_INPUT_FACTS(&usdt));            /* one target samples itself */
	assert_false(run_status_counters_exact(m, false));
	model_free(m);
}

static void test_figures(void **state)
{
	struct mt_model *m = two_targets();
	struct mt_status st = { .trap_ns = 800 };
	struct run_status_in in = { .records = 500, .alive = 2 };

	(void)state;
	test_target(m, 7)->probe_hits_per_s = 30000;
	test_target(m, 8)->probe_hits_per_s = 20000;
	run_status_refresh(&st, m, &in);
	assert_true(st.counters_exact);
	assert_true(st.probe_hits_per_s == 50000);
	/* 50,000 hits/s at the calibration's 800 ns: 4% of one CPU */
	assert_true(st.est_cpu_pct > 3.999 && st.est_cpu_pct < 4.001);
	st.cost_ns = 1200; /* measured on the target: that one counts */
	run_status_refresh(&st, m, &in);
	assert_true(st.est_cpu_pct > 5.999 && st.est_cpu_pct < 6.001);
	assert_true(st.events_per_s == 250); /* 500 records over 2 s */
	assert_false(st.all_exited);
	assert_int_equal(st.cgroup.processes, 2);
	in.alive = 0;
	run_status_refresh(&st, m, &in);
	assert_true(st.all_exited);
	in.pending = true; /* a command not watched yet */
	run_status_refresh(&st, m, &in);
	assert_false(st.all_exited);
	in.pending = false;
	st.cgroup.on = true; /* a newcomer may come */
	run_status_refresh(&st, m, &in);
	assert_false(st.all_exited);
	model_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_counters_exact),
		cmocka_unit_test(test_figures),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_overhead.c - the overhead controller (probe/overhead.h) on a fake
 * clock, through a port to a simulated target whose slowdown is what its
 * probes that stay on cost (the floor) plus what its allocation probes
 * cost times the duty: the start-up measure's phases and their bounds, a
 * stop asked for in the middle of it, the duty brought under the limit
 * with the schedule on that share of the time, the status it fills, the
 * note when the floor alone is over the limit and its withdrawal, no
 * budget, an in-process cost over the limit, and the exact-rate window.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "probe/overhead.h"

#define MS 1000000ULL
#define S 1000000000ULL

struct sim {
	__u64 now;
	/* the target */
	double floor_pct, alloc_pct; /* at full duty */
	bool in_process;             /* no probes to switch: only the all-targets cost */
	double in_process_pct;
	double uncertainty;
	/* what the controller did */
	bool allocs, frees, count_only;
	double duty, phase_duty;
	__u64 phase_rate;
	int alloc_switches, free_switches, count_only_switches, measures, paused;
	int pauses_unsaid;           /* schedule off-switches paused() has not followed yet */
	__u64 on_ns, last_switch_ns; /* time with the allocation probes on */
	int stop_after_waits;        /* > 0: wait says stop at that call */
	int waits;
};

static __u64 sim_now(void *ctx)
{
	return ((struct sim *)ctx)->now;
}

static void sim_measure(void *ctx, __u64 now, enum slowdown_state state)
{
	struct sim *s = ctx;

	assert_true(now <= s->now);
	(void)state;
	s->measures++;
}

static void sim_set_allocs(void *ctx, bool on)
{
	struct sim *s = ctx;

	if (s->allocs)
		s->on_ns += s->now - s->last_switch_ns;
	s->last_switch_ns = s->now;
	if (s->allocs != on)
		s->alloc_switches++;
	if (s->allocs && !on && !s->count_only)
		s->pauses_unsaid++;
	s->allocs = on;
}

static void sim_set_frees(void *ctx, bool on)
{
	struct sim *s = ctx;

	s->free_switches += s->frees != on;
	s->frees = on;
}

static void sim_set_phase(void *ctx, __u64 rate, double duty, bool on)
{
	struct sim *s = ctx;

	s->phase_rate = rate;
	s->phase_duty = duty;
	(void)on;
}

static void sim_set_count_only(void *ctx, bool on)
{
	struct sim *s = ctx;

	s->count_only_switches += s->count_only != on;
	s->count_only = on;
}

static void sim_set_duty(void *ctx, double duty)
{
	((struct sim *)ctx)->duty = duty;
}

static int sim_cost(void *ctx, __u64 since_ns, __u64 max_ns, bool switched_only,
		    struct watch_cost *out)
{
	struct sim *s = ctx;
	__u64 span = s->now - since_ns;

	memset(out, 0, sizeof(*out));
	if (s->in_process) {
		if (switched_only)
			return -1;
		out->slowdown_pct = s->in_process_pct;
		out->span_ns = span < max_ns ? span : max_ns;
		return 0;
	}
	out->floor_pct = s->floor_pct;
	out->slowdown_pct = s->floor_pct + s->alloc_pct * s->duty;
	out->span_ns = span < max_ns ? span : max_ns;
	out->measured = true;
	out->low_pct = out->slowdown_pct * 0.9;
	out->high_pct = out->slowdown_pct * 1.1;
	out->cost_ns = 800;
	out->cost_measured = true;
	return 0;
}

static double sim_own_uncertainty(void *ctx)
{
	return ((struct sim *)ctx)->uncertainty;
}

static bool sim_wait(void *ctx, int ms)
{
	struct sim *s = ctx;

	s->now += (__u64)ms * MS;
	return s->stop_after_waits > 0 && ++s->waits >= s->stop_after_waits;
}

static void sim_paused(void *ctx)
{
	struct sim *s = ctx;

	s->paused++;
	s->pauses_unsaid = 0;
}

static void start(struct overhead *o, struct sim *s, double limit, struct mt_status *st)
{
	const struct overhead_port port = {
		.ctx = s,
		.now = sim_now,
		.measure = sim_measure,
		.set_allocs = sim_set_allocs,
		.set_frees = sim_set_frees,
		.set_phase = sim_set_phase,
		.set_count_only = sim_set_count_only,
		.set_duty = sim_set_duty,
		.cost = sim_cost,
		.own_uncertainty = sim_own_uncertainty,
		.wait = sim_wait,
		.paused = sim_paused,
	};

	s->now = 10 * S;
	s->allocs = s->frees = true;
	s->duty = 1.0;
	s->last_switch_ns = s->now;
	memset(st, 0, sizeof(*st));
	overhead_init(o, &port, 524288, limit, 42, st);
	assert_true(fabs(st->duty - 1.0) < 1e-12);
	assert_int_equal(st->phase_rate, 524288);
}

/* Run the loop until `until`, waking when the controller asks to. */
static void run_until(struct overhead *o, struct sim *s, struct mt_status *st, __u64 until)
{
	while (s->now < until) {
		__u64 next = overhead_next_ns(o);

		s->now = next > s->now ? (next < until ? next : until) : s->now;
		if (s->now >= overhead_next_ns(o))
			overhead_run(o, s->now, st);
		/* a pause is said when it begins, not at the next step: a
		 * process that ends between the two missed calls too */
		assert_int_equal(s->pauses_unsaid, 0);
	}
}

static void test_unprobed_measure_cycles_and_bounds(void **state)
{
	struct overhead o;
	struct mt_status st;
	struct sim s = { .uncertainty = 0.01 };
	__u64 t0;

	(void)state;
	start(&o, &s, 10, &st);
	t0 = s.now;
	assert_false(overhead_measure_unprobed(&o));
	/* three cycles of four 60 ms phases when the estimate is sharp */
	assert_int_equal(s.now - t0, 3 * 4 * 60 * MS);
	assert_int_equal(s.alloc_switches, 6);
	assert_int_equal(s.free_switches, 6);
	/* counting only meanwhile, everything back on after */
	assert_int_equal(s.count_only_switches, 2);
	assert_false(s.count_only);
	assert_true(s.allocs && s.frees);
	assert_int_equal(o.budget.changed_ns, s.now);

	/* while uncertain, cycles go on until the bound (2.5 s) */
	memset(&s, 0, sizeof(s));
	s.uncertainty = 0.5;
	start(&o, &s, 10, &st);
	t0 = s.now;
	assert_false(overhead_measure_unprobed(&o));
	assert_true(s.now - t0 >= 2500 * MS && s.now - t0 < 2500 * MS + 4 * 60 * MS);
	assert_true(s.allocs && s.frees && !s.count_only);
}

static void test_unprobed_measure_stopped_leaves_probes_on(void **state)
{
	struct overhead o;
	struct mt_status st;
	struct sim s = { .uncertainty = 0.5, .stop_after_waits = 3 }; /* with free() off */

	(void)state;
	start(&o, &s, 10, &st);
	assert_true(overhead_measure_unprobed(&o));
	assert_int_equal(s.waits, 3);
	assert_true(s.allocs && s.frees && !s.count_only);
}

static void test_duty_meets_the_limit(void **state)
{
	struct overhead o;
	struct mt_status st;
	struct sim s = { .floor_pct = 2, .alloc_pct = 60 };
	__u64 t0, off0;
	double on_share, off_said;

	(void)state;
	start(&o, &s, 10, &st);
	run_until(&o, &s, &st, s.now + 20 * S);
	/* 2 + 60 d <= 10: d at or under 0.133, aimed at 90% of the limit */
	assert_true(s.duty < 0.134 && s.duty >= BUDGET_MIN_DUTY);
	assert_true(fabs(st.duty - s.duty) < 1e-12);
	assert_true(st.backed_off);
	assert_false(st.budget_unreachable);
	assert_true(s.floor_pct + s.alloc_pct * s.duty <= 10.0);
	/* the phases sample at rate * duty, so as many samples come */
	assert_int_equal(st.phase_rate, (__u64)(524288 * s.duty));
	assert_int_equal(s.phase_rate, st.phase_rate);
	/* the slowdown said is the measure's, with its range */
	assert_true(st.est_slowdown_measured);
	assert_true(fabs(st.est_slowdown_pct - (2 + 60 * s.duty)) < 1e-9);
	assert_true(st.est_slowdown_low_pct < st.est_slowdown_pct &&
		    st.est_slowdown_pct < st.est_slowdown_high_pct);
	/* the probes were paused: counts are not exact, said every step */
	assert_true(overhead_ever_paused(&o));
	assert_true(s.paused > 0);
	/* and the schedule keeps them on that share of the time */
	t0 = s.now;
	off0 = overhead_off_ns(&o, s.now);
	s.on_ns = 0;
	s.last_switch_ns = s.now;
	run_until(&o, &s, &st, s.now + 400 * S);
	if (s.allocs)
		s.on_ns += s.now - s.last_switch_ns;
	on_share = (double)s.on_ns / (double)(s.now - t0);
	assert_true(fabs(on_share - s.duty) < 0.25 * s.duty);
	/* its own account of the time they were off (the rates' share) is
	 * the rest of it */
	off_said = (double)(overhead_off_ns(&o, s.now) - off0) / (double)(s.now - t0);
	assert_true(fabs(off_said - (1 - on_share)) < 1e-6);
}

static void test_unreachable_note_said_and_taken_back(void **state)
{
	struct overhead o;
	struct mt_status st;
	struct sim s = { .floor_pct = 15, .alloc_pct = 30 };

	(void)state;
	start(&o, &s, 10, &st);
	run_until(&o, &s, &st, s.now + 5 * S);
	assert_true(st.budget_unreachable);
	assert_non_null(strstr(st.budget_note, "free() probes alone cost this process 15%"));
	assert_non_null(strstr(st.budget_note, "budget of 10% cannot be met"));
	assert_string_equal(st.message, st.budget_note);
	/* a newer message of another cause stays */
	snprintf(st.message, sizeof(st.message), "exported x.pb.gz");
	s.floor_pct = 40; /* stale: the note is said again, the message kept */
	run_until(&o, &s, &st, s.now + 5 * S);
	assert_non_null(strstr(st.budget_note, "40%"));
	assert_string_equal(st.message, "exported x.pb.gz");
	/* the cause gone: the note goes, and the other message is left */
	s.floor_pct = 1;
	run_until(&o, &s, &st, s.now + 30 * S);
	assert_false(st.budget_unreachable);
	assert_string_equal(st.budget_note, "");
	assert_string_equal(st.message, "exported x.pb.gz");

	/* the note in the status line is taken back with its cause */
	memset(&s, 0, sizeof(s));
	s.floor_pct = 15;
	s.alloc_pct = 30;
	start(&o, &s, 10, &st);
	run_until(&o, &s, &st, s.now + 5 * S);
	assert_string_equal(st.message, st.budget_note);
	s.floor_pct = 1;
	run_until(&o, &s, &st, s.now + 30 * S);
	assert_string_equal(st.message, "");
}

static void test_no_budget_measures_only(void **state)
{
	struct overhead o;
	struct mt_status st;
	struct sim s = { .floor_pct = 20, .alloc_pct = 80 };

	(void)state;
	start(&o, &s, 0, &st);
	run_until(&o, &s, &st, s.now + 10 * S);
	assert_true(fabs(st.est_slowdown_pct - 100) < 1e-9);
	assert_true(fabs(s.duty - 1.0) < 1e-12 && fabs(st.duty - 1.0) < 1e-12);
	assert_int_equal(s.alloc_switches, 0);
	assert_false(st.backed_off || st.budget_unreachable);
	assert_false(overhead_ever_paused(&o));
	assert_int_equal(s.paused, 0);
	assert_true(overhead_on_since(&o, 0 + 1));
}

static void test_in_process_over_the_limit_is_said(void **state)
{
	struct overhead o;
	struct mt_status st;
	struct sim s = { .in_process = true, .in_process_pct = 20 };

	(void)state;
	start(&o, &s, 10, &st);
	run_until(&o, &s, &st, s.now + 2 * S);
	assert_true(fabs(st.inprocess_over_pct - 20) < 1e-9);
	assert_int_equal(s.alloc_switches, 0); /* no phase would lower it */
	s.in_process_pct = 3;
	run_until(&o, &s, &st, s.now + 2 * S);
	assert_true(st.inprocess_over_pct == 0);
}

static void test_rates_exact_only_while_on(void **state)
{
	struct overhead o;
	struct mt_status st;
	struct sim s = { .floor_pct = 2, .alloc_pct = 60 };
	__u64 before;

	(void)state;
	start(&o, &s, 10, &st);
	before = s.now + 1;
	s.now++;
	assert_true(overhead_on_since(&o, before));
	run_until(&o, &s, &st, s.now + 20 * S); /* backed off: it switched */
	assert_true(s.alloc_switches > 0);
	assert_false(overhead_on_since(&o, before));
	/* after a switch off, an interval that starts after it is exact
	 * only once the probes are on again and stayed on */
	while (!s.allocs)
		run_until(&o, &s, &st, overhead_next_ns(&o) + 1);
	assert_true(overhead_on_since(&o, s.now + 1));
	assert_false(overhead_on_since(&o, o.last_off_ns));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unprobed_measure_cycles_and_bounds),
		cmocka_unit_test(test_unprobed_measure_stopped_leaves_probes_on),
		cmocka_unit_test(test_duty_meets_the_limit),
		cmocka_unit_test(test_unreachable_note_said_and_taken_back),
		cmocka_unit_test(test_no_budget_measures_only),
		cmocka_unit_test(test_in_process_over_the_limit_is_said),
		cmocka_unit_test(test_rates_exact_only_while_on),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

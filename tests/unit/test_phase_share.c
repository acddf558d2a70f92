// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_phase_share.c - samples under the budget's duty cycle stay
 * unbiased for a target that notices the probes (probe/phase_share.h).
 *
 * The simulated target works in rounds: each round allocates and frees
 * and takes a fixed time, `slow` times longer while the allocation probes
 * are on (their traps are its time), so fewer of its allocations fall in
 * the on-phases than the duty says. Optionally the probes stay in place
 * `lag` after the schedule ends an on-phase (a detach that is slow to take
 * the breakpoints out). memtop's side is the real code: the budget's
 * schedule, the kernel's countdown twin at R*d, the counters read at
 * every switch and every 250 ms as the app does, and a sample weighed by
 * 1 / (d * ratio * p). For this stream, paced by the target's work, that
 * estimate must match the truth, where 1 / (d * p) was 0.36 of it for
 * probes that triple a round, and 1.4 times it for a lag of 40 ms at duty
 * 0.1. (The model weighs by the duty and shows the ratio's weight as the
 * other end of in-use's range: a stream paced by the clock is seen for
 * the share d whatever the work does, test_backoff_inuse.c.)
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "util/sampling.h"
#include "probe/budget.h"
#include "probe/phase_share.h"

#define MS 1000000ULL
#define FEED_NS (250 * MS)
#define ALLOCS_PER_ROUND 4
#define ROUND_NS (1 * MS)
#define ALLOC_SIZE 1024

static __u32 table[MT_EXP_TABLE_SIZE];

struct outcome {
	double truth, est, naive, ratio;
	long samples;
};

struct counts {
	__u64 phased, frees;
};

static void feed(struct phase_share *ps, __u64 t, const struct counts *c, enum slowdown_state st,
		 double d)
{
	phase_share_feed(ps, t, c->phased, c->frees, st, d);
}

static void simulate(double d, double slow, __u64 lag_ns, double secs, __u64 seed, struct outcome *o)
{
	const __u64 rate = 524288, r = (__u64)(rate * d), end = (__u64)(secs * 1e9);
	struct budget b;
	struct sampler sm;
	struct phase_share ps;
	struct counts c = { 0, 0 };
	__u64 t = 0, next = 0, next_feed = FEED_NS, lag_until = 0;
	bool sched_on = true, switching = false;
	int i;

	budget_init(&b, 10, seed);
	b.duty = d;
	sampler_init(&sm, r, table, seed);
	phase_share_init(&ps);
	feed(&ps, t, &c, SLOWDOWN_ON, d);
	memset(o, 0, sizeof(*o));
	while (t < end) {
		bool on = budget_phase(&b, t, &next), probes;

		if (on != sched_on) {
			/* the step before the switch, then the switch itself */
			feed(&ps, t, &c, sched_on ? SLOWDOWN_ON : SLOWDOWN_OFF, d);
			sched_on = on;
			lag_until = on ? 0 : t + lag_ns;
			switching = !on && lag_ns;
		}
		if (switching && t >= lag_until) {
			feed(&ps, t, &c, SLOWDOWN_SWITCHING, d);
			switching = false;
		}
		if (t >= next_feed && !switching) {
			feed(&ps, t, &c, sched_on ? SLOWDOWN_ON : SLOWDOWN_OFF, d);
			next_feed = t + FEED_NS;
		}
		probes = sched_on || t < lag_until;
		for (i = 0; i < ALLOCS_PER_ROUND; i++) {
			o->truth += ALLOC_SIZE;
			if (!probes)
				continue;
			c.phased++;
			if (!sampler_take(&sm, ALLOC_SIZE))
				continue;
			o->samples++;
			o->est += sampling_phase_weight(ALLOC_SIZE, r, d * phase_share_ratio(&ps)) *
				  ALLOC_SIZE;
			o->naive += sampling_phase_weight(ALLOC_SIZE, r, d) * ALLOC_SIZE;
		}
		c.frees += ALLOCS_PER_ROUND;
		t += probes ? (__u64)(ROUND_NS * slow) : ROUND_NS;
	}
	o->ratio = phase_share_ratio(&ps);
	print_message("duty %.2f slow %.1f lag %llu ms: %ld samples, ratio %.3f, estimate %.4f "
		      "of the truth (weighed by the duty alone: %.4f)\n",
		      d, slow, (unsigned long long)(lag_ns / MS), o->samples, o->ratio,
		      o->est / o->truth, o->naive / o->truth);
}

/* A target whose rounds take three times longer while the probes are on:
 * a share d/3 / (d/3 + 1 - d) of its allocations is seen, not d. */
static void test_slowed_target(void **state)
{
	struct outcome o;

	simulate(0.1, 3.0, 0, 2000, 31, &o);
	assert_true(o.naive / o.truth < 0.45); /* the bias this corrects */
	assert_true(fabs(o.est / o.truth - 1) < 0.05);
	assert_true(fabs(o.ratio - (1 / 3.0) / (0.1 / 3.0 + 0.9)) < 0.05 * o.ratio);
	simulate(0.25, 1.5, 0, 1000, 32, &o);
	assert_true(fabs(o.est / o.truth - 1) < 0.05);
}

/* Probes that stay 40 ms after each on-phase: more is seen than d. */
static void test_probes_on_longer(void **state)
{
	struct outcome o;

	simulate(0.1, 1.0, 40 * MS, 2000, 33, &o);
	assert_true(o.naive / o.truth > 1.25);
	assert_true(fabs(o.est / o.truth - 1) < 0.05);
}

/* A target the probes do not slow: the ratio is 1, nothing changes. */
static void test_unaffected_target(void **state)
{
	struct outcome o;

	simulate(0.1, 1.0, 0, 2000, 34, &o);
	assert_true(fabs(o.ratio - 1) < 0.05);
	assert_true(fabs(o.est / o.truth - 1) < 0.05);
	assert_true(fabs(o.naive / o.truth - 1) < 0.05);
}

/* Nothing to go on yet, or no duty cycle: 1. */
static void test_unmeasured_is_one(void **state)
{
	struct phase_share ps;

	phase_share_init(&ps);
	assert_true(phase_share_ratio(&ps) == 1.0);
	phase_share_feed(&ps, 1 * MS, 0, 0, SLOWDOWN_ON, 1.0);
	/* full duty, probe-free start-up phases included: no measure */
	phase_share_feed(&ps, 2000 * MS, 100000, 100000, SLOWDOWN_OFF, 1.0);
	phase_share_feed(&ps, 9000 * MS, 900000, 900000, SLOWDOWN_ON, 1.0);
	assert_true(phase_share_ratio(&ps) == 1.0);
	/* under a second of duty-cycling: not yet */
	phase_share_feed(&ps, 9100 * MS, 900000, 990000, SLOWDOWN_OFF, 0.1);
	assert_true(phase_share_ratio(&ps) == 1.0);
	/* counters that went back (a new process under the pid): kept out */
	phase_share_feed(&ps, 9200 * MS, 5, 5, SLOWDOWN_ON, 0.1);
	assert_true(phase_share_ratio(&ps) == 1.0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_slowed_target),
		cmocka_unit_test(test_probes_on_longer),
		cmocka_unit_test(test_unaffected_target),
		cmocka_unit_test(test_unmeasured_is_one),
	};

	sampling_exp_table(table);
	return cmocka_run_group_tests(tests, NULL, NULL);
}

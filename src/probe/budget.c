// SPDX-License-Identifier: GPL-2.0-only
/*
 * budget.c - the duty-cycle controller behind --max-overhead (budget.h).
 *
 * The allocation probes' cost scales with the duty, so a slowdown s
 * measured at duty d predicts d * limit / s as the duty that meets the
 * limit. Decreases apply at once (the target must not suffer); increases
 * at most double the duty per interval, and only when well under the
 * limit, so the controller does not oscillate around it.
 */
#include "probe/budget.h"

void budget_init(struct budget *b, double limit_pct)
{
	b->limit_pct = limit_pct;
	b->duty = 1.0;
	b->slowdown_pct = 0;
	b->ever_paused = false;
	b->unreachable = false;
	b->period_start_ns = 0;
}

double budget_slowdown_pct(double probe_ns, double cpu_ns)
{
	double f;

	if (cpu_ns <= 0 || probe_ns <= 0)
		return 0;
	f = probe_ns / cpu_ns;
	if (f > 0.99)
		f = 0.99;
	return 100.0 * f / (1.0 - f);
}

double budget_update(struct budget *b, double slowdown_pct)
{
	double want;

	b->slowdown_pct = slowdown_pct;
	if (slowdown_pct > b->limit_pct) {
		want = b->duty * b->limit_pct / slowdown_pct;
	} else if (b->duty < 1.0 && slowdown_pct < 0.7 * b->limit_pct) {
		double floor = slowdown_pct > 0.1 * b->limit_pct ? slowdown_pct : 0.1 * b->limit_pct;

		want = b->duty * b->limit_pct / floor;
		if (want > 2 * b->duty)
			want = 2 * b->duty;
	} else {
		want = b->duty;
	}
	if (want < BUDGET_MIN_DUTY)
		want = BUDGET_MIN_DUTY;
	if (want > 1.0)
		want = 1.0;
	b->unreachable = b->duty <= BUDGET_MIN_DUTY && slowdown_pct > b->limit_pct;
	b->duty = want;
	if (want < 1.0)
		b->ever_paused = true;
	return want;
}

bool budget_phase(struct budget *b, __u64 now_ns, __u64 *next_ns)
{
	__u64 on_ns;

	if (!b->period_start_ns || now_ns >= b->period_start_ns + BUDGET_PERIOD_NS)
		b->period_start_ns = now_ns;
	on_ns = (__u64)(b->duty * BUDGET_PERIOD_NS);
	if (b->duty >= 1.0) {
		*next_ns = b->period_start_ns + BUDGET_PERIOD_NS;
		return true;
	}
	if (now_ns < b->period_start_ns + on_ns) {
		*next_ns = b->period_start_ns + on_ns;
		return true;
	}
	*next_ns = b->period_start_ns + BUDGET_PERIOD_NS;
	return false;
}

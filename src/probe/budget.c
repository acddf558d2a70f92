// SPDX-License-Identifier: GPL-2.0-only
/*
 * budget.c - the duty-cycle controller and the randomised on/off schedule
 * behind --max-overhead (budget.h).
 */
#include "probe/budget.h"

#include <math.h>

/* A duty-cycled measure must span this many mean cycles. */
#define SETTLE_CYCLES 2
/* An on-phase counts at most this much longer than planned (late
 * wakeups, a slow attach), so that a stall of memtop does not make an
 * off-phase that loses minutes of samples. */
#define SWITCH_LATE_NS 500000000ULL
/* At full duty there is no cycle: this much is enough. */
#define SETTLE_FULL_NS 500000000ULL

void budget_init(struct budget *b, double limit_pct, __u64 seed)
{
	b->limit_pct = limit_pct;
	b->duty = 1.0;
	b->slowdown_pct = 0;
	b->floor_pct = 0;
	b->ever_paused = false;
	b->unreachable = false;
	b->changed_ns = 0;
	b->on = true;
	b->phase_start_ns = 0;
	b->off_until_ns = 0;
	b->rng = seed ? seed : 0x9E3779B97F4A7C15ULL;
}

/* Uniform in [0, 1): xorshift64*. */
static double uniform(struct budget *b)
{
	b->rng ^= b->rng >> 12;
	b->rng ^= b->rng << 25;
	b->rng ^= b->rng >> 27;
	return (double)((b->rng * 0x2545F4914F6CDD1DULL) >> 11) / 9007199254740992.0;
}

void budget_started(struct budget *b, __u64 began_ns)
{
	if (b->on)
		b->phase_start_ns = began_ns;
}

__u64 budget_settle_ns(const struct budget *b)
{
	return b->duty >= 1.0 ? SETTLE_FULL_NS : SETTLE_CYCLES * BUDGET_PERIOD_NS;
}

double budget_update(struct budget *b, double slowdown_pct, double floor_pct, __u64 now_ns)
{
	double aim = BUDGET_AIM * b->limit_pct, alloc = slowdown_pct - floor_pct, want;

	b->slowdown_pct = slowdown_pct;
	b->floor_pct = floor_pct;
	if (slowdown_pct > b->limit_pct || (b->duty < 1.0 && slowdown_pct < 0.7 * b->limit_pct)) {
		if (alloc <= 0.01 * b->limit_pct)
			want = floor_pct < aim ? 1.0 : BUDGET_MIN_DUTY;
		else
			want = b->duty * (aim - floor_pct) / alloc;
		if (want > 2 * b->duty)
			want = 2 * b->duty;
	} else {
		want = b->duty;
	}
	if (want < BUDGET_MIN_DUTY)
		want = BUDGET_MIN_DUTY;
	if (want > 1.0)
		want = 1.0;
	b->unreachable = floor_pct >= b->limit_pct ||
			 (want <= BUDGET_MIN_DUTY && slowdown_pct > b->limit_pct);
	if (want != b->duty)
		b->changed_ns = now_ns;
	b->duty = want;
	if (want < 1.0)
		b->ever_paused = true;
	return want;
}

bool budget_phase(struct budget *b, __u64 now_ns, __u64 *next_ns)
{
	__u64 on_ns = (__u64)(b->duty * BUDGET_PERIOD_NS);

	if (b->duty >= 1.0) {
		/* no cycle: a smaller duty starts one from here */
		b->phase_start_ns = now_ns;
		b->on = true;
		*next_ns = now_ns + BUDGET_PERIOD_NS;
		return true;
	}
	if (b->on && now_ns >= b->phase_start_ns + on_ns) {
		/* The on-phase is over (or a smaller duty ended it). The off
		 * phase is scaled to how long it really lasted, so the share of
		 * time on stays d when switches come late. */
		double ran =
			fmin((double)(now_ns - b->phase_start_ns), (double)(on_ns + SWITCH_LATE_NS));

		b->on = false;
		b->phase_start_ns = now_ns;
		b->off_until_ns =
			now_ns + (__u64)(2.0 * uniform(b) * ran * (1.0 - b->duty) / b->duty);
	}
	if (!b->on && now_ns >= b->off_until_ns) {
		b->on = true;
		b->phase_start_ns = now_ns;
	}
	*next_ns = b->on ? b->phase_start_ns + on_ns : b->off_until_ns;
	return b->on;
}

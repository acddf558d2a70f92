// SPDX-License-Identifier: GPL-2.0-only
/*
 * phase_share.c - the share of a target's allocations the duty-cycled
 * probes see, against the duty (phase_share.h has the model).
 */
#include "probe/phase_share.h"

#include <math.h>
#include <string.h>

void phase_share_init(struct phase_share *p)
{
	memset(p, 0, sizeof(*p));
}

void phase_share_feed(struct phase_share *p, __u64 t_ns, __u64 phased_calls, __u64 frees,
		      enum slowdown_state state, double duty)
{
	double dt, calls, fr, decay;

	if (!p->have_last || t_ns <= p->last_t || phased_calls < p->last_calls ||
	    frees < p->last_frees)
		goto keep;
	dt = (double)(t_ns - p->last_t) / 1e9;
	calls = (double)(phased_calls - p->last_calls);
	fr = (double)(frees - p->last_frees);
	decay = exp(-dt / PHASE_SHARE_TAU_S);
	p->on_calls *= decay;
	p->on_frees *= decay;
	p->seen_calls *= decay;
	p->promised_frees *= decay;
	p->cycling_s *= decay;
	/* at full duty every phased call is seen: nothing to measure (and
	 * the start-up's probe-free phases are no part of a schedule) */
	if (duty > 0 && duty < 1) {
		if (state == SLOWDOWN_ON) {
			p->on_calls += calls;
			p->on_frees += fr;
		}
		p->seen_calls += calls;
		p->promised_frees += duty * fr;
		p->cycling_s += dt;
	}
keep:
	p->last_t = t_ns;
	p->last_calls = phased_calls;
	p->last_frees = frees;
	p->have_last = true;
}

double phase_share_ratio(const struct phase_share *p)
{
	double per_free, ratio;

	if (p->cycling_s < PHASE_SHARE_MIN_S || p->on_frees < PHASE_SHARE_MIN_FREES ||
	    p->promised_frees < PHASE_SHARE_MIN_FREES || p->on_calls <= 0)
		return 1.0;
	per_free = p->on_calls / p->on_frees;
	ratio = p->seen_calls / (per_free * p->promised_frees);
	return fmin(fmax(ratio, PHASE_SHARE_MIN), PHASE_SHARE_MAX);
}

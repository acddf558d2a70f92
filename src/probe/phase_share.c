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

/* The cycle under way is whole: into the decayed sums. */
static void close_cycle(struct phase_share *p, __u64 t_ns)
{
	double decay = p->done_t ? exp(-(double)(t_ns - p->done_t) / 1e9 / PHASE_SHARE_TAU_S) : 0;

	p->done.on_calls = p->done.on_calls * decay + p->cur.on_calls;
	p->done.on_frees = p->done.on_frees * decay + p->cur.on_frees;
	p->done.seen_calls = p->done.seen_calls * decay + p->cur.seen_calls;
	p->done.promised_frees = p->done.promised_frees * decay + p->cur.promised_frees;
	p->cycles = p->cycles * decay + 1;
	p->done_t = t_ns;
	memset(&p->cur, 0, sizeof(p->cur));
}

void phase_share_feed(struct phase_share *p, __u64 t_ns, __u64 phased_calls, __u64 frees,
		      enum slowdown_state state, double duty)
{
	double calls, fr;

	if (!p->have_last || t_ns <= p->last_t || phased_calls < p->last_calls ||
	    frees < p->last_frees)
		goto keep;
	calls = (double)(phased_calls - p->last_calls);
	fr = (double)(frees - p->last_frees);
	if (duty <= 0 || duty >= 1) {
		/* at full duty every phased call is seen: nothing to measure
		 * (and the start-up's probe-free phases are no cycle) */
		memset(&p->cur, 0, sizeof(p->cur));
		p->in_cycle = false;
		goto keep;
	}
	/* a step with the probes (coming) on after an off one: a new cycle */
	if (state != SLOWDOWN_OFF && p->last_state == SLOWDOWN_OFF) {
		if (p->in_cycle)
			close_cycle(p, t_ns);
		memset(&p->cur, 0, sizeof(p->cur));
		p->in_cycle = true;
	}
	if (state == SLOWDOWN_ON) {
		p->cur.on_calls += calls;
		p->cur.on_frees += fr;
	}
	p->cur.seen_calls += calls;
	p->cur.promised_frees += duty * fr;
keep:
	p->last_state = state;
	p->last_t = t_ns;
	p->last_calls = phased_calls;
	p->last_frees = frees;
	p->have_last = true;
}

double phase_share_ratio(const struct phase_share *p)
{
	const struct phase_counts *c = &p->done;
	double ratio;

	if (p->cycles < PHASE_SHARE_MIN_CYCLES || c->on_frees < PHASE_SHARE_MIN_FREES ||
	    c->promised_frees < PHASE_SHARE_MIN_FREES || c->on_calls <= 0)
		return 1.0;
	ratio = c->seen_calls / (c->on_calls / c->on_frees * c->promised_frees);
	return fmin(fmax(ratio, PHASE_SHARE_MIN), PHASE_SHARE_MAX);
}

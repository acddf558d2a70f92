// SPDX-License-Identifier: GPL-2.0-only
/*
 * slowdown.c - the probes' cost to one target from its own CPU time
 * (slowdown.h has the model): readings become steps of one probe state,
 * the steps identify the cost of a hit and give windowed slowdowns.
 */
#include "probe/slowdown.h"

#include <errno.h>
#include <math.h>
#include <string.h>

/* Enough of each state before c is trusted. */
#define ID_MIN_FREES 500.0
#define ID_MIN_CPU_NS 30e6
#define ID_MIN_DH 0.05	/* hits per free must differ this much */
#define COST_MIN_NS 100.0   /* below an emulated trap: a bad fit */
#define COST_MAX_NS 50000.0 /* above a single-stepped trap: a bad fit */
#define SLOWDOWN_MAX_PCT 100000.0

enum { ACC_CPU, ACC_HITS, ACC_FREES };

void slowdown_init(struct slowdown *s, double floor_ns, bool usdt)
{
	memset(s, 0, sizeof(*s));
	s->floor_ns = floor_ns > 0 ? floor_ns : 1;
	s->cost_ns = s->floor_ns;
	s->usdt = usdt;
}

double slowdown_pct(double probe_ns, double cpu_ns)
{
	double own;

	if (cpu_ns <= 0 || probe_ns <= 0)
		return 0;
	own = cpu_ns - probe_ns;
	if (own < cpu_ns * 100.0 / (100.0 + SLOWDOWN_MAX_PCT))
		return SLOWDOWN_MAX_PCT;
	return 100.0 * probe_ns / own;
}

/* c from the decayed sums of both states, when both have enough. */
static void identify(struct slowdown *s)
{
	const double *off = s->acc[0], *on = s->acc[1];
	double y_off, y_on, h_off, h_on, c;

	if (s->usdt || off[ACC_FREES] < ID_MIN_FREES || on[ACC_FREES] < ID_MIN_FREES ||
	    off[ACC_CPU] < ID_MIN_CPU_NS || on[ACC_CPU] < ID_MIN_CPU_NS)
		return;
	y_off = off[ACC_CPU] / off[ACC_FREES];
	y_on = on[ACC_CPU] / on[ACC_FREES];
	h_off = off[ACC_HITS] / off[ACC_FREES];
	h_on = on[ACC_HITS] / on[ACC_FREES];
	if (h_on - h_off < ID_MIN_DH)
		return;
	c = (y_on - y_off) / (h_on - h_off);
	/* the calibration on memtop is no bound: it runs on a hot cache, and
	 * on a loaded machine it can come out above the cost in the target */
	if (c < COST_MIN_NS)
		c = COST_MIN_NS;
	if (c > COST_MAX_NS)
		c = COST_MAX_NS;
	s->cost_ns = c;
	s->identified = true;
}

void slowdown_feed(struct slowdown *s, __u64 t_ns, __u64 cpu_ns, __u64 hits, __u64 frees,
		   bool allocs_on)
{
	struct slowdown_step *st;
	double decay;
	int k, i;

	if (!s->have_last || t_ns <= s->last_t || cpu_ns < s->last_cpu || hits < s->last_hits ||
	    frees < s->last_frees)
		goto keep;
	st = &s->step[s->head];
	s->head = (s->head + 1) % SLOWDOWN_STEPS;
	if (s->nstep < SLOWDOWN_STEPS)
		s->nstep++;
	st->t_ns = t_ns;
	st->dt_ns = t_ns - s->last_t;
	st->cpu_ns = (double)(cpu_ns - s->last_cpu);
	st->hits = (double)(hits - s->last_hits);
	st->frees = (double)(frees - s->last_frees);
	st->on = allocs_on;

	decay = exp(-(double)st->dt_ns / 1e9 / SLOWDOWN_TAU_S);
	for (k = 0; k < 2; k++)
		for (i = 0; i < 3; i++)
			s->acc[k][i] *= decay;
	k = allocs_on ? 1 : 0;
	s->acc[k][ACC_CPU] += st->cpu_ns;
	s->acc[k][ACC_HITS] += st->hits;
	s->acc[k][ACC_FREES] += st->frees;
	identify(s);
keep:
	s->last_t = t_ns;
	s->last_cpu = cpu_ns;
	s->last_hits = hits;
	s->last_frees = frees;
	s->have_last = true;
}

double slowdown_cost_ns(const struct slowdown *s, bool *identified)
{
	if (identified)
		*identified = s->identified;
	return s->cost_ns;
}

int slowdown_window(const struct slowdown *s, __u64 since_ns, __u64 max_ns,
		    struct slowdown_est *out)
{
	double cpu = 0, hits = 0, frees = 0, on_ns = 0, h_off, own;
	__u64 span = 0, end = 0;
	int i;

	memset(out, 0, sizeof(*out));
	for (i = 1; i <= s->nstep; i++) {
		const struct slowdown_step *st =
			&s->step[(s->head - i + SLOWDOWN_STEPS) % SLOWDOWN_STEPS];

		if (!end)
			end = st->t_ns;
		if (st->t_ns <= since_ns || st->t_ns - st->dt_ns < since_ns ||
		    (span && end - (st->t_ns - st->dt_ns) > max_ns))
			break;
		span = end - (st->t_ns - st->dt_ns);
		cpu += st->cpu_ns;
		hits += st->hits;
		frees += st->frees;
		if (st->on)
			on_ns += (double)st->dt_ns;
	}
	out->span_ns = span;
	out->cpu_ns = cpu;
	if (cpu <= 0)
		return -EAGAIN;
	out->on_share = span ? on_ns / (double)span : 1;
	out->slowdown_pct = slowdown_pct(s->cost_ns * hits, cpu);
	/* the probes that stay on: hits per free as measured with the
	 * allocation probes off, one per free until then */
	h_off = s->acc[0][ACC_FREES] > 0 ? s->acc[0][ACC_HITS] / s->acc[0][ACC_FREES] : 1;
	own = cpu - s->cost_ns * hits;
	if (s->usdt)
		out->floor_pct = 0;
	else if (own > 0)
		out->floor_pct = 100.0 * s->cost_ns * fmin(frees * h_off, hits) / own;
	else
		out->floor_pct = out->slowdown_pct;
	if (out->floor_pct > out->slowdown_pct)
		out->floor_pct = out->slowdown_pct;
	return 0;
}

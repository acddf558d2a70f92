// SPDX-License-Identifier: GPL-2.0-only
/*
 * slowdown.c - the probes' cost to one target from its own CPU time
 * (slowdown.h has the model): readings become steps of one probe state,
 * adjacent steps of different states identify the cost of a hit, what a
 * free() hit costs against it and the target's own CPU per free, and
 * those give windowed slowdowns.
 */
#include "probe/slowdown.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Enough in each step of a pair, and pairs, before c is trusted. */
#define PAIR_MIN_FREES 200.0
#define PAIR_MIN_CPU_NS 5e6
#define PAIR_MIN 3
#define ID_MIN_DH 0.3 /* hits per free must differ this much */
/* The longest a light target's stretches are summed for one pair: a
 * load that drifts in that time weighs on the on and off steps alike,
 * which alternate through it */
#define STRETCH_MAX_NS 10000000000ULL
#define COST_MIN_NS 100.0   /* below an emulated trap: a bad fit */
#define COST_MAX_NS 50000.0 /* above a single-stepped trap: a bad fit */
#define SLOWDOWN_MAX_PCT 100000.0
/* How far the cost of a hit moves from the identified c in a window:
 * the load moved it 2.4x on this VM (1.3-3.1 us, slowdown.h) */
#define COST_SPAN 4.0
/* Bounds of a free()-hit cost ratio believed (measured: 0.95) */
#define RATIO_MIN 0.25
#define RATIO_MAX 4.0
/* The range a window's slowdown is known to: this many standard errors
 * of k either side (few pairs: their spread is itself uncertain; with 2
 * the range missed the truth in 6 of 21 simulated heavy attaches, with
 * 3 in 2, test_range_covers_truth) */
#define RANGE_SIGMAS 3.0
/* What the spread of the pairs cannot show: a cost of a hit that differs
 * between the states by this much (measured: within 5% in five of six
 * runs on a loaded VM, probes.md 6.2) is an error of that times c / k in
 * k, the same in every pair. On the heavy row at a load of 14 the pairs
 * agreed within 6% on a k twice the truth (2,274% against 5,261%). */
#define COST_BIAS 0.05
/* How far a free()-hit cost ratio taken as 1 (no free()-off step: a
 * process idle at the start-up) may be from the truth: measured 0.95 on
 * glibc's free() (tests/bench/phases.py) and 1.107 on jemalloc's in
 * redis-server (probes.md 6.2). r * c * H_off of every pair's k is off
 * by this times c * H_off. */
#define RATIO_UNMEASURED_SPAN 0.15

enum { ACC_CPU, ACC_HITS, ACC_FREES };

static int cmp_double(const void *a, const void *b);

void slowdown_init(struct slowdown *s, double floor_ns, bool usdt)
{
	memset(s, 0, sizeof(*s));
	s->floor_ns = floor_ns > 0 ? floor_ns : 1;
	s->cost_ns = s->floor_ns;
	s->free_ratio = 1;
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

static bool pairable(enum slowdown_state st)
{
	return st == SLOWDOWN_OFF || st == SLOWDOWN_ON;
}

static bool enough(const struct slowdown_step *st)
{
	return st->frees >= PAIR_MIN_FREES && st->cpu_ns >= PAIR_MIN_CPU_NS;
}

/* Y: CPU per free, without what samples cost beyond their hits */
static double cpu_per_free(const struct slowdown_step *st)
{
	return (st->cpu_ns - st->sample_ns) / st->frees;
}

/* One estimate of c from two adjacent steps of different states, with
 * the Y and H of the off one: local in time, so a load that drifts
 * weighs on both alike. */
static bool pair_cost(const struct slowdown_step *a, const struct slowdown_step *b, double *c,
		      double *y_off, double *h_off)
{
	const struct slowdown_step *on = a->state == SLOWDOWN_ON ? a : b;
	const struct slowdown_step *off = a->state == SLOWDOWN_ON ? b : a;
	double dh;

	if (!enough(on) || !enough(off))
		return false;
	dh = on->hits / on->frees - off->hits / off->frees;
	if (dh < ID_MIN_DH)
		return false;
	*c = (cpu_per_free(on) - cpu_per_free(off)) / dh;
	if (*c < COST_MIN_NS)
		*c = COST_MIN_NS;
	if (*c > COST_MAX_NS)
		*c = COST_MAX_NS;
	*y_off = cpu_per_free(off);
	*h_off = off->hits / off->frees;
	return true;
}

static double median(const double *v, int n)
{
	double w[SLOWDOWN_PAIRS];

	memcpy(w, v, (size_t)n * sizeof(w[0]));
	qsort(w, (size_t)n, sizeof(w[0]), cmp_double);
	return n % 2 ? w[n / 2] : (w[n / 2 - 1] + w[n / 2]) / 2;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The step i places before the newest (0: the newest). */
static const struct slowdown_step *step_back(const struct slowdown *s, int i)
{
	return i < s->nstep ? &s->step[(s->head - 1 - i + 2 * SLOWDOWN_STEPS) % SLOWDOWN_STEPS]
			    : NULL;
}

/* k of every pair at the free()-hit cost ratio of now, and the medians
 * of c and k once there are PAIR_MIN pairs. */
static void settle(struct slowdown *s)
{
	int i;

	s->free_ratio = s->nratio ? median(s->ratio, s->nratio) : 1;
	for (i = 0; i < s->npair; i++)
		s->pair_own[i] = s->pair_y[i] - s->free_ratio * s->pair[i] * s->pair_h[i];
	if (s->npair < PAIR_MIN)
		return;
	s->cost_ns = median(s->pair, s->npair);
	s->own_ns = median(s->pair_own, s->npair);
	s->identified = true;
}

static void push(double *v, int *n, int *head, double x)
{
	v[*head] = x;
	*head = (*head + 1) % SLOWDOWN_PAIRS;
	if (*n < SLOWDOWN_PAIRS)
		(*n)++;
}

/* A step with free() off: the target's own work counted by its
 * allocation calls, so k directly, and from it what a free() hit costs
 * against an allocation hit, with the newest step with allocations off. */
static void ratio_from(struct slowdown *s, const struct slowdown_step *st)
{
	double c, k, r;

	if (!s->npair || !s->have_off || !enough(st) || s->off_h <= 0)
		return;
	c = median(s->pair, s->npair);
	k = cpu_per_free(st) - c * st->hits / st->frees;
	r = (s->off_y - k) / (c * s->off_h);
	push(s->ratio, &s->nratio, &s->ratio_head, fmin(fmax(r, RATIO_MIN), RATIO_MAX));
	settle(s);
}

static void stretch_reset(struct slowdown *s)
{
	memset(s->stretch, 0, sizeof(s->stretch));
	s->stretch_since_ns = 0;
}

static void add_pair(struct slowdown *s, double c, double y, double h)
{
	s->pair_y[s->pair_head] = y;
	s->pair_h[s->pair_head] = h;
	push(s->pair, &s->npair, &s->pair_head, c);
	settle(s);
	stretch_reset(s); /* no step in two pairs */
}

/* st, a pairable step that made no pair with its neighbour, into the
 * stretch of its state; the two stretches a pair once both hold enough. */
static void stretch_add(struct slowdown *s, const struct slowdown_step *st)
{
	struct slowdown_step *sum;
	double c, y, h;

	if (s->stretch_since_ns && st->t_ns - s->stretch_since_ns > STRETCH_MAX_NS)
		stretch_reset(s);
	if (!s->stretch_since_ns)
		s->stretch_since_ns = st->t_ns - st->dt_ns;
	sum = &s->stretch[st->state == SLOWDOWN_ON];
	sum->cpu_ns += st->cpu_ns;
	sum->hits += st->hits;
	sum->frees += st->frees;
	sum->sample_ns += st->sample_ns;
	/* pair_cost takes the first for the off one unless its state is
	 * SLOWDOWN_ON, which stretch[0]'s never is */
	if (pair_cost(&s->stretch[0], &s->stretch[1], &c, &y, &h))
		add_pair(s, c, y, h);
}

/* c and k: the medians of the recent pair estimates (robust to a load
 * spike in one step), once there are PAIR_MIN of them. A pair is the
 * newest step and the one before it, or before the switch between them;
 * for a light target, the sums of its steps of each state over a few
 * cycles (stretch_add). */
static void identify(struct slowdown *s)
{
	const struct slowdown_step *st = step_back(s, 0), *prev = step_back(s, 1);
	double c, y, h;

	if (s->usdt)
		return;
	if (st->state == SLOWDOWN_ON && enough(st) && st->allocs > 0)
		s->allocs_per_free = st->allocs / st->frees;
	if (st->state == SLOWDOWN_OFF && enough(st)) {
		s->off_y = cpu_per_free(st);
		s->off_h = st->hits / st->frees;
		s->have_off = true;
	}
	if (st->state == SLOWDOWN_FREES_OFF) {
		ratio_from(s, st);
		return;
	}
	if (!pairable(st->state))
		return;
	if (prev && prev->state == SLOWDOWN_SWITCHING)
		prev = step_back(s, 2);
	if (prev && pairable(prev->state) && prev->state != st->state &&
	    pair_cost(prev, st, &c, &y, &h))
		add_pair(s, c, y, h);
	else
		stretch_add(s, st);
}

void slowdown_feed(struct slowdown *s, __u64 t_ns, const struct slowdown_reading *r,
		   enum slowdown_state state)
{
	const struct slowdown_reading *l = &s->last;
	struct slowdown_step *st;
	double decay;
	int k, i;

	if (!s->have_last || t_ns <= s->last_t || r->cpu_ns < l->cpu_ns || r->hits < l->hits ||
	    r->frees < l->frees || r->allocs < l->allocs || r->sample_ns < l->sample_ns ||
	    r->self_ns < l->self_ns)
		goto keep;
	st = &s->step[s->head];
	s->head = (s->head + 1) % SLOWDOWN_STEPS;
	if (s->nstep < SLOWDOWN_STEPS)
		s->nstep++;
	st->t_ns = t_ns;
	st->dt_ns = t_ns - s->last_t;
	st->cpu_ns = (double)(r->cpu_ns - l->cpu_ns);
	st->hits = (double)(r->hits - l->hits);
	st->frees = (double)(r->frees - l->frees);
	st->allocs = (double)(r->allocs - l->allocs);
	/* timed on another clock: never more than the step's CPU */
	st->sample_ns = fmin((double)(r->sample_ns - l->sample_ns), st->cpu_ns);
	st->self_ns = fmin((double)(r->self_ns - l->self_ns), st->cpu_ns);
	st->state = state;
	if (state == SLOWDOWN_FREES_OFF)
		/* no free() counted: the work its allocation calls stand for */
		st->frees = s->allocs_per_free > 0 ? st->allocs / s->allocs_per_free : 0;

	decay = exp(-(double)st->dt_ns / 1e9 / SLOWDOWN_TAU_S);
	for (k = 0; k < 2; k++)
		for (i = 0; i < 3; i++)
			s->acc[k][i] *= decay;
	if (pairable(state)) {
		k = state == SLOWDOWN_ON ? 1 : 0;
		s->acc[k][ACC_CPU] += st->cpu_ns;
		s->acc[k][ACC_HITS] += st->hits;
		s->acc[k][ACC_FREES] += st->frees;
	}
	identify(s);
keep:
	s->last_t = t_ns;
	s->last = *r;
	s->have_last = true;
}

double slowdown_own_uncertainty(const struct slowdown *s)
{
	double dev[SLOWDOWN_PAIRS], k;
	int i;

	if (s->usdt || !s->npair)
		return 0;
	if (s->npair < PAIR_MIN || s->own_ns <= 0)
		return INFINITY;
	k = median(s->pair_own, s->npair);
	for (i = 0; i < s->npair; i++)
		dev[i] = fabs(s->pair_own[i] - k);
	/* consecutive pairs share a step (off-on, on-off, ...): about half
	 * as many independent ones as pairs */
	return 1.253 * 1.4826 * median(dev, s->npair) / sqrt((s->npair + 1) / 2.0) / k;
}

double slowdown_cost_ns(const struct slowdown *s, bool *identified)
{
	if (identified)
		*identified = s->identified;
	return s->cost_ns;
}

/* Whether the window's figure is measured, and the range k's
 * uncertainty leaves it: 1 + S = cpu / (k f), so k within (1 +- n e) puts
 * 1 + S within (1 + S) / (1 -+ n e). Besides the pairs' spread, e holds
 * what they share: the error of c (COST_BIAS), and while no free()-off
 * step measured it, that of r (RATIO_UNMEASURED_SPAN). */
static void slowdown_range(const struct slowdown *s, struct slowdown_est *out, double frees)
{
	double e, one = 1 + out->slowdown_pct / 100;
	double r_err = s->nratio ? 0 : RATIO_UNMEASURED_SPAN * (s->have_off ? s->off_h : 1);

	out->low_pct = out->high_pct = out->slowdown_pct;
	out->measured = s->usdt || (s->identified && s->own_ns > 0 && frees > 0);
	if (s->usdt || !out->measured)
		return;
	e = hypot(hypot(RANGE_SIGMAS * slowdown_own_uncertainty(s),
			COST_BIAS * s->free_ratio * s->cost_ns / s->own_ns),
		  r_err * s->cost_ns / s->own_ns);
	out->low_pct = fmax(0, 100 * (one / (1 + e) - 1));
	out->high_pct = e < 1 ? fmin(100 * (one / (1 - e) - 1), SLOWDOWN_MAX_PCT) : INFINITY;
	if (out->high_pct < out->slowdown_pct)
		out->high_pct = out->slowdown_pct;
	if (out->low_pct > out->slowdown_pct)
		out->low_pct = out->slowdown_pct;
}

int slowdown_window(const struct slowdown *s, __u64 since_ns, __u64 max_ns, struct slowdown_est *out)
{
	double cpu = 0, hits = 0, frees = 0, on_ns = 0, h_off, own, self = 0;
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
		self += st->sample_ns + st->self_ns;
		if (st->state == SLOWDOWN_ON)
			on_ns += (double)st->dt_ns;
	}
	out->span_ns = span;
	out->cpu_ns = cpu;
	if (cpu <= 0)
		return -EAGAIN;
	out->on_share = span ? on_ns / (double)span : 1;
	if (s->identified && s->own_ns > 0 && frees > 0) {
		/* the target's own work: k per free */
		own = s->own_ns * frees;
		out->slowdown_pct = own >= cpu ? 0 : slowdown_pct(cpu - own, cpu);
		/* k is its CPU per free while it worked as it did in the pairs;
		 * a window of other work has another (an idle server's few
		 * frees come with timers and polls: 77,645% was read on an idle
		 * redis), and cpu / (k * frees) would call all of it probes.
		 * No window's probes cost more than COST_SPAN times c a hit. */
		out->slowdown_pct = fmin(out->slowdown_pct,
					 slowdown_pct(fmin(COST_SPAN * s->cost_ns * hits, cpu), cpu));
	} else if (s->usdt) {
		/* everything it spends on being watched is counted (slowdown.h) */
		own = cpu - fmin(s->cost_ns * hits + self, cpu);
		out->slowdown_pct = slowdown_pct(fmin(s->cost_ns * hits + self, cpu), cpu);
	} else {
		own = cpu - s->cost_ns * hits;
		out->slowdown_pct = slowdown_pct(s->cost_ns * hits, cpu);
	}
	/* the probes that stay on: hits per free as measured with the
	 * allocation probes off, one per free until then */
	h_off = s->acc[0][ACC_FREES] > 0 ? s->acc[0][ACC_HITS] / s->acc[0][ACC_FREES] : 1;
	if (s->usdt)
		out->floor_pct = 0;
	else if (s->identified && s->own_ns > 0 && frees > 0) {
		/* the stay-on probes' share of what the hits cost, a free()
		 * hit r times an allocation hit */
		double stay = fmin(frees * h_off, hits), weighed = s->free_ratio * stay + hits - stay;

		out->floor_pct = weighed > 0 ? out->slowdown_pct * s->free_ratio * stay / weighed : 0;
	} else if (own > 0)
		out->floor_pct = 100.0 * s->cost_ns * fmin(frees * h_off, hits) / own;
	else
		out->floor_pct = out->slowdown_pct;
	if (out->floor_pct > out->slowdown_pct)
		out->floor_pct = out->slowdown_pct;
	slowdown_range(s, out, frees);
	return 0;
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * stats.c - the arithmetic behind "leak or working set?". Owns the bounded
 * multi-resolution histories, least-squares fits, the leak-suspicion score
 * with its reasons, the target heap-versus-RSS comparison and the
 * inline-capacity advice. Pure: no I/O, no clock, no allocation, no globals;
 * every input arrives as an argument. The score's terms, thresholds and
 * reasons are explained in docs/leak-score.md; keep the two in step.
 */
#include "model/stats.h"
#include "util/sampling.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* ==== History ========================================================= */

void history_init(struct mt_history *h)
{
	memset(h, 0, sizeof(*h));
}

static int level_index(const struct mt_history_level *l, int i)
{
	/* i-th valid point, oldest first */
	return (l->head - l->count + i + MT_HIST_POINTS) % MT_HIST_POINTS;
}

static void level_put(struct mt_history_level *l, double t, double v)
{
	l->t[l->head] = t;
	l->v[l->head] = v;
	l->head = (l->head + 1) % MT_HIST_POINTS;
	if (l->count < MT_HIST_POINTS)
		l->count++;
}

void history_push(struct mt_history *h, double t, double v)
{
	const struct mt_history_level *l0 = &h->level[0];
	int k;

	if (!isfinite(t) || !isfinite(v))
		return;
	if (l0->count && t < l0->t[level_index(l0, l0->count - 1)])
		return;
	level_put(&h->level[0], t, v);
	for (k = 1; k < MT_HIST_LEVELS; k++) {
		struct mt_history_level *l = &h->level[k];

		l->acc_t += t;
		l->acc_v += v;
		if (++l->acc_n < MT_HIST_FACTOR)
			break;
		t = l->acc_t / l->acc_n;
		v = l->acc_v / l->acc_n;
		l->acc_t = l->acc_v = 0;
		l->acc_n = 0;
		level_put(l, t, v);
	}
}

static const struct mt_history_level *history_level_for(const struct mt_history *h, double since)
{
	const struct mt_history_level *best = NULL;
	double best_oldest = INFINITY;
	int k;

	for (k = 0; k < MT_HIST_LEVELS; k++) {
		const struct mt_history_level *l = &h->level[k];
		double oldest;

		if (!l->count)
			continue;
		oldest = l->t[level_index(l, 0)];
		if (oldest <= since)
			return l;
		if (oldest < best_oldest) {
			best_oldest = oldest;
			best = l;
		}
	}
	return best;
}

/* Mean of the points pushed since level k's newest point was made: the
 * sums accumulating in levels 1..k, each weighted by how many level-0
 * points one of its summands stands for. false when there are none. */
static bool history_pending(const struct mt_history *h, int k, double *t, double *v)
{
	double st = 0, sv = 0, n = 0, w = 1;
	int j;

	for (j = 1; j <= k; j++, w *= MT_HIST_FACTOR) {
		st += w * h->level[j].acc_t;
		sv += w * h->level[j].acc_v;
		n += w * h->level[j].acc_n;
	}
	if (n <= 0)
		return false;
	*t = st / n;
	*v = sv / n;
	return true;
}

int history_window(const struct mt_history *h, double since, double *t, double *v, int max)
{
	const struct mt_history_level *l;
	double pt = 0, pv = 0;
	int first, n = 0, i;
	bool partial;

	if (max <= 0)
		return 0;
	l = history_level_for(h, since);
	if (!l)
		return 0;
	partial = history_pending(h, (int)(l - h->level), &pt, &pv) && pt >= since;
	for (first = l->count; first > 0; first--)
		if (l->t[level_index(l, first - 1)] < since)
			break;
	/* keep the most recent max points, the partial one included */
	if (l->count - first + partial > max)
		first = l->count + partial - max;
	for (i = first; i < l->count; i++) {
		t[n] = l->t[level_index(l, i)];
		v[n] = l->v[level_index(l, i)];
		n++;
	}
	if (partial && n < max) {
		t[n] = pt;
		v[n] = pv;
		n++;
	}
	return n;
}

double history_last(const struct mt_history *h)
{
	const struct mt_history_level *l = &h->level[0];

	return l->count ? l->v[level_index(l, l->count - 1)] : 0;
}

static bool level_same_points(const struct mt_history_level *a, const struct mt_history_level *b)
{
	int i;

	if (a->head != b->head || a->count != b->count || a->acc_n != b->acc_n)
		return false;
	for (i = 0; i < a->count; i++)
		if (a->t[level_index(a, i)] != b->t[level_index(b, i)])
			return false;
	return true;
}

int history_add(struct mt_history *dst, const struct mt_history *src)
{
	int k, i;

	for (k = 0; k < MT_HIST_LEVELS; k++)
		if (!level_same_points(&dst->level[k], &src->level[k]))
			return -EINVAL;
	for (k = 0; k < MT_HIST_LEVELS; k++) {
		struct mt_history_level *d = &dst->level[k];
		const struct mt_history_level *l = &src->level[k];

		for (i = 0; i < l->count; i++)
			d->v[level_index(d, i)] += l->v[level_index(l, i)];
		d->acc_v += l->acc_v;
	}
	return 0;
}

void history_truncate(struct mt_history *h, double t)
{
	int k;

	for (k = 0; k < MT_HIST_LEVELS; k++) {
		struct mt_history_level *l = &h->level[k];
		int dropped = 0;

		while (l->count && l->t[level_index(l, l->count - 1)] > t) {
			l->head = (l->head - 1 + MT_HIST_POINTS) % MT_HIST_POINTS;
			l->count--;
			dropped++;
		}
		if (dropped || (k && l->acc_n && l->acc_t / l->acc_n > t)) {
			l->acc_t = l->acc_v = 0;
			l->acc_n = 0;
		}
	}
}

double history_mean(const struct mt_history *h, double now, double window, double *span)
{
	double t[MT_HIST_POINTS + 1], v[MT_HIST_POINTS + 1], sum = 0, covered = 0;
	int n = history_window(h, now - window, t, v, MT_HIST_POINTS + 1), i;

	/* each point stands for the interval since the one before it */
	for (i = 1; i < n; i++) {
		double dt = t[i] - t[i - 1];

		if (dt > 0) {
			sum += v[i] * dt;
			covered += dt;
		}
	}
	*span = covered;
	return covered > 0 ? sum / covered : 0;
}

double history_last_t(const struct mt_history *h)
{
	const struct mt_history_level *l = &h->level[0];

	return l->count ? l->t[level_index(l, l->count - 1)] : -1;
}

/* ==== Least squares ==================================================== */

void stats_fit(const double *t, const double *v, int n, struct mt_fit *out)
{
	double tm = 0, vm = 0, sxx = 0, sxy = 0, syy = 0;
	int i;

	memset(out, 0, sizeof(*out));
	if (n < 3)
		return;
	/* centre on the first t: monotonic seconds can be large */
	for (i = 0; i < n; i++) {
		tm += t[i] - t[0];
		vm += v[i];
	}
	tm /= n;
	vm /= n;
	for (i = 0; i < n; i++) {
		double dt = t[i] - t[0] - tm, dv = v[i] - vm;

		sxx += dt * dt;
		sxy += dt * dv;
		syy += dv * dv;
	}
	out->n = n;
	out->span_s = t[n - 1] - t[0];
	/* relative guard: rounding noise of a constant series is not variance */
	if (sxx <= 0 || syy <= 1e-18 * n * (vm * vm + 1)) {
		out->intercept = vm;
		return;
	}
	out->slope = sxy / sxx;
	out->intercept = vm - out->slope * (tm + t[0]);
	out->r2 = sxy * sxy / (sxx * syy);
	if (out->r2 > 1)
		out->r2 = 1;
}

/* ==== Formatting for reasons =========================================== */

static void fmt_bytes(char *buf, size_t len, double b)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double a = fabs(b);
	int u = 0;

	if (a < 0.5)
		a = b = 0; /* no "-0 B" */

	while (a >= 1024 && u < 4) {
		a /= 1024;
		b /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(buf, len, "%.0f %s", b, unit[u]);
	else
		snprintf(buf, len, "%.*f %s", a < 10 ? 1 : 0, b, unit[u]);
}

static void fmt_duration(char *buf, size_t len, double s)
{
	unsigned int x = 0;

	if (s >= 359999999)
		x = 359999999; /* 99999h59m */
	else if (s > 0)
		x = (unsigned int)lround(s);
	if (x < 60)
		snprintf(buf, len, "%us", x % 60);
	else if (x < 3600)
		snprintf(buf, len, "%um%02us", x / 60 % 60, x % 60);
	else
		snprintf(buf, len, "%uh%02um", x / 3600 % 100000, x % 3600 / 60);
}

/* ==== Leak score ======================================================= */

/*
 * Tunables, each explained in docs/leak-score.md.
 *
 * Horizons: the long window is tried at each horizon; longer ones let a slow
 * leak collect enough samples, and are used once the site has been watched
 * for half of the horizon.
 */
static const double horizons_s[] = { 60, 600, 3600 };
#define N_HORIZONS (int)(sizeof(horizons_s) / sizeof(horizons_s[0]))
#define GROWTH_LO 4.0  /* net growth in samples: below, no evidence */
#define GROWTH_HI 12.0 /* at and above, full evidence */
#define FIT_LO 0.50    /* R^2 of the long window */
#define FIT_HI 0.85
#define PERSIST_SAMPLES 32 /* short window: time to expect this many new samples */
#define SHORT_MIN_S 10.0   /* ... but at least this long */
#define PERSIST_LO 0.15    /* short slope / long slope */
#define PERSIST_HI 0.45
#define ZL_LO 3.0 /* long-window growth / its noise (z) */
#define ZL_HI 5.0
#define ZS_LO 0.75 /* short-window growth / its noise (z) */
#define ZS_HI 2.0
#define BASE_MIN_S 70.0  /* history wobble: measured once watched this long, */
#define BASE_MAX_S 600.0 /* over at most this much history */
#define WOBBLE_LO 2.0    /* growth / wobble */
#define WOBBLE_HI 4.0
#define PLATEAU_RATIO 0.30 /* below: plateau, when the long window grew */
#define AGE_CUT_DIV 3.0    /* live bytes older than a third of the window */
#define AGE_LO 0.20
#define AGE_HI 0.60
#define CONF_SAMPLES 20.0 /* confidence: samples seen */
#define CONF_SPAN_S 10.0  /* confidence: seconds watched */
#define BASE_WEIGHT 0.60  /* growth alone caps the score at 60 */
#define MAX_WINDOW (MT_HIST_POINTS + 1)

/* 0 at or below lo, 1 at or above hi, linear between. */
static double ramp(double x, double lo, double hi)
{
	if (!(x > lo))
		return 0;
	if (x >= hi)
		return 1;
	return (x - lo) / (hi - lo);
}

static double clamp01(double x)
{
	return x < 0 ? 0 : x > 1 ? 1 : x;
}

/* The noise of an in-use series around its trend, in samples: an
 * estimate moves in steps of +-quantum, so it is a random walk (samples
 * arriving and leaving between ticks, walk per second of variance
 * `walk`) plus white noise at each tick (blocks alive at one tick and gone
 * by the next, variance `white`). A steady leak of lambda samples/s has
 * walk = lambda; a cache replacing entries adds a step down for each step
 * up. Separated the usual way: increments d of the detrended series have
 * Var(d) = walk*dt + 2*white and lag-one covariance -white. */
struct noise {
	double walk;  /* samples^2 per second */
	double white; /* samples^2 */
	double resid; /* standard deviation of the points around the fit, samples */
};

/* Fit the last len seconds of h into f and measure its noise into nz
 * (zero without quantum or points). A window that holds fewer than the
 * three points a fit needs (ticks further apart than it: a stalled loop, a
 * long interval) takes the last three, none older than oldest. */
static void fit_window(const struct mt_history *h, double now, double len, double oldest,
		       double quantum, struct mt_fit *f, struct noise *nz)
{
	double t[MAX_WINDOW], v[MAX_WINDOW], ss = 0, sc = 0, prev = 0;
	int n = history_window(h, now - len, t, v, MAX_WINDOW), i;

	if (n < 3)
		n = history_window(h, oldest, t, v, 3);

	stats_fit(t, v, n, f);
	nz->walk = nz->white = nz->resid = 0;
	if (!f->n || quantum <= 0 || f->span_s <= 0)
		return;
	for (i = 0; i < n; i++) {
		double r = (v[i] - f->slope * t[i] - f->intercept) / quantum;

		nz->resid += r * r;
	}
	nz->resid = sqrt(nz->resid / (n - 2));
	for (i = 1; i < n; i++) {
		double d = (v[i] - v[i - 1] - f->slope * (t[i] - t[i - 1])) / quantum;

		ss += d * d;
		if (i > 1)
			sc += d * prev;
		prev = d;
	}
	nz->walk = fmax(0, ss + 2 * fmin(sc, 0)) / f->span_s;
	nz->white = n > 2 ? fmax(0, -sc / (n - 2)) : 0;
}

/* Fraction of live bytes at least age seconds old, spreading each bucket's
 * bytes evenly over its age range. */
static double live_fraction_older(const double by_age[MT_AGE_BUCKETS], double age)
{
	double total = 0, older = 0;
	int i;

	for (i = 0; i < MT_AGE_BUCKETS; i++) {
		double lo = i ? ldexp(1, i) : 0, hi = ldexp(1, i + 1);
		double b = by_age[i] > 0 ? by_age[i] : 0;

		total += b;
		if (age <= lo)
			older += b;
		else if (age < hi)
			older += b * (hi - age) / (hi - lo);
	}
	return total > 0 ? older / total : 0;
}

/* A gain of `gain` samples over w seconds in standard deviations of the
 * noise's net change over w (walk * w + 2 * white). Infinite for growth
 * without any noise. */
static double noise_z(double gain, const struct noise *nz, double w)
{
	double var = nz->walk * w + 2 * nz->white;

	if (var > 0)
		return gain / sqrt(var);
	return gain > 0 ? INFINITY : 0;
}

/* One horizon's evidence: long fit, short fit, and the factors they give. */
struct horizon_eval {
	double horizon, short_len;
	struct mt_fit lf, sf;
	struct noise nz; /* of the long window */
	double z_long;   /* the long window's growth in units of that noise */
	double z_short;  /* the short window's */
	double growth, fit, persist;
};

/* The site's own wobble: the spread of in-use around its trend over up to
 * BASE_MAX_S, in samples, once the site has been watched BASE_MIN_S; 0
 * before. A cache's population wobbles, and a minute of the wobble going
 * up looks like a slow leak; a leak's history hugs its line. */
static double history_wobble(const struct mt_site_stats *s, double now, double span, double quantum)
{
	struct mt_fit f;
	struct noise nz;

	if (span < BASE_MIN_S)
		return 0;
	fit_window(&s->inuse, now, fmin(span, BASE_MAX_S), s->first_s, quantum, &f, &nz);
	return nz.resid;
}

static void horizon_evaluate(const struct mt_site_stats *s, double now, double span, double quantum,
			     double wobble, double horizon, struct horizon_eval *e)
{
	double len = span < horizon ? span : horizon, gained;
	struct noise short_nz; /* unused: the short window is judged by the long one's noise */

	memset(e, 0, sizeof(*e));
	e->horizon = horizon;
	fit_window(&s->inuse, now, len, s->first_s, quantum, &e->lf, &e->nz);
	/* the short window lasts long enough to expect PERSIST_SAMPLES new
	 * samples at the long-window pace: a leak that stopped shows within
	 * it, a slow one is not judged on a few seconds of silence */
	e->short_len = horizon / 4;
	if (e->lf.slope > 0 && quantum > 0)
		e->short_len = fmin(e->short_len, PERSIST_SAMPLES * quantum / e->lf.slope);
	e->short_len = fmax(e->short_len, SHORT_MIN_S);
	fit_window(&s->inuse, now, e->short_len, s->first_s, quantum, &e->sf, &short_nz);
	if (e->lf.n == 0 || e->lf.slope <= 0 || quantum <= 0)
		return;
	gained = e->lf.slope * e->lf.span_s / quantum;
	e->z_long = noise_z(gained, &e->nz, e->lf.span_s);
	e->z_short = noise_z(e->sf.slope * e->sf.span_s / quantum, &e->nz, e->sf.span_s);
	e->growth = ramp(gained, GROWTH_LO, GROWTH_HI) * ramp(e->z_long, ZL_LO, ZL_HI);
	if (wobble > 0)
		e->growth *= ramp(gained / wobble, WOBBLE_LO, WOBBLE_HI);
	e->fit = ramp(e->lf.r2, FIT_LO, FIT_HI);
	/* the recent growth must be real (above the noise) and keep the long
	 * window's pace; a short window as long as the long one only has the
	 * first test to pass */
	e->persist = ramp(e->z_short, ZS_LO, ZS_HI);
	if (e->short_len < e->lf.span_s)
		e->persist *= ramp(e->sf.slope / e->lf.slope, PERSIST_LO, PERSIST_HI);
}

static double horizon_strength(const struct horizon_eval *e)
{
	return e->growth * e->fit * e->persist;
}

/* The horizon the score and the reasons use: the strongest evidence; when
 * none has any, the one that grew best (it explains a plateau); else the
 * shortest. */
static const struct horizon_eval *horizon_pick(const struct horizon_eval *ev, int n)
{
	const struct horizon_eval *best = &ev[0];
	int i;

	for (i = 1; i < n; i++)
		if (horizon_strength(&ev[i]) > horizon_strength(best))
			best = &ev[i];
	if (horizon_strength(best) > 0)
		return best;
	for (i = 1; i < n; i++)
		if (ev[i].growth * ev[i].fit > best->growth * best->fit)
			best = &ev[i];
	return best;
}

static void site_reasons(struct mt_site_stats *s, const struct mt_site_obs *o,
			 const struct horizon_eval *e, double span, double age_cut)
{
	char a[16], b[16], d[16];
	const struct mt_score_terms *tm = &s->terms;

	fmt_bytes(a, sizeof(a), e->lf.slope * 60);
	fmt_duration(d, sizeof(d), e->lf.span_s);
	if (e->lf.n == 0) {
		snprintf(s->reasons[0], MT_REASON_LEN, "not enough history for a slope yet");
	} else if (s->plateau) {
		char sr[16], sd[16];

		fmt_bytes(sr, sizeof(sr), e->sf.slope * 60);
		fmt_duration(sd, sizeof(sd), e->short_len);
		snprintf(s->reasons[0], MT_REASON_LEN,
			 "growth flattened: %s/min over the last %s vs %s/min over %s", sr, sd, a, d);
	} else if (tm->growth > 0 && tm->fit > 0 && tm->persist > 0) {
		snprintf(s->reasons[0], MT_REASON_LEN, "in-use grew %s/min for %s, R^2 %.2f", a, d,
			 e->lf.r2);
	} else if (tm->growth > 0 && tm->fit > 0) {
		fmt_duration(b, sizeof(b), e->short_len);
		snprintf(s->reasons[0], MT_REASON_LEN,
			 "in-use grew %s/min for %s, R^2 %.2f, but not in the last %s", a, d,
			 e->lf.r2, b);
	} else if (tm->growth > 0) {
		snprintf(s->reasons[0], MT_REASON_LEN,
			 "in-use rose %s/min over %s but irregularly, R^2 %.2f", a, d, e->lf.r2);
	} else {
		fmt_bytes(b, sizeof(b), o->inuse_bytes);
		snprintf(s->reasons[0], MT_REASON_LEN,
			 "no steady growth: %s/min over %s, R^2 %.2f, in use %s", a, d, e->lf.r2, b);
	}

	if (o->alloc_bytes <= 0)
		snprintf(s->reasons[1], MT_REASON_LEN, "no sampled allocations");
	else if (s->freed_fraction < 0.5)
		snprintf(s->reasons[1], MT_REASON_LEN, "%.0f%% of sampled bytes never freed",
			 100 * (1 - s->freed_fraction));
	else
		snprintf(s->reasons[1], MT_REASON_LEN, "%.0f%% of sampled bytes freed",
			 100 * s->freed_fraction);

	fmt_duration(a, sizeof(a), o->oldest_live_age_s);
	fmt_duration(b, sizeof(b), age_cut);
	if (!o->live_samples)
		snprintf(s->reasons[2], MT_REASON_LEN, "no live samples");
	else
		snprintf(s->reasons[2], MT_REASON_LEN,
			 "oldest live sample %s; %.0f%% of live bytes older than %s", a,
			 100 * s->old_fraction, b);

	fmt_duration(a, sizeof(a), span);
	snprintf(s->reasons[3], MT_REASON_LEN, "confidence %.2f: %llu samples over %s",
		 s->confidence, (unsigned long long)o->samples, a);
	s->nreasons = MT_REASONS;
}

void site_stats_init(struct mt_site_stats *s)
{
	memset(s, 0, sizeof(*s));
	history_init(&s->inuse);
	history_init(&s->alloc_rate);
	s->first_s = -1;
	s->last_s = -1;
}

/* Fits, score, reasons and uncertainties from the histories and o. */
static void site_stats_score(struct mt_site_stats *s, const struct mt_site_obs *o)
{
	struct horizon_eval ev[N_HORIZONS];
	const struct horizon_eval *best;
	struct mt_score_terms *tm = &s->terms;
	double span, quantum, wobble, age_cut, factor, in_window, paced;
	int n;

	span = o->now_s - s->first_s;
	/* bytes one sample stands for: the step size of the in-use estimate */
	quantum = o->samples ? o->alloc_bytes / (double)o->samples : 0;

	/* the shortest horizon always, longer ones once half covered */
	wobble = history_wobble(s, o->now_s, span, quantum);
	for (n = 0; n < N_HORIZONS && (n == 0 || span >= horizons_s[n] / 2); n++)
		horizon_evaluate(s, o->now_s, span, quantum, wobble, horizons_s[n], &ev[n]);
	best = horizon_pick(ev, n);
	s->long_fit = best->lf;
	s->short_fit = best->sf;
	s->long_window_s = best->horizon;
	s->short_window_s = best->short_len;
	s->plateau =
		best->growth * best->fit >= 0.5 && best->sf.slope < PLATEAU_RATIO * best->lf.slope;

	s->freed_fraction = o->alloc_bytes > 0 ? clamp01(o->freed_bytes / o->alloc_bytes) : 0;
	s->oldest_live_age_s = o->oldest_live_age_s;
	age_cut = fmax(best->lf.span_s, 1) / AGE_CUT_DIV;
	s->old_fraction = live_fraction_older(o->live_bytes_by_age, age_cut);

	tm->growth = best->growth;
	tm->fit = best->fit;
	tm->persist = best->persist;
	tm->age = ramp(s->old_fraction, AGE_LO, AGE_HI);
	tm->unfreed = 1 - s->freed_fraction;
	tm->confidence = fmin(1, o->samples / CONF_SAMPLES) * fmin(1, span / CONF_SPAN_S);
	s->confidence = tm->confidence;

	/* survivors accumulate: the live bytes are old, or nothing is freed */
	factor = BASE_WEIGHT + (1 - BASE_WEIGHT) * fmax(tm->age, tm->unfreed);
	s->leak_score = 100 * tm->confidence * tm->growth * tm->fit * tm->persist * factor;
	site_reasons(s, o, best, span, age_cut);

	/* what sampling makes uncertain: a rate rests on the samples of its
	 * window (Poisson: 1/sqrt(n)); in-use on the live ones (their
	 * Horvitz-Thompson variance, 1/sqrt(n) where not known), on the
	 * duty cycle's schedule and on its pace range */
	s->growth_shown = tm->growth > 0;
	s->rate_bytes_per_s =
		history_mean(&s->alloc_rate, o->now_s, MT_RATE_WINDOW_S, &s->rate_window_s);
	if (s->rate_window_s <= 0) {
		/* a first interval only: its own rate */
		s->rate_bytes_per_s = o->alloc_bytes_per_s;
		s->rate_window_s = o->interval_s;
	}
	in_window = quantum > 0 ? s->rate_bytes_per_s * s->rate_window_s / quantum : 0;
	s->rate_rel_err = in_window >= 1 ? 1 / sqrt(in_window) : 1;
	s->inuse_rel_err = o->live_samples ? 1 / sqrt((double)o->live_samples) : 1;
	paced = o->inuse_paced_bytes > 0 ? o->inuse_paced_bytes : o->inuse_bytes;
	s->inuse_low_bytes = fmin(o->inuse_bytes, paced);
	s->inuse_high_bytes = fmax(o->inuse_bytes, paced);
	if (o->live_samples && o->inuse_bytes > 0) {
		double sampler =
			o->inuse_var > 0 ? sqrt(o->inuse_var) / o->inuse_bytes : s->inuse_rel_err;
		double sched = sampling_schedule_rel_sd(o->inuse_phased_off_bytes / o->inuse_bytes,
							o->oldest_live_age_s);

		s->inuse_rel_err = hypot(hypot(sampler, sched),
					 (s->inuse_high_bytes - s->inuse_low_bytes) / o->inuse_bytes);
	}
}

void site_stats_update(struct mt_site_stats *s, const struct mt_site_obs *o)
{
	if (!isfinite(o->now_s) || (s->last_s >= 0 && o->now_s < s->last_s))
		return;
	if (s->first_s < 0)
		s->first_s = o->now_s;
	s->last_s = o->now_s;
	history_push(&s->inuse, o->now_s, o->inuse_bytes);
	history_push(&s->alloc_rate, o->now_s, o->alloc_bytes_per_s);
	site_stats_score(s, o);
}

void site_stats_restore(struct mt_site_stats *s, double first_s, const struct mt_site_obs *o)
{
	if (!isfinite(o->now_s) || first_s < 0)
		return;
	s->first_s = first_s;
	s->last_s = o->now_s;
	site_stats_score(s, o);
}

/* ==== Targets ========================================================== */

#define RSS_GROWTH_MIN (1024.0 * 1024)
#define RSS_FIT_MIN 0.5
#define EXPLAINS_MAX 10.0

void target_stats_init(struct mt_target_stats *s)
{
	memset(s, 0, sizeof(*s));
	history_init(&s->rss);
	history_init(&s->inuse);
	s->heap_explains = -1;
	s->first_s = -1;
}

void target_stats_update(struct mt_target_stats *s, double now_s, double rss_bytes, double inuse_bytes)
{
	struct noise nz;
	double len;
	char a[16], d[16];

	if (!isfinite(now_s))
		return;
	if (s->first_s < 0)
		s->first_s = now_s;
	history_push(&s->rss, now_s, rss_bytes);
	history_push(&s->inuse, now_s, inuse_bytes);
	len = fmin(now_s - s->first_s, MT_TARGET_WINDOW_S);
	fit_window(&s->rss, now_s, len, s->first_s, 0, &s->rss_fit, &nz);
	fit_window(&s->inuse, now_s, len, s->first_s, 0, &s->inuse_fit, &nz);
	s->window_s = len;
	fmt_duration(d, sizeof(d), len);
	if (s->rss_fit.n == 0) {
		s->heap_explains = -1;
		snprintf(s->summary, MT_REASON_LEN, "not enough history for RSS growth yet");
	} else if (s->rss_fit.slope * s->rss_fit.span_s < RSS_GROWTH_MIN ||
		   s->rss_fit.r2 < RSS_FIT_MIN) {
		s->heap_explains = -1;
		fmt_bytes(a, sizeof(a), s->rss_fit.slope * 60);
		snprintf(s->summary, MT_REASON_LEN,
			 "RSS not growing steadily: %s/min over %s, R^2 %.2f", a, d, s->rss_fit.r2);
	} else {
		s->heap_explains = s->inuse_fit.slope / s->rss_fit.slope;
		s->heap_explains = fmin(fmax(s->heap_explains, 0), EXPLAINS_MAX);
		fmt_bytes(a, sizeof(a), s->rss_fit.slope * 60);
		snprintf(s->summary, MT_REASON_LEN,
			 "sampled heap explains %.0f%% of RSS growth (%s/min) over %s",
			 100 * s->heap_explains, a, d);
	}
}

/* ==== Size histogram =================================================== */

int size_hist_bucket(__u64 size, int nbuckets)
{
	int b = 0;

	if (nbuckets <= 0)
		return 0;
	/* smallest b with 2^b >= size */
	while (b < 63 && ((__u64)1 << b) < size)
		b++;
	return b < nbuckets ? b : nbuckets - 1;
}

__u64 size_hist_inline_capacity(const double objects[], int nbuckets, double frac)
{
	double total = 0, acc = 0;
	int i;

	if (!objects || nbuckets <= 0 || !(frac > 0) || frac > 1)
		return 0;
	for (i = 0; i < nbuckets; i++)
		total += objects[i] > 0 ? objects[i] : 0;
	if (!(total > 0))
		return 0;
	for (i = 0; i < nbuckets && i < 63; i++) {
		__u64 cap = (__u64)1 << i;

		acc += objects[i] > 0 ? objects[i] : 0;
		if (cap > MT_INLINE_MAX)
			return 0;
		/* a hair of slack so 0.9 of 10 objects counts as 9 */
		if (acc >= frac * total * (1 - 1e-12))
			return cap;
	}
	return 0;
}

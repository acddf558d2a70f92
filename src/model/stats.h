/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * stats.h - pure statistics over the observations model.c makes once per
 * tick: bounded multi-resolution history, least-squares growth slopes with
 * R^2, plateau detection, the leak-suspicion score with its reasons, the
 * per-target heap-versus-RSS comparison and the size-histogram advice.
 *
 * No I/O, no clock, no globals: everything it knows arrives in an
 * observation struct, so it is unit-tested on synthetic series.
 * The score formula is documented in docs/leak-score.md.
 */
#ifndef MEMTOP_STATS_H
#define MEMTOP_STATS_H

#include <stdbool.h>
#include <linux/types.h>

#define MT_AGE_BUCKETS \
	16                 /* live-sample age: bucket 0 is [0, 2) s, bucket i [2^i, 2^(i+1)) s,
			     * the last one open-ended */
#define MT_HIST_LEVELS 3   /* history resolutions */
#define MT_HIST_POINTS 120 /* points kept per resolution */
#define MT_REASONS 4       /* growth, freed, age, confidence: always all four */
#define MT_REASON_LEN 120
#define MT_RATE_WINDOW_S 10.0  /* smoothed allocation rates cover this much history */
#define MT_APPROX_REL_ERR 0.25 /* relative sampling error above which a figure is shown as ~ */

/* Multi-resolution history of one value: level 0 keeps every pushed point,
 * each next level one point per MT_HIST_FACTOR points of the level below
 * (their mean t and mean v). With one push per second the levels span
 * 2 min, 20 min and 3 h 20 min. Fixed memory: nothing is allocated. */
#define MT_HIST_FACTOR 10
struct mt_history_level {
	double t[MT_HIST_POINTS]; /* seconds (monotonic) */
	double v[MT_HIST_POINTS];
	int head;            /* next slot to write */
	int count;           /* valid points */
	double acc_t, acc_v; /* sums accumulating this level's next point */
	int acc_n;           /* points summed so far (level 0: unused) */
};
struct mt_history {
	struct mt_history_level level[MT_HIST_LEVELS];
};

void history_init(struct mt_history *h);
/* Append a point. Points must come in non-decreasing t; a point older than
 * the last one, or with a non-finite t or v, is ignored. */
void history_push(struct mt_history *h, double t, double v);
/* Copy the points with t >= since, oldest first, into t[]/v[] (at most
 * max; when more match, the most recent max are kept). The level used is
 * the finest whose oldest point is at or before since; if none reaches
 * that far, the one reaching furthest back. From a coarse level the mean of
 * the points pushed since its newest point is appended, so the window ends
 * near the latest push. Returns the number copied (0 when empty or max <= 0). */
int history_window(const struct mt_history *h, double since, double *t, double *v, int max);
/* Most recent value; 0 when empty. */
double history_last(const struct mt_history *h);
/* Time of the most recent point; -1 when empty. */
double history_last_t(const struct mt_history *h);
/* Add src's values into dst, point by point, pending sums included. Both
 * must hold the same points (pushed at the same t, e.g. both started from
 * copies of one template): 0, or -EINVAL when their layouts differ (dst is
 * then unchanged). The sum of histories of parts is the history of the
 * whole: this is how regrouping keeps a site's past. */
int history_add(struct mt_history *dst, const struct mt_history *src);
/* Forget every point newer than t: the history as it stood at t (the
 * coarse levels' partial sums are dropped with it). */
void history_truncate(struct mt_history *h, double t);
/* Time-weighted mean of the values over (now - window, now], each point
 * standing for the interval that ends at it; the seconds covered go to
 * *span (0 and 0 when no interval is covered). */
double history_mean(const struct mt_history *h, double now, double window, double *span);

struct mt_fit {
	double slope;     /* units per second */
	double intercept; /* value at t = 0 */
	double r2;        /* coefficient of determination, 0..1 (0 when flat) */
	double span_s;    /* t[n-1] - t[0] */
	int n;            /* points used; 0 when fewer than 3 (then all fields 0) */
};
/* Ordinary least squares v = slope*t + intercept. A flat series, or one
 * whose t are all equal, gives slope 0 and r2 0. */
void stats_fit(const double *t, const double *v, int n, struct mt_fit *out);

/* What model.c observes about a site at each tick. All byte figures are
 * unsampled estimates: a sample of size s is worth w*s bytes, w = 1/p. */
struct mt_site_obs {
	double now_s;       /* monotonic seconds, non-decreasing */
	double inuse_bytes; /* sum of w*s over live samples */
	/* The same if the samples drawn under the budget's duty cycle stood
	 * for the process's pace, not the probes' time on (model.c,
	 * sites_paced_extra): the other end of the range in-use is known to.
	 * Equal to inuse_bytes at full duty; 0 is taken as equal. */
	double inuse_paced_bytes;
	/* Of inuse_bytes, the bytes of the samples drawn under the duty cycle,
	 * each times 1 - its duty: the scale of the error the schedule's
	 * realised share leaves (sampling_schedule_rel_sd). 0: none. */
	double inuse_phased_off_bytes;
	/* The sampler's variance of inuse_bytes (bytes^2): sum over live
	 * samples of (1 - p) (w s)^2. 0: not known, 1 / live samples taken. */
	double inuse_var;
	double alloc_bytes;       /* sum of w*s over all samples, cumulative */
	double freed_bytes;       /* sum of w*s over samples freed since, cumulative */
	double alloc_bytes_per_s; /* over the last interval */
	double interval_s;        /* that interval's length (0: unknown) */
	__u64 samples;            /* sampled allocations, cumulative */
	__u64 live_samples;       /* of those, not freed yet */
	double oldest_live_age_s; /* now - time of the oldest live sample; 0: none live */
	/* Sum of w*s of the live samples per age bucket (see MT_AGE_BUCKETS). */
	double live_bytes_by_age[MT_AGE_BUCKETS];
};

/* The factors of the score, each 0..1 (docs/leak-score.md):
 * score = 100 * confidence * growth * fit * persist * (0.6 + 0.4 max(age, unfreed)) */
struct mt_score_terms {
	double growth;     /* net growth over the long window: >= 12 samples, >= 4 sigma */
	double fit;        /* R^2 of the long window */
	double persist;    /* the short window still grows, at >= 45% of the long pace */
	double age;        /* live bytes old relative to the window: survivors accumulate */
	double unfreed;    /* 1 - freed_fraction */
	double confidence; /* samples seen and time watched */
};

struct mt_site_stats {
	struct mt_history inuse;      /* estimated in-use bytes */
	struct mt_history alloc_rate; /* bytes/s */
	struct mt_fit short_fit;      /* in-use over the short (persistence) window */
	struct mt_fit long_fit;       /* in-use over the long window that scored highest */
	double long_window_s;         /* that window's horizon: 60, 600 or 3600 s */
	double short_window_s;
	bool plateau;          /* grew over the long window, flat in the short one */
	double freed_fraction; /* freed / allocated (sampled bytes), 0..1 */
	double oldest_live_age_s;
	double old_fraction; /* live bytes older than long_fit.span_s / 3 */
	double leak_score;   /* 0..100 */
	double confidence;   /* 0..1: how much the score can be trusted */
	struct mt_score_terms terms;
	int nreasons;
	char reasons[MT_REASONS][MT_REASON_LEN]; /* plain ASCII, one per term */
	/* How far sampling lets the figures be trusted. */
	bool growth_shown;       /* the long window's growth stands out of the noise:
				       * the score's own test (terms.growth > 0) */
	double rate_bytes_per_s; /* allocation rate, time-weighted over rate_window_s */
	double rate_window_s;    /* history it covers: MT_RATE_WINDOW_S once watched that long */
	double rate_rel_err;     /* its relative sampling error, 1/sqrt(samples in the window);
				       * 1 when the window holds none */
	double inuse_rel_err;    /* in-use's: the sampler's (sqrt(inuse_var) / in-use, or
				  * 1/sqrt(live samples)), the schedule's and the pace
				  * range below, in quadrature; 1 with none live */
	/* The range in-use is known to under the budget's duty cycle: the
	 * figure (a stream paced by the clock) to the figure if the stream
	 * is paced by its process's work (mt_site_obs.inuse_paced_bytes),
	 * low <= high; both the figure at full duty. */
	double inuse_low_bytes, inuse_high_bytes;
	/* private to stats.c */
	double first_s; /* time of the first update; < 0 before it */
	double last_s;
};

void site_stats_init(struct mt_site_stats *s);
/* Record one observation and recompute fits, score and reasons. Meant to
 * be called once per tick; any tick length works (windows are in seconds). */
void site_stats_update(struct mt_site_stats *s, const struct mt_site_obs *o);
/* After the caller rebuilt s->inuse and s->alloc_rate (regrouping sums
 * the histories of a site's parts), take first_s as the time watching
 * began and recompute fits, score and reasons as of o without recording a
 * point: the site's figures carry on instead of restarting. */
void site_stats_restore(struct mt_site_stats *s, double first_s, const struct mt_site_obs *o);

/* Per target: histories of RSS and estimated heap, and how much of the RSS
 * growth the sampled heap explains over the last MT_TARGET_WINDOW_S. */
#define MT_TARGET_WINDOW_S 300.0
struct mt_target_stats {
	struct mt_history rss;
	struct mt_history inuse;
	struct mt_fit rss_fit;
	struct mt_fit inuse_fit;
	double window_s;             /* length of the fit window (shorter while young) */
	double heap_explains;        /* inuse slope / rss slope, clamped to 0..10; -1 when
			       * RSS did not grow measurably (>= 1 MiB, R^2 >= 0.5) */
	char summary[MT_REASON_LEN]; /* "sampled heap explains 85% of RSS growth over 5m0s" */
	double first_s;              /* private */
};
void target_stats_init(struct mt_target_stats *s);
void target_stats_update(struct mt_target_stats *s, double now_s, double rss_bytes,
			 double inuse_bytes);

/* Size histogram: bucket of an allocation size. Bucket i holds sizes in
 * (2^(i-1), 2^i], bucket 0 holds 0 and 1, so a capacity of 2^i bytes holds
 * every size in buckets 0..i. Sizes above 2^(nbuckets-1) go to the last
 * bucket. */
int size_hist_bucket(__u64 size, int nbuckets);

/* Largest capacity the inline-buffer advice is given for. */
#define MT_INLINE_MAX 4096
/* Smallest power-of-two capacity C such that allocations of size <= C make
 * up at least frac (0..1] of the objects in objects[] (estimated object
 * counts per size_hist_bucket() bucket). 0 when none applies: no objects,
 * bad arguments, or C above MT_INLINE_MAX. */
__u64 size_hist_inline_capacity(const double objects[], int nbuckets, double frac);

#endif /* MEMTOP_STATS_H */

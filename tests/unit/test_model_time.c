// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_model_time.c - the model's figures across the transitions of a run:
 * a target's death (everything freezes at that moment, late records are
 * ignored, regrouping afterwards changes nothing), regrouping (a regrouped
 * model equals one that was grouped that way from the start: rates on the
 * first frame, histories, slopes and scores), a change of interval, a
 * stall of the loop (what a pause or a slow terminal does to the ticks),
 * back-off (fewer, heavier samples), and the uncertainty figures (smoothed
 * rate over its stated window, relative errors, growth shown only when the
 * score's own test says it stands out of the noise).
 *
 * Every sample carries an explicit weight, so the expected figures are
 * exact.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "model/model.h"
#include "target_fixture.h"
#include "util/strpool.h"
#include "frame_fixture.h"

#define RATE 4096
#define SEC 1000000000ULL
#define T0 (1000 * SEC)
#define SIZE 1000
#define WEIGHT 4 /* each sample stands for 4 allocations of SIZE */

static struct mt_model *new_model(enum mt_group g)
{
	struct mt_model_opts o = { .rate = RATE, .group = g };
	struct mt_model *m = model_new(&o);

	assert_non_null(m);
	return m;
}

/* One sample at line `line` of leak_fn (or churn_fn), standing for
 * `weight` allocations of SIZE. */
static void sample(struct mt_model *m, pid_t pid, __u64 addr, const char *fn, __u32 line,
		   __u64 weight, __u64 ts)
{
	struct mt_frame st[2] = { frame(fn, line), frame("main", 900) };
	struct mt_sample_in in = { .pid = pid,
				   .ts_ns = ts,
				   .addr = addr,
				   .size = SIZE,
				   .weight_bytes = weight * SIZE,
				   .frames = st,
				   .nframes = 2 };

	assert_int_equal(model_apply(m, MT_INPUT_ALLOC(&in)), 0);
}

static struct mt_site *site_named(struct mt_model *m, const char *fn, __u32 line)
{
	for (size_t i = 0; i < model_site_count(m); i++) {
		struct mt_site *s = model_site_at(m, i);

		if (!strcmp(s->frame->function, fn) && (!line || s->frame->line == line))
			return s;
	}
	return NULL;
}

/* A steady leak: per second, `per_s` samples at each of lines 10 and 20
 * of leak_fn, plus a churn sample at churn_fn freed within the tick. */
struct feed {
	__u64 addr;
	__u64 now;
	int per_s;
};

static void feed_second(struct mt_model *m, pid_t pid, struct feed *f, double seconds)
{
	int n = (int)lround(f->per_s * seconds);

	for (int i = 0; i < n; i++) {
		__u64 ts = f->now + (__u64)((i + 0.5) * seconds * SEC / n);

		sample(m, pid, f->addr++, "leak_fn", 10, WEIGHT, ts);
		sample(m, pid, f->addr++, "leak_fn", 20, WEIGHT, ts);
		sample(m, pid, f->addr, "churn_fn", 30, WEIGHT, ts);
		model_apply(m, MT_INPUT_FREE(pid, f->addr++, ts + 1000));
	}
	f->now += (__u64)(seconds * SEC);
	model_apply(m, MT_INPUT_TICK(f->now));
}

static struct mt_model *leaking_model(enum mt_group g, pid_t pid, struct feed *f, int seconds)
{
	struct mt_model *m = new_model(g);

	f->addr = 0x10000;
	f->now = T0;
	f->per_s = 4;
	test_target(m, pid);
	model_apply(m, MT_INPUT_TICK(f->now));
	for (int i = 0; i < seconds; i++)
		feed_second(m, pid, f, 1);
	return m;
}

static void assert_close(double a, double b, double rel, const char *what)
{
	double tol = rel * fmax(fabs(a), fabs(b)) + 1e-9;

	if (fabs(a - b) > tol)
		fail_msg("%s: %.6g vs %.6g", what, a, b);
}

/* The figures a view shows for a site, and its history. */
static void assert_same_site(const struct mt_site *a, const struct mt_site *b, double rel)
{
	double ta[MT_HIST_POINTS + 1], va[MT_HIST_POINTS + 1];
	double tb[MT_HIST_POINTS + 1], vb[MT_HIST_POINTS + 1];
	int na = history_window(&a->stats.inuse, 0, ta, va, MT_HIST_POINTS + 1);
	int nb = history_window(&b->stats.inuse, 0, tb, vb, MT_HIST_POINTS + 1);

	assert_close(a->alloc_bytes_per_s, b->alloc_bytes_per_s, rel, "alloc_bytes_per_s");
	assert_close(a->alloc_objects_per_s, b->alloc_objects_per_s, rel, "alloc_objects_per_s");
	assert_close(a->inuse_bytes, b->inuse_bytes, rel, "inuse_bytes");
	assert_close(a->stats.leak_score, b->stats.leak_score, rel, "leak_score");
	assert_close(a->stats.long_fit.slope, b->stats.long_fit.slope, rel, "slope");
	assert_close(a->stats.long_fit.r2, b->stats.long_fit.r2, rel, "r2");
	assert_close(a->stats.confidence, b->stats.confidence, rel, "confidence");
	assert_close(a->stats.oldest_live_age_s, b->stats.oldest_live_age_s, rel, "age");
	assert_close(a->stats.rate_bytes_per_s, b->stats.rate_bytes_per_s, rel, "smoothed rate");
	assert_int_equal(a->stats.growth_shown, b->stats.growth_shown);
	/* the history the graph draws, from the newest point back as far as
	 * both go (a rebuilt one may start earlier, with zeros) */
	assert_true(na > 0 && nb > 0);
	for (int i = na - 1, j = nb - 1; i >= 0 && j >= 0; i--, j--) {
		assert_close(ta[i], tb[j], 1e-12, "history time");
		assert_close(va[i], vb[j], rel, "history point");
	}
	assert_close(history_last(&a->stats.inuse), history_last(&b->stats.inuse), rel,
		     "last history point");
}

/* ---- rates ------------------------------------------------------------ */

/* A process's first counts are of all the time since memtop began
 * watching it: watched 0.65 s before a tick (the start-up's measure came
 * between) and counted from then at 1000 calls a second, its first
 * interval reads 1000/s, not the 1,650/s of 1,650 calls over 1 s; one
 * watched 0.4 s before the next tick, 1000/s too, not 400/s; later
 * intervals as before. */
static void test_first_rate_counts_from_the_watch(void **state)
{
	struct mt_model *m = new_model(MT_GROUP_FUNCTION);
	const struct mt_target *a, *b;
	__u64 t0 = 100 * SEC;
	struct mt_target_facts wa = { .pid = 1, .set = MT_FACT_WATCHED, .watched_ns = t0 };
	struct mt_target_facts ca = { .pid = 1,
				      .set = MT_FACT_COUNTERS | MT_FACT_EXACT,
				      .counters_exact = true };
	struct mt_target_facts wb = { .pid = 2, .set = MT_FACT_WATCHED };
	struct mt_target_facts cb = ca;

	(void)state;
	cb.pid = 2;
	model_apply(m, MT_INPUT_FACTS(&wa));
	model_apply(m, MT_INPUT_TICK(t0 + SEC * 65 / 100)); /* nothing counted yet */
	ca.counters.alloc_calls = 1650;
	model_apply(m, MT_INPUT_FACTS(&ca));
	wb.watched_ns = t0 + SEC * 125 / 100;
	model_apply(m, MT_INPUT_FACTS(&wb));
	cb.counters.alloc_calls = 400;
	model_apply(m, MT_INPUT_FACTS(&cb));
	model_apply(m, MT_INPUT_TICK(t0 + SEC * 165 / 100));
	a = model_target(m, 1);
	b = model_target(m, 2);
	assert_close(a->alloc_calls_per_s, 1000, 1e-9, "first rate of one watched before a tick");
	assert_close(b->alloc_calls_per_s, 1000, 1e-9, "first rate of one watched since one");
	ca.counters.alloc_calls += 2000;
	cb.counters.alloc_calls += 500;
	model_apply(m, MT_INPUT_FACTS(&ca));
	model_apply(m, MT_INPUT_FACTS(&cb));
	model_apply(m, MT_INPUT_TICK(t0 + SEC * 265 / 100));
	assert_close(a->alloc_calls_per_s, 2000, 1e-9, "second rate");
	assert_close(b->alloc_calls_per_s, 500, 1e-9, "second rate");
	model_free(m);
}

/* One interval: calls counted, the share the probes were off, the tick. */
static void backed_off_second(struct mt_model *m, struct mt_target_facts *counts,
			      struct mt_target_facts *off, __u64 calls, double off_share,
			      __u64 tick_ns)
{
	counts->counters.alloc_calls += calls;
	model_apply(m, MT_INPUT_FACTS(counts));
	off->rates_off_share = off_share;
	model_apply(m, MT_INPUT_FACTS(off));
	model_apply(m, MT_INPUT_TICK(tick_ns));
}

/* Under the back-off the counters hold what the probes saw: an interval
 * they were off for 3/4 of reads the counts over the quarter they saw
 * (and over what of it phase_seen says they saw), one they were off
 * throughout keeps the last estimate, and a whole one the counts again.
 * The evaluation's plain `--no-inject` read 0, 5,643, 0 calls/s where
 * the loop made about 106,000. */
static void test_backed_off_rates_scaled_by_what_was_seen(void **state)
{
	struct mt_model *m = new_model(MT_GROUP_FUNCTION);
	const struct mt_target *t;
	__u64 t0 = 100 * SEC;
	struct mt_target_facts w = { .pid = 1, .set = MT_FACT_WATCHED, .watched_ns = t0 };
	struct mt_target_facts c = { .pid = 1, .set = MT_FACT_COUNTERS | MT_FACT_RATES };
	struct mt_target_facts off = { .pid = 1, .set = MT_FACT_RATES };

	(void)state;
	model_apply(m, MT_INPUT_FACTS(&w));
	c.rates_exact = true;
	c.counters.alloc_calls = 100000;
	model_apply(m, MT_INPUT_FACTS(&c));
	model_apply(m, MT_INPUT_TICK(t0 + SEC)); /* 100,000 a second, all seen */
	t = model_target(m, 1);
	assert_close(t->alloc_calls_per_s, 100000, 1e-9, "a whole interval");
	backed_off_second(m, &c, &off, 25000, 0.75, t0 + 2 * SEC); /* a quarter on */
	assert_false(t->rates_exact);
	assert_close(t->alloc_calls_per_s, 100000, 1e-9, "3/4 off");
	backed_off_second(m, &c, &off, 0, 1, t0 + 3 * SEC);
	assert_close(t->alloc_calls_per_s, 100000, 1e-9, "off throughout: the last estimate");
	/* the probes saw 80% of what the on-time's share promised */
	off.set |= MT_FACT_PHASE;
	off.phase_seen = 0.8;
	backed_off_second(m, &c, &off, 40000, 0.5, t0 + 4 * SEC);
	assert_close(t->alloc_calls_per_s, 100000, 1e-9, "half off, phase_seen 0.8");
	c.counters.alloc_calls += 70000;
	model_apply(m, MT_INPUT_FACTS(&c));
	model_apply(m, MT_INPUT_TICK(t0 + 5 * SEC));
	assert_true(t->rates_exact);
	assert_close(t->alloc_calls_per_s, 70000, 1e-9, "whole again: the counts");
	model_free(m);
}

/* ---- death ------------------------------------------------------------ */

static const struct mt_target_end killed = { .kind = MT_END_SIGNAL, .signal = SIGKILL };
static const struct mt_target_end exited3 = { .kind = MT_END_EXIT, .code = 3 };

static void test_death_freezes_sites_and_target(void **state)
{
	struct feed f;
	struct mt_model *m = leaking_model(MT_GROUP_FUNCTION, 7, &f, 30);
	struct mt_site *s = site_named(m, "leak_fn", 0), before, after;
	const struct mt_target *t = model_target(m, 7);
	struct mt_target tbefore;
	struct mt_target_facts counted = { .pid = 7,
					   .set = MT_FACT_COUNTERS,
					   .counters = { .alloc_calls = 1000 } };
	__u64 death = f.now + SEC / 4;

	assert_non_null(s);
	assert_true(s->stats.leak_score > 90);
	/* a quarter second more of leaking, then the death */
	for (int i = 0; i < 2; i++)
		sample(m, 7, f.addr++, "leak_fn", 10, WEIGHT, f.now + SEC / 8 * (i + 1));
	model_apply(m, MT_INPUT_FACTS(&counted));
	assert_int_equal(model_apply(m, MT_INPUT_ENDED(7, &killed, death)), 0);
	assert_int_equal(model_apply(m, MT_INPUT_ENDED(99, &killed, death)), -ENOENT);
	f.now += SEC;
	model_apply(m, MT_INPUT_TICK(f.now));

	assert_false(t->alive);
	assert_int_equal(t->exit_ns, death);
	assert_int_equal(t->end.kind, MT_END_SIGNAL);
	assert_int_equal(s->ended_ns, death);
	/* the last interval ran from the last tick to the death: 2 samples
	 * of WEIGHT * SIZE in a quarter second */
	assert_close(s->alloc_bytes_per_s, 2.0 * WEIGHT * SIZE / 0.25, 1e-9, "closing rate");
	assert_close(t->alloc_calls_per_s, 1000 / 0.25, 1e-9, "closing call rate");
	/* ages are measured at the death: the first sample was 30.25 s before */
	assert_close(s->stats.oldest_live_age_s, 30.25 - 0.5 / 4, 1e-6, "age at death");
	assert_true(s->stats.leak_score > 90);
	before = *s;
	tbefore = *t;

	/* 40 s later, with records that were still in flight: nothing moves */
	for (int i = 0; i < 40; i++) {
		sample(m, 7, f.addr++, "leak_fn", 10, WEIGHT, f.now);
		model_apply(m, MT_INPUT_FREE(7, 0x10000, f.now));
		f.now += SEC;
		model_apply(m, MT_INPUT_TICK(f.now));
	}
	after = *s;
	assert_memory_equal(&before, &after, sizeof(before));
	assert_memory_equal(&tbefore, t, sizeof(tbefore));
	assert_int_equal(model_drops(m)->after_end, 80);
	model_free(m);
}

static void test_death_survives_regrouping(void **state)
{
	struct feed f;
	struct mt_model *m = leaking_model(MT_GROUP_FUNCTION, 7, &f, 30);
	struct mt_site *s, before;
	__u64 death = f.now + SEC / 2;

	model_apply(m, MT_INPUT_ENDED(7, &killed, death));
	f.now += SEC;
	model_apply(m, MT_INPUT_TICK(f.now));
	before = *site_named(m, "leak_fn", 0);
	for (int i = 0; i < 20; i++) {
		f.now += SEC;
		model_apply(m, MT_INPUT_TICK(f.now));
	}
	/* to lines and back, 20 s after the death */
	assert_int_equal(model_apply(m, MT_INPUT_GROUP(MT_GROUP_LINE)), 0);
	s = site_named(m, "leak_fn", 10);
	assert_non_null(s);
	assert_int_equal(s->ended_ns, death);
	if (s->stats.leak_score <= 90)
		fail_msg("score %.1f: %s / %s / %s", s->stats.leak_score, s->stats.reasons[0],
			 s->stats.reasons[2], s->stats.reasons[3]);
	assert_true(s->stats.last_s <= before.stats.last_s);
	assert_int_equal(model_apply(m, MT_INPUT_GROUP(MT_GROUP_FUNCTION)), 0);
	f.now += SEC;
	model_apply(m, MT_INPUT_TICK(f.now));
	s = site_named(m, "leak_fn", 0);
	assert_int_equal(s->ended_ns, death);
	assert_same_site(s, &before, 1e-9);
	assert_close(s->stats.last_s, before.stats.last_s, 0, "last point");
	model_free(m);
}

static void test_death_of_one_process_leaves_shared_site_live(void **state)
{
	struct feed f;
	struct mt_model *m = leaking_model(MT_GROUP_FUNCTION, 7, &f, 5);
	struct mt_site *s;

	test_target(m, 8);
	sample(m, 8, 0x900000, "leak_fn", 10, WEIGHT, f.now);
	model_apply(m, MT_INPUT_ENDED(7, &killed, f.now + 1));
	feed_second(m, 8, &f, 1);
	s = site_named(m, "leak_fn", 0);
	assert_int_equal(s->ended_ns, 0);
	assert_true(s->alloc_bytes_per_s > 0);
	/* the dead process's samples (from T0, 6 s old) no longer age the
	 * site that goes on: its oldest is pid 8's, from one second ago */
	assert_true(s->stats.oldest_live_age_s <= 1.0 + 1e-9);
	model_apply(m, MT_INPUT_ENDED(8, &exited3, f.now + 2));
	f.now += SEC;
	model_apply(m, MT_INPUT_TICK(f.now));
	assert_int_equal(s->ended_ns, f.now - SEC + 2);
	model_free(m);
}

static void test_pid_reused_after_death(void **state)
{
	struct feed f;
	struct mt_model *m = leaking_model(MT_GROUP_FUNCTION, 7, &f, 5);
	const struct mt_target *t = model_target(m, 7);

	model_apply(m, MT_INPUT_ENDED(7, &killed, f.now + 1));
	f.now += SEC;
	model_apply(m, MT_INPUT_TICK(f.now));
	assert_false(t->alive);
	/* a new process gets pid 7 and is watched: alive again, no end */
	assert_ptr_equal(test_target(m, 7), t);
	assert_true(t->alive);
	assert_int_equal(t->end.kind, MT_END_NONE);
	assert_int_equal(t->exit_ns, 0);
	feed_second(m, 7, &f, 1);
	assert_int_equal(site_named(m, "leak_fn", 0)->ended_ns, 0);
	assert_int_equal(model_drops(m)->after_end, 0);
	model_free(m);
}

static void test_end_described(void **state)
{
	char buf[128];
	struct mt_target_end e = { .kind = MT_END_EXIT, .code = 3 };

	model_end_describe(&e, buf, sizeof(buf));
	assert_string_equal(buf, "exited with code 3");
	e = (struct mt_target_end){ .kind = MT_END_SIGNAL, .signal = SIGSEGV, .core = true };
	model_end_describe(&e, buf, sizeof(buf));
	assert_string_equal(buf, "killed by SIGSEGV (core dumped)");
	e = (struct mt_target_end){ .kind = MT_END_OOM,
				    .signal = SIGKILL,
				    .have_cgroup = true,
				    .cg_current = 64 << 20,
				    .cg_max = 64 << 20,
				    .cg_oom_kill = 1 };
	model_end_describe(&e, buf, sizeof(buf));
	assert_string_equal(buf, "OOM-killed (cgroup at 64.0 MiB of 64.0 MiB, oom_kill 1)");
}

/* ---- regrouping ------------------------------------------------------- */

/* Regroup a model fed for `seconds` from `from` to `to`, and compare every
 * site with a twin fed the same that was grouped `to` all along: right
 * after the regroup (the first frame) and after more ticks. */
static void check_regroup(enum mt_group from, enum mt_group to, int seconds)
{
	struct feed f, g;
	struct mt_model *m = leaking_model(from, 7, &f, seconds);
	struct mt_model *twin = leaking_model(to, 7, &g, seconds);

	assert_int_equal(model_apply(m, MT_INPUT_GROUP(to)), 0);
	assert_int_equal(model_site_count(m), model_site_count(twin));
	for (int round = 0; round < 2; round++) {
		for (size_t i = 0; i < model_site_count(twin); i++) {
			const struct mt_site *b = model_site_at(twin, i);
			const struct mt_site *a = site_named(
				m, b->frame->function, to == MT_GROUP_FUNCTION ? 0 : b->frame->line);

			assert_non_null(a);
			assert_same_site(a, b, 1e-6);
		}
		for (int i = 0; i < 5; i++) {
			feed_second(m, 7, &f, 1);
			feed_second(twin, 7, &g, 1);
		}
	}
	model_free(m);
	model_free(twin);
}

static void test_regroup_split_keeps_figures(void **state)
{
	check_regroup(MT_GROUP_FUNCTION, MT_GROUP_LINE, 40);
}

static void test_regroup_merge_keeps_figures(void **state)
{
	check_regroup(MT_GROUP_LINE, MT_GROUP_FUNCTION, 40);
}

static void test_regroup_to_stacks_keeps_figures(void **state)
{
	check_regroup(MT_GROUP_FUNCTION, MT_GROUP_STACK, 40);
}

static void test_regroup_first_frame_rates_are_rates(void **state)
{
	struct feed f;
	struct mt_model *m = leaking_model(MT_GROUP_FUNCTION, 7, &f, 20);
	struct mt_site *s;

	assert_int_equal(model_apply(m, MT_INPUT_GROUP(MT_GROUP_LINE)), 0);
	s = site_named(m, "leak_fn", 10);
	/* 4 samples a second of WEIGHT * SIZE, not the cumulative bytes */
	assert_close(s->alloc_bytes_per_s, 4.0 * WEIGHT * SIZE, 1e-9, "rate after regroup");
	feed_second(m, 7, &f, 1);
	assert_close(s->alloc_bytes_per_s, 4.0 * WEIGHT * SIZE, 1e-9, "rate one tick later");
	assert_true(s->stats.leak_score > 90);
	model_free(m);
}

/* ---- interval changes, stalls, back-off --------------------------------- */

static void test_interval_change(void **state)
{
	struct feed f;
	struct mt_model *m = leaking_model(MT_GROUP_FUNCTION, 7, &f, 20);
	struct mt_site *s = site_named(m, "leak_fn", 0);
	double rate = 2 * 4.0 * WEIGHT * SIZE; /* two lines */
	const double steps[] = { 0.25, 0.25, 0.5, 2, 5, 1 };

	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		feed_second(m, 7, &f, steps[i]);
		assert_close(model_interval_s(m), steps[i], 1e-9, "interval");
		assert_close(s->alloc_bytes_per_s, rate, 1e-9, "interval rate");
		assert_close(s->stats.rate_bytes_per_s, rate, 1e-9, "smoothed rate");
		assert_close(s->stats.long_fit.slope, rate, 0.02, "slope");
		assert_true(s->stats.leak_score > 90);
	}
	model_free(m);
}

static void test_stalled_loop(void **state)
{
	struct feed f;
	struct mt_model *m = leaking_model(MT_GROUP_FUNCTION, 7, &f, 20);
	struct mt_site *s = site_named(m, "leak_fn", 0);
	double rate = 2 * 4.0 * WEIGHT * SIZE;

	/* ten seconds without a tick (memtop stopped, or a long pause of the
	 * loop), the leak going on meanwhile */
	feed_second(m, 7, &f, 10);
	assert_close(model_interval_s(m), 10, 1e-9, "interval");
	assert_close(s->alloc_bytes_per_s, rate, 1e-9, "rate over the stall");
	assert_close(s->stats.rate_bytes_per_s, rate, 1e-9, "smoothed over the stall");
	assert_close(s->stats.rate_window_s, 10, 1e-9, "rate window");
	assert_close(s->stats.long_fit.slope, rate, 0.02, "slope");
	assert_true(s->stats.leak_score > 90);
	model_free(m);
}

static void test_backoff_heavier_samples(void **state)
{
	struct feed f;
	struct mt_model *m = leaking_model(MT_GROUP_LINE, 7, &f, 20);
	struct mt_site *s = site_named(m, "leak_fn", 10);
	double rate = 4.0 * WEIGHT * SIZE, err_before = s->stats.rate_rel_err;

	/* duty 25%: a quarter of the samples, each weighing four times more */
	for (int i = 0; i < 20; i++) {
		sample(m, 7, f.addr++, "leak_fn", 10, 4 * WEIGHT, f.now + SEC / 2);
		f.now += SEC;
		model_apply(m, MT_INPUT_TICK(f.now));
		assert_close(s->alloc_bytes_per_s, rate, 1e-9, "rate under back-off");
	}
	assert_close(s->stats.rate_bytes_per_s, rate, 1e-9, "smoothed under back-off");
	assert_close(s->stats.long_fit.slope, rate, 0.02, "slope under back-off");
	assert_true(s->stats.leak_score > 50);
	/* fewer samples in the window: the rate is less certain, and says so */
	assert_true(s->stats.rate_rel_err > err_before);
	/* 10 samples in the window, counted at the mean quantum since attach */
	assert_true(s->stats.rate_rel_err > 0.15 && s->stats.rate_rel_err < 0.35);
	model_free(m);
}

/* ---- uncertainty ---------------------------------------------------------- */

static void test_uncertainty_figures(void **state)
{
	struct mt_model *m = new_model(MT_GROUP_FUNCTION);
	struct mt_site *s;
	__u64 now = T0, addr = 0x1000;

	test_target(m, 7);
	model_apply(m, MT_INPUT_TICK(now));
	/* one sample a second that lives for a tick: rate ~1 sample/s,
	 * nothing grows */
	for (int i = 0; i < 30; i++) {
		sample(m, 7, addr, "churn_fn", 30, WEIGHT, now + SEC / 2);
		now += SEC;
		model_apply(m, MT_INPUT_TICK(now));
		model_apply(m, MT_INPUT_FREE(7, addr++, now + 1));
		s = site_named(m, "churn_fn", 0);
		/* the first tick states its own interval, then the history's */
		assert_close(s->stats.rate_window_s, i < 1 ? 1 : i < 10 ? i : 10, 1e-9, "window");
		assert_false(s->stats.growth_shown);
		assert_int_equal(s->stats.growth_shown, s->stats.terms.growth > 0);
	}
	/* ten samples in the window: 1/sqrt(10) */
	assert_close(s->stats.rate_rel_err, 1 / sqrt(10), 1e-6, "rate error");
	assert_true(s->stats.rate_rel_err > MT_APPROX_REL_ERR);
	assert_close(s->stats.rate_bytes_per_s, WEIGHT * SIZE, 1e-9, "smoothed rate");
	/* one live sample of weight w: Horvitz-Thompson, sqrt(1 - 1/w) */
	assert_close(s->stats.inuse_rel_err, sqrt(1 - 1.0 / WEIGHT), 1e-9,
		     "in-use error, one live sample");

	/* a steady leak of 40 samples a second: certain, and its growth shows */
	for (int i = 0; i < 30; i++) {
		for (int k = 0; k < 40; k++)
			sample(m, 7, addr++, "leak_fn", 10, WEIGHT, now + k * SEC / 40);
		now += SEC;
		model_apply(m, MT_INPUT_TICK(now));
	}
	s = site_named(m, "leak_fn", 0);
	assert_true(s->stats.growth_shown);
	assert_int_equal(s->stats.growth_shown, s->stats.terms.growth > 0);
	assert_close(s->stats.rate_rel_err, 1 / sqrt(400), 1e-6, "rate error");
	assert_true(s->stats.rate_rel_err < MT_APPROX_REL_ERR);
	assert_close(s->stats.inuse_rel_err, sqrt((1 - 1.0 / WEIGHT) / 1200), 1e-6, "in-use error");
	model_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_first_rate_counts_from_the_watch),
		cmocka_unit_test(test_backed_off_rates_scaled_by_what_was_seen),
		cmocka_unit_test(test_death_freezes_sites_and_target),
		cmocka_unit_test(test_death_survives_regrouping),
		cmocka_unit_test(test_death_of_one_process_leaves_shared_site_live),
		cmocka_unit_test(test_pid_reused_after_death),
		cmocka_unit_test(test_end_described),
		cmocka_unit_test(test_regroup_split_keeps_figures),
		cmocka_unit_test(test_regroup_merge_keeps_figures),
		cmocka_unit_test(test_regroup_to_stacks_keeps_figures),
		cmocka_unit_test(test_regroup_first_frame_rates_are_rates),
		cmocka_unit_test(test_interval_change),
		cmocka_unit_test(test_stalled_loop),
		cmocka_unit_test(test_backoff_heavier_samples),
		cmocka_unit_test(test_uncertainty_figures),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

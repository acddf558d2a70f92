// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_backoff_inuse.c - in-use and the leak score under the budget's
 * duty cycle, through the real model (docs/probes.md 6.5).
 *
 * A simulated server works in rounds of request pairs (the process's
 * work: its frees), each round `slow` times longer while the allocation
 * probes are on; `slow` may grow over the run (a machine getting busier:
 * measured on busy_leak, 200% to 1,100% in 40 s). Beside it, streams of the shapes memtop must tell apart:
 *
 *   cache_put    a FIFO cache that fills, then replaces entries on a
 *                timer: paced by the clock, it plateaus
 *   timer_leak   blocks kept forever, on a timer
 *   work_leak    a block kept forever per round: paced by the work
 *
 * memtop's side is the real code: the budget's schedule, the kernel's
 * countdown twin at R*d, phase_share fed at every switch and every
 * 250 ms with the process's ratio set on its target each second, every
 * free reported (free() stays probed), and the model's tick. Two models
 * see the same samples: the one memtop runs (weights by the duty), and
 * one weighing as ingest did before (by the duty times the process's
 * ratio, fixed at ingest) to show the bias it had.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "model/model.h"
#include "target_fixture.h"
#include "util/sampling.h"
#include "probe/budget.h"
#include "probe/phase_share.h"
#include "util/strpool.h"
#include "frame_fixture.h"

#define MS 1000000ULL
#define S_NS 1000000000ULL
#define FEED_NS (250 * MS)
#define PID 42
#define RATE 524288ULL
#define KiB 1024ULL

#define PAIRS_PER_ROUND 24
#define ROUND_NS (1 * MS)
#define CACHE_ENTRIES 1024
#define CACHE_SIZE (32 * KiB)
#define CACHE_FILL_S 5.0
#define CACHE_REPLACE_PER_S 64.0
#define TIMER_LEAK_SIZE (16 * KiB)
#define TIMER_LEAK_PER_S 30.0
#define WORK_LEAK_SIZE (2 * KiB)
#define WORK_LEAK_EVERY 1 /* rounds */

enum { CACHE, TIMER_LEAK, WORK_LEAK, NSTREAM };
static const char *const names[NSTREAM] = { "cache_put", "timer_leak", "work_leak" };

static __u32 table[MT_EXP_TABLE_SIZE];

struct run {
	struct mt_model *now, *before; /* weights by the duty; by duty * ratio */
	struct mt_frame st[NSTREAM][2];
	struct sampler sm;
	struct phase_share ps;
	__u64 r, next_addr, cache_addr[CACHE_ENTRIES];
	double d, truth[NSTREAM];
	__u64 end_ns; /* the time of the last tick */
	/* the worst of the cache's scores after its fill, per model */
	double cache_worst_now, cache_worst_before;
};

static struct mt_model *new_model(void)
{
	struct mt_model_opts o = { .rate = RATE, .group = MT_GROUP_FUNCTION };
	struct mt_model *m = model_new(&o);

	assert_non_null(m);
	test_target(m, PID);
	return m;
}

static const struct mt_site *site_of(struct mt_model *m, int k)
{
	size_t i;

	for (i = 0; i < model_site_count(m); i++)
		if (!strcmp(model_site_at(m, i)->frame->function, names[k]))
			return model_site_at(m, i);
	return NULL;
}

/* One allocation of stream k at t; returns its address. */
static __u64 allocate(struct run *u, int k, __u64 size, __u64 t, bool probes)
{
	__u64 addr = 0x10000 + 64 * u->next_addr++;
	struct mt_sample_in in = { .pid = PID,
				   .ts_ns = t,
				   .addr = addr,
				   .size = size,
				   .rate = u->r,
				   .frames = u->st[k],
				   .nframes = 2 };

	u->truth[k] += (double)size;
	if (!probes || !sampler_take(&u->sm, size))
		return addr;
	in.duty = u->d;
	assert_int_equal(model_apply(u->now, MT_INPUT_ALLOC(&in)), 0);
	in.duty = u->d * phase_share_ratio(&u->ps);
	assert_int_equal(model_apply(u->before, MT_INPUT_ALLOC(&in)), 0);
	return addr;
}

static void release(struct run *u, int k, __u64 addr, __u64 size, __u64 t)
{
	u->truth[k] -= (double)size;
	model_apply(u->now, MT_INPUT_FREE(PID, addr, t));
	model_apply(u->before, MT_INPUT_FREE(PID, addr, t));
}

static void tick(struct run *u, __u64 t)
{
	const struct mt_site *c;
	double ratio = phase_share_ratio(&u->ps);
	struct mt_target_facts f = { .pid = PID, .set = MT_FACT_PHASE, .phase_seen = ratio };

	model_apply(u->now, MT_INPUT_FACTS(&f));
	model_apply(u->before, MT_INPUT_FACTS(&f));
	model_apply(u->now, MT_INPUT_TICK(t));
	model_apply(u->before, MT_INPUT_TICK(t));
	if ((double)t / S_NS < CACHE_FILL_S + 10)
		return;
	c = site_of(u->now, CACHE);
	if (c && c->stats.leak_score > u->cache_worst_now)
		u->cache_worst_now = c->stats.leak_score;
	c = site_of(u->before, CACHE);
	if (c && c->stats.leak_score > u->cache_worst_before)
		u->cache_worst_before = c->stats.leak_score;
}

static void simulate(struct run *u, double d, double slow0, double slow1, double secs, __u64 seed)
{
	const __u64 end = (__u64)(secs * S_NS);
	__u64 t = 0, next = 0, next_feed = FEED_NS, next_tick = S_NS, phased = 0, frees = 0;
	__u64 cache_done = 0, leaks_done = 0, round = 0;
	struct budget b;
	bool was_on = true;
	int k;

	memset(u, 0, sizeof(*u));
	for (k = 0; k < NSTREAM; k++) {
		u->st[k][0] = frame(names[k], 10 + (__u32)k);
		u->st[k][1] = frame("main", 100);
	}
	u->now = new_model();
	u->before = new_model();
	u->d = d;
	u->r = (__u64)((double)RATE * d);
	budget_init(&b, 10, seed);
	b.duty = d;
	sampler_init(&u->sm, u->r, table, seed);
	phase_share_init(&u->ps);
	phase_share_feed(&u->ps, t, phased, frees, SLOWDOWN_ON, d);
	while (t < end) {
		bool on = budget_phase(&b, t, &next);
		double now_s = (double)t / S_NS, slow = slow0 + (slow1 - slow0) * now_s / secs;
		__u64 due;

		if (on != was_on) {
			phase_share_feed(&u->ps, t, phased, frees,
					 was_on ? SLOWDOWN_ON : SLOWDOWN_OFF, d);
			was_on = on;
		}
		if (t >= next_feed) {
			phase_share_feed(&u->ps, t, phased, frees, on ? SLOWDOWN_ON : SLOWDOWN_OFF,
					 d);
			next_feed = t + FEED_NS;
		}
		if (t >= next_tick) {
			tick(u, t);
			next_tick += S_NS;
		}
		/* the clock's streams: what is due by now */
		due = now_s < CACHE_FILL_S
			      ? (__u64)(now_s * CACHE_ENTRIES / CACHE_FILL_S)
			      : CACHE_ENTRIES + (__u64)((now_s - CACHE_FILL_S) * CACHE_REPLACE_PER_S);
		for (; cache_done < due; cache_done++) {
			__u64 *slot = &u->cache_addr[cache_done % CACHE_ENTRIES];

			if (*slot) {
				release(u, CACHE, *slot, CACHE_SIZE, t);
				frees++;
			}
			*slot = allocate(u, CACHE, CACHE_SIZE, t, on);
			phased += on;
		}
		for (due = (__u64)(now_s * TIMER_LEAK_PER_S); leaks_done < due; leaks_done++) {
			allocate(u, TIMER_LEAK, TIMER_LEAK_SIZE, t, on);
			phased += on;
		}
		/* the work: its pairs (never sampled here: freed at once, they
		 * add nothing to in-use) and its leak */
		phased += on ? PAIRS_PER_ROUND : 0;
		frees += PAIRS_PER_ROUND;
		if (++round % WORK_LEAK_EVERY == 0) {
			allocate(u, WORK_LEAK, WORK_LEAK_SIZE, t, on);
			phased += on;
		}
		t += on ? (__u64)(ROUND_NS * slow) : ROUND_NS;
	}
	tick(u, t);
	u->end_ns = t;
}

/* Live samples' relative error of a stream's in-use (Poisson). */
static double rel_sigma(const struct mt_site *s)
{
	return s && s->live_samples ? 1 / sqrt((double)s->live_samples) : 1;
}

static void report(const struct run *u, double slow0, double slow1)
{
	int k;

	print_message("slow %.1f to %.1f, duty %.2f, phase_seen %.3f\n", slow0, slow1, u->d,
		      phase_share_ratio(&u->ps));
	for (k = 0; k < NSTREAM; k++) {
		const struct mt_site *n = site_of(u->now, k), *b = site_of(u->before, k);

		print_message("  %-10s truth %8.0f KiB: %.3f of it (range %.3f-%.3f, %llu live "
			      "samples, score %3.0f); before %.3f (score %3.0f)\n",
			      names[k], u->truth[k] / KiB, n ? n->inuse_bytes / u->truth[k] : 0,
			      n ? n->stats.inuse_low_bytes / u->truth[k] : 0,
			      n ? n->stats.inuse_high_bytes / u->truth[k] : 0,
			      n ? (unsigned long long)n->live_samples : 0ULL,
			      n ? n->stats.leak_score : 0, b ? b->inuse_bytes / u->truth[k] : 0,
			      b ? b->stats.leak_score : 0);
	}
	print_message("  cache_put's highest score after its fill: %.0f (before: %.0f)\n",
		      u->cache_worst_now, u->cache_worst_before);
}

static void free_run(struct run *u)
{
	model_free(u->now);
	model_free(u->before);
}

/* A server the probes slow (its rounds twice as long while they are on),
 * with a cache and a leak on timers: both are seen for the share d of
 * time the probes are on, so the duty alone weighs them right. The old
 * weight (by the process's share, half of d) doubled them, and since it
 * was 1 until measured and then settled over a minute, the cache's
 * replaced entries came back heavier each lifetime: a ramp. */
static void test_clock_paced_streams(void **state)
{
	struct run u;
	const struct mt_site *cache, *leak, *work;
	__u64 seed;

	(void)state;
	for (seed = 1; seed <= 3; seed++) {
		simulate(&u, 0.1, 1.5, 4.0, 75, seed);
		report(&u, 1.5, 4.0);
		cache = site_of(u.now, CACHE);
		leak = site_of(u.now, TIMER_LEAK);
		work = site_of(u.now, WORK_LEAK);
		assert_non_null(cache);
		assert_non_null(leak);
		assert_non_null(work);
		/* the process's share: about half of d (1/2 / (0.1/2 + 0.9)) */
		assert_true(phase_share_ratio(&u.ps) < 0.7);
		/* the bias the old weight had: twice the cache and the leak */
		assert_true(site_of(u.before, CACHE)->inuse_bytes > 1.5 * u.truth[CACHE]);
		assert_true(site_of(u.before, TIMER_LEAK)->inuse_bytes > 1.5 * u.truth[TIMER_LEAK]);
		/* every replaced entry's free was reported, sampled or not, in
		 * every phase: those of blocks never sampled (most of them, and
		 * all made while the probes were off) take nothing out */
		assert_true(model_drops(u.now)->unknown_frees > 0.9 * (CACHE_REPLACE_PER_S * 60));
		/* in-use of the clock's streams within 4 sigma of their truth */
		assert_true(fabs(cache->inuse_bytes / u.truth[CACHE] - 1) < 4 * rel_sigma(cache));
		assert_true(fabs(leak->inuse_bytes / u.truth[TIMER_LEAK] - 1) < 4 * rel_sigma(leak));
		/* the work's stream: inside the range, the figure at its low end */
		assert_true(work->stats.inuse_low_bytes <
			    u.truth[WORK_LEAK] * (1 + 4 * rel_sigma(work)));
		assert_true(work->stats.inuse_high_bytes >
			    u.truth[WORK_LEAK] * (1 - 4 * rel_sigma(work)));
		assert_true(work->stats.inuse_high_bytes > 1.4 * work->stats.inuse_low_bytes);
		assert_true(work->stats.inuse_rel_err > MT_APPROX_REL_ERR);
		/* the cache never looks like a leak; the leaks do */
		assert_true(u.cache_worst_now <= 30);
		assert_true(leak->stats.leak_score >= 70);
		assert_true(work->stats.leak_score >= 70);
		free_run(&u);
	}
}

/* A server the probes do not slow: the process's share is d, the range
 * closes, nothing is shown as uncertain beyond sampling. */
static void test_unslowed_server(void **state)
{
	struct run u;
	const struct mt_site *work;

	(void)state;
	simulate(&u, 0.1, 1.0, 1.0, 40, 7);
	report(&u, 1.0, 1.0);
	work = site_of(u.now, WORK_LEAK);
	assert_non_null(work);
	assert_true(fabs(phase_share_ratio(&u.ps) - 1) < 0.1);
	assert_true(work->stats.inuse_high_bytes < 1.1 * work->stats.inuse_low_bytes);
	assert_true(fabs(work->inuse_bytes / u.truth[WORK_LEAK] - 1) < 4 * rel_sigma(work));
	free_run(&u);
}

/* The error shown with a figure drawn under the duty cycle is its true
 * error: over many runs of a server the probes do not slow (so the pace
 * range is closed and only chance is left), the clock's streams' errors
 * in units of the shown one (inuse_rel_err) have a spread of about 1 (a
 * little less: one countdown for all streams samples more evenly than
 * independent draws would). Without the schedule's share
 * (sampling_schedule_rel_sd) it is too small: for the cache, whose live
 * samples all fall in its last 16 s of cycles, the spread in units of
 * the sampler's error alone is about 1.3. */
static void test_shown_error_is_the_error(void **state)
{
	const int runs = 100, streams[] = { CACHE, TIMER_LEAK };
	const double d = 0.1;
	double z2[2] = { 0 }, zs2[2] = { 0 };
	struct run u;
	int i, j;

	(void)state;
	for (i = 0; i < runs; i++) {
		simulate(&u, d, 1.0, 1.0, 30, 1000 + (__u64)i);
		for (j = 0; j < 2; j++) {
			const struct mt_site *s = site_of(u.now, streams[j]);
			double err, age, sched, sampler;

			assert_non_null(s);
			err = s->inuse_bytes / u.truth[streams[j]] - 1;
			/* every live sample was drawn at duty d (from the start) */
			age = (u.end_ns - s->oldest_live_ns) / 1e9;
			sched = sampling_schedule_rel_sd(1 - d, age);
			assert_true(sched > 0 && s->stats.inuse_rel_err > sched);
			sampler = sqrt(pow(s->stats.inuse_rel_err, 2) - sched * sched);
			z2[j] += pow(err / s->stats.inuse_rel_err, 2);
			zs2[j] += pow(err / sampler, 2);
		}
		free_run(&u);
	}
	for (j = 0; j < 2; j++) {
		double sd = sqrt(z2[j] / runs), sd_sampler = sqrt(zs2[j] / runs);

		print_message("%-10s error / shown error: sd %.2f over %d runs (/ the sampler's "
			      "alone: %.2f)\n",
			      names[streams[j]], sd, runs, sd_sampler);
		assert_true(sd > 0.6 && sd < 1.15);
		if (streams[j] == CACHE)
			assert_true(sd_sampler > 1.15);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_clock_paced_streams),
		cmocka_unit_test(test_unslowed_server),
		cmocka_unit_test(test_shown_error_is_the_error),
	};

	sampling_exp_table(table);
	return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_budget.c - the --max-overhead controller and the probes' cost:
 * the slowdown formula (no clamp short of 1000x), the cost of a hit and
 * the target's own work identified from adjacent phases with the
 * allocation probes off and on (slowdown.h) on a simulated target, robust
 * to a load spike, how uncertain the target's own work still is, following a load that changes the cost of a hit, a duty that lands under the limit
 * in one step and says when the probes that stay on alone exceed it, and
 * a randomised on/off schedule that is on a share d of the time and does
 * not alias with a periodic workload, also when attaching takes tens of
 * milliseconds.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <cmocka.h>

#include "probe/budget.h"
#include "probe/slowdown.h"

static void test_slowdown_formula(void **state)
{
	/* half of the target's CPU time in probes: it ran twice as long */
	assert_true(fabs(slowdown_pct(5e8, 1e9) - 100.0) < 1e-9);
	assert_true(fabs(slowdown_pct(1e8, 1e9) - 100.0 / 9) < 1e-9);
	/* 10x and 50x are reported as such, not clamped at 99 % of the time */
	assert_true(fabs(slowdown_pct(10e8 / 11 * 10, 10e8) - 1000.0) < 1e-6);
	assert_true(fabs(slowdown_pct(1e9 * 50 / 51, 1e9) - 5000.0) < 1e-6);
	assert_true(slowdown_pct(0, 1e9) == 0);
	assert_true(slowdown_pct(1e6, 0) == 0);
	assert_true(slowdown_pct(2e9, 1e9) == 100000.0); /* finite */
}

/*
 * A simulated CPU-bound target: each free stands for `work_ns` of its own
 * CPU, each allocation-probe hit costs `hit_ns` and each free() hit
 * `free_hit_ns` (0: the same), with `alloc_hits` allocation calls (and
 * hits) per free when those probes are on. Steps of 250 ms.
 */
struct sim {
	double work_ns, hit_ns, alloc_hits;
	__u64 t, cpu, hits, frees;
	double free_hit_ns;
	__u64 allocs;
	double sample_cost_ns, samples_per_alloc; /* beyond the hits; 0: none */
	__u64 sample_ns;
	bool count_only;     /* nothing sampled (memtop's start-up) */
	bool hide_sample_ns; /* sample_ns not given to the measure */
	double work_done_ns; /* the target's own work so far */
	/* 0: CPU-bound (one CPU busy); else a light target paced by the
	 * clock, this many frees a second whatever they cost */
	double frees_per_s;
};

static void sim_feed(struct sim *s, struct slowdown *sd, enum slowdown_state state)
{
	struct slowdown_reading r = { s->cpu, s->hits, s->frees, s->allocs,
				      s->hide_sample_ns ? 0 : s->sample_ns };

	slowdown_feed(sd, s->t, &r, state);
}

static void sim_state(struct sim *s, struct slowdown *sd, enum slowdown_state state, __u64 dt)
{
	double fh = state == SLOWDOWN_FREES_OFF ? 0 : 1;
	double ah = state == SLOWDOWN_OFF ? 0 : s->alloc_hits;
	double per_free =
		s->work_ns + (s->free_hit_ns > 0 ? s->free_hit_ns : s->hit_ns) * fh + s->hit_ns * ah;
	double spa = s->count_only || state != SLOWDOWN_ON ? 0 : s->samples_per_alloc;
	double n;

	per_free += ah * spa * (s->sample_cost_ns + s->hit_ns); /* and its return hit */
	/* frees in the step: one CPU busy, or as the clock paces them */
	n = s->frees_per_s > 0 ? s->frees_per_s * (double)dt / 1e9 : (double)dt / per_free;
	s->t += dt;
	s->cpu += (__u64)(n * per_free);
	s->work_done_ns += n * s->work_ns;
	s->frees += (__u64)(n * fh);
	s->allocs += (__u64)(n * ah);
	s->hits += (__u64)(n * (fh + ah * (1 + spa)));
	s->sample_ns += (__u64)(n * ah * spa * s->sample_cost_ns);
	sim_feed(s, sd, state);
}

static void sim_step(struct sim *s, struct slowdown *sd, bool on, __u64 dt)
{
	sim_state(s, sd, on ? SLOWDOWN_ON : SLOWDOWN_OFF, dt);
}

/* An attach or a detach: for a share `part` of the step the allocation
 * probes fire, and the target's work per free is `slow` times its own
 * (what a switch that disturbs it would look like). */
static void sim_switch(struct sim *s, struct slowdown *sd, double part, double slow, __u64 dt)
{
	double h = 1 + part * s->alloc_hits;
	double n = (double)dt / (s->work_ns * slow + s->hit_ns * h);

	s->t += dt;
	s->cpu += dt;
	s->frees += (__u64)n;
	s->hits += (__u64)(n * h);
	s->allocs += (__u64)(n * part * s->alloc_hits);
	sim_feed(s, sd, SLOWDOWN_SWITCHING);
}

/* The first reading, then memtop's three start-up cycles of 60 ms phases
 * (app.c): allocation probes off, all on, free() off, all on. */
static void sim_startup(struct sim *s, struct slowdown *sd)
{
	int i;

	sim_step(s, sd, true, 1);
	s->count_only = true;
	for (i = 0; i < 3; i++) {
		sim_state(s, sd, SLOWDOWN_OFF, 60000000ULL);
		sim_state(s, sd, SLOWDOWN_ON, 60000000ULL);
		sim_state(s, sd, SLOWDOWN_FREES_OFF, 60000000ULL);
		sim_state(s, sd, SLOWDOWN_ON, 60000000ULL);
	}
	s->count_only = false;
}

static void check_identifies(double work_ns, double hit_ns)
{
	struct sim s = { work_ns, hit_ns, 1.0, 1000000000ULL, 0, 0, 0 };
	struct slowdown sd;
	struct slowdown_est est;
	double truth = 100.0 * hit_ns * 2 / work_ns; /* at full duty */
	bool measured;
	int i;

	slowdown_init(&sd, 700, false); /* a calibration well off the truth */
	sim_startup(&s, &sd);
	for (i = 0; i < 12; i++)
		sim_step(&s, &sd, true, 250000000ULL);
	assert_true(fabs(slowdown_cost_ns(&sd, &measured) - hit_ns) < 0.01 * hit_ns);
	assert_true(measured);
	assert_int_equal(slowdown_window(&sd, 0, SLOWDOWN_REPORT_NS, &est), 0);
	print_message("work %.0f ns/free, hit %.0f ns: slowdown %.1f%% (truth %.1f%%), floor %.1f%%\n",
		      work_ns, hit_ns, est.slowdown_pct, truth, est.floor_pct);
	assert_true(fabs(est.slowdown_pct - truth) < 0.03 * truth);
	assert_true(fabs(est.floor_pct - truth / 2) < 0.03 * truth);
	assert_true(est.span_ns <= SLOWDOWN_REPORT_NS &&
		    est.span_ns >= SLOWDOWN_REPORT_NS - 250000000ULL);
}

static void test_identifies_cost(void **state)
{
	check_identifies(20000, 1500); /* 15 % */
	check_identifies(3000, 1500);  /* 100 % */
	check_identifies(200, 1600);   /* 16x */
}

/* A free() hit costs less than an allocation hit (1,114 against 1,177 ns
 * on a quiet VM, tests/bench/phases.py, with 249 ns of own work a free).
 * Pairs of allocation probes off and on see only the allocation hit's
 * cost, and taking the free() hit to cost the same read the slowdown
 * 1.37 times the truth at 9x (2.2 times it in tests/bench/slowdown.py);
 * the start-up's free()-off steps measure the ratio. */
static double heavy_slowdown(bool with_frees_off, double *ratio, struct slowdown_est *out)
{
	struct sim s = { 249, 1177, 1.0, 1000000000ULL, 0, 0, 0, 1114, 0 };
	struct slowdown sd;
	struct slowdown_est est;
	int i;

	slowdown_init(&sd, 700, false);
	if (with_frees_off) {
		sim_startup(&s, &sd);
	} else {
		sim_step(&s, &sd, true, 1);
		for (i = 0; i < 6; i++)
			sim_step(&s, &sd, i % 2, 60000000ULL);
	}
	for (i = 0; i < 12; i++)
		sim_step(&s, &sd, true, 250000000ULL);
	assert_int_equal(slowdown_window(&sd, 0, SLOWDOWN_REPORT_NS, &est), 0);
	*ratio = sd.free_ratio;
	*out = est;
	return est.slowdown_pct;
}

static void test_free_hit_costs_less(void **state)
{
	double truth = 100.0 * (1114 + 1177) / 249, r_old, r_new;
	struct slowdown_est e_old, e_new;
	double old = heavy_slowdown(false, &r_old, &e_old);
	double now = heavy_slowdown(true, &r_new, &e_new);

	print_message("free() hit 0.95 of an allocation hit: slowdown %.0f%% with free()-off "
		      "steps (ratio %.3f, range %.0f-%.0f%%), %.0f%% without (range %.0f-%.0f%%), "
		      "truth %.0f%%\n",
		      now, r_new, e_new.low_pct, e_new.high_pct, old, e_old.low_pct, e_old.high_pct,
		      truth);
	assert_true(fabs(r_new - 1114.0 / 1177) < 0.01);
	assert_true(fabs(now - truth) < 0.03 * truth);
	assert_true(r_old == 1 && old > 1.25 * truth);
	/* r taken as 1 is off by the truth's 5% here: the range says so */
	assert_true(e_old.low_pct <= truth && truth <= e_old.high_pct);
	assert_true(e_old.high_pct - e_old.low_pct > e_new.high_pct - e_new.low_pct);
}

/* Under the budget at duty 0.1 samples are drawn ten times as densely in
 * the on-phases (one in 100 allocations here, 5 us each beyond its
 * hits). Pairs that count that into the cost of an allocation hit put the
 * free() hit's cost, r times it, too high and the target's own work too
 * low: the heavy row of tests/bench/slowdown.py read 1.3 times the truth
 * under the budget. The BPF side times what samples cost (sample_ns), and
 * the measure takes it out of the CPU time. */
static double budget_slowdown(bool hide_sample_ns, double *truth)
{
	struct sim s = { 249, 1177, 1.0, 1000000000ULL, 0, 0, 0, 1114, 0, 5000, 0.01 };
	struct slowdown sd;
	struct slowdown_est est;
	__u64 since = 0;
	double cpu0 = 0, work0 = 0;
	int i;

	s.hide_sample_ns = hide_sample_ns;
	slowdown_init(&sd, 700, false);
	sim_startup(&s, &sd);
	for (i = 0; i < 40; i++) {
		if (i == 36) {
			since = s.t;
			cpu0 = (double)s.cpu;
			work0 = s.work_done_ns;
		}
		sim_step(&s, &sd, false, 900000000ULL);
		sim_step(&s, &sd, true, 100000000ULL);
	}
	*truth = 100.0 * (((double)s.cpu - cpu0) / (s.work_done_ns - work0) - 1);
	assert_int_equal(slowdown_window(&sd, since, 4000000000ULL, &est), 0);
	return est.slowdown_pct;
}

static void test_dense_samples_under_budget(void **state)
{
	double truth, hidden = budget_slowdown(true, &truth), now = budget_slowdown(false, &truth);

	print_message("budget, samples 5 us each: slowdown %.0f%% with their time taken out, "
		      "%.0f%% without, truth %.0f%%\n",
		      now, hidden, truth);
	assert_true(fabs(now - truth) < 0.03 * truth);
	assert_true(hidden > 1.15 * truth);
}

static void test_no_identification_without_off_phase(void **state)
{
	struct sim s = { 2000, 1500, 1.0, 1000000000ULL, 0, 0, 0 };
	struct slowdown sd;
	bool measured;
	int i;

	slowdown_init(&sd, 700, false);
	for (i = 0; i < 10; i++)
		sim_step(&s, &sd, true, 250000000ULL);
	assert_true(slowdown_cost_ns(&sd, &measured) == 700);
	assert_false(measured);
	/* one off step is one pair: not enough */
	sim_step(&s, &sd, false, 60000000ULL);
	sim_step(&s, &sd, true, 60000000ULL);
	assert_false(slowdown_cost_ns(&sd, &measured) != 700 || measured);
}

/* A light target under the budget's smallest duty (cg_leaker: 20,000
 * malloc/free pairs a second and little else, asleep in between): no
 * 100 ms on-phase holds the 5 ms of CPU a pair needs (4.5 ms here), so
 * its steps are summed over cycles, and the cost is still measured. */
static void test_light_target_measured(void **state)
{
	struct sim s = { 250, 1000, 1.0, 1000000000ULL, 0, 0, 0 };
	struct slowdown sd;
	struct slowdown_est est;
	double cpu0, work0, truth;
	bool measured;
	int i;

	s.frees_per_s = 20000;
	slowdown_init(&sd, 700, false);
	sim_startup(&s, &sd);
	for (i = 0; i < 20; i++) { /* cycles of 1 s at duty 0.1 */
		sim_step(&s, &sd, true, 100000000ULL);
		sim_step(&s, &sd, false, 250000000ULL);
		sim_step(&s, &sd, false, 250000000ULL);
		sim_step(&s, &sd, false, 250000000ULL);
		sim_step(&s, &sd, false, 150000000ULL);
	}
	assert_true(fabs(slowdown_cost_ns(&sd, &measured) - s.hit_ns) < 0.02 * s.hit_ns);
	assert_true(measured);
	cpu0 = (double)s.cpu;
	work0 = s.work_done_ns;
	for (i = 0; i < 3; i++) {
		sim_step(&s, &sd, true, 100000000ULL);
		sim_step(&s, &sd, false, 900000000ULL);
	}
	truth = 100.0 * ((double)s.cpu - cpu0 - (s.work_done_ns - work0)) / (s.work_done_ns - work0);
	assert_int_equal(slowdown_window(&sd, 0, SLOWDOWN_REPORT_NS, &est), 0);
	print_message("light target at duty 0.1: slowdown %.0f%% (truth %.0f%%), measured %d\n",
		      est.slowdown_pct, truth, est.measured);
	assert_true(est.measured);
	assert_true(fabs(est.slowdown_pct - truth) < 0.05 * truth);
}

/* A load spike in one step (the target's work per free doubles for it)
 * moves the median of the pairs little. */
static void test_identification_robust(void **state)
{
	struct sim s = { 3000, 1500, 1.0, 1000000000ULL, 0, 0, 0 };
	struct slowdown sd;
	bool measured;
	int i;

	slowdown_init(&sd, 700, false);
	sim_step(&s, &sd, true, 1);
	for (i = 0; i < 8; i++) {
		s.work_ns = i == 3 ? 6000 : 3000;
		sim_step(&s, &sd, false, 60000000ULL);
		s.work_ns = 3000;
		sim_step(&s, &sd, true, 60000000ULL);
	}
	assert_true(fabs(slowdown_cost_ns(&sd, &measured) - 1500) < 30);
	assert_true(measured);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Pairs of phases whose cost of a hit scatters by up to 6% from step to
 * step (a loaded machine; deterministic), n pairs after the first reading. */
static double own_uncertainty_after(double work_ns, double hit_ns, int n, unsigned int seed)
{
	struct sim s = { work_ns, hit_ns, 1.0, 1000000000ULL, 0, 0, 0 };
	struct slowdown sd;
	unsigned int x = seed;
	int i;

	slowdown_init(&sd, 700, false);
	sim_step(&s, &sd, true, 1);
	for (i = 0; i < n; i++) {
		bool on = i % 2;

		x = x * 1103515245u + 12345u;
		s.hit_ns = hit_ns * (0.94 + 0.12 * (double)(x >> 16 & 0x7fff) / 0x7fff);
		sim_step(&s, &sd, on, 60000000ULL);
	}
	return slowdown_own_uncertainty(&sd);
}

/* How sure the start-up is of the target's own CPU per free: nothing to
 * say without pairs, unknown below three, and where the free() probes
 * outweigh the target's own work (16x here) a few pairs leave it far
 * more uncertain than where the work dominates, and more pairs shrink it
 * (app.c's start-up phases go on until it is sharp). */
static void test_own_uncertainty(void **state)
{
	double h8[21], h30[21], l8[21], heavy8, heavy30, light8;
	unsigned int seed;

	for (seed = 0; seed < 21; seed++) { /* medians over 21 load patterns */
		h8[seed] = own_uncertainty_after(250, 2800, 9, seed + 1);
		h30[seed] = own_uncertainty_after(250, 2800, 31, seed + 1);
		l8[seed] = own_uncertainty_after(20000, 1500, 9, seed + 1);
	}
	qsort(h8, 21, sizeof(double), cmp_double);
	qsort(h30, 21, sizeof(double), cmp_double);
	qsort(l8, 21, sizeof(double), cmp_double);
	heavy8 = h8[10];
	heavy30 = h30[10];
	light8 = l8[10];

	print_message("own uncertainty: heavy %.3f after 8 pairs, %.3f after 30; light %.3f\n",
		      heavy8, heavy30, light8);
	assert_true(own_uncertainty_after(250, 2800, 0, 1) == 0);
	assert_true(isinf(own_uncertainty_after(250, 2800, 3, 1)));
	assert_true(light8 <= 0.08);
	assert_true(heavy8 > 0.08);
	assert_true(heavy30 < heavy8);
}

/* No figure before the target's own CPU per free is measured on it: a
 * target idle at the start-up, then busy at full duty, has only the
 * calibration's guess (700 ns a hit against 3 us here: a slowdown of 3.5x
 * read as 0.5x), which the budget may act on but the views must not show. */
static void test_not_measured_is_not_shown(void **state)
{
	struct sim s = { 2000, 3000, 1.0, 1000000000ULL, 0, 0, 0 };
	struct slowdown sd;
	struct slowdown_est est;
	int i;

	slowdown_init(&sd, 700, false);
	for (i = 0; i < 12; i++)
		sim_step(&s, &sd, true, 250000000ULL);
	assert_int_equal(slowdown_window(&sd, 0, SLOWDOWN_REPORT_NS, &est), 0);
	assert_false(est.measured);
	/* the budget's off-phases give pairs: measured from then on */
	for (i = 0; i < 8; i++)
		sim_step(&s, &sd, i % 2, 60000000ULL);
	for (i = 0; i < 12; i++)
		sim_step(&s, &sd, true, 250000000ULL);
	assert_int_equal(slowdown_window(&sd, 0, SLOWDOWN_REPORT_NS, &est), 0);
	assert_true(est.measured);
	assert_true(fabs(est.slowdown_pct - 300) < 0.03 * 300);
	assert_true(est.low_pct <= est.slowdown_pct && est.high_pct >= est.slowdown_pct);
}

/* A window after n start-up pairs whose cost of a hit scatters by 6%
 * from step to step, then 3 s at full duty: its estimate and its truth
 * (the target's CPU over its own work in those 3 s, minus 1). */
static double noisy_window(double work_ns, double hit_ns, int n, unsigned int seed,
			   struct slowdown_est *est)
{
	struct sim s = { work_ns, hit_ns, 1.0, 1000000000ULL, 0, 0, 0 };
	struct slowdown sd;
	unsigned int x = seed;
	__u64 cpu0 = 0;
	double work0 = 0;
	int i;

	slowdown_init(&sd, 700, false);
	sim_step(&s, &sd, true, 1);
	for (i = 0; i < n + 12; i++) {
		x = x * 1103515245u + 12345u;
		s.hit_ns = hit_ns * (0.94 + 0.12 * (double)(x >> 16 & 0x7fff) / 0x7fff);
		if (i == n) {
			cpu0 = s.cpu;
			work0 = s.work_done_ns;
		}
		sim_step(&s, &sd, i >= n || i % 2, i < n ? 60000000ULL : 250000000ULL);
	}
	assert_int_equal(slowdown_window(&sd, 0, SLOWDOWN_REPORT_NS, est), 0);
	return 100.0 * ((double)(s.cpu - cpu0) / (s.work_done_ns - work0) - 1);
}

/* Where the free() probes outweigh the target's own work (about 20x),
 * the figure rests on a small remainder and single attaches stray (0.4-
 * 2.6 of the truth were measured, probes.md 6.3; here 14 of 21 load
 * patterns are off by more than 25%, 0.47-15 times the truth): the range
 * shown with it covers the truth in 20 of 21 (13 of the 14 that stray;
 * without the term for a cost of a hit common to every pair, 19 and
 * 12: those read 0.48 and 0.57 of the truth from pairs that agreed by
 * chance). Where the work dominates the range is narrow and
 * shown as a plain figure. */
static void test_range_covers_truth(void **state)
{
	struct slowdown_est est;
	int seed, off = 0, covered = 0, off_covered = 0, narrow = 0;

	for (seed = 1; seed <= 21; seed++) {
		double truth = noisy_window(250, 2800, 9, (unsigned int)seed, &est);
		bool in = est.low_pct <= 1.1 * truth && est.high_pct >= truth / 1.1;
		bool stray = fabs(est.slowdown_pct / truth - 1) > 0.25;

		print_message("heavy, seed %2d: %6.0f%% (%.0f-%.0f%%), truth %.0f%%%s\n", seed,
			      est.slowdown_pct, est.low_pct, est.high_pct, truth,
			      stray ? " (off)" : "");
		assert_true(est.measured);
		covered += in;
		off += stray;
		off_covered += stray && in;
		truth = noisy_window(20000, 1500, 9, (unsigned int)seed, &est);
		narrow += est.high_pct - est.low_pct < 0.25 * (100 + est.slowdown_pct) &&
			  fabs(est.slowdown_pct / truth - 1) < 0.25;
	}
	print_message("heavy: %d of 21 off by more than 25%%, %d of them inside the range; "
		      "range covers %d of 21; light: %d of 21 narrow and right\n",
		      off, off_covered, covered, narrow);
	assert_true(off >= 3); /* the scatter this is about */
	assert_true(off_covered >= off - 2);
	assert_true(covered >= 19);
	assert_int_equal(narrow, 21);
}

/* The attach and the detach are steps of their own that no pair uses:
 * with the probes on for a part of them, and the target disturbed, they
 * would pull c and k off (c came out 100-775 ns instead of 2.5 us from
 * such pairs on a loaded VM). */
static void test_switch_steps_left_out(void **state)
{
	struct sim s = { 300, 2500, 1.0, 1000000000ULL, 0, 0, 0 };
	struct slowdown sd;
	struct slowdown_est est;
	bool measured;
	int i;

	slowdown_init(&sd, 700, false);
	sim_step(&s, &sd, false, 1);
	for (i = 0; i < 8; i++) {
		sim_step(&s, &sd, false, 200000000ULL);
		sim_switch(&s, &sd, 0.1, 3.0, 60000000ULL); /* attaching */
		sim_step(&s, &sd, true, 100000000ULL);
		sim_switch(&s, &sd, 0.3, 3.0, 100000000ULL); /* detaching */
	}
	sim_step(&s, &sd, false, 200000000ULL);
	assert_true(fabs(slowdown_cost_ns(&sd, &measured) - 2500) < 0.01 * 2500);
	assert_true(measured);
	assert_int_equal(slowdown_window(&sd, 0, 200000000ULL, &est), 0);
	print_message("with switches: slowdown %.0f%% off (truth %.0f%%)\n", est.slowdown_pct,
		      100.0 * 2500 / 300);
	assert_true(fabs(est.slowdown_pct - 100.0 * 2500 / 300) < 0.02 * 100.0 * 2500 / 300);
}

/* Other load on the machine changes what a probe hit costs (1.3-3.1 us
 * measured on one VM as the load average went from 1.5 to 12) but not the
 * target's own work per free. After the cost was identified, it halves,
 * then doubles, with no off-phase since: the slowdown follows the CPU time
 * the target really uses (it read 100000 %, the ceiling, when the stale
 * cost of a hit times the hits was taken from the CPU time, and
 * 97 % against 6000 % after the rise). */
static void test_follows_load(void **state)
{
	struct sim s = { 200, 3000, 1.0, 1000000000ULL, 0, 0, 0 };
	const double costs[] = { 1500, 6000 };
	struct slowdown sd;
	struct slowdown_est est;
	int i, j;

	slowdown_init(&sd, 700, false);
	sim_startup(&s, &sd);
	for (j = 0; j < 2; j++) {
		double truth;

		s.hit_ns = costs[j];
		truth = 100.0 * s.hit_ns * 2 / s.work_ns;
		for (i = 0; i < 16; i++)
			sim_step(&s, &sd, true, 250000000ULL);
		assert_int_equal(slowdown_window(&sd, 0, SLOWDOWN_REPORT_NS, &est), 0);
		print_message("hit %.0f ns now: slowdown %.0f%% (truth %.0f%%), floor %.0f%%\n",
			      s.hit_ns, est.slowdown_pct, truth, est.floor_pct);
		assert_true(fabs(est.slowdown_pct - truth) < 0.03 * truth);
		assert_true(fabs(est.floor_pct - truth / 2) < 0.03 * truth);
	}
}

/* A busy target whose cost was identified goes idle: its few frees now
 * come with 100 times the CPU each (timers, polls), and cpu / (k * frees)
 * would call it all probes (10,300% here); no window's probes cost more
 * than a few times c a hit, so it stays within that of the truth (4%). */
static void test_idle_window(void **state)
{
	struct sim s = { 1000, 2000, 1.0, 1000000000ULL, 0, 0, 0 };
	struct slowdown sd;
	struct slowdown_est est;
	double truth;
	int i;

	slowdown_init(&sd, 700, false);
	sim_startup(&s, &sd);
	s.work_ns = 100000;
	truth = 100.0 * s.hit_ns * 2 / s.work_ns;
	for (i = 0; i < 16; i++)
		sim_step(&s, &sd, true, 250000000ULL);
	assert_int_equal(slowdown_window(&sd, 0, SLOWDOWN_REPORT_NS, &est), 0);
	print_message("idle: slowdown %.1f%% (truth %.1f%%), floor %.1f%%\n", est.slowdown_pct,
		      truth, est.floor_pct);
	assert_true(est.slowdown_pct >= truth && est.slowdown_pct <= 5 * truth);
	assert_true(est.floor_pct <= est.slowdown_pct);
}

/* Slowdown s at duty d for a target whose probes that stay on cost
 * `floor` and the allocation probes `alloc` at full duty. */
static double at_duty(double floor, double alloc, double d)
{
	return floor + alloc * d;
}

static void test_controller_one_step(void **state)
{
	struct budget b;
	double s;

	budget_init(&b, 10, 1);
	s = at_duty(3, 37, 1);
	budget_update(&b, s, 3, 1);
	s = at_duty(3, 37, b.duty);
	assert_true(s <= 10.0 + 1e-9 && s >= 8.0); /* under, not far under */
	assert_false(b.unreachable);
	assert_true(b.ever_paused);
	/* the load goes away: at most doubles per step, back to 1 */
	double d = b.duty;

	budget_update(&b, at_duty(0.3, 3.7, b.duty), 0.3, 2);
	assert_true(fabs(b.duty - 2 * d) < 1e-9);
	for (int i = 0; i < 10; i++)
		budget_update(&b, at_duty(0.3, 3.7, b.duty), 0.3, 3 + i);
	assert_true(b.duty == 1.0);
}

static void test_controller_floor(void **state)
{
	struct budget b;

	budget_init(&b, 10, 1);
	budget_update(&b, at_duty(40, 200, 1), 40, 1); /* free() alone: 40 % */
	assert_true(fabs(b.duty - BUDGET_MIN_DUTY) < 1e-9);
	assert_true(b.unreachable);
	assert_true(b.floor_pct == 40);
	budget_update(&b, at_duty(2, 10, b.duty), 2, 2); /* the load went away */
	assert_false(b.unreachable);
}

/* Share of time on, and the on-phases' positions against a period of p. */
static void test_schedule(void **state)
{
	const __u64 step = 1000000, total = 400 * BUDGET_PERIOD_NS;
	const double duties[] = { 0.1, 0.25, 0.6 };
	const __u64 periods[] = { BUDGET_PERIOD_NS, BUDGET_PERIOD_NS / 2 };

	for (size_t k = 0; k < sizeof(duties) / sizeof(duties[0]); k++) {
		for (size_t q = 0; q < sizeof(periods) / sizeof(periods[0]); q++) {
			struct budget b;
			double on = 0, bins[10] = { 0 }, n[10] = { 0 };
			__u64 t, t0, next;

			budget_init(&b, 10, 7 + k);
			/* at full duty for a long time first (uptime), then cut */
			budget_phase(&b, 100 * BUDGET_PERIOD_NS, &next);
			b.duty = duties[k];
			t0 = 100 * BUDGET_PERIOD_NS;
			for (t = t0 + step; t < t0 + total; t += step) {
				bool is_on = budget_phase(&b, t, &next);
				int bin = (int)(t % periods[q] * 10 / periods[q]);

				on += is_on;
				bins[bin] += is_on;
				n[bin]++;
			}
			on /= (double)(total / step);
			assert_true(fabs(on - duties[k]) < 0.03);
			/* every tenth of a workload's period is watched about
			 * as often: no aliasing */
			for (int i = 0; i < 10; i++)
				assert_true(fabs(bins[i] / n[i] - duties[k]) < 0.06);
		}
	}
}

/* Attaching takes 0-90 ms (measured on a loaded 2-vCPU VM) and the
 * probes fire from its start; the breakpoints go at the start of a
 * detach. With the on-phase timed from the start of the attach, the share
 * of time on is still d (timed from the end of the attach, with switches
 * late by at most 50 ms, malloc's entry read as int3 0.13-0.14 of the
 * time at d = 0.1). */
static void test_schedule_slow_attach(void **state)
{
	const __u64 ms = 1000000, total = 600 * BUDGET_PERIOD_NS;
	const double duties[] = { 0.1, 0.3 };
	__u64 rng = 12345;

	for (size_t k = 0; k < sizeof(duties) / sizeof(duties[0]); k++) {
		struct budget b;
		__u64 t, t0 = 100 * BUDGET_PERIOD_NS, next, on_ns = 0;
		bool really_on = true;

		budget_init(&b, 10, 3 + k);
		budget_phase(&b, t0, &next);
		b.duty = duties[k];
		for (t = t0; t < t0 + total;) {
			bool want = budget_phase(&b, t, &next);

			rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
			if (want && !really_on) {
				__u64 took = (rng >> 33) % 90 * ms;

				on_ns += took;
				t += took;
				budget_started(&b, t - took);
				budget_phase(&b, t, &next);
				really_on = true;
			} else if (!want && really_on) {
				really_on = false;
			}
			if (next <= t)
				next = t + ms;
			if (really_on)
				on_ns += next - t;
			t = next;
		}
		print_message("duty %.2f, attaching in 0-90 ms: on %.3f of the time\n", duties[k],
			      (double)on_ns / (double)(t - t0));
		assert_true(fabs((double)on_ns / (double)(t - t0) - duties[k]) < 0.015);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_slowdown_formula),
		cmocka_unit_test(test_identifies_cost),
		cmocka_unit_test(test_free_hit_costs_less),
		cmocka_unit_test(test_dense_samples_under_budget),
		cmocka_unit_test(test_no_identification_without_off_phase),
		cmocka_unit_test(test_identification_robust),
		cmocka_unit_test(test_light_target_measured),
		cmocka_unit_test(test_follows_load),
		cmocka_unit_test(test_idle_window),
		cmocka_unit_test(test_switch_steps_left_out),
		cmocka_unit_test(test_own_uncertainty),
		cmocka_unit_test(test_not_measured_is_not_shown),
		cmocka_unit_test(test_range_covers_truth),
		cmocka_unit_test(test_controller_one_step),
		cmocka_unit_test(test_controller_floor),
		cmocka_unit_test(test_schedule),
		cmocka_unit_test(test_schedule_slow_attach),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

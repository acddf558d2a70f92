/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * slowdown.h - what the probes cost one target, from the CPU time the
 * kernel charges it (docs/probes.md section 6).
 *
 * Every trap runs in the target's context, so the probes' cost is part of
 * its CPU time: over a span, cpu = work + c * hits, with c the cost of one
 * probe hit in this target (trap, BPF program, the cache damage after it).
 * The work is unknown, but free() calls are counted exactly in every phase
 * and are a measure of it: cpu / frees = k + c * hits / frees, with k the
 * target's own CPU per free. Two adjacent steps, one with the allocation
 * probes off (the start-up window's phases and the budget's off-phases)
 * and one with them on, not counting the attach or detach between them,
 * give that line at two points, so
 *
 *     c = (Y_on - Y_off) / (H_on - H_off),   Y = cpu / frees, H = hits / frees
 *     k = Y_off - c * H_off
 *
 * and c and k are the medians of the last SLOWDOWN_PAIRS such pairs. A
 * target too light for one step to hold enough CPU (at the budget's
 * smallest duty an on-phase is 100 ms: 4 ms of CPU for a process doing
 * 20,000 free() a second and little else) pairs the sums of its on and
 * its off steps over the cycles it takes, within STRETCH_MAX_NS. That
 * c is what an allocation hit costs (the free() hits are in both steps
 * alike), and k takes a free() hit to cost the same. It does not: free()
 * is probed at a branch, malloc at a push, and their programs differ; on
 * a quiet machine a free() hit cost 1,114 ns and an allocation hit 1,177
 * (tests/bench/phases.py), and at 10x that 5% made the slowdown read
 * twice the truth. So the start-up also has steps with free() and
 * realloc() off and the allocation probes counting, never sampling
 * (SLOWDOWN_FREES_OFF): there the work is counted by the phased
 * allocation calls, at the allocation calls per free of the adjacent
 * step with every probe on, and
 *
 *     k = Y_frees_off - c * H_frees_off
 *     r = (Y_off - k) / (c * H_off)       (a free() hit costs r * c)
 *
 * r is the median of its estimates, and every pair's k is then
 * Y_off - r * c * H_off. What the BPF program spends on a sample beyond
 * its hits (the stack copy and walk, the ring: timed there, sample_ns) is
 * taken out of the CPU time in all of these: under the budget the
 * sampling interval shrinks by the duty, and samples ten times as dense
 * in the on-steps made c an allocation hit plus a tenth of a sample,
 * which at 5x read the slowdown 1.3 times the truth. The
 * slowdown over a window is the CPU the target used against what its own
 * work took, cpu / (k * frees) - 1: k, the target's own work, is what
 * stays when the load on the machine changes (measured: 4.9-5.2 us a
 * request bare at load averages 1.5 to 12, while a probe hit cost
 * 1.3-3.1 us), so the window's own CPU carries the cost of the hits as
 * they are now. Until k is measured, or in a window without frees, it is
 * c * hits / (cpu - c * hits), with c the start-up calibration on memtop
 * itself (a lower bound) until measured.
 *
 * A process that samples itself (usdt: memtop's sampler in it, the Go
 * runtime) has no probes to switch off, so nothing is identified: its
 * cost is what it spends outside its own work, all of it counted, over
 * the CPU it used: c * hits (the traps of sampled calls), the BPF
 * program's time on samples (sample_ns), and what the sampler's own path
 * costs its counted calls (self_ns, inject_cost.h), so the slowdown is
 * (c * hits + sample_ns + self_ns) / (cpu - that).
 */
#ifndef MEMTOP_SLOWDOWN_H
#define MEMTOP_SLOWDOWN_H

#include <stdbool.h>
#include <linux/types.h>

#define SLOWDOWN_STEPS 64                /* readings kept for the windows */
#define SLOWDOWN_TAU_S 30.0              /* memory of the hits per free while off */
#define SLOWDOWN_PAIRS 31                /* on/off pairs the cost is the median of */
#define SLOWDOWN_REPORT_NS 3000000000ULL /* the window of the reported slowdown */

/* The allocation probes during a step: off, on, or coming or going (an
 * attach or a detach: on a loaded machine 0-90 ms and 25-225 ms, with the
 * probes firing for part of it). Switching steps count in windows but
 * never in a pair: they made pairs with 1.06-1.5 hits per free "on". */
enum slowdown_state { SLOWDOWN_OFF, SLOWDOWN_ON, SLOWDOWN_SWITCHING, SLOWDOWN_FREES_OFF };

/* The target's cumulative CPU time and counters at one moment. */
struct slowdown_reading {
	__u64 cpu_ns;
	__u64 hits;      /* probe hits */
	__u64 frees;     /* free() calls */
	__u64 allocs;    /* phased allocation calls (all but realloc) */
	__u64 sample_ns; /* the BPF program's time on samples (sample_ns) */
	__u64 self_ns;   /* what a process that samples itself spent on it
			  * outside the probes (inject_cost.h), 0 if unknown */
};

struct slowdown_step {
	__u64 t_ns; /* end of the step */
	__u64 dt_ns;
	double cpu_ns, hits;
	double sample_ns; /* of cpu_ns, spent on samples beyond their hits */
	double self_ns;   /* of cpu_ns, spent by an in-process sampler's own path */
	double frees;     /* with free() off: the frees its allocation calls stand for */
	double allocs;    /* phased allocation calls (all but realloc) */
	enum slowdown_state state;
};

struct slowdown {
	double floor_ns; /* calibrated cost of a hit: c is never below */
	double cost_ns;  /* c, identified or floor_ns */
	double own_ns;   /* k, once identified */
	bool identified;
	bool usdt;                     /* the process samples itself: hits are sampled
			       * events only, cost_ns stays the floor */
	double acc[2][3];              /* [off, on][cpu_ns, hits, frees], decayed */
	double pair[SLOWDOWN_PAIRS];   /* recent pair estimates of c */
	double pair_y[SLOWDOWN_PAIRS]; /* ... and the Y and H of their off step */
	double pair_h[SLOWDOWN_PAIRS];
	double pair_own[SLOWDOWN_PAIRS]; /* their k, at the free_ratio of now */
	int npair, pair_head;
	double ratio[SLOWDOWN_PAIRS]; /* estimates of r from free()-off steps */
	int nratio, ratio_head;
	double free_ratio;      /* r: a free() hit costs r * c (1 until measured) */
	double allocs_per_free; /* in the newest step with every probe on */
	double off_y, off_h;    /* Y and H of the newest step with allocations off */
	bool have_off;
	/* A light target's steps since the last pair, summed by state [off,
	 * on]: where no two adjacent steps hold enough to pair, the stretches
	 * of several cycles do (slowdown.c, identify). */
	struct slowdown_step stretch[2];
	__u64 stretch_since_ns;
	struct slowdown_step step[SLOWDOWN_STEPS];
	int nstep, head; /* ring of steps, head: next slot */
	__u64 last_t;
	struct slowdown_reading last;
	bool have_last;
};

/* What a window says. */
struct slowdown_est {
	__u64 span_ns;       /* wall time covered */
	double cpu_ns;       /* the target's CPU time in it */
	double slowdown_pct; /* cpu / (k * frees) - 1, %: see above */
	double floor_pct;    /* the part of it free() and realloc() cost
				* (the probes that stay on) */
	double on_share;     /* share of the span with allocation probes on */
	/* The figure rests on the target's own CPU per free measured on it
	 * (or the process samples itself). Until then slowdown_pct is the
	 * calibration's guess, for the budget to act on, never to be shown:
	 * the calibration on memtop was 0.9-10 us a hit on a loaded machine,
	 * and a first window read 100000% on a target whose true slowdown
	 * was 2x. */
	bool measured;
	/* What k's uncertainty allows (slowdown_own_uncertainty(), two
	 * standard errors): at a slowdown S an error e in k is an error of
	 * (1 + S) e in S. high_pct is INFINITY when k could be zero; both
	 * are slowdown_pct when nothing is uncertain (USDT). */
	double low_pct, high_pct;
};

void slowdown_init(struct slowdown *s, double floor_ns, bool usdt);

/* A reading at t_ns; state: the probes' since the last reading. Read
 * before and after every switch of the probes, so a step has one state. */
void slowdown_feed(struct slowdown *s, __u64 t_ns, const struct slowdown_reading *r,
		   enum slowdown_state state);

/* The estimate over the steps that ended after since_ns, at most the
 * last max_ns of them. 0, or -EAGAIN: no CPU time in the window. */
int slowdown_window(const struct slowdown *s, __u64 since_ns, __u64 max_ns, struct slowdown_est *out);

/* The cost of one hit used now (ns), and whether it was measured on the
 * target (true) or is the calibration on memtop (false). */
double slowdown_cost_ns(const struct slowdown *s, bool *identified);

/* How uncertain the target's own CPU per free (k) still is: the relative
 * standard error of the median of the pair estimates (1.253 x the
 * spread they show, 1.4826 x their median absolute deviation, over the
 * square root of their number, against k). 0 without any pair (nothing
 * to learn from: an idle process), INFINITY below PAIR_MIN pairs or with
 * k <= 0. At a slowdown S an error e in k is an error of about (1 + S) e
 * in S, so this is what a start-up needs to shrink when S is large. */
double slowdown_own_uncertainty(const struct slowdown *s);

/* Slowdown (%) of a target that spent probe_ns of its cpu_ns in probes:
 * probe_ns / (cpu_ns - probe_ns), up to 100000% (1000x). */
double slowdown_pct(double probe_ns, double cpu_ns);

#endif /* MEMTOP_SLOWDOWN_H */

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
 * and c and k are the medians of the last SLOWDOWN_PAIRS such pairs. The
 * slowdown over a window is the CPU the target used against what its own
 * work took, cpu / (k * frees) - 1: k, the target's own work, is what
 * stays when the load on the machine changes (measured: 4.9-5.2 us a
 * request bare at load averages 1.5 to 12, while a probe hit cost
 * 1.3-3.1 us), so the window's own CPU carries the cost of the hits as
 * they are now. Until k is measured, or in a window without frees, it is
 * c * hits / (cpu - c * hits), with c the start-up calibration on memtop
 * itself (a lower bound) until measured.
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
enum slowdown_state { SLOWDOWN_OFF, SLOWDOWN_ON, SLOWDOWN_SWITCHING };

struct slowdown_step {
	__u64 t_ns; /* end of the step */
	__u64 dt_ns;
	double cpu_ns, hits, frees;
	enum slowdown_state state;
};

struct slowdown {
	double floor_ns; /* calibrated cost of a hit: c is never below */
	double cost_ns;  /* c, identified or floor_ns */
	double own_ns;   /* k, once identified */
	bool identified;
	bool usdt;                       /* the process samples itself: hits are sampled
			       * events only, cost_ns stays the floor */
	double acc[2][3];                /* [off, on][cpu_ns, hits, frees], decayed */
	double pair[SLOWDOWN_PAIRS];     /* recent pair estimates of c */
	double pair_own[SLOWDOWN_PAIRS]; /* and of k, from the same pairs */
	int npair, pair_head;
	struct slowdown_step step[SLOWDOWN_STEPS];
	int nstep, head; /* ring of steps, head: next slot */
	__u64 last_t, last_cpu, last_hits, last_frees;
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
};

void slowdown_init(struct slowdown *s, double floor_ns, bool usdt);

/* A reading at t_ns of the target's CPU time and counters (probe hits,
 * free calls); state: the allocation probes' since the last reading. Read
 * before and after every switch of the probes, so a step has one state. */
void slowdown_feed(struct slowdown *s, __u64 t_ns, __u64 cpu_ns, __u64 hits, __u64 frees,
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

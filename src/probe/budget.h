/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * budget.h - keeping the probes' cost to a target within --max-overhead.
 *
 * The cost is measured, not assumed: probe hits times the calibrated cost
 * of one hit, against the CPU time the target itself used in the same
 * interval (traps are charged to it). If a fraction f of the target's CPU
 * time went to probes, it ran 1/(1-f) times slower: the estimated slowdown
 * is f/(1-f). Above the budget, the allocation probes are switched on for
 * only a fraction `duty` of each period (free() stays probed so in-use
 * accounting stays sound) and samples are weighted by 1/duty.
 */
#ifndef MEMTOP_BUDGET_H
#define MEMTOP_BUDGET_H

#include <stdbool.h>
#include <linux/types.h>

#define BUDGET_PERIOD_NS 1000000000ULL /* one on/off cycle */
#define BUDGET_MIN_DUTY 0.1 /* below this, estimates get too noisy (weight x10) */

struct budget {
	double limit_pct;    /* allowed slowdown, % */
	double duty;	     /* fraction of each period with allocation probes on */
	double slowdown_pct; /* last measured */
	bool ever_paused;
	bool unreachable;    /* even at the smallest duty the slowdown is above the
			      * limit: free() probes alone cost more */
	__u64 period_start_ns;
};

void budget_init(struct budget *b, double limit_pct);

/* Slowdown (%) of a target that spent probe_ns of its cpu_ns in probes. */
double budget_slowdown_pct(double probe_ns, double cpu_ns);

/* Feed the worst target's slowdown over the last interval; adapts and
 * returns the duty. */
double budget_update(struct budget *b, double slowdown_pct);

/* Should the allocation probes be on at now? *next_ns gets the time of
 * the next switch (or the next period start when always on). */
bool budget_phase(struct budget *b, __u64 now_ns, __u64 *next_ns);

#endif /* MEMTOP_BUDGET_H */

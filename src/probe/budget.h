/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * budget.h - keeping the probes' cost to a target within --max-overhead.
 *
 * The cost is measured on the target (slowdown.h): the slowdown S it
 * suffers over a window, and the part F of it that the probes which stay
 * on (free, realloc) cost. The allocation probes' part, S - F, scales with
 * the duty d, the share of time they are on, so the duty that meets a
 * target T is d * (T - F) / (S - F); when F alone is at or above the
 * limit no duty meets it (unreachable). Decreases apply at once (the
 * target must not suffer), increases at most double the duty.
 *
 * The on/off schedule is randomised so that it cannot alias with a
 * periodic workload: an on-phase of d * BUDGET_PERIOD_NS, then an
 * off-phase drawn uniformly from [0, 2 (1 - d) / d] times the length the
 * on-phase really had, so the long-run share of time on is d and any
 * instant is on with probability d. "Really had" counts from the start
 * of the attach (budget_started: the first probes fire before it
 * returns, which takes up to 90 ms on a loaded machine) to the decision
 * to detach (the breakpoints go first; the rest of a detach, 25-225 ms,
 * is waiting for RCU).
 * Samples taken while on are weighted by 1/d (sampling.h).
 */
#ifndef MEMTOP_BUDGET_H
#define MEMTOP_BUDGET_H

#include <stdbool.h>
#include <linux/types.h>

#include "util/sampling.h"

#define BUDGET_PERIOD_NS SAMPLING_DUTY_CYCLE_NS /* mean on/off cycle */
#define BUDGET_MIN_DUTY 0.1 /* below this, big allocations are seen too rarely */
#define BUDGET_AIM 0.9      /* aim at this share of the limit */

struct budget {
	double limit_pct;    /* allowed slowdown, % */
	double duty;         /* fraction of time with allocation probes on */
	double slowdown_pct; /* last measured */
	double floor_pct;    /* the part of it the probes that stay on cost */
	bool ever_paused;
	bool unreachable; /* the probes that stay on cost more than the limit */
	__u64 changed_ns; /* when the duty last changed */
	bool on;          /* the schedule's state */
	__u64 phase_start_ns;
	__u64 off_until_ns;
	__u64 rng;
};

void budget_init(struct budget *b, double limit_pct, __u64 seed);

/* How long after a change of duty a measure must span before the
 * controller acts on it: a few on/off cycles while duty-cycling. */
__u64 budget_settle_ns(const struct budget *b);

/* Feed the worst target's slowdown and floor (%) over a window that
 * started after the last change; adapts and returns the duty. */
double budget_update(struct budget *b, double slowdown_pct, double floor_pct, __u64 now_ns);

/* The allocation probes began to attach at began_ns (attaching takes
 * time, and the first probes fire before it returns): the on-phase is
 * measured from there. */
void budget_started(struct budget *b, __u64 began_ns);


/* Should the allocation probes be on at now? *next_ns gets the time of
 * the next switch (or a period ahead when always on). */
bool budget_phase(struct budget *b, __u64 now_ns, __u64 *next_ns);

#endif /* MEMTOP_BUDGET_H */

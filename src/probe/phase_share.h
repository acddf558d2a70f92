/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * phase_share.h - how much of one target's allocations the duty-cycled
 * allocation probes really see, against the share the duty promises
 * (docs/probes.md section 6.5).
 *
 * Under the overhead budget a sample weighs 1/d: an allocation is taken to
 * fall in an on-phase with probability d, the share of time the probes
 * are on. That holds for a stream that does not notice the probes. A
 * target the probes slow does less of its work while they are on (a loop
 * that computes, allocates and sleeps runs fewer rounds per second), and
 * the probes are on for a little more or less than d of the time (attach
 * and detach take up to 0.2 s on a loaded machine): measured at duty 0.1,
 * such a C loop had 5.3% of its allocations seen, and its in-use read 0.48
 * of the truth (docs/probes.md 6.5).
 *
 * Both are measured from exact counters. free() is probed and counted in
 * every phase, so it counts the target's work; the phased allocation calls
 * (all but realloc) are counted only when seen. With m the phased calls
 * per free in the steps with the probes on,
 *
 *     ratio = seen phased calls / (m * sum over steps of d * frees)
 *
 * summed over whole on/off cycles (from the start of one on-phase to the
 * next) and decayed with PHASE_SHARE_TAU_S: the share seen over the share
 * promised, 1 when the target's allocations are as likely to be seen as
 * the schedule says. Samples then weigh 1 / (d * ratio * p). The cycle
 * under way is left out: a sample is drawn in an on-phase, and the cycles
 * before it are independent of it, while a sum that ended inside its
 * cycle would be at its lowest then (the on-phase's calls not yet in,
 * the off-phase's frees all in), which made the estimate run 1.6 times
 * the truth. It assumes, like the cost measure (slowdown.h), that the
 * target's allocations per free do not depend on the phase. Until
 * PHASE_SHARE_MIN_CYCLES cycles and enough frees in both kinds of step
 * have been seen (or for a process without frees) it is 1.
 */
#ifndef MEMTOP_PHASE_SHARE_H
#define MEMTOP_PHASE_SHARE_H

#include <stdbool.h>
#include <linux/types.h>

#include "probe/slowdown.h"

#define PHASE_SHARE_TAU_S 60.0   /* memory of the counts */
#define PHASE_SHARE_MIN_CYCLES 3 /* whole cycles seen before the ratio counts */
#define PHASE_SHARE_MIN_FREES 1000.0
#define PHASE_SHARE_MIN 0.05 /* bounds of a ratio believed */
#define PHASE_SHARE_MAX 5.0

/* What a stretch of cycles saw. */
struct phase_counts {
	double on_calls, on_frees; /* in steps with the probes on */
	double seen_calls;         /* in every step */
	double promised_frees;     /* sum of d * frees */
};

struct phase_share {
	struct phase_counts done; /* whole cycles, decayed */
	struct phase_counts cur;  /* the cycle under way */
	double cycles;            /* whole cycles in done, decayed */
	bool in_cycle;            /* cur began at an on-phase */
	enum slowdown_state last_state;
	__u64 last_t, last_calls, last_frees, done_t;
	bool have_last;
};

void phase_share_init(struct phase_share *p);

/* A reading at t_ns of the target's phased calls and frees (cumulative
 * counters); state: the allocation probes' since the last reading, duty
 * the budget's duty over that step. */
void phase_share_feed(struct phase_share *p, __u64 t_ns, __u64 phased_calls, __u64 frees,
		      enum slowdown_state state, double duty);

/* The share of its phased allocations seen over the share promised: 1
 * until measured. */
double phase_share_ratio(const struct phase_share *p);

#endif /* MEMTOP_PHASE_SHARE_H */

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * overhead.h - the overhead controller: what the probes cost the targets,
 * kept within --max-overhead and said in the run's status.
 *
 * It measures the cost at start-up (overhead_measure_unprobed: short
 * phases with the allocation probes or free() off, so that a process
 * already running has its cost from the first interval), then every
 * OVERHEAD_STEP_NS (overhead_tick): reads the worst target's slowdown,
 * adapts the duty (budget.h), and follows the budget's on/off schedule
 * (overhead_switch). The status fields it owns (input/status.h): the
 * slowdown estimate and its range, the floor, the cost of a hit, the duty,
 * the phase rate, backed_off, budget_unreachable and the budget's note.
 *
 * It acts only through a port (the watch set and the BPF program's phase
 * in a live run, bound in app.c; a simulated target in
 * tests/unit/test_overhead.c) and reads time only from the port's clock,
 * so that it can be driven on a fake one.
 */
#ifndef MEMTOP_OVERHEAD_H
#define MEMTOP_OVERHEAD_H

#include <stdbool.h>
#include <linux/types.h>

#include "input/status.h"
#include "probe/budget.h"
#include "probe/slowdown.h"
#include "probe/watch.h"

/* How often the budget measures and adapts, whatever -d says. */
#define OVERHEAD_STEP_NS 250000000ULL

struct overhead_port {
	void *ctx;
	__u64 (*now)(void *ctx);
	/* The cost measure's current step ends at now, in state. */
	void (*measure)(void *ctx, __u64 now, enum slowdown_state state);
	/* The allocation probes on or off (they attach or detach). */
	void (*set_allocs)(void *ctx, bool on);
	/* free() and realloc() off or back on (the start-up measure only). */
	void (*set_frees)(void *ctx, bool on);
	/* The BPF side's phase: its sampling interval (0: the load-time
	 * one), its duty, and whether the allocation probes are on. */
	void (*set_phase)(void *ctx, __u64 rate, double duty, bool on);
	/* Count calls without sampling them (the start-up measure). */
	void (*set_count_only)(void *ctx, bool on);
	/* The duty samples are weighted with from now on. */
	void (*set_duty)(void *ctx, double duty);
	/* The worst target's cost over the steps since since_ns, at most
	 * max_ns of them, only targets with switchable probes if
	 * switched_only: 0, or non-zero when no target has a measure. */
	int (*cost)(void *ctx, __u64 since_ns, __u64 max_ns, bool switched_only,
		    struct watch_cost *out);
	/* How uncertain the targets' own work per call still is (relative). */
	double (*own_uncertainty)(void *ctx);
	/* Wait ms milliseconds; true when memtop was asked to stop. */
	bool (*wait)(void *ctx, int ms);
	/* The probes were paused: the targets' counts are not exact. Said
	 * when an off-phase of the schedule begins, and at every step
	 * while the duty is below 1. */
	void (*paused)(void *ctx);
};

struct overhead {
	struct overhead_port port;
	struct budget budget;
	__u64 rate; /* --rate */
	bool allocs_on;
	bool frees_off;    /* the start-up measure has free() off */
	__u64 last_off_ns; /* the allocation probes were last off then */
	__u64 off_ns;      /* how long they were off, up to off_from_ns */
	__u64 off_from_ns; /* while off: since when */
	__u64 next_switch_ns;
	__u64 next_step_ns;
	bool note_shown;       /* status->message is the budget's note */
	double note_floor_pct; /* the floor the note says */
};

/* Allocation probes on, no step taken yet; seed for the schedule. */
void overhead_init(struct overhead *o, const struct overhead_port *port, __u64 rate,
		   double limit_pct, __u64 seed, struct mt_status *status);

/* Before the display, for processes that already run (not for -- CMD):
 * the cost measured from alternating phases, until it is sharp or a
 * bound passes; true when memtop was asked to stop meanwhile. */
bool overhead_measure_unprobed(struct overhead *o);

/* The next time overhead_run has something to do. */
__u64 overhead_next_ns(const struct overhead *o);

/* At or after overhead_next_ns: a step of the controller when due (into
 * status), then the schedule's switch. */
void overhead_run(struct overhead *o, __u64 now, struct mt_status *status);

/* Were the allocation probes on for all of [since_ns, now]? (the rates
 * of an interval are exact then) */
bool overhead_on_since(const struct overhead *o, __u64 since_ns);

/* How long the allocation probes have been off in all, up to now: the
 * difference over an interval, over its length, is the share of it they
 * were off. */
__u64 overhead_off_ns(const struct overhead *o, __u64 now);

/* The probes have been paused at some time: counts are not exact. */
bool overhead_ever_paused(const struct overhead *o);

#endif /* MEMTOP_OVERHEAD_H */

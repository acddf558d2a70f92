// SPDX-License-Identifier: GPL-2.0-only
/*
 * overhead.c - the overhead controller (overhead.h): the budget's duty and
 * on/off schedule (budget.h) applied through the port, the start-up
 * measure, and the status fields that say the cost.
 */
#include "probe/overhead.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void overhead_init(struct overhead *o, const struct overhead_port *port, __u64 rate,
		   double limit_pct, __u64 seed, struct mt_status *status)
{
	memset(o, 0, sizeof(*o));
	o->port = *port;
	o->rate = rate;
	o->allocs_on = true;
	budget_init(&o->budget, limit_pct, seed);
	status->duty = 1.0;
	status->phase_rate = rate;
	status->budget_pct = limit_pct;
}

/* The sampling interval while the allocation probes are on for a share
 * duty of the time: rate * duty, so that as many samples are taken per
 * second as at full duty (docs/probes.md section 6). 0: the load-time
 * rate. */
static __u64 phase_rate(const struct overhead *o)
{
	double r = (double)o->rate * o->budget.duty;

	if (o->rate <= 1 || o->budget.duty >= 1.0)
		return 0;
	return r < 1 ? 1 : (__u64)r;
}

static enum slowdown_state allocs_state(const struct overhead *o)
{
	if (o->frees_off)
		return SLOWDOWN_FREES_OFF;
	return o->allocs_on ? SLOWDOWN_ON : SLOWDOWN_OFF;
}

/* Switch the allocation probes. The cost measure's steps have one state:
 * one ends before the switch, and the switch itself (the attach or the
 * detach, with the probes coming or going) is a step of its own. */
static void set_allocs(struct overhead *o, bool on, __u64 now)
{
	const struct overhead_port *p = &o->port;

	p->measure(p->ctx, now, allocs_state(o));
	if (on)
		p->set_phase(p->ctx, phase_rate(o), o->budget.duty, true);
	p->set_allocs(p->ctx, on);
	if (!on)
		p->set_phase(p->ctx, phase_rate(o), o->budget.duty, false);
	if (o->allocs_on != on)
		p->measure(p->ctx, p->now(p->ctx), SLOWDOWN_SWITCHING);
	if (!on || o->allocs_on != on)
		o->last_off_ns = now;
	if (o->allocs_on && !on)
		o->off_from_ns = now;
	else if (!o->allocs_on && on && now > o->off_from_ns)
		o->off_ns += now - o->off_from_ns;
	o->allocs_on = on;
}

/* Follow the budget's on/off schedule, timing each on-phase from the
 * start of its attach (budget.h). */
static void switch_phase(struct overhead *o, __u64 now)
{
	bool on = budget_phase(&o->budget, now, &o->next_switch_ns);
	__u64 began = o->port.now(o->port.ctx);

	if (on == o->allocs_on)
		return;
	set_allocs(o, on, now);
	if (on)
		budget_started(&o->budget, began);
	else
		/* said now, not at the next step: a process that ends
		 * before it missed calls all the same */
		o->port.paused(o->port.ctx);
}

/* free() and realloc() off or back on, for the start-up measure only
 * (count_only: nothing is sampled, so no sampled block loses its free). */
static void set_frees(struct overhead *o, bool on)
{
	const struct overhead_port *p = &o->port;

	p->measure(p->ctx, p->now(p->ctx), allocs_state(o));
	p->set_frees(p->ctx, on);
	o->frees_off = !on;
	p->measure(p->ctx, p->now(p->ctx), SLOWDOWN_SWITCHING);
}

/* The start-up measure: a short stretch of 60 ms phases, in cycles of
 * four: only the probes that stay on (free, realloc), all of them, only
 * the allocation probes, all of them, so that the cost of an allocation
 * hit, what a free() hit costs against it and the target's own work are
 * measured on each target (slowdown.h) from the first interval.
 * Alternating, not one window each, so that a load that drifts meanwhile
 * weighs on all. Nothing is sampled meanwhile: with free() off a sampled
 * block could lose its free.
 *
 * Three cycles are enough where the target's own work outweighs what its
 * free() probes cost. Where it does not (a loop slowed 10x or more), its
 * own CPU per free is a small remainder and one pair's estimate of it
 * scattered from -8 to 2.2 times the truth (heavy row of
 * tests/bench/slowdown.py at load 6-11): the cycles go on while that
 * estimate is uncertain by more than UNPROBED_SHARP, for at most
 * UNPROBED_MAX_NS, since at full cost there are no pairs after the
 * start-up (docs/probes.md section 6.2). */
#define UNPROBED_PHASE_MS 60
#define UNPROBED_CYCLES 3
#define UNPROBED_SHARP 0.08
#define UNPROBED_MAX_NS 2500000000ULL

/* One cycle; true when memtop was asked to stop. */
static bool unprobed_cycle(struct overhead *o)
{
	const struct overhead_port *p = &o->port;

	set_allocs(o, false, p->now(p->ctx));
	if (p->wait(p->ctx, UNPROBED_PHASE_MS))
		return true;
	set_allocs(o, true, p->now(p->ctx));
	if (p->wait(p->ctx, UNPROBED_PHASE_MS))
		return true;
	set_frees(o, false);
	if (p->wait(p->ctx, UNPROBED_PHASE_MS))
		return true;
	set_frees(o, true);
	return p->wait(p->ctx, UNPROBED_PHASE_MS);
}

bool overhead_measure_unprobed(struct overhead *o)
{
	const struct overhead_port *p = &o->port;
	__u64 began = p->now(p->ctx);
	bool stop = false;
	int i;

	p->set_count_only(p->ctx, true);
	for (i = 0;; i++) {
		if (i >= UNPROBED_CYCLES && (p->own_uncertainty(p->ctx) <= UNPROBED_SHARP ||
					     p->now(p->ctx) - began >= UNPROBED_MAX_NS))
			break;
		if ((stop = unprobed_cycle(o)))
			break;
	}
	if (o->frees_off)
		set_frees(o, true);
	if (!o->allocs_on)
		set_allocs(o, true, p->now(p->ctx));
	p->set_count_only(p->ctx, false);
	o->budget.changed_ns = p->now(p->ctx);
	return stop;
}

/* The note's figure is kept while the floor measured since stays within
 * a quarter of it: the first estimates, a second after attaching, are the
 * roughest (one said 190 % while the floor was 529 % half a minute on). */
static bool note_is_stale(double said_pct, double floor_pct)
{
	return fabs(floor_pct - said_pct) > 0.25 * said_pct;
}

static void say_unreachable(struct overhead *o, struct mt_status *st)
{
	bool replace = !o->note_shown || !strcmp(st->message, st->budget_note);

	o->note_floor_pct = o->budget.floor_pct;
	snprintf(st->budget_note, sizeof(st->budget_note),
		 "free() probes alone cost this process %.0f%%: the budget of %.0f%% cannot be met; "
		 "for near-zero cost run it under `memtop -- CMD` (in-process sampler) or use --inject",
		 o->budget.floor_pct, o->budget.limit_pct);
	/* a newer message of another cause is not overwritten by a refresh */
	if (replace)
		snprintf(st->message, sizeof(st->message), "%s", st->budget_note);
	o->note_shown = true;
}

/* A note the budget wrote whose cause is gone (the budget is met again, or
 * the process exited) is taken back. */
static void clear_note(struct overhead *o, struct mt_status *st)
{
	if (o->note_shown && !strcmp(st->message, st->budget_note))
		st->message[0] = '\0';
	st->budget_note[0] = '\0';
	o->note_shown = false;
}

/* The controller, on a window that began after the last change of duty. */
static void control(struct overhead *o, __u64 now, struct mt_status *st)
{
	const struct overhead_port *p = &o->port;
	struct watch_cost c;
	double old = o->budget.duty;

	if (p->cost(p->ctx, o->budget.changed_ns, 2 * budget_settle_ns(&o->budget), true, &c)) {
		/* no live target with probes to switch used CPU: nothing to
		 * keep under the limit (an in-process sampler's cost is
		 * reported, but no phase would lower it: said when over) */
		struct watch_cost all;

		o->budget.unreachable = false;
		st->inprocess_over_pct =
			o->budget.limit_pct > 0 &&
					!p->cost(p->ctx, 0, SLOWDOWN_REPORT_NS, false, &all) &&
					all.slowdown_pct > o->budget.limit_pct
				? all.slowdown_pct
				: 0;
		return;
	}
	st->inprocess_over_pct = 0;
	if (c.span_ns < budget_settle_ns(&o->budget))
		return;
	budget_update(&o->budget, c.slowdown_pct, c.floor_pct, now);
	if (o->budget.duty == old)
		return;
	/* the step so far was at the old duty */
	p->measure(p->ctx, now, allocs_state(o));
	p->set_duty(p->ctx, o->budget.duty);
	if (o->allocs_on)
		/* a new phase at the new rate and duty */
		p->set_phase(p->ctx, phase_rate(o), o->budget.duty, true);
}

/* Every OVERHEAD_STEP_NS: measure what the probes cost, adapt the duty. */
static void step(struct overhead *o, __u64 now, struct mt_status *st)
{
	const struct overhead_port *p = &o->port;
	struct watch_cost c;

	p->measure(p->ctx, now, allocs_state(o));
	if (!p->cost(p->ctx, 0, SLOWDOWN_REPORT_NS, false, &c)) {
		st->est_slowdown_pct = c.slowdown_pct;
		st->est_slowdown_measured = c.measured;
		st->est_slowdown_low_pct = c.low_pct;
		st->est_slowdown_high_pct = c.high_pct;
		st->floor_pct = c.floor_pct;
		st->cost_ns = c.cost_ns;
		st->cost_measured = c.cost_measured;
	} else {
		st->est_slowdown_pct = 0;
		st->est_slowdown_measured = false;
		st->floor_pct = 0;
	}
	if (o->budget.limit_pct <= 0)
		return;
	control(o, now, st);
	st->duty = o->budget.duty;
	st->phase_rate = phase_rate(o) ? phase_rate(o) : o->rate;
	st->backed_off = o->budget.duty < 1.0;
	if (o->budget.unreachable &&
	    (!st->budget_unreachable || note_is_stale(o->note_floor_pct, o->budget.floor_pct)))
		say_unreachable(o, st);
	else if (!o->budget.unreachable && st->budget_unreachable)
		clear_note(o, st);
	st->budget_unreachable = o->budget.unreachable;
	if (o->budget.ever_paused)
		p->paused(p->ctx); /* the probes missed calls */
}

__u64 overhead_next_ns(const struct overhead *o)
{
	return o->next_step_ns < o->next_switch_ns ? o->next_step_ns : o->next_switch_ns;
}

void overhead_run(struct overhead *o, __u64 now, struct mt_status *status)
{
	if (now >= o->next_step_ns) {
		step(o, now, status);
		o->next_step_ns = now + OVERHEAD_STEP_NS;
		switch_phase(o, now); /* a smaller duty may end this period's on-phase now */
	} else if (now >= o->next_switch_ns) {
		switch_phase(o, now);
	}
}

bool overhead_on_since(const struct overhead *o, __u64 since_ns)
{
	return o->allocs_on && o->last_off_ns < since_ns;
}

__u64 overhead_off_ns(const struct overhead *o, __u64 now)
{
	return o->off_ns + (!o->allocs_on && now > o->off_from_ns ? now - o->off_from_ns : 0);
}

bool overhead_ever_paused(const struct overhead *o)
{
	return o->budget.ever_paused;
}

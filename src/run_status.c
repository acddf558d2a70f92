// SPDX-License-Identifier: GPL-2.0-only
/*
 * run_status.c - the status's figures that follow from the model
 * (run_status.h).
 */
#include "run_status.h"

bool run_status_counters_exact(const struct mt_model *m, bool ever_paused)
{
	size_t i;

	if (ever_paused)
		return false;
	for (i = 0; i < model_target_count(m); i++)
		if (!model_target_at(m, i)->counters_exact)
			return false;
	return true;
}

void run_status_refresh(struct mt_status *st, const struct mt_model *m, const struct run_status_in *in)
{
	double dt = model_interval_s(m), hits = 0;
	size_t i;

	st->counters_exact = run_status_counters_exact(m, in->ever_paused);
	for (i = 0; i < model_target_count(m); i++)
		hits += model_target_at(m, i)->probe_hits_per_s;
	st->probe_hits_per_s = hits;
	/* hits/s x ns per hit, as a percentage of one CPU's second */
	st->est_cpu_pct = hits * (st->cost_ns > 0 ? st->cost_ns : st->trap_ns) / 1e7;
	st->events_per_s = dt > 0 ? in->records / dt : 0;
	st->all_exited = in->alive == 0 && !in->pending && !st->cgroup.on;
	st->cgroup.processes = in->alive;
}

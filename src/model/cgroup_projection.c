// SPDX-License-Identifier: GPL-2.0-only
/*
 * cgroup_projection.c - the fit of a cgroup's memory.current and its
 * projection to the limit (cgroup_projection.h).
 */
#include "model/cgroup_projection.h"

void cgroup_projection_init(struct cgroup_projection *p)
{
	history_init(&p->current);
}

void cgroup_projection_add(struct cgroup_projection *p, double now_s, struct mt_cgroup_status *cg)
{
	double t[MT_HIST_POINTS], v[MT_HIST_POINTS];
	struct mt_fit fit;
	int n;

	history_push(&p->current, now_s, (double)cg->mem.current);
	n = history_window(&p->current, now_s - CGROUP_FIT_WINDOW_S, t, v, MT_HIST_POINTS);
	stats_fit(t, v, n, &fit);
	cg->growth_bytes_per_s = fit.n ? fit.slope : 0;
	cg->growth_r2 = fit.r2;
	cg->time_to_max_s = -1;
	if (cg->mem.max && fit.n && fit.slope > 0 && cg->mem.current < cg->mem.max)
		cg->time_to_max_s = (double)(cg->mem.max - cg->mem.current) / fit.slope;
}

bool cgroup_oom_end(const struct mt_cgroup_status *cg, __s64 oom_kill_prev,
		    const struct cgroup_mem *now, struct mt_target_end *e)
{
	__s64 before;

	if (!cg->have_mem)
		return false;
	before = cg->mem.oom_kill;
	if (oom_kill_prev >= 0 && oom_kill_prev < before)
		before = oom_kill_prev;
	if (now->oom_kill < 0 || now->oom_kill <= before)
		return false;
	e->kind = MT_END_OOM;
	e->have_cgroup = true;
	e->cg_current = cg->mem.current;
	e->cg_max = cg->mem.max;
	e->cg_oom_kill = now->oom_kill;
	return true;
}

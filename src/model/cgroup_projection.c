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

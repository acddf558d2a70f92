/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * cgroup_projection.h - a cgroup's memory over time, and when it reaches
 * its limit at the current pace: each reading of memory.current is kept
 * in a bounded history (stats.h), the last CGROUP_FIT_WINDOW_S of it is
 * fitted by least squares, and the slope, its r^2 and the time to
 * memory.max at that slope go into the run's status (input/status.h).
 * Pure: the caller reads the cgroup and gives the time.
 */
#ifndef MEMTOP_CGROUP_PROJECTION_H
#define MEMTOP_CGROUP_PROJECTION_H

#include "input/status.h"
#include "model/stats.h"

/* The window of memory.current the projection is fitted on. */
#define CGROUP_FIT_WINDOW_S 60.0

struct cgroup_projection {
	struct mt_history current;
};

void cgroup_projection_init(struct cgroup_projection *p);

/* cg->mem was read at now_s (monotonic seconds): its growth, r^2 and
 * time_to_max_s (< 0: not growing, no limit, or at it) from the fit. */
void cgroup_projection_add(struct cgroup_projection *p, double now_s, struct mt_cgroup_status *cg);

#endif /* MEMTOP_CGROUP_PROJECTION_H */

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * cgroup_projection.h - a cgroup's memory over time, and when it reaches
 * its limit at the current pace: each reading of memory.current is kept
 * in a bounded history (stats.h), the last CGROUP_FIT_WINDOW_S of it is
 * fitted by least squares, and the slope, its r^2 and the time to
 * memory.max at that slope go into the run's status (input/status.h).
 * Also whether a SIGKILL was the OOM killer's (cgroup_oom_end). Pure: the
 * caller reads the cgroup and gives the time.
 */
#ifndef MEMTOP_CGROUP_PROJECTION_H
#define MEMTOP_CGROUP_PROJECTION_H

#include <stdbool.h>

#include "input/status.h"
#include "model/model.h"
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

/* A watched process of the cgroup was SIGKILLed and its memory.events
 * reads now: a SIGKILL while the oom_kill count rose is the OOM killer's.
 * "Rose" is against cg (the last refresh's reading) and against
 * oom_kill_prev (the one before it; -1: unknown), as a refresh may run
 * between the kill and the moment the end is noticed. When it was, e
 * becomes MT_END_OOM with the cgroup's figures as last read before the
 * death, and true is returned. */
bool cgroup_oom_end(const struct mt_cgroup_status *cg, __s64 oom_kill_prev,
		    const struct cgroup_mem *now, struct mt_target_end *e);

#endif /* MEMTOP_CGROUP_PROJECTION_H */

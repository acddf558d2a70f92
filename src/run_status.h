/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * run_status.h - the run's figures of the status (input/status.h) that
 * follow from the model after a tick: whether the counters are exact,
 * the probe hits and the CPU they cost, the records per second, whether
 * everything watched has ended. Pure: the caller says what the data path
 * knows, the model says the rest.
 */
#ifndef MEMTOP_RUN_STATUS_H
#define MEMTOP_RUN_STATUS_H

#include <stdbool.h>
#include <linux/types.h>

#include "model/model.h"
#include "input/status.h"

/* What the data path knows at the tick. */
struct run_status_in {
	bool ever_paused; /* the budget paused the allocation probes at least once */
	__u64 records;    /* ring records taken since the last refresh */
	int alive;        /* watched processes alive */
	bool pending;     /* processes waiting to be watched (-p retried, -- CMD) */
};

/* The run's counters are exact only if every target's are and the
 * budget never paused the probes (docs/json.md). */
bool run_status_counters_exact(const struct mt_model *m, bool ever_paused);

/* Refresh st's figures from m and in (after the model's tick): counters
 * exact, probe hits per second, the CPU they cost (st->cost_ns, or the
 * calibration's st->trap_ns until it is measured), records per second
 * over the model's interval, all exited (never while watching a cgroup,
 * where a newcomer may come), the cgroup's processes. */
void run_status_refresh(struct mt_status *st, const struct mt_model *m,
			const struct run_status_in *in);

#endif /* MEMTOP_RUN_STATUS_H */

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * inject_cost.h - what memtop's sampler costs a process it runs in
 * (docs/inject.md "What it costs"), from calls it counts exactly.
 *
 * The sampler forwards every allocator call; while memtop is attached
 * each call also pays the sampler's own path (a count, a countdown, a
 * filter load for a free), each sample a table insert and remove, each
 * call of CPython's object allocator the wrapper's detour. None of that
 * traps, so the kernel's probe counters never see it: it is the sampler's
 * counts (struct mt_inject_slot) times a cost per call measured at
 * start-up on this machine by running the sampler's own code in memtop
 * (the file memtop maps into processes, mapped into memtop, its calls
 * forwarded to stubs), against the stubs called directly.
 */
#ifndef MEMTOP_PROBE_INJECT_COST_H
#define MEMTOP_PROBE_INJECT_COST_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "probe/inject.h"

struct inject_cost {
	double alloc_ns;  /* an allocation call through the sampler, not sampled */
	double free_ns;   /* a free through it, the pointer not sampled */
	double sample_ns; /* a sampled allocation and its free, beyond the two
			   * above (the table's insert and remove; the probes'
			   * traps are counted as probe hits) */
	double py_ns;     /* a call of CPython's object allocator through the
			   * wrapper, with the sampler's count of its small
			   * object or its free: plain adds in a slot of its
			   * own, not the atomic adds alloc_ns times */
	bool measured;    /* false: not calibrated, all 0 */
};

/* Time the sampler at sampler_so (about 20 ms). 0, or -errno with one line
 * in err (c is then all 0). */
int inject_cost_calibrate(const char *sampler_so, struct inject_cost *c, char *err, size_t errlen);

/* What the calls in n and samples samples cost the process, in ns of its
 * CPU time: the small objects the CPython wrapper counted and their frees
 * (py_allocs, py_frees) are in its py_calls' cost, not in alloc_ns's and
 * free_ns's. */
double inject_cost_ns(const struct inject_cost *c, const struct mt_inject_counts *n, __u64 samples);

#endif /* MEMTOP_PROBE_INJECT_COST_H */

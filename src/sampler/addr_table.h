/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * addr_table.h - for both samplers: a fixed-size, lock-free set of sampled
 * addresses for blocks that carry no header (the injected sampler's, and
 * the objects CPython's pymalloc serves, py_hook.h), with a counting filter
 * in front that answers "not sampled" for almost every free with one load.
 *
 * Open addressing over MT_INJECT_TABLE_SLOTS slots: a slot changes only by
 * compare-and-swap, a removed entry becomes a tombstone that a later
 * insert may reuse, and probes are bounded, so a full neighbourhood drops
 * the sample (counted in *dropped). MT_INJECT_FILTER_SLOTS counters hold
 * how many live addresses hash to each. The caller passes its own arrays
 * (no pointers stored in data: the injected copy has no relocations).
 */
#ifndef MEMTOP_SAMPLER_ADDR_TABLE_H
#define MEMTOP_SAMPLER_ADDR_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "memtop/sampler_abi.h"

#define ADDR_SLOT_EMPTY 0
#define ADDR_SLOT_GONE 1
#define ADDR_MAX_PROBE 32

/* One multiply: a free of any pointer computes it while blocks are live. */
static inline __u64 addr_table_home(__u64 key)
{
	return ((key >> 4) * 0x9E3779B97F4A7C15ULL) >> (64 - 16); /* 65536 slots */
}

static inline unsigned short *addr_filter_of(unsigned short *filter, __u64 key)
{
	return &filter[((key >> 4) * 0xC2B2AE3D27D4EB4FULL) >> (64 - 13)]; /* 8192 */
}

/* May key be in the table? false: certainly not. */
static inline bool addr_table_maybe(unsigned short *filter, __u64 key)
{
	return __atomic_load_n(addr_filter_of(filter, key), __ATOMIC_RELAXED) != 0;
}

static inline bool addr_table_insert(__u64 *slot, unsigned short *filter, __u64 *live,
				     __u64 *dropped, __u64 key)
{
	__u64 i = addr_table_home(key);
	int n;

	for (n = 0; n < ADDR_MAX_PROBE; n++, i = (i + 1) & (MT_INJECT_TABLE_SLOTS - 1)) {
		__u64 v = __atomic_load_n(&slot[i], __ATOMIC_RELAXED);

		if ((v == ADDR_SLOT_EMPTY || v == ADDR_SLOT_GONE) &&
		    __atomic_compare_exchange_n(&slot[i], &v, key, false, __ATOMIC_RELAXED,
						__ATOMIC_RELAXED)) {
			__atomic_fetch_add(addr_filter_of(filter, key), 1, __ATOMIC_RELAXED);
			__atomic_fetch_add(live, 1, __ATOMIC_RELAXED);
			return true;
		}
	}
	__atomic_fetch_add(dropped, 1, __ATOMIC_RELAXED);
	return false;
}

/* Find key in the table: with live, take it out (a tombstone in its
 * place, its counts down), else only say whether it is there. */
static inline bool addr_table_find(__u64 *slot, unsigned short *filter, __u64 *live, __u64 key)
{
	__u64 i = addr_table_home(key);
	int n;

	if (!addr_table_maybe(filter, key))
		return false;
	for (n = 0; n < ADDR_MAX_PROBE; n++, i = (i + 1) & (MT_INJECT_TABLE_SLOTS - 1)) {
		__u64 v = __atomic_load_n(&slot[i], __ATOMIC_RELAXED);

		if (v == ADDR_SLOT_EMPTY)
			return false;
		if (v == key && !live)
			return true;
		if (v == key && __atomic_compare_exchange_n(&slot[i], &v, ADDR_SLOT_GONE, false,
							    __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
			__atomic_fetch_sub(addr_filter_of(filter, key), 1, __ATOMIC_RELAXED);
			__atomic_fetch_sub(live, 1, __ATOMIC_RELAXED);
			return true;
		}
	}
	return false;
}

static inline bool addr_table_remove(__u64 *slot, unsigned short *filter, __u64 *live, __u64 key)
{
	return addr_table_find(slot, filter, live, key);
}

/* Is key in the table now? */
static inline bool addr_table_contains(__u64 *slot, unsigned short *filter, __u64 key)
{
	return addr_table_find(slot, filter, NULL, key);
}

#endif /* MEMTOP_SAMPLER_ADDR_TABLE_H */

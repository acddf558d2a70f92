/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * inject_handover.h - the injected sampler's half of a handover
 * (docs/inject.md, "The handover"): a process counted by its allocator's
 * uprobes until memtop's sampler counts every call. Where the sampler's
 * text lies (the uprobes leave the calls made from there to it), and the
 * blocks the uprobes sampled, handed to the sampler so that their frees
 * are told once the uprobes are gone (mt_inject_ctl.adopt). Reads and
 * writes the process's memory only, through /proc/PID/mem.
 */
#ifndef MEMTOP_PROBE_INJECT_HANDOVER_H
#define MEMTOP_PROBE_INJECT_HANDOVER_H

#include <stddef.h>
#include <linux/types.h>

#include "probe/inject.h"

/* [*lo, *hi) of the sampler's executable segments in the process. 0, or
 * -ENOENT when it has none. */
int inject_text_range(const struct inject_state *st, __u64 *lo, __u64 *hi);

/* Hand the sampler n (at most MT_INJECT_ADOPT_MAX) addresses of blocks
 * the uprobes sampled: the serial of this round in *serial. 0 or -errno. */
int inject_adopt(const struct inject_state *st, const __u64 *addrs, size_t n, __u32 *serial);

/* Has the sampler taken the round of serial into its table? 1, 0 (not
 * yet: no thread has counted a call since), or -errno. */
int inject_adopted(const struct inject_state *st, __u32 serial);

#endif /* MEMTOP_PROBE_INJECT_HANDOVER_H */

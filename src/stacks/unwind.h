/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * unwind.h - user stacks without frame pointers: libunwind's remote API
 * over a copy of the top of the target's stack and the registers captured
 * by the BPF program, with unwind tables read from the mapped ELF files
 * (.eh_frame_hdr and .eh_frame; objects with only .debug_frame end the
 * walk, see docs/unwinding.md).
 */
#ifndef MEMTOP_UNWIND_H
#define MEMTOP_UNWIND_H

#include <stdbool.h>
#include <sys/types.h>
#include <linux/types.h>

#include "memtop/abi.h"
#include "stacks/proc_cache.h"

struct unwinder;

/* NULL with errno set. pc is borrowed and must outlive the unwinder. */
struct unwinder *unwinder_new(struct proc_cache *pc);
void unwinder_free(struct unwinder *u);

/* Unwind from regs, captured in a caller frame right after a call returned
 * (so regs->ip is a return address), with stack[0..stack_len) a copy of
 * memory at regs->sp. Writes program counters innermost first, ips[0] =
 * regs->ip. Returns the count (>= 1), or -errno. *truncated is set when
 * the walk stopped before the outermost frame (ran out of stack copy,
 * missing unwind info, unreadable memory, or max reached). */
int unwinder_unwind(struct unwinder *u, pid_t pid, const struct mt_regs *regs, const __u8 *stack,
		    __u32 stack_len, __u64 *ips, int max, bool *truncated);

/* ---- additions ------------------------------------------------------ */

/* Every ips[i] with i >= 1 is a raw return address, as a frame-pointer
 * walk gives it: symbolize it with is_return_addr = true (the call is at
 * ip - 1). ips[0] is regs->ip, also a return address here. The unwinder
 * is single-threaded: one thread calls it at a time. */

/* Why a walk ended; UNWIND_STOP_END is the only untruncated reason. */
enum unwind_stop {
	UNWIND_STOP_END = 0,  /* outermost frame: undefined return address (_start, clone) */
	UNWIND_STOP_MAX,      /* ips[] was full */
	UNWIND_STOP_STACK,    /* needed stack above the end of the copy */
	UNWIND_STOP_NOINFO,   /* a frame's ip has no unwind info: unmapped, JIT, no .eh_frame */
	UNWIND_STOP_BADFRAME, /* unreadable memory, or a frame that does not move up the stack */
	UNWIND_STOP_COUNT,
};

/* Cumulative counters since unwinder_new(). */
struct unwind_stats {
	__u64 walks;                    /* unwinder_unwind() calls that returned >= 1 */
	__u64 frames;                   /* ips written by them */
	__u64 table_lookups;            /* .eh_frame_hdr searches (libunwind cache misses) */
	__u64 stops[UNWIND_STOP_COUNT]; /* walks by the reason they ended */
};

/* Why the last successful unwinder_unwind() stopped. */
enum unwind_stop unwinder_last_stop(const struct unwinder *u);

void unwinder_stats(const struct unwinder *u, struct unwind_stats *out);

/* Forget the per-process unwind state of pid (libunwind's cache of decoded
 * frames keyed by address). Call it on exit and on exec of pid, together
 * with proc_cache_forget(): after exec the same addresses mean other code. */
void unwinder_forget(struct unwinder *u, pid_t pid);

#endif /* MEMTOP_UNWIND_H */

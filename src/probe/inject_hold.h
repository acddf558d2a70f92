/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * inject_hold.h - a hold (one thread of a process stopped under ptrace
 * while memtop makes it run its steps, inject_ptrace.h) done by a
 * short-lived process of its own, the holder, so that nothing that
 * happens to memtop can leave the thread with memtop's registers.
 *
 * Why a process: a tracer that dies detaches its tracee with whatever
 * registers the current step set, and the thread then runs from there and
 * crashes its process. memtop can be SIGKILLed at any moment; the holder
 * is forked for one hold, blocks every signal it can, leaves memtop's
 * process group, and finishes or undoes the hold on its own whatever
 * becomes of memtop (docs/inject.md).
 *
 * Bounds: the work (all its waits) has INJECT_HOLD_WORK_MS; a step cut
 * off by that deadline gets INJECT_HOLD_GRACE_MS to stop again and be put
 * back. memtop waits for the holder's answer at most the sum of both plus
 * a second; a thread that cannot be stopped again in that time (a frozen
 * cgroup) is kept traced by the holder, which puts it back whenever it
 * stops, after memtop has been told the hold failed.
 *
 * Which thread: s->want_tid when the caller set it; else one that is running (a stop cannot interrupt anything),
 * else one blocked in a system call the kernel restarts transparently
 * after a stop, else the main thread; never, if another one can be had,
 * one blocked where a stop makes the call fail with EINTR
 * (inject_hold_eintr_prone()).
 */
#ifndef MEMTOP_PROBE_INJECT_HOLD_H
#define MEMTOP_PROBE_INJECT_HOLD_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <linux/types.h>

#include "probe/inject_ptrace.h"

#define INJECT_HOLD_WORK_MS 2000
#define INJECT_HOLD_GRACE_MS 1000
#define INJECT_HOLD_MAX_FLAGS 65536

/* What a hold's work sends back to memtop (the holder's memory is gone
 * with it). */
struct inject_hold_out {
	__u64 base;           /* the sampler's address, if the work mapped it */
	__u64 ran_ns;         /* of the hold, the time the work let the thread run on
			       * (inject_session_until_syscall): not a pause */
	size_t nflags;        /* per-slot results of the work, at most */
	unsigned char *flags; /* INJECT_HOLD_MAX_FLAGS; malloc'ed */
};

/* The work done while the thread is held, in the holder: s is begun
 * (registers saved), ctx is memtop's memory as it was at the fork. 0 or
 * -errno with one line in err. */
typedef int (*inject_hold_fn)(struct inject_session *s, void *ctx, struct inject_hold_out *out,
			      char *err, size_t errlen);

/* Hold one thread of the prepared session's process (picked as above) in
 * a holder process, run work there, put the thread back. On return s has
 * the hold's timings (paused_ns, reach_ns) and out what the work sent
 * (out->flags to be freed by the caller). 0, or -errno with one line in
 * err: -ESRCH when the process exited or exec'd during the hold,
 * -ETIMEDOUT when a bound was reached, the work's error otherwise. */
int inject_hold(struct inject_session *s, inject_hold_fn work, void *ctx,
		struct inject_hold_out *out, char *err, size_t errlen);

/* Does a thread blocked in system call nr see EINTR after a ptrace stop,
 * where other calls are restarted (signal(7), "Interruption of system
 * calls and library functions by stop signals")? */
bool inject_hold_eintr_prone(long nr);

/* The thread of pid to hold (see above), or pid itself. */
pid_t inject_hold_pick_thread(pid_t pid);

#endif /* MEMTOP_PROBE_INJECT_HOLD_H */

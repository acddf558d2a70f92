/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * go_rate.h - turn on the heap sampling of a Go process whose
 * runtime.MemProfileRate is 0, and put the 0 back (docs/go.md,
 * "MemProfileRate 0"). The rate is one aligned 8-byte store through
 * /proc/PID/mem; a guard process (a fork of memtop, out of its process
 * group, every signal blocked) puts the old value back if memtop dies
 * without doing it.
 */
#ifndef MEMTOP_PROBE_GO_RATE_H
#define MEMTOP_PROBE_GO_RATE_H

#include <stddef.h>
#include <sys/types.h>
#include <linux/types.h>

struct go_rate_hold;

/* If pid's Go runtime has finished its own start (runtime.main_init_done,
 * at ready_addr, is set: the runtime has written its MemProfileRate) and
 * runtime.MemProfileRate at rate_addr is 0, store rate there and start the
 * guard. 0 with *out set; -EAGAIN: the runtime has not started yet (try
 * again later); -EALREADY: the rate is not 0 (nothing done); else -errno,
 * with one line in err, nothing changed. */
int go_rate_enable(pid_t pid, __u64 rate_addr, __u64 ready_addr, __s64 rate,
		   struct go_rate_hold **out, char *err, size_t errlen);

/* The rate memtop stored (for the words). */
__s64 go_rate_set_to(const struct go_rate_hold *h);

/* Put the old rate back if the process still has memtop's, end the guard
 * and free h. 0: put back; -EBUSY: the program changed the rate since
 * (left as it is); -ESRCH: the process is gone (or exec'd). NULL: 0. */
int go_rate_restore(struct go_rate_hold *h);

#endif /* MEMTOP_PROBE_GO_RATE_H */

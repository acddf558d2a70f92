/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * exits.h - how a watched process ended, for processes memtop did not
 * start as well as for those it did: the kernel's process-events
 * connector (NETLINK_CONNECTOR, CN_IDX_PROC; needs CAP_NET_ADMIN) reports
 * every exit with its wait status and CLOCK_MONOTONIC time, and a process
 * that is still a zombie shows its status in /proc/PID/stat.
 */
#ifndef MEMTOP_EXITS_H
#define MEMTOP_EXITS_H

#include <sys/types.h>
#include <linux/types.h>

/* A socket subscribed to process events, non-blocking, close-on-exec:
 * poll it for POLLIN and call exits_read(). The fd, or -errno (no
 * connector in this kernel, no privilege). */
int exits_open(void);

/* Called for each exited process (thread-group leader) with its wait
 * status (as waitpid() gives it) and the time of its exit. */
typedef void exits_fn(void *ctx, pid_t pid, int wstatus, __u64 at_ns);

/* Take every pending event off fd and call fn for each exit. 0, or
 * -ENOBUFS when the kernel dropped events (some exits were missed: their
 * status is then unknown), or another -errno. */
int exits_read(int fd, exits_fn *fn, void *ctx);

/* The wait status of pid while it is a zombie (exited, not yet reaped by
 * its parent): 0 with *wstatus set, or -errno (not a zombie, or gone). */
int exits_zombie_status(pid_t pid, int *wstatus);

#endif /* MEMTOP_EXITS_H */

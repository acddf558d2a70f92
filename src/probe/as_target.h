/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * as_target.h - work done as a target process would do it: in a forked
 * child that has entered the target's mount namespace and root and taken
 * its effective uid, gid and groups. memtop is root and the target is
 * untrusted: a path the target controls (its /tmp) is only ever followed
 * this way, never by memtop itself. The child is bounded in time and
 * killed past it; it can hand one descriptor back.
 */
#ifndef MEMTOP_AS_TARGET_H
#define MEMTOP_AS_TARGET_H

#include <stddef.h>
#include <sys/types.h>

/* What the child runs: 0 or a positive value on success (returned to the
 * caller), -errno with one line in msg on failure. *fd_out: a descriptor
 * to hand back, or -1. */
typedef int (*as_target_fn)(void *ctx, int *fd_out, char *msg, size_t msglen);

/* Run fn(ctx) as pid, for at most timeout_ms. Returns fn's value (and its
 * descriptor in *fd_out, else -1), or -errno with one line in msg: the
 * target is gone or unreadable, the child could not become it, or
 * -ETIMEDOUT when it did not finish in time (it is killed). */
int as_target_run(pid_t pid, as_target_fn fn, void *ctx, int timeout_ms, int *fd_out, char *msg,
		  size_t msglen);

#endif /* MEMTOP_AS_TARGET_H */

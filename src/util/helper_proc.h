/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * helper_proc.h - a helper process memtop forks to finish a piece of work
 * whatever becomes of memtop (the injection's holder, the newcomers' hold
 * guard, the Go rate's guard): out of memtop's process group, so that a
 * terminal's ^C or a kill of the group does not reach it; every signal
 * blocked but one it waits for; and holding no descriptor of memtop's but
 * those it uses, with /dev/null for whichever of 0, 1 and 2 is not one of
 * them, so that a helper that outlives memtop keeps no BPF program or link
 * attached and no pipe of memtop's caller open.
 *
 * A fork of a process with other threads may call only async-signal-safe
 * functions: this does (setpgid, open, dup2, close_range, sigprocmask,
 * signal), and so must the helper's own work.
 */
#ifndef MEMTOP_UTIL_HELPER_PROC_H
#define MEMTOP_UTIL_HELPER_PROC_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define HELPER_PROC_KEEP_MAX 4

/* Fork a helper joined to memtop by a pipe (both ends O_CLOEXEC): the
 * helper keeps the read end when helper_reads, else the write end, and
 * memtop the other. Returns the helper's PID in memtop and 0 in the
 * helper, with *end that side's end of the pipe; or -errno, with one line
 * naming what ("the holder") in err. */
pid_t helper_proc_fork(bool helper_reads, int *end, const char *what, char *err, size_t errlen);

/* In the forked helper, at once: the above, keeping the n descriptors of
 * keep (at most HELPER_PROC_KEEP_MAX; a negative one is skipped) where
 * they are, and signal keep_sig unblocked (0: none). SIGCHLD is set to its
 * default, so that a child's stops reach waitpid(). */
void helper_proc_detach(const int *keep, int n, int keep_sig);

#endif

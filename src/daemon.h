/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * daemon.h - `memtop --daemon`'s process: the session forked off the
 * terminal, and the hand-over of that terminal once the session is set
 * up. The parent waits for the child's word before it returns, so a
 * failure to attach is said on the terminal and is the parent's exit
 * code, as without --daemon (docs/recording.md, "Sessions").
 */
#ifndef MEMTOP_DAEMON_H
#define MEMTOP_DAEMON_H

#include <stddef.h>
#include <sys/types.h>

/* Fork the session off the terminal.
 * In the child, in a session of its own: 0, *ready_fd set (the pipe
 * daemon_let_go() tells the parent through).
 * In the parent, once the child is set up or has ended: 1, with *child
 * the session's PID and *code 0 when it is running, or *code the child's
 * exit code (it said why on the shared stderr).
 * -errno (one line in err) when no child could be made. */
int daemon_fork(pid_t *child, int *code, int *ready_fd, char *err, size_t errlen);

/* The child, set up: let go of the terminal (stdin, stdout and stderr
 * become /dev/null) and tell the waiting parent it is running (through
 * *ready_fd, then closed and set to -1; -1: no parent waits). */
void daemon_let_go(int *ready_fd);

#endif /* MEMTOP_DAEMON_H */

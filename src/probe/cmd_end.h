/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * cmd_end.h - ending a command memtop launched (-- CMD) together with the
 * family it started. The command leads a session and process group of its
 * own (target_launch), so its group is one signal; a descendant memtop
 * followed that left the group (setsid, setpgid) is signalled on its own,
 * through a pidfd and only while it is still the process memtop followed.
 * SIGTERM first; whatever still lives after CMD_END_GRACE_MS gets SIGKILL.
 */
#ifndef MEMTOP_CMD_END_H
#define MEMTOP_CMD_END_H

#include <linux/types.h>
#include <sys/types.h>

/* How long the family has between SIGTERM and SIGKILL. */
#define CMD_END_GRACE_MS 1000

/* A descendant memtop followed: its pid and start time (target_id), which
 * tell it from a later process given the same pid. */
struct cmd_member {
	pid_t pid;
	__u64 start_ticks;
};

/* End the command leader (memtop's child, reaped here unless it was
 * already), its process group and the n followed members. Returns once
 * none of them runs any more (zombies of other parents aside), or about
 * 2 * CMD_END_GRACE_MS after it was called. */
void cmd_end(pid_t leader, const struct cmd_member *m, int n);

#endif /* MEMTOP_CMD_END_H */

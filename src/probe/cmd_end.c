// SPDX-License-Identifier: GPL-2.0-only
/*
 * cmd_end.c - ending -- CMD and the family it started (cmd_end.h).
 */
#include "probe/cmd_end.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "probe/target.h"
#include "util/clock.h"

#define POLL_US 20000 /* a /proc scan per poll while the group lives */

/* Is m still the process memtop followed, alive (not a zombie)? */
static bool member_alive(const struct cmd_member *m)
{
	struct target_id now;

	return !target_identity(m->pid, &now) && now.start_ticks == m->start_ticks &&
	       target_alive(m->pid);
}

/* Signal m only if it is still the process memtop followed: the pidfd
 * holds that process, so a pid reused after the check is not signalled. */
static void signal_member(const struct cmd_member *m, int sig)
{
	int fd = (int)syscall(SYS_pidfd_open, m->pid, 0);

	if (fd < 0)
		return;
	if (member_alive(m))
		syscall(SYS_pidfd_send_signal, fd, sig, NULL, 0);
	close(fd);
}

/* Does a process that is not a zombie still belong to group pgrp? */
static bool group_alive(pid_t pgrp)
{
	struct dirent *d;
	bool alive = false;
	DIR *dir;

	if (kill(-pgrp, 0) && errno == ESRCH)
		return false;
	dir = opendir("/proc");
	if (!dir)
		return true; /* cannot tell: assume it runs */
	while (!alive && (d = readdir(dir))) {
		pid_t pid = (pid_t)strtol(d->d_name, NULL, 10), g;

		alive = pid > 0 && !target_group(pid, &g) && g == pgrp;
	}
	closedir(dir);
	return alive;
}

struct family {
	pid_t leader;
	bool reaped;     /* the leader has been waited for */
	bool group_ours; /* the group numbered leader is the command's */
	const struct cmd_member *m;
	int n;
};

static void reap(struct family *f, int options)
{
	pid_t r;

	if (f->reaped)
		return;
	do
		r = waitpid(f->leader, NULL, options);
	while (r < 0 && errno == EINTR);
	f->reaped = r == f->leader || (r < 0 && errno == ECHILD);
}

static void signal_family(const struct family *f, int sig)
{
	int i;

	if (f->group_ours)
		kill(-f->leader, sig);
	for (i = 0; i < f->n; i++)
		signal_member(&f->m[i], sig);
}

static bool family_alive(struct family *f)
{
	int i;

	reap(f, WNOHANG);
	if (!f->reaped || (f->group_ours && group_alive(f->leader)))
		return true;
	for (i = 0; i < f->n; i++)
		if (member_alive(&f->m[i]))
			return true;
	return false;
}

/* Poll until the family is gone or ms have passed. True if it is gone. */
static bool wait_gone(struct family *f, int ms)
{
	__u64 deadline = clock_mono_ns() + (__u64)ms * 1000000ULL;

	while (family_alive(f)) {
		if (clock_mono_ns() >= deadline)
			return false;
		usleep(POLL_US);
	}
	return true;
}

void cmd_end(pid_t leader, const struct cmd_member *m, int n)
{
	struct family f = { .leader = leader, .m = m, .n = n };
	pid_t r, g;
	int i;

	if (leader <= 0)
		return;
	do
		r = waitpid(leader, NULL, WNOHANG);
	while (r < 0 && errno == EINTR);
	f.reaped = r != 0; /* now, or before (ECHILD) */
	/* The group's number stays taken while its leader is unreaped or one
	 * of its members lives: only then is a signal to it the command's. */
	f.group_ours = r == 0 || r == leader;
	for (i = 0; !f.group_ours && i < n; i++)
		f.group_ours = member_alive(&m[i]) && !target_group(m[i].pid, &g) && g == leader;
	signal_family(&f, SIGTERM);
	if (wait_gone(&f, CMD_END_GRACE_MS))
		return;
	signal_family(&f, SIGKILL);
	reap(&f, 0);
	wait_gone(&f, CMD_END_GRACE_MS);
}

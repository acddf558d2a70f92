// SPDX-License-Identifier: GPL-2.0-only
/*
 * helper_proc.c - the detachment of a helper process (helper_proc.h).
 */
#include "util/helper_proc.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>

static bool kept(const int *keep, int n, int fd)
{
	for (int i = 0; i < n; i++)
		if (keep[i] == fd)
			return true;
	return false;
}

void helper_proc_detach(const int *keep, int n, int keep_sig)
{
	unsigned int from = 3;
	int null, i;
	sigset_t all;

	if (n > HELPER_PROC_KEEP_MAX)
		n = HELPER_PROC_KEEP_MAX;
	setpgid(0, 0);
	null = open("/dev/null", O_RDWR | O_CLOEXEC);
	for (i = 0; i < 3 && null >= 0; i++)
		if (!kept(keep, n, i))
			dup2(null, i);
	/* every descriptor from 3 up but the kept ones, in ascending gaps */
	for (;;) {
		int next = -1;

		for (i = 0; i < n; i++)
			if (keep[i] >= (int)from && (next < 0 || keep[i] < next))
				next = keep[i];
		if (next < 0) {
			syscall(SYS_close_range, from, ~0U, 0U);
			break;
		}
		if ((unsigned int)next > from)
			syscall(SYS_close_range, from, (unsigned int)next - 1, 0U);
		from = (unsigned int)next + 1;
	}
	sigfillset(&all);
	if (keep_sig)
		sigdelset(&all, keep_sig);
	sigprocmask(SIG_SETMASK, &all, NULL);
	signal(SIGCHLD, SIG_DFL);
}

pid_t helper_proc_fork(bool helper_reads, int *end, const char *what, char *err, size_t errlen)
{
	int fds[2], e;
	pid_t child;
	bool reads;

	if (pipe2(fds, O_CLOEXEC) < 0) {
		e = -errno;
		snprintf(err, errlen, "cannot make a pipe for %s: %s", what, strerror(-e));
		return e;
	}
	child = fork();
	if (child < 0) {
		e = -errno;
		close(fds[0]);
		close(fds[1]);
		snprintf(err, errlen, "cannot start %s: %s", what, strerror(-e));
		return e;
	}
	/* this side reads (fds[0]) if it is the helper and the helper reads,
	 * or memtop and the helper writes */
	reads = child == 0 ? helper_reads : !helper_reads;

	close(fds[reads ? 1 : 0]);
	*end = fds[reads ? 0 : 1];
	return child;
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * helper_proc.c - the detachment of a helper process (helper_proc.h).
 */
#include "util/helper_proc.h"

#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
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

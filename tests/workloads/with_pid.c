// SPDX-License-Identifier: GPL-2.0-only
/*
 * with_pid.c - `with_pid PID CMD [ARG...]`: run CMD as the process with
 * PID PID, for tests of a PID that comes back (a process that ended and a
 * new one that took its number). clone3()'s set_tid (Linux 5.5, root)
 * asks for the number itself, so no other fork on the host can take it
 * first, as one may between a write of ns_last_pid and a fork.
 *
 * CMD runs as this program's child and dies with it (PR_SET_PDEATHSIG),
 * so a test owns it through this process: its output is this program's,
 * and this program ends as CMD did (its exit code, or its signal). Exit
 * 75 when PID is taken, 126 when CMD cannot run.
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/sched.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

int main(int argc, char **argv)
{
	struct clone_args args = { .exit_signal = SIGCHLD };
	pid_t want, child, parent = getpid();
	int status;

	if (argc < 3 || (want = (pid_t)atoi(argv[1])) <= 1) {
		fprintf(stderr, "usage: with_pid PID CMD [ARG...]\n");
		return 2;
	}
	args.set_tid = (uint64_t)(uintptr_t)&want;
	args.set_tid_size = 1;
	child = (pid_t)syscall(SYS_clone3, &args, sizeof(args));
	if (child < 0) {
		fprintf(stderr, "with_pid: cannot start PID %d: %s\n", (int)want, strerror(errno));
		return errno == EEXIST ? 75 : 1;
	}
	if (child == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(1); /* the parent died before the line above */
		execvp(argv[2], argv + 2);
		fprintf(stderr, "with_pid: cannot run %s: %s\n", argv[2], strerror(errno));
		_exit(126);
	}
	while (waitpid(child, &status, 0) < 0)
		if (errno != EINTR)
			return 1;
	if (WIFSIGNALED(status)) {
		signal(WTERMSIG(status), SIG_DFL);
		raise(WTERMSIG(status));
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

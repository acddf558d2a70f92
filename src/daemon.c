// SPDX-License-Identifier: GPL-2.0-only
/*
 * daemon.c - --daemon's fork off the terminal and the child's letting go
 * of it (daemon.h). The parent and the child share stderr until the
 * child is set up; one pipe carries "ok" from the child, and its end
 * without "ok" means the child failed and exits with its code.
 */
#include "daemon.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define READY "ok"

int daemon_fork(pid_t *child, int *code, int *ready_fd, char *err, size_t errlen)
{
	char said[sizeof(READY)] = "";
	int p[2], st, e;
	pid_t pid;

	*ready_fd = -1;
	if (pipe2(p, O_CLOEXEC)) {
		e = -errno;
		snprintf(err, errlen, "--daemon: %s", strerror(-e));
		return e;
	}
	fflush(NULL); /* nothing buffered is written twice */
	pid = fork();
	if (pid < 0) {
		e = -errno;
		snprintf(err, errlen, "--daemon: cannot fork: %s", strerror(-e));
		close(p[0]);
		close(p[1]);
		return e;
	}
	if (pid == 0) {
		close(p[0]);
		setsid();
		*ready_fd = p[1];
		return 0;
	}
	close(p[1]);
	while (read(p[0], said, sizeof(READY) - 1) < 0 && errno == EINTR)
		;
	close(p[0]);
	*child = pid;
	if (!strcmp(said, READY)) {
		*code = 0;
		return 1;
	}
	/* the child said why on stderr; its exit status says the rest */
	*code = waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) ? WEXITSTATUS(st) : 1;
	return 1;
}

void daemon_let_go(int *ready_fd)
{
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);

	if (null >= 0) {
		dup2(null, STDIN_FILENO);
		dup2(null, STDOUT_FILENO);
		dup2(null, STDERR_FILENO);
		close(null);
	}
	if (*ready_fd < 0)
		return;
	if (write(*ready_fd, READY, sizeof(READY) - 1) < 0)
		(void)0; /* the parent is gone: nobody waits */
	close(*ready_fd);
	*ready_fd = -1;
}

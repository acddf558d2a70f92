// cflags: -O2
/*
 * prefork.c - a pre-forking server's master and its workers: the cgroup
 * newcomer that is a fork of a process memtop has already changed, and so
 * carries its sampler from its first instruction
 * (tests/integration/test_inject_edges.py).
 *
 *   prefork
 *     prints "READY pid=N", then for each 'f' on stdin forks a worker.
 *     A worker first makes 20000 malloc/free pairs of 64..319 bytes in its
 *     only thread, at once (before memtop can have found it), and prints
 *     "worker PID born allocs=20000 frees=20000"; then for each SIGUSR1
 *     it makes 2000 more and prints "batch N allocs=2000 frees=2000" (N
 *     from 1). Those are all the allocator calls it makes (stdout's
 *     buffer is its master's). SIGUSR2 makes it make 2000 more, print
 *     "last allocs=2000 frees=2000" and exit at once (its last calls
 *     counted only as it ends); SIGTERM, or the end of its master, ends
 *     it. EOF on stdin ends the master.
 *   prefork born
 *     is such a worker itself, exec'd (the cgroup newcomer that is a fresh
 *     program): its 20000 pairs are the first thing its main() does.
 *
 * A worker writes its lines with write(2): stdio would allocate a buffer
 * (a call of the C library's that is not in its truth).
 *
 * The worker waits in sigwait() with both signals blocked: no handler
 * runs, so a stop of memtop's never shows as EINTR to it.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#define PAIRS 2000
#define BIRTH_PAIRS 20000

static void pairs(int n)
{
	for (int i = 0; i < n; i++) {
		char *p = malloc(64 + (size_t)(i % 256));

		if (!p)
			abort();
		p[0] = (char)i;
		*(char *volatile *)&p = p;
		free(p);
	}
}

/* One line on stdout, with no allocation. */
static void say(const char *fmt, ...)
{
	char line[128];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n > 0 && write(1, line, strlen(line)) < 0)
		abort();
}

static void worker(void)
{
	sigset_t set;
	int sig, n = 0;

	prctl(PR_SET_PDEATHSIG, SIGTERM);
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGUSR2);
	sigaddset(&set, SIGTERM);
	pairs(BIRTH_PAIRS);
	say("worker %d born allocs=%d frees=%d\n", getpid(), BIRTH_PAIRS, BIRTH_PAIRS);
	while (!sigwait(&set, &sig) && sig == SIGUSR1) {
		pairs(PAIRS);
		say("batch %d allocs=%d frees=%d\n", ++n, PAIRS, PAIRS);
	}
	if (sig == SIGUSR2) {
		pairs(PAIRS);
		say("last allocs=%d frees=%d\n", PAIRS, PAIRS);
	}
	_exit(0);
}

int main(int argc, char **argv)
{
	sigset_t set;
	int c;

	/* blocked before any fork, so a worker never misses its first one */
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGUSR2);
	sigaddset(&set, SIGTERM);
	sigprocmask(SIG_BLOCK, &set, NULL);
	if (argc > 1 && !strcmp(argv[1], "born"))
		worker();
	pairs(PAIRS); /* every allocator function it uses is bound */
	printf("READY pid=%d\n", getpid());
	fflush(stdout);
	while ((c = getchar()) != EOF) {
		pid_t pid;

		if (c != 'f')
			continue;
		pid = fork();
		if (pid == 0)
			worker();
		if (pid < 0)
			perror("fork");
	}
	return 0;
}

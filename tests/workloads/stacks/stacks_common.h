/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * stacks_common.h - plumbing of the stack workloads, which
 * tests/integration/test_stacks.py builds at test time with its own flags
 * (this directory is not globbed by the Makefile's workload rule).
 *
 * Protocol: print "READY pid=N", wait for a byte on stdin, call a step
 * function every STK_PERIOD_S for --seconds=SECS (default 4), print "DONE",
 * wait for EOF on stdin and _exit(0). Output goes through write(2), so the
 * C runtime allocates nothing outside the step functions. Every function
 * of a chain is STK_FN: never inlined, cloned or merged, and each one does
 * work after its call, so no call in a chain becomes a tail call.
 *
 * Usable from C and C++ (everything here is static inline).
 */
#ifndef MEMTOP_STACKS_COMMON_H
#define MEMTOP_STACKS_COMMON_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define STK_FN __attribute__((noipa))
#define STK_PERIOD_S 0.01
#define STK_LEAK_SIZE (64 * 1024UL)

/* Bumped after each call of a chain: keeps the call out of tail position. */
extern volatile unsigned long stk_after_call;

static inline void stk_say(const char *s)
{
	size_t len = strlen(s);

	while (len) {
		ssize_t n = write(1, s, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			_exit(3);
		s += n;
		len -= (size_t)n;
	}
}

static inline double stk_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static inline void stk_sleep(double secs)
{
	struct timespec ts;

	ts.tv_sec = (time_t)secs;
	ts.tv_nsec = (long)((secs - (double)ts.tv_sec) * 1e9);
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* --seconds=SECS from argv (default 4); any other --option is an error. */
static inline double stk_seconds(int argc, char **argv)
{
	double secs = 4;

	for (int i = 1; i < argc; i++) {
		if (strncmp(argv[i], "--seconds=", 10) == 0) {
			secs = strtod(argv[i] + 10, NULL);
		} else if (strncmp(argv[i], "--", 2) == 0) {
			stk_say("workload: unknown option\n");
			_exit(2);
		}
	}
	return secs;
}

/* Print READY and block until the trigger byte arrives on stdin. */
static inline void stk_ready_and_wait(void)
{
	char buf[64], c;
	ssize_t n;

	snprintf(buf, sizeof(buf), "READY pid=%d\n", (int)getpid());
	stk_say(buf);
	do
		n = read(0, &c, 1);
	while (n < 0 && errno == EINTR);
	if (n != 1)
		_exit(0);
}

/* Print DONE, wait for EOF on stdin and leave without atexit handlers. */
static inline void stk_done(void)
{
	char c;
	ssize_t n;

	stk_say("DONE\n");
	do
		n = read(0, &c, 1);
	while (n > 0 || (n < 0 && errno == EINTR));
	_exit(0);
}

#endif /* MEMTOP_STACKS_COMMON_H */

// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_go_rate.c - setting a MemProfileRate of 0 and putting it back
 * (probe/go_rate.c) in a real child process that stands in for a Go
 * program: a forked copy of this test, whose `rate` and `ready` sit at the
 * same addresses as ours. Checked through /proc/PID/mem: the store, the put
 * back, a rate the program changed meanwhile (left), a rate not 0 and a
 * runtime not started (nothing done), an unaligned address (refused), and
 * the guard putting the 0 back when its memtop dies without doing it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "probe/go_rate.h"

static volatile long long rate_var __attribute__((aligned(8)));
static volatile long long ready_var __attribute__((aligned(8)));

/* A child with rate_var = rate, ready_var = ready, waiting to be killed. */
static pid_t target(long long rate, long long ready)
{
	pid_t pid;

	rate_var = rate;
	ready_var = ready;
	pid = fork();
	if (pid == 0) {
		for (;;)
			pause();
	}
	assert_true(pid > 0);
	return pid;
}

static void end(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

static long long peek(pid_t pid)
{
	char path[64];
	long long v = -1;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, &v, sizeof(v), (off_t)(uintptr_t)&rate_var), sizeof(v));
	close(fd);
	return v;
}

static void poke(pid_t pid, long long v)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	fd = open(path, O_RDWR);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, &v, sizeof(v), (off_t)(uintptr_t)&rate_var), sizeof(v));
	close(fd);
}

static __u64 addr(volatile long long *p)
{
	return (__u64)(uintptr_t)p;
}

static void test_set_and_put_back(void **state)
{
	pid_t pid = target(0, 1);
	struct go_rate_hold *h;
	char err[256];

	assert_int_equal(go_rate_enable(pid, addr(&rate_var), addr(&ready_var), 524288, &h, err,
					sizeof(err)),
			 0);
	assert_int_equal(go_rate_set_to(h), 524288);
	assert_int_equal(peek(pid), 524288);
	assert_int_equal(go_rate_restore(h), 0);
	assert_int_equal(peek(pid), 0);
	end(pid);
}

static void test_changed_by_the_program_is_left(void **state)
{
	pid_t pid = target(0, 1);
	struct go_rate_hold *h;
	char err[256];

	assert_int_equal(go_rate_enable(pid, addr(&rate_var), 0, 4096, &h, err, sizeof(err)), 0);
	poke(pid, 1); /* the program set its own */
	assert_int_equal(go_rate_restore(h), -EBUSY);
	assert_int_equal(peek(pid), 1);
	end(pid);
}

static void test_nothing_done(void **state)
{
	struct go_rate_hold *h = (void *)1;
	char err[256];
	pid_t pid = target(8192, 1);

	/* the rate is not 0 */
	assert_int_equal(go_rate_enable(pid, addr(&rate_var), 0, 4096, &h, err, sizeof(err)),
			 -EALREADY);
	assert_null(h);
	assert_int_equal(peek(pid), 8192);
	end(pid);
	/* the runtime has not started: later */
	pid = target(0, 0);
	assert_int_equal(
		go_rate_enable(pid, addr(&rate_var), addr(&ready_var), 4096, &h, err, sizeof(err)),
		-EAGAIN);
	assert_int_equal(peek(pid), 0);
	/* unaligned, unknown, or a rate that is not positive */
	assert_int_equal(go_rate_enable(pid, addr(&rate_var) + 4, 0, 4096, &h, err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(go_rate_enable(pid, 0, 0, 4096, &h, err, sizeof(err)), -EINVAL);
	assert_int_equal(go_rate_enable(pid, addr(&rate_var), 0, 0, &h, err, sizeof(err)), -EINVAL);
	assert_int_equal(peek(pid), 0);
	end(pid);
	/* a process that is gone */
	assert_true(go_rate_enable(pid, addr(&rate_var), 0, 4096, &h, err, sizeof(err)) < 0);
	assert_true(strlen(err) > 0);
	assert_int_equal(go_rate_restore(NULL), 0);
}

/* A "memtop" (a child) sets the rate and dies without putting it back:
 * its guard does. */
static void test_guard_puts_back(void **state)
{
	pid_t pid = target(0, 1), memtop, guard;
	int status;

	/* the guard, orphaned when "memtop" exits, becomes our child */
	assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), 0);
	memtop = fork();
	if (memtop == 0) {
		struct go_rate_hold *h;
		char err[256];

		_exit(go_rate_enable(pid, addr(&rate_var), 0, 524288, &h, err, sizeof(err)) ? 1 : 0);
	}
	assert_int_equal(waitpid(memtop, &status, 0), memtop);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	/* the guard saw the pipe's end at memtop's exit, put the 0 back and
	 * ended */
	guard = waitpid(-1, &status, 0);
	assert_true(guard > 0 && guard != pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_int_equal(peek(pid), 0);
	prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0);
	end(pid);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_set_and_put_back),
		cmocka_unit_test(test_changed_by_the_program_is_left),
		cmocka_unit_test(test_nothing_done),
		cmocka_unit_test(test_guard_puts_back),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

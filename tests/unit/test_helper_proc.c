// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_helper_proc.c - a detached helper keeps exactly the descriptors it
 * was told to (where they were), has /dev/null for the others of 0, 1 and
 * 2, blocks every signal but the one it waits for, and leaves its parent's
 * process group. Each case forks a helper that reports what it has through
 * a pipe it keeps; and the pipe helper_proc_fork makes joins the helper
 * and memtop the way asked.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "util/helper_proc.h"

#define SCAN 64 /* descriptors looked at */

struct report {
	char open[SCAN];  /* 1: open */
	char devnull[3];  /* 0, 1, 2: /dev/null */
	int blocked_int;  /* SIGINT blocked */
	int blocked_kept; /* the kept signal blocked */
	int own_group;    /* its own process group */
};

static int is_devnull(int fd)
{
	struct stat a, b;

	return !fstat(fd, &a) && !stat("/dev/null", &b) && a.st_rdev == b.st_rdev &&
	       S_ISCHR(a.st_mode);
}

/* Fork a helper keeping keep[0..n) plus its report pipe's write end. */
static struct report run_helper(const int *keep, int n, int keep_sig)
{
	struct report r;
	int fds[2], all[HELPER_PROC_KEEP_MAX], i;
	pid_t child;
	int st;

	assert_int_equal(pipe(fds), 0);
	child = fork();
	assert_true(child >= 0);
	if (!child) {
		sigset_t now;

		for (i = 0; i < n; i++)
			all[i] = keep[i];
		all[n] = fds[1];
		helper_proc_detach(all, n + 1, keep_sig);
		memset(&r, 0, sizeof(r));
		for (i = 0; i < SCAN; i++)
			r.open[i] = fcntl(i, F_GETFD) >= 0;
		for (i = 0; i < 3; i++)
			r.devnull[i] = (char)is_devnull(i);
		sigprocmask(SIG_SETMASK, NULL, &now);
		r.blocked_int = sigismember(&now, SIGINT);
		r.blocked_kept = keep_sig ? sigismember(&now, keep_sig) : 0;
		r.own_group = getpgrp() == getpid();
		_exit(write(fds[1], &r, sizeof(r)) == (ssize_t)sizeof(r) ? 0 : 1);
	}
	close(fds[1]);
	assert_int_equal(read(fds[0], &r, sizeof(r)), sizeof(r));
	close(fds[0]);
	assert_int_equal(waitpid(child, &st, 0), child);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	r.open[fds[1]] = 0; /* the report's own pipe: kept, not the case's */
	return r;
}

/* Descriptors 10, 20 and 30 open in the parent; the helper keeps some. */
static void check_keeps(const int *keep, int n)
{
	int extra[] = { 10, 20, 30 }, i, j, null = open("/dev/zero", O_RDONLY);
	struct report r;

	assert_true(null >= 0);
	for (i = 0; i < 3; i++)
		assert_int_equal(dup2(null, extra[i]), extra[i]);
	close(null);
	r = run_helper(keep, n, SIGALRM);
	for (i = 3; i < SCAN; i++) {
		int want = 0;

		for (j = 0; j < n; j++)
			want |= keep[j] == i;
		if (i != 10 && i != 20 && i != 30 && !want)
			continue; /* the report pipe, or never open */
		assert_int_equal(r.open[i], want);
	}
	for (i = 0; i < 3; i++) {
		int kept = 0;

		for (j = 0; j < n; j++)
			kept |= keep[j] == i;
		assert_true(r.open[i]);
		if (!kept)
			assert_true(r.devnull[i]);
	}
	assert_true(r.blocked_int);
	assert_false(r.blocked_kept);
	assert_true(r.own_group);
	for (i = 0; i < 3; i++)
		close(extra[i]);
}

static void test_keeps_none(void **state)
{
	(void)state;
	check_keeps(NULL, 0);
}

static void test_keeps_in_any_order(void **state)
{
	int keep[] = { 30, 10 };

	(void)state;
	check_keeps(keep, 2);
}

static void test_keeps_three_and_a_low_one(void **state)
{
	int keep[] = { 20, 1, 10 };

	(void)state;
	check_keeps(keep, 3);
}

static void test_skips_negative(void **state)
{
	int keep[] = { -1, 20 };

	(void)state;
	check_keeps(keep, 2);
}

/* The pipe of helper_proc_fork: the helper gets the end asked for, memtop
 * the other, and a byte crosses it either way. */
static void test_fork_pipe_both_ways(void **state)
{
	char err[128], c = 'x';
	int end, st;
	pid_t child;

	(void)state;
	child = helper_proc_fork(true, &end, "a reader", err, sizeof(err));
	assert_true(child >= 0);
	if (!child) {
		char got = 0;

		_exit(read(end, &got, 1) == 1 ? got : 1);
	}
	assert_int_equal(write(end, &c, 1), 1);
	close(end);
	assert_int_equal(waitpid(child, &st, 0), child);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 'x');

	child = helper_proc_fork(false, &end, "a writer", err, sizeof(err));
	assert_true(child >= 0);
	if (!child)
		_exit(write(end, "y", 1) == 1 ? 0 : 1);
	c = 0;
	assert_int_equal(read(end, &c, 1), 1);
	assert_int_equal(c, 'y');
	/* the helper's end closed with it: end of file, not a hang */
	assert_int_equal(read(end, &c, 1), 0);
	close(end);
	assert_int_equal(waitpid(child, &st, 0), child);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_keeps_none),
		cmocka_unit_test(test_keeps_in_any_order),
		cmocka_unit_test(test_keeps_three_and_a_low_one),
		cmocka_unit_test(test_skips_negative),
		cmocka_unit_test(test_fork_pipe_both_ways),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

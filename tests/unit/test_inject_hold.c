// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_inject_hold.c - which thread a hold picks: never one blocked where
 * a stop makes its call fail with EINTR (epoll_wait) while another one can
 * be had, and the list of such calls itself.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sched.h>

#include "probe/inject_hold.h"

static void test_eintr_prone(void **state)
{
	(void)state;
	assert_true(inject_hold_eintr_prone(SYS_epoll_wait));
	assert_true(inject_hold_eintr_prone(SYS_epoll_pwait));
	assert_true(inject_hold_eintr_prone(SYS_rt_sigtimedwait));
	assert_true(inject_hold_eintr_prone(SYS_semtimedop));
	assert_false(inject_hold_eintr_prone(SYS_read));
	assert_false(inject_hold_eintr_prone(SYS_futex));
	assert_false(inject_hold_eintr_prone(SYS_clock_nanosleep));
	assert_false(inject_hold_eintr_prone(SYS_poll));
	assert_false(inject_hold_eintr_prone(-1));
}

struct blocked {
	pid_t tid;
	int fd;
};

static void *in_epoll(void *arg)
{
	struct blocked *b = arg;
	struct epoll_event ev;

	b->tid = (pid_t)syscall(SYS_gettid);
	while (epoll_wait(b->fd, &ev, 1, -1) < 0 && errno == EINTR)
		;
	return NULL;
}

static void *in_read(void *arg)
{
	struct blocked *b = arg;
	char c;

	b->tid = (pid_t)syscall(SYS_gettid);
	while (read(b->fd, &c, 1) < 0 && errno == EINTR)
		;
	return NULL;
}

/* Until thread tid of pid is blocked in system call nr or nr2 (its
 * /proc/PID/task/TID/syscall starts with it), at most 10 s. */
static bool blocked_in(pid_t pid, pid_t tid, long nr, long nr2)
{
	struct timespec t0, now;
	char path[64], buf[64];

	clock_gettime(CLOCK_MONOTONIC, &t0);
	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", pid, tid);
	for (;;) {
		FILE *f = fopen(path, "re");
		bool yes = f && fgets(buf, sizeof(buf), f) && buf[0] >= '0' && buf[0] <= '9' &&
			   (atol(buf) == nr || atol(buf) == nr2);

		if (f)
			fclose(f);
		if (yes)
			return true;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec - t0.tv_sec > 10)
			return false;
		sched_yield();
	}
}

/* This process: the main thread and one more in epoll_wait (EINTR after
 * a stop), one in read (restarted). A child picks among them: the read
 * thread, where holding the main thread (the rule before) would have cut
 * its epoll_wait. */
static void test_pick_avoids_epoll(void **state)
{
	struct blocked ep = { 0 }, rd = { 0 };
	struct epoll_event ev = { .events = EPOLLIN };
	pthread_t a, b;
	int p[2], answer[2];
	pid_t child, picked = 0;

	(void)state;
	ep.fd = epoll_create1(EPOLL_CLOEXEC);
	assert_true(ep.fd >= 0);
	assert_int_equal(pipe(p), 0);
	assert_int_equal(pipe(answer), 0);
	rd.fd = p[0];
	assert_int_equal(pthread_create(&a, NULL, in_epoll, &ep), 0);
	assert_int_equal(pthread_create(&b, NULL, in_read, &rd), 0);
	while (!__atomic_load_n(&ep.tid, __ATOMIC_ACQUIRE) ||
	       !__atomic_load_n(&rd.tid, __ATOMIC_ACQUIRE))
		sched_yield();
	child = fork();
	assert_true(child >= 0);
	if (!child) {
		pid_t parent = getppid(), pick;

		if (!blocked_in(parent, parent, SYS_epoll_wait, SYS_epoll_pwait) ||
		    !blocked_in(parent, ep.tid, SYS_epoll_wait, SYS_epoll_pwait) ||
		    !blocked_in(parent, rd.tid, SYS_read, SYS_read))
			_exit(2);
		pick = inject_hold_pick_thread(parent);
		_exit(write(answer[1], &pick, sizeof(pick)) == sizeof(pick) ? 0 : 3);
	}
	close(answer[1]);
	{
		int main_ep = epoll_create1(EPOLL_CLOEXEC);
		struct epoll_event got;

		ev.data.fd = answer[0];
		assert_int_equal(epoll_ctl(main_ep, EPOLL_CTL_ADD, answer[0], &ev), 0);
		while (epoll_wait(main_ep, &got, 1, -1) < 0 && errno == EINTR)
			;
		close(main_ep);
	}
	assert_int_equal(read(answer[0], &picked, sizeof(picked)), sizeof(picked));
	assert_int_equal(picked, rd.tid);
	waitpid(child, NULL, 0);
	assert_int_equal(write(p[1], "x", 1), 1);
	pthread_join(b, NULL);
	pthread_cancel(a);
	pthread_join(a, NULL);
	close(answer[0]);
	close(p[0]);
	close(p[1]);
	close(ep.fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_eintr_prone),
		cmocka_unit_test(test_pick_avoids_epoll),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

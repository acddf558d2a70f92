// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_evloop.c - the event loop (util/evloop.h) on a fake clock and a
 * scripted wait: the wait is as long as the earliest armed timer (rounded
 * up to the millisecond, forever with none), timers fire once per arming
 * in the order they were added, ready descriptors are served in their
 * order and only when ready, the hooks run where the contract says, a
 * stop ends the pass at once, and a failed wait ends the run (EINTR does
 * not). Also the bounds of the tables, and one pass of the real system
 * wait on a pipe.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "util/evloop.h"

#define MS 1000000ULL

/* A fake machine: the clock moves only when the loop waits (by the
 * timeout it asked for, or by `step` when it waits forever), and the
 * descriptors listed in `ready` are readable on the next wait. */
struct fake {
	struct evloop *l;
	__u64 now;
	int ready[EVLOOP_MAX_FDS], nready;
	int waits, last_timeout;
	int fail_errno; /* the next wait fails with it */
	char log[256];  /* what ran, in order */
	int stop_after; /* evloop_stop after this many log entries (0: never) */
};

static void note(struct fake *f, const char *what)
{
	strncat(f->log, what, sizeof(f->log) - strlen(f->log) - 1);
	strncat(f->log, " ", sizeof(f->log) - strlen(f->log) - 1);
}

static __u64 fake_now(void *ctx)
{
	return ((struct fake *)ctx)->now;
}

static int fake_wait(void *ctx, struct pollfd *fds, nfds_t n, int timeout_ms)
{
	struct fake *f = ctx;
	int got = 0;

	f->waits++;
	f->last_timeout = timeout_ms;
	if (f->fail_errno) {
		errno = f->fail_errno;
		f->fail_errno = 0;
		f->nready = 0; /* what was ready is not seen by this wait */
		return -1;
	}
	for (nfds_t i = 0; i < n; i++) {
		fds[i].revents = 0;
		for (int k = 0; k < f->nready; k++)
			if (fds[i].fd >= 0 && fds[i].fd == f->ready[k]) {
				fds[i].revents = POLLIN;
				got++;
			}
	}
	f->nready = 0;
	if (timeout_ms > 0)
		f->now += (__u64)timeout_ms * MS;
	return got;
}

static void setup(struct evloop *l, struct fake *f)
{
	struct evloop_sys sys = { fake_now, fake_wait, f };

	memset(f, 0, sizeof(*f));
	f->l = l;
	f->now = 1000 * MS;
	evloop_init(l, &sys);
}

static void maybe_stop(struct fake *f)
{
	if (f->stop_after && --f->stop_after == 0)
		evloop_stop(f->l, 7);
}

/* A callback's context: the fake it notes into, under its own name. */
struct tag {
	struct fake *f;
	const char *name;
};

static void on_fd(struct evloop *l, void *ctx, short revents)
{
	const struct tag *t = ctx;

	(void)l;
	assert_true(revents & POLLIN);
	note(t->f, t->name);
	maybe_stop(t->f);
}

static void on_timer(struct evloop *l, void *ctx, __u64 now)
{
	const struct tag *t = ctx;
	char s[32];

	(void)l;
	snprintf(s, sizeof(s), "%s@%llu", t->name, (unsigned long long)(now / MS));
	note(t->f, s);
	maybe_stop(t->f);
}

static void before(struct evloop *l, void *ctx, __u64 now)
{
	(void)l;
	(void)now;
	note(ctx, "w");
}

static void each(struct evloop *l, void *ctx, __u64 now)
{
	(void)l;
	(void)now;
	note(ctx, "p");
	maybe_stop(ctx);
}

/* Timers: the wait lasts until the earliest, each fires once, in the
 * order added when due together; a disarmed one never fires. */
static void test_timers(void **state)
{
	struct evloop l;
	struct fake f;
	struct tag n1 = { &f, "t1" }, n2 = { &f, "t2" }, n3 = { &f, "t3" };
	int t1, t2, t3;

	(void)state;
	setup(&l, &f);
	t1 = evloop_add_timer(&l, on_timer, &n1);
	t2 = evloop_add_timer(&l, on_timer, &n2);
	t3 = evloop_add_timer(&l, on_timer, &n3);
	assert_int_equal(t1, 0);
	assert_int_equal(t2, 1);
	evloop_timer_at(&l, t2, f.now + 30 * MS);
	evloop_timer_at(&l, t1, f.now + 30 * MS);
	evloop_timer_at(&l, t3, f.now + 10 * MS);
	evloop_timer_at(&l, t3, EVLOOP_NEVER); /* disarmed again */
	assert_int_equal(evloop_timer_when(&l, t3), EVLOOP_NEVER);
	f.stop_after = 2;
	assert_int_equal(evloop_run(&l), 7);
	assert_int_equal(f.waits, 1);
	assert_int_equal(f.last_timeout, 30);
	assert_string_equal(f.log, "t1@1030 t2@1030 ");
	/* each fired once: both are disarmed now */
	assert_int_equal(evloop_timer_when(&l, t1), EVLOOP_NEVER);
	assert_int_equal(evloop_timer_when(&l, t2), EVLOOP_NEVER);
}

/* A deadline between two milliseconds is waited for rounded up: a timer
 * is never woken for early; one already due waits 0. */
static void test_wait_rounds_up(void **state)
{
	struct evloop l;
	struct fake f;
	struct tag n1 = { &f, "t1" };
	int t;

	(void)state;
	setup(&l, &f);
	t = evloop_add_timer(&l, on_timer, &n1);
	evloop_timer_at(&l, t, f.now + 2 * MS + 1);
	f.stop_after = 1;
	assert_int_equal(evloop_run(&l), 7);
	assert_int_equal(f.last_timeout, 3);
	evloop_timer_at(&l, t, f.now - 5 * MS);
	f.log[0] = '\0';
	f.stop_after = 1;
	assert_int_equal(evloop_run(&l), 7);
	assert_int_equal(f.last_timeout, 0);
}

/* Descriptors: served in the order added, only when ready; one set to
 * -1 is not waited on; the hooks run before the wait and after the
 * descriptors, before the timers. */
static void test_fds_and_hooks(void **state)
{
	struct evloop l;
	struct fake f;
	struct tag na = { &f, "A" }, nb = { &f, "B" }, n1 = { &f, "t1" };
	int a, b, t, wake;

	(void)state;
	setup(&l, &f);
	a = evloop_add_fd(&l, 40, on_fd, &na);
	b = evloop_add_fd(&l, 41, on_fd, &nb);
	evloop_add_fd(&l, 42, NULL, NULL); /* only wakes */
	wake = evloop_add_timer(&l, NULL, NULL);
	t = evloop_add_timer(&l, on_timer, &n1);
	evloop_hooks(&l, before, each, &f);
	evloop_timer_at(&l, t, f.now); /* due at once */
	evloop_timer_at(&l, wake, f.now);
	f.ready[f.nready++] = 42;
	f.ready[f.nready++] = 41;
	f.ready[f.nready++] = 40;
	f.stop_after = 4; /* w is not counted: it does not call maybe_stop */
	assert_int_equal(evloop_run(&l), 7);
	assert_string_equal(f.log, "w A B p t1@1000 ");
	assert_int_equal(evloop_timer_when(&l, wake), EVLOOP_NEVER); /* fired, nothing ran */

	/* b set to -1: never served, even when "ready" */
	evloop_fd_set(&l, b, -1);
	f.log[0] = '\0';
	f.ready[f.nready++] = 41;
	f.ready[f.nready++] = 40;
	f.stop_after = 2;
	assert_int_equal(evloop_run(&l), 7);
	assert_string_equal(f.log, "w A p ");
	(void)a;
}

/* A stop ends the pass at once: the callbacks after it do not run. */
static void test_stop_ends_the_pass(void **state)
{
	struct evloop l;
	struct fake f;
	struct tag na = { &f, "A" }, nb = { &f, "B" }, n1 = { &f, "t1" };
	int t;

	(void)state;
	setup(&l, &f);
	evloop_add_fd(&l, 40, on_fd, &na);
	evloop_add_fd(&l, 41, on_fd, &nb);
	t = evloop_add_timer(&l, on_timer, &n1);
	evloop_hooks(&l, NULL, each, &f);
	evloop_timer_at(&l, t, f.now);
	f.ready[f.nready++] = 40;
	f.ready[f.nready++] = 41;
	f.stop_after = 1;
	assert_int_equal(evloop_run(&l), 7);
	assert_string_equal(f.log, "A ");
	/* the timer was not served: still armed for the next run */
	assert_int_equal(evloop_timer_when(&l, t), 1000 * MS);
}

/* A failed wait ends the run with its errno; EINTR is a pass with
 * nothing ready. */
static void test_wait_failure(void **state)
{
	struct evloop l;
	struct fake f;
	struct tag na = { &f, "A" }, n1 = { &f, "t1" };
	int t;

	(void)state;
	setup(&l, &f);
	evloop_add_fd(&l, 40, on_fd, &na);
	t = evloop_add_timer(&l, on_timer, &n1);
	evloop_timer_at(&l, t, f.now + 5 * MS);
	f.fail_errno = EINTR;
	f.ready[f.nready++] = 40; /* not served: the wait was interrupted */
	f.stop_after = 1;
	assert_int_equal(evloop_run(&l), 7);
	assert_int_equal(f.waits, 2);
	assert_string_equal(f.log, "t1@1005 ");
	f.fail_errno = EBADF;
	assert_int_equal(evloop_run(&l), -EBADF);
}

/* With nothing armed the wait is forever (-1). */
static void test_no_timer_waits_forever(void **state)
{
	struct evloop l;
	struct fake f;
	struct tag na = { &f, "A" };

	(void)state;
	setup(&l, &f);
	evloop_add_fd(&l, 40, on_fd, &na);
	f.ready[f.nready++] = 40;
	f.stop_after = 1;
	assert_int_equal(evloop_run(&l), 7);
	assert_int_equal(f.last_timeout, -1);
}

static void test_bounds(void **state)
{
	struct evloop l;
	struct fake f;
	int i;

	(void)state;
	setup(&l, &f);
	for (i = 0; i < EVLOOP_MAX_FDS; i++)
		assert_int_equal(evloop_add_fd(&l, 40 + i, NULL, NULL), i);
	assert_int_equal(evloop_add_fd(&l, 99, NULL, NULL), -ENOSPC);
	for (i = 0; i < EVLOOP_MAX_TIMERS; i++)
		assert_int_equal(evloop_add_timer(&l, NULL, NULL), i);
	assert_int_equal(evloop_add_timer(&l, NULL, NULL), -ENOSPC);
	/* ids out of range change nothing */
	evloop_timer_at(&l, 99, 5);
	evloop_fd_set(&l, -1, 5);
	assert_int_equal(evloop_timer_when(&l, 99), EVLOOP_NEVER);
}

/* The real wait: a readable pipe is served in one pass. */
struct real_ctx {
	int served;
};

static void on_pipe(struct evloop *l, void *ctx, short revents)
{
	assert_true(revents & POLLIN);
	((struct real_ctx *)ctx)->served++;
	evloop_stop(l, 0);
}

static void test_real_pipe(void **state)
{
	struct evloop l;
	struct real_ctx c = { 0 };
	int p[2];

	(void)state;
	assert_int_equal(pipe(p), 0);
	assert_int_equal(write(p[1], "x", 1), 1);
	evloop_init(&l, NULL);
	evloop_add_fd(&l, p[0], on_pipe, &c);
	assert_int_equal(evloop_run(&l), 0);
	assert_int_equal(c.served, 1);
	close(p[0]);
	close(p[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_timers),        cmocka_unit_test(test_wait_rounds_up),
		cmocka_unit_test(test_fds_and_hooks), cmocka_unit_test(test_stop_ends_the_pass),
		cmocka_unit_test(test_wait_failure),  cmocka_unit_test(test_no_timer_waits_forever),
		cmocka_unit_test(test_bounds),        cmocka_unit_test(test_real_pipe),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

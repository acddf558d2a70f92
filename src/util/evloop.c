// SPDX-License-Identifier: GPL-2.0-only
/*
 * evloop.c - one small event loop (evloop.h). Owns nothing but its
 * tables: the descriptors are the callers', and each pass builds the
 * poll set anew from them, so a callback may change any registration.
 */
#include "util/evloop.h"

#include <errno.h>
#include <string.h>

#include "util/clock.h"

static __u64 real_now(void *ctx)
{
	(void)ctx;
	return clock_mono_ns();
}

static int real_wait(void *ctx, struct pollfd *fds, nfds_t n, int timeout_ms)
{
	(void)ctx;
	return poll(fds, n, timeout_ms);
}

const struct evloop_sys evloop_sys_real = { real_now, real_wait, NULL };

void evloop_init(struct evloop *l, const struct evloop_sys *sys)
{
	memset(l, 0, sizeof(*l));
	l->sys = sys ? *sys : evloop_sys_real;
}

int evloop_add_fd(struct evloop *l, int fd, evloop_fd_fn fn, void *ctx)
{
	if (l->nfds == EVLOOP_MAX_FDS)
		return -ENOSPC;
	l->fds[l->nfds].fd = fd;
	l->fds[l->nfds].fn = fn;
	l->fds[l->nfds].ctx = ctx;
	return l->nfds++;
}

void evloop_fd_set(struct evloop *l, int id, int fd)
{
	if (id >= 0 && id < l->nfds)
		l->fds[id].fd = fd;
}

int evloop_add_timer(struct evloop *l, evloop_timer_fn fn, void *ctx)
{
	if (l->ntimers == EVLOOP_MAX_TIMERS)
		return -ENOSPC;
	l->timers[l->ntimers].at_ns = EVLOOP_NEVER;
	l->timers[l->ntimers].fn = fn;
	l->timers[l->ntimers].ctx = ctx;
	return l->ntimers++;
}

void evloop_timer_at(struct evloop *l, int id, __u64 at_ns)
{
	if (id >= 0 && id < l->ntimers)
		l->timers[id].at_ns = at_ns;
}

__u64 evloop_timer_when(const struct evloop *l, int id)
{
	return id >= 0 && id < l->ntimers ? l->timers[id].at_ns : EVLOOP_NEVER;
}

void evloop_hooks(struct evloop *l, evloop_hook_fn before_wait, evloop_hook_fn each_pass, void *ctx)
{
	l->before_wait = before_wait;
	l->each_pass = each_pass;
	l->hook_ctx = ctx;
}

void evloop_stop(struct evloop *l, int code)
{
	l->stopping = true;
	l->code = code;
}

/* Milliseconds until the earliest armed timer, rounded up (a timer is
 * never woken for early); -1 when none is armed. */
static int wait_ms(const struct evloop *l, __u64 now)
{
	__u64 first = EVLOOP_NEVER, ms;
	int i;

	for (i = 0; i < l->ntimers; i++)
		if (l->timers[i].at_ns < first)
			first = l->timers[i].at_ns;
	if (first == EVLOOP_NEVER)
		return -1;
	if (first <= now)
		return 0;
	ms = (first - now + 999999) / 1000000;
	return ms > 0x7fffffff ? 0x7fffffff : (int)ms;
}

static int one_pass(struct evloop *l)
{
	struct pollfd pfd[EVLOOP_MAX_FDS];
	int i, n = l->nfds;
	__u64 now = l->sys.now_ns(l->sys.ctx);

	if (l->before_wait) {
		l->before_wait(l, l->hook_ctx, now);
		if (l->stopping)
			return 0;
	}
	for (i = 0; i < n; i++)
		pfd[i] = (struct pollfd){ .fd = l->fds[i].fd, .events = POLLIN };
	if (l->sys.wait(l->sys.ctx, pfd, (nfds_t)n, wait_ms(l, now)) < 0) {
		if (errno != EINTR)
			return -errno;
		for (i = 0; i < n; i++)
			pfd[i].revents = 0;
	}
	for (i = 0; i < n; i++) {
		/* a callback before may have changed this registration */
		if (pfd[i].fd < 0 || !pfd[i].revents || l->fds[i].fd != pfd[i].fd)
			continue;
		if (l->fds[i].fn)
			l->fds[i].fn(l, l->fds[i].ctx, pfd[i].revents);
		if (l->stopping)
			return 0;
	}
	if (l->each_pass) {
		l->each_pass(l, l->hook_ctx, l->sys.now_ns(l->sys.ctx));
		if (l->stopping)
			return 0;
	}
	now = l->sys.now_ns(l->sys.ctx);
	for (i = 0; i < l->ntimers; i++) {
		if (l->timers[i].at_ns > now)
			continue;
		l->timers[i].at_ns = EVLOOP_NEVER;
		if (l->timers[i].fn)
			l->timers[i].fn(l, l->timers[i].ctx, now);
		if (l->stopping)
			return 0;
	}
	return 0;
}

int evloop_run(struct evloop *l)
{
	l->stopping = false;
	l->code = 0;
	while (!l->stopping) {
		int e = one_pass(l);

		if (e)
			return e;
	}
	return l->code;
}

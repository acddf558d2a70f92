/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * evloop.h - one small event loop, after redis's ae.c: descriptors and
 * timers registered with callbacks, one wait for all of them, run until a
 * callback stops it. The live run, --daemon, --replay and `memtop attach`
 * each register what they wait on instead of keeping their own deadlines.
 *
 * One pass: the before-wait hook (a caller re-arms timers whose deadline
 * another module keeps), one poll() until the earliest armed timer (or
 * forever: none armed), the ready descriptors' callbacks in the order
 * they were added, the each-pass hook, then the due timers' callbacks in
 * the order they were added. A timer fires once per arming: its callback
 * re-arms it (evloop_timer_at) or it stays disarmed. Once a callback
 * called evloop_stop() no later callback of the pass runs.
 *
 * The clock and the wait come through struct evloop_sys, so the unit
 * tests drive it on a fake clock; evloop_sys_real is CLOCK_MONOTONIC and
 * poll(). Bounded: EVLOOP_MAX_FDS descriptors, EVLOOP_MAX_TIMERS timers.
 */
#ifndef MEMTOP_UTIL_EVLOOP_H
#define MEMTOP_UTIL_EVLOOP_H

#include <poll.h>
#include <stdbool.h>
#include <linux/types.h>

#define EVLOOP_MAX_FDS 8
#define EVLOOP_MAX_TIMERS 8
#define EVLOOP_NEVER (~0ULL) /* a disarmed timer's deadline */

struct evloop;

struct evloop_sys {
	__u64 (*now_ns)(void *ctx);
	/* poll(2)'s contract; timeout_ms -1: no timer armed */
	int (*wait)(void *ctx, struct pollfd *fds, nfds_t n, int timeout_ms);
	void *ctx;
};

extern const struct evloop_sys evloop_sys_real;

typedef void (*evloop_fd_fn)(struct evloop *l, void *ctx, short revents);
typedef void (*evloop_timer_fn)(struct evloop *l, void *ctx, __u64 now_ns);
typedef void (*evloop_hook_fn)(struct evloop *l, void *ctx, __u64 now_ns);

/* The loop state; a caller keeps it (on its stack) and sets it up with
 * evloop_init. */
struct evloop {
	struct evloop_sys sys;
	struct {
		int fd; /* < 0: skipped */
		evloop_fd_fn fn;
		void *ctx;
	} fds[EVLOOP_MAX_FDS];
	struct {
		__u64 at_ns; /* EVLOOP_NEVER: disarmed */
		evloop_timer_fn fn;
		void *ctx;
	} timers[EVLOOP_MAX_TIMERS];
	int nfds, ntimers;
	evloop_hook_fn before_wait, each_pass;
	void *hook_ctx;
	bool stopping;
	int code;
};

/* An empty loop on sys (NULL: evloop_sys_real). */
void evloop_init(struct evloop *l, const struct evloop_sys *sys);

/* fd watched for POLLIN (HUP and errors too); fn NULL: it only wakes the
 * loop (the each-pass hook does its work). Its id (>= 0, for
 * evloop_fd_set), or -ENOSPC. */
int evloop_add_fd(struct evloop *l, int fd, evloop_fd_fn fn, void *ctx);
/* The descriptor id watches from now on (< 0: none). */
void evloop_fd_set(struct evloop *l, int id, int fd);

/* A timer, disarmed; fn NULL: it only wakes the loop. Its id (>= 0), or
 * -ENOSPC. */
int evloop_add_timer(struct evloop *l, evloop_timer_fn fn, void *ctx);
/* Fire at at_ns (EVLOOP_NEVER: disarm). */
void evloop_timer_at(struct evloop *l, int id, __u64 at_ns);
__u64 evloop_timer_when(const struct evloop *l, int id);

/* Hooks run every pass (either may be NULL), with ctx. */
void evloop_hooks(struct evloop *l, evloop_hook_fn before_wait, evloop_hook_fn each_pass, void *ctx);

/* End the run after the callback that calls it: evloop_run returns code. */
void evloop_stop(struct evloop *l, int code);

/* Run passes until evloop_stop. Returns its code, or -errno when the wait
 * fails (other than EINTR). */
int evloop_run(struct evloop *l);

#endif /* MEMTOP_UTIL_EVLOOP_H */

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * scenario_common.h - plumbing of the leak-score scenarios (scenario_*.c):
 * workloads whose truth is which call sites leak and when, for
 * tests/integration/test_scenarios.py and docs/leak-score.md.
 *
 * Protocol (mt_workload.h): print "READY pid=N", wait for the start (a
 * byte on stdin by default), print the truth as one JSON line, run for
 * --duration=SECS, then wait for EOF on stdin and _exit(). The truth is
 *
 *   {"truth": "scenario_x", "pid": N, "time": UNIX_SECS, "duration_s": D,
 *    "sites": [{"function": "leak_steady", "leaks": true,
 *               "leak_start_s": 0, "leak_stop_s": null,
 *               "leak_bytes_per_s": 2097152}, ...]}
 *
 * with times relative to "time", the moment the phase began. Every site is
 * a WL_SITE function that calls malloc itself and then writes the block
 * (never a tail call, never turned into calloc), so memtop must name it.
 *
 * The loop runs in steps of SCN_STEP_S and sleeps between them. To keep
 * memtop's probe cost inside its default --max-overhead budget (a share of
 * the target's own CPU time), each loop also computes over its blocks and
 * burns CPU up to `cpu_share` of the wall time, like a server doing work
 * between allocations.
 */
#ifndef MEMTOP_SCENARIO_COMMON_H
#define MEMTOP_SCENARIO_COMMON_H

#include <stdbool.h>
#include <stdio.h>

#include "mt_workload.h"

#define SCN_STEP_S 0.01
#define SCN_MAX_SITES 8
#define KiB 1024UL
#define MiB (1024UL * 1024UL)

struct scn_site {
	const char *function;
	bool leaks;
	double leak_start_s;
	double leak_stop_s; /* < 0: leaks until the end */
	double leak_bytes_per_s;
};

struct scn {
	const char *name;
	double duration_s; /* default; --duration overrides */
	double cpu_share;  /* of one CPU, per loop */
	struct scn_site sites[SCN_MAX_SITES];
};

/* A step of a loop: t seconds into the phase, dt since the last step. */
typedef void scn_step_fn(void *arg, double t, double dt);

/* Blocks of `size` due in a step of dt at bytes_per_s, carrying the
 * fraction over to the next step. */
static inline unsigned long scn_quota(double *carry, double bytes_per_s, double dt, unsigned long size)
{
	unsigned long n;

	*carry += bytes_per_s * dt / (double)size;
	n = (unsigned long)*carry;
	*carry -= (double)n;
	return n;
}

/* Fill a fresh block (the write makes it resident and keeps the compiler
 * from dropping or merging the allocation). */
static inline void scn_fill(void *p, unsigned long size)
{
	if (!p)
		wl_die("out of memory", NULL);
	memset(p, 0x5a, size);
}

/* Read a block back: the "work" a request does with its buffer. */
static inline unsigned long scn_work(const void *p, unsigned long size)
{
	const unsigned long *w = p;
	unsigned long sum = 0;

	for (unsigned long i = 0; i < size / sizeof(*w); i += 8)
		sum += w[i];
	return sum;
}

static inline double scn_thread_cpu(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Burn CPU until this thread has used share of a step since cpu0 (the
 * step's own work included), and never past until, the next step's time.
 * A shortfall is not carried over: a thread that gets less than share of a
 * CPU on a loaded machine would otherwise burn for good and never step
 * again until the load fell (a CI run saw two scenarios make no
 * allocation for 23 s, then all of it in one step). */
static inline void scn_burn(double share, double cpu0, double until)
{
	static volatile unsigned long spin;

	while (scn_thread_cpu() - cpu0 < share * SCN_STEP_S && wl_now() < until)
		for (int i = 0; i < 20000; i++)
			spin += (unsigned long)i;
}

/* Run step every SCN_STEP_S for duration seconds from t0. */
static inline void scn_loop(double t0, double duration, double share, scn_step_fn *step, void *arg)
{
	double last = 0;

	for (unsigned long k = 1;; k++) {
		double due = (double)k * SCN_STEP_S, now, cpu0;

		if (due > duration)
			break;
		wl_sleep(t0 + due - wl_now());
		now = wl_now() - t0;
		cpu0 = scn_thread_cpu();
		step(arg, now, now - last);
		last = now;
		scn_burn(share, cpu0, t0 + due + SCN_STEP_S);
	}
}

static inline void scn_print_truth(const struct scn *s, double duration)
{
	static char buf[4096];
	struct timespec ts;
	int len;

	clock_gettime(CLOCK_REALTIME, &ts);
	len = snprintf(buf, sizeof(buf),
		       "{\"truth\":\"%s\",\"pid\":%d,\"time\":%.6f,\"duration_s\":%.3f,\"sites\":[",
		       s->name, (int)getpid(), (double)ts.tv_sec + (double)ts.tv_nsec / 1e9,
		       duration);
	for (int i = 0; i < SCN_MAX_SITES && s->sites[i].function; i++) {
		const struct scn_site *x = &s->sites[i];
		char stop[32] = "null";

		if (x->leaks && x->leak_stop_s >= 0)
			snprintf(stop, sizeof(stop), "%.3f", x->leak_stop_s);
		len += snprintf(buf + len, sizeof(buf) - (size_t)len,
				"%s{\"function\":\"%s\",\"leaks\":%s,\"leak_start_s\":%.3f,"
				"\"leak_stop_s\":%s,\"leak_bytes_per_s\":%.0f}",
				i ? "," : "", x->function, x->leaks ? "true" : "false",
				x->leaks ? x->leak_start_s : 0.0, stop,
				x->leaks ? x->leak_bytes_per_s : 0.0);
		if (len >= (int)sizeof(buf) - 8)
			wl_die("truth line too long", NULL);
	}
	len += snprintf(buf + len, sizeof(buf) - (size_t)len, "]}\n");
	wl_write_all(1, buf, (size_t)len);
}

/* Parse the options (--duration, extra if not NULL, and mt_workload.h's),
 * print READY, wait for the start and print the truth. Returns the phase's
 * start (wl_now()) and sets *duration. */
static inline double scn_begin(int argc, char **argv, const struct scn *s, const char *extra,
			       double *duration, struct wl_opts *o)
{
	const char *const known[] = { "duration", extra, NULL };
	double t0;

	wl_init(argc, argv, known, o);
	*duration = wl_arg_double(argc, argv, "duration", s->duration_s);
	wl_ready();
	wl_wait_start(o);
	t0 = wl_now();
	scn_print_truth(s, *duration);
	return t0;
}

/* The whole life of a one-loop scenario. */
static inline int scn_main(int argc, char **argv, const struct scn *s, scn_step_fn *step)
{
	struct wl_opts o;
	double duration, t0 = scn_begin(argc, argv, s, NULL, &duration, &o);

	scn_loop(t0, duration, s->cpu_share, step, NULL);
	wl_hold_exit(&o);
}

#endif /* MEMTOP_SCENARIO_COMMON_H */

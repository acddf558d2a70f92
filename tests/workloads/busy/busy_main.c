// SPDX-License-Identifier: GPL-2.0-only
/*
 * busy_main.c - the busy_leak workload (issue 12): a server under heavy
 * churn with a small leak deep in a library and a cache that plateaus,
 * the case where the overhead budget must back off and still find the
 * leak. Built with busy_lib.c (libbusy.so) by
 * tests/integration/test_backoff.py. Per second:
 *
 *   handle_request   --pairs-per-s malloc/free pairs (default 120,000) of
 *                    64..512 bytes, 24 per request, freed at once
 *   busy_lib_leak    30 blocks of 16 KiB kept forever (480 KiB/s), called
 *                    as busy_lib_store -> busy_lib_record -> busy_lib_leak
 *                    in libbusy.so
 *   cache_put        a FIFO cache of 1024 entries of 32 KiB (32 MiB) that
 *                    fills in the first 5 s, then replaces 64 entries a
 *                    second: it plateaus
 *
 * and each request computes for about 20 microseconds (calibrated before
 * READY), a tenth of a CPU at the default rate: a
 * fixed amount of work per request, so what the probes cost shows as lost
 * time, not as less computing. Steps of 10 ms; a step that comes late
 * does the requests that were due, up to two steps' worth (the rest is
 * shed, so that a starved process keeps its cache and leak on time). Protocol and options:
 * scenario_common.h (--duration) and --pairs-per-s; the truth names the
 * three sites, only busy_lib_leak leaks. Once a second it prints what
 * the two sites hold then (a machine that starves it puts it behind its
 * schedule), and how many blocks it has allocated since its loop began:
 *
 *   inuse UNIX_SECS busy_lib_leak=BYTES cache_put=BYTES allocs=N
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "../scenario_common.h"
#include "busy_lib.h"

#define ENTRIES 1024
#define ENTRY_SIZE (32 * KiB)
#define FILL_S 5.0
#define REPLACE_PER_S 64.0
#define PAIRS_PER_REQUEST 24

static struct scn scenario = {
	.name = "busy_leak",
	.duration_s = 60,
	.sites = {
		{ "busy_lib_leak", true, 0, -1, 30 * 16 * KiB },
		{ "cache_put" },
		{ "handle_request" },
	},
};

static double pairs_per_s = 120000;
static unsigned long leaked;     /* bytes busy_lib_store kept */
static unsigned long work_iters; /* per request */
static void *cache[ENTRIES];
static unsigned long inserted;
static unsigned long allocs; /* malloc calls since the loop began */

WL_SITE static void cache_put(unsigned long size)
{
	unsigned long slot = inserted++ % ENTRIES;
	char *p;

	free(cache[slot]); /* the oldest entry; NULL while filling */
	p = malloc(size);
	allocs++;
	scn_fill(p, size);
	cache[slot] = p;
}

WL_SITE static unsigned long handle_request(unsigned long seed)
{
	unsigned char *blk[PAIRS_PER_REQUEST];
	unsigned long sum = 0;

	for (int i = 0; i < PAIRS_PER_REQUEST; i++) {
		unsigned long size = 64 + ((seed + (unsigned long)i) * 97 % 449);

		blk[i] = malloc(size);
		if (!blk[i])
			wl_die("out of memory", NULL);
		blk[i][0] = (unsigned char)i;
		blk[i][size - 1] = (unsigned char)seed;
	}
	for (unsigned long k = 0; k < work_iters; k++)
		sum = sum * 6364136223846793005UL + blk[k % PAIRS_PER_REQUEST][0];
	for (int i = 0; i < PAIRS_PER_REQUEST; i++) {
		sum += blk[i][0];
		free(blk[i]);
	}
	return sum;
}

/* The line of what the sites hold, once a second. */
static void report_inuse(double t)
{
	static double next;
	struct timespec now;

	if (t < next)
		return;
	next = t + 1;
	clock_gettime(CLOCK_REALTIME, &now);
	printf("inuse %.3f busy_lib_leak=%lu cache_put=%lu allocs=%lu\n",
	       (double)now.tv_sec + (double)now.tv_nsec / 1e9, leaked,
	       (inserted < ENTRIES ? inserted : ENTRIES) * (unsigned long)ENTRY_SIZE, allocs);
	fflush(stdout);
}

static void step(void *arg, double t, double dt)
{
	static double c_leak, c_req;
	static unsigned long seed;
	unsigned long due, n;

	due = t < FILL_S ? (unsigned long)(t * ENTRIES / FILL_S)
			 : ENTRIES + (unsigned long)((t - FILL_S) * REPLACE_PER_S);
	while (inserted < due)
		cache_put(ENTRY_SIZE);
	for (n = scn_quota(&c_leak, 30 * 16 * KiB, dt, 16 * KiB); n; n--) {
		busy_lib_store(16 * KiB);
		leaked += 16 * KiB;
		allocs++;
	}
	for (n = scn_quota(&c_req, pairs_per_s / PAIRS_PER_REQUEST,
			   dt < 2 * SCN_STEP_S ? dt : 2 * SCN_STEP_S, 1);
	     n; n--) {
		wl_sink = (void *)handle_request(seed++);
		allocs += PAIRS_PER_REQUEST;
	}
	report_inuse(t);
}

/* Iterations of the request's arithmetic that take about us microseconds
 * (measured before READY, so no allocator call is involved). */
static unsigned long calibrate_work(double us)
{
	volatile unsigned long sink = 0;
	unsigned long n = 1 << 16, acc = 1;
	double t0 = scn_thread_cpu(), dt;

	for (unsigned long k = 0; k < n; k++)
		acc = acc * 6364136223846793005UL + k;
	sink = acc;
	(void)sink;
	dt = scn_thread_cpu() - t0;
	return dt > 0 ? (unsigned long)(us * 1e-6 / dt * (double)n) : n;
}

int main(int argc, char **argv)
{
	struct wl_opts o;
	double duration, t0, last = 0;

	pairs_per_s = wl_arg_double(argc, argv, "pairs-per-s", pairs_per_s);
	work_iters = calibrate_work(20);
	t0 = scn_begin(argc, argv, &scenario, "pairs-per-s", &duration, &o);
	for (unsigned long k = 1;; k++) {
		double due = (double)k * SCN_STEP_S, now;

		if (due > duration || wl_now() - t0 > duration)
			break;
		wl_sleep(t0 + due - wl_now());
		now = wl_now() - t0;
		step(NULL, now, now - last);
		last = now;
	}
	wl_hold_exit(&o);
}

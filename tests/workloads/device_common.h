/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * device_common.h - plumbing of the device-memory workloads (mt_vulkan,
 * mt_opencl, mt_cuda): one function leaks device buffers, another keeps a
 * bounded pool of them, and the workload prints its own truth.
 *
 * Protocol (as mt_workload.h's): print "READY pid=N", wait for a byte on
 * stdin, run --duration=SECS in steps of 50 ms (each step: the leak
 * function allocates --leak-per-step buffers of --leak-size bytes and
 * never frees them; the pool function allocates --pool-per-step buffers
 * of --pool-size, keeping at most --pool-max, freeing the oldest), then
 * print the truth as one JSON line and wait for EOF on stdin:
 *
 *   {"truth": "mt_vulkan", "pid": N, "time": UNIX_SECS, "duration_s": D,
 *    "kind": "device-local,host-visible",
 *    "sites": [{"function": "leak_device_buffers", "leaks": true,
 *               "alloc_calls": A, "free_calls": 0, "inuse_bytes": B}, ...]}
 *
 * Host allocations (stdio, the driver's own) do not matter here: memtop's
 * device tier is what is checked. Each site function is WL_SITE (never
 * inlined) and calls the API itself, so memtop must name it.
 */
#ifndef MEMTOP_DEVICE_COMMON_H
#define MEMTOP_DEVICE_COMMON_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define WL_SITE __attribute__((noipa))
#define DEV_POOL_MAX 1024

struct dev_opts {
	double duration_s;
	uint64_t leak_size, pool_size;
	unsigned leak_per_step, pool_per_step, pool_max;
	unsigned step_ms;
	const char *mode; /* workload-specific variant, "" by default */
};

struct dev_site_truth {
	const char *function;
	int leaks;
	uint64_t alloc_calls, free_calls;
	int64_t inuse_bytes;
};

static inline void dev_die(const char *what)
{
	fprintf(stderr, "%s\n", what);
	_exit(2);
}

/* --name=VALUE options; an unknown one is an error. */
static inline void dev_parse(int argc, char **argv, struct dev_opts *o)
{
	*o = (struct dev_opts){ .duration_s = 20,
				.leak_size = 256 * 1024,
				.pool_size = 512 * 1024,
				.leak_per_step = 1,
				.pool_per_step = 2,
				.pool_max = 16,
				.step_ms = 50,
				.mode = "" };
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = strchr(a, '=');

		if (!v)
			dev_die("options are --name=VALUE");
		v++;
		if (!strncmp(a, "--duration=", 11))
			o->duration_s = atof(v);
		else if (!strncmp(a, "--leak-size=", 12))
			o->leak_size = strtoull(v, NULL, 0);
		else if (!strncmp(a, "--pool-size=", 12))
			o->pool_size = strtoull(v, NULL, 0);
		else if (!strncmp(a, "--leak-per-step=", 16))
			o->leak_per_step = (unsigned)atoi(v);
		else if (!strncmp(a, "--pool-per-step=", 16))
			o->pool_per_step = (unsigned)atoi(v);
		else if (!strncmp(a, "--pool-max=", 11))
			o->pool_max = (unsigned)atoi(v);
		else if (!strncmp(a, "--step-ms=", 10))
			o->step_ms = (unsigned)atoi(v);
		else if (!strncmp(a, "--mode=", 7))
			o->mode = v;
		else
			dev_die("unknown option");
	}
	if (o->pool_max > DEV_POOL_MAX || !o->pool_max)
		dev_die("--pool-max out of range");
}

static inline double dev_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static inline void dev_ready_and_wait(void)
{
	char c;

	printf("READY pid=%d\n", getpid());
	fflush(stdout);
	if (read(0, &c, 1) != 1)
		_exit(0);
}

static inline void dev_sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static inline void dev_print_truth(const char *name, double t0_wall, const struct dev_opts *o,
				   const char *kind, const struct dev_site_truth *s, int n)
{
	printf("{\"truth\": \"%s\", \"pid\": %d, \"time\": %.3f, \"duration_s\": %.3f, "
	       "\"kind\": \"%s\", \"sites\": [",
	       name, getpid(), t0_wall, o->duration_s, kind);
	for (int i = 0; i < n; i++)
		printf("%s{\"function\": \"%s\", \"leaks\": %s, \"alloc_calls\": %" PRIu64
		       ", \"free_calls\": %" PRIu64 ", \"inuse_bytes\": %" PRId64 "}",
		       i ? ", " : "", s[i].function, s[i].leaks ? "true" : "false",
		       s[i].alloc_calls, s[i].free_calls, s[i].inuse_bytes);
	printf("]}\n");
	fflush(stdout);
}

static inline void dev_hold(void)
{
	char c;

	while (read(0, &c, 1) == 1)
		;
	_exit(0);
}

static inline double dev_wall(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

#endif /* MEMTOP_DEVICE_COMMON_H */

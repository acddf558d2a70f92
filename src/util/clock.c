// SPDX-License-Identifier: GPL-2.0-only
/*
 * clock.c - clock reads (clock.h).
 */
#include "util/clock.h"

#include <time.h>

static __u64 read_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
}

__u64 clock_mono_ns(void)
{
	return read_ns(CLOCK_MONOTONIC);
}

__u64 clock_mono_coarse_ns(void)
{
	return read_ns(CLOCK_MONOTONIC_COARSE);
}

__u64 clock_thread_cpu_ns(void)
{
	return read_ns(CLOCK_THREAD_CPUTIME_ID);
}

__u64 clock_wall_ns(void)
{
	return read_ns(CLOCK_REALTIME);
}

double clock_wall_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

struct timespec clock_wall_deadline(__u64 ns)
{
	__u64 at = clock_wall_ns() + ns;

	return (struct timespec){ .tv_sec = (time_t)(at / 1000000000ULL),
				  .tv_nsec = (long)(at % 1000000000ULL) };
}

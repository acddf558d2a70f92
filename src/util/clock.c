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

__u64 clock_wall_ns(void)
{
	return read_ns(CLOCK_REALTIME);
}

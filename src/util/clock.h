/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * clock.h - the clocks memtop reads, in one place: CLOCK_MONOTONIC for
 * every interval, deadline and sample time (the BPF side stamps records
 * with the same clock, bpf_ktime_get_ns), a coarse variant where
 * milliseconds are enough and the call is hot, the thread's CPU time for
 * timing code, and the wall clock for what is shown to people and sent to
 * other tools.
 */
#ifndef MEMTOP_UTIL_CLOCK_H
#define MEMTOP_UTIL_CLOCK_H

#include <linux/types.h>
#include <time.h>

/* CLOCK_MONOTONIC, nanoseconds. */
__u64 clock_mono_ns(void);
/* CLOCK_MONOTONIC_COARSE (a few ms of resolution, no system call). */
__u64 clock_mono_coarse_ns(void);
/* CLOCK_THREAD_CPUTIME_ID, nanoseconds: the calling thread's CPU time,
 * for timing code on a loaded machine (time spent preempted is not in it;
 * a probe's trap, run in the thread's context, is). */
__u64 clock_thread_cpu_ns(void);
/* CLOCK_REALTIME, nanoseconds since the epoch. */
__u64 clock_wall_ns(void);
/* CLOCK_REALTIME, seconds since the epoch (what records and exports show). */
double clock_wall_s(void);

/* The CLOCK_REALTIME instant ns from now, as the absolute timespec that
 * pthread's timed waits take. */
struct timespec clock_wall_deadline(__u64 ns);

#endif /* MEMTOP_UTIL_CLOCK_H */

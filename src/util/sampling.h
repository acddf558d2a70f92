/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * sampling.h - the sampling maths shared by the BPF program (through the
 * table it is loaded with), the estimates and the tests.
 *
 * A thread's countdown of bytes to the next sample is drawn from an
 * exponential distribution of mean `rate`; an allocation of s bytes is
 * sampled when it takes the countdown to zero or below, which happens with
 * probability p = 1 - exp(-s/rate). Each sample therefore stands for 1/p
 * allocations of its size (Go's scaleHeapSample).
 */
#ifndef MEMTOP_SAMPLING_H
#define MEMTOP_SAMPLING_H

#include <stdbool.h>
#include <linux/types.h>

#include "memtop/abi.h"

/* Fill table with MT_EXP_TABLE_SIZE equiprobable strata of Exp(1): entry i
 * is the mean of -ln(u) over u in [i/N, (i+1)/N), scaled by MT_EXP_SCALE,
 * so a uniformly chosen entry has mean exactly MT_EXP_SCALE. */
void sampling_exp_table(__u32 *table);

/* Probability that an allocation of size bytes is sampled at rate. */
double sampling_probability(__u64 size, __u64 rate);

/* How many allocations of this size one sample stands for: 1/p; 1 when
 * rate <= 1 (every call sampled) and for size 0. */
double sampling_weight(__u64 size, __u64 rate);

/*
 * The weight of a sample drawn at mean rate while the allocation probes
 * were on for a share duty of the time (the overhead budget): it was
 * included with probability duty * p(size, rate), so it stands for
 * 1 / (duty * p) allocations (Horvitz-Thompson). duty <= 0 or >= 1: 1.
 */
double sampling_phase_weight(__u64 size, __u64 rate, double duty);

/*
 * The budget's on/off schedule (probe/budget.h) has cycles of mean
 * SAMPLING_DUTY_CYCLE_NS whose off-phase is drawn uniformly over
 * [0, 2 (1 - d) / d] times the on-phase, so the share of time the probes
 * were on over n cycles is d only on average: its relative standard
 * deviation is 2 (1 - d) / sqrt(12 n). Samples weighed 1/d inherit it,
 * all those drawn over the same cycles alike.
 */
#define SAMPLING_DUTY_CYCLE_NS 1000000000ULL

/* That error for an estimate whose bytes drawn under the duty cycle, each
 * times 1 - its duty, are off_share of it, drawn over the last span_s
 * seconds (at least one cycle). */
double sampling_schedule_rel_sd(double off_share, double span_s);

/* The kernel's per-thread countdown, in user space: used by tests to check
 * the estimator and by anything that samples in-process. */
struct sampler {
	__s64 left;
	__u64 rate;
	__u64 rng;
	const __u32 *table;
	bool primed;
};
void sampler_init(struct sampler *s, __u64 rate, const __u32 *table, __u64 seed);
/* Exactly the BPF program's take_sample(): true when size is sampled. */
bool sampler_take(struct sampler *s, __u64 size);

#endif /* MEMTOP_SAMPLING_H */

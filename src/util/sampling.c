// SPDX-License-Identifier: GPL-2.0-only
/*
 * sampling.c - exponential interval table, sample weights, and a user-space
 * twin of the BPF countdown (see sampling.h for the maths).
 */
#include "util/sampling.h"

#include <math.h>

/* Antiderivative of -ln(u): u - u ln u, with the limit 0 at u = 0. */
static double neg_log_integral(double u)
{
	return u > 0 ? u - u * log(u) : 0;
}

void sampling_exp_table(__u32 *table)
{
	const double n = MT_EXP_TABLE_SIZE;
	int i;

	for (i = 0; i < MT_EXP_TABLE_SIZE; i++) {
		double mean = n * (neg_log_integral((i + 1) / n) - neg_log_integral(i / n));

		table[i] = (__u32)llround(mean * MT_EXP_SCALE);
	}
}

double sampling_probability(__u64 size, __u64 rate)
{
	if (rate <= 1)
		return 1.0;
	return -expm1(-(double)size / (double)rate);
}

double sampling_weight(__u64 size, __u64 rate)
{
	double p;

	if (rate <= 1 || size == 0)
		return 1.0;
	p = sampling_probability(size, rate);
	return p > 0 ? 1.0 / p : 1.0;
}

double sampling_phase_weight(__u64 size, __u64 rate, double duty)
{
	double w = sampling_weight(size, rate);

	return duty > 0 && duty < 1 ? w / duty : w;
}

double sampling_schedule_rel_sd(double off_share, double span_s)
{
	double cycles = fmax(1, span_s * 1e9 / (double)SAMPLING_DUTY_CYCLE_NS);

	if (!(off_share > 0))
		return 0;
	return 2 * off_share / sqrt(12 * cycles);
}

/* xorshift64*: small, seedable, good enough to stand in for prandom. */
static __u32 sampler_rand(struct sampler *s)
{
	s->rng ^= s->rng >> 12;
	s->rng ^= s->rng << 25;
	s->rng ^= s->rng >> 27;
	return (__u32)((s->rng * 0x2545F4914F6CDD1DULL) >> 32);
}

static __s64 sampler_draw(struct sampler *s)
{
	__u32 i = sampler_rand(s) & (MT_EXP_TABLE_SIZE - 1);

	return (__s64)((s->rate * s->table[i]) / MT_EXP_SCALE) + 1;
}

void sampler_init(struct sampler *s, __u64 rate, const __u32 *table, __u64 seed)
{
	s->rate = rate;
	s->table = table;
	s->rng = seed ? seed : 0x9E3779B97F4A7C15ULL;
	s->left = 0;
	s->primed = false;
}

bool sampler_take(struct sampler *s, __u64 size)
{
	if (s->rate <= 1)
		return true;
	if (!s->primed) {
		s->left = sampler_draw(s);
		s->primed = true;
	}
	s->left -= (__s64)size;
	if (s->left > 0)
		return false;
	s->left = sampler_draw(s);
	return true;
}

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * sample_math.h - the arithmetic both samplers share (libmemtop-sampler.so,
 * preloaded, and libmemtop-inject.so, mapped by memtop with no C library
 * behind it): the generator, the exponential gap between samples and the
 * weight of a sample, with no libm (the injected copy has none).
 *
 * An allocation of s bytes is sampled with probability p = 1 - exp(-s/rate)
 * when the gaps are 1 + floor(Exp(rate)) bytes (the exponential has no
 * memory); its weight, the bytes it stands for, is round(s / p).
 */
#ifndef MEMTOP_SAMPLER_SAMPLE_MATH_H
#define MEMTOP_SAMPLER_SAMPLE_MATH_H

#include <linux/types.h>

static inline __u64 sm_mix64(__u64 x)
{
	x += 0x9E3779B97F4A7C15ULL;
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
	x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
	return x ^ (x >> 31);
}

/* One xorshift64* step: *state (never 0) advances, the output is returned. */
static inline __u64 sm_next(__u64 *state)
{
	__u64 x = *state;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * 0x2545F4914F6CDD1DULL;
}

/* ln(u) for u in (0, 1]: u = m * 2^e with m in [sqrt(1/2), sqrt(2)), and
 * ln(m) = 2 atanh(s), s = (m - 1) / (m + 1), |s| < 0.172: the series to
 * s^15 is exact to about 1e-13. */
static inline double sm_log(double u)
{
	union {
		double d;
		__u64 b;
	} v = { .d = u };
	int e = (int)((v.b >> 52) & 0x7ff) - 1023;
	double m, s, s2, t;

	v.b = (v.b & 0x000fffffffffffffULL) | 0x3ff0000000000000ULL; /* [1, 2) */
	m = v.d;
	if (m > 1.4142135623730951) {
		m *= 0.5;
		e++;
	}
	s = (m - 1) / (m + 1);
	s2 = s * s;
	t = 1.0 / 15;
	t = t * s2 + 1.0 / 13;
	t = t * s2 + 1.0 / 11;
	t = t * s2 + 1.0 / 9;
	t = t * s2 + 1.0 / 7;
	t = t * s2 + 1.0 / 5;
	t = t * s2 + 1.0 / 3;
	t = t * s2 + 1;
	return 2 * s * t + e * 0.6931471805599453;
}

/* 1 - exp(-x) for x >= 0, without cancellation for small x. */
static inline double sm_one_minus_exp_neg(double x)
{
	double term = 1, sum = 0, r, e;
	int k, n;

	if (x < 0.5) {
		/* x - x^2/2! + x^3/3! - ...: 18 terms reach 1e-20 at x = 0.5 */
		for (k = 1; k <= 18; k++) {
			term *= x / k;
			sum += (k & 1) ? term : -term;
		}
		return sum;
	}
	if (x > 745)
		return 1;
	/* exp(-x) = 2^-n exp(-r), r in [0, ln 2) */
	n = (int)(x / 0.6931471805599453);
	r = x - n * 0.6931471805599453;
	e = 1;
	for (k = 20; k >= 1; k--)
		e = 1 + e * (-r) / k;
	while (n-- > 0)
		e *= 0.5;
	return 1 - e;
}

/* Bytes to the next sample from 64 random bits: 1 + floor(-ln(u) * rate),
 * u uniform in (0, 1]. */
static inline __s64 sm_gap(__u64 bits, double rate)
{
	double u = (double)((bits >> 11) + 1) * 0x1p-53; /* (0, 1] */
	double x = -sm_log(u) * rate + 1;

	return x < 0x1p62 ? (__s64)x : (__s64)1 << 62;
}

/* Bytes one sample of size bytes stands for: size / p, rounded. */
static inline __u64 sm_weight(__u64 size, double rate)
{
	return (__u64)((double)size / sm_one_minus_exp_neg((double)size / rate) + 0.5);
}

#endif /* MEMTOP_SAMPLER_SAMPLE_MATH_H */

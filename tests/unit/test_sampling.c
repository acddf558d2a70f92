// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_sampling.c - the sampler and its weights: the kernel's countdown
 * (mirrored by sampler_take) with weight 1/(1-exp(-s/R)) must give
 * unbiased totals. Simulated streams of known sizes at several rates are
 * checked against bounds derived from the sampling maths: each allocation
 * of size s contributes s/p with probability p, so the estimate of N such
 * allocations has variance N s^2 (1-p)/p; we allow 5 standard deviations.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "util/sampling.h"
#include "probe/budget.h"

static __u32 table[MT_EXP_TABLE_SIZE];

static void test_table_mean_is_one(void **state)
{
	double sum = 0;
	int i;

	for (i = 0; i < MT_EXP_TABLE_SIZE; i++)
		sum += table[i];
	assert_true(fabs(sum / MT_EXP_TABLE_SIZE / MT_EXP_SCALE - 1.0) < 1e-4);
	/* decreasing: stratum i covers u in [i/N, (i+1)/N) of -ln(u) */
	for (i = 1; i < MT_EXP_TABLE_SIZE; i++)
		assert_true(table[i] <= table[i - 1]);
	assert_true(table[MT_EXP_TABLE_SIZE - 1] < 10);
}

static void test_weight_formula(void **state)
{
	/* Go's scaleHeapSample: 1 / (1 - exp(-s/R)) */
	assert_true(fabs(sampling_weight(524288, 524288) - 1.0 / (1.0 - exp(-1.0))) < 1e-12);
	assert_true(fabs(sampling_weight(100, 524288) - 1.0 / (1.0 - exp(-100.0 / 524288))) < 1e-6);
	/* large allocations are (almost) always sampled: weight -> 1 */
	assert_true(fabs(sampling_weight(64 << 20, 524288) - 1.0) < 1e-12);
	/* rate 1 samples everything; size 0 never divides by zero */
	assert_true(sampling_weight(100, 1) == 1.0);
	assert_true(sampling_weight(0, 524288) == 1.0);
	assert_true(fabs(sampling_probability(524288, 524288) - (1 - exp(-1))) < 1e-12);
}

/* Feed n allocations of size s; return the estimated bytes and count. */
static void run_stream(__u64 rate, __u64 s, long n, __u64 seed, double *bytes, double *objs,
		       long *nsampled)
{
	struct sampler sm;
	long i;

	sampler_init(&sm, rate, table, seed);
	*bytes = *objs = 0;
	*nsampled = 0;
	for (i = 0; i < n; i++) {
		if (sampler_take(&sm, s)) {
			double w = sampling_weight(s, rate);

			*bytes += w * s;
			*objs += w;
			(*nsampled)++;
		}
	}
}

static void check_unbiased(__u64 rate, __u64 s, long n, __u64 seed)
{
	double p = sampling_probability(s, rate);
	double truth = (double)s * n, bytes, objs;
	double sigma = s * sqrt(n * (1 - p) / p);
	long k;

	run_stream(rate, s, n, seed, &bytes, &objs, &k);
	print_message(
		"rate %llu size %llu n %ld: sampled %ld (expect %.0f), estimate %.4g vs %.4g (%.2f sigma)\n",
		(unsigned long long)rate, (unsigned long long)s, n, k, n * p, bytes, truth,
		sigma > 0 ? (bytes - truth) / sigma : 0);
	assert_true(fabs(bytes - truth) <= 5 * sigma + 1e-6 * truth);
	assert_true(fabs(objs - n) <= 5 * sigma / s + 1e-6 * n);
	/* the count of samples is binomial(n, p) */
	assert_true(fabs(k - n * p) <= 5 * sqrt(n * p * (1 - p)) + 1);
}

static void test_unbiased_small_sizes(void **state)
{
	check_unbiased(524288, 64, 2000000, 1);
	check_unbiased(524288, 1000, 1000000, 2);
	check_unbiased(4096, 100, 500000, 3);
}

static void test_unbiased_large_sizes(void **state)
{
	check_unbiased(524288, 524288, 100000, 4);
	check_unbiased(524288, 4 << 20, 20000, 5);
	check_unbiased(4096, 65536, 100000, 6);
}

/* Interleaved sizes share one countdown: each size's estimate stays
 * unbiased on its own (the memoryless property of the countdown). */
static void test_mixed_stream(void **state)
{
	const __u64 sizes[] = { 16, 256, 4096, 100000, 1 << 20 };
	const int ns = sizeof(sizes) / sizeof(sizes[0]);
	double est[5] = { 0 };
	long count[5] = { 0 };
	struct sampler sm;
	long i;
	int k;

	sampler_init(&sm, 65536, table, 7);
	for (i = 0; i < 2000000; i++) {
		k = (int)((i * 2654435761u) % ns);
		count[k]++;
		if (sampler_take(&sm, sizes[k]))
			est[k] += sampling_weight(sizes[k], 65536) * sizes[k];
	}
	for (k = 0; k < ns; k++) {
		double p = sampling_probability(sizes[k], 65536);
		double truth = (double)sizes[k] * count[k];
		double sigma = sizes[k] * sqrt(count[k] * (1 - p) / p);

		assert_true(fabs(est[k] - truth) <= 5 * sigma + 1e-6 * truth);
	}
}

/*
 * Sampling under the overhead budget (docs/probes.md section 6): the
 * allocation probes are on for a share d of the time on the randomised
 * schedule of budget.h, samples are drawn at rate R*d while on (each
 * on-phase starts a new epoch: every countdown is drawn again), and a
 * sample weighs 1/(d p(s, R d)). The estimate of a stream's bytes must be
 * unbiased and as many samples must be taken as at full duty. Its error
 * has two parts: the Bernoulli draws (variance sum s^2 (1 - pi)/pi with
 * pi = d p) and the share of the stream's time that happened to be on
 * (the schedule's cycles vary: relative variance var(cycle)/(n mean^2)
 * over n cycles); we allow 5 standard deviations of their sum.
 */
static void check_duty(double d, __u64 rate, __u64 size, double per_s, double secs, __u64 seed)
{
	struct budget b;
	struct sampler sm;
	__u64 r = (__u64)(rate * d), t, next = 0, dt = (__u64)(1e9 / per_s);
	double est = 0, truth = 0, pi = d * sampling_probability(size, r), var_b, var_s, sigma;
	long k = 0, n = 0;
	bool was_on = false;

	budget_init(&b, 10, seed);
	b.duty = d;
	sampler_init(&sm, r, table, seed);
	for (t = dt; t < (__u64)(secs * 1e9); t += dt) {
		bool on = budget_phase(&b, t, &next);

		if (on && !was_on)
			sampler_init(&sm, r, table, sm.rng); /* a new epoch */
		was_on = on;
		truth += size;
		n++;
		if (on && sampler_take(&sm, size)) {
			est += sampling_phase_weight(size, r, d) * size;
			k++;
		}
	}
	var_b = (double)n * size * size * (1 - pi) / pi;
	/* cycles of mean BUDGET_PERIOD_NS, off-phase uniform over 2(1-d) of it */
	var_s = truth * truth * (4 * (1 - d) * (1 - d) / 12.0) / (secs * 1e9 / BUDGET_PERIOD_NS);
	sigma = sqrt(var_b + var_s);
	print_message(
		"duty %.2f rate %llu size %llu: %ld samples (full duty: %.0f), estimate %.5g vs %.5g (%.2f sigma)\n",
		d, (unsigned long long)r, (unsigned long long)size, k,
		n * sampling_probability(size, rate), est, truth, (est - truth) / sigma);
	assert_true(fabs(est - truth) <= 5 * sigma);
	/* samples survive the back-off: as many as at full duty for sizes
	 * well below the interval (fewer for larger ones, which full duty
	 * samples nearly always) */
	if (size * 20 < r)
		assert_true(fabs(k - n * sampling_probability(size, rate)) <=
			    5 * sqrt(n * pi) + 0.02 * n * pi);
}

static void test_unbiased_under_duty(void **state)
{
	check_duty(0.1, 524288, 128, 20000, 3000, 11);
	check_duty(0.1, 524288, 16384, 300, 3000, 12);
	check_duty(0.25, 524288, 1000, 5000, 3000, 13);
	check_duty(0.5, 65536, 4096, 2000, 3000, 14);
	check_duty(0.1, 524288, 1 << 20, 20, 6000, 15);
}

/*
 * realloc stays probed in every phase, so under the budget it samples in
 * every phase at the full rate R (bpf/memtop.bpf.c, realloc_counted): its
 * bytes count R*d/R each against the countdown the other calls draw at
 * R*d, and its samples weigh 1/p(s, R) with no 1/d. Mixed with mallocs
 * sampled in on-phases only, both estimates must be unbiased, the
 * realloc one with full-duty variance (no schedule term: a block that
 * realloc moves is never worth 1/d times its size).
 */
static void test_realloc_every_phase(void **state)
{
	const double d = 0.1, per_s = 2000, secs = 2000;
	const __u64 rate = 524288, r = (__u64)(rate * d), msize = 256, rsize = 1 << 20;
	__u64 t, next = 0, dt = (__u64)(1e9 / per_s), counted;
	double m_est = 0, m_truth = 0, r_est = 0, r_truth = 0, p, sigma;
	struct budget b;
	struct sampler sm;
	bool was_on = false;
	long i = 0;

	budget_init(&b, 10, 21);
	b.duty = d;
	sampler_init(&sm, r, table, 21);
	for (t = dt; t < (__u64)(secs * 1e9); t += dt, i++) {
		bool on = budget_phase(&b, t, &next);

		if (on && !was_on)
			sampler_init(&sm, r, table, sm.rng);
		was_on = on;
		if (i % 100 == 0) { /* one realloc of a large block in 100 calls */
			r_truth += rsize;
			counted = rsize / rate * r + rsize % rate * r / rate;
			if (sampler_take(&sm, counted))
				r_est += sampling_phase_weight(rsize, rate, 1.0) * rsize;
			continue;
		}
		m_truth += msize;
		if (on && sampler_take(&sm, msize))
			m_est += sampling_phase_weight(msize, r, d) * msize;
	}
	p = sampling_probability(rsize, rate);
	sigma = rsize * sqrt(r_truth / rsize * (1 - p) / p);
	print_message("realloc: estimate %.5g vs %.5g (%.2f sigma); malloc %.5g vs %.5g\n", r_est,
		      r_truth, (r_est - r_truth) / sigma, m_est, m_truth);
	assert_true(fabs(r_est - r_truth) <= 5 * sigma);
	/* the mallocs: within the schedule's share noise (docs/probes.md 6.5) */
	assert_true(fabs(m_est - m_truth) <= 0.1 * m_truth);
}

static void test_rate_one_samples_everything(void **state)
{
	struct sampler sm;
	int i;

	sampler_init(&sm, 1, table, 9);
	for (i = 0; i < 1000; i++)
		assert_true(sampler_take(&sm, 1 + i));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table_mean_is_one),
		cmocka_unit_test(test_weight_formula),
		cmocka_unit_test(test_unbiased_small_sizes),
		cmocka_unit_test(test_unbiased_large_sizes),
		cmocka_unit_test(test_mixed_stream),
		cmocka_unit_test(test_rate_one_samples_everything),
		cmocka_unit_test(test_unbiased_under_duty),
		cmocka_unit_test(test_realloc_every_phase),
	};

	sampling_exp_table(table);
	return cmocka_run_group_tests(tests, NULL, NULL);
}

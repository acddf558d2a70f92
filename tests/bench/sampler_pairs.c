// SPDX-License-Identifier: GPL-2.0-only
/*
 * sampler_pairs.c - cost of a malloc+free pair, as the median of several
 * timed rounds in one process, for tests/bench/sampler.sh (run bare, with
 * libmemtop-sampler.so preloaded, and with a tool on its probes).
 *
 *   sampler_pairs PAIRS SIZE ROUNDS
 *
 * Warms the arena, then times ROUNDS rounds of PAIRS pairs of SIZE bytes
 * and prints every round's figure, then "median_ns X" and "min_ns X" (the
 * minimum is the steadier figure on a machine shared with other load,
 * e.g. a VM whose vCPUs share a core). Time is the
 * thread's CPU time (CLOCK_THREAD_CPUTIME_ID: user and system, so probe
 * traps count) so that other load on the machine does not inflate it. The pointer goes through a volatile so the compiler keeps the
 * pair. Exit status 2 on bad arguments.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define MAX_ROUNDS 99

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	double ns[MAX_ROUNDS], t0;
	void *volatile p;
	long pairs, i;
	int rounds, r;
	size_t size;

	if (argc != 4 || (pairs = atol(argv[1])) <= 0 || atol(argv[2]) <= 0 ||
	    (rounds = atoi(argv[3])) <= 0 || rounds > MAX_ROUNDS) {
		fprintf(stderr, "usage: sampler_pairs PAIRS SIZE ROUNDS (ROUNDS <= %d)\n",
			MAX_ROUNDS);
		return 2;
	}
	size = (size_t)atol(argv[2]);
	for (i = 0; i < 100000; i++) {
		p = malloc(size);
		free(p);
	}
	for (r = 0; r < rounds; r++) {
		t0 = now_ns();
		for (i = 0; i < pairs; i++) {
			p = malloc(size);
			free(p);
		}
		ns[r] = (now_ns() - t0) / (double)pairs;
	}
	printf("rounds");
	for (r = 0; r < rounds; r++)
		printf(" %.2f", ns[r]);
	qsort(ns, (size_t)rounds, sizeof(ns[0]), cmp_double);
	printf("\nmedian_ns %.2f\nmin_ns %.2f\n", ns[rounds / 2], ns[0]);
	return 0;
}

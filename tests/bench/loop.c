// SPDX-License-Identifier: GPL-2.0-only
/*
 * loop.c - the benchmark's micro workload: N malloc+free pairs of one size.
 *
 *   loop N SIZE [DELAY_S]
 *
 * Prints "ready PID" on stdout and blocks until a line arrives on stdin,
 * so that a tracer can attach before the timed phase (with DELAY_S it
 * sleeps that long instead: a command memtop launches, whose probes are
 * live before it runs); then runs the pairs and prints "ns/pair X" (wall
 * time), "cpu_ns/pair X" (the thread's CPU time, traps included: what a
 * loaded machine's waits do not inflate) and "pairs N". It is built once per allocator (alloc_modes links it with
 * -ljemalloc and -ltcmalloc too). The pointer goes through a
 * volatile so the compiler cannot drop the pair (GCC removes a plain
 * free(malloc(n)) at -O2). Exit status 2 on bad arguments.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double clock_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static double now_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

int main(int argc, char **argv)
{
	void *volatile p;
	char line[64];
	long n, i;
	size_t size;
	double t0, t1, c0, c1;

	if (argc < 3 || argc > 4 || (n = atol(argv[1])) <= 0 || atol(argv[2]) <= 0 ||
	    (argc == 4 && atof(argv[3]) <= 0)) {
		fprintf(stderr, "usage: loop PAIRS SIZE [DELAY_S]\n");
		return 2;
	}
	size = (size_t)atol(argv[2]);
	/* Warm the arena and the PLT before anyone attaches. */
	for (i = 0; i < 1000; i++) {
		p = malloc(size);
		free(p);
	}
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	if (argc == 4) {
		double d = atof(argv[3]);
		struct timespec ts = { (time_t)d, (long)((d - (time_t)d) * 1e9) };

		while (nanosleep(&ts, &ts))
			;
	} else if (!fgets(line, sizeof(line), stdin)) {
		return 1;
	}

	t0 = now_ns();
	c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	for (i = 0; i < n; i++) {
		p = malloc(size);
		free(p);
	}
	c1 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	t1 = now_ns();
	printf("ns/pair %.1f\ncpu_ns/pair %.1f\npairs %ld\n", (t1 - t0) / n, (c1 - c0) / n, n);
	return 0;
}

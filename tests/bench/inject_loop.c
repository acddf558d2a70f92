// SPDX-License-Identifier: GPL-2.0-only
/*
 * inject_loop.c - a long-running, server-like allocation loop that reports
 * its own throughput, for tests/bench/inject.py: the same process is
 * measured bare and with memtop --inject attached, window after window.
 *
 *   inject_loop WINDOW_MS [PAIRS_PER_S]
 *
 * Each "request" allocates 8 blocks of 16..2048 bytes (a fixed mix),
 * writes their first and last bytes, and frees them. With PAIRS_PER_S the
 * loop is paced to that many malloc/free pairs per second (it sleeps out
 * the rest of each 10 ms slice) and a window's figure is the CPU time per
 * pair; without, it runs flat out and the figure is pairs per second.
 * Every WINDOW_MS it prints "win PAIRS_PER_S CPU_NS_PER_PAIR" (flushed); it
 * prints "ready PID" first and exits at EOF on stdin.
 */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const unsigned int sizes[] = { 16, 32, 48, 64, 128, 256, 512, 2048 };

static unsigned long long ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void request(void)
{
	char *p[8];
	int i;

	for (i = 0; i < 8; i++) {
		p[i] = malloc(sizes[i]);
		p[i][0] = (char)i;
		p[i][sizes[i] - 1] = (char)i;
	}
	for (i = 0; i < 8; i++)
		free(p[i]);
}

int main(int argc, char **argv)
{
	unsigned long long window, rate, w0, c0, pairs = 0, slice0, slice_pairs = 0;
	struct pollfd in = { .fd = 0, .events = POLLIN };

	if (argc < 2 || (window = strtoull(argv[1], NULL, 10) * 1000000ULL) == 0)
		return 2;
	rate = argc > 2 ? strtoull(argv[2], NULL, 10) : 0;
	printf("ready %d\n", getpid());
	fflush(stdout);
	w0 = slice0 = ns(CLOCK_MONOTONIC);
	c0 = ns(CLOCK_PROCESS_CPUTIME_ID);
	for (;;) {
		unsigned long long now;

		request();
		pairs += 8;
		slice_pairs += 8;
		if (pairs % 1024)
			continue;
		now = ns(CLOCK_MONOTONIC);
		if (rate && slice_pairs >= rate / 100) {
			/* paced: the rest of this 10 ms slice is idle */
			if (now < slice0 + 10000000ULL) {
				struct timespec ts = { 0, (long)(slice0 + 10000000ULL - now) };

				nanosleep(&ts, NULL);
			}
			slice0 += 10000000ULL;
			slice_pairs = 0;
			now = ns(CLOCK_MONOTONIC);
		}
		if (now - w0 >= window) {
			unsigned long long c = ns(CLOCK_PROCESS_CPUTIME_ID);

			printf("win %.0f %.1f\n", pairs * 1e9 / (now - w0), (double)(c - c0) / pairs);
			fflush(stdout);
			if (poll(&in, 1, 0) > 0) {
				char b;

				if (read(0, &b, 1) <= 0)
					return 0;
			}
			w0 = now;
			c0 = c;
			pairs = 0;
		}
	}
}

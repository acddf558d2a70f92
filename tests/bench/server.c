// SPDX-License-Identifier: GPL-2.0-only
/*
 * server.c - a server-like benchmark workload that measures its own
 * throughput: memtop's reported slowdown is compared against it
 * (tests/bench/slowdown.py, tests/bench/phases.py).
 *
 *   server PAIRS WORK_ITERS WINDOW_MS [LEAK_EVERY]
 *
 * A "request" allocates PAIRS blocks of 16..1024 bytes (a fixed mix),
 * writes them, does WORK_ITERS rounds of arithmetic over them and frees
 * them all: tens of malloc/free pairs plus compute, like a request handler.
 * With LEAK_EVERY, one request in LEAK_EVERY also keeps a 4 KiB block
 * forever (from leak_session: the leak a tool should rank first; the
 * bytes kept are printed as "leaked BYTES" at exit).
 * It serves requests back to back, forever, and every WINDOW_MS prints
 *
 *   win REQUESTS WALL_NS CPU_NS END_NS
 *
 * (the requests completed in the window, its wall time and the process's
 * CPU time in it, both in ns, and its end on CLOCK_MONOTONIC) on stdout,
 * flushed, through write(2). It
 * prints "ready PID" first. It exits when stdin reaches EOF (checked at
 * each window). Exit status 2 on bad arguments.
 */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_PAIRS 256

static const unsigned int sizes[] = { 16, 24, 32, 48, 64, 96, 128, 256, 512, 1024 };

static unsigned long long clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ULL + (unsigned long long)ts.tv_nsec;
}

static void say(const char *buf)
{
	size_t len = strlen(buf);

	while (len) {
		ssize_t n = write(1, buf, len);

		if (n <= 0)
			_exit(1);
		buf += n;
		len -= (size_t)n;
	}
}

/* One request; the result keeps the compiler from dropping the work. */
static unsigned long request(unsigned int pairs, unsigned long iters, unsigned long seed)
{
	unsigned char *volatile blk[MAX_PAIRS];
	unsigned long acc = seed;
	unsigned int i;

	for (i = 0; i < pairs; i++) {
		unsigned int sz = sizes[(seed + i) % (sizeof(sizes) / sizeof(sizes[0]))];

		blk[i] = malloc(sz);
		if (!blk[i])
			_exit(3);
		blk[i][0] = (unsigned char)i;
		blk[i][sz - 1] = (unsigned char)seed;
	}
	for (unsigned long k = 0; k < iters; k++)
		acc = acc * 6364136223846793005ULL + blk[k % pairs][0] + 1442695040888963407ULL;
	for (i = 0; i < pairs; i++)
		free(blk[i]);
	return acc;
}

static void *volatile kept; /* the newest leaked block */

/* The leak: one 4 KiB block a session keeps and nothing frees. */
static __attribute__((noinline)) void *leak_session(unsigned long n)
{
	unsigned char *b = malloc(4096);

	if (!b)
		_exit(3);
	b[0] = (unsigned char)n;
	return b;
}

static int stdin_closed(void)
{
	struct pollfd p = { .fd = 0, .events = POLLIN };
	char c;

	if (poll(&p, 1, 0) <= 0)
		return 0;
	return read(0, &c, 1) <= 0;
}

int main(int argc, char **argv)
{
	unsigned long iters, n = 0, sink = 0, leak_every = 0, leaked = 0;
	unsigned long long win_ns, w0, c0;
	unsigned int pairs;
	char line[128];

	if (argc == 5)
		leak_every = strtoul(argv[4], NULL, 10);
	if ((argc != 4 && argc != 5) || atoi(argv[1]) <= 0 || atoi(argv[1]) > MAX_PAIRS ||
	    atol(argv[3]) <= 0) {
		fprintf(stderr, "usage: server PAIRS(1-%d) WORK_ITERS WINDOW_MS [LEAK_EVERY]\n",
			MAX_PAIRS);
		return 2;
	}
	pairs = (unsigned int)atoi(argv[1]);
	iters = strtoul(argv[2], NULL, 10);
	win_ns = strtoull(argv[3], NULL, 10) * 1000000ULL;
	snprintf(line, sizeof(line), "ready %d\n", (int)getpid());
	say(line);
	w0 = clock_ns(CLOCK_MONOTONIC);
	c0 = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
	for (;;) {
		unsigned long long w;

		sink += request(pairs, iters, n++);
		if (leak_every && !(n % leak_every)) {
			kept = leak_session(n);
			leaked += 4096;
		}
		if ((n & 15) || (w = clock_ns(CLOCK_MONOTONIC)) - w0 < win_ns)
			continue;
		{
			unsigned long long c = clock_ns(CLOCK_PROCESS_CPUTIME_ID);

			snprintf(line, sizeof(line), "win %lu %llu %llu %llu\n", n, w - w0, c - c0,
				 w);
			say(line);
			if (stdin_closed()) {
				snprintf(line, sizeof(line), "leaked %lu\n", leaked);
				say(line);
				break;
			}
			n = 0;
			w0 = w;
			c0 = c;
		}
	}
	return (int)(sink & 1) * 0;
}

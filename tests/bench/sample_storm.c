// SPDX-License-Identifier: GPL-2.0-only
/*
 * sample_storm - allocations for measuring memtop's own cost per sample:
 * PER_SEC malloc+free pairs of SIZE bytes per second, each from the bottom
 * of a 12-deep chain of functions built without frame pointers, so every
 * sample is unwound from its stack copy and symbolized.
 * Usage: sample_storm PER_SEC SIZE SECONDS
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static void *volatile sink;
static size_t size;

#define LEVEL(n, next)                                    \
	__attribute__((noipa)) static int level##n(int d) \
	{                                                 \
		int r = next(d + 1);                      \
		return r + d;                             \
	}

__attribute__((noipa)) static int level12(int d)
{
	sink = malloc(size);
	free(sink);
	return d;
}
LEVEL(11, level12)
LEVEL(10, level11)
LEVEL(9, level10)
LEVEL(8, level9)
LEVEL(7, level8)
LEVEL(6, level7)
LEVEL(5, level6)
LEVEL(4, level5)
LEVEL(3, level4)
LEVEL(2, level3)
LEVEL(1, level2)

int main(int argc, char **argv)
{
	long per_sec = argc > 1 ? atol(argv[1]) : 1600;
	double seconds = argc > 3 ? atof(argv[3]) : 10;
	const struct timespec ms = { 0, 1000000 };
	long i, ticks = (long)(seconds * 1000), per_ms = per_sec / 1000;

	size = argc > 2 ? strtoul(argv[2], NULL, 0) : 4096;
	printf("READY pid=%d\n", getpid());
	fflush(stdout);
	for (i = 0; i < ticks; i++) {
		for (long k = 0; k < per_ms; k++)
			level1(0);
		nanosleep(&ms, NULL);
	}
	return 0;
}

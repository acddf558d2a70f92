// SPDX-License-Identifier: GPL-2.0-only
/*
 * attach.c - a target for a real tool attached to the sampler's USDT
 * probes (the runner uses bpftrace). Nothing is sampled until the tool
 * attaches; the program waits for that, then makes a known set of
 * 4096-byte allocations and frees half of them, so the tool's sum of
 * alloc weights and its count of frees can be checked.
 *
 *   attach
 *
 * Prints "ready PID" and waits for a line on stdin; then waits (at most
 * 60 s) until an allocation comes back sampled, i.e. the alloc semaphore
 * is up; prints "live", runs the phase, prints "done ALLOCS BYTES FREES"
 * and waits for another line before it frees the rest and exits.
 */
#define _GNU_SOURCE
#include "sampler_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define BLOCKS 20000
#define BLOCK_SIZE 4096

static bool sampling_live(void)
{
	void *p = malloc(4 << 20);
	bool live = block_looks_sampled(p, MT_SAMPLER_HEADER_SIZE);

	free(p);
	return live;
}

int main(void)
{
	static void *b[BLOCKS];
	struct timespec nap = { 0, 10 * 1000 * 1000 };
	char line[64];
	int i, waited;

	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return 1;
	for (waited = 0; !sampling_live(); waited++) {
		if (waited == 6000) {
			fprintf(stderr, "FAIL nothing sampled after 60 s\n");
			return 1;
		}
		nanosleep(&nap, NULL);
	}
	printf("live\n");
	fflush(stdout);
	for (i = 0; i < BLOCKS; i++) {
		b[i] = malloc(BLOCK_SIZE);
		CHECK(b[i] != NULL);
		memset(b[i], i, BLOCK_SIZE);
	}
	for (i = 0; i < BLOCKS; i += 2)
		free(b[i]);
	printf("done %d %d %d\n", BLOCKS, BLOCKS * BLOCK_SIZE, BLOCKS / 2);
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return 1;
	for (i = 1; i < BLOCKS; i += 2)
		free(b[i]);
	return 0;
}

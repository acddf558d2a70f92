// SPDX-License-Identifier: GPL-2.0-only
/*
 * forkexec.c - fork and exec while other threads allocate through the
 * sampler. Each child frees and resizes blocks its parent allocated before
 * the fork (some sampled, if the mode samples), allocates on its own, and
 * then either exits or execs this program again, which runs with the
 * sampler preloaded as well (LD_PRELOAD is inherited).
 *
 *   forkexec plain|all|any [ROUNDS]      (default 40)
 *   forkexec exec-child MODE             (what a child execs)
 *
 * Prints "forkexec ok ROUNDS" or FAIL and exits 1. Hangs are caught by an
 * alarm (and by the runner's timeout).
 */
#define _GNU_SOURCE
#include "sampler_check.h"

#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#define BATCH 512
#define CHURNERS 3

static enum sampler_mode mode;
static volatile int stop;

/* Allocate, check and free without pause, so that a fork is likely to
 * catch some thread inside the allocator (and holding its locks). */
static void *churn(void *arg)
{
	__u64 s = 0x2545F4914F6CDD1DULL * ((uintptr_t)arg + 1);
	void *keep[64] = { 0 };

	while (!stop) {
		unsigned int at;
		size_t size;

		s ^= s << 13;
		s ^= s >> 7;
		s ^= s << 17;
		at = (unsigned int)(s % 64);
		size = 1 + (size_t)(s >> 40) % 3000;
		free(keep[at]);
		keep[at] = s & 1 ? malloc(size) : aligned_alloc(64, size);
		CHECK(keep[at] != NULL);
		pattern_fill(keep[at], size < 32 ? size : 32, (unsigned int)size);
	}
	for (unsigned int i = 0; i < 64; i++)
		free(keep[i]);
	return NULL;
}

/* Blocks of assorted kinds, each filled with a pattern keyed by index. */
static void batch_make(void **b, size_t *size)
{
	int i;

	for (i = 0; i < BATCH; i++) {
		size[i] = 1 + (size_t)i * 37 % 5000;
		switch (i % 4) {
		case 0:
			b[i] = malloc(size[i]);
			break;
		case 1:
			b[i] = calloc(1, size[i]);
			break;
		case 2:
			b[i] = memalign(128, size[i]);
			break;
		default:
			b[i] = realloc(NULL, size[i]);
			break;
		}
		CHECK(b[i] != NULL);
		pattern_fill(b[i], size[i], (unsigned int)i);
	}
}

/* Check, resize every third block, and free the batch. */
static void batch_release(void **b, const size_t *size)
{
	int i;

	for (i = 0; i < BATCH; i++) {
		CHECK(pattern_ok(b[i], size[i], (unsigned int)i));
		CHECK(malloc_usable_size(b[i]) >= size[i]);
		if (i % 3 == 0) {
			b[i] = realloc(b[i], size[i] * 2);
			CHECK(b[i] && pattern_ok(b[i], size[i], (unsigned int)i));
		}
		free(b[i]);
	}
}

static int run_child_work(void)
{
	static void *b[BATCH];
	static size_t size[BATCH];

	batch_make(b, size);
	batch_release(b, size);
	return 0;
}

int main(int argc, char **argv)
{
	static void *b[BATCH];
	static size_t size[BATCH];
	pthread_t tid[CHURNERS];
	int rounds = 40, r, i;

	alarm(120);
	if (argc > 2 && !strcmp(argv[1], "exec-child")) {
		mode = mode_parse(argv[2]);
		return run_child_work();
	}
	mode = mode_parse(argc > 1 ? argv[1] : NULL);
	if (argc > 2)
		rounds = atoi(argv[2]);
	for (i = 0; i < CHURNERS; i++)
		CHECK(pthread_create(&tid[i], NULL, churn, (void *)(uintptr_t)i) == 0);
	for (r = 0; r < rounds; r++) {
		int status;
		pid_t pid;

		batch_make(b, size);
		if (mode == MODE_ALL)
			expect_layout(b[0], MT_SAMPLER_HEADER_SIZE, mode);
		pid = fork();
		CHECK(pid >= 0);
		if (pid == 0) {
			/* Only this thread exists here; the heap and the
			 * sampler's set are copies of the parent's. */
			batch_release(b, size);
			run_child_work();
			if (r % 2) {
				char *args[] = { argv[0], "exec-child", argv[1], NULL };

				execv("/proc/self/exe", args);
				_exit(3);
			}
			_exit(0);
		}
		batch_release(b, size);
		CHECK(waitpid(pid, &status, 0) == pid);
		if (!WIFEXITED(status) || WEXITSTATUS(status)) {
			fprintf(stderr, "FAIL child of round %d: status %#x\n", r, status);
			return 1;
		}
	}
	stop = 1;
	for (i = 0; i < CHURNERS; i++)
		pthread_join(tid[i], NULL);
	printf("forkexec ok %d\n", rounds);
	return 0;
}

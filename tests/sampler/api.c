// SPDX-License-Identifier: GPL-2.0-only
/*
 * api.c - every interposed function against glibc's semantics, with
 * content checks, the whole usable size written (glibc aborts on a free
 * when a block overran its chunk), and the block layout the mode demands.
 *
 *   api plain|all|any
 *
 * Prints one deterministic line per group (no addresses, no usable sizes)
 * so that runs with and without the sampler can be compared byte for
 * byte; a failed check prints FAIL to stderr and exits 1.
 */
#define _GNU_SOURCE
#include "sampler_check.h"

#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static enum sampler_mode mode;

static const size_t sizes[] = { 1, 15, 16, 17, 24, 100, 1000, 4096, 100000, 1 << 20, 40 << 20 };
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

/* Write all usable bytes, check them, and check the alignment. */
static void use_block(void *p, size_t want, size_t align, unsigned int seed)
{
	size_t usable = malloc_usable_size(p);

	CHECK(p != NULL);
	CHECK(usable >= want);
	CHECK((uintptr_t)p % (align < 16 ? 16 : align) == 0);
	pattern_fill(p, usable, seed);
	CHECK(pattern_ok(p, usable, seed));
}

static void check_malloc(void)
{
	size_t i;
	void *p;

	for (i = 0; i < NSIZES; i++) {
		p = malloc(sizes[i]);
		use_block(p, sizes[i], 16, (unsigned int)i);
		expect_layout(p, 16, mode);
		free(p);
	}
	p = malloc(0);
	CHECK(p != NULL);
	free(p);
	free(NULL);
	errno = 0;
	CHECK(malloc(SIZE_MAX - 4096) == NULL && errno == ENOMEM);
	printf("malloc ok\n");
}

static void check_calloc(void)
{
	size_t i, j;
	unsigned char *p;

	for (i = 0; i < NSIZES; i++) {
		/* Dirty the memory calloc is likely to get back. */
		p = malloc(sizes[i]);
		memset(p, 0xAB, sizes[i]);
		free(p);
		p = calloc(1, sizes[i]);
		CHECK(p != NULL);
		for (j = 0; j < sizes[i]; j++)
			CHECK(p[j] == 0);
		expect_layout(p, 16, mode);
		use_block(p, sizes[i], 16, (unsigned int)i);
		free(p);
	}
	p = calloc(25, 40);
	CHECK(p && malloc_usable_size(p) >= 1000);
	free(p);
	p = calloc(0, 10);
	CHECK(p != NULL);
	free(p);
	errno = 0;
	CHECK(calloc(SIZE_MAX / 2 + 1, 2) == NULL && errno == ENOMEM);
	errno = 0;
	CHECK(calloc(SIZE_MAX / 16, 15) == NULL && errno == ENOMEM);
	printf("calloc ok\n");
}

static void check_realloc(void)
{
	static const size_t steps[] = { 10, 100, 5000, 200000, 8 << 20, 9 << 20, 50, 1, 70000 };
	size_t i, have;
	char *p, *q;

	p = realloc(NULL, 7);
	CHECK(p != NULL);
	pattern_fill(p, 7, 42);
	have = 7;
	for (i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		size_t keep = have < steps[i] ? have : steps[i];

		q = realloc(p, steps[i]);
		CHECK(q != NULL);
		CHECK(pattern_ok(q, keep, 42));
		CHECK(malloc_usable_size(q) >= steps[i]);
		expect_layout(q, 16, mode);
		pattern_fill(q, steps[i], 42);
		p = q;
		have = steps[i];
	}
	/* Failure leaves the block intact. */
	errno = 0;
	CHECK(realloc(p, SIZE_MAX - 100) == NULL && errno == ENOMEM);
	CHECK(pattern_ok(p, have, 42));
	/* glibc: realloc(p, 0) frees p and returns NULL. */
	CHECK(realloc(p, 0) == NULL);
	printf("realloc ok\n");
}

static void check_reallocarray(void)
{
	char *p = reallocarray(NULL, 10, 10), *q;

	CHECK(p != NULL);
	pattern_fill(p, 100, 7);
	errno = 0;
	CHECK(reallocarray(p, SIZE_MAX / 2, 3) == NULL && errno == ENOMEM);
	CHECK(pattern_ok(p, 100, 7));
	q = reallocarray(p, 1000, 8);
	CHECK(q && pattern_ok(q, 100, 7) && malloc_usable_size(q) >= 8000);
	expect_layout(q, 16, mode);
	CHECK(reallocarray(q, 0, 8) == NULL);
	printf("reallocarray ok\n");
}

static const size_t aligns[] = { 8, 16, 32, 64, 128, 4096, 65536, 1 << 21 };
#define NALIGNS (sizeof(aligns) / sizeof(aligns[0]))
static const size_t asizes[] = { 1, 100, 5000, 300000 };
#define NASIZES (sizeof(asizes) / sizeof(asizes[0]))

static void check_posix_memalign(void)
{
	static const size_t bad[] = { 0, 4, 12, 24, 3, 48 };
	void *p, *sentinel = (void *)0x1234;
	size_t i, j;

	for (i = 0; i < NALIGNS; i++)
		for (j = 0; j < NASIZES; j++) {
			CHECK(posix_memalign(&p, aligns[i], asizes[j]) == 0);
			use_block(p, asizes[j], aligns[i], (unsigned int)(i + j));
			expect_layout(p, layout_offset(aligns[i]), mode);
			free(p);
		}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		p = sentinel;
		CHECK(posix_memalign(&p, bad[i], 100) == EINVAL && p == sentinel);
	}
	p = sentinel;
	CHECK(posix_memalign(&p, 64, SIZE_MAX - 100) == ENOMEM && p == sentinel);
	CHECK(posix_memalign(&p, 64, 0) == 0);
	free(p);
	printf("posix_memalign ok\n");
}

/* aligned_alloc and memalign take the same arguments: one checker. */
static void check_memalign_like(const char *name, void *(*fn)(size_t, size_t))
{
	static const size_t odd[] = { 24, 48 };
	size_t i, j;
	void *p;

	for (i = 0; i < NALIGNS; i++)
		for (j = 0; j < NASIZES; j++) {
			p = fn(aligns[i], asizes[j]);
			use_block(p, asizes[j], aligns[i], (unsigned int)(i * j));
			expect_layout(p, layout_offset(aligns[i]), mode);
			free(p);
		}
	/* Alignments glibc rounds or rejects (its version decides): report
	 * what happened, so runs can be compared. */
	for (i = 0; i < sizeof(odd) / sizeof(odd[0]); i++) {
		errno = 0;
		p = fn(odd[i], 100);
		printf("%s(%zu, 100): %s errno=%d\n", name, odd[i],
		       p ? ((uintptr_t)p % 16 == 0 ? "aligned" : "misaligned") : "NULL",
		       p ? 0 : errno);
		free(p);
	}
	errno = 0;
	CHECK(fn(64, SIZE_MAX - 100) == NULL && errno == ENOMEM);
	printf("%s ok\n", name);
}

static void check_valloc(void)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), i;
	void *p;

	for (i = 0; i < NASIZES; i++) {
		p = valloc(asizes[i]);
		use_block(p, asizes[i], page, (unsigned int)i);
		expect_layout(p, page, mode);
		free(p);
		p = pvalloc(asizes[i]);
		use_block(p, (asizes[i] + page - 1) / page * page, page, (unsigned int)i);
		expect_layout(p, page, mode);
		free(p);
	}
	p = pvalloc(0);
	CHECK(p && (uintptr_t)p % page == 0);
	free(p);
	errno = 0;
	CHECK(pvalloc(SIZE_MAX - 10) == NULL && errno == ENOMEM);
	errno = 0;
	CHECK(valloc(SIZE_MAX - 10) == NULL && errno == ENOMEM);
	printf("valloc pvalloc ok\n");
}

static void check_usable(void)
{
	char *p = malloc(100);

	CHECK(malloc_usable_size(NULL) == 0);
	/* Grow into the reported usable size through realloc: nothing moves
	 * for glibc and the sampler alike, and the bytes survive. */
	pattern_fill(p, malloc_usable_size(p), 9);
	p = realloc(p, malloc_usable_size(p));
	CHECK(p && pattern_ok(p, 100, 9));
	free(p);
	printf("malloc_usable_size ok\n");
}

/* glibc's own callers of malloc and free go through the interposer. */
static void check_libc_callers(void)
{
	char *s = strdup("hello, sampler"), *t = NULL, *line = NULL;
	size_t cap = 0;
	FILE *f;

	CHECK(s && !strcmp(s, "hello, sampler"));
	CHECK(asprintf(&t, "%s %d", s, 42) > 0 && !strcmp(t, "hello, sampler 42"));
	f = fmemopen(t, strlen(t), "r");
	CHECK(f != NULL);
	CHECK(getline(&line, &cap, f) == (ssize_t)strlen(t) && !strcmp(line, t));
	fclose(f);
	free(line);
	free(t);
	free(s);
	printf("libc callers ok\n");
}

/* A block that is not sampled while its prev_size field (the last bytes
 * of the block before it) holds the magic: the set must rule it out. Only
 * meaningful when every allocation is sampled, which is when malloc(0) is
 * the way to get an unsampled block. */
static void check_magic_collision(void)
{
	enum { TRIES = 2000 };
	static char *held[2 * TRIES];
	int tries, n = 0;
	bool done = false;

	/* Keep every pair until the cached small chunks run out and a pair
	 * comes from the top of the heap, one right after the other. */
	for (tries = 0; tries < TRIES && !done; tries++) {
		char *a = malloc(40), *z = malloc(0);
		size_t usable = malloc_usable_size(a);

		CHECK(block_looks_sampled(a, 16));
		held[n++] = a;
		if (z - 16 == a + usable - 8) {
			memcpy(a + usable - 8, &seen_magic, 8);
			/* Each of these would take z for a sampled block and
			 * wreck the heap without the set. */
			CHECK(malloc_usable_size(z) < 64);
			z = realloc(z, 10);
			CHECK(z != NULL);
			done = true;
		}
		held[n++] = z;
	}
	while (n)
		free(held[--n]);
	CHECK(done);
	printf("magic collision ok\n");
}

int main(int argc, char **argv)
{
	mode = mode_parse(argc > 1 ? argv[1] : NULL);
	check_malloc();
	check_calloc();
	check_realloc();
	check_reallocarray();
	check_posix_memalign();
	check_memalign_like("aligned_alloc", aligned_alloc);
	check_memalign_like("memalign", memalign);
	check_valloc();
	check_usable();
	check_libc_callers();
	if (mode == MODE_ALL)
		check_magic_collision();
	return 0;
}

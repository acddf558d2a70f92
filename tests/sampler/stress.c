// SPDX-License-Identifier: GPL-2.0-only
/*
 * stress.c - threads mixing every interposed function, with blocks handed
 * between threads through a shared array (so blocks are freed and resized
 * by threads other than the one that made them), every block's contents
 * checked before it is resized or freed.
 *
 *   stress plain|all|any [THREADS [OPS_PER_THREAD]]   (default 8 x 1000000)
 *
 * Prints "stress ok THREADS x OPS" or FAIL and exits 1.
 */
#define _GNU_SOURCE
#include "sampler_check.h"

#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define SLOTS 4096
/* Bytes of pattern checked at each end of a block: keeps big blocks cheap. */
#define CHECK_SPAN 256

/* Every block starts with its size and pattern seed. */
struct blk {
	size_t size;
	unsigned int seed;
};

static struct blk *slots[SLOTS];
static enum sampler_mode mode;
static long ops = 1000000;
static size_t page;

static __u64 rnd(__u64 *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Mostly small, sometimes page-sized, rarely a megabyte or more. */
static size_t pick_size(__u64 *s)
{
	__u64 r = rnd(s);

	if (r % 1000 == 0)
		return (1 << 20) + r % (2 << 20);
	if (r % 50 == 0)
		return 4096 + r % 60000;
	return sizeof(struct blk) + r % 600;
}

static void blk_fill(struct blk *b, size_t size, unsigned int seed)
{
	unsigned char *body = (unsigned char *)(b + 1);
	size_t n = size - sizeof(*b);

	b->size = size;
	b->seed = seed;
	if (n <= 2 * CHECK_SPAN) {
		pattern_fill(body, n, seed);
	} else {
		pattern_fill(body, CHECK_SPAN, seed);
		pattern_fill(body + n - CHECK_SPAN, CHECK_SPAN, seed + 1);
	}
}

/* The first keep bytes of b are intact (keep >= sizeof(*b)). */
static void blk_check(const struct blk *b, size_t keep)
{
	const unsigned char *body = (const unsigned char *)(b + 1);
	size_t n = b->size - sizeof(*b), k = keep - sizeof(*b);

	CHECK(malloc_usable_size((void *)b) >= (keep < b->size ? keep : b->size));
	if (n <= 2 * CHECK_SPAN) {
		CHECK(pattern_ok(body, k < n ? k : n, b->seed));
	} else {
		CHECK(pattern_ok(body, k < CHECK_SPAN ? k : CHECK_SPAN, b->seed));
		if (k >= n)
			CHECK(pattern_ok(body + n - CHECK_SPAN, CHECK_SPAN, b->seed + 1));
	}
}

/* A new block from one of the allocation functions, chosen at random. */
static struct blk *blk_new(__u64 *s)
{
	size_t size = pick_size(s), align = 16;
	unsigned int kind = (unsigned int)(rnd(s) % 9);
	void *p = NULL;

	switch (kind) {
	case 0:
	case 1:
		p = malloc(size);
		break;
	case 2:
		p = calloc(1, size);
		CHECK(p && ((unsigned char *)p)[size - 1] == 0);
		break;
	case 3:
		p = realloc(NULL, size);
		break;
	case 4:
		p = reallocarray(NULL, 1, size);
		break;
	case 5:
		align = (size_t)64 << (rnd(s) % 4);
		CHECK(posix_memalign(&p, align, size) == 0);
		break;
	case 6:
		align = (size_t)32 << (rnd(s) % 3);
		p = aligned_alloc(align, size);
		break;
	case 7:
		align = (size_t)16 << (rnd(s) % 4);
		p = memalign(align, size);
		break;
	case 8:
		align = page;
		p = rnd(s) & 1 ? valloc(size) : pvalloc(size);
		break;
	}
	CHECK(p != NULL);
	CHECK((uintptr_t)p % align == 0);
	if (kind <= 4)
		expect_layout(p, MT_SAMPLER_HEADER_SIZE, mode);
	else
		expect_layout(p, layout_offset(align), mode);
	blk_fill(p, size, (unsigned int)rnd(s));
	return p;
}

static void *worker(void *arg)
{
	__u64 s = 0x9E3779B97F4A7C15ULL * ((uintptr_t)arg + 1);
	long i;

	for (i = 0; i < ops; i++) {
		unsigned int at = (unsigned int)(rnd(&s) % SLOTS);
		struct blk *b = __atomic_exchange_n(&slots[at], NULL, __ATOMIC_ACQ_REL);

		if (!b) {
			b = blk_new(&s);
		} else {
			blk_check(b, b->size);
			if (rnd(&s) % 3 == 0) {
				size_t size = pick_size(&s), old = b->size;
				struct blk *q =
					rnd(&s) & 1 ? realloc(b, size) : reallocarray(b, 1, size);

				/* q->size is still the old size. */
				CHECK(q != NULL);
				blk_check(q, old < size ? old : size);
				blk_fill(q, size, q->seed + 7);
				b = q;
			} else {
				free(b);
				continue;
			}
		}
		b = __atomic_exchange_n(&slots[at], b, __ATOMIC_ACQ_REL);
		if (b) {
			blk_check(b, b->size);
			free(b);
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	long threads = 8, i;
	pthread_t *tid;

	mode = mode_parse(argc > 1 ? argv[1] : NULL);
	if (argc > 2)
		threads = atol(argv[2]);
	if (argc > 3)
		ops = atol(argv[3]);
	CHECK(threads > 0 && ops > 0);
	page = (size_t)sysconf(_SC_PAGESIZE);
	tid = calloc((size_t)threads, sizeof(*tid));
	CHECK(tid != NULL);
	for (i = 0; i < threads; i++)
		CHECK(pthread_create(&tid[i], NULL, worker, (void *)(uintptr_t)i) == 0);
	for (i = 0; i < threads; i++)
		pthread_join(tid[i], NULL);
	for (i = 0; i < SLOTS; i++)
		if (slots[i]) {
			blk_check(slots[i], slots[i]->size);
			free(slots[i]);
		}
	free(tid);
	printf("stress ok %ld x %ld\n", threads, ops);
	return 0;
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * foreign.c - a program linked with another allocator (built with
 * -ljemalloc and with -ltcmalloc by tests/sampler/run), run bare and with
 * libmemtop-sampler.so preloaded (sampling forced): every function must
 * reach that allocator, never glibc's.
 *
 * It prints the usable size the allocator gives each requested size (glibc,
 * jemalloc and tcmalloc round differently, so a block that went to the
 * wrong allocator shows up as a different line, or as a crash when the
 * other allocator is handed a block it does not own), writes and checks
 * every usable byte through malloc, calloc, realloc, the memalign family
 * and free, and prints a checksum of everything it read back. The output
 * must be identical bare and preloaded.
 */
#define _GNU_SOURCE
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sampler_check.h"

#define SLOTS 512
#define ROUNDS 200000

static uint64_t rng = 88172645463325252ULL;

static uint64_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

struct slot {
	unsigned char *p;
	size_t size;
	unsigned char tag;
};

static uint64_t sum;

static void fill(struct slot *s)
{
	size_t usable = malloc_usable_size(s->p), i;

	CHECK(usable >= s->size);
	/* every usable byte belongs to the caller */
	for (i = 0; i < usable; i++)
		s->p[i] = (unsigned char)(s->tag + i);
}

static void verify(const struct slot *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		CHECK(s->p[i] == (unsigned char)(s->tag + i));
		sum = sum * 31 + s->p[i];
	}
}

static void make(struct slot *s, size_t size)
{
	void *q = NULL;

	s->size = size;
	s->tag = (unsigned char)next_rand();
	switch (next_rand() % 6) {
	case 0:
		s->p = calloc(1, size);
		CHECK(s->p);
		for (size_t i = 0; i < size; i++)
			CHECK(s->p[i] == 0);
		break;
	case 1:
		CHECK(posix_memalign(&q, 64, size) == 0);
		CHECK(((uintptr_t)q & 63) == 0);
		s->p = q;
		break;
	case 2:
		s->p = aligned_alloc(32, (size + 31) & ~(size_t)31);
		CHECK(s->p && ((uintptr_t)s->p & 31) == 0);
		break;
	case 3:
		s->p = memalign(128, size);
		CHECK(s->p && ((uintptr_t)s->p & 127) == 0);
		break;
	default:
		s->p = malloc(size);
		CHECK(s->p);
	}
	fill(s);
}

int main(void)
{
	static struct slot slots[SLOTS];
	static const size_t sizes[] = { 1,   8,    17,   24,   25,    40,    100,
					200, 1000, 4000, 5000, 20000, 70000, 300000 };
	size_t i;
	int r;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		void *p = malloc(sizes[i]);

		printf("size %zu usable %zu\n", sizes[i], malloc_usable_size(p));
		free(p);
	}
	for (r = 0; r < ROUNDS; r++) {
		struct slot *s = &slots[next_rand() % SLOTS];
		size_t size = 1 + next_rand() % (next_rand() % 8 ? 512 : 65536);

		if (!s->p) {
			make(s, size);
		} else if (next_rand() % 3 == 0) {
			size_t keep = s->size < size ? s->size : size;
			unsigned char *q = realloc(s->p, size);

			CHECK(q);
			s->p = q;
			verify(s, keep);
			s->size = size;
			fill(s);
		} else {
			verify(s, s->size);
			free(s->p);
			s->p = NULL;
		}
	}
	for (i = 0; i < SLOTS; i++) {
		if (slots[i].p) {
			verify(&slots[i], slots[i].size);
			free(slots[i].p);
		}
	}
	printf("checksum %016llx\n", (unsigned long long)sum);
	return 0;
}

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * sampler_check.h - helpers shared by the tests of libmemtop-sampler.so:
 * a failing-check macro, the run modes, and a look at the header the
 * sampler puts in front of a sampled block (include/memtop/sampler_abi.h).
 *
 * Modes (first argument of every test program):
 *   plain  nothing may be sampled (no tool attached, or not preloaded)
 *   all    every allocation of a non-zero size must be sampled
 *          (MEMTOP_SAMPLER_FORCE=1 MEMTOP_SAMPLE_RATE=1)
 *   any    correctness only
 */
#ifndef MEMTOP_SAMPLER_CHECK_H
#define MEMTOP_SAMPLER_CHECK_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/types.h>

#include "memtop/sampler_abi.h"

#define CHECK(cond)                                                                     \
	do {                                                                            \
		if (!(cond)) {                                                          \
			fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond); \
			exit(1);                                                        \
		}                                                                       \
	} while (0)

enum sampler_mode { MODE_PLAIN, MODE_ALL, MODE_ANY };

static inline enum sampler_mode mode_parse(const char *s)
{
	if (s && !strcmp(s, "plain"))
		return MODE_PLAIN;
	if (s && !strcmp(s, "all"))
		return MODE_ALL;
	if (s && !strcmp(s, "any"))
		return MODE_ANY;
	fprintf(stderr, "mode must be plain, all or any\n");
	exit(2);
}

/* The first magic seen; every later sampled block must carry the same. */
static __u64 seen_magic;

/* Does p carry a sampler header with this offset (16, or the alignment)?
 * The 16 bytes before any glibc block are readable (its chunk header), and
 * glibc's size field there is never as small as 16 with flags clear. */
static inline bool block_looks_sampled(const void *p, size_t off)
{
	const struct mt_sampler_header *h;
	__u64 magic = __atomic_load_n(&seen_magic, __ATOMIC_RELAXED);

	/* Hide where p came from: the compiler knows malloc's block starts
	 * at p and would warn about the read before it. */
	__asm__("" : "+r"(p));
	h = (const struct mt_sampler_header *)p - 1;

	if (h->offset != off || !h->magic)
		return false;
	if (!magic) {
		__atomic_compare_exchange_n(&seen_magic, &magic, h->magic, false, __ATOMIC_RELAXED,
					    __ATOMIC_RELAXED);
		magic = __atomic_load_n(&seen_magic, __ATOMIC_RELAXED);
	}
	return h->magic == magic;
}

/* Check the layout p must have in mode m. off is the offset a sampled
 * block of this call would have; plain mode is checked only where glibc's
 * own header cannot look like ours (off 16). */
static inline void expect_layout(const void *p, size_t off, enum sampler_mode m)
{
	if (m == MODE_ALL)
		CHECK(block_looks_sampled(p, off));
	else if (m == MODE_PLAIN && off == MT_SAMPLER_HEADER_SIZE)
		CHECK(!block_looks_sampled(p, off));
}

/* The sampler's header offset for an allocation aligned to align. */
static inline size_t layout_offset(size_t align)
{
	return align > MT_SAMPLER_HEADER_SIZE ? align : MT_SAMPLER_HEADER_SIZE;
}

/* Fill n bytes with a pattern that depends on seed and position. */
static inline void pattern_fill(void *p, size_t n, unsigned int seed)
{
	unsigned char *b = p;
	size_t i;

	for (i = 0; i < n; i++)
		b[i] = (unsigned char)(seed + i * 131);
}

static inline bool pattern_ok(const void *p, size_t n, unsigned int seed)
{
	const unsigned char *b = p;
	size_t i;

	for (i = 0; i < n; i++)
		if (b[i] != (unsigned char)(seed + i * 131))
			return false;
	return true;
}

#endif /* MEMTOP_SAMPLER_CHECK_H */

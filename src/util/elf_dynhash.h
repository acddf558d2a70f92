/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * elf_dynhash.h - finding a name through a loaded 64-bit ELF object's
 * DT_GNU_HASH or DT_HASH table, with the memory read through a callback:
 * memtop reads a target's tables through /proc/PID/mem
 * (probe/inject_got.c), the preloaded sampler reads its own process's
 * (sampler/next_alloc.c). Whether a symbol is the definition looked for
 * is the caller's (version, type, binding).
 *
 * Header-only and libc-only, because the sampler is a separate glibc-only
 * build that links nothing of memtop's. Bounded: a chain is walked at most
 * max_chain steps, each counted in *steps, and none once *steps reaches
 * max_steps (a table with a cycle or without a chain's end stops there).
 */
#ifndef MEMTOP_ELF_DYNHASH_H
#define MEMTOP_ELF_DYNHASH_H

#include <stddef.h>
#include <stdint.h>

/* Read len bytes at addr into buf: 0, or non-zero when they cannot be. */
typedef int (*elf_dynhash_read_fn)(void *ctx, uint64_t addr, void *buf, size_t len);
/* The address symbol idx defines if it is the definition of name, else 0. */
typedef uint64_t (*elf_dynhash_match_fn)(void *ctx, uint32_t idx, const char *name);

struct elf_dynhash {
	uint64_t gnu_hash;  /* DT_GNU_HASH run-time address, or 0 */
	uint64_t sysv_hash; /* DT_HASH run-time address, or 0 */
	elf_dynhash_read_fn read;
	elf_dynhash_match_fn match;
	void *ctx;
};

static inline uint32_t elf_dynhash_gnu(const char *s)
{
	uint32_t h = 5381;

	for (; *s; s++)
		h = h * 33 + (unsigned char)*s;
	return h;
}

static inline uint32_t elf_dynhash_sysv(const char *s)
{
	uint32_t h = 0, g;

	for (; *s; s++) {
		h = (h << 4) + (unsigned char)*s;
		g = h & 0xf0000000;
		if (g)
			h ^= g >> 24;
		h &= ~g;
	}
	return h;
}

/* The address of name's definition in the object, or 0. The GNU table
 * wins when both exist, as in the loader. */
static inline uint64_t elf_dynhash_lookup(const struct elf_dynhash *t, const char *name,
					  uint32_t max_chain, uint32_t max_steps, uint32_t *steps)
{
	uint32_t h[4], idx, h2, n = 0;
	uint64_t at;

	if (t->gnu_hash) {
		/* nbuckets, symoffset, bloom words (8 bytes each), shift */
		uint32_t hash = elf_dynhash_gnu(name);
		uint64_t buckets, chain;

		if (t->read(t->ctx, t->gnu_hash, h, sizeof(h)) || !h[0])
			return 0;
		buckets = t->gnu_hash + 16 + (uint64_t)h[2] * 8;
		chain = buckets + (uint64_t)h[0] * 4;
		if (t->read(t->ctx, buckets + (uint64_t)(hash % h[0]) * 4, &idx, 4) || idx < h[1])
			return 0;
		for (; n++ < max_chain && ++*steps < max_steps; idx++) {
			if (t->read(t->ctx, chain + (uint64_t)(idx - h[1]) * 4, &h2, 4))
				return 0;
			if ((h2 | 1) == (hash | 1) && (at = t->match(t->ctx, idx, name)))
				return at;
			if (h2 & 1)
				return 0;
		}
		return 0; /* no end of chain: not a loader's table */
	}
	if (t->sysv_hash) {
		/* nbucket, nchain, buckets, chains */
		if (t->read(t->ctx, t->sysv_hash, h, 8) || !h[0])
			return 0;
		if (t->read(t->ctx, t->sysv_hash + 8 + (uint64_t)(elf_dynhash_sysv(name) % h[0]) * 4,
			    &idx, 4))
			return 0;
		/* h[1] symbols: a chain is never longer, and a cycle ends here */
		while (idx && idx < h[1] && n++ < max_chain && ++*steps < max_steps) {
			if ((at = t->match(t->ctx, idx, name)))
				return at;
			if (t->read(t->ctx, t->sysv_hash + 8 + ((uint64_t)h[0] + idx) * 4, &idx, 4))
				return 0;
		}
	}
	return 0;
}

#endif /* MEMTOP_ELF_DYNHASH_H */

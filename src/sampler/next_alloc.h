/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * next_alloc.h - the allocator a preloaded libmemtop-sampler.so forwards
 * to: for every function it interposes, the next definition in the
 * process's symbol lookup order (what the process would have called
 * without the sampler, what dlsym(RTLD_NEXT) would return), found without
 * dlsym and without allocating.
 */
#ifndef MEMTOP_SAMPLER_NEXT_ALLOC_H
#define MEMTOP_SAMPLER_NEXT_ALLOC_H

#include <stdbool.h>
#include <stddef.h>

struct next_alloc {
	void *(*malloc)(size_t size);
	void (*free)(void *ptr);
	void *(*calloc)(size_t nmemb, size_t size);
	void *(*realloc)(void *ptr, size_t size);
	void *(*memalign)(size_t align, size_t size);
	void *(*aligned_alloc)(size_t align, size_t size);
	int (*posix_memalign)(void **memptr, size_t align, size_t size);
	void *(*valloc)(size_t size);
	void *(*pvalloc)(size_t size);
	size_t (*usable)(void *ptr);
	/* Every function above is glibc's own malloc family: the sampler
	 * may allocate its sampled blocks through it and read glibc's
	 * chunk header in front of a block. */
	bool glibc;
};

/* Fill next by walking the loaded objects (dl_iterate_phdr) from the one
 * containing self onwards and looking each name up in their dynamic
 * symbol tables. A function with no later definition is NULL. Safe to call
 * from inside malloc: takes only the loader's recursive list lock, never
 * allocates. */
void next_alloc_resolve(struct next_alloc *next, const void *self);

#endif /* MEMTOP_SAMPLER_NEXT_ALLOC_H */

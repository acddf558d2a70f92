/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * sampler_abi.h - what libmemtop-sampler.so promises to the outside: the
 * OpenTelemetry memory-profiling USDT contract it fires, the environment it
 * reads, and the layout of the header in front of a sampled block (which
 * only the .so and its tests look at; consumers never need it).
 *
 * USDT contract (see docs/sampler.md):
 *   otel_memory:alloc(void *ptr, size_t size, uint64_t weight)
 *     fires for sampled allocations only, after the block exists, with the
 *     pointer the application receives; weight is the number of bytes the
 *     sample stands for, round(size / (1 - exp(-size / rate))), so
 *     weight / size estimates the number of allocations.
 *   otel_memory:free(void *ptr)
 *     fires for frees (and realloc moves) of sampled pointers only, before
 *     the block is released.
 *   Both carry a semaphore; nothing is sampled while the alloc semaphore is
 *   zero.
 */
#ifndef MEMTOP_SAMPLER_ABI_H
#define MEMTOP_SAMPLER_ABI_H

#include <linux/types.h>

#define MT_SAMPLER_PROVIDER "otel_memory"
#define MT_SAMPLER_PROBE_ALLOC "alloc"
#define MT_SAMPLER_PROBE_FREE "free"

/* Mean sampling interval in bytes; K, M and G suffixes (powers of 1024);
 * 0 or 1 samples every allocation. */
#define MT_SAMPLER_ENV_RATE "MEMTOP_SAMPLE_RATE"
#define MT_SAMPLER_DEFAULT_RATE 524288
/* "1": behave as if a tool were attached from the start (the semaphores
 * are raised once at load). For tests and for measuring the sampling cost
 * without the cost of probe hits. */
#define MT_SAMPLER_ENV_FORCE "MEMTOP_SAMPLER_FORCE"

/* Sits in the 16 bytes right before the pointer the application gets.
 * magic is random per process and never 0; offset is how far that pointer
 * lies past the address glibc returned (16, or the alignment for aligned
 * allocations of alignment > 16). */
struct mt_sampler_header {
	__u64 magic;
	__u64 offset;
};

#define MT_SAMPLER_HEADER_SIZE 16

_Static_assert(sizeof(struct mt_sampler_header) == MT_SAMPLER_HEADER_SIZE,
	       "sampled-block header must keep 16-byte alignment");

#endif /* MEMTOP_SAMPLER_ABI_H */

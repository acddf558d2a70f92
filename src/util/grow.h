/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * grow.h - the one way an array grows: room for at least `need` elements,
 * the capacity doubled (from GROW_FIRST) until it holds them, with the
 * byte size checked against overflow. On failure nothing changes.
 */
#ifndef MEMTOP_UTIL_GROW_H
#define MEMTOP_UTIL_GROW_H

#include <stddef.h>

/* The capacity an empty array first grows to. */
#define GROW_FIRST 16

/* arr is the address of the array pointer (T **), *cap its capacity in
 * elements of elem bytes. 0, or -ENOMEM (out of memory, or need * elem
 * does not fit a size_t). */
int grow_array(void *arr, size_t *cap, size_t need, size_t elem);

/* Append item to the pointer array *v holding *n of *cap. 0 or -ENOMEM. */
int grow_push(void ***v, size_t *n, size_t *cap, void *item);

#endif /* MEMTOP_UTIL_GROW_H */

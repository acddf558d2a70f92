/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * hmap.h - open-addressing hash map from a caller-computed 64-bit hash to a
 * value pointer, with the caller's equality test on lookup. Linear probing
 * with backward-shift deletion: no tombstones, so a map under constant
 * insert/delete churn (live samples) never degrades.
 */
#ifndef MEMTOP_HMAP_H
#define MEMTOP_HMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

struct hmap_entry {
	__u64 hash;
	void *val; /* NULL: empty slot */
};

struct hmap {
	struct hmap_entry *v;
	size_t cap; /* power of two, or 0 */
	size_t len;
};

/* eq(val, key): does the stored value match the looked-up key? */
typedef bool (*hmap_eq_fn)(const void *val, const void *key);

void hmap_init(struct hmap *m);
void hmap_fini(struct hmap *m); /* frees the table, not the values */
void *hmap_get(const struct hmap *m, __u64 hash, hmap_eq_fn eq, const void *key);
/* Insert val (not already present). 0 or -ENOMEM. */
int hmap_put(struct hmap *m, __u64 hash, void *val);
/* Remove and return the matching value, or NULL. */
void *hmap_del(struct hmap *m, __u64 hash, hmap_eq_fn eq, const void *key);

/* Iteration in slot order: start with *pos = 0; each call returns the next
 * value and advances *pos, NULL at the end. The map must not change while
 * it is walked (to empty it, walk it freeing the values, then hmap_fini),
 * but for hmap_del() of the value just returned followed by (*pos)--: the
 * deletion may move a later value into its slot. A value may then be seen
 * twice (one moved across the table's end), never missed. */
void *hmap_next(const struct hmap *m, size_t *pos);

/* Mixing helpers for composite keys. */
__u64 hmap_mix(__u64 h, __u64 x);

/* FNV-1a (64-bit) over len bytes of p, continuing from h: start from
 * HMAP_FNV1A_BASIS. The one byte-string hash of memtop's tables. */
#define HMAP_FNV1A_BASIS 0xcbf29ce484222325ULL
__u64 hmap_fnv1a(__u64 h, const void *p, size_t len);

#endif /* MEMTOP_HMAP_H */

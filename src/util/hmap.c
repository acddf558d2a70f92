// SPDX-License-Identifier: GPL-2.0-only
/*
 * hmap.c - see hmap.h. Load factor kept at most 1/2.
 */
#include "util/hmap.h"

#include <errno.h>
#include <stdlib.h>

void hmap_init(struct hmap *m)
{
	m->v = NULL;
	m->cap = 0;
	m->len = 0;
}

void hmap_fini(struct hmap *m)
{
	free(m->v);
	hmap_init(m);
}

__u64 hmap_mix(__u64 h, __u64 x)
{
	/* splitmix64 finaliser over the running hash */
	h ^= x + 0x9E3779B97F4A7C15ULL + (h << 6) + (h >> 2);
	h ^= h >> 30;
	h *= 0xBF58476D1CE4E5B9ULL;
	h ^= h >> 27;
	h *= 0x94D049BB133111EBULL;
	return h ^ (h >> 31);
}

static size_t slot_of(const struct hmap *m, __u64 hash)
{
	return hash & (m->cap - 1);
}

void *hmap_get(const struct hmap *m, __u64 hash, hmap_eq_fn eq, const void *key)
{
	size_t i;

	if (!m->cap)
		return NULL;
	for (i = slot_of(m, hash); m->v[i].val; i = (i + 1) & (m->cap - 1))
		if (m->v[i].hash == hash && eq(m->v[i].val, key))
			return m->v[i].val;
	return NULL;
}

static void place(struct hmap_entry *v, size_t cap, __u64 hash, void *val)
{
	size_t i;

	for (i = hash & (cap - 1); v[i].val; i = (i + 1) & (cap - 1))
		;
	v[i].hash = hash;
	v[i].val = val;
}

static int grow(struct hmap *m)
{
	size_t cap = m->cap ? m->cap * 2 : 64, i;
	struct hmap_entry *v = calloc(cap, sizeof(*v));

	if (!v)
		return -ENOMEM;
	for (i = 0; i < m->cap; i++)
		if (m->v[i].val)
			place(v, cap, m->v[i].hash, m->v[i].val);
	free(m->v);
	m->v = v;
	m->cap = cap;
	return 0;
}

int hmap_put(struct hmap *m, __u64 hash, void *val)
{
	if ((m->len + 1) * 2 > m->cap && grow(m))
		return -ENOMEM;
	place(m->v, m->cap, hash, val);
	m->len++;
	return 0;
}

void *hmap_next(const struct hmap *m, size_t *pos)
{
	while (*pos < m->cap) {
		void *val = m->v[(*pos)++].val;

		if (val)
			return val;
	}
	return NULL;
}

void *hmap_del(struct hmap *m, __u64 hash, hmap_eq_fn eq, const void *key)
{
	size_t mask = m->cap - 1, i, j, home;
	void *val;

	if (!m->cap)
		return NULL;
	for (i = slot_of(m, hash); m->v[i].val; i = (i + 1) & mask)
		if (m->v[i].hash == hash && eq(m->v[i].val, key))
			break;
	val = m->v[i].val;
	if (!val)
		return NULL;
	/* Backward shift: pull later entries of the cluster into the hole
	 * when their home slot does not lie cyclically in (hole, j]. */
	for (j = (i + 1) & mask; m->v[j].val; j = (j + 1) & mask) {
		home = slot_of(m, m->v[j].hash);
		if (((j - home) & mask) >= ((j - i) & mask)) {
			m->v[i] = m->v[j];
			i = j;
		}
	}
	m->v[i].val = NULL;
	m->len--;
	return val;
}

__u64 hmap_fnv1a(__u64 h, const void *p, size_t len)
{
	const unsigned char *s = p;
	size_t i;

	for (i = 0; i < len; i++) {
		h ^= s[i];
		h *= 0x100000001b3ULL; /* the 64-bit FNV prime */
	}
	return h;
}

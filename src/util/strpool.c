// SPDX-License-Identifier: GPL-2.0-only
/*
 * strpool.c - interned strings. Owns one hash set (util/hmap) of
 * pointers into large append-only text chunks; an interned string is never
 * moved or freed, so its pointer is valid for the life of the process and
 * equal strings share one pointer. A mutex serialises callers: interning
 * is off the hot path (symbolization caches hold interned pointers).
 *
 * Targets choose many of these strings (mapped paths, symbol names): one
 * that renames its files or generates names without end would grow the
 * pool without end. So the text stored is bounded (STRPOOL_MAX_BYTES);
 * past it a new string interns as STRPOOL_OVERFLOW and is counted. And
 * one such producer must not use up the pool for the others: the text
 * each budget (strpool_charge, one per thread at a time) adds is bounded
 * too (STRPOOL_OWNER_MAX_BYTES), counted in the budget.
 */
#include "util/strpool.h"

#include "util/hmap.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK_SIZE (64 * 1024)

struct pool_key {
	const char *s;
	size_t len;
};

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static struct hmap pool; /* the interned strings, by their text */
static char *chunk;      /* current text chunk */
static size_t chunk_left;
static size_t pool_bytes; /* text stored */
static size_t pool_limit = STRPOOL_MAX_BYTES;
static size_t pool_refused;  /* strings interned as STRPOOL_OVERFLOW */
static const char *overflow; /* the interned STRPOOL_OVERFLOW */
static size_t owner_limit = STRPOOL_OWNER_MAX_BYTES;
static __thread struct strpool_budget *charged; /* who pays on this thread */

static __u64 hash_bytes(const char *s, size_t len)
{
	return hmap_mix(hmap_fnv1a(HMAP_FNV1A_BASIS, s, len), len);
}

/* An interned string holds no NUL before its end, so it equals s[0..len)
 * when it agrees on those bytes and ends right after them. */
static bool pool_eq(const void *val, const void *key)
{
	const char *str = val;
	const struct pool_key *k = key;

	return !strncmp(str, k->s, k->len) && str[k->len] == '\0';
}

/* Copy s[0..len) into chunk storage, NUL-terminated. */
static const char *pool_store(const char *s, size_t len)
{
	char *p;

	if (len + 1 > CHUNK_SIZE / 4) {
		/* Big strings get their own allocation. */
		p = malloc(len + 1);
	} else {
		if (chunk_left < len + 1) {
			chunk = malloc(CHUNK_SIZE);
			chunk_left = chunk ? CHUNK_SIZE : 0;
		}
		p = chunk;
		if (p) {
			chunk += len + 1;
			chunk_left -= len + 1;
		}
	}
	if (!p)
		return NULL;
	memcpy(p, s, len);
	p[len] = '\0';
	return p;
}

/* STRPOOL_OVERFLOW, stored once outside the set (so interning its text
 * gives another pointer); NULL/ENOMEM if it cannot be. Under the lock. */
static const char *overflow_marker(void)
{
	if (!overflow)
		__atomic_store_n(&overflow,
				 pool_store(STRPOOL_OVERFLOW, sizeof(STRPOOL_OVERFLOW) - 1),
				 __ATOMIC_RELEASE);
	if (!overflow)
		errno = ENOMEM;
	return overflow;
}

const char *strpool_intern_len(const char *s, size_t len)
{
	const struct pool_key key = { s, len };
	const char *ret = NULL;
	__u64 h;

	if (!s)
		return NULL;
	if (len > UINT32_MAX) {
		errno = ENOMEM;
		return NULL;
	}
	h = hash_bytes(s, len);
	pthread_mutex_lock(&pool_lock);
	ret = hmap_get(&pool, h, pool_eq, &key);
	if (ret)
		goto out;
	if (charged && charged->bytes + len + 1 > owner_limit) {
		charged->refused++;
		ret = overflow_marker();
		goto out;
	}
	if (pool_bytes + len + 1 > pool_limit) {
		pool_refused++;
		ret = overflow_marker();
		goto out;
	}
	ret = pool_store(s, len);
	if (!ret || hmap_put(&pool, h, (void *)ret)) {
		/* The text stored (if any) stays unreachable: chunks are never
		 * freed, and memory has run out anyway. */
		ret = NULL;
		errno = ENOMEM;
		goto out;
	}
	pool_bytes += len + 1;
	if (charged)
		charged->bytes += len + 1;
out:
	pthread_mutex_unlock(&pool_lock);
	return ret;
}

const char *strpool_intern(const char *s)
{
	return s ? strpool_intern_len(s, strlen(s)) : NULL;
}

size_t strpool_refused(void)
{
	size_t n;

	pthread_mutex_lock(&pool_lock);
	n = pool_refused;
	pthread_mutex_unlock(&pool_lock);
	return n;
}

void strpool_set_limit(size_t bytes)
{
	pthread_mutex_lock(&pool_lock);
	pool_limit = bytes;
	pthread_mutex_unlock(&pool_lock);
}

struct strpool_budget *strpool_charge(struct strpool_budget *b)
{
	struct strpool_budget *was = charged;

	charged = b;
	return was;
}

bool strpool_is_overflow(const char *s)
{
	/* set once, under the lock; read without it (a hot path) */
	return s && s == __atomic_load_n(&overflow, __ATOMIC_ACQUIRE);
}

void strpool_set_owner_limit(size_t bytes)
{
	pthread_mutex_lock(&pool_lock);
	owner_limit = bytes;
	pthread_mutex_unlock(&pool_lock);
}

size_t strpool_count(void)
{
	size_t n;

	pthread_mutex_lock(&pool_lock);
	n = pool.len;
	pthread_mutex_unlock(&pool_lock);
	return n;
}

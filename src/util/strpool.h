/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * strpool.h - process-lifetime interned strings. Equal strings intern to
 * the same pointer, so interned strings can be compared with == and stored
 * without ownership. Thread-safe. Nothing is ever freed, so the text kept
 * is bounded: past STRPOOL_MAX_BYTES (64 MiB) of it, a string not yet
 * interned gets STRPOOL_OVERFLOW instead, and is counted.
 *
 * It is also bounded per owner: a caller that interns on someone's behalf
 * (memtop: a target's paths and symbol names) names a budget for its
 * thread with strpool_charge(); each string that budget adds to the pool
 * is charged to it, and past STRPOOL_OWNER_MAX_BYTES a new string gets
 * STRPOOL_OVERFLOW and is counted in the budget, not in the pool. A string
 * already interned costs nobody anything. The pool knows nothing of who
 * owns a budget.
 */
#ifndef MEMTOP_STRPOOL_H
#define MEMTOP_STRPOOL_H

#include <stdbool.h>
#include <stddef.h>

/* The interned copy of the NUL-terminated string s. NULL for NULL; NULL
 * with errno = ENOMEM when memory runs out. */
const char *strpool_intern(const char *s);

/* The interned copy of s[0..len) (s need not be NUL-terminated and must not
 * contain NUL in that range). NULL for s == NULL; NULL/ENOMEM on failure. */
const char *strpool_intern_len(const char *s, size_t len);

/* Number of distinct strings interned so far (for tests and stats). */
size_t strpool_count(void);

#define STRPOOL_OVERFLOW "[too many names]"

/* The bound on the text stored in all. */
#define STRPOOL_MAX_BYTES (64u << 20)

/* Strings given STRPOOL_OVERFLOW since start. */
size_t strpool_refused(void);

/* The bound on stored text, in bytes (tests). */
void strpool_set_limit(size_t bytes);

/* The text one owner may add to the pool (an eighth of the pool's). */
#define STRPOOL_OWNER_MAX_BYTES (8u << 20)

/* What an owner has added to the pool. Zero-initialised by its owner;
 * written by the pool under its lock while charged, read by the owner. */
struct strpool_budget {
	size_t bytes;   /* text stored on its behalf (with NULs) */
	size_t refused; /* strings it was given STRPOOL_OVERFLOW for */
};

/* Charge strings this thread interns from now on to b (NULL: to no
 * owner, only the pool's bound applies). Returns the budget charged
 * before, to be put back when the work for b is done. */
struct strpool_budget *strpool_charge(struct strpool_budget *b);

/* s is the STRPOOL_OVERFLOW a string was given instead of itself (to be
 * shown, never kept in a cache shared by other owners). */
bool strpool_is_overflow(const char *s);

/* The bound per owner, in bytes (tests). */
void strpool_set_owner_limit(size_t bytes);

#endif /* MEMTOP_STRPOOL_H */

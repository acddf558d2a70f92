/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * strpool.h - process-lifetime interned strings. Equal strings intern to
 * the same pointer, so interned strings can be compared with == and stored
 * without ownership. Thread-safe. Nothing is ever freed, so the text kept
 * is bounded: past STRPOOL_MAX_BYTES (64 MiB) of it, a string not yet
 * interned gets STRPOOL_OVERFLOW instead, and is counted.
 */
#ifndef MEMTOP_STRPOOL_H
#define MEMTOP_STRPOOL_H

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

/* Strings given STRPOOL_OVERFLOW since start. */
size_t strpool_refused(void);

/* The bound on stored text, in bytes (tests). */
void strpool_set_limit(size_t bytes);

#endif /* MEMTOP_STRPOOL_H */

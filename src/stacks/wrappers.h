/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * wrappers.h - which stack frames are allocator machinery rather than the
 * program's own code: the allocator, the libraries' allocation wrappers
 * (Rust's alloc crate, sqlite3Malloc, g_malloc, xmalloc, zmalloc,
 * PyMem_Malloc, operator new and the C++ container allocators, ...). A
 * call site is the first frame of a stack that is not machinery.
 *
 * The rules are one data table (wrappers.c, documented with examples in
 * docs/allocators.md), extended at run time by --skip.
 */
#ifndef MEMTOP_STACKS_WRAPPERS_H
#define MEMTOP_STACKS_WRAPPERS_H

#include <stdbool.h>
#include <stddef.h>

#include "stacks/frame.h"

/* One rule of the table. */
struct wrapper_rule {
	const char *family;   /* who the rule is for: "Rust", "sqlite", ... */
	const char *function; /* pattern (util/pattern.h, an ERE subset)
			       * matched against the whole demangled name;
			       * NULL: any frame of the module */
	const char *module;   /* pattern matched against the module's file
			       * name (from its start); NULL: any module */
	bool unnamed_only;    /* with module: only frames without a symbol */
	bool allocator;       /* the allocator itself, not a wrapper of it */
	const char *pool;     /* a pool rule (never machinery): the frame that
			       * calls mmap for a pool of objects the probes do
			       * not see one by one; the pool's name */
};

struct wrappers;

/* The table plus user_regex (--skip, a pattern of util/pattern.h matched
 * anywhere in the demangled name; NULL for none). NULL with errno set:
 * EINVAL for a user_regex pattern_compile() refuses, ENOMEM. */
struct wrappers *wrappers_new(const char *user_regex);
void wrappers_free(struct wrappers *w);

/* Whether f is machinery: a call site is never f. */
bool wrappers_match(const struct wrappers *w, const struct mt_frame *f);

/* Whether f is the allocator itself (glibc's malloc family, jemalloc,
 * tcmalloc, memtop's sampler): an mmap made under such a frame is the
 * heap's own, already seen through its allocations. */
bool wrappers_is_allocator(const struct wrappers *w, const struct mt_frame *f);

/* The pool whose memory f maps when it calls mmap itself (pymalloc's
 * arenas: "pymalloc arenas"), or NULL. Such a mapping is charged to the
 * pool, not to the caller that happened to need a new one: which objects
 * fill it is not seen. */
const char *wrappers_pool(const struct wrappers *w, const struct mt_frame *f);

/* The built-in table, for docs and tests. Returns its length. */
size_t wrappers_table(const struct wrapper_rule **rules);

#endif /* MEMTOP_STACKS_WRAPPERS_H */

// SPDX-License-Identifier: GPL-2.0-only
/*
 * wrappers.c - the table of allocator machinery frames (wrappers.h).
 *
 * A frame is machinery when a rule matches it: its demangled function name
 * matches the rule's function ERE (the whole name), in a module matching
 * the rule's module ERE if it has one; a rule with a module and no
 * function covers every frame of that module (or, with unnamed_only, its
 * frames that have no symbol). Rules and --skip are compiled once, by the
 * bounded matcher (util/pattern.h: the table's ERE fit its subset and its
 * caps, as --skip must); stacks are interned, so each distinct stack is
 * matched once.
 *
 * A rule belongs here when the frame allocates on behalf of its caller and
 * says nothing about why: the allocator itself, the allocation wrappers of
 * libraries and runtimes, container growth. Examples and the reasoning per
 * family are in docs/allocators.md.
 */
#include "stacks/wrappers.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/pattern.h"

static const struct wrapper_rule table[] = {
	/* the allocators themselves, and memtop's in-process sampler */
	{ "libc",
	  "malloc|calloc|realloc|reallocarray|free|posix_memalign|aligned_alloc|"
	  "memalign|valloc|pvalloc|__libc_(malloc|calloc|realloc|free|memalign|valloc|pvalloc)",
	  NULL, false, true },
	{ "libc", "strdup|strndup|__strdup|__strndup|__libc_[a-z_]+" },
	/* the system calls' wrappers, where every mapping of the mmap source
	 * is made */
	{ "libc", "mmap|mmap64|__mmap|__mmap64|mremap|__mremap|sbrk|__sbrk|brk|__brk|__brk_call" },
	{ "memtop", NULL, "libmemtop-sampler\\.so|memfd:memtop-sampler", false, true },
	{ "jemalloc", NULL, "libjemalloc\\.so", false, true },
	/* jemalloc compiled into a program (a static or prefixed build): its
	 * public entry points, and every function of its je_ private
	 * namespace (so an extent it maps is the allocator's own) */
	{ "jemalloc", "je_[A-Za-z0-9_]+|mallocx|rallocx|sdallocx|dallocx", NULL, false, true },
	{ "tcmalloc", NULL, "libtcmalloc(_minimal|_and_profiler)?\\.so", false, true },
	/* C++: operator new, the standard containers and their allocators
	 * (std::allocator, __gnu_cxx::new_allocator, vector growth, ...) */
	{ "C++", "operator new.*|operator delete.*|std::.*|__gnu_cxx::.*" },
	/* Rust: the global allocator shims and the alloc crate (Box, Vec and
	 * RawVec growth, String, collections), hashbrown (the HashMap of std:
	 * its map, entry and table growth) */
	{ "Rust", "__rust_(alloc|alloc_zeroed|realloc)|__rdl_(alloc|alloc_zeroed|realloc)|"
		  "__rg_(alloc|alloc_zeroed|realloc)|<?alloc::.*|<[^>]* as alloc::.*|"
		  "<?hashbrown::.*" },
	/* Rust: the core crate has no allocator, so a frame of it on an
	 * allocating stack only passes through to code that allocates for its
	 * caller (core::fmt::write and the Formatter under format!,
	 * Iterator::collect, Option::map_or_else in alloc::fmt::format); and
	 * the Display and Debug impls that format! runs, which write through
	 * String's core::fmt::Write */
	{ "Rust", "<?core::.*|<[^>]* as core::fmt::.*" },
	/* sqlite: every frame of the shared library (its allocation wrappers
	 * sqlite3Malloc, sqlite3MemMalloc... are static, so unnamed in a
	 * stripped libsqlite3), and the wrappers by name where sqlite is
	 * compiled into the program */
	{ "sqlite", NULL, "libsqlite3\\.so" },
	{ "sqlite", "sqlite3(Malloc|MallocZero|DbMalloc[A-Za-z]*|DbRealloc[A-Za-z]*|MemMalloc|"
		    "MemRealloc|Realloc|DbStrDup|DbStrNDup|StrAccum[A-Za-z]*|VMPrintf|MPrintf|"
		    "_malloc|_malloc64|_realloc|_realloc64|_mprintf|_vmprintf)" },
	/* GLib */
	{ "GLib", "g_malloc.*|g_realloc.*|g_try_malloc.*|g_try_realloc.*|g_slice_alloc.*|"
		  "g_memdup.*|g_strdup.*|g_strndup" },
	/* xmalloc-style wrappers (gnulib, GNU programs), redis's zmalloc */
	{ "xmalloc", "xmalloc|xcalloc|xrealloc|xstrdup|xstrndup|xzalloc|xmemdup|xnmalloc|"
		     "xnrealloc|x2realloc|x2nrealloc|xcharalloc" },
	{ "redis", "z(try)?(malloc|calloc|realloc)[a-z_]*|zstrdup" },
	/* CPython's allocation functions (pymalloc and the object allocators) */
	{ "CPython", "PyMem_(Raw)?(Malloc|Calloc|Realloc)|PyObject_(Malloc|Calloc|Realloc)|"
		     "_PyMem_[A-Za-z_]+|_PyObject_(Malloc|Calloc|Realloc|New|NewVar)|"
		     "_?PyObject_GC_[A-Za-z_]+|gc_alloc|pymalloc_[a-z_]+|PyType_GenericAlloc|"
		     "_PyType_AllocNoTrack" },
	/* CPython's pymalloc maps its arenas itself (1 MiB from 3.10 on,
	 * 256 KiB before): _PyObject_ArenaMmap, static, so unnamed in
	 * Debian's stripped python3.11 (the only direct mmap of the
	 * interpreter: its mmap module is a module of its own) */
	{ "CPython", "_PyObject_ArenaMmap|_PyObject_VirtualAlloc|new_arena", NULL, false, false,
	  "pymalloc arenas" },
	{ "CPython", NULL, "python3\\.[0-9]+$|libpython3\\.[0-9]+\\.so", true, false,
	  "pymalloc arenas" },
	/* Go: the runtime allocates on behalf of its caller (mallocgc,
	 * newobject, makeslice, growslice, makemap, string concatenation,
	 * the profiling path itself); strings.Builder's growth */
	{ "Go", "runtime\\..*|internal/bytealg\\.MakeNoZero" },
	/* Node: ArrayBuffer backing stores */
	{ "Node", "node::[A-Za-z_:]*ArrayBufferAllocator::.*|v8::ArrayBuffer::Allocator::.*" },
};

#define NRULES (sizeof(table) / sizeof(table[0]))

struct wrappers {
	struct pattern *fn[NRULES]; /* NULL: the rule has none */
	struct pattern *mod[NRULES];
	struct pattern *user;
};

static struct pattern *compile(const char *what, bool anchor_end)
{
	char pat[PATTERN_MAX_LEN + 8];

	snprintf(pat, sizeof(pat), "^(%s)%s", what, anchor_end ? "$" : "");
	return pattern_compile(pat, NULL, 0);
}

struct wrappers *wrappers_new(const char *user_regex)
{
	struct wrappers *w = calloc(1, sizeof(*w));
	size_t i;
	int e;

	if (!w) {
		errno = ENOMEM;
		return NULL;
	}
	for (i = 0; i < NRULES; i++) {
		if (table[i].function && !(w->fn[i] = compile(table[i].function, true)))
			goto bad;
		if (table[i].module && !(w->mod[i] = compile(table[i].module, false)))
			goto bad;
	}
	if (user_regex && !(w->user = pattern_compile(user_regex, NULL, 0)))
		goto bad;
	return w;
bad:
	e = errno;
	wrappers_free(w);
	errno = e;
	return NULL;
}

void wrappers_free(struct wrappers *w)
{
	size_t i;

	if (!w)
		return;
	for (i = 0; i < NRULES; i++) {
		pattern_free(w->fn[i]);
		pattern_free(w->mod[i]);
	}
	pattern_free(w->user);
	free(w);
}

/* Whether rule i matches f. */
static bool rule_match(const struct wrappers *w, size_t i, const struct mt_frame *f)
{
	if (w->mod[i] && (!f->module || !pattern_match(w->mod[i], f->module)))
		return false;
	if (!w->fn[i])
		return !table[i].unnamed_only || !f->function;
	return f->function && pattern_match(w->fn[i], f->function);
}

bool wrappers_is_allocator(const struct wrappers *w, const struct mt_frame *f)
{
	size_t i;

	for (i = 0; i < NRULES; i++)
		if (table[i].allocator && rule_match(w, i, f))
			return true;
	return false;
}

const char *wrappers_pool(const struct wrappers *w, const struct mt_frame *f)
{
	size_t i;

	for (i = 0; i < NRULES; i++)
		if (table[i].pool && rule_match(w, i, f))
			return table[i].pool;
	return NULL;
}

bool wrappers_match(const struct wrappers *w, const struct mt_frame *f)
{
	size_t i;

	for (i = 0; i < NRULES; i++) {
		if (!table[i].pool && rule_match(w, i, f))
			return true;
	}
	return w->user && f->function && pattern_match(w->user, f->function);
}

size_t wrappers_table(const struct wrapper_rule **rules)
{
	*rules = table;
	return NRULES;
}

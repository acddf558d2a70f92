// SPDX-License-Identifier: GPL-2.0-only
/*
 * wrappers.c - the table of allocator machinery frames (wrappers.h).
 *
 * A frame is machinery when a rule matches it: its demangled function name
 * matches the rule's function ERE (the whole name), in a module matching
 * the rule's module ERE if it has one; a rule with a module and no
 * function covers every frame of that module (or, with unnamed_only, its
 * frames that have no symbol). Rules are compiled once; stacks are
 * interned, so each distinct stack is matched once.
 *
 * A rule belongs here when the frame allocates on behalf of its caller and
 * says nothing about why: the allocator itself, the allocation wrappers of
 * libraries and runtimes, container growth. Examples and the reasoning per
 * family are in docs/allocators.md.
 */
#include "stacks/wrappers.h"

#include <errno.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
	 * RawVec growth, String, collections), hashbrown's table growth */
	{ "Rust", "__rust_(alloc|alloc_zeroed|realloc)|__rdl_(alloc|alloc_zeroed|realloc)|"
		  "__rg_(alloc|alloc_zeroed|realloc)|<?alloc::.*|<[^>]* as alloc::.*|"
		  "<?hashbrown::raw::.*" },
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
	/* Go: the runtime allocates on behalf of its caller (mallocgc,
	 * newobject, makeslice, growslice, makemap, string concatenation,
	 * the profiling path itself); strings.Builder's growth */
	{ "Go", "runtime\\..*|internal/bytealg\\.MakeNoZero" },
	/* Node: ArrayBuffer backing stores */
	{ "Node", "node::[A-Za-z_:]*ArrayBufferAllocator::.*|v8::ArrayBuffer::Allocator::.*" },
};

#define NRULES (sizeof(table) / sizeof(table[0]))

struct wrappers {
	regex_t fn[NRULES];
	regex_t mod[NRULES];
	bool has_fn[NRULES], has_mod[NRULES];
	regex_t user;
	bool has_user;
};

static int compile(regex_t *re, const char *what, bool anchor_end)
{
	size_t len = strlen(what) + 8;
	char *pat = malloc(len);
	int e;

	if (!pat)
		return -ENOMEM;
	snprintf(pat, len, "^(%s)%s", what, anchor_end ? "$" : "");
	e = regcomp(re, pat, REG_EXTENDED | REG_NOSUB) ? -EINVAL : 0;
	free(pat);
	return e;
}

struct wrappers *wrappers_new(const char *user_regex)
{
	struct wrappers *w = calloc(1, sizeof(*w));
	size_t i;

	if (!w) {
		errno = ENOMEM;
		return NULL;
	}
	for (i = 0; i < NRULES; i++) {
		if (table[i].function && compile(&w->fn[i], table[i].function, true))
			goto bad;
		w->has_fn[i] = table[i].function != NULL;
		if (table[i].module && compile(&w->mod[i], table[i].module, false))
			goto bad;
		w->has_mod[i] = table[i].module != NULL;
	}
	if (user_regex) {
		if (regcomp(&w->user, user_regex, REG_EXTENDED | REG_NOSUB))
			goto bad;
		w->has_user = true;
	}
	return w;
bad:
	wrappers_free(w);
	errno = EINVAL;
	return NULL;
}

void wrappers_free(struct wrappers *w)
{
	size_t i;

	if (!w)
		return;
	for (i = 0; i < NRULES; i++) {
		if (w->has_fn[i])
			regfree(&w->fn[i]);
		if (w->has_mod[i])
			regfree(&w->mod[i]);
	}
	if (w->has_user)
		regfree(&w->user);
	free(w);
}

/* Whether rule i matches f. */
static bool rule_match(const struct wrappers *w, size_t i, const struct mt_frame *f)
{
	if (w->has_mod[i] && (!f->module || regexec(&w->mod[i], f->module, 0, NULL, 0)))
		return false;
	if (!w->has_fn[i])
		return !table[i].unnamed_only || !f->function;
	return f->function && !regexec(&w->fn[i], f->function, 0, NULL, 0);
}

bool wrappers_is_allocator(const struct wrappers *w, const struct mt_frame *f)
{
	size_t i;

	for (i = 0; i < NRULES; i++)
		if (table[i].allocator && rule_match(w, i, f))
			return true;
	return false;
}

bool wrappers_match(const struct wrappers *w, const struct mt_frame *f)
{
	size_t i;

	for (i = 0; i < NRULES; i++) {
		if (rule_match(w, i, f))
			return true;
	}
	return w->has_user && f->function && !regexec(&w->user, f->function, 0, NULL, 0);
}

size_t wrappers_table(const struct wrapper_rule **rules)
{
	*rules = table;
	return NRULES;
}

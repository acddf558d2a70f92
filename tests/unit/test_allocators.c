// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_allocators.c - how memtop recognises an allocator's C-name prefix
 * (probe/allocators.c, allocators_find_prefix) on synthetic symbol
 * tables: jemalloc built with --with-jemalloc-prefix (je_, Rust's _rjem_),
 * the unprefixed builds Debian ships, and a program's own look-alikes that
 * must never pass for an allocator.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "probe/allocators.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static const struct allocator *named(const char *name)
{
	const struct allocator *const *v;
	size_t n = allocators_all(&v), i;

	for (i = 0; i < n; i++)
		if (!strcmp(v[i]->name, name))
			return v[i];
	fail_msg("no allocator %s", name);
	return NULL;
}

/* The prefix found in names (prefixed search), or NULL for none. */
static const char *prefix_of(const char *const *names, size_t n, const char *alloc)
{
	static char prefix[MT_ALLOC_PREFIX_MAX];

	return allocators_find_prefix(names, n, named(alloc), true, prefix, sizeof(prefix)) ? prefix
											    : NULL;
}

/* jemalloc's prefixed C API, as --with-jemalloc-prefix=P names it. */
#define JE_API(P)                                                                              \
	P "malloc", P "calloc", P "realloc", P "free", P "mallocx", P "rallocx", P "sdallocx", \
		P "dallocx", P "nallocx", P "mallctl", P "malloc_usable_size"

static void test_prefixed_jemalloc(void **state)
{
	/* a static je_ build in a program: its internals are je_ too */
	static const char *const je[] = {
		"main",        "je_malloc_default", "je_arena_malloc_hard",
		JE_API("je_"), "api_mallocx",       "_Znwm"
	};
	static const char *const rjem[] = { "main", JE_API("_rjem_"), "rust_begin_unwind" };

	(void)state;
	assert_string_equal(prefix_of(je, N(je), "jemalloc"), "je_");
	assert_string_equal(prefix_of(rjem, N(rjem), "jemalloc"), "_rjem_");
	/* the order of the table does not matter */
	{
		static const char *const rev[] = { "je_dallocx", "je_sdallocx", "je_rallocx",
						   "je_realloc", "je_calloc",   "je_free",
						   "je_malloc",  "je_mallocx" };

		assert_string_equal(prefix_of(rev, N(rev), "jemalloc"), "je_");
	}
}

static void test_unprefixed_builds(void **state)
{
	static const char *const shared[] = { JE_API(""), "_Znwm", "_ZdlPv" };
	static const char *const tc[] = { "malloc", "free", "tc_malloc", "tc_free", "tc_realloc" };
	char prefix[MT_ALLOC_PREFIX_MAX] = "x";

	(void)state;
	assert_true(allocators_find_prefix(shared, N(shared), named("jemalloc"), false, prefix,
					   sizeof(prefix)));
	assert_string_equal(prefix, "");
	/* Debian's libjemalloc.so.2 has no prefixed names at all */
	assert_null(prefix_of(shared, N(shared), "jemalloc"));
	assert_true(allocators_find_prefix(tc, N(tc), named("tcmalloc"), false, prefix,
					   sizeof(prefix)));
	assert_null(prefix_of(tc, N(tc), "tcmalloc"));
	assert_null(prefix_of(tc, N(tc), "jemalloc"));
	/* glibc has no marker: never found by names */
	assert_false(allocators_find_prefix(shared, N(shared), allocators_glibc(), false, prefix,
					    sizeof(prefix)));
}

static void test_look_alikes(void **state)
{
	/* a program's own wrappers: my_mallocx, my_malloc, my_free but none
	 * of the rest of jemalloc's API */
	static const char *const mine[] = { "my_mallocx", "my_malloc", "my_free", "my_calloc" };
	/* one name of the signature missing (no je_dallocx) */
	static const char *const partial[] = { "je_malloc",  "je_calloc",  "je_realloc", "je_free",
					       "je_mallocx", "je_rallocx", "je_sdallocx" };
	/* prefixes no build system makes, or longer than memtop keeps */
	static const char *const odd[] = { JE_API("je.") };
	static const char *const longp[] = { JE_API("a_very_long_prefix_") };
	/* the marker alone, with nothing before it, is not a prefixed build */
	static const char *const bare[] = { "mallocx", "malloc", "free" };

	(void)state;
	assert_null(prefix_of(mine, N(mine), "jemalloc"));
	assert_null(prefix_of(partial, N(partial), "jemalloc"));
	assert_null(prefix_of(odd, N(odd), "jemalloc"));
	assert_null(prefix_of(longp, N(longp), "jemalloc"));
	assert_null(prefix_of(bare, N(bare), "jemalloc"));
	assert_null(prefix_of(NULL, 0, "jemalloc"));
}

static void test_small_buffer(void **state)
{
	static const char *const je[] = { JE_API("je_") };
	char prefix[3];

	(void)state;
	/* "je_" and its NUL do not fit in 3 bytes: not found, never cut */
	assert_false(
		allocators_find_prefix(je, N(je), named("jemalloc"), true, prefix, sizeof(prefix)));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_prefixed_jemalloc),
		cmocka_unit_test(test_unprefixed_builds),
		cmocka_unit_test(test_look_alikes),
		cmocka_unit_test(test_small_buffer),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

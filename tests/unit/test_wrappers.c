// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_wrappers.c - the wrapper-frame table (stacks/wrappers.c) on the
 * demangled names each family really produces: what is machinery, what is
 * the program's own (including look-alikes), --skip on top, and the
 * symbol hint for a frame of a stripped file (stacks/symbol_hint.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "stacks/symbol_hint.h"
#include "stacks/wrappers.h"

static struct mt_frame fr(const char *function, const char *module)
{
	struct mt_frame f = { .function = function, .module = module };

	if (!function)
		f.flags = MT_FRAME_NOSYM;
	return f;
}

static bool machinery(const struct wrappers *w, const char *function, const char *module)
{
	struct mt_frame f = fr(function, module);

	return wrappers_match(w, &f);
}

static void test_families(void **state)
{
	static const char *const yes[][2] = {
		{ "malloc", "libc.so.6" },
		{ "strdup", "libc.so.6" },
		{ "operator new(unsigned long)", "libstdc++.so.6" },
		{ "std::vector<int, std::allocator<int> >::_M_realloc_insert<int const&>(__gnu_cxx::"
		  "__normal_iterator<int*, std::vector<int, std::allocator<int> > >, int const&)",
		  "app" },
		{ "__gnu_cxx::new_allocator<char>::allocate(unsigned long, void const*)", "app" },
		{ "alloc::alloc::alloc", "app" },
		{ "alloc::alloc::exchange_malloc", "app" },
		{ "alloc::raw_vec::RawVec<T,A>::grow_one", "app" },
		{ "alloc::raw_vec::finish_grow", "app" },
		{ "<alloc::vec::Vec<T> as alloc::vec::spec_from_iter::SpecFromIter<T,I>>::from_iter",
		  "app" },
		{ "<T as alloc::vec::spec_from_elem::SpecFromElem>::from_elem", "app" },
		{ "alloc::string::String::push_str", "app" },
		{ "__rust_alloc", "app" },
		{ "__rdl_alloc", "app" },
		{ "hashbrown::raw::RawTable<T,A>::reserve_rehash", "app" },
		{ "hashbrown::map::HashMap<K,V,S,A>::find_or_find_insert_index", "app" },
		{ "hashbrown::rustc_entry::<impl hashbrown::map::HashMap<K,V,S,A>>::rustc_entry",
		  "app" },
		{ "core::fmt::write", "app" },
		{ "<core::fmt::Formatter>::padding", "app" },
		{ "<&T as core::fmt::Display>::fmt", "app" },
		{ "core::iter::traits::iterator::Iterator::collect", "app" },
		{ "core::option::Option<T>::map_or_else", "app" },
		{ "sqlite3Malloc", "app" },
		{ "sqlite3DbMallocRawNN", "app" },
		{ "sqlite3_exec", "libsqlite3.so.0.8.6" },
		{ NULL, "libsqlite3.so.0.8.6" },
		{ "g_malloc0", "libglib-2.0.so.0" },
		{ "g_strdup_printf", "libglib-2.0.so.0" },
		{ "xmalloc", "cc1plus" },
		{ "xstrdup", "make" },
		{ "zmalloc_usable", "redis-server" },
		{ "ztrymalloc_usable_internal", "redis-server" },
		{ "PyMem_Malloc", "libpython3.11.so.1.0" },
		{ "_PyObject_GC_New", "python3.11" },
		{ "PyType_GenericAlloc", "python3.11" },
		{ "node::NodeArrayBufferAllocator::AllocateUninitialized(unsigned long)", "node" },
		{ "mallocx", "libjemalloc.so.2" },
		{ NULL, "libjemalloc.so.2" },
		{ "tc_new", "libtcmalloc.so.4" },
		{ "anything", "libmemtop-sampler.so" },
	};
	static const char *const no[][2] = {
		{ "main", "app" },
		{ "leak_site", "app" },
		{ "my_malloc_stats", "app" },       /* not anchored-equal to malloc */
		{ "allocate_buffer", "app" },       /* not alloc:: */
		{ "zone_malloc_free_list", "app" }, /* not z(malloc|calloc|realloc) */
		{ "createStringObject", "redis-server" },
		{ "run_query", "app" },
		{ NULL, "app" },       /* an unnamed frame of the program */
		{ NULL, "libc.so.6" }, /* unnamed, not in a module rule */
		{ "PyList_Append", "python3.11" },
		{ "tc_connect", "app" },
		{ "mt_rust::format_text", "app" },
		{ "mt_rust::main::{{closure}}", "app" },
		{ "<mt_rust::Cache as core::clone::Clone>::clone", "app" }, /* core:: only for fmt */
		{ "corefile::load", "app" },                                /* not core:: */
	};
	struct wrappers *w = wrappers_new(NULL);
	size_t i;

	assert_non_null(w);
	for (i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
		if (!machinery(w, yes[i][0], yes[i][1]))
			fail_msg("%s in %s should be machinery",
				 yes[i][0] ? yes[i][0] : "(unnamed)", yes[i][1]);
	for (i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		if (machinery(w, no[i][0], no[i][1]))
			fail_msg("%s in %s should be a call site",
				 no[i][0] ? no[i][0] : "(unnamed)", no[i][1]);
	wrappers_free(w);
}

/* The allocator itself, under which an mmap is the heap's own. */
static void test_allocator_frames(void **state)
{
	struct wrappers *w = wrappers_new(NULL);
	struct mt_frame f;

	assert_non_null(w);
	f = fr("malloc", "libc.so.6");
	assert_true(wrappers_is_allocator(w, &f));
	f = fr(NULL, "libjemalloc.so.2");
	assert_true(wrappers_is_allocator(w, &f));
	f = fr("tc_malloc", "libtcmalloc.so.4");
	assert_true(wrappers_is_allocator(w, &f));
	/* jemalloc linked into the program: its je_ namespace, whose extents
	 * an mmap under it maps */
	f = fr("je_extent_alloc_mmap", "mt_jemalloc_static");
	assert_true(wrappers_is_allocator(w, &f));
	f = fr("je_mallocx", "app");
	assert_true(wrappers_is_allocator(w, &f));
	/* the glibc brk helper is a system-call wrapper, not the allocator */
	f = fr("__brk_call", "libc.so.6");
	assert_false(wrappers_is_allocator(w, &f));
	assert_true(wrappers_match(w, &f));
	/* machinery, but not the allocator: an mmap under them is shown */
	f = fr("__libc_start_call_main", "libc.so.6");
	assert_false(wrappers_is_allocator(w, &f));
	f = fr("__mmap64", "libc.so.6");
	assert_false(wrappers_is_allocator(w, &f));
	assert_true(wrappers_match(w, &f));
	f = fr("std::vector<int>::_M_realloc_insert", "app");
	assert_false(wrappers_is_allocator(w, &f));
	f = fr("arena_grow", "app");
	assert_false(wrappers_is_allocator(w, &f));
	assert_false(wrappers_match(w, &f));
	wrappers_free(w);
}

static void test_skip_extends(void **state)
{
	struct wrappers *w = wrappers_new("^(my_pool_alloc|arena_)");

	assert_non_null(w);
	assert_true(machinery(w, "my_pool_alloc", "app"));
	assert_true(machinery(w, "arena_grow", "app"));
	assert_true(machinery(w, "malloc", "libc.so.6"));
	assert_false(machinery(w, "main", "app"));
	wrappers_free(w);
	assert_null(wrappers_new("(unclosed"));
}

/* pymalloc's arena mapping is a pool's, by name where the interpreter has
 * symbols and by module where it is stripped (Debian's python3.11); pool
 * rules are no machinery, and name nothing else. */
static void test_pools(void **state)
{
	static const char *const pool[][2] = {
		{ "_PyObject_ArenaMmap", "libpython3.11.so.1.0" },
		{ "new_arena", "python3.11" },
		{ NULL, "python3.11" },
		{ NULL, "libpython3.12.so.1.0" },
	};
	static const char *const not_pool[][2] = {
		{ "PyUnicode_New", "python3.11" },
		{ NULL, "python3.11-config" },
		{ NULL, "mmap.cpython-311-x86_64-linux-gnu.so" },
		{ NULL, "app" },
		{ "mmap", "libc.so.6" },
	};
	struct wrappers *w = wrappers_new(NULL);
	size_t i;

	(void)state;
	assert_non_null(w);
	for (i = 0; i < sizeof(pool) / sizeof(pool[0]); i++) {
		struct mt_frame f = fr(pool[i][0], pool[i][1]);
		const char *name = wrappers_pool(w, &f);

		assert_non_null(name);
		assert_string_equal(name, "pymalloc arenas");
	}
	for (i = 0; i < sizeof(not_pool) / sizeof(not_pool[0]); i++) {
		struct mt_frame f = fr(not_pool[i][0], not_pool[i][1]);

		assert_null(wrappers_pool(w, &f));
	}
	assert_false(machinery(w, NULL, "python3.11"));
	assert_false(machinery(w, "_PyObject_ArenaMmap", "libpython3.11.so.1.0"));
	wrappers_free(w);
}

static void test_table_documented(void **state)
{
	const struct wrapper_rule *r;
	size_t n = wrappers_table(&r), i;

	assert_true(n > 10);
	for (i = 0; i < n; i++) {
		assert_non_null(r[i].family);
		assert_true(r[i].function || r[i].module);
	}
}

static void test_symbol_hint(void **state)
{
	char buf[512];
	struct mt_frame named = fr("main", "app");

	symbol_hint_format("libsqlite3.so.0", "libsqlite3-0",
			   "5221b80bd99650e3e55370b0e24f4b4dbe81264f", "/usr/lib/debug", buf,
			   sizeof(buf));
	assert_non_null(strstr(buf, "libsqlite3-0-dbgsym"));
	assert_non_null(strstr(
		buf, "/usr/lib/debug/.build-id/52/21b80bd99650e3e55370b0e24f4b4dbe81264f.debug"));
	symbol_hint_format("app", NULL, NULL, "/usr/lib/debug", buf, sizeof(buf));
	assert_non_null(strstr(buf, "debug symbols"));
	assert_null(strstr(buf, ".build-id"));
	assert_false(symbol_hint(&named, buf, sizeof(buf)));
	assert_string_equal(buf, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_families),     cmocka_unit_test(test_allocator_frames),
		cmocka_unit_test(test_skip_extends), cmocka_unit_test(test_table_documented),
		cmocka_unit_test(test_symbol_hint),  cmocka_unit_test(test_pools),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

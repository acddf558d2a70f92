// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_symbolize.c - the symbolizer on this test binary (built -O2 -g):
 * noinline functions, return addresses, an inlined call chain, each with
 * the function name and source file:line; anonymous, unmapped and
 * symbol-less addresses; stripped copies resolved through .gnu_debuglink
 * and build-ID debug files made at test time with objcopy; C++ names
 * through the demangler.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "stacks/debuginfo.h"
#include "stacks/demangle.h"
#include "util/strpool.h"
#include "stacks/symbolize.h"

/* Each function sits on one line, so that line is both where it starts
 * and where its call happens. */
/* clang-format off */
static const int leaf_line = __LINE__ + 1;
__attribute__((noinline)) void *sym_test_leaf(void) { void *ra = __builtin_return_address(0); __asm__ volatile("" : "+r"(ra) :: "memory"); return ra; }

static const int caller_line = __LINE__ + 1;
__attribute__((noinline)) void *sym_test_caller(void) { void *ra = sym_test_leaf(); __asm__ volatile("" : "+r"(ra) :: "memory"); return ra; }

static const int inl_line = __LINE__ + 1;
static inline __attribute__((always_inline)) void *sym_test_inl(void) { void *ra = sym_test_leaf(); __asm__ volatile("" : "+r"(ra) :: "memory"); return ra; }

static const int outer_line = __LINE__ + 1;
__attribute__((noinline)) void *sym_test_outer(void) { void *ra = sym_test_inl(); __asm__ volatile("" : "+r"(ra) :: "memory"); return ra; }
/* clang-format on */

static struct proc_cache *pc;
static struct symbolizer *sym;

static int setup(void **state)
{
	pc = proc_cache_new();
	sym = pc ? symbolizer_new(pc) : NULL;
	return sym ? 0 : -1;
}

static int teardown(void **state)
{
	symbolizer_free(sym);
	proc_cache_free(pc);
	return 0;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = s ? strlen(s) : 0, b = strlen(suffix);

	return s && a >= b && !strcmp(s + a - b, suffix);
}

static const char *self_base(void)
{
	static char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	assert_true(n > 0);
	exe[n] = '\0';
	return strrchr(exe, '/') + 1;
}

static void test_function_address(void **state)
{
	__u64 addr = (__u64)(unsigned long)&sym_test_leaf;
	struct mt_frame f[4];
	int n = symbolizer_resolve(sym, getpid(), addr, false, f, 4);

	assert_int_equal(n, 1);
	assert_string_equal(f[0].function, "sym_test_leaf");
	assert_true(ends_with(f[0].file, "tests/unit/test_symbolize.c"));
	assert_int_equal(f[0].line, leaf_line);
	assert_int_equal(f[0].flags, 0);
	assert_int_equal(f[0].addr, addr);
	assert_string_equal(f[0].module, self_base());
	assert_non_null(f[0].module_path);
	assert_non_null(f[0].build_id);
	/* Interned: equal strings are the same pointer. */
	assert_ptr_equal(f[0].function, strpool_intern("sym_test_leaf"));
	/* rel_addr is the file offset: the file holds the function's bytes there. */
	{
		struct elf_file *ef = elf_file_open("/proc/self/exe");
		unsigned char code[8];

		assert_non_null(ef);
		assert_int_equal(elf_file_read(ef, f[0].rel_addr, code, sizeof(code)), 0);
		assert_memory_equal(code, (const void *)(unsigned long)addr, sizeof(code));
		elf_file_close(ef);
	}
}

static void test_return_address(void **state)
{
	__u64 ra = (__u64)(unsigned long)sym_test_caller();
	struct mt_frame f[4], g[4];
	int n = symbolizer_resolve(sym, getpid(), ra, true, f, 4);

	assert_int_equal(n, 1);
	assert_string_equal(f[0].function, "sym_test_caller");
	assert_true(ends_with(f[0].file, "tests/unit/test_symbolize.c"));
	assert_int_equal(f[0].line, caller_line);
	assert_int_equal(f[0].addr, ra);
	/* Again, from the cache: same answer, same pointers. */
	assert_int_equal(symbolizer_resolve(sym, getpid(), ra, true, g, 4), 1);
	assert_memory_equal(f, g, sizeof(f[0]));
}

static void test_inlined(void **state)
{
	__u64 ra = (__u64)(unsigned long)sym_test_outer();
	struct mt_frame f[4];
	int n = symbolizer_resolve(sym, getpid(), ra, true, f, 4);

	assert_int_equal(n, 2);
	assert_string_equal(f[0].function, "sym_test_inl");
	assert_int_equal(f[0].line, inl_line);
	assert_int_equal(f[0].flags, MT_FRAME_INLINED);
	assert_string_equal(f[1].function, "sym_test_outer");
	assert_int_equal(f[1].line, outer_line);
	assert_int_equal(f[1].flags, 0);
	assert_true(ends_with(f[1].file, "tests/unit/test_symbolize.c"));
	assert_int_equal(f[0].addr, f[1].addr);
	/* With room for one frame, the real function is kept. */
	assert_int_equal(symbolizer_resolve(sym, getpid(), ra, true, f, 1), 1);
	assert_string_equal(f[0].function, "sym_test_outer");
	assert_int_equal(symbolizer_resolve(sym, getpid(), ra, true, f, 0), 0);
}

static void test_libc(void **state)
{
	/* libc's own malloc (not an interposer such as a sanitizer's). */
	void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	__u64 addr = (__u64)(unsigned long)dlsym(libc, "malloc");
	struct mt_frame f[8];
	int n = symbolizer_resolve(sym, getpid(), addr, false, f, 8);

	assert_non_null(libc);
	dlclose(libc);

	assert_true(n >= 1);
	assert_string_equal(f[n - 1].function, "malloc");
	assert_non_null(strstr(f[n - 1].module, "libc"));
}

/* Resolve addr in this process until its mapping is known, at most 5 s: a
 * wait on the maps cache's re-read pause, not a fixed sleep past it. */
static int resolve_fresh(struct symbolizer *s, __u64 addr, struct mt_frame *f, int n)
{
	struct timespec t0, now, pause = { 0, 1000000 };
	int k;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		k = symbolizer_resolve(s, getpid(), addr, false, f, n);
		clock_gettime(CLOCK_MONOTONIC, &now);
		if ((k >= 1 && !(f[0].flags & MT_FRAME_UNMAPPED)) || now.tv_sec - t0.tv_sec >= 5)
			return k;
		nanosleep(&pause, NULL);
	}
}

static void test_anon_and_unmapped(void **state)
{
	struct mt_frame f[2];
	void *x = mmap(NULL, 8192, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	void *d = mmap(NULL, 8192, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	assert_true(x != MAP_FAILED && d != MAP_FAILED);
	assert_int_equal(resolve_fresh(sym, (__u64)(unsigned long)x + 100, f, 2), 1);
	assert_string_equal(f[0].module, "[jit]");
	assert_int_equal(f[0].flags, MT_FRAME_ANON);
	assert_null(f[0].function);
	assert_int_equal(f[0].rel_addr, 100);
	assert_int_equal(resolve_fresh(sym, (__u64)(unsigned long)d + 8, f, 2), 1);
	assert_string_equal(f[0].module, "[anon]");
	assert_int_equal(f[0].flags, MT_FRAME_ANON);
	assert_int_equal(symbolizer_resolve(sym, getpid(), 16, false, f, 2), 1);
	assert_string_equal(f[0].module, "[unknown]");
	assert_int_equal(f[0].flags, MT_FRAME_UNMAPPED);
	assert_null(f[0].function);
	/* A process that does not exist. */
	assert_int_equal(symbolizer_resolve(sym, 0x3ffffffe, 0x400000, true, f, 2), 1);
	assert_int_equal(f[0].flags, MT_FRAME_UNMAPPED);
	munmap(x, 8192);
	munmap(d, 8192);
}

/* The ELF header of this binary is mapped but in no function. */
static void test_no_symbol(void **state)
{
	struct mt_maps maps;
	struct mt_frame f[2];
	const struct mt_map *m = NULL;
	char exe[PATH_MAX];
	ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	assert_true(len > 0);
	exe[len] = '\0';
	assert_int_equal(proc_maps_read(getpid(), &maps), 0);
	for (size_t i = 0; i < maps.n && !m; i++) {
		if (maps.v[i].path && !strcmp(maps.v[i].path, exe) && !maps.v[i].offset)
			m = &maps.v[i];
	}
	assert_non_null(m);
	assert_int_equal(symbolizer_resolve(sym, getpid(), m->start + 0x10, false, f, 2), 1);
	assert_null(f[0].function);
	assert_int_equal(f[0].flags, MT_FRAME_NOSYM);
	assert_int_equal(f[0].rel_addr, 0x10);
	assert_string_equal(f[0].module, self_base());
	proc_maps_free(&maps);
}

static void test_demangle(void **state)
{
	assert_string_equal(demangle_name("_ZN2ns3fooEi"), "ns::foo(int)");
	assert_string_equal(demangle_name("_ZNSt6vectorIiSaIiEE9push_backERKi"),
			    "std::vector<int, std::allocator<int> >::push_back(int const&)");
	assert_string_equal(demangle_name("_ZN3Foo3barEv.isra.0"), "Foo::bar() [clone .isra.0]");
	assert_string_equal(demangle_name("_Znwm"), "operator new(unsigned long)");
	assert_ptr_equal(demangle_name("malloc"), strpool_intern("malloc"));
	assert_string_equal(demangle_name("_Zgarbage"), "_Zgarbage");
	assert_string_equal(demangle_name("__libc_malloc"), "__libc_malloc");
	assert_null(demangle_name(NULL));
}

/* ==== Separate debug files (needs objcopy, as binutils ships it) ==== */

struct stripped {
	char dir[64];
	char bin[96];
	void *map;
	size_t size;
};

static int run(const char *cmd)
{
	int rc = system(cmd);

	return rc == 0 ? 0 : -1;
}

/* Map file read-only; the address of file offset off is map + off. */
static void *map_file(const char *path, size_t *size)
{
	struct stat st;
	int fd = open(path, O_RDONLY);
	void *p;

	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	assert_true(p != MAP_FAILED);
	*size = (size_t)st.st_size;
	return p;
}

/* Resolve sym_test_leaf inside the mapped copy. */
static int resolve_leaf_in(struct symbolizer *s, void *map, struct mt_frame *f)
{
	struct elf_file *self = elf_file_open("/proc/self/exe");
	__u64 off, size;

	assert_non_null(self);
	assert_int_equal(elf_file_func_offset(self, "sym_test_leaf", &off, &size), 0);
	elf_file_close(self);
	return resolve_fresh(s, (__u64)(unsigned long)map + off, f, 2);
}

static void test_debuglink(void **state)
{
	char cmd[512], dir[] = "/tmp/memtop-sym-XXXXXX";
	struct mt_frame f[2];
	size_t size;
	void *map;
	int n;

	if (run("objcopy --version >/dev/null 2>&1"))
		skip();
	assert_non_null(mkdtemp(dir));
	/* Debug file in DIR/.debug/, binary stripped with a debuglink to it. */
	snprintf(cmd, sizeof(cmd),
		 "mkdir %1$s/.debug && objcopy --only-keep-debug /proc/%2$d/exe %1$s/.debug/prog.debug && "
		 "cd %1$s/.debug && objcopy --strip-all --add-gnu-debuglink=prog.debug /proc/%2$d/exe ../prog",
		 dir, (int)getpid());
	assert_int_equal(run(cmd), 0);
	snprintf(cmd, sizeof(cmd), "%s/prog", dir);
	map = map_file(cmd, &size);
	n = resolve_leaf_in(sym, map, f);
	assert_int_equal(n, 1);
	assert_string_equal(f[0].function, "sym_test_leaf");
	assert_int_equal(f[0].line, leaf_line);
	assert_string_equal(f[0].module, "prog");
	munmap(map, size);

	/* The same stripped binary without its debug file: module+offset. */
	snprintf(cmd, sizeof(cmd), "rm %1$s/.debug/prog.debug && cp %1$s/prog %1$s/prog2", dir);
	assert_int_equal(run(cmd), 0);
	snprintf(cmd, sizeof(cmd), "%s/prog2", dir);
	/* prog2 may land where prog was: drop the cached maps. */
	proc_cache_forget(pc, getpid());
	map = map_file(cmd, &size);
	n = resolve_leaf_in(sym, map, f);
	assert_int_equal(n, 1);
	assert_null(f[0].function);
	assert_int_equal(f[0].flags, MT_FRAME_NOSYM);
	assert_string_equal(f[0].module, "prog2");
	munmap(map, size);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	run(cmd);
}

static void test_build_id_dir(void **state)
{
	struct elf_file *self = elf_file_open("/proc/self/exe");
	char cmd[768], dir[] = "/tmp/memtop-bid-XXXXXX";
	struct symbolizer *s2;
	struct mt_frame f[2];
	const char *bid;
	size_t size;
	void *map;

	if (run("objcopy --version >/dev/null 2>&1"))
		skip();
	assert_non_null(self);
	bid = elf_file_build_id(self);
	assert_non_null(bid);
	assert_non_null(mkdtemp(dir));
	snprintf(cmd, sizeof(cmd),
		 "mkdir -p %1$s/debug/.build-id/%3$.2s && "
		 "objcopy --only-keep-debug /proc/%2$d/exe %1$s/debug/.build-id/%3$.2s/%4$s.debug && "
		 "objcopy --strip-all /proc/%2$d/exe %1$s/prog",
		 dir, (int)getpid(), bid, bid + 2);
	assert_int_equal(run(cmd), 0);
	snprintf(cmd, sizeof(cmd), "%s/debug", dir);
	assert_int_equal(debuginfo_set_debug_dir(cmd), 0);
	s2 = symbolizer_new(pc);
	assert_non_null(s2);
	snprintf(cmd, sizeof(cmd), "%s/prog", dir);
	map = map_file(cmd, &size);
	assert_int_equal(resolve_leaf_in(s2, map, f), 1);
	assert_string_equal(f[0].function, "sym_test_leaf");
	assert_int_equal(f[0].line, leaf_line);
	assert_string_equal(f[0].build_id, bid);
	munmap(map, size);
	symbolizer_free(s2);
	debuginfo_set_debug_dir(NULL);
	elf_file_close(self);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	run(cmd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_function_address),  cmocka_unit_test(test_return_address),
		cmocka_unit_test(test_inlined),           cmocka_unit_test(test_libc),
		cmocka_unit_test(test_anon_and_unmapped), cmocka_unit_test(test_no_symbol),
		cmocka_unit_test(test_demangle),          cmocka_unit_test(test_debuglink),
		cmocka_unit_test(test_build_id_dir),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}

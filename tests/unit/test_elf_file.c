// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_elf_file.c - elf_file on real files (this test binary, the libc it
 * runs with) checked against values computed independently from the
 * running process (dladdr, /proc/self/maps, the bytes in memory), and on
 * corrupt files built at test time from a copy of this binary.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "readers/elf_file.h"
#include "util/safe_open.h"
#include "readers/proc_maps.h"

__attribute__((noinline)) int elf_test_target(int x)
{
	__asm__ volatile("" ::: "memory");
	return x * 3 + 1;
}

/* File offset of runtime address addr in this process, from /proc/self/maps. */
static __u64 self_file_offset(__u64 addr, const char **path)
{
	struct mt_maps maps;
	const struct mt_map *m;
	__u64 off;

	assert_int_equal(proc_maps_read(getpid(), &maps), 0);
	m = proc_maps_find(&maps, addr);
	assert_non_null(m);
	assert_non_null(m->path);
	off = m->offset + (addr - m->start);
	if (path)
		*path = m->path;
	proc_maps_free(&maps);
	return off;
}

static void test_self_exe(void **state)
{
	struct elf_file *ef = elf_file_open("/proc/self/exe");
	__u64 off, size, vaddr, back, hdr, hdr_size;
	__u64 addr = (__u64)(unsigned long)&elf_test_target;
	unsigned char want[16], got[16];
	const char *bid;

	assert_non_null(ef);
	assert_true(elf_file_is_dynamic(ef));
	assert_int_equal(elf_file_func_offset(ef, "elf_test_target", &off, &size), 0);
	assert_int_equal(off, self_file_offset(addr, NULL));
	assert_true(size > 0);
	/* The bytes the file holds there are the code being run. */
	assert_int_equal(elf_file_read(ef, off, got, sizeof(got)), 0);
	memcpy(want, (const void *)(unsigned long)addr, sizeof(want));
	assert_memory_equal(got, want, sizeof(want));
	/* offset <-> vaddr round trip, and reading through the vaddr. */
	assert_int_equal(elf_file_off_to_vaddr(ef, off, &vaddr), 0);
	assert_int_equal(elf_file_vaddr_to_off(ef, vaddr, &back), 0);
	assert_int_equal(back, off);
	memset(got, 0, sizeof(got));
	assert_int_equal(elf_file_read_vaddr(ef, vaddr, got, sizeof(got)), 0);
	assert_memory_equal(got, want, sizeof(want));
	/* The symbol table names the function at any byte inside it. */
	{
		const char *name;
		__u64 start;

		assert_int_equal(elf_file_symbol_at(ef, vaddr + 3, &name, &start), 0);
		assert_string_equal(name, "elf_test_target");
		assert_int_equal(start, vaddr);
	}
	bid = elf_file_build_id(ef);
	assert_non_null(bid);
	assert_true(strlen(bid) >= 16 && strlen(bid) % 2 == 0);
	assert_int_equal(strspn(bid, "0123456789abcdef"), strlen(bid));
	assert_int_equal(elf_file_eh_frame_hdr(ef, &hdr, &hdr_size), 0);
	assert_true(hdr_size > 8);
	assert_true(elf_file_has_symtab(ef));
	assert_true(elf_file_has_dwarf(ef));
	assert_int_equal(elf_file_func_offset(ef, "no_such_function_xyz", &off, &size), -ENOENT);
	assert_int_equal(elf_file_read(ef, elf_file_id(ef)->size - 4, got, 8), -EINVAL);
	assert_int_equal(elf_file_read(ef, ~0ULL - 2, got, 8), -EINVAL);
	assert_int_equal(elf_file_read_vaddr(ef, ~0ULL - 2, got, 8), -EFAULT);
	elf_file_close(ef);
}

static void test_libc_malloc(void **state)
{
	void *sym = dlsym(RTLD_DEFAULT, "malloc");
	const char *map_path;
	struct elf_file *ef;
	unsigned char got[16];
	Dl_info info;
	__u64 off, size, want;

	assert_non_null(sym);
	assert_true(dladdr(sym, &info));
	want = self_file_offset((__u64)(unsigned long)sym, &map_path);
	ef = elf_file_open(map_path);
	assert_non_null(ef);
	assert_true(elf_file_is_dyn(ef));
	assert_true(elf_file_is_dynamic(ef));
	assert_int_equal(elf_file_func_offset(ef, "malloc", &off, &size), 0);
	assert_int_equal(off, want);
	assert_true(size > 0);
	/* dladdr's object base gives the same answer through the vaddr. */
	{
		__u64 vaddr;

		assert_int_equal(elf_file_off_to_vaddr(ef, off, &vaddr), 0);
		assert_int_equal(vaddr, (__u64)((char *)sym - (char *)info.dli_fbase));
	}
	assert_int_equal(elf_file_read(ef, off, got, sizeof(got)), 0);
	assert_memory_equal(got, sym, sizeof(got));
	/* free too: the attach code needs both. */
	assert_int_equal(elf_file_func_offset(ef, "free", &off, &size), 0);
	assert_int_equal(off,
			 self_file_offset((__u64)(unsigned long)dlsym(RTLD_DEFAULT, "free"), NULL));
	assert_non_null(elf_file_build_id(ef));
	elf_file_close(ef);
}

static void test_refcount(void **state)
{
	struct elf_file *ef = elf_file_open("/proc/self/exe");

	assert_non_null(ef);
	assert_ptr_equal(elf_file_ref(ef), ef);
	elf_file_close(ef);
	/* Still usable after one of two references is dropped. */
	assert_non_null(elf_file_build_id(ef));
	elf_file_close(ef);
}

/* ==== Corrupt files ==== */

struct blob {
	unsigned char *p;
	size_t n;
};

static struct blob self_copy(void)
{
	struct elf_file *ef = elf_file_open("/proc/self/exe");
	struct blob b;

	assert_non_null(ef);
	b.n = elf_file_id(ef)->size;
	b.p = malloc(b.n);
	assert_non_null(b.p);
	assert_int_equal(elf_file_read(ef, 0, b.p, b.n), 0);
	elf_file_close(ef);
	return b;
}

/* Write n bytes to a fresh temporary file; returns its path (static). */
static const char *write_tmp(const void *p, size_t n)
{
	static char path[64];
	int fd;

	snprintf(path, sizeof(path), "/tmp/memtop-elf-XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, p, n), (ssize_t)n);
	close(fd);
	return path;
}

static void expect_enoexec(const void *p, size_t n)
{
	const char *path = write_tmp(p, n);
	struct elf_file *ef;

	errno = 0;
	ef = elf_file_open(path);
	unlink(path);
	assert_null(ef);
	assert_int_equal(errno, ENOEXEC);
}

static void test_not_elf(void **state)
{
	static const char text[] = "#!/bin/sh\necho not an ELF file\n";

	errno = 0;
	assert_null(elf_file_open("/nonexistent/memtop/file"));
	assert_int_equal(errno, ENOENT);
	expect_enoexec(text, sizeof(text));
	expect_enoexec("", 0);
	/* not a regular file: refused before it is opened (util/safe_open.h) */
	errno = 0;
	assert_null(elf_file_open("/tmp"));
	assert_int_equal(errno, SAFE_OPEN_ENOTREG);
	errno = 0;
	assert_null(elf_file_open("/dev/null"));
	assert_int_equal(errno, SAFE_OPEN_ENOTREG);
}

static void test_truncated(void **state)
{
	struct blob b = self_copy();
	const size_t cuts[] = { 4, 16, 63, 64, 200, 4096, b.n / 2, b.n - 1 };

	for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++)
		expect_enoexec(b.p, cuts[i]);
	free(b.p);
}

static void test_bogus_section_headers(void **state)
{
	struct blob b = self_copy();
	Elf64_Ehdr *eh = (Elf64_Ehdr *)b.p;
	Elf64_Ehdr saved = *eh;
	Elf64_Shdr *sh;

	assert_int_equal(eh->e_ident[EI_CLASS], ELFCLASS64);
	/* Section header table past the end of the file. */
	eh->e_shoff = b.n + 4096;
	expect_enoexec(b.p, b.n);
	eh->e_shoff = ~0ULL - 100;
	expect_enoexec(b.p, b.n);
	*eh = saved;
	/* Absurd section count. */
	eh->e_shnum = 0xfff0;
	expect_enoexec(b.p, b.n);
	*eh = saved;
	/* Section string table index out of range. */
	eh->e_shstrndx = (Elf64_Half)(eh->e_shnum + 5);
	expect_enoexec(b.p, b.n);
	*eh = saved;
	/* One section whose data lies past the end of the file. */
	sh = (Elf64_Shdr *)(b.p + eh->e_shoff);
	for (int i = 1; i < eh->e_shnum; i++) {
		if (sh[i].sh_type == SHT_PROGBITS) {
			sh[i].sh_offset = b.n * 4;
			break;
		}
	}
	expect_enoexec(b.p, b.n);
	free(b.p);
}

/* Random byte damage in the headers: open may fail or succeed, but no
 * call may crash or read out of bounds. */
static void test_fuzzed_headers(void **state)
{
	struct blob b = self_copy();
	Elf64_Ehdr *eh = (Elf64_Ehdr *)b.p;
	size_t shoff = eh->e_shoff, shsize = (size_t)eh->e_shnum * eh->e_shentsize;
	unsigned char *copy = malloc(b.n);
	unsigned int seed = 12345;
	int opened = 0;

	assert_non_null(copy);
	for (int iter = 0; iter < 150; iter++) {
		struct elf_file *ef;
		const char *path, *name;
		__u64 off, size, start;
		__u32 crc;
		unsigned char buf[32];

		memcpy(copy, b.p, b.n);
		for (int k = 0; k < 8; k++) {
			size_t at = rand_r(&seed) % 3 ? (size_t)rand_r(&seed) % 1024
						      : shoff + (size_t)rand_r(&seed) % shsize;

			copy[at] = (unsigned char)rand_r(&seed);
		}
		path = write_tmp(copy, b.n);
		ef = elf_file_open(path);
		unlink(path);
		if (!ef)
			continue;
		opened++;
		elf_file_func_offset(ef, "elf_test_target", &off, &size);
		elf_file_func_offset(ef, "malloc", &off, &size);
		for (__u64 a = 0; a < 0x10000; a += 0x123)
			elf_file_symbol_at(ef, a, &name, &start);
		elf_file_build_id(ef);
		elf_file_debuglink(ef, &name, &crc);
		elf_file_read_vaddr(ef, 0x1000, buf, sizeof(buf));
		elf_file_eh_frame_hdr(ef, &off, &size);
		elf_file_close(ef);
	}
	/* Some damage is harmless (padding, unused fields): both outcomes seen. */
	assert_true(opened > 0);
	free(copy);
	free(b.p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_self_exe),       cmocka_unit_test(test_libc_malloc),
		cmocka_unit_test(test_refcount),       cmocka_unit_test(test_not_elf),
		cmocka_unit_test(test_truncated),      cmocka_unit_test(test_bogus_section_headers),
		cmocka_unit_test(test_fuzzed_headers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

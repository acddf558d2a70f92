// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_inject_got_relro.c - the RELRO pages of a loaded object read from
 * its program headers in memory (probe/inject_got.h inject_got_relro),
 * which decide the only pages an injection ever makes writable: for every
 * object of this process, against what the loader itself reports
 * (dl_iterate_phdr); and refused, not guessed, for a base that holds no
 * ELF header, one with an absurd program-header count, or base 0.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "probe/inject_got.h"

struct expect {
	int fd;
	int checked, with_relro;
};

static int each_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct expect *x = arg;
	__u64 lo = 1, hi = 0, want_lo, want_hi;
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)info->dlpi_addr;
	int i;

	(void)size;
	if (!info->dlpi_addr || memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_type != ET_DYN)
		return 0; /* a non-PIE executable, the vDSO's own layout aside */
	want_lo = want_hi = info->dlpi_addr;
	for (i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_GNU_RELRO) {
			__u64 start = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;

			want_lo = start & ~4095ULL;
			want_hi = (start + info->dlpi_phdr[i].p_memsz) & ~4095ULL;
			x->with_relro++;
		}
	assert_int_equal(inject_got_relro(x->fd, info->dlpi_addr, &lo, &hi), 0);
	assert_int_equal(lo, want_lo);
	assert_int_equal(hi, want_hi);
	x->checked++;
	return 0;
}

static void test_every_loaded_object(void **state)
{
	struct expect x = { .fd = open("/proc/self/mem", O_RDONLY | O_CLOEXEC) };

	(void)state;
	assert_true(x.fd >= 0);
	dl_iterate_phdr(each_object, &x);
	close(x.fd);
	/* libc, libcmocka, the loader at least; Debian builds them with RELRO */
	assert_true(x.checked >= 3);
	assert_true(x.with_relro >= 3);
}

static void test_no_header_is_unknown(void **state)
{
	int fd = open("/proc/self/mem", O_RDONLY | O_CLOEXEC);
	unsigned char *page = aligned_alloc(4096, 8192);
	Elf64_Ehdr *eh = (Elf64_Ehdr *)page;
	__u64 lo, hi;

	(void)state;
	assert_true(fd >= 0 && page);
	memset(page, 0x5a, 8192);
	assert_int_equal(inject_got_relro(fd, (uintptr_t)page, &lo, &hi), -ENOENT);
	assert_int_equal(inject_got_relro(fd, 0, &lo, &hi), -ENOENT);
	/* a header that claims too many program headers, or ones past its page */
	memset(page, 0, 8192);
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_type = ET_DYN;
	eh->e_phentsize = sizeof(Elf64_Phdr);
	eh->e_phoff = sizeof(*eh);
	eh->e_phnum = 60000;
	assert_int_equal(inject_got_relro(fd, (uintptr_t)page, &lo, &hi), -ENOENT);
	eh->e_phnum = 1;
	eh->e_phoff = 1 << 20;
	assert_int_equal(inject_got_relro(fd, (uintptr_t)page, &lo, &hi), -ENOENT);
	/* a well-formed one without PT_GNU_RELRO: known, and empty */
	eh->e_phoff = sizeof(*eh);
	((Elf64_Phdr *)(page + sizeof(*eh)))->p_type = PT_LOAD;
	assert_int_equal(inject_got_relro(fd, (uintptr_t)page, &lo, &hi), 0);
	assert_int_equal(lo, hi);
	free(page);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_loaded_object),
		cmocka_unit_test(test_no_header_is_unknown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * fuzz_elf.c - libFuzzer harness for the ELF reader (src/readers/elf_file.c),
 * the SDT note reader on top of it (src/probe/usdt.c) and, for files that
 * carry DWARF, the line reader (src/stacks/dwarf_lines.c): the files a target maps are the target's
 * to shape. The input is the whole file, opened through a memfd (a
 * regular file, as elf_file_open_fd requires). Every query the
 * symbolizer, the unwinder and the probe code make is asked, at addresses
 * taken from the file itself (its symbols, segments, eh_frame_hdr) and
 * from its last eight bytes; results are checked against the contract:
 * strings terminated, a symbol's start at or below the address asked,
 * reads inside the file succeed and reads past its end fail.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "probe/usdt.h"
#include "stacks/dwarf_lines.h"
#include "readers/elf_file.h"

/* keeps the strlen() of each returned string from being optimized away */
static volatile size_t sink;

/* Allocator entry points, and the functions of the tiny seeds (make-seeds):
 * their addresses lead the queries into the symbol table and the DWARF. */
static const char *const funcs[] = { "malloc", "free", "calloc", "realloc", "main",
				     "_start", "leaf", "mid",    "entry",   "uses_inline" };

static void query(struct elf_file *ef, struct dwarf_lines *dl, __u64 vaddr)
{
	struct dwarf_frame fr[8];
	const char *name;
	__u64 start, off, back;
	__u8 buf[64];

	if (!elf_file_symbol_at(ef, vaddr, &name, &start) && (start > vaddr || !name))
		abort();
	if (!elf_file_symbol_at(ef, vaddr, &name, &start))
		sink += strlen(name);
	if (!elf_file_vaddr_to_off(ef, vaddr, &off)) {
		elf_file_read(ef, off, buf, sizeof(buf));
		elf_file_off_to_vaddr(ef, off, &back);
	}
	elf_file_read_vaddr(ef, vaddr, buf, sizeof(buf));
	elf_file_read_vaddr(ef, vaddr, buf, 1);
	if (dl) {
		int n = dwarf_lines_lookup(dl, vaddr, fr, 8);

		if (n < 0 || n > 8)
			abort();
		for (int i = 0; i < n; i++)
			if (fr[i].file)
				sink += strlen(fr[i].file);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dwarf_lines *dl = NULL;
	struct elf_file *ef;
	const char *s;
	__u64 a, b, tail = 0;
	__u32 crc;
	int fd = memfd_create("fuzz_elf", MFD_CLOEXEC);
	__u8 buf[16];

	if (fd < 0)
		abort();
	if (size && write(fd, data, size) != (ssize_t)size)
		abort();
	ef = elf_file_open_fd(fd, "fuzz.elf");
	if (!ef)
		return 0;
	if (size >= 8)
		memcpy(&tail, data + size - 8, 8);

	s = elf_file_build_id(ef);
	if (s && strspn(s, "0123456789abcdef") != strlen(s))
		abort();
	if (!elf_file_debuglink(ef, &s, &crc))
		sink += strlen(s);
	elf_file_crc32(ef);
	elf_file_is_dyn(ef);
	elf_file_is_dynamic(ef);
	elf_file_has_symtab(ef);
	usdt_has_probe(ef, "otel_memory", "alloc");
	if (elf_file_read(ef, 0, buf, sizeof(buf)) && size >= sizeof(buf))
		abort();
	if (!elf_file_read(ef, size, buf, 1) || !elf_file_read(ef, ~0ULL, buf, 2))
		abort();
	if (elf_file_has_dwarf(ef))
		dl = dwarf_lines_open(ef, getpid());

	query(ef, dl, 0);
	query(ef, dl, tail);
	if (!elf_file_eh_frame_hdr(ef, &a, &b)) {
		query(ef, dl, a);
		query(ef, dl, a + b);
	}
	for (size_t i = 0; i < sizeof(funcs) / sizeof(funcs[0]); i++) {
		if (elf_file_func_offset(ef, funcs[i], &a, &b))
			continue;
		elf_file_read(ef, a, buf, sizeof(buf));
		if (!elf_file_off_to_vaddr(ef, a, &b)) {
			query(ef, dl, b);
			query(ef, dl, b + 5);
		}
	}
	elf_file_load_bias(ef, 0x7f0000000000ULL, 0, &a);
	elf_file_load_bias(ef, 0x7f0000001000ULL, 0x1000, &a);
	elf_file_load_bias(ef, 0x7f0000000000ULL, tail, &a);
	dwarf_lines_close(dl);
	elf_file_close(ef);
	return 0;
}

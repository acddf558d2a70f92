// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_x86_decode_capstone.c - memtop's x86-64 length decoder
 * (probe/probe_place.c, probe_insn_decode) cross-checked against Capstone,
 * a maintained disassembler Debian packages, over every function of whole
 * system libraries: each function is swept linearly from its symbol value
 * to its size, and at every instruction both decoders must agree on the
 * length. A function is left at the first instruction Capstone does not
 * know (its 4.0 tables miss some recent extensions) or memtop's decoder
 * declines (-ENOTSUP), and both cases are counted and bounded, so the
 * cross-check covers nearly all of each library's code.
 *
 * The probe chooser reads only the first instructions of allocator entry
 * points, but a wrong length anywhere in its walk would misplace a
 * breakpoint inside an instruction: that is what this test rules out.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <capstone/capstone.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "probe/probe_place.h"

struct sweep {
	unsigned long functions;  /* swept (size > 0, inside a PROGBITS section) */
	unsigned long insns;      /* instructions both decoders agreed on */
	unsigned long cs_unknown; /* sweeps stopped: Capstone did not decode */
	unsigned long mt_unknown; /* sweeps stopped: memtop's decoder declined */
	unsigned long mismatches; /* lengths that differ: must stay 0 */
	char first_mismatch[256];
};

/* Sweep one function's bytes with both decoders. */
static void sweep_function(csh cs, const __u8 *code, size_t size, __u64 addr, const char *name,
			   struct sweep *s)
{
	cs_insn *insn = cs_malloc(cs);
	size_t off = 0;

	while (off < size) {
		const uint8_t *p = code + off;
		size_t left = size - off;
		uint64_t a = addr + off;
		struct probe_insn in;
		int r = probe_insn_decode(code + off, size - off, &in);

		if (!cs_disasm_iter(cs, &p, &left, &a, insn)) {
			s->cs_unknown++;
			break;
		}
		if (r == -ENOTSUP) {
			s->mt_unknown++;
			break;
		}
		if (r || in.len != insn->size) {
			if (!s->mismatches++) {
				char hexb[64] = "";
				unsigned int i;

				for (i = 0; i < insn->size && i < 15; i++)
					snprintf(hexb + 3 * i, sizeof(hexb) - 3 * i, "%02x ",
						 code[off + i]);
				snprintf(s->first_mismatch, sizeof(s->first_mismatch),
					 "%s+0x%zx: %s%s %s: capstone %u bytes, memtop %d (r=%d)",
					 name, off, hexb, insn->mnemonic, insn->op_str, insn->size,
					 r ? -1 : in.len, r);
			}
			break;
		}
		s->insns++;
		off += in.len;
	}
	cs_free(insn, 1);
}

/* Every FUNC symbol of path's .symtab and .dynsym (duplicates are swept
 * twice; that costs time, not accuracy). */
static int sweep_library(const char *path, struct sweep *s)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *e;
	Elf_Scn *scn = NULL;
	csh cs;

	if (fd < 0)
		return -1;
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	assert_non_null(e);
	assert_int_equal(cs_open(CS_ARCH_X86, CS_MODE_64, &cs), CS_ERR_OK);
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *syms;
		size_t i, n;

		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
			continue;
		syms = elf_getdata(scn, NULL);
		n = sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;
		for (i = 0; syms && i < n; i++) {
			GElf_Sym sym;
			GElf_Shdr th;
			Elf_Scn *text;
			Elf_Data *d;
			const char *name;

			if (!gelf_getsym(syms, (int)i, &sym) ||
			    GELF_ST_TYPE(sym.st_info) != STT_FUNC || !sym.st_size ||
			    sym.st_shndx == SHN_UNDEF || sym.st_shndx >= SHN_LORESERVE)
				continue;
			text = elf_getscn(e, sym.st_shndx);
			if (!text || !gelf_getshdr(text, &th) || th.sh_type != SHT_PROGBITS ||
			    sym.st_value < th.sh_addr ||
			    sym.st_value + sym.st_size > th.sh_addr + th.sh_size)
				continue;
			d = elf_getdata(text, NULL);
			if (!d || !d->d_buf || d->d_size < th.sh_size)
				continue;
			name = elf_strptr(e, sh.sh_link, sym.st_name);
			s->functions++;
			sweep_function(cs, (const __u8 *)d->d_buf + (sym.st_value - th.sh_addr),
				       sym.st_size, sym.st_value, name ? name : "?", s);
		}
	}
	cs_close(&cs);
	elf_end(e);
	close(fd);
	return 0;
}

static void check_library(const char *path, unsigned long min_insns)
{
	struct sweep s = { 0 };

	if (sweep_library(path, &s))
		fail_msg("cannot open %s: the cross-check needs it (it ships with the base system)",
			 path);
	print_message("%s: %lu functions, %lu instructions agreed, sweeps stopped by capstone %lu, "
		      "by memtop %lu, mismatches %lu\n",
		      path, s.functions, s.insns, s.cs_unknown, s.mt_unknown, s.mismatches);
	if (s.mismatches)
		fail_msg("%lu length mismatches in %s; first: %s", s.mismatches, path,
			 s.first_mismatch);
	assert_true(s.insns >= min_insns);
	/* memtop's decoder may decline rare encodings, never a real share */
	assert_true(s.mt_unknown * 100 <= s.functions);
}

static void test_libc(void **state)
{
	check_library("/lib/x86_64-linux-gnu/libc.so.6", 100000);
}

static void test_libstdcxx(void **state)
{
	check_library("/lib/x86_64-linux-gnu/libstdc++.so.6", 100000);
}

static void test_libelf(void **state)
{
	check_library("/lib/x86_64-linux-gnu/libelf.so.1", 5000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_libc),
		cmocka_unit_test(test_libstdcxx),
		cmocka_unit_test(test_libelf),
	};

	elf_version(EV_CURRENT);
	return cmocka_run_group_tests(tests, NULL, NULL);
}

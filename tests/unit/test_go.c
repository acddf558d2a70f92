// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_go.c - the Go modules on real Go binaries and on hostile bytes:
 *  - go_pclntab against the ELF symbol table of the same binary (every
 *    function the linker named is found at its address, by address and by
 *    name), file:line of a function whose line the test knows from the
 *    workload's source, the same answers from the stripped build, and
 *    every truncation and a sweep of corrupted header fields of the real
 *    table failing cleanly;
 *  - go_buildinfo_version and go_version_parse;
 *  - go_runtime_probe_point on the prologues Go 1.19 and 1.23 emit;
 *  - go_runtime_signature for the versions memtop knows and refuses;
 *  - go_runtime_heap_goal on GOGC as the runtime reads it;
 * The fixtures are build/workloads/mt_go and mt_go_stripped, built by the
 * Makefile from tests/workloads/go/mt_go.go with Debian's go.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/types.h>

#include "input/target_facts.h"
#include "memtop/abi.h"
#include "probe/go_runtime.h"
#include "readers/elf_file.h"
#include "stacks/go_binary.h"
#include "stacks/go_pclntab.h"

#ifndef MT_GO_FIXTURE_DIR
#define MT_GO_FIXTURE_DIR "build/workloads"
#endif
#define GO_SRC "tests/workloads/go/mt_go.go"

/* The line of the first line of src that starts with prefix. */
static unsigned int source_line(const char *prefix)
{
	char buf[512];
	unsigned int n = 0;
	FILE *f = fopen(GO_SRC, "r");

	assert_non_null(f);
	while (fgets(buf, sizeof(buf), f)) {
		n++;
		if (!strncmp(buf, prefix, strlen(prefix))) {
			fclose(f);
			return n;
		}
	}
	fclose(f);
	fail_msg("%s not in %s", prefix, GO_SRC);
	return 0;
}

static struct elf_file *open_fixture(const char *name, struct go_binary *gb)
{
	char path[256];
	struct elf_file *ef;

	snprintf(path, sizeof(path), "%s/%s", MT_GO_FIXTURE_DIR, name);
	ef = elf_file_open(path);
	if (!ef)
		fail_msg("cannot open %s (built by make): %s", path, strerror(errno));
	assert_int_equal(go_binary_open(ef, gb), 0);
	assert_true(gb->has_table);
	return ef;
}

static void test_table_matches_symtab(void **state)
{
	struct go_binary gb;
	struct elf_file *ef = open_fixture("mt_go", &gb);
	Elf *elf = elf_file_libelf(ef);
	Elf_Scn *scn = NULL;
	int checked = 0;

	(void)state;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB)
			continue;
		d = elf_getdata(scn, NULL);
		for (size_t i = 1; d && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			struct go_pc_info pi;
			const char *name;
			__u64 entry, end;

			if (!gelf_getsym(d, (int)i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
			    !sym.st_value || !(name = elf_strptr(elf, sh.sh_link, sym.st_name)))
				continue;
			/* assembly and linker-made symbols the table may skip */
			if (go_pclntab_lookup(&gb.tab, sym.st_value, &pi))
				continue;
			if (pi.entry != sym.st_value || !strcmp(name, "runtime.text") ||
			    strchr(name, '['))
				continue; /* inside another function, the text marker, or a
					   * generated function the table names [...] */
			/* the linker names assembly functions NAME.abi0 */
			if (strcmp(pi.function, name)) {
				size_t n = strlen(pi.function);

				if (memcmp(pi.function, name, n))
					fail_msg("%s in the Go table, %s in .symtab", pi.function,
						 name);
				assert_string_equal(name + n, ".abi0");
				continue;
			}
			if (strncmp(name, "main.", 5) && strncmp(name, "runtime.m", 9))
				continue;
			assert_int_equal(go_pclntab_find(&gb.tab, name, &entry, &end), 0);
			assert_int_equal(entry, sym.st_value);
			assert_true(end > entry);
			checked++;
		}
	}
	assert_true(checked > 20);
	go_binary_close(&gb);
	elf_file_close(ef);
}

/* The file:line the table gives inside main.leakInner, in both builds. */
static void check_leak_inner(const char *fixture)
{
	struct go_binary gb;
	struct elf_file *ef = open_fixture(fixture, &gb);
	unsigned int line = source_line("func leakInner()");
	struct go_pc_info pi;
	__u64 entry, end;

	assert_int_equal(go_pclntab_find(&gb.tab, "main.leakInner", &entry, &end), 0);
	assert_int_equal(go_pclntab_lookup(&gb.tab, entry, &pi), 0);
	assert_string_equal(pi.function, "main.leakInner");
	assert_non_null(pi.file);
	assert_non_null(strstr(pi.file, "mt_go.go"));
	assert_int_equal(pi.line, line);
	/* somewhere in the body: a line of the function, no further */
	assert_int_equal(go_pclntab_lookup(&gb.tab, entry + (end - entry) / 2, &pi), 0);
	assert_string_equal(pi.function, "main.leakInner");
	assert_true(pi.line >= line && pi.line <= line + 3);
	assert_int_equal(go_pclntab_lookup(&gb.tab, end, &pi) == 0 &&
				 !strcmp(pi.function, "main.leakInner"),
			 0);
	assert_string_equal(gb.version, gb.version[0] ? gb.version : "x");
	assert_int_equal(gb.major, 1);
	assert_true(gb.minor >= 19);
	go_binary_close(&gb);
	elf_file_close(ef);
}

static void test_file_line(void **state)
{
	(void)state;
	check_leak_inner("mt_go");
}

static void test_stripped(void **state)
{
	struct go_binary gb;
	struct elf_file *ef;
	struct go_target gt;
	char err[256];
	__u64 off, size;

	(void)state;
	check_leak_inner("mt_go_stripped");
	ef = open_fixture("mt_go_stripped", &gb);
	assert_false(elf_file_has_symtab(ef));
	/* the probed functions are found by the Go table alone */
	assert_int_equal(go_binary_func(ef, &gb, "runtime.mProf_Malloc", &off, &size), 0);
	assert_true(size > 0);
	go_binary_close(&gb);
	elf_file_close(ef);
	assert_int_equal(
		go_runtime_inspect(MT_GO_FIXTURE_DIR "/mt_go_stripped", &gt, err, sizeof(err)), 0);
	assert_true(gt.stripped);
	assert_int_equal(gt.rate_vaddr, 0); /* a data symbol: gone with .symtab */
	assert_int_equal(gt.ready_vaddr, 0);
	assert_int_equal(go_runtime_inspect(MT_GO_FIXTURE_DIR "/mt_go", &gt, err, sizeof(err)), 0);
	assert_false(gt.stripped);
	assert_true(gt.rate_vaddr != 0);
	/* runtime.main_init_done: the runtime's start is over once it is set */
	assert_true(gt.ready_vaddr != 0 && gt.ready_vaddr != gt.rate_vaddr);
	for (int fn = 0; fn < GO_NFN; fn++) {
		assert_true(gt.delta[fn] > 0); /* in the stack check, not the entry */
		assert_false(gt.slow[fn]);
	}
}

/* Every prefix of the real table and corrupted header fields: errors or
 * answers, never a read outside (ASan and the fuzzer watch the reads). */
static void test_hostile_table(void **state)
{
	struct go_binary gb;
	struct elf_file *ef = open_fixture("mt_go", &gb);
	size_t len = gb.tab.len;
	__u8 *copy = malloc(len);
	struct go_pclntab t;
	struct go_pc_info pi;
	__u64 entry, end, pc;

	(void)state;
	assert_non_null(copy);
	assert_int_equal(go_pclntab_find(&gb.tab, "main.main", &pc, &end), 0);
	for (size_t cut = 0; cut < len; cut += cut < 4096 ? 1 : 4093) {
		memcpy(copy, gb.tab.data, cut);
		if (go_pclntab_init(&t, copy, cut, 0))
			continue;
		go_pclntab_lookup(&t, pc, &pi);
		go_pclntab_find(&t, "main.main", &entry, &end);
	}
	for (size_t field = 8; field < 72; field++) {
		for (int v = 0; v < 4; v++) {
			static const __u8 vals[] = { 0x00, 0xff, 0x7f, 0x80 };

			memcpy(copy, gb.tab.data, len);
			copy[field] = vals[v];
			if (go_pclntab_init(&t, copy, len, 0))
				continue;
			if (!go_pclntab_lookup(&t, pc, &pi))
				assert_non_null(pi.function);
			go_pclntab_find(&t, "main.leakInner", &entry, &end);
		}
	}
	assert_int_equal(go_pclntab_init(&t, NULL, 0, 0), -EINVAL);
	memcpy(copy, gb.tab.data, len);
	copy[0] = 0xfb; /* Go 1.16's magic */
	assert_int_equal(go_pclntab_init(&t, copy, len, 0), -ENOTSUP);
	free(copy);
	go_binary_close(&gb);
	elf_file_close(ef);
}

/* The fuzzer's synthetic seeds (tests/fuzz/make-seeds) are real tables:
 * both layouts name their functions and lines. */
static void test_synthetic_seeds(void **state)
{
	static const char *const seeds[] = { "tests/fuzz/gopclntab/seed-go120",
					     "tests/fuzz/gopclntab/seed-go118" };
	(void)state;
	for (size_t i = 0; i < 2; i++) {
		__u8 buf[4096];
		FILE *f = fopen(seeds[i], "rb");
		struct go_pclntab t;
		struct go_pc_info pi;
		__u64 entry, end;
		size_t n;

		assert_non_null(f);
		n = fread(buf, 1, sizeof(buf), f);
		fclose(f);
		assert_int_equal(go_pclntab_init(&t, buf, n, 0), 0);
		assert_int_equal(t.nfunc, 4);
		assert_int_equal(go_pclntab_find(&t, "main.leak", &entry, &end), 0);
		assert_int_equal(entry, 0x401000 + 16);
		assert_int_equal(end, 0x401000 + 80);
		assert_int_equal(go_pclntab_lookup(&t, entry + 40, &pi), 0);
		assert_string_equal(pi.function, "main.leak");
		assert_string_equal(pi.file, "/src/main.go");
		assert_int_equal(pi.line, 11); /* line 10 for the first half, then 11 */
		assert_int_equal(go_pclntab_lookup(&t, entry, &pi), 0);
		assert_int_equal(pi.line, 10);
		assert_int_equal(go_pclntab_lookup(&t, 0x401000 + 200, &pi), 0);
		assert_string_equal(pi.function, "net/http.(*conn).serve");
		assert_int_equal(go_pclntab_lookup(&t, 0x401000 + 256 + 1000, &pi), -ENOENT);
	}
}

static void test_buildinfo(void **state)
{
	__u8 sec[64] = "\xff Go buildinf:";
	char out[32];
	int major, minor;

	(void)state;
	sec[14] = 8;
	sec[15] = 2;
	sec[32] = 9;
	memcpy(sec + 33, "go1.21.13", 9);
	assert_int_equal(go_buildinfo_version(sec, sizeof(sec), out, sizeof(out)), 0);
	assert_string_equal(out, "go1.21.13");
	assert_int_equal(go_version_parse(out, &major, &minor), 0);
	assert_int_equal(major, 1);
	assert_int_equal(minor, 21);
	/* the length runs past the section, or past the output */
	assert_int_equal(go_buildinfo_version(sec, 40, out, sizeof(out)), -EINVAL);
	assert_int_equal(go_buildinfo_version(sec, sizeof(sec), out, 8), -EINVAL);
	sec[32] = 0xff; /* an unterminated varint */
	memset(sec + 33, 0xff, sizeof(sec) - 33);
	assert_int_equal(go_buildinfo_version(sec, sizeof(sec), out, sizeof(out)), -EINVAL);
	sec[15] = 0; /* the pointer format of Go < 1.18 */
	assert_int_equal(go_buildinfo_version(sec, sizeof(sec), out, sizeof(out)), -ENOTSUP);
	sec[1] = 'X';
	assert_int_equal(go_buildinfo_version(sec, sizeof(sec), out, sizeof(out)), -EINVAL);
	assert_int_equal(go_version_parse("go1.23rc1", &major, &minor), 0);
	assert_int_equal(minor, 23);
	assert_int_equal(go_version_parse("devel +abc", &major, &minor), -EINVAL);
	assert_int_equal(go_version_parse("go", &major, &minor), -EINVAL);
}

static void test_signature(void **state)
{
	const char *sig;
	__u32 args, kind;

	(void)state;
	for (int minor = 19; minor <= 22; minor++) {
		assert_int_equal(go_runtime_signature(1, minor, &args, &sig, &kind), 0);
		assert_int_equal(args, MT_GO_MALLOC_AX_BX);
		assert_int_equal(kind, 2);
	}
	assert_int_equal(go_runtime_signature(1, 23, &args, &sig, &kind), 0);
	assert_int_equal(args, MT_GO_MALLOC_BX_CX);
	assert_int_equal(kind, 3);
	assert_int_equal(go_runtime_signature(1, 18, &args, &sig, &kind), -ENOTSUP);
	assert_int_equal(go_runtime_signature(1, 24, &args, &sig, &kind), -ENOTSUP);
	assert_int_equal(go_runtime_signature(2, 0, &args, &sig, &kind), -ENOTSUP);
}

/* GOGC as Go's readGOGC takes it: unset or not an int32 is 100, "off"
 * or negative is no collection, else 1 + GOGC/100. */
static void test_heap_goal(void **state)
{
	static const char *const refused[] = {
		"", "+50", " 50", "50x", "OFF", "2147483648", "-2147483649", "99999999999999999999"
	};

	(void)state;
	assert_true(go_runtime_heap_goal(NULL) == 2);
	assert_true(go_runtime_heap_goal("100") == 2);
	assert_true(go_runtime_heap_goal("50") == 1.5);
	assert_true(go_runtime_heap_goal("400") == 5);
	assert_true(go_runtime_heap_goal("0") == 1);
	assert_true(go_runtime_heap_goal("off") == 0);
	assert_true(go_runtime_heap_goal("-1") == 0);
	assert_true(go_runtime_heap_goal("2147483647") == GO_HEAP_GOAL_MAX);
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
		assert_true(go_runtime_heap_goal(refused[i]) == 2);
}

static void test_probe_point(void **state)
{
	/* Go 1.19 runtime.mProf_Malloc: lea -0xf0(%rsp),%r12; cmp 0x10(%r14),%r12;
	 * jbe; sub $0x170,%rsp */
	static const __u8 go119[] = { 0x4c, 0x8d, 0xa4, 0x24, 0x10, 0xff, 0xff, 0xff, 0x4d,
				      0x3b, 0x66, 0x10, 0x0f, 0x86, 0xaa, 0x01, 0x00, 0x00,
				      0x48, 0x81, 0xec, 0x70, 0x01, 0x00, 0x00 };
	/* Go 1.23 runtime.mProf_Free: cmp 0x10(%r14),%rsp; jbe; push %rbp */
	static const __u8 go123[] = { 0x49, 0x3b, 0x66, 0x10, 0x0f, 0x86, 0xa4,
				      0x00, 0x00, 0x00, 0x55, 0x48, 0x89, 0xe5 };
	/* a nosplit function: no check */
	static const __u8 nosplit[] = { 0x48, 0x83, 0xec, 0x18, 0x48, 0x89, 0x6c, 0x24, 0x10 };
	bool emulated, once;

	(void)state;
	/* sub %rsp is single-stepped: the jbe, which runs again on a restart */
	assert_int_equal(go_runtime_probe_point(go119, sizeof(go119), &emulated, &once), 12);
	assert_true(emulated);
	assert_false(once);
	assert_int_equal(go_runtime_probe_point(go123, sizeof(go123), &emulated, &once), 10);
	assert_true(emulated);
	assert_true(once);
	assert_int_equal(go_runtime_probe_point(nosplit, sizeof(nosplit), &emulated, &once), 0);
	assert_false(emulated);
	/* cut before the push: the jbe */
	assert_int_equal(go_runtime_probe_point(go123, 10, &emulated, &once), 4);
	assert_int_equal(go_runtime_probe_point(go123, 3, &emulated, &once), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table_matches_symtab),
		cmocka_unit_test(test_file_line),
		cmocka_unit_test(test_stripped),
		cmocka_unit_test(test_hostile_table),
		cmocka_unit_test(test_synthetic_seeds),
		cmocka_unit_test(test_buildinfo),
		cmocka_unit_test(test_signature),
		cmocka_unit_test(test_probe_point),
		cmocka_unit_test(test_heap_goal),
	};

	elf_version(EV_CURRENT);
	return cmocka_run_group_tests(tests, NULL, NULL);
}

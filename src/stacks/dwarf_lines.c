// SPDX-License-Identifier: GPL-2.0-only
/*
 * dwarf_lines.c - address to file:line and inlined frames with libdw.
 *
 * Owns a Dwarf handle over an elf_file (plus the dwz "alt" file when the
 * DWARF refers to one) and two levels of sorted address-range tables: the
 * compilation units, built at open from every CU's DW_AT_ranges or
 * low_pc/high_pc (clang emits no .debug_aranges), and per CU its
 * DW_TAG_subprogram DIEs, built on the CU's first lookup. For an address,
 * the CU's line table gives the innermost file:line; the function's DIE
 * subtree, walked down through the DW_TAG_inlined_subroutine (and lexical
 * block) children holding the address, gives the inlined calls; each
 * inlined call's DW_AT_call_file/DW_AT_call_line is the location in the
 * frame that contains it. Names come from a mangled DW_AT_linkage_name
 * (demangled) or DW_AT_name, following abstract origins. Walking only one
 * function's subtree keeps a lookup cheap in large CUs, where
 * dwarf_getscopes() scans the CU from its root every time.
 *
 * The dwarf_* API is used rather than libdwfl: libdwfl models one process
 * address space per Dwfl (reporting its modules from /proc/PID/maps and
 * finding files itself), while memtop already tracks mappings and files
 * (proc_cache) and wants one parsed DWARF per file shared by every
 * process that maps it.
 */
#include "stacks/dwarf_lines.h"
#include "util/grow.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "stacks/debuginfo.h"
#include "stacks/demangle.h"
#include "util/strpool.h"

#define MAX_CHAIN 64
#define MAX_NEST 8

/* Address ranges of DIEs, sorted by start, for binary search. */
struct pc_range {
	__u64 lo;
	__u64 hi; /* exclusive */
	Dwarf_Die die;
	size_t cu; /* in dwarf_lines.cus (CU table only) */
};

struct range_table {
	struct pc_range *v;
	size_t n;
	size_t cap;
};

struct cu_info {
	Dwarf_Die cudie;
	struct range_table fns; /* its DW_TAG_subprogram DIEs with code */
	bool fns_done;
};

struct dwarf_lines {
	struct elf_file *ef;
	struct elf_file *alt_ef;
	Dwarf *dw;
	Dwarf *alt_dw;
	struct range_table cu_ranges;
	struct cu_info *cus;
	size_t ncus;
};

/* Add every address range of die. */
static int table_add(struct range_table *t, Dwarf_Die *die, size_t cu)
{
	Dwarf_Addr base, lo, hi;
	ptrdiff_t off = 0;

	while ((off = dwarf_ranges(die, off, &base, &lo, &hi)) > 0) {
		if (hi <= lo)
			continue;
		if (grow_array(&t->v, &t->cap, t->n + 1, sizeof(*t->v)))
			return -ENOMEM;
		t->v[t->n++] = (struct pc_range){ lo, hi, *die, cu };
	}
	return 0;
}

static int range_cmp(const void *a, const void *b)
{
	const struct pc_range *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static void table_sort(struct range_table *t)
{
	if (t->n)
		qsort(t->v, t->n, sizeof(*t->v), range_cmp);
}

static const struct pc_range *table_find(const struct range_table *t, __u64 pc)
{
	size_t lo = 0, hi = t->n;

	while (lo < hi) { /* first range with lo > pc */
		size_t mid = lo + (hi - lo) / 2;

		if (t->v[mid].lo <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Ranges rarely overlap; look a little back for an enclosing one. */
	for (size_t i = lo, tries = 0; i > 0 && tries < 4; i--, tries++) {
		if (pc < t->v[i - 1].hi)
			return &t->v[i - 1];
	}
	return NULL;
}

static int cus_build(struct dwarf_lines *dl)
{
	Dwarf_CU *cu = NULL;
	Dwarf_Die cudie;
	uint8_t unit_type;
	Dwarf_Half version;
	size_t cap = 0;

	while (!dwarf_get_units(dl->dw, cu, &cu, &version, &unit_type, &cudie, NULL)) {
		if (unit_type != DW_UT_compile && unit_type != DW_UT_skeleton)
			continue;
		if (grow_array(&dl->cus, &cap, dl->ncus + 1, sizeof(*dl->cus)))
			return -ENOMEM;
		dl->cus[dl->ncus] = (struct cu_info){ .cudie = cudie };
		if (table_add(&dl->cu_ranges, &cudie, dl->ncus))
			return -ENOMEM;
		dl->ncus++;
	}
	table_sort(&dl->cu_ranges);
	return 0;
}

/* Collect the subprograms with code under parent, looking into
 * namespaces and classes (C++). */
static int fns_collect(struct range_table *t, Dwarf_Die *parent, int depth)
{
	Dwarf_Die child;

	if (depth > MAX_NEST || dwarf_child(parent, &child))
		return 0;
	do {
		switch (dwarf_tag(&child)) {
		case DW_TAG_subprogram:
			if (table_add(t, &child, 0))
				return -ENOMEM;
			break;
		case DW_TAG_namespace:
		case DW_TAG_class_type:
		case DW_TAG_structure_type:
		case DW_TAG_union_type:
		case DW_TAG_module:
			if (fns_collect(t, &child, depth + 1))
				return -ENOMEM;
			break;
		default:
			break;
		}
	} while (!dwarf_siblingof(&child, &child));
	return 0;
}

/* Attach the dwz alternate file named by .gnu_debugaltlink, looked up by
 * its build ID (in the target's root first). Without it libdw falls back
 * to its own search in our root. */
static void alt_attach(struct dwarf_lines *dl, pid_t pid)
{
	static const char hex[] = "0123456789abcdef";
	const char *name;
	const void *id;
	char bid[2 * 64 + 1];
	ssize_t n = dwelf_dwarf_gnu_debugaltlink(dl->dw, &name, &id);

	if (n <= 0 || n > 64)
		return;
	for (ssize_t i = 0; i < n; i++) {
		bid[2 * i] = hex[((const unsigned char *)id)[i] >> 4];
		bid[2 * i + 1] = hex[((const unsigned char *)id)[i] & 15];
	}
	bid[2 * n] = '\0';
	dl->alt_ef = debuginfo_find_build_id(bid, pid);
	if (!dl->alt_ef)
		return;
	dl->alt_dw = dwarf_begin_elf(elf_file_libelf(dl->alt_ef), DWARF_C_READ, NULL);
	if (dl->alt_dw)
		dwarf_setalt(dl->dw, dl->alt_dw);
}

struct dwarf_lines *dwarf_lines_open(struct elf_file *ef, pid_t pid)
{
	struct dwarf_lines *dl;

	if (!elf_file_has_dwarf(ef)) {
		errno = ENODATA;
		return NULL;
	}
	dl = calloc(1, sizeof(*dl));
	if (!dl) {
		errno = ENOMEM;
		return NULL;
	}
	dl->ef = elf_file_ref(ef);
	dl->dw = dwarf_begin_elf(elf_file_libelf(ef), DWARF_C_READ, NULL);
	if (!dl->dw) {
		dwarf_lines_close(dl);
		errno = ENODATA;
		return NULL;
	}
	alt_attach(dl, pid);
	if (cus_build(dl) || !dl->cu_ranges.n) {
		dwarf_lines_close(dl);
		errno = ENODATA;
		return NULL;
	}
	return dl;
}

void dwarf_lines_close(struct dwarf_lines *dl)
{
	if (!dl)
		return;
	for (size_t i = 0; i < dl->ncus; i++)
		free(dl->cus[i].fns.v);
	free(dl->cus);
	free(dl->cu_ranges.v);
	if (dl->dw)
		dwarf_end(dl->dw);
	if (dl->alt_dw)
		dwarf_end(dl->alt_dw);
	elf_file_close(dl->alt_ef);
	elf_file_close(dl->ef);
	free(dl);
}

static const char *scope_name(Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	const char *s = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &attr));

	if (!s)
		s = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr));
	if (s && (!strncmp(s, "_Z", 2) || !strncmp(s, "_R", 2)))
		return demangle_name(s);
	return strpool_intern(dwarf_diename(die));
}

/* The call site of an inlined scope, in the frame that contains it. */
static void call_site(Dwarf_Die *cudie, Dwarf_Die *scope, const char **file, __u32 *line)
{
	Dwarf_Attribute attr;
	Dwarf_Word idx, ln;
	Dwarf_Files *files;
	size_t nfiles;

	*file = NULL;
	*line = 0;
	if (!dwarf_formudata(dwarf_attr(scope, DW_AT_call_file, &attr), &idx) &&
	    !dwarf_getsrcfiles(cudie, &files, &nfiles) && idx < nfiles)
		*file = strpool_intern(dwarf_filesrc(files, idx, NULL, NULL));
	if (!dwarf_formudata(dwarf_attr(scope, DW_AT_call_line, &attr), &ln) && ln <= 0xffffffffu)
		*line = (__u32)ln;
}

/* The path from the function fn down to the innermost inlined call
 * holding pc: path[0] = fn, then the DW_TAG_inlined_subroutine DIEs
 * (lexical blocks are passed through). Returns its length. */
static int inline_path(Dwarf_Die *fn, __u64 pc, Dwarf_Die *path, int max)
{
	Dwarf_Die cur = *fn, child;
	int n = 0;

	path[n++] = cur;
	while (n < max && !dwarf_child(&cur, &child)) {
		bool found = false;

		do {
			int tag = dwarf_tag(&child);

			if ((tag == DW_TAG_inlined_subroutine || tag == DW_TAG_lexical_block ||
			     tag == DW_TAG_try_block || tag == DW_TAG_catch_block) &&
			    dwarf_haspc(&child, pc) == 1) {
				found = true;
				break;
			}
		} while (!dwarf_siblingof(&child, &child));
		if (!found)
			break;
		cur = child;
		if (dwarf_tag(&cur) == DW_TAG_inlined_subroutine)
			path[n++] = cur;
	}
	return n;
}

int dwarf_lines_lookup(struct dwarf_lines *dl, __u64 vaddr, struct dwarf_frame *out, int max)
{
	const struct pc_range *cr = table_find(&dl->cu_ranges, vaddr), *fr;
	struct dwarf_frame chain[MAX_CHAIN];
	Dwarf_Die path[MAX_CHAIN];
	struct cu_info *cu;
	const char *file = NULL;
	Dwarf_Line *ln;
	__u32 line = 0;
	int npath = 0, n = 0;

	if (!cr || max < 1)
		return 0;
	cu = &dl->cus[cr->cu];
	ln = dwarf_getsrc_die(&cu->cudie, vaddr);
	if (ln) {
		int l = 0;

		file = strpool_intern(dwarf_linesrc(ln, NULL, NULL));
		if (!dwarf_lineno(ln, &l) && l > 0)
			line = (__u32)l;
	}
	if (!cu->fns_done) {
		cu->fns_done = true;
		if (fns_collect(&cu->fns, &cu->cudie, 0))
			cu->fns.n = 0;
		table_sort(&cu->fns);
	}
	fr = table_find(&cu->fns, vaddr);
	if (fr) {
		Dwarf_Die fn = fr->die;

		npath = inline_path(&fn, vaddr, path, MAX_CHAIN);
	}
	/* Innermost first; each outer frame is at the call site of the
	 * inlined call it contains. */
	for (int i = npath - 1; i >= 0; i--) {
		chain[n++] = (struct dwarf_frame){ scope_name(&path[i]), file, line };
		if (i > 0)
			call_site(&cu->cudie, &path[i], &file, &line);
	}
	if (!n) { /* a line entry outside any function */
		if (!file)
			return 0;
		chain[n++] = (struct dwarf_frame){ NULL, file, line };
	}
	if (n > max) {
		chain[max - 1] = chain[n - 1];
		n = max;
	}
	memcpy(out, chain, (size_t)n * sizeof(*out));
	return n;
}

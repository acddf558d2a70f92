// SPDX-License-Identifier: GPL-2.0-only
/*
 * go_pclntab.c - reads the Go symbol table (go_pclntab.h).
 *
 * Layout (Go 1.18 and later, src/runtime/symtab.go: pcHeader, functab,
 * _func; src/debug/gosym/pclntab.go reads the same): a header with the
 * magic, the instruction quantum, the pointer size, the function and file
 * counts, the text start and the offsets of the sub-tables; a function
 * table of (entry offset, _func offset) pairs sorted by entry, with one
 * more entry marking the end of the last function; per function a _func
 * whose name offset points into the name table, and whose pcfile and pcln
 * offsets point into the pc-value table. A pc-value table is a sequence
 * of (zig-zag varint value delta, varint pc delta) steps starting at the
 * entry with value -1. Every read goes through rd() and str(), which
 * check it lies inside the section.
 */
#include "stacks/go_pclntab.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

#define MAGIC_118 0xfffffff0u /* Go 1.18, 1.19 */
#define MAGIC_120 0xfffffff1u /* Go 1.20 and later */
#define HDR_SIZE (8 + 8 * 8)  /* 8 bytes, then 8 pointer-sized fields */
#define FUNC_MIN 40           /* the _func fields read here, and a bit */

/* _func field offsets (the same in 1.18 to 1.23 for these) */
#define F_NAMEOFF 4
#define F_PCFILE 20
#define F_PCLN 24
#define F_CUOFF 32

static int rd(const struct go_pclntab *t, __u64 off, unsigned int size, __u64 *v)
{
	__u64 x = 0;

	if (off > t->len || size > t->len - off)
		return -EINVAL;
	for (unsigned int i = 0; i < size; i++)
		x |= (__u64)t->data[off + i] << (8 * i);
	*v = x;
	return 0;
}

/* A NUL-terminated string at off, entirely inside the section. */
static const char *str(const struct go_pclntab *t, __u64 off)
{
	const void *nul;

	if (off >= t->len)
		return NULL;
	nul = memchr(t->data + off, '\0', t->len - off);
	return nul ? (const char *)t->data + off : NULL;
}

int go_pclntab_init(struct go_pclntab *t, const __u8 *data, size_t len, __u64 text_start_hint)
{
	__u64 magic, nfunc, f[8];

	memset(t, 0, sizeof(*t));
	t->data = data;
	t->len = len;
	if (!data || rd(t, 0, 4, &magic))
		return -EINVAL;
	if (magic != MAGIC_118 && magic != MAGIC_120)
		return -ENOTSUP;
	if (len < HDR_SIZE)
		return -EINVAL;
	if (data[7] != 8)
		return -ENOTSUP; /* not 64-bit */
	if (data[4] || data[5] || !data[6])
		return -EINVAL;
	t->quantum = data[6];
	t->ptrsize = data[7];
	for (int i = 0; i < 8; i++)
		rd(t, 8 + 8 * (__u64)i, 8, &f[i]);
	nfunc = f[0];
	t->text_start = f[2] ? f[2] : text_start_hint;
	t->funcname_off = f[3];
	t->cu_off = f[4];
	t->filetab_off = f[5];
	t->pctab_off = f[6];
	t->functab_off = f[7];
	/* the function table, with its end marker, inside the section */
	if (!nfunc || nfunc > len / 8 || t->functab_off > len ||
	    (nfunc + 1) * 8 > len - t->functab_off || t->funcname_off >= len ||
	    t->pctab_off >= len || t->filetab_off >= len || t->cu_off > len)
		return -EINVAL;
	t->nfunc = (__u32)nfunc;
	/* the lookups search it: entries must not go down (the linker's are
	 * sorted; a table that is not is corrupt) */
	for (__u32 i = 0, prev = 0; i <= t->nfunc; i++) {
		__u64 e = 0;

		rd(t, t->functab_off + 8 * (__u64)i, 4, &e);
		if (e < prev)
			return -EINVAL;
		prev = (__u32)e;
	}
	/* and every address they give must exist */
	if (t->text_start > UINT64_MAX - 0xffffffffull)
		return -EINVAL;
	return 0;
}

/* Entry offset (from text_start) of function table slot i (i <= nfunc). */
static int entry_of(const struct go_pclntab *t, __u32 i, __u64 *off)
{
	return rd(t, t->functab_off + 8 * (__u64)i, 4, off);
}

/* The _func of slot i, as an offset in the section. */
static int func_of(const struct go_pclntab *t, __u32 i, __u64 *foff)
{
	__u64 rel;

	if (rd(t, t->functab_off + 8 * (__u64)i + 4, 4, &rel))
		return -EINVAL;
	*foff = t->functab_off + rel;
	return *foff <= t->len && FUNC_MIN <= t->len - *foff ? 0 : -EINVAL;
}

static int varint(const struct go_pclntab *t, __u64 *off, __u32 *v)
{
	__u32 x = 0;

	for (unsigned int shift = 0; shift < 35; shift += 7) {
		__u64 b;

		if (rd(t, (*off)++, 1, &b))
			return -EINVAL;
		x |= (__u32)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = x;
			return 0;
		}
	}
	return -EINVAL;
}

/* The value of pc-value table tab (offset into pctab) at pc, for a
 * function entered at entry. -1 when pc is past the table. */
static int pcvalue(const struct go_pclntab *t, __u32 tab, __u64 entry, __u64 pc, __s32 *val)
{
	__u64 off = t->pctab_off + tab, at = entry;
	__s64 v = -1; /* 64-bit: a corrupt table's deltas can sum past int32 */

	for (int first = 1;; first = 0) {
		__u32 uv, pcd;

		if (varint(t, &off, &uv))
			return -EINVAL;
		if (!uv && !first)
			break;
		v += (uv & 1) ? -(__s64)(uv >> 1) - 1 : (__s64)(uv >> 1);
		if (v < INT32_MIN || v > INT32_MAX || varint(t, &off, &pcd))
			return -EINVAL;
		at += (__u64)pcd * t->quantum;
		if (pc < at) {
			*val = (__s32)v;
			return 0;
		}
	}
	*val = -1;
	return 0;
}

/* File name of file number fileno of the compilation unit cu. */
static const char *file_name(const struct go_pclntab *t, __u32 cu, __s32 fileno)
{
	__u64 off;

	if (fileno < 0 || rd(t, t->cu_off + 4 * ((__u64)cu + (__u32)fileno), 4, &off) ||
	    off == 0xffffffffu)
		return NULL;
	return str(t, t->filetab_off + off);
}

int go_pclntab_lookup(const struct go_pclntab *t, __u64 pc, struct go_pc_info *out)
{
	__u64 rel, lo_off, hi_off, foff, name_off, pcfile, pcln, cu;
	__u32 lo = 0, hi;
	__s32 fileno, line;

	memset(out, 0, sizeof(*out));
	if (pc < t->text_start || entry_of(t, 0, &lo_off) || entry_of(t, t->nfunc, &hi_off))
		return -ENOENT;
	rel = pc - t->text_start;
	if (rel < lo_off || rel >= hi_off)
		return -ENOENT;
	hi = t->nfunc;
	/* the last slot whose entry is <= rel */
	while (hi - lo > 1) {
		__u32 mid = lo + (hi - lo) / 2;
		__u64 e;

		if (entry_of(t, mid, &e))
			return -EINVAL;
		if (e <= rel)
			lo = mid;
		else
			hi = mid;
	}
	if (entry_of(t, lo, &lo_off) || entry_of(t, lo + 1, &hi_off) || func_of(t, lo, &foff) ||
	    rd(t, foff + F_NAMEOFF, 4, &name_off) || rd(t, foff + F_PCFILE, 4, &pcfile) ||
	    rd(t, foff + F_PCLN, 4, &pcln) || rd(t, foff + F_CUOFF, 4, &cu))
		return -EINVAL;
	out->function = str(t, t->funcname_off + name_off);
	if (!out->function)
		return -EINVAL;
	out->entry = t->text_start + lo_off;
	out->end = t->text_start + hi_off;
	if (!pcvalue(t, (__u32)pcfile, out->entry, pc, &fileno))
		out->file = file_name(t, (__u32)cu, fileno);
	if (!pcvalue(t, (__u32)pcln, out->entry, pc, &line) && line > 0)
		out->line = (__u32)line;
	return 0;
}

int go_pclntab_find(const struct go_pclntab *t, const char *name, __u64 *entry, __u64 *end)
{
	for (__u32 i = 0; i < t->nfunc; i++) {
		__u64 foff, name_off, e, next;
		const char *s;

		if (func_of(t, i, &foff) || rd(t, foff + F_NAMEOFF, 4, &name_off))
			continue;
		s = str(t, t->funcname_off + name_off);
		if (!s || strcmp(s, name) || entry_of(t, i, &e) || entry_of(t, i + 1, &next))
			continue;
		*entry = t->text_start + e;
		*end = t->text_start + next;
		return 0;
	}
	return -ENOENT;
}

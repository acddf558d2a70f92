/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * go_pclntab.h - the Go symbol table (.gopclntab, Go >= 1.18): function
 * names, entry points, and file:line of any program counter, read from
 * the section's bytes. Present in stripped Go binaries too, where it is
 * the only symbol table.
 *
 * Pure and bounded: the bytes come from a target's file and are
 * untrusted; every offset and length is checked against the section, a
 * malformed table gives -EINVAL (or -ENOTSUP for another format), never a
 * read outside it. Strings returned point into the caller's bytes.
 */
#ifndef MEMTOP_GO_PCLNTAB_H
#define MEMTOP_GO_PCLNTAB_H

#include <stddef.h>
#include <linux/types.h>

struct go_pclntab {
	const __u8 *data; /* the section; borrowed, must outlive the table */
	size_t len;
	__u32 nfunc;
	__u8 quantum;     /* instruction size quantum (1 on amd64) */
	__u8 ptrsize;     /* 8 */
	__u64 text_start; /* link-time address function entries are relative to */
	/* offsets of the sub-tables from the start of the section */
	__u64 funcname_off, cu_off, filetab_off, pctab_off, functab_off;
};

/* What one program counter is. */
struct go_pc_info {
	const char *function; /* "main.leak", "net/http.(*conn).serve" */
	const char *file;     /* source path; NULL when the table has none */
	__u32 line;           /* 0 when unknown */
	__u64 entry;          /* link-time address of the function's entry */
	__u64 end;            /* ... and of the next function's */
};

/* Parse the header of data[0, len). text_start_hint is used when the
 * header's text start is 0 (a position-independent binary whose header
 * is filled by a relocation): the address of .text. 0; -ENOTSUP for a
 * table older than Go 1.18 or not 64-bit little-endian; -EINVAL when
 * malformed. */
int go_pclntab_init(struct go_pclntab *t, const __u8 *data, size_t len, __u64 text_start_hint);

/* The function containing link-time address pc, with its file and line
 * at pc. 0, -ENOENT (outside every function) or -EINVAL (malformed). */
int go_pclntab_lookup(const struct go_pclntab *t, __u64 pc, struct go_pc_info *out);

/* The entry and end addresses of the function named name. 0 or -ENOENT. */
int go_pclntab_find(const struct go_pclntab *t, const char *name, __u64 *entry, __u64 *end);

#endif /* MEMTOP_GO_PCLNTAB_H */

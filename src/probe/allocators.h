/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * allocators.h - the allocators memtop probes, as data: for each one the
 * entry points, what each counts as (the attach cookie, enum mt_alloc_fn),
 * how many argument registers its probe reads, whether the address it
 * returns is needed, and the per-allocator counting flags the BPF side
 * applies (enum mt_probe_flags). docs/allocators.md explains every row.
 *
 * Adding an allocator is adding a table here; attach.c turns a table into
 * links and alloc_resolve.c decides which mapped object's table applies.
 */
#ifndef MEMTOP_PROBE_ALLOCATORS_H
#define MEMTOP_PROBE_ALLOCATORS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

struct elf_file;

struct alloc_entry {
	const char *symbol; /* as exported (a prefix such as je_ is added to C names) */
	__u32 fn;           /* enum mt_alloc_fn: what the call counts as */
	__u8 nargs;         /* argument registers the entry program reads */
	bool need_return;   /* returns the address of a sampled allocation */
	bool required;      /* attach fails without it */
	__u32 flags;        /* enum mt_probe_flags of this entry (MT_PF_FREE_FORWARDS) */
};

struct allocator {
	const char *name; /* "glibc", "jemalloc", "tcmalloc" */
	/* A function only this allocator defines (with its C prefix), which
	 * identifies it in any object: NULL for glibc, which is recognised by
	 * its library name. */
	const char *marker;
	/* The other names a prefixed build defines, each with the marker's
	 * prefix (NULL-terminated; with a marker only). */
	const char *const *signature;
	__u32 flags; /* enum mt_probe_flags for every probe */
	/* The functions, each tried in turn, from which the allocator frees
	 * at a thread's exit blocks the program freed already (found in the
	 * library's symbols or its debug file: probe/exit_frees.h); NULL:
	 * none. */
	const char *const *exit_frees;
	const struct alloc_entry *entries;
	size_t nentries;
};

/* Longest C-name prefix memtop recognises, with its NUL. */
#define MT_ALLOC_PREFIX_MAX 16

/* The allocator implemented by the ELF file ef (path names it): glibc for
 * a libc.so.6, else the table whose marker ef defines (in .dynsym or
 * .symtab: a statically linked jemalloc is found in the executable), as
 * exported, or else under any prefix (allocators_find_prefix). The prefix
 * goes to prefix[len] ("" when none). NULL when ef carries none of
 * memtop's allocators. */
const struct allocator *allocators_identify(struct elf_file *ef, const char *path, char *prefix,
					    size_t len);

/* Only a prefixed build in ef (jemalloc's je_malloc next to another
 * allocator's malloc): what allocators_identify() finds under a non-empty
 * prefix, else NULL. */
const struct allocator *allocators_identify_prefixed(struct elf_file *ef, const char *path,
						     char *prefix, size_t len);

/* The prefix under which the function names names[0..n) hold allocator
 * a: with !prefixed, "" when a's marker and malloc are both there; with
 * prefixed, the non-empty P (letters, digits, '_', shorter than
 * MT_ALLOC_PREFIX_MAX) of a name P+marker for which P+each name of a's
 * signature is there too (je_mallocx, je_malloc, je_free, ...). Written
 * to prefix[len]; false when there is none. Pure: no ELF involved. */
bool allocators_find_prefix(const char *const *names, size_t n, const struct allocator *a,
			    bool prefixed, char *prefix, size_t len);

/* glibc's table: the allocator of a process that maps no other one. */
const struct allocator *allocators_glibc(void);

/* Every allocator, for listing (docs, tests). Returns the count. */
size_t allocators_all(const struct allocator *const **v);

/* Whether a file name is glibc's C library (libc.so.6, libc-2.x.so). */
bool allocators_is_glibc_name(const char *path);

#endif /* MEMTOP_PROBE_ALLOCATORS_H */

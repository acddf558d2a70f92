/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * go_binary.h - what a Go executable says about itself: that it is one,
 * the Go version it was built with (the .go.buildinfo section, which
 * stripped binaries keep), and its symbol table (.gopclntab: function
 * names and file:line, go_pclntab.h), also for stripped binaries.
 *
 * The file is the target's and untrusted: sections are read with their
 * sizes checked against the file and capped, and every parse is bounded.
 */
#ifndef MEMTOP_GO_BINARY_H
#define MEMTOP_GO_BINARY_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "stacks/go_pclntab.h"

struct elf_file;

struct go_binary {
	char version[32]; /* "go1.19.8"; "" when the build info is missing */
	int major, minor; /* 1, 19; 0, 0 when unknown */
	bool has_table;   /* tab is usable */
	struct go_pclntab tab;
	__u8 *table_bytes; /* owned */
};

/* Whether ef is a Go executable: it has a .go.buildinfo or a .gopclntab
 * section. */
bool go_binary_is_go(struct elf_file *ef);

/* Read ef's Go version and symbol table. 0; -ENOENT when ef is not a Go
 * binary; -ENOMEM. A table that cannot be parsed leaves has_table false
 * (the version may still be known). Release with go_binary_close(). */
int go_binary_open(struct elf_file *ef, struct go_binary *gb);
void go_binary_close(struct go_binary *gb);

/* The file offset and size of function name in ef: the ELF symbol table
 * first, else the Go table (a stripped binary). 0 or -ENOENT. */
int go_binary_func(struct elf_file *ef, const struct go_binary *gb, const char *name,
		   __u64 *file_off, __u64 *size);

/* The Go version string in the bytes of a .go.buildinfo section (the
 * format of Go 1.18 and later: magic, pointer size, flags, then the
 * version as a varint-prefixed string at offset 32). 0, -ENOTSUP for the
 * older pointer format, -EINVAL when malformed. */
int go_buildinfo_version(const __u8 *sec, size_t len, char *out, size_t outlen);

/* "go1.21.13" -> 1, 21. 0 or -EINVAL. */
int go_version_parse(const char *version, int *major, int *minor);

#endif /* MEMTOP_GO_BINARY_H */

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * dwarf_lines.h - source locations and inlined-call chains from DWARF
 * (libdw), for link-time addresses of one ELF file that carries DWARF.
 */
#ifndef MEMTOP_DWARF_LINES_H
#define MEMTOP_DWARF_LINES_H

#include <sys/types.h>
#include <linux/types.h>

#include "readers/elf_file.h"

struct dwarf_lines;

/* One source-level frame. Strings are interned. */
struct dwarf_frame {
	const char *function; /* demangled; NULL when DWARF names none */
	const char *file;     /* as DWARF gives it (usually absolute) */
	__u32 line;           /* 0 when unknown */
};

/* Read the DWARF of ef (which takes a reference on ef). pid locates a
 * .gnu_debugaltlink (dwz) file in the target's root. NULL with errno =
 * ENODATA when ef has no usable DWARF. */
struct dwarf_lines *dwarf_lines_open(struct elf_file *ef, pid_t pid);
void dwarf_lines_close(struct dwarf_lines *dl);

/* The source frames at link-time address vaddr, innermost first: the
 * inlined calls, then the function they were inlined into, each with its
 * file:line (an outer frame's line is its call site of the inner one).
 * When more than max frames exist, the innermost max - 1 and the outermost
 * are kept. Returns the count, 0 when no compilation unit covers vaddr. */
int dwarf_lines_lookup(struct dwarf_lines *dl, __u64 vaddr, struct dwarf_frame *out, int max);

#endif /* MEMTOP_DWARF_LINES_H */

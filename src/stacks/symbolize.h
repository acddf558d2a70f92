/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * symbolize.h - runtime address to named frames: ELF symbol tables
 * (.symtab, .dynsym), separate debug files (build-id, .gnu_debuglink),
 * file:line and inlined frames from DWARF (libdw), C++ demangling. Results
 * are cached per (file identity, offset), so a hot stack costs a lookup.
 */
#ifndef MEMTOP_SYMBOLIZE_H
#define MEMTOP_SYMBOLIZE_H

#include <stdbool.h>
#include <sys/types.h>
#include <linux/types.h>

#include "stacks/frame.h"
#include "stacks/proc_cache.h"

struct symbolizer;

/* NULL with errno set. pc is borrowed and must outlive the symbolizer. */
struct symbolizer *symbolizer_new(struct proc_cache *pc);
void symbolizer_free(struct symbolizer *s);

/* Resolve addr of process pid. When is_return_addr, the call instruction
 * (addr - 1) is looked up, as for every frame of a stack captured after a
 * call. Writes the frame and, before it, the frames inlined at that
 * address, innermost first: out[0..n). Always returns n >= 1 when max >= 1:
 * an address that cannot be named becomes module+offset (MT_FRAME_NOSYM),
 * "[anon]"/"[jit]" (MT_FRAME_ANON) or "[unknown]" (MT_FRAME_UNMAPPED). */
int symbolizer_resolve(struct symbolizer *s, pid_t pid, __u64 addr, bool is_return_addr,
		       struct mt_frame *out, int max);

#endif /* MEMTOP_SYMBOLIZE_H */

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * frame.h - one symbolized stack frame, the unit every view and export
 * speaks. Produced by symbolize.c, stored by model.c, read by views.
 *
 * All strings are interned (strpool.c) and live as long as the process, so
 * frames can be copied by value and compared by pointer.
 */
#ifndef MEMTOP_FRAME_H
#define MEMTOP_FRAME_H

#include <linux/types.h>

enum mt_frame_flags {
	MT_FRAME_INLINED = 1 << 0,  /* an inlined call inside the next frame */
	MT_FRAME_ANON = 1 << 1,     /* anonymous or JIT memory, no file */
	MT_FRAME_NOSYM = 1 << 2,    /* file known, symbol not: module+offset */
	MT_FRAME_UNMAPPED = 1 << 3, /* address in no mapping of the process */
	MT_FRAME_PYTHON = 1 << 4,   /* an interpreter frame (CPython): function, file
				     * and line of the Python code, addr its bytecode */
	MT_FRAME_NAMED = 1 << 5,    /* named by the process's runtime (MT_EV_NAMED: a
				     * JVM's agent, V8's profiler): function, file and
				     * line as it gave them, module the runtime ("[java]",
				     * "[js]"), no address */
	MT_FRAME_POOL = 1 << 6      /* maps memory for a pool of objects the probes do
				     * not see one by one (pymalloc's arenas): the site
				     * of the mapping, function the pool's name
				     * (stacks/wrappers.h) */
};

struct mt_frame {
	__u64 addr;              /* runtime program counter */
	__u64 rel_addr;          /* file offset within module_path (pprof, stripped) */
	const char *function;    /* demangled name; NULL when unknown */
	const char *module;      /* basename of the mapped file, or "[anon]" etc. */
	const char *module_path; /* path as the target maps it; NULL if none */
	const char *build_id;    /* lowercase hex; NULL if the file has none */
	const char *file;        /* source file; NULL when unknown */
	__u32 line;              /* source line; 0 when unknown */
	__u32 flags;             /* enum mt_frame_flags */
};

#endif /* MEMTOP_FRAME_H */

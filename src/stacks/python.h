/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * python.h - CPython processes: finding the interpreter in a target, and
 * naming the interpreter frames the BPF side reads at sample time
 * (MT_EV_PY records, docs/python.md).
 *
 * The structure offsets come from CPython's own headers at build time
 * (py_offsets_gen.c), so only the major.minor version they came from is
 * read; any other version is refused with a message, never guessed.
 */
#ifndef MEMTOP_STACKS_PYTHON_H
#define MEMTOP_STACKS_PYTHON_H

#include <stddef.h>
#include <sys/types.h>
#include <linux/types.h>

#include "memtop/abi.h"
#include "stacks/frame.h"
#include "readers/proc_maps.h"

/* Look for a CPython interpreter among pid's mappings (maps): the
 * executable or a libpython that defines _PyRuntime. 0 with *out filled
 * for the BPF side and msg saying what was found ("CPython 3.11 in
 * python3.11"); -ENOENT: no interpreter (msg empty); -ENOTSUP: an
 * interpreter of another version (msg says which and what memtop reads);
 * other -errno when its file cannot be read. With api (MT_PY_API_COUNT
 * entries, NULL: not wanted), also the run-time addresses of the C API an
 * in-process sampler wraps the object allocator with (enum mt_py_api in
 * sampler_abi.h; 0 for a function the interpreter does not export). */
int python_detect(pid_t pid, const struct mt_maps *maps, struct mt_py_proc *out, __u64 *api,
		  char *msg, size_t msglen);

/* The CPython version memtop reads frames of ("3.11"). */
const char *python_supported_version(void);

struct python_names;

struct python_names *python_names_new(void);
void python_names_free(struct python_names *pn);
/* Drop what is cached for pid (it exited or exec'd). */
void python_names_forget(struct python_names *pn, pid_t pid);

/* One interpreter frame of pid as a named frame: the code object's
 * qualified name, its file, and the line of the instruction the frame is
 * at; flags MT_FRAME_PYTHON. Code objects are read from the target's
 * memory once and cached; a cached one is checked again on every use, as
 * the address of a freed code object can be reused. 0, or -errno when the
 * code object cannot be read (the frame is then "?" in "[python]"). */
int python_names_resolve(struct python_names *pn, pid_t pid, const struct mt_py_frame *pf,
			 struct mt_frame *out);

/* The source line of instruction index instr (in code units, -1 before
 * the first) from a 3.11 location table (co_linetable) of a code object
 * starting at firstlineno. Pure. The line, or firstlineno when the table
 * has no entry for instr, says "no line", or is corrupt (a line past the
 * range of int on the way). */
int python_line_for(const __u8 *table, size_t len, int firstlineno, int instr);

#endif /* MEMTOP_STACKS_PYTHON_H */

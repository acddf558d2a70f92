/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * exit_frees.h - where, in a process, its allocator frees at a thread's
 * exit blocks the program freed already (glibc empties the exiting
 * thread's tcache with free(), docs/architecture.md "Counting rules").
 * The functions are static, so they are found in the library's .symtab or
 * in its separate debug file (stacks/debuginfo.h: libc6-dbg, debuginfod
 * when a fetch finished earlier); without either there is no range, and
 * those frees are counted as the program's.
 */
#ifndef MEMTOP_PROBE_EXIT_FREES_H
#define MEMTOP_PROBE_EXIT_FREES_H

#include <sys/types.h>
#include <linux/types.h>

/* Where in its file: the inode of the library, and the file offset and
 * size of the function. */
struct exit_frees_loc {
	__u64 ino, off, size;
};

/* The first of names (NULL terminated) that lib_path (a path of the
 * library pid maps, which memtop can open) or its debug file defines
 * (looked for in pid's root). Found in the file alone, so once for a
 * process: 0, or -ENOENT when there is none (no names, no symbols, no
 * such function). */
int exit_frees_locate(pid_t pid, const char *lib_path, const char *const *names,
		      struct exit_frees_loc *loc);

/* [*lo, *hi): where loc is in pid's executable mapping of the library.
 * 0; -EAGAIN when pid is still a copy of memtop (a command held before
 * its exec, whose libc is memtop's mapping); -ESRCH when pid does not map
 * the library (a program that just exec'd, not yet); -errno of reading
 * pid's maps. Reads only pid's maps: cheap enough to ask again. */
int exit_frees_mapped(pid_t pid, const struct exit_frees_loc *loc, __u64 *lo, __u64 *hi);

#endif /* MEMTOP_PROBE_EXIT_FREES_H */

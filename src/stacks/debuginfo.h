/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * debuginfo.h - finding the separate debug file of an ELF object, as gdb
 * does: by build ID under the debug directory, then by .gnu_debuglink
 * next to the binary, in its .debug/ subdirectory, and under the debug
 * directory. Candidates are looked for in the target's root
 * (/proc/PID/root) first, then in ours; a candidate is accepted only if
 * its build ID (or, without one, the debuglink CRC) matches. Last, when
 * $DEBUGINFOD_URLS names servers, the file is fetched from them by build
 * ID, in the background.
 */
#ifndef MEMTOP_DEBUGINFO_H
#define MEMTOP_DEBUGINFO_H

#include <sys/types.h>

#include "readers/elf_file.h"

/* The debug directory searched ("/usr/lib/debug" by default), for tests
 * and for a command-line override. The string is copied. 0 or -ENOMEM. */
int debuginfo_set_debug_dir(const char *dir);

/* Open the separate debug file of ef, which pid maps at map_path (the path
 * as the target sees it; NULL to use the path ef was opened with). pid <= 0
 * searches our own root only. The caller closes the result. NULL with
 * errno = ENOENT when there is none, EAGAIN when none is here but a
 * debuginfod fetch is in flight (ask debuginfo_fetched() later). */
struct elf_file *debuginfo_find(struct elf_file *ef, pid_t pid, const char *map_path);

/* The debug file of ef fetched from debuginfod: NULL with errno = EAGAIN
 * while the fetch is in flight, ENOENT when there is none. Never waits. */
struct elf_file *debuginfo_fetched(struct elf_file *ef);

/* Open DEBUGDIR/.build-id/xx/rest.debug for the hex build_id, checking it
 * carries that build ID (also used for .gnu_debugaltlink files). NULL with
 * errno = ENOENT when there is none. */
struct elf_file *debuginfo_find_build_id(const char *build_id, pid_t pid);

#endif /* MEMTOP_DEBUGINFO_H */

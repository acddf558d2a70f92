/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * launch_alloc.h - the allocator a command will call, found before memtop
 * starts it: `memtop -- CMD` preloads the in-process sampler only when that
 * allocator is glibc's (in front of any other the sampler steps aside,
 * docs/sampler.md), and probes the other one with uprobes instead.
 */
#ifndef MEMTOP_PROBE_LAUNCH_ALLOC_H
#define MEMTOP_PROBE_LAUNCH_ALLOC_H

#include <stdbool.h>
#include <stddef.h>

/* Where malloc of the program exe (a path) binds: the executable itself,
 * or the first object the dynamic loader lists (LD_TRACE_LOADED_OBJECTS,
 * what ldd shows, with the current LD_PRELOAD) that defines it. Its path
 * goes to path, and *glibc says whether it is glibc's libc. 0, or -errno
 * (-ENOENT: nothing found, e.g. a static executable or a loader that
 * cannot trace). */
int launch_alloc_find(const char *exe, char *path, size_t len, bool *glibc);

#endif /* MEMTOP_PROBE_LAUNCH_ALLOC_H */

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * alloc_resolve.h - which allocator serves a process: the object its
 * relocations bind malloc to.
 *
 * glibc's allocator is always mapped; jemalloc or tcmalloc may be mapped
 * too, linked, preloaded or dlopen'ed. The one that serves is the first
 * object of the dynamic linker's global search order that exports malloc:
 * the executable, then LD_PRELOAD (and /etc/ld.so.preload) objects, then
 * DT_NEEDED breadth-first. A library dlopen'ed later is not in that scope
 * and serves nothing through malloc.
 */
#ifndef MEMTOP_PROBE_ALLOC_RESOLVE_H
#define MEMTOP_PROBE_ALLOC_RESOLVE_H

#include <stddef.h>
#include <sys/types.h>

#include "probe/allocators.h"
#include "stacks/proc_maps.h"

struct alloc_choice {
	const struct allocator *alloc; /* the table to probe with */
	const char *prefix;	       /* C-name prefix ("" or "je_") */
	const struct mt_map *map;      /* a mapping of the serving object (in maps) */
	int order;		       /* its place in the search order (0: the executable) */
};

/* Choose the serving allocator of pid among maps (its /proc/PID/maps).
 * 0, or -errno with one line in err: -ENOTSUP when malloc is served by an
 * object memtop has no table for (the executable's own malloc, mimalloc,
 * a static executable), -ENOENT when no object exports malloc. */
int alloc_resolve(pid_t pid, const struct mt_maps *maps, struct alloc_choice *out, char *err,
		  size_t errlen);

/* alloc_resolve() on pid's current maps, with a path for the serving
 * object that the kernel and libbpf can be given (/proc/PID/map_files/...,
 * else the object's path under /proc/PID/root). 0, or -errno with one
 * line in err. */
int alloc_resolve_pid(pid_t pid, char *path, size_t pathlen, const struct allocator **alloc,
		      const char **prefix, char *err, size_t errlen);

#endif /* MEMTOP_PROBE_ALLOC_RESOLVE_H */

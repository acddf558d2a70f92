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

#include <limits.h>
#include <stddef.h>
#include <sys/types.h>

#include "probe/allocators.h"
#include "readers/proc_maps.h"

struct alloc_found {
	const struct allocator *alloc;    /* the table to probe with; NULL: none */
	char prefix[MT_ALLOC_PREFIX_MAX]; /* its C-name prefix ("" or "je_") */
	const struct mt_map *map;         /* a mapping of the object (in maps) */
};

struct alloc_choice {
	struct alloc_found serving; /* the object malloc binds to */
	int order;                  /* its place in the search order (0: the executable) */
	/* A prefixed allocator in another object of the search order (a
	 * program that calls je_malloc of a statically linked jemalloc built
	 * with a prefix, next to glibc's malloc): its entry points have
	 * names of their own, so it is probed as well. alloc NULL: none. */
	struct alloc_found extra;
};

/* An allocator to probe in a running process. */
struct alloc_target {
	const struct allocator *alloc;    /* NULL: none */
	char prefix[MT_ALLOC_PREFIX_MAX]; /* C-name prefix */
	char path[PATH_MAX];              /* a path of the object the kernel and libbpf
					   * can be given (see alloc_resolve_pid) */
};

/* Choose the serving allocator of pid among maps (its /proc/PID/maps).
 * 0, or -errno with one line in err: -ENOTSUP when malloc is served by an
 * object memtop has no table for (the executable's own malloc, mimalloc),
 * -ENOEXEC for a static executable, -ENOENT when no object exports
 * malloc. */
int alloc_resolve(pid_t pid, const struct mt_maps *maps, struct alloc_choice *out, char *err,
		  size_t errlen);

/* alloc_resolve() on pid's current maps: the serving allocator in
 * *serving and the prefixed one beside it, if any, in *extra (alloc NULL
 * when none), each with a path that the kernel and libbpf can be given
 * (/proc/PID/map_files/..., else the object's path under /proc/PID/root).
 * 0, or -errno with one line in err. */
int alloc_resolve_pid(pid_t pid, struct alloc_target *serving, struct alloc_target *extra,
		      char *err, size_t errlen);

#endif /* MEMTOP_PROBE_ALLOC_RESOLVE_H */

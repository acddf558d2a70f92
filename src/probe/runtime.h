/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * runtime.h - the managed runtime a process runs, if any: one whose heap
 * does not come from malloc (the JVM's Java heap, V8's, pymalloc's arenas,
 * the Go heap), so memtop's allocator probes do not see most of its
 * memory; and the tool that does see that heap.
 */
#ifndef MEMTOP_PROBE_RUNTIME_H
#define MEMTOP_PROBE_RUNTIME_H

#include <sys/types.h>

struct runtime_info {
	const char *name; /* "JVM", "Node/V8", "CPython", "Go"; NULL: none found */
	const char *heap; /* what it allocates itself: "the Java heap" */
	const char *tool; /* what sees that heap */
};

/* Detect the runtime of pid from its mappings (libjvm.so, libnode, the
 * node binary, libpython or a python binary) and, for Go, its executable
 * (a .go.buildinfo section or runtime.mallocgc). out->name is NULL when
 * none is found. 0, or -errno when pid's maps cannot be read. */
int runtime_detect(pid_t pid, struct runtime_info *out);

#endif /* MEMTOP_PROBE_RUNTIME_H */

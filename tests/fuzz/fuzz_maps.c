// SPDX-License-Identifier: GPL-2.0-only
/*
 * fuzz_maps.c - libFuzzer harness for the /proc/PID/maps parser
 * (src/readers/proc_maps.c). The input is the text of a maps file, as a
 * target shapes it with its mappings and file names. Checks the parser's
 * contract on every accepted input: ranges non-empty, sorted and
 * disjoint, permissions from the four allowed letters, paths without a
 * NUL, and proc_maps_find() agreeing with a linear scan.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "readers/proc_maps.h"

static const struct mt_map *find_linear(const struct mt_maps *m, __u64 addr)
{
	for (size_t i = 0; i < m->n; i++)
		if (addr >= m->v[i].start && addr < m->v[i].end)
			return &m->v[i];
	return NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mt_maps m;

	if (proc_maps_parse((const char *)data, size, &m))
		return 0;
	for (size_t i = 0; i < m.n; i++) {
		const struct mt_map *e = &m.v[i];
		__u64 probes[] = { e->start, e->end - 1, e->end, e->start - 1,
				   e->start + (e->end - e->start) / 2 };

		if (e->start >= e->end || (i && e->start < m.v[i - 1].end))
			abort();
		if (strlen(e->perms) != 4 || strspn(e->perms, "rwxps-") != 4)
			abort();
		if (e->path && !*e->path && !e->deleted)
			abort(); /* an empty path is no path */
		for (size_t k = 0; k < sizeof(probes) / sizeof(probes[0]); k++)
			if (proc_maps_find(&m, probes[k]) != find_linear(&m, probes[k]))
				abort();
	}
	proc_maps_free(&m);
	return 0;
}

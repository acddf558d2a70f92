// SPDX-License-Identifier: GPL-2.0-only
/*
 * libhostile.c - the shared library a hostile target (hostile.c) maps and
 * then tampers with: its one exported function allocates, so memtop's
 * samples have a frame inside this library and memtop must open the file
 * behind the mapping to name it.
 */
#include <stdlib.h>
#include <string.h>

__attribute__((noipa)) void *hostile_lib_alloc(size_t n)
{
	char *p = malloc(n);

	if (p)
		memset(p, 1, 64);
	return p;
}

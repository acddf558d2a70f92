// SPDX-License-Identifier: GPL-2.0-only
/*
 * libhostile.c - the shared library a hostile target (hostile.c) maps and
 * then tampers with: its one exported function allocates, so memtop's
 * samples have a frame inside this library and memtop must open the file
 * behind the mapping to name it; its stub allocates from raw mappings of
 * the file.
 */
#include <stdlib.h>
#include <string.h>

/* void *hostile_lib_stub(size_t n, void *(*alloc)(size_t)): alloc(n), from
 * code that needs no relocation, so it runs from any mapping of this file
 * (hostile.c --lib-maps maps the file itself many times). */
__asm__(".text\n"
	".globl hostile_lib_stub\n"
	".type hostile_lib_stub, @function\n"
	"hostile_lib_stub:\n"
	"	sub $8, %rsp\n"
	"	call *%rsi\n"
	"	add $8, %rsp\n"
	"	ret\n"
	".size hostile_lib_stub, .-hostile_lib_stub\n");

__attribute__((noipa)) void *hostile_lib_alloc(size_t n)
{
	char *p = malloc(n);

	if (p)
		memset(p, 1, 64);
	return p;
}

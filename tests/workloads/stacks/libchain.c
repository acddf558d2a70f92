/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * libchain.c - built as libchain.so: the inner two levels of the chain
 * main -> app_level1 -> app_level2 -> lib_level3 -> lib_level4_leak ->
 * malloc. Every block is leaked (kept only through a volatile pointer).
 */
#include "libchain.h"
#include "stacks_common.h"

volatile unsigned long stk_after_call;
static void *volatile lib_sink;

STK_FN void *lib_level4_leak(unsigned long size)
{
	char *p = malloc(size);

	if (!p)
		_exit(4);
	memset(p, 0x5a, size);
	lib_sink = p;
	return p;
}

STK_FN void *lib_level3(unsigned long size)
{
	void *p = lib_level4_leak(size);

	stk_after_call++;
	return p;
}

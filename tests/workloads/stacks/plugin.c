/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * plugin.c - built as libplugin.so and dlopen()ed by dlopen_main after the
 * trigger: plugin_entry -> plugin_leak_site -> malloc leaks `size` bytes.
 */
#include "stacks_common.h"

volatile unsigned long stk_after_call;
static void *volatile plugin_sink;

STK_FN void *plugin_leak_site(unsigned long size)
{
	char *p = malloc(size);

	if (!p)
		_exit(4);
	memset(p, 0x5a, size);
	plugin_sink = p;
	return p;
}

STK_FN void *plugin_entry(unsigned long size)
{
	void *p = plugin_leak_site(size);

	stk_after_call++;
	return p;
}

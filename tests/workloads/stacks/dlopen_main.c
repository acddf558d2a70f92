/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * dlopen_main.c - loads a library only after the trigger: argv[1] is the
 * path of libplugin.so, dlopen()ed when the trigger byte arrives (so after
 * memtop attached); then every STK_PERIOD_S main -> host_call_plugin ->
 * plugin_entry -> plugin_leak_site -> malloc. Protocol: stacks_common.h.
 */
#include <dlfcn.h>

#include "stacks_common.h"

volatile unsigned long stk_after_call;

typedef void *plugin_fn(unsigned long size);

STK_FN static void *host_call_plugin(plugin_fn *entry, unsigned long size)
{
	void *p = entry(size);

	stk_after_call++;
	return p;
}

int main(int argc, char **argv)
{
	double secs = 4, end;
	plugin_fn *entry;
	void *handle;

	if (argc < 2) {
		stk_say("usage: dlopen_main LIBRARY [--seconds=SECS]\n");
		return 2;
	}
	secs = stk_seconds(argc - 1, argv + 1);
	stk_ready_and_wait();
	handle = dlopen(argv[1], RTLD_NOW);
	if (!handle) {
		stk_say("dlopen failed\n");
		_exit(5);
	}
	entry = (plugin_fn *)dlsym(handle, "plugin_entry");
	if (!entry) {
		stk_say("dlsym failed\n");
		_exit(5);
	}
	end = stk_now() + secs;
	while (stk_now() < end) {
		host_call_plugin(entry, STK_LEAK_SIZE);
		stk_sleep(STK_PERIOD_S);
	}
	stk_done();
	return 0;
}

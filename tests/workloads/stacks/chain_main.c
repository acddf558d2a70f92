/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * chain_main.c - the chain workload: every STK_PERIOD_S, main ->
 * app_level1 -> app_level2 -> lib_level3 (libchain.so) -> lib_level4_leak
 * (libchain.so) -> malloc leaks STK_LEAK_SIZE bytes. Protocol:
 * stacks_common.h.
 */
#include "libchain.h"
#include "stacks_common.h"

STK_FN void *app_level2(unsigned long size)
{
	void *p = lib_level3(size);

	stk_after_call++;
	return p;
}

STK_FN void *app_level1(unsigned long size)
{
	void *p = app_level2(size);

	stk_after_call++;
	return p;
}

int main(int argc, char **argv)
{
	double secs = stk_seconds(argc, argv), end;

	stk_ready_and_wait();
	end = stk_now() + secs;
	while (stk_now() < end) {
		app_level1(STK_LEAK_SIZE);
		stk_sleep(STK_PERIOD_S);
	}
	stk_done();
	return 0;
}

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * group_main.c - sites for --group: every STK_PERIOD_S, main calls
 * caller_alpha and caller_beta, which both call leak_common (one malloc
 * line, two stacks), and leak_two_lines, which allocates on two lines
 * (marked GROUP_LINE_MALLOC and GROUP_LINE_CALLOC) of one function.
 * Protocol: stacks_common.h.
 */
#include "stacks_common.h"

volatile unsigned long stk_after_call;
static void *volatile group_sink;

STK_FN static void *leak_common(unsigned long size)
{
	char *p = malloc(size);

	if (!p)
		_exit(4);
	memset(p, 0x5a, size);
	group_sink = p;
	return p;
}

STK_FN static void *caller_alpha(unsigned long size)
{
	void *p = leak_common(size);

	stk_after_call++;
	return p;
}

STK_FN static void *caller_beta(unsigned long size)
{
	void *p = leak_common(size);

	stk_after_call++;
	return p;
}

STK_FN static void *leak_two_lines(unsigned long i, unsigned long size)
{
	char *p;

	if (i & 1)
		p = malloc(size); /* GROUP_LINE_MALLOC */
	else
		p = calloc(1, size); /* GROUP_LINE_CALLOC */
	if (!p)
		_exit(4);
	memset(p, 0x5a, size);
	group_sink = p;
	return p;
}

int main(int argc, char **argv)
{
	double secs = stk_seconds(argc, argv), end;

	stk_ready_and_wait();
	end = stk_now() + secs;
	for (unsigned long i = 0; stk_now() < end; i++) {
		caller_alpha(STK_LEAK_SIZE);
		caller_beta(STK_LEAK_SIZE);
		leak_two_lines(i, STK_LEAK_SIZE);
		stk_sleep(STK_PERIOD_S);
	}
	stk_done();
	return 0;
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * busy_lib.c - built as libbusy.so by tests/integration/test_backoff.py:
 * the leak of the busy_leak workload, three library frames deep:
 * busy_lib_store -> busy_lib_record -> busy_lib_leak -> malloc. Every
 * block is kept forever (through a volatile pointer).
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "busy_lib.h"

#define BUSY_SITE __attribute__((noipa))

static void *volatile busy_lib_sink;
volatile unsigned long busy_lib_calls;

BUSY_SITE void *busy_lib_leak(unsigned long size)
{
	char *p = malloc(size);

	if (!p)
		_exit(4);
	memset(p, 0x5a, size);
	busy_lib_sink = p;
	return p;
}

BUSY_SITE void *busy_lib_record(unsigned long size)
{
	void *p = busy_lib_leak(size);

	busy_lib_calls++;
	return p;
}

BUSY_SITE void *busy_lib_store(unsigned long size)
{
	void *p = busy_lib_record(size);

	busy_lib_calls++;
	return p;
}

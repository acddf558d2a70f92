// SPDX-License-Identifier: GPL-2.0-only
/*
 * fuzz_pyline.c - libFuzzer harness for the CPython 3.11 location-table
 * decoder (src/stacks/python.c, python_line_for): co_linetable and
 * co_firstlineno are read from the target's memory, the instruction index
 * from its frame. Input: firstlineno and instr as 32-bit little-endian
 * ints, then the table (at most the 64 KiB memory reads it). Checks that
 * instr < 0 gives firstlineno, and that the table is only read inside its
 * length (the harness hands it in a buffer of exactly that size).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "stacks/python.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int32_t first, instr;
	__u8 *table;
	size_t len;

	if (size < 8 || size - 8 > 65536)
		return 0;
	memcpy(&first, data, 4);
	memcpy(&instr, data + 4, 4);
	len = size - 8;
	table = malloc(len ? len : 1);
	if (!table)
		abort();
	memcpy(table, data + 8, len);
	python_line_for(table, len, first, instr);
	for (int k = 0; k < 64; k += 7)
		python_line_for(table, len, first, k);
	if (python_line_for(table, len, first, -1) != first)
		abort();
	free(table);
	return 0;
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_python_lines.c - python_line_for() (stacks/python.c) against the
 * location tables CPython 3.11 itself compiled: for every code unit of
 * several functions (branches, a comprehension, try/except, a 300-line
 * gap that needs the long form, a line continuation) the line must equal
 * the one code.co_lines() gives. The fixture was written by CPython
 * (tests/fixtures/python/linetables-3.11.txt, see its first line).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stacks/python.h"

#define FIXTURE "tests/fixtures/python/linetables-3.11.txt"

static void test_fixture_tables(void **state)
{
	FILE *f = fopen(FIXTURE, "re");
	char line[8192], name[128], hex[4096];
	__u8 table[2048];
	size_t tlen = 0;
	int first = 0, codes = 0, units = 0;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		int idx, want;

		if (line[0] == '#')
			continue;
		if (sscanf(line, "code %127s %d %4095s", name, &first, hex) == 3) {
			size_t i;

			tlen = strlen(hex) / 2;
			assert_true(tlen <= sizeof(table));
			for (i = 0; i < tlen; i++) {
				unsigned int b;

				assert_int_equal(sscanf(hex + 2 * i, "%2x", &b), 1);
				table[i] = (__u8)b;
			}
			codes++;
			continue;
		}
		assert_int_equal(sscanf(line, "%d %d", &idx, &want), 2);
		if (python_line_for(table, tlen, first, idx) != want)
			fail_msg("%s: code unit %d: line %d, CPython says %d", name, idx,
				 python_line_for(table, tlen, first, idx), want);
		units++;
	}
	fclose(f);
	assert_true(codes >= 4);
	assert_true(units >= 100);
}

static void test_edges(void **state)
{
	static const __u8 one[] = { 0x80 | (13 << 3) | 0, 0x04 }; /* +2 lines, 1 unit */

	/* before the first instruction, an empty table, past the end: the
	 * first line */
	assert_int_equal(python_line_for(one, sizeof(one), 10, -1), 10);
	assert_int_equal(python_line_for(NULL, 0, 10, 5), 10);
	assert_int_equal(python_line_for(one, sizeof(one), 10, 0), 12);
	assert_int_equal(python_line_for(one, sizeof(one), 10, 7), 10);
	/* a table that does not start an entry is not trusted */
	assert_int_equal(python_line_for((const __u8 *)"\x01\x02", 2, 10, 0), 10);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fixture_tables),
		cmocka_unit_test(test_edges),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

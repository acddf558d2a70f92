// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_legend.c - the legend of the live view: every row is one line that
 * fits an 80-column help page next to its field, and docs/tui.md lists
 * every row in the same words ("| `field` | meaning |"). With --print, it
 * prints those lines, to paste into the docs.
 */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "ui/tui/legend.h"

static void row_markdown(const struct legend_row *r, char *buf, size_t len)
{
	snprintf(buf, len, "| `%s` | %s |", r->field, r->meaning);
}

static void test_rows_fit(void **state)
{
	assert_true(legend_rows_len > 20);
	assert_non_null(legend_rows[0].section);
	for (size_t i = 0; i < legend_rows_len; i++) {
		assert_non_null(legend_rows[i].field);
		assert_non_null(legend_rows[i].meaning);
		assert_true(strlen(legend_rows[i].field) <= 18);
		/* FIELD_COL is 20: the meaning fits the other 60 columns */
		assert_true(strlen(legend_rows[i].meaning) <= 80 - 20);
		assert_null(strchr(legend_rows[i].meaning, '\n'));
	}
}

static char *read_docs(void)
{
	char exe[PATH_MAX], path[PATH_MAX + 32];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	FILE *f = NULL;
	char *buf;
	long len;

	if (n > 0) {
		exe[n] = '\0';
		if (strrchr(exe, '/'))
			*strrchr(exe, '/') = '\0';
		snprintf(path, sizeof(path), "%s/../../docs/tui.md", exe);
		f = fopen(path, "r");
	}
	if (!f)
		f = fopen("docs/tui.md", "r");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	rewind(f);
	buf = calloc(1, len + 1);
	if (buf && fread(buf, 1, len, f) != (size_t)len) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

static void test_docs_list_rows(void **state)
{
	char *doc = read_docs();

	assert_non_null(doc);
	for (size_t i = 0; i < legend_rows_len; i++) {
		char line[256];

		row_markdown(&legend_rows[i], line, sizeof(line));
		if (!strstr(doc, line))
			fail_msg("docs/tui.md lacks the legend row: %s", line);
	}
	free(doc);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows_fit),
		cmocka_unit_test(test_docs_list_rows),
	};

	if (argc > 1 && strcmp(argv[1], "--print") == 0) {
		for (size_t i = 0; i < legend_rows_len; i++) {
			char line[256];

			if (legend_rows[i].section)
				printf("\n### %s\n\n| Field | Meaning |\n|-------|---------|\n",
				       legend_rows[i].section);
			row_markdown(&legend_rows[i], line, sizeof(line));
			printf("%s\n", line);
		}
		return 0;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}

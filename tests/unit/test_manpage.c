// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_manpage.c - memtop(1) is generated from the tables: every option
 * of --help, every row of the key table and every legend field is on the
 * page, hyphens of option names are roff minus signs, and no text line
 * starts with a roff control character by accident.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cli.h"
#include "manpage.h"
#include "ui/tui/keys.h"
#include "ui/tui/legend.h"

static char *page(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(manpage_write(f), 0);
	fclose(f);
	return buf;
}

/* s as manpage.c escapes text: '-' as "\-" when minus. */
static void escaped(char *out, size_t len, const char *s, bool minus)
{
	size_t n = 0;

	for (; *s && n + 3 < len; s++) {
		if (*s == '\\') {
			out[n++] = '\\';
			out[n++] = 'e';
		} else if (*s == '-' && minus) {
			out[n++] = '\\';
			out[n++] = '-';
		} else {
			out[n++] = *s;
		}
	}
	out[n] = '\0';
}

static void test_options(void **state)
{
	char *man = page(), want[256], name[128];
	struct cli_option_info o;
	size_t i;

	assert_non_null(strstr(man, ".TH MEMTOP 1 "));
	for (i = 0; cli_option_at(i, &o); i++) {
		escaped(want, sizeof(want), o.help, false);
		if (!strstr(man, want))
			fail_msg("the man page lacks the help of option %zu: %s", i, o.help);
		if (!o.long_name)
			continue;
		escaped(name, sizeof(name), o.long_name, true);
		snprintf(want, sizeof(want), "\\fB\\-\\-%s\\fR", name);
		if (!strstr(man, want))
			fail_msg("the man page lacks --%s", o.long_name);
	}
	assert_true(i > 20);
	free(man);
}

static void test_keys_and_legend(void **state)
{
	char *man = page(), want[256];

	assert_non_null(strstr(man, ".SH KEYS\n"));
	for (size_t i = 0; i < key_table_len; i++) {
		escaped(want, sizeof(want), key_table[i].help, false);
		if (!strstr(man, want))
			fail_msg("the man page lacks the key row: %s", key_table[i].help);
	}
	for (size_t i = 0; i < legend_rows_len; i++) {
		escaped(want, sizeof(want), legend_rows[i].meaning, false);
		assert_non_null(strstr(man, want));
	}
	free(man);
}

static void test_roff_safe(void **state)
{
	char *man = page(), *save = NULL;

	for (char *l = strtok_r(man, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		if (l[0] != '.' && l[0] != '\'')
			continue;
		/* requests and macros only: a letter or \" after the dot */
		if (!((l[1] >= 'A' && l[1] <= 'Z') || (l[1] >= 'a' && l[1] <= 'z') ||
		      (l[1] == '\\' && l[2] == '"')))
			fail_msg("a text line reads as a roff request: %s", l);
	}
	free(man);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_options),
		cmocka_unit_test(test_keys_and_legend),
		cmocka_unit_test(test_roff_safe),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

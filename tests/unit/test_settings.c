// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_settings.c - the live view's settings file: text in and out round
 * trip, a bad line changes nothing and is named, the path follows
 * XDG_CONFIG_HOME then HOME, and save creates the directory and load reads
 * back what was saved.
 */
#include <errno.h>
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

#include "ui/tui/settings.h"

static void test_round_trip(void **state)
{
	struct mt_settings s, r;
	char err[256] = "", text[4096];

	settings_init(&s);
	assert_int_equal(settings_parse(&s,
					"# comment\n\nsort = in-use\ninvert = yes\n"
					"group = line\ntheme = light\ninterval = 2.5\n"
					"hidden_columns = OBJ/s AGE\n  export_dir =  /var/tmp  \n"
					"inject = never\n",
					"t", err, sizeof(err)),
			 0);
	assert_int_equal(s.inject, MT_INJECT_NEVER);
	assert_string_equal(s.sort, "in-use");
	assert_int_equal(s.invert, 1);
	assert_int_equal(s.group, MT_GROUP_LINE);
	assert_string_equal(s.theme, "light");
	assert_true(s.interval_s == 2.5);
	assert_true(s.have_hidden);
	assert_string_equal(s.hidden_columns, "OBJ/s AGE");
	assert_string_equal(s.export_dir, "/var/tmp");
	assert_true(settings_format(&s, text, sizeof(text)) < (int)sizeof(text));
	settings_init(&r);
	assert_int_equal(settings_parse(&r, text, "t", err, sizeof(err)), 0);
	assert_memory_equal(&r, &s, sizeof(s));
	/* nothing set: nothing written but the comment */
	settings_init(&s);
	settings_format(&s, text, sizeof(text));
	assert_null(strchr(text, '='));
}

static void test_errors(void **state)
{
	static const struct {
		const char *text, *msg;
	} bad[] = {
		{ "sort = leak\nbogus = 1\n", "t:2: unknown setting" },
		{ "group = tree\n", "t:1: group is function, line or stack" },
		{ "inject = yes\n", "t:1: inject is auto, never or always" },
		{ "interval = 0\n", "t:1: interval is 0.05 to 3600 seconds" },
		{ "interval = 1,5\n", "t:1: interval is 0.05 to 3600 seconds" },
		{ "invert = maybe\n", "t:1: invert is yes or no" },
		{ "\n\nno equals sign\n", "t:3: expected 'name = value'" },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct mt_settings s, before;
		char err[256] = "";

		settings_init(&s);
		s.invert = 0;
		before = s;
		assert_int_equal(settings_parse(&s, bad[i].text, "t", err, sizeof(err)), -EINVAL);
		assert_string_equal(err, bad[i].msg);
		assert_memory_equal(&s, &before, sizeof(s)); /* all or nothing */
	}
}

static void test_path_save_load(void **state)
{
	char dir[] = "/tmp/memtop-settings-XXXXXX", path[PATH_MAX], want[PATH_MAX + 64];
	char err[256] = "";
	struct mt_settings s, r;

	assert_non_null(mkdtemp(dir));
	setenv("HOME", dir, 1);
	unsetenv("XDG_CONFIG_HOME");
	assert_int_equal(settings_path(path, sizeof(path)), 0);
	snprintf(want, sizeof(want), "%s/.config/memtop/memtoprc", dir);
	assert_string_equal(path, want);
	settings_init(&r);
	assert_int_equal(settings_load(&r, path, err, sizeof(err)), -ENOENT);

	settings_init(&s);
	snprintf(s.sort, sizeof(s.sort), "leak");
	s.group = MT_GROUP_STACK;
	s.interval_s = 0.5;
	assert_int_equal(settings_save(&s, path, err, sizeof(err)), 0);
	assert_int_equal(settings_load(&r, path, err, sizeof(err)), 0);
	assert_memory_equal(&r, &s, sizeof(s));

	setenv("XDG_CONFIG_HOME", "/nonexistent/xdg", 1);
	assert_int_equal(settings_path(path, sizeof(path)), 0);
	assert_string_equal(path, "/nonexistent/xdg/memtop/memtoprc");
	unsetenv("XDG_CONFIG_HOME");
	unsetenv("HOME");
	assert_int_equal(settings_path(path, sizeof(path)), -ENOENT);

	snprintf(want, sizeof(want), "rm -rf '%s'", dir);
	assert_int_equal(system(want), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_path_save_load),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

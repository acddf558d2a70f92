// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_theme.c - the theme parser and loader: the shipped themes parse and
 * cover every element (default and mono restate the built-ins), malformed
 * files get a message naming the line and change nothing, colour reduction
 * for 16- and 8-colour terminals, lookup by name and by path, and random
 * bytes never crash the parser.
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
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "ui/tui/theme.h"

static char themes_dir[PATH_MAX];

/* themes/ of the source tree, found from the binary (build/tests/) or the
 * current directory. */
static int find_themes(void **state)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n > 0) {
		char *slash;

		exe[n] = '\0';
		slash = strrchr(exe, '/');
		if (slash)
			*slash = '\0';
		snprintf(themes_dir, sizeof(themes_dir), "%.*s/../../themes", PATH_MAX - 20, exe);
		if (access(themes_dir, R_OK) == 0)
			return 0;
	}
	snprintf(themes_dir, sizeof(themes_dir), "themes");
	return access(themes_dir, R_OK) == 0 ? 0 : -1;
}

/* A theme no file would produce, to see which elements a file sets. */
static void poison(struct theme *t)
{
	for (int i = 0; i < THEME_COUNT; i++)
		t->style[i] = (struct theme_style){ 99, 99, 0xffff };
}

static void parse_shipped(const char *name, struct theme *t)
{
	char path[PATH_MAX + 32], err[256] = "";

	snprintf(path, sizeof(path), "%s/%s.theme", themes_dir, name);
	poison(t);
	if (theme_parse_file(t, path, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	for (int i = 0; i < THEME_COUNT; i++)
		if (t->style[i].attrs == 0xffff)
			fail_msg("%s does not set '%s'", path, theme_elem_name(i));
}

static void test_shipped_match_builtins(void **state)
{
	struct theme file, builtin;

	parse_shipped("default", &file);
	theme_builtin_default(&builtin);
	assert_memory_equal(&file, &builtin, sizeof(file));
	parse_shipped("mono", &file);
	theme_builtin_mono(&builtin);
	assert_memory_equal(&file, &builtin, sizeof(file));
	/* Mono means no colour at all. */
	for (int i = 0; i < THEME_COUNT; i++) {
		assert_int_equal(builtin.style[i].fg, THEME_DEFAULT_COLOR);
		assert_int_equal(builtin.style[i].bg, THEME_DEFAULT_COLOR);
	}
}

static void test_shipped_others_complete(void **state)
{
	struct theme t;

	parse_shipped("light", &t);
	parse_shipped("high-contrast", &t);
	/* The cursor row must stand out from plain rows in every theme. */
	assert_true(t.style[THEME_ROW_SELECTED].bg != t.style[THEME_NORMAL].bg ||
		    t.style[THEME_ROW_SELECTED].attrs != t.style[THEME_NORMAL].attrs);
}

static void test_element_names(void **state)
{
	for (int i = 0; i < THEME_COUNT; i++) {
		assert_non_null(theme_elem_name(i));
		assert_non_null(theme_elem_help(i));
		for (int j = 0; j < i; j++)
			assert_string_not_equal(theme_elem_name(i), theme_elem_name(j));
	}
	assert_null(theme_elem_name(THEME_COUNT));
	assert_null(theme_elem_name(-1));
}

/* docs/themes.md documents every element. */
static void test_docs_list_elements(void **state)
{
	char path[PATH_MAX + 32], *doc;
	FILE *f;
	long n;

	snprintf(path, sizeof(path), "%s/../docs/themes.md", themes_dir);
	f = fopen(path, "r");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	doc = calloc(1, n + 1);
	assert_int_equal(fread(doc, 1, n, f), n);
	fclose(f);
	for (int i = 0; i < THEME_COUNT; i++) {
		char cell[64];

		snprintf(cell, sizeof(cell), "`%s`", theme_elem_name(i));
		if (!strstr(doc, cell))
			fail_msg("docs/themes.md does not list %s", cell);
	}
	free(doc);
}

/* Every theme file in themes/ is readable in every element, the cursor
 * row's included: no foreground equal to its background in 256, 16 or 8
 * colours, and explicit pairs at least 3:1 apart (WCAG, large text). */
static void test_contrast(void **state)
{
	DIR *d = opendir(themes_dir);
	struct dirent *e;
	int files = 0;

	assert_non_null(d);
	while ((e = readdir(d))) {
		size_t n = strlen(e->d_name);
		struct theme t;
		char name[256];

		if (n < 7 || strcmp(e->d_name + n - 6, ".theme") != 0)
			continue;
		snprintf(name, sizeof(name), "%.*s", (int)(n - 6), e->d_name);
		parse_shipped(name, &t);
		files++;
		for (int i = 0; i < THEME_COUNT; i++) {
			const struct theme_style *st = &t.style[i];
			double c = theme_contrast(st->fg, st->bg);

			if (st->fg >= 0 && st->bg >= 0 && c < 3.0)
				fail_msg("%s: %s has contrast %.2f:1 (< 3:1)", e->d_name,
					 theme_elem_name(i), c);
			static const int ncolors[] = { 8, 16, 256 };

			for (int k = 0; k < 3; k++) {
				int nc = ncolors[k];
				int fg = theme_color_reduce(st->fg, nc, NULL);
				int bg = theme_color_reduce(st->bg, nc, NULL);

				if (fg >= 0 && fg == bg)
					fail_msg("%s: %s is colour %d on itself with %d colours",
						 e->d_name, theme_elem_name(i), fg, nc);
			}
		}
	}
	closedir(d);
	assert_true(files >= 4);
}

/* The contrast ratio itself: black on white is 21:1, a colour on itself 1:1. */
static void test_contrast_ratio(void **state)
{
	assert_true(theme_contrast(0, 15) > 20.9 && theme_contrast(0, 15) < 21.1);
	assert_true(theme_contrast(15, 0) > 20.9);
	assert_true(theme_contrast(4, 4) > 0.99 && theme_contrast(4, 4) < 1.01);
	assert_true(theme_contrast(-1, 4) == 0);
	/* yellow on cyan, the kind of pair the cursor row used to make */
	assert_true(theme_contrast(3, 6) < 3.0);
}

static void test_syntax(void **state)
{
	static const char text[] = "# a comment\n"
				   "\n"
				   "   normal = red , blue\r\n"
				   "header=#ff0000,#000000 # trailing comment\n"
				   "title = 208, default, bold underline, reverse\n"
				   "dim = grey, none, normal\n"
				   "warning = bright_yellow\n";
	struct theme t;
	char err[256] = "";

	theme_builtin_default(&t);
	assert_int_equal(theme_parse(&t, text, strlen(text), "x.theme", err, sizeof(err)), 0);
	assert_int_equal(t.style[THEME_NORMAL].fg, 1);
	assert_int_equal(t.style[THEME_NORMAL].bg, 4);
	assert_int_equal(t.style[THEME_NORMAL].attrs, 0);
	assert_int_equal(t.style[THEME_HEADER].fg, 196); /* #ff0000 in the 256 cube */
	assert_int_equal(t.style[THEME_HEADER].bg, 16);
	assert_int_equal(t.style[THEME_TITLE].fg, 208);
	assert_int_equal(t.style[THEME_TITLE].bg, THEME_DEFAULT_COLOR);
	assert_int_equal(t.style[THEME_TITLE].attrs,
			 THEME_A_BOLD | THEME_A_UNDERLINE | THEME_A_REVERSE);
	assert_int_equal(t.style[THEME_DIM].fg, 8);
	assert_int_equal(t.style[THEME_WARNING].fg, 11);
	assert_int_equal(t.style[THEME_WARNING].bg, THEME_DEFAULT_COLOR);
	/* Elements the text does not name keep their value. */
	{
		struct theme d;

		theme_builtin_default(&d);
		assert_memory_equal(&t.style[THEME_FLAME_1], &d.style[THEME_FLAME_1],
				    sizeof(d.style[0]));
	}
	/* Empty text is a valid, empty theme. */
	assert_int_equal(theme_parse(&t, "", 0, "empty", err, sizeof(err)), 0);
}

static void expect_error(const char *text, const char *msg)
{
	struct theme t, before;
	char err[256] = "";

	theme_builtin_default(&t);
	before = t;
	assert_int_equal(theme_parse(&t, text, strlen(text), "bad.theme", err, sizeof(err)), -EINVAL);
	if (!strstr(err, msg))
		fail_msg("for %s: got '%s', want '%s'", text, err, msg);
	/* All or nothing: the good lines before the bad one are not applied. */
	assert_memory_equal(&t, &before, sizeof(t));
}

static void test_malformed(void **state)
{
	expect_error("normal = red, blue\nheader red\n", "bad.theme:2: expected 'element =");
	expect_error("normal = red\n\n# c\nheder = red, blue\n",
		     "bad.theme:4: unknown element 'heder'");
	expect_error("normal = purpel, blue\n", "bad.theme:1: unknown colour 'purpel'");
	expect_error("normal = red, 256\n", "bad.theme:1: colour 256 out of range");
	expect_error("normal = red, -3\n", "bad.theme:1: unknown colour '-3'");
	expect_error("normal = #12345\n", "bad.theme:1: unknown colour '#12345'");
	expect_error("normal = #12345g\n", "bad.theme:1: unknown colour '#12345g'");
	expect_error("normal = red, blue, bold, shiny\n", "bad.theme:1: unknown attribute 'shiny'");
	expect_error("normal =\n", "bad.theme:1: 'normal' has no value");
	expect_error("= red\n", "bad.theme:1: missing element name");
	expect_error("normal = red,,bold\n", "bad.theme:1: empty field 2");
	expect_error("normal = 99999999999999999999\n", "bad.theme:1: unknown colour");
	{
		char text[700];

		memset(text, 'x', sizeof(text) - 1);
		text[sizeof(text) - 1] = '\0';
		expect_error(text, "bad.theme:1: line longer than");
	}
	{
		struct theme t;
		char err[128];

		theme_builtin_default(&t);
		assert_int_equal(theme_parse(&t, "a\0b", 3, "nul.theme", err, sizeof(err)), -EINVAL);
		assert_non_null(strstr(err, "nul.theme: not a text file"));
		/* A tiny error buffer truncates, never overflows. */
		assert_int_equal(theme_parse(&t, "x\n", 2, "long-name.theme", err, 5), -EINVAL);
		assert_int_equal(strlen(err), 4);
	}
}

static void test_color_reduce(void **state)
{
	bool bright;

	assert_int_equal(theme_color_reduce(196, 256, &bright), 196);
	assert_false(bright);
	assert_int_equal(theme_color_reduce(196, 16, &bright), 9);
	assert_int_equal(theme_color_reduce(196, 8, &bright), 1);
	assert_true(bright);
	assert_int_equal(theme_color_reduce(1, 8, &bright), 1);
	assert_false(bright);
	assert_int_equal(theme_color_reduce(12, 8, &bright), 4);
	assert_true(bright);
	assert_int_equal(theme_color_reduce(12, 16, &bright), 12);
	assert_int_equal(theme_color_reduce(232, 16, NULL), 0);  /* near black */
	assert_int_equal(theme_color_reduce(231, 16, NULL), 15); /* white */
	assert_int_equal(theme_color_reduce(255, 16, NULL), 7);  /* light grey */
	assert_int_equal(theme_color_reduce(244, 16, NULL), 8);  /* mid grey */
	assert_int_equal(theme_color_reduce(208, 8, NULL), 3);   /* orange: yellow */
	assert_int_equal(theme_color_reduce(7, 88, NULL), 7);
	assert_int_equal(theme_color_reduce(-1, 256, NULL), -1);
	assert_int_equal(theme_color_reduce(3, 2, NULL), -1);
	assert_int_equal(theme_color_reduce(3, 0, NULL), -1);
	assert_int_equal(theme_color_reduce(300, 256, NULL), -1);
	/* Every colour lands in range on every terminal size. */
	for (int c = 0; c < 256; c++) {
		assert_in_range(theme_color_reduce(c, 8, NULL), 0, 7);
		assert_in_range(theme_color_reduce(c, 16, NULL), 0, 15);
	}
}

static char tmpdir[64];

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static int make_tmp(void **state)
{
	char p[PATH_MAX];

	snprintf(tmpdir, sizeof(tmpdir), "/tmp/test_theme.XXXXXX");
	if (!mkdtemp(tmpdir))
		return -1;
	snprintf(p, sizeof(p), "%s/bin", tmpdir);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/themes", tmpdir);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/themes/ocean.theme", tmpdir);
	write_file(p, "normal = blue, default\n");
	snprintf(p, sizeof(p), "%s/themes/broken.theme", tmpdir);
	write_file(p, "# ok\nnormal = blue, default\ntable_header = black, gren\n");
	snprintf(p, sizeof(p), "%s/themes/mono.theme", tmpdir);
	write_file(p, "title = default, default, italic\n");
	return 0;
}

static int rm_tmp(void **state)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

static void test_resolve(void **state)
{
	char exe[PATH_MAX], path[PATH_MAX], err[512], want[PATH_MAX];

	unsetenv("MEMTOP_THEME_DIR");
	snprintf(exe, sizeof(exe), "%s/bin/memtop", tmpdir);
	assert_int_equal(theme_resolve("ocean", exe, path, sizeof(path), err, sizeof(err)), 0);
	snprintf(want, sizeof(want), "%s/bin/../themes/ocean.theme", tmpdir);
	assert_string_equal(path, want);
	/* Paths are taken as given. */
	assert_int_equal(theme_resolve("./x.theme", exe, path, sizeof(path), err, sizeof(err)), 0);
	assert_string_equal(path, "./x.theme");
	assert_int_equal(theme_resolve("my.theme", NULL, path, sizeof(path), err, sizeof(err)), 0);
	assert_string_equal(path, "my.theme");
	/* Not found: the message says where it looked. */
	assert_int_equal(theme_resolve("nosuch", exe, path, sizeof(path), err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "theme 'nosuch' not found in"));
	assert_non_null(strstr(err, "/usr/share/memtop/themes"));
	assert_int_equal(theme_resolve("a b", exe, path, sizeof(path), err, sizeof(err)), -EINVAL);
	assert_int_equal(theme_resolve("", exe, path, sizeof(path), err, sizeof(err)), -EINVAL);
	assert_int_equal(theme_resolve(".hidden", exe, path, sizeof(path), err, sizeof(err)),
			 -EINVAL);
	/* $MEMTOP_THEME_DIR comes first. */
	snprintf(want, sizeof(want), "%s/themes", tmpdir);
	setenv("MEMTOP_THEME_DIR", want, 1);
	assert_int_equal(theme_resolve("ocean", NULL, path, sizeof(path), err, sizeof(err)), 0);
	snprintf(want, sizeof(want), "%s/themes/ocean.theme", tmpdir);
	assert_string_equal(path, want);
	unsetenv("MEMTOP_THEME_DIR");
}

static void test_load(void **state)
{
	char exe[PATH_MAX], err[512], p[PATH_MAX];
	struct theme t, d, m;

	unsetenv("MEMTOP_THEME_DIR");
	theme_builtin_default(&d);
	theme_builtin_mono(&m);
	snprintf(exe, sizeof(exe), "%s/bin/memtop", tmpdir);
	/* A name with a file: the built-in default overlaid with it. */
	assert_int_equal(theme_load(&t, "ocean", exe, err, sizeof(err)), 0);
	assert_int_equal(t.style[THEME_NORMAL].fg, 4);
	assert_memory_equal(&t.style[THEME_TITLE], &d.style[THEME_TITLE], sizeof(d.style[0]));
	/* mono overlays the built-in mono. */
	assert_int_equal(theme_load(&t, "mono", exe, err, sizeof(err)), 0);
	assert_int_equal(t.style[THEME_TITLE].attrs, THEME_A_ITALIC);
	assert_memory_equal(&t.style[THEME_ROW_SELECTED], &m.style[THEME_ROW_SELECTED],
			    sizeof(m.style[0]));
	/* No file for "default" anywhere: the built-in one, no error. */
	snprintf(exe, sizeof(exe), "/nonexistent/bin/memtop");
	if (access("/usr/share/memtop/themes/default.theme", F_OK) &&
	    access("/usr/local/share/memtop/themes/default.theme", F_OK)) {
		assert_int_equal(theme_load(&t, NULL, exe, err, sizeof(err)), 0);
		assert_memory_equal(&t, &d, sizeof(t));
		assert_string_equal(err, "");
	}
	/* Missing or broken: the built-in default, and a message. */
	assert_int_equal(theme_load(&t, "nosuch", exe, err, sizeof(err)), -ENOENT);
	assert_memory_equal(&t, &d, sizeof(t));
	snprintf(p, sizeof(p), "%s/themes/broken.theme", tmpdir);
	assert_int_equal(theme_load(&t, p, exe, err, sizeof(err)), -EINVAL);
	assert_memory_equal(&t, &d, sizeof(t));
	assert_non_null(strstr(err, "broken.theme:3: unknown colour 'gren'"));
	/* Not a file. */
	snprintf(p, sizeof(p), "%s/themes/", tmpdir);
	assert_true(theme_parse_file(&t, p, err, sizeof(err)) < 0);
	assert_true(strlen(err) > 0);
	assert_int_equal(theme_parse_file(&t, "/nonexistent.theme", err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "/nonexistent.theme: No such file"));
}

static void test_fuzz(void **state)
{
	static const char alphabet[] = "abcdefghijklmnoprstuvwxyz_=,# \n\t0123456789#-";
	unsigned seed = 7;
	char text[300], err[256];
	struct theme t;

	for (int round = 0; round < 20000; round++) {
		size_t n = rand_r(&seed) % sizeof(text);

		for (size_t i = 0; i < n; i++)
			text[i] = round % 2 ? (char)rand_r(&seed)
					    : alphabet[rand_r(&seed) % (sizeof(alphabet) - 1)];
		theme_builtin_default(&t);
		int r = theme_parse(&t, text, n, "fuzz", err, sizeof(err));

		assert_true(r == 0 || r == -EINVAL);
		if (r)
			assert_non_null(strstr(err, "fuzz"));
		for (int i = 0; i < THEME_COUNT; i++) {
			assert_true(t.style[i].fg >= -1 && t.style[i].fg <= 255);
			assert_true(t.style[i].bg >= -1 && t.style[i].bg <= 255);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shipped_match_builtins),
		cmocka_unit_test(test_shipped_others_complete),
		cmocka_unit_test(test_element_names),
		cmocka_unit_test(test_docs_list_elements),
		cmocka_unit_test(test_contrast),
		cmocka_unit_test(test_contrast_ratio),
		cmocka_unit_test(test_syntax),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_color_reduce),
		cmocka_unit_test(test_resolve),
		cmocka_unit_test(test_load),
		cmocka_unit_test(test_fuzz),
	};
	int r = find_themes(NULL);

	if (r) {
		fprintf(stderr, "themes/ not found\n");
		return 1;
	}
	r = make_tmp(NULL);
	if (r)
		return 1;
	r = cmocka_run_group_tests(tests, NULL, NULL);
	rm_tmp(NULL);
	return r;
}

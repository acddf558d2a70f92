// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_keys.c - the key table: no key means two things in one view, every
 * action is reachable, every row is on the help screen, key names, and
 * docs/keybindings.md carries exactly the table's generated Markdown.
 *
 * `test_keys --write-docs` rewrites the generated part of
 * docs/keybindings.md after the table changed.
 */
#include <curses.h>
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

#include "ui/tui/keys.h"

#define BEGIN_MARK "<!-- BEGIN GENERATED: test_keys --write-docs -->\n"
#define END_MARK "<!-- END GENERATED -->\n"

static void test_no_conflicts(void **state)
{
	for (size_t i = 0; i < key_table_len; i++) {
		for (size_t j = i + 1; j < key_table_len; j++) {
			if (!(key_table[i].views & key_table[j].views))
				continue;
			for (int a = 0; a < KEYS_PER_BINDING && key_table[i].keys[a]; a++)
				for (int b = 0; b < KEYS_PER_BINDING && key_table[j].keys[b]; b++)
					if (key_table[i].keys[a] == key_table[j].keys[b])
						fail_msg("key %d bound twice in one view "
							 "(rows %zu and %zu)",
							 key_table[i].keys[a], i, j);
		}
	}
}

static void test_rows_complete(void **state)
{
	bool used[KA_COUNT] = { 0 };

	for (size_t i = 0; i < key_table_len; i++) {
		const struct key_binding *b = &key_table[i];

		assert_true(b->keys[0] != 0);
		assert_true(b->views != 0);
		assert_true(b->action > KA_NONE && b->action < KA_COUNT);
		assert_non_null(b->help);
		assert_true(strlen(b->help) > 5);
		/* Help lines fit an 80-column help screen next to the keys. */
		assert_true(strlen(b->help) <= 76);
		if (b->hint)
			assert_true(strlen(b->hint) <= 8);
		used[b->action] = true;
		/* Each key of a row dispatches to that row in each of its views. */
		for (int k = 0; k < KEYS_PER_BINDING && b->keys[k]; k++)
			for (unsigned v = 1; v <= KV_SETUP; v <<= 1)
				if (b->views & v)
					assert_ptr_equal(keys_binding(b->keys[k], v), b);
	}
	for (int a = KA_NONE + 1; a < KA_COUNT; a++)
		if (!used[a])
			fail_msg("action %d has no key", a);
}

static void test_lookup(void **state)
{
	/* q quits from the site table only; below it, q and Esc go back */
	assert_int_equal(keys_lookup('q', KV_TOP), KA_QUIT);
	assert_int_equal(keys_lookup(KEY_F(10), KV_TOP), KA_QUIT);
	assert_int_equal(keys_lookup('q', KV_FLAME), KA_BACK);
	assert_int_equal(keys_lookup('q', KV_SITE), KA_BACK);
	assert_int_equal(keys_lookup('q', KV_PROCS), KA_BACK);
	assert_int_equal(keys_lookup(KEY_F(10), KV_SITE), KA_BACK);
	assert_int_equal(keys_lookup('q', KV_HELP), KA_BACK);
	assert_int_equal(keys_lookup('q', KV_SETUP), KA_BACK);
	assert_int_equal(keys_lookup(27, KV_TOP), KA_BACK);
	assert_int_equal(keys_lookup(27, KV_SETUP), KA_BACK);
	/* htop's function keys and letters */
	assert_int_equal(keys_lookup(KEY_F(1), KV_SITE), KA_HELP);
	assert_int_equal(keys_lookup('h', KV_TOP), KA_HELP);
	assert_int_equal(keys_lookup('h', KV_FLAME), KA_HELP);
	assert_int_equal(keys_lookup('?', KV_HELP), KA_HELP); /* the next page */
	assert_int_equal(keys_lookup(KEY_F(2), KV_TOP), KA_SETUP);
	assert_int_equal(keys_lookup(KEY_F(2), KV_SETUP), KA_BACK);
	assert_int_equal(keys_lookup(KEY_F(3), KV_TOP), KA_SEARCH);
	assert_int_equal(keys_lookup('/', KV_TOP), KA_SEARCH);
	assert_int_equal(keys_lookup(KEY_F(4), KV_TOP), KA_FILTER);
	assert_int_equal(keys_lookup('\\', KV_TOP), KA_FILTER);
	assert_int_equal(keys_lookup(KEY_F(5), KV_TOP), KA_NEXT_VIEW);
	assert_int_equal(keys_lookup('t', KV_TOP), KA_NEXT_VIEW);
	assert_int_equal(keys_lookup(KEY_F(6), KV_TOP), KA_SORT_NEXT);
	assert_int_equal(keys_lookup('I', KV_TOP), KA_SORT_INVERT);
	assert_int_equal(keys_lookup('Z', KV_TOP), KA_PAUSE);
	assert_int_equal(keys_lookup('\n', KV_TOP), KA_ENTER);
	assert_int_equal(keys_lookup(KEY_ENTER, KV_FLAME), KA_ENTER);
	assert_int_equal(keys_lookup('\r', KV_INPUT), KA_INPUT_ACCEPT);
	assert_int_equal(keys_lookup('/', KV_FLAME), KA_SEARCH);
	assert_int_equal(keys_lookup('/', KV_HELP), KA_NONE);
	assert_int_equal(keys_lookup('\t', KV_SITE), KA_NEXT_VIEW);
	assert_int_equal(keys_lookup('f', KV_TOP), KA_NEXT_VIEW);
	assert_int_equal(keys_lookup(' ', KV_TOP), KA_PAUSE);
	assert_int_equal(keys_lookup('P', KV_FLAME), KA_PAUSE);
	assert_int_equal(keys_lookup('+', KV_TOP), KA_SLOWER);
	assert_int_equal(keys_lookup('-', KV_TOP), KA_FASTER);
	assert_int_equal(keys_lookup('e', KV_SITE), KA_EXPORT);
	assert_int_equal(keys_lookup('<', KV_TOP), KA_SORT_PREV);
	assert_int_equal(keys_lookup('>', KV_TOP), KA_SORT_NEXT);
	assert_int_equal(keys_lookup('s', KV_TOP), KA_SORT_NEXT);
	assert_int_equal(keys_lookup(KEY_LEFT, KV_FLAME), KA_LEFT);
	assert_int_equal(keys_lookup(KEY_RIGHT, KV_SETUP), KA_RIGHT);
	assert_int_equal(keys_lookup('k', KV_FLAME), KA_UP);
	assert_int_equal(keys_lookup('j', KV_HELP), KA_DOWN);
	assert_int_equal(keys_lookup('j', KV_SETUP), KA_DOWN);
	assert_int_equal(keys_lookup(27, KV_FLAME), KA_BACK);
	assert_int_equal(keys_lookup(27, KV_INPUT), KA_INPUT_CANCEL);
	assert_int_equal(keys_lookup(127, KV_INPUT), KA_INPUT_ERASE);
	assert_int_equal(keys_lookup(KEY_BACKSPACE, KV_INPUT), KA_INPUT_ERASE);
	/* Printable keys are text while typing. */
	assert_int_equal(keys_lookup('q', KV_INPUT), KA_NONE);
	assert_int_equal(keys_lookup('x', KV_TOP), KA_NONE);
	assert_int_equal(keys_lookup(0, KV_MAIN), KA_NONE);
}

/* The key bar puts the most important keys first: at 80 columns the
 * table's bar holds quit, help, detail, filter, search, sort and group. */
static void test_bar_order(void **state)
{
	const struct key_binding *bar[32];
	size_t n = keys_bar(KV_TOP, bar, 32);
	static const enum key_action want[] = { KA_QUIT,   KA_HELP,      KA_ENTER, KA_FILTER,
						KA_SEARCH, KA_SORT_NEXT, KA_GROUP };

	assert_true(n >= sizeof(want) / sizeof(want[0]));
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		assert_int_equal(bar[i]->action, want[i]);
	for (size_t i = 1; i < n; i++)
		assert_true(bar[i - 1]->rank <= bar[i]->rank);
	/* one level down, going back comes first */
	n = keys_bar(KV_SITE, bar, 32);
	assert_true(n > 2);
	assert_int_equal(bar[0]->action, KA_BACK);
	assert_int_equal(keys_bar(KV_TOP, bar, 2), 2);
}

static void test_names(void **state)
{
	char b[32];

	assert_string_equal(keys_name('q', b, sizeof(b)), "q");
	assert_string_equal(keys_name(27, b, sizeof(b)), "Esc");
	assert_string_equal(keys_name('\t', b, sizeof(b)), "Tab");
	assert_string_equal(keys_name(' ', b, sizeof(b)), "Space");
	assert_string_equal(keys_name('\n', b, sizeof(b)), "Enter");
	assert_string_equal(keys_name(KEY_F(1), b, sizeof(b)), "F1");
	assert_string_equal(keys_name(KEY_F(10), b, sizeof(b)), "F10");
	assert_string_equal(keys_name(12, b, sizeof(b)), "Ctrl-L");
	assert_string_equal(keys_name(KEY_NPAGE, b, sizeof(b)), "PgDn");
	assert_string_equal(keys_name(KEY_UP, b, sizeof(b)), "Up");
	assert_string_equal(keys_name(127, b, sizeof(b)), "Backspace");
	assert_string_equal(keys_name(KEY_BACKSPACE, b, sizeof(b)), "Backspace");
	for (size_t i = 0; i < key_table_len; i++) {
		char names[128];

		keys_binding_names(&key_table[i], names, sizeof(names));
		assert_true(names[0] != '\0');
		assert_null(strstr(names, "key-")); /* every code has a name */
		if (key_table[i].action == KA_INPUT_ERASE)
			assert_string_equal(names, "Backspace");
		if (key_table[i].action == KA_ENTER)
			assert_string_equal(names, "Enter");
	}
}

/* The help screen shows every row, so every key. */
static void test_sections_cover_table(void **state)
{
	for (size_t i = 0; i < key_table_len; i++) {
		int n = 0;

		for (size_t s = 0; s < key_sections_len; s++)
			n += keys_in_section(&key_table[i], &key_sections[s]);
		if (n == 0)
			fail_msg("row %zu (%s) is in no help section", i, key_table[i].help);
	}
}

static void test_markdown_lists_every_key(void **state)
{
	int need = keys_markdown(NULL, 0);
	char *md = malloc(need + 1), small[16];

	assert_true(need > 0);
	assert_int_equal(keys_markdown(md, need + 1), need);
	assert_int_equal((int)strlen(md), need);
	/* Truncation is safe and reports the same length. */
	assert_int_equal(keys_markdown(small, sizeof(small)), need);
	assert_int_equal(strlen(small), sizeof(small) - 1);
	for (size_t i = 0; i < key_table_len; i++) {
		char names[128], *save = NULL;

		assert_non_null(strstr(md, key_table[i].help));
		keys_binding_names(&key_table[i], names, sizeof(names));
		for (char *t = strtok_r(names, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
			char cell[64];

			snprintf(cell, sizeof(cell), "`%s`", t);
			assert_non_null(strstr(md, cell));
		}
	}
	/* Sections with rows have a heading; empty ones are left out. */
	for (size_t s = 0; s < key_sections_len; s++) {
		char heading[64];

		snprintf(heading, sizeof(heading), "### %s\n", key_sections[s].title);
		if (keys_section_rows(&key_sections[s]))
			assert_non_null(strstr(md, heading));
		else
			assert_null(strstr(md, heading));
	}
	free(md);
}

/* docs/keybindings.md, found from the binary (build/tests/) or the cwd;
 * NULL when neither has it. */
static const char *docs_path(void)
{
	static char path[PATH_MAX + 32];
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n > 0) {
		char *slash;

		exe[n] = '\0';
		slash = strrchr(exe, '/');
		if (slash)
			*slash = '\0';
		snprintf(path, sizeof(path), "%s/../../docs/keybindings.md", exe);
		if (access(path, R_OK) == 0)
			return path;
	}
	return access("docs/keybindings.md", R_OK) == 0 ? "docs/keybindings.md" : NULL;
}

static char *read_all(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = calloc(1, n + 1);
	if (fread(buf, 1, n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

static void test_docs_match_table(void **state)
{
	const char *path = docs_path();
	char *doc, *begin, *end;
	int need = keys_markdown(NULL, 0);
	char *md = malloc(need + 1);

	keys_markdown(md, need + 1);
	assert_non_null(path);
	doc = read_all(path);
	assert_non_null(doc);
	begin = strstr(doc, BEGIN_MARK);
	end = strstr(doc, END_MARK);
	assert_non_null(begin);
	assert_non_null(end);
	begin += strlen(BEGIN_MARK);
	*end = '\0';
	if (strcmp(begin, md) != 0)
		fail_msg("%s is out of date with the key table: run "
			 "build/tests/test_keys --write-docs",
			 path);
	free(doc);
	free(md);
}

static int write_docs(void)
{
	const char *path = docs_path();
	char *doc, *begin, *end;
	int need = keys_markdown(NULL, 0);
	char *md = malloc(need + 1);
	FILE *f;

	keys_markdown(md, need + 1);
	if (!path || !(doc = read_all(path))) {
		fprintf(stderr, "docs/keybindings.md not found\n");
		return 1;
	}
	begin = strstr(doc, BEGIN_MARK);
	end = strstr(doc, END_MARK);
	if (!begin || !end || end < begin) {
		fprintf(stderr, "%s: generated-part markers missing\n", path);
		return 1;
	}
	f = fopen(path, "w");
	if (!f) {
		perror(path);
		return 1;
	}
	fprintf(f, "%.*s%s%s", (int)(begin - doc + strlen(BEGIN_MARK)), doc, md, end);
	fclose(f);
	printf("wrote %s\n", path);
	free(doc);
	free(md);
	return 0;
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_conflicts),
		cmocka_unit_test(test_rows_complete),
		cmocka_unit_test(test_lookup),
		cmocka_unit_test(test_bar_order),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_sections_cover_table),
		cmocka_unit_test(test_markdown_lists_every_key),
		cmocka_unit_test(test_docs_match_table),
	};

	if (argc > 1 && strcmp(argv[1], "--write-docs") == 0)
		return write_docs();
	return cmocka_run_group_tests(tests, NULL, NULL);
}

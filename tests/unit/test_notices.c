// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_notices.c - the sentences said once about memtop's bounds
 * (ui/notices.h): each says something only when its count is new; a
 * target's line names the target that hit a new bound, with the counts
 * of the bounds it hit and no trailing ';', its name sanitized; one
 * target a call; past NOTICES_MAX_TARGETS nothing more; a short buffer is
 * cut, never overrun.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "ui/notices.h"
#include "util/strpool.h"
#include "target_fixture.h"

static struct mt_target *target(struct mt_model *m, pid_t pid, const char *comm)
{
	struct mt_target *t = test_target(m, pid);

	assert_non_null(t);
	strncpy(t->comm, comm, sizeof(t->comm) - 1);
	return t;
}

static void test_elf_and_pool(void **state)
{
	struct notices n = { 0 };
	char line[512];

	(void)state;
	assert_false(notice_elf_limits(&n, 0, line, sizeof(line)));
	assert_true(notice_elf_limits(&n, 3, line, sizeof(line)));
	assert_non_null(strstr(line, "3 mapped files over memtop's limits"));
	assert_false(notice_elf_limits(&n, 3, line, sizeof(line)));
	assert_true(notice_elf_limits(&n, 5, line, sizeof(line)));
	assert_non_null(strstr(line, "5 mapped files"));

	assert_false(notice_pool(&n, 0, line, sizeof(line)));
	assert_true(notice_pool(&n, 7, line, sizeof(line)));
	assert_non_null(strstr(line, ": 7 shown as " STRPOOL_OVERFLOW));
	assert_false(notice_pool(&n, 9, line, sizeof(line))); /* said once */
}

static void test_target_limits(void **state)
{
	struct mt_model_opts o = { .rate = 1 };
	struct mt_model *m = model_new(&o);
	struct notices n = { 0 };
	struct mt_target *a, *b;
	char line[1024];

	(void)state;
	assert_non_null(m);
	assert_false(notice_target_limits(&n, m, 64, line, sizeof(line)));
	a = target(m, 100, "ev\x1b]0;x");
	assert_false(notice_target_limits(&n, m, 64, line, sizeof(line)));
	a->limits.stacks_folded = 5;
	assert_true(notice_target_limits(&n, m, 64, line, sizeof(line)));
	assert_string_equal(line,
			    "PID 100 (ev?]0;x) reached memtop's per-target bounds: 5 samples "
			    "in stacks new past --max-stacks 64 counted in " MT_STACKS_OVERFLOW);
	a->limits.stacks_folded = 50; /* more of the same bound: nothing new */
	assert_false(notice_target_limits(&n, m, 64, line, sizeof(line)));

	b = target(m, 200, "b");
	b->limits.maps_cut = 2;
	b->limits.names_refused = 3;
	assert_true(notice_target_limits(&n, m, 64, line, sizeof(line)));
	assert_non_null(strstr(line, "PID 200 (b) reached"));
	assert_non_null(strstr(line, " 2 reads of its maps cut at 16 MiB"));
	assert_non_null(
		strstr(line, "; 3 new paths and names past its 8 MiB shown as " STRPOOL_OVERFLOW));
	assert_null(strstr(line, "samples in stacks"));
	assert_int_not_equal(line[strlen(line) - 1], ';');

	/* a new bound of the first target: said with its counts */
	a->limits.files_refused = 9;
	assert_true(notice_target_limits(&n, m, 64, line, sizeof(line)));
	assert_non_null(strstr(line, "PID 100 "));
	assert_non_null(strstr(line, " 50 samples in stacks"));
	assert_non_null(strstr(line, "; 9 mappings' files not opened"));
	assert_false(notice_target_limits(&n, m, 64, line, sizeof(line)));

	/* two targets new at once: one line each, one a call */
	target(m, 300, "c")->limits.maps_cut = 1;
	target(m, 400, "d")->limits.maps_cut = 1;
	assert_true(notice_target_limits(&n, m, 64, line, sizeof(line)));
	assert_non_null(strstr(line, "PID 300 "));
	assert_true(notice_target_limits(&n, m, 64, line, sizeof(line)));
	assert_non_null(strstr(line, "PID 400 "));
	assert_false(notice_target_limits(&n, m, 64, line, sizeof(line)));
	model_free(m);
}

/* Past NOTICES_MAX_TARGETS targets, the others are not said. */
static void test_table_bound(void **state)
{
	struct mt_model_opts o = { .rate = 1 };
	struct mt_model *m = model_new(&o);
	static struct notices n;
	char line[512];
	int i, said = 0;

	(void)state;
	assert_non_null(m);
	memset(&n, 0, sizeof(n));
	for (i = 0; i < NOTICES_MAX_TARGETS + 10; i++)
		target(m, 1000 + i, "t")->limits.maps_cut = 1;
	while (notice_target_limits(&n, m, 64, line, sizeof(line)))
		said++;
	assert_int_equal(said, NOTICES_MAX_TARGETS);
	model_free(m);
}

static void test_short_buffer(void **state)
{
	struct mt_model_opts o = { .rate = 1 };
	struct mt_model *m = model_new(&o);
	struct notices n = { 0 };
	struct mt_target *t;
	char line[48];

	(void)state;
	assert_non_null(m);
	memset(line, 'x', sizeof(line));
	t = target(m, 7, "short");
	t->limits.stacks_folded = 1;
	t->limits.files_refused = 1;
	t->limits.maps_cut = 1;
	t->limits.names_refused = 1;
	assert_true(notice_target_limits(&n, m, 64, line, sizeof(line) - 8));
	assert_true(strlen(line) < sizeof(line) - 8);
	assert_memory_equal(line + sizeof(line) - 8, "xxxxxxxx", 8);
	model_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_elf_and_pool),
		cmocka_unit_test(test_target_limits),
		cmocka_unit_test(test_table_bound),
		cmocka_unit_test(test_short_buffer),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_unseen.c - the words for memory memtop does not see (model/unseen.c):
 * unexplained growth names the allocator probed, never "usdt" (how memtop
 * listens to a process that samples itself, not an allocator), and a
 * runtime found names itself and the tool that sees its heap.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "model/unseen.h"

/* A target whose RSS grows 8 MiB/s over 10 s while its heap explains 5%. */
static void growing(struct mt_target *t, const char *allocator)
{
	memset(t, 0, sizeof(*t));
	t->pid = 4242;
	snprintf(t->allocator, sizeof(t->allocator), "%s", allocator);
	t->stats.heap_explains = 0.05;
	t->stats.window_s = 10;
	t->stats.rss_fit.slope = 8.0 * 1024 * 1024;
}

static void test_growth_names_the_allocator(void **state)
{
	struct mt_target t;
	char buf[512];

	growing(&t, "glibc");
	assert_true(unseen_growth(&t));
	assert_true(unseen_describe(&t, buf, sizeof(buf)));
	assert_non_null(strstr(buf, "RSS grows 480.0 MiB/min"));
	assert_non_null(strstr(buf, "does not come from glibc's malloc"));
}

static void test_growth_under_usdt_says_malloc(void **state)
{
	struct mt_target t;
	char buf[512];

	growing(&t, "usdt");
	assert_true(unseen_describe(&t, buf, sizeof(buf)));
	assert_null(strstr(buf, "usdt"));
	assert_non_null(strstr(buf, "does not come from malloc ("));
}

static void test_growth_names_the_runtime(void **state)
{
	struct mt_target t;
	char buf[512];

	growing(&t, "usdt");
	snprintf(t.runtime, sizeof(t.runtime), "Node/V8");
	t.runtime_heap = "V8's JavaScript heap";
	t.runtime_tool = "node --heapsnapshot-signal";
	assert_true(unseen_describe(&t, buf, sizeof(buf)));
	assert_null(strstr(buf, "usdt"));
	assert_non_null(strstr(buf, "Node/V8 allocates V8's JavaScript heap itself"));
	assert_non_null(strstr(buf, "use node --heapsnapshot-signal"));
}

static void test_nothing_to_say(void **state)
{
	struct mt_target t;
	char buf[512];

	growing(&t, "usdt");
	t.stats.heap_explains = 0.9; /* the heap explains the growth */
	assert_false(unseen_describe(&t, buf, sizeof(buf)));
	assert_string_equal(buf, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_growth_names_the_allocator),
		cmocka_unit_test(test_growth_under_usdt_says_malloc),
		cmocka_unit_test(test_growth_names_the_runtime),
		cmocka_unit_test(test_nothing_to_say),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

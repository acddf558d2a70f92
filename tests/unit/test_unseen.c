// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_unseen.c - the words for memory memtop does not see (model/unseen.c):
 * unexplained growth names the allocator probed, never "usdt" (how memtop
 * listens to a process that samples itself, not an allocator), and a
 * runtime found names itself and the tool that sees its heap; a Go heap
 * is weighed with the room its GC leaves it (GOGC).
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

/* At GOGC=100 the Go runtime lets its heap reach twice the live part, so
 * RSS grows twice as fast as a leak: a heap that explains 48% explains it
 * all. GOGC=50 leaves less room, and an unknown GOGC none. */
static void test_go_heap_weighed_with_gogc(void **state)
{
	struct mt_target t;
	char buf[512];

	growing(&t, "go");
	snprintf(t.go_version, sizeof(t.go_version), "go1.23.2");
	t.go_rate = 524288;
	t.go_rate_by_memtop = true;
	t.stats.heap_explains = 0.48;
	t.go_heap_goal = 2;
	assert_false(unseen_growth(&t));
	assert_true(unseen_describe(&t, buf, sizeof(buf)));
	assert_non_null(strstr(buf, "set by memtop"));
	t.go_heap_goal = 0; /* GOGC=off, or a recording from before memtop read it */
	assert_true(unseen_growth(&t));
	t.go_heap_goal = 1.5;
	t.stats.heap_explains = 0.3;
	assert_true(unseen_growth(&t));
	assert_true(unseen_describe(&t, buf, sizeof(buf)));
	assert_non_null(strstr(buf, "explains 30% of it, 45% with the room the Go GC leaves it "
				    "(GOGC=50)"));
	assert_null(strstr(buf, "set by memtop"));
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
		cmocka_unit_test(test_go_heap_weighed_with_gogc),
		cmocka_unit_test(test_nothing_to_say),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

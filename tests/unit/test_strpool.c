// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_strpool.c - interning: equal strings give one pointer, different
 * strings different ones, lengths are honoured, the set survives growth
 * and concurrent callers; the text kept is bounded in all and per owner.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/strpool.h"

static void test_basic(void **state)
{
	char buf[32];
	const char *a, *b;
	size_t before = strpool_count();

	assert_null(strpool_intern(NULL));
	assert_null(strpool_intern_len(NULL, 3));
	a = strpool_intern("malloc");
	strcpy(buf, "malloc");
	b = strpool_intern(buf);
	assert_ptr_equal(a, b);
	assert_ptr_not_equal(b, buf);
	assert_string_equal(a, "malloc");
	assert_ptr_equal(strpool_intern_len("mallocX", 6), a);
	assert_ptr_not_equal(strpool_intern("malloc2"), a);
	assert_string_equal(strpool_intern_len("free()", 4), "free");
	assert_ptr_equal(strpool_intern(""), strpool_intern_len("abc", 0));
	assert_int_equal(strpool_count(), before + 4); /* malloc, malloc2, free, "" */
	buf[0] = 'M'; /* the interned copy does not follow the caller's buffer */
	assert_string_equal(a, "malloc");
}

static void test_growth(void **state)
{
	enum { N = 50000 };
	const char **p = malloc(N * sizeof(*p));
	char buf[32];

	assert_non_null(p);
	for (int i = 0; i < N; i++) {
		snprintf(buf, sizeof(buf), "sym_%d", i);
		p[i] = strpool_intern(buf);
	}
	for (int i = 0; i < N; i++) {
		snprintf(buf, sizeof(buf), "sym_%d", i);
		assert_ptr_equal(strpool_intern(buf), p[i]);
		assert_string_equal(p[i], buf);
	}
	/* A string too long for the chunk allocator. */
	{
		char *big = malloc(100000);

		assert_non_null(big);
		memset(big, 'x', 99999);
		big[99999] = '\0';
		assert_ptr_equal(strpool_intern(big), strpool_intern(big));
		assert_int_equal(strlen(strpool_intern(big)), 99999);
		free(big);
	}
	free(p);
}

static void *intern_worker(void *arg)
{
	const char **out = arg;
	char buf[32];

	for (int i = 0; i < 2000; i++) {
		snprintf(buf, sizeof(buf), "thread_sym_%d", i);
		out[i] = strpool_intern(buf);
	}
	return NULL;
}

static void test_threads(void **state)
{
	static const char *res[4][2000];
	pthread_t t[4];

	for (int i = 0; i < 4; i++)
		assert_int_equal(pthread_create(&t[i], NULL, intern_worker, res[i]), 0);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < 2000; i++) {
		assert_non_null(res[0][i]);
		for (int k = 1; k < 4; k++)
			assert_ptr_equal(res[0][i], res[k][i]);
	}
}

/* Two owners (targets): one that keeps making new names meets its own
 * bound, and only it: its new names intern as STRPOOL_OVERFLOW, counted in
 * its budget (not the pool's count); the other goes on adding names; a
 * name already interned (by anyone) costs nothing and is the real one. */
static void test_owner_bounded(void **state)
{
	struct strpool_budget churner = { 0 }, quiet = { 0 };
	const char *shared = strpool_intern("interned by no owner"), *got;
	size_t pool_refused = strpool_refused(), i;
	char name[64];

	(void)state;
	strpool_set_owner_limit(64 << 10);
	assert_null(strpool_charge(&churner));
	for (i = 0; i < 10000; i++) {
		snprintf(name, sizeof(name), "/tmp/churned-%zu/lib.so", i);
		assert_non_null(strpool_intern(name));
	}
	assert_true(churner.bytes <= 64 << 10);
	assert_true(churner.bytes > (64 << 10) - 64);
	assert_true(churner.refused > 7000); /* about 24 bytes a name */
	snprintf(name, sizeof(name), "/tmp/churned-%d/lib.so", 9999);
	got = strpool_intern(name);
	assert_true(strpool_is_overflow(got));
	assert_string_equal(got, STRPOOL_OVERFLOW);
	assert_ptr_equal(strpool_intern("interned by no owner"), shared);

	assert_ptr_equal(strpool_charge(&quiet), &churner);
	got = strpool_intern("a name only the quiet one has");
	assert_false(strpool_is_overflow(got));
	assert_string_equal(got, "a name only the quiet one has");
	assert_int_equal(quiet.bytes, sizeof("a name only the quiet one has"));
	assert_int_equal(quiet.refused, 0);

	/* what the quiet one added, the churner gets for nothing */
	assert_ptr_equal(strpool_charge(&churner), &quiet);
	i = churner.refused;
	assert_ptr_equal(strpool_intern("a name only the quiet one has"), got);
	assert_int_equal(churner.refused, i);

	/* no owner: the pool's bound only */
	assert_ptr_equal(strpool_charge(NULL), &churner);
	assert_false(strpool_is_overflow(strpool_intern("/tmp/churned-9999/lib.so")));
	assert_false(strpool_is_overflow(NULL));
	assert_false(strpool_is_overflow(strpool_intern(STRPOOL_OVERFLOW))); /* its text, interned */
	assert_int_equal(strpool_refused(), pool_refused);
	strpool_set_owner_limit(STRPOOL_OWNER_MAX_BYTES);
}

/* A producer of ever new names (a target renaming its files) meets the
 * bound: new names intern as STRPOOL_OVERFLOW and are counted; names
 * already interned keep their pointers. Runs last: the pool stays full. */
static void test_bounded(void **state)
{
	const char *kept = strpool_intern("kept before the bound");
	size_t refused = strpool_refused(), i;
	char name[64];

	(void)state;
	strpool_set_limit(1 << 20);
	for (i = 0; i < 100000; i++) {
		snprintf(name, sizeof(name), "/tmp/renamed-%zu/lib.so", i);
		assert_non_null(strpool_intern(name));
	}
	assert_true(strpool_refused() > refused);
	snprintf(name, sizeof(name), "/tmp/renamed-%d/lib.so", 99999);
	assert_string_equal(strpool_intern(name), STRPOOL_OVERFLOW);
	assert_ptr_equal(strpool_intern("kept before the bound"), kept);
	assert_true(strpool_count() < 100000); /* about 1 MiB of names */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_basic),   cmocka_unit_test(test_growth),
		cmocka_unit_test(test_threads), cmocka_unit_test(test_owner_bounded),
		cmocka_unit_test(test_bounded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

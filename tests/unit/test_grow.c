// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_grow.c - util/grow: the capacity doubles to hold what is asked,
 * sizes that overflow are refused with the array unchanged, and pushes
 * keep every item in order.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "util/grow.h"

static void test_doubles_to_need(void **state)
{
	int *v = NULL;
	size_t cap = 0;

	assert_int_equal(grow_array(&v, &cap, 1, sizeof(*v)), 0);
	assert_int_equal(cap, GROW_FIRST);
	assert_int_equal(grow_array(&v, &cap, GROW_FIRST, sizeof(*v)), 0);
	assert_int_equal(cap, GROW_FIRST); /* room already */
	assert_int_equal(grow_array(&v, &cap, 5 * GROW_FIRST, sizeof(*v)), 0);
	assert_int_equal(cap, 8 * GROW_FIRST);
	v[cap - 1] = 7; /* all of it is there */
	free(v);
}

static void test_overflow_refused_unchanged(void **state)
{
	char *v = NULL;
	size_t cap = 0;
	void *was;

	assert_int_equal(grow_array(&v, &cap, 10, 1), 0);
	was = v;
	assert_int_equal(grow_array(&v, &cap, SIZE_MAX / 8 + 1, 8), -ENOMEM);
	assert_ptr_equal(v, was);
	assert_int_equal(cap, GROW_FIRST);
	assert_int_equal(grow_array(&v, &cap, 1, 0), 0); /* within the capacity */
	assert_int_equal(grow_array(&v, &cap, 100, 0), -ENOMEM);
	free(v);
}

static void test_push_keeps_order(void **state)
{
	static int items[100];
	void **v = NULL;
	size_t n = 0, cap = 0, i;

	for (i = 0; i < 100; i++)
		assert_int_equal(grow_push(&v, &n, &cap, &items[i]), 0);
	assert_int_equal(n, 100);
	assert_true(cap >= 100);
	for (i = 0; i < 100; i++)
		assert_ptr_equal(v[i], &items[i]);
	free(v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_doubles_to_need),
		cmocka_unit_test(test_overflow_refused_unchanged),
		cmocka_unit_test(test_push_keeps_order),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_bytebuf.c - the growable byte buffer: appends across many doublings
 * keep every byte and the NUL after them, clear keeps the memory, take
 * hands the bytes over, and a failed reservation is sticky.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <cmocka.h>

#include "util/bytebuf.h"

static void test_empty(void **state)
{
	struct bytebuf b;
	__u8 *out = (__u8 *)"x";
	size_t len = 1;

	bytebuf_init(&b);
	assert_string_equal(bytebuf_text(&b), "");
	assert_int_equal(bytebuf_take(&b, &out, &len), 0);
	assert_null(out);
	assert_int_equal(len, 0);
	/* An empty append still makes a C string. */
	bytebuf_add(&b, "", 0);
	assert_non_null(b.data);
	assert_string_equal(bytebuf_text(&b), "");
	bytebuf_fini(&b);
	assert_null(b.data);
}

static void test_appends_across_growth(void **state)
{
	enum { N = 100000 };
	struct bytebuf b;
	char *want = malloc(N + 1);
	__u8 *out;
	size_t len, i;

	assert_non_null(want);
	bytebuf_init(&b);
	for (i = 0; i < N; i++) {
		char c = (char)('a' + i % 26);

		want[i] = c;
		bytebuf_add(&b, &c, 1);
		if (i % 9973 == 0) {
			assert_int_equal(b.len, i + 1);
			assert_true(b.cap > b.len);
			assert_int_equal(b.data[b.len], '\0');
		}
	}
	want[N] = '\0';
	assert_int_equal(b.err, 0);
	assert_string_equal(bytebuf_text(&b), want);

	/* clear keeps the allocation. */
	{
		size_t cap = b.cap;
		__u8 *data = b.data;

		bytebuf_clear(&b);
		assert_int_equal(b.len, 0);
		assert_string_equal(bytebuf_text(&b), "");
		bytebuf_puts(&b, "again");
		assert_ptr_equal(b.data, data);
		assert_int_equal(b.cap, cap);
	}
	assert_int_equal(bytebuf_take(&b, &out, &len), 0);
	assert_int_equal(len, 5);
	assert_memory_equal(out, "again", 5);
	assert_null(b.data);
	free(out);
	free(want);
}

static void test_reserve_for_direct_writers(void **state)
{
	struct bytebuf b;

	bytebuf_init(&b);
	assert_true(bytebuf_reserve(&b, 1000));
	assert_true(b.cap >= 1001);
	memset(b.data, 'z', 1000);
	b.len = 1000;
	bytebuf_add(&b, "!", 1);
	assert_int_equal(b.len, 1001);
	assert_int_equal(b.data[999], 'z');
	assert_int_equal(b.data[1000], '!');
	assert_int_equal(b.data[1001], '\0');
	bytebuf_fini(&b);
}

static void test_failure_is_sticky(void **state)
{
	struct bytebuf b;
	__u8 *out = NULL;
	size_t len = 0;

	bytebuf_init(&b);
	bytebuf_puts(&b, "kept");
	/* More than can ever be allocated: refused, and every later append. */
	assert_false(bytebuf_reserve(&b, SIZE_MAX - 2));
	assert_int_equal(b.err, -ENOMEM);
	bytebuf_puts(&b, "lost");
	assert_int_equal(b.len, 4);
	assert_false(bytebuf_reserve(&b, 1));
	assert_int_equal(bytebuf_take(&b, &out, &len), -ENOMEM);
	assert_null(out);
	assert_null(b.data);
	assert_int_equal(b.err, 0);
	/* Emptied by take, b is usable again. */
	bytebuf_puts(&b, "x");
	assert_int_equal(b.err, 0);
	bytebuf_fini(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_appends_across_growth),
		cmocka_unit_test(test_reserve_for_direct_writers),
		cmocka_unit_test(test_failure_is_sticky),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

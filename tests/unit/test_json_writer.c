// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_json_writer.c - the JSON writer: escaping of every byte class,
 * nesting and commas, numbers, misuse detection, FILE and memory sinks.
 * Expected output is compared as exact strings.
 */
#include <errno.h>
#include <locale.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "util/json_writer.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* The text one jw_stringn() of (s, len) produces, as a fresh string. */
static char *string_json(const char *s, size_t len)
{
	struct json_writer w;
	char *r;

	jw_init_buf(&w);
	jw_stringn(&w, s, len);
	assert_int_equal(jw_finish(&w), 0);
	r = strdup(jw_buf(&w, NULL));
	jw_fini(&w);
	return r;
}

static void test_escaping_table(void **state)
{
	static const struct {
		const char *in;
		size_t len;
		const char *out;
	} cases[] = {
#define C(in, out) { in, sizeof(in) - 1, out }
		C("", "\"\""),
		C("plain text", "\"plain text\""),
		C("\"", "\"\\\"\""),
		C("\\", "\"\\\\\""),
		C("/", "\"/\""),
		C("\b\f\n\r\t", "\"\\b\\f\\n\\r\\t\""),
		C("\x01\x1f", "\"\\u0001\\u001f\""),
		C("a\0b", "\"a\\u0000b\""),
		/* DEL and C1 (UTF-8 encoded) escaped: no control character
		 * reaches a terminal that shows the JSON */
		C("\x7f", "\"\\u007f\""),
		C("a\xc2\x9b"
		  "2J",
		  "\"a\\u009b2J\""),
		C("\xc2\x80\xc2\x9f\xc2\xa0", "\"\\u0080\\u009f\xc2\xa0\""),
		/* Valid UTF-8 of every length passes through. */
		C("caf\xc3\xa9", "\"caf\xc3\xa9\""),
		C("\xe2\x82\xac", "\"\xe2\x82\xac\""),
		C("\xf0\x9f\x98\x80", "\"\xf0\x9f\x98\x80\""),
		C("\xef\xbf\xbf", "\"\xef\xbf\xbf\""),         /* U+FFFF */
		C("\xf4\x8f\xbf\xbf", "\"\xf4\x8f\xbf\xbf\""), /* U+10FFFF */
		C("\xed\x9f\xbf", "\"\xed\x9f\xbf\""),         /* U+D7FF */
		/* Every byte of an invalid sequence becomes one U+FFFD. */
		C("\x80", "\"\\ufffd\""),
		C("\xbf", "\"\\ufffd\""),
		C("\xc0\xaf", "\"\\ufffd\\ufffd\""),            /* overlong '/' */
		C("\xc1\xbf", "\"\\ufffd\\ufffd\""),            /* overlong */
		C("\xe0\x80\xaf", "\"\\ufffd\\ufffd\\ufffd\""), /* overlong */
		C("\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\""), /* surrogate */
		C("\xf0\x80\x80\xaf", "\"\\ufffd\\ufffd\\ufffd\\ufffd\""),
		C("\xf4\x90\x80\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\""), /* > U+10FFFF */
		C("\xf5", "\"\\ufffd\""),
		C("\xff", "\"\\ufffd\""),
		C("\xe2\x82", "\"\\ufffd\\ufffd\""), /* truncated at end */
		C("\xe2\x82"
		  "A",
		  "\"\\ufffd\\ufffdA\""), /* truncated */
		C("\xc3"
		  "\"",
		  "\"\\ufffd\\\"\""),
		C("a\xc3\xa9\xff\xc3\xa9z", "\"a\xc3\xa9\\ufffd\xc3\xa9z\""),
#undef C
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		char *got = string_json(cases[i].in, cases[i].len);

		if (strcmp(got, cases[i].out) != 0)
			print_error("case %zu: got %s want %s\n", i, got, cases[i].out);
		assert_string_equal(got, cases[i].out);
		free(got);
	}
}

static void test_nesting_and_commas(void **state)
{
	struct json_writer w;

	jw_init_buf(&w);
	jw_object_begin(&w);
	jw_key(&w, "a");
	jw_int(&w, 1);
	jw_key(&w, "b");
	jw_array_begin(&w);
	jw_bool(&w, true);
	jw_bool(&w, false);
	jw_null(&w);
	jw_string(&w, "x");
	jw_array_begin(&w);
	jw_array_end(&w);
	jw_object_begin(&w);
	jw_object_end(&w);
	jw_array_begin(&w);
	jw_array_begin(&w);
	jw_uint(&w, 2);
	jw_array_end(&w);
	jw_array_end(&w);
	jw_array_end(&w);
	jw_key(&w, "c");
	jw_object_begin(&w);
	jw_key(&w, "d\"e");
	jw_string(&w, NULL);
	jw_object_end(&w);
	jw_object_end(&w);
	assert_int_equal(jw_finish(&w), 0);
	assert_string_equal(jw_buf(&w, NULL), "{\"a\":1,\"b\":[true,false,null,\"x\",[],{},[[2]]],"
					      "\"c\":{\"d\\\"e\":null}}");
	jw_fini(&w);
}

static void test_top_level_scalars(void **state)
{
	struct json_writer w;
	size_t len = 99;

	jw_init_buf(&w);
	assert_string_equal(jw_buf(&w, &len), "");
	assert_int_equal(len, 0);
	assert_int_equal(jw_finish(&w), -EINVAL); /* nothing written yet */
	jw_int(&w, -5);
	assert_int_equal(jw_finish(&w), 0);
	assert_string_equal(jw_buf(&w, &len), "-5");
	assert_int_equal(len, 2);
	jw_fini(&w);
}

static void test_integers(void **state)
{
	struct json_writer w;

	jw_init_buf(&w);
	jw_array_begin(&w);
	jw_int(&w, INT64_MIN);
	jw_int(&w, INT64_MAX);
	jw_int(&w, 0);
	jw_uint(&w, UINT64_MAX);
	jw_uint(&w, 0);
	jw_array_end(&w);
	assert_int_equal(jw_finish(&w), 0);
	assert_string_equal(jw_buf(&w, NULL), "[-9223372036854775808,9223372036854775807,0,"
					      "18446744073709551615,0]");
	jw_fini(&w);
}

static char *double_json(double v, int fixed)
{
	struct json_writer w;
	char *r;

	jw_init_buf(&w);
	if (fixed < 0)
		jw_double(&w, v);
	else
		jw_double_fixed(&w, v, fixed);
	assert_int_equal(jw_finish(&w), 0);
	r = strdup(jw_buf(&w, NULL));
	jw_fini(&w);
	return r;
}

static void test_doubles(void **state)
{
	static const struct {
		double v;
		int fixed; /* -1: jw_double */
		const char *out;
	} cases[] = {
		{ 0.1, -1, "0.1" },
		{ 1.0, -1, "1" },
		{ -2.5, -1, "-2.5" },
		{ 0.0, -1, "0" },
		{ -0.0, -1, "0" },
		{ 1e300, -1, "1e+300" },
		{ -1e-300, -1, "-1e-300" },
		{ 123456.789, -1, "123456.789" },
		{ 9007199254740992.0, -1, "9007199254740992" },
		{ 1.0 / 3.0, -1, "0.3333333333333333" },
		{ 0.1 + 0.2, -1, "0.30000000000000004" },
		{ 5e-324, -1, "4.94065645841247e-324" }, /* denormal: 15 digits suffice */
		{ NAN, -1, "null" },
		{ INFINITY, -1, "null" },
		{ -INFINITY, -1, "null" },
		{ 2.5, 2, "2.5" },
		{ 2.71828, 2, "2.72" },
		{ 3.0, 2, "3" },
		{ 100.0, 0, "100" },
		{ 1234.5678, 0, "1235" },
		{ -0.001, 2, "0" },
		{ -1.25, 1, "-1.2" }, /* round half to even in binary: 1.25 is exact */
		{ 0.000123, 3, "0" },
		{ 1e20, 2, "1e+20" },
		{ NAN, 2, "null" },
		{ -INFINITY, 2, "null" },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		char *got = double_json(cases[i].v, cases[i].fixed);

		if (strcmp(got, cases[i].out) != 0)
			print_error("case %zu: got %s want %s\n", i, got, cases[i].out);
		assert_string_equal(got, cases[i].out);
		free(got);
	}
}

/* Whatever jw_double() writes reads back as the same double. */
static void test_double_round_trip(void **state)
{
	unsigned long long x = 0x9E3779B97F4A7C15ULL;
	int i;

	for (i = 0; i < 20000; i++) {
		double v, back;
		char *s;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		memcpy(&v, &x, sizeof(v));
		if (!isfinite(v))
			continue;
		s = double_json(v, -1);
		back = strtod(s, NULL);
		if (back != v && !(v == 0 && back == 0))
			print_error("%.17g written as %s\n", v, s);
		assert_true(back == v || (v == 0 && back == 0));
		assert_true(strlen(s) <= 24);
		free(s);
	}
}

static void test_fixed_bad_decimals(void **state)
{
	struct json_writer w;

	jw_init_buf(&w);
	jw_double_fixed(&w, 1.0, 18);
	assert_int_equal(jw_error(&w), -EINVAL);
	jw_fini(&w);
	jw_init_buf(&w);
	jw_double_fixed(&w, 1.0, -1);
	assert_int_equal(jw_error(&w), -EINVAL);
	jw_fini(&w);
}

/* Run one misuse script; check the error and that nothing more was
 * written after it. */
static void expect_misuse(void (*script)(struct json_writer *), int err, const char *text)
{
	struct json_writer w;

	jw_init_buf(&w);
	script(&w);
	assert_int_equal(jw_error(&w), err);
	assert_int_equal(jw_finish(&w), err);
	assert_string_equal(jw_buf(&w, NULL), text);
	jw_fini(&w);
}

static void value_without_key(struct json_writer *w)
{
	jw_object_begin(w);
	jw_int(w, 1);
	jw_key(w, "late");
}

static void key_in_array(struct json_writer *w)
{
	jw_array_begin(w);
	jw_key(w, "k");
	jw_int(w, 1);
}

static void key_at_top(struct json_writer *w)
{
	jw_key(w, "k");
}

static void two_keys(struct json_writer *w)
{
	jw_object_begin(w);
	jw_key(w, "a");
	jw_key(w, "b");
}

static void null_key(struct json_writer *w)
{
	jw_object_begin(w);
	jw_key(w, NULL);
}

static void mismatched_end(struct json_writer *w)
{
	jw_object_begin(w);
	jw_array_end(w);
	jw_object_end(w);
}

static void end_with_dangling_key(struct json_writer *w)
{
	jw_object_begin(w);
	jw_key(w, "a");
	jw_object_end(w);
}

static void end_at_top(struct json_writer *w)
{
	jw_array_end(w);
}

static void second_top_level(struct json_writer *w)
{
	jw_array_begin(w);
	jw_array_end(w);
	jw_int(w, 1);
}

static void too_deep(struct json_writer *w)
{
	int i;

	for (i = 0; i < JW_MAX_DEPTH + 1; i++)
		jw_array_begin(w);
	for (i = 0; i < JW_MAX_DEPTH + 1; i++)
		jw_array_end(w);
}

static void null_stringn(struct json_writer *w)
{
	jw_array_begin(w);
	jw_stringn(w, NULL, 3);
}

static void test_misuse(void **state)
{
	char deep[JW_MAX_DEPTH + 1];

	expect_misuse(value_without_key, -EINVAL, "{");
	expect_misuse(key_in_array, -EINVAL, "[");
	expect_misuse(key_at_top, -EINVAL, "");
	expect_misuse(two_keys, -EINVAL, "{\"a\":");
	expect_misuse(null_key, -EINVAL, "{");
	expect_misuse(mismatched_end, -EINVAL, "{");
	expect_misuse(end_with_dangling_key, -EINVAL, "{\"a\":");
	expect_misuse(end_at_top, -EINVAL, "");
	expect_misuse(second_top_level, -EINVAL, "[]");
	expect_misuse(null_stringn, -EINVAL, "[");
	memset(deep, '[', JW_MAX_DEPTH);
	deep[JW_MAX_DEPTH] = '\0';
	expect_misuse(too_deep, -E2BIG, deep);
}

/* JW_MAX_DEPTH levels themselves are fine. */
static void test_max_depth(void **state)
{
	struct json_writer w;
	char want[2 * JW_MAX_DEPTH + 1];
	int i;

	jw_init_buf(&w);
	for (i = 0; i < JW_MAX_DEPTH; i++)
		jw_array_begin(&w);
	for (i = 0; i < JW_MAX_DEPTH; i++)
		jw_array_end(&w);
	assert_int_equal(jw_finish(&w), 0);
	memset(want, '[', JW_MAX_DEPTH);
	memset(want + JW_MAX_DEPTH, ']', JW_MAX_DEPTH);
	want[2 * JW_MAX_DEPTH] = '\0';
	assert_string_equal(jw_buf(&w, NULL), want);
	jw_fini(&w);
}

static void test_incomplete(void **state)
{
	struct json_writer w;

	jw_init_buf(&w);
	jw_object_begin(&w);
	jw_key(&w, "a");
	jw_array_begin(&w);
	assert_int_equal(jw_error(&w), 0);        /* fine so far... */
	assert_int_equal(jw_finish(&w), -EINVAL); /* ...but not finished */
	jw_array_end(&w);
	jw_object_end(&w);
	assert_int_equal(jw_finish(&w), 0);
	jw_fini(&w);
}

/* Writes the same object through any writer. */
static void write_sample(struct json_writer *w, int n)
{
	jw_object_begin(w);
	jw_key(w, "n");
	jw_int(w, n);
	jw_key(w, "s");
	jw_string(w, "t\xc3\xa9\n");
	jw_object_end(w);
}

static void test_file_sink_and_reset(void **state)
{
	struct json_writer w, b;
	char *text = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&text, &size);

	assert_non_null(f);
	jw_init(&w, f);
	assert_null(jw_buf(&w, NULL));
	write_sample(&w, 1);
	assert_int_equal(jw_finish(&w), 0);
	fputc('\n', f);
	jw_reset(&w);
	write_sample(&w, 2);
	assert_int_equal(jw_finish(&w), 0);
	fputc('\n', f);
	assert_int_equal(fclose(f), 0);
	assert_string_equal(text,
			    "{\"n\":1,\"s\":\"t\xc3\xa9\\n\"}\n{\"n\":2,\"s\":\"t\xc3\xa9\\n\"}\n");

	/* The memory sink writes the same bytes; reset empties it. */
	jw_init_buf(&b);
	write_sample(&b, 1);
	assert_int_equal(jw_finish(&b), 0);
	assert_memory_equal(jw_buf(&b, NULL), text, strlen(jw_buf(&b, NULL)));
	jw_reset(&b);
	assert_string_equal(jw_buf(&b, NULL), "");
	write_sample(&b, 2);
	assert_int_equal(jw_finish(&b), 0);
	assert_string_equal(jw_buf(&b, NULL), "{\"n\":2,\"s\":\"t\xc3\xa9\\n\"}");
	jw_fini(&b);
	free(text);
}

static void test_file_errors(void **state)
{
	struct json_writer w;
	FILE *f;

	jw_init(&w, NULL);
	jw_int(&w, 1);
	assert_int_equal(jw_error(&w), -EINVAL);

	f = fopen("/dev/full", "w");
	if (!f) {
		skip();
		return;
	}
	setvbuf(f, NULL, _IONBF, 0);
	jw_init(&w, f);
	jw_string(&w, "x");
	assert_int_equal(jw_error(&w), -EIO);
	assert_int_equal(jw_finish(&w), -EIO);
	fclose(f);
}

/* Many values: the memory buffer grows past its first allocation. */
static void test_buffer_growth(void **state)
{
	struct json_writer w;
	size_t len;
	const char *s;
	int i;

	jw_init_buf(&w);
	jw_array_begin(&w);
	for (i = 0; i < 10000; i++)
		jw_int(&w, i % 10);
	jw_array_end(&w);
	assert_int_equal(jw_finish(&w), 0);
	s = jw_buf(&w, &len);
	assert_int_equal(len, 2 + 10000 + 9999);
	assert_int_equal(strlen(s), len);
	assert_memory_equal(s, "[0,1,2,3", 8);
	assert_memory_equal(s + len - 5, ",8,9]", 5);
	jw_fini(&w);
}

/* A locale with a decimal comma must not leak into the output. Skipped
 * when no such locale is installed. */
static void test_locale_independent(void **state)
{
	static const char *const names[] = { "de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8",
					     "ru_RU.UTF-8", "de_DE" };
	char *s;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(names); i++)
		if (setlocale(LC_NUMERIC, names[i]))
			break;
	if (i == ARRAY_SIZE(names)) {
		skip();
		return;
	}
	s = double_json(0.5, -1);
	assert_string_equal(s, "0.5");
	free(s);
	s = double_json(2.25, 1);
	assert_string_equal(s, "2.2");
	free(s);
	setlocale(LC_NUMERIC, "C");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_escaping_table),
		cmocka_unit_test(test_nesting_and_commas),
		cmocka_unit_test(test_top_level_scalars),
		cmocka_unit_test(test_integers),
		cmocka_unit_test(test_doubles),
		cmocka_unit_test(test_double_round_trip),
		cmocka_unit_test(test_fixed_bad_decimals),
		cmocka_unit_test(test_misuse),
		cmocka_unit_test(test_max_depth),
		cmocka_unit_test(test_incomplete),
		cmocka_unit_test(test_file_sink_and_reset),
		cmocka_unit_test(test_file_errors),
		cmocka_unit_test(test_buffer_growth),
		cmocka_unit_test(test_locale_independent),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

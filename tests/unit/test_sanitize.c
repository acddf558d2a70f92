// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_sanitize.c - what a target can put in a name never reaches the
 * terminal as a control: ESC sequences, CR/LF, TAB, DEL, C1 controls
 * (raw and UTF-8 encoded) and every kind of invalid UTF-8 become '?';
 * valid UTF-8 (2, 3 and 4 bytes) is kept; output is cut at a character
 * boundary; in-place use gives the same result.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <string.h>

#include "util/sanitize.h"

static void expect(const char *in, const char *want)
{
	char buf[128], copy[128];

	assert_string_equal(sanitize_text(buf, sizeof(buf), in), want);
	strcpy(copy, in);
	assert_string_equal(sanitize_inplace(copy), want);
}

static void test_controls(void **state)
{
	(void)state;
	expect("malloc", "malloc");
	expect("\x1b]0;pwned\x07title", "?]0;pwned?title");
	expect("\x1b[2J\x1b[31mred", "?[2J?[31mred");
	expect("two\nlines\r", "two?lines?");
	expect("tab\there\x7f", "tab?here?");
	expect("c1 \xc2\x9b"
	       "31m",
	       "c1 ?31m"); /* U+009B CSI, encoded */
	expect("raw \x9b"
	       "31m",
	       "raw ?31m"); /* a lone C1 byte: invalid */
	expect("?", "?");
}

static void test_utf8(void **state)
{
	(void)state;
	expect("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80",
	       "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
	expect("\xc0\xaf", "??");                /* overlong '/' */
	expect("\xe0\x80\xaf", "???");           /* overlong, 3 bytes */
	expect("\xed\xa0\x80", "???");           /* surrogate U+D800 */
	expect("\xf4\x90\x80\x80", "????");      /* above U+10FFFF */
	expect("\xf8\x88\x80\x80\x80", "?????"); /* 5-byte form */
	expect("cut \xe2\x82", "cut ??");        /* truncated at the end */
	expect("\xe2\x82x", "??x");
}

/* The decoder json_writer shares: lengths and code points of well-formed
 * sequences, 0 for every ill-formed one; controls are not its business. */
static void test_utf8_sequence(void **state)
{
	static const struct {
		const char *s;
		size_t len;
		unsigned int cp;
	} cases[] = {
		{ "A", 1, 'A' },
		{ "\x1b", 1, 0x1b },
		{ "\xc2\x85", 2, 0x85 }, /* C1 NEL: well-formed */
		{ "\xc3\xa9", 2, 0xe9 },
		{ "\xe2\x82\xac", 3, 0x20ac },
		{ "\xf0\x9f\x98\x80", 4, 0x1f600 },
		{ "\xf4\x8f\xbf\xbf", 4, 0x10ffff },
		{ "\xc0\xaf", 0, 0 },         /* overlong '/' */
		{ "\xe0\x80\xaf", 0, 0 },     /* overlong */
		{ "\xed\xa0\x80", 0, 0 },     /* surrogate */
		{ "\xf4\x90\x80\x80", 0, 0 }, /* above U+10FFFF */
		{ "\x80", 0, 0 },             /* lone continuation */
		{ "\xe2\x82", 0, 0 },         /* truncated */
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		unsigned int cp = 0;
		size_t n = utf8_sequence(cases[i].s, strlen(cases[i].s), &cp);

		assert_int_equal(n, cases[i].len);
		if (n)
			assert_int_equal(cp, cases[i].cp);
	}
}

static void test_bounds(void **state)
{
	char buf[6];

	(void)state;
	assert_string_equal(sanitize_text(buf, sizeof(buf), "abcdefgh"), "abcde");
	/* a 3-byte character that does not fit is left out whole */
	assert_string_equal(sanitize_text(buf, sizeof(buf), "abc\xe2\x82\xac"), "abc");
	assert_string_equal(sanitize_text(buf, sizeof(buf), NULL), "");
	assert_string_equal(sanitize_text(buf, 1, "abc"), "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_controls),
		cmocka_unit_test(test_utf8),
		cmocka_unit_test(test_utf8_sequence),
		cmocka_unit_test(test_bounds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

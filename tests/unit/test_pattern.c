// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_pattern.c - the bounded pattern matcher (util/pattern.c): the same
 * answers as glibc's regexec() on a table of patterns and texts, every
 * refusal, the caps, and the patterns that cost glibc gigabytes
 * ("a" then 26 "+", "(a*)*b") compiled and matched within the stated
 * bound of steps.
 */
#include <errno.h>
#include <regex.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "util/pattern.h"

static const char *const patterns[] = {
	"malloc",
	"^malloc$",
	"^(malloc|calloc|realloc)$",
	"^(operator new.*|operator delete.*|std::.*|__gnu_cxx::.*)$",
	"^(__rust_(alloc|alloc_zeroed|realloc)|<?alloc::.*|<[^>]* as alloc::.*)$",
	"^(je_[A-Za-z0-9_]+|mallocx)$",
	"^(libtcmalloc(_minimal|_and_profiler)?\\.so)",
	"^(z(try)?(malloc|calloc|realloc)[a-z_]*|zstrdup)$",
	"my_alloc",
	"a.c",
	"a*",
	"a+b",
	"ab?c",
	"(ab)+",
	"(a|b)*c",
	"a{2}",
	"^a{2}$",
	"^a{2,}$",
	"^a{1,3}$",
	"^a{,2}$",
	"^(ab){0}c",
	"^x{0,0}$",
	"[[:digit:]]+",
	"^[[:alpha:]_][[:alnum:]_]*$",
	"[^a-z]",
	"^[^a-z]*$",
	"[]a]",
	"[a-]",
	"[-a]",
	"[.]",
	"\\.",
	"\\(x\\)",
	"a|",
	"|a",
	"()",
	"(|a)b",
	"a**",
	"a+?",
	"(a*)*b",
	"(a|ab)(c|bcd)d",
	"x$|^y",
	"^$",
	"$",
	"^",
	"a^",
	"$a",
	"]",
	"}",
	"a}",
	"[[:upper:]][[:lower:]]+",
	"[[:space:]]",
	"[[:punct:]]",
	"[[:xdigit:]]{4}",
	"a{1,2}{3}",
	"(a|b|c|d|e)+f",
	"operator new\\[\\]",
	"\\^\\$\\*\\+\\?\\{\\}\\|\\\\",
};

static const char *const texts[] = {
	"",
	"a",
	"b",
	"c",
	"aa",
	"aaa",
	"aaaa",
	"ab",
	"abc",
	"ac",
	"abbc",
	"abab",
	"abcd",
	"abcdd",
	"malloc",
	"my_malloc",
	"malloc_stats",
	"calloc",
	"operator new(unsigned long)",
	"operator new[](unsigned long)",
	"std::vector<int>::push_back",
	"__rust_alloc",
	"<alloc::vec::Vec<T> as core::Clone>::clone",
	"<T as alloc::vec::spec_from_elem::SpecFromElem>::from_elem",
	"je_malloc",
	"je_",
	"libtcmalloc_minimal.so.4",
	"libtcmalloc.so",
	"zmalloc_usable",
	"ztrycalloc",
	"zstrdup",
	"my_alloc_buffer",
	"x",
	"y",
	"xy",
	"yx",
	"A1",
	"_foo9",
	"9foo",
	"1234",
	"12g4",
	"dead",
	"]",
	"}",
	"-",
	".",
	"(x)",
	"Hello",
	"a b",
	"a,b",
	"aaaaaa",
	"aaaaab",
	"fgh",
	"eeeef",
	"^$*+?{}|\\",
	"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab",
};

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* Every pattern, on every text: the answer glibc gives. */
static void test_same_as_regexec(void **state)
{
	size_t i, j, checked = 0;

	for (i = 0; i < N(patterns); i++) {
		char err[128];
		struct pattern *p = pattern_compile(patterns[i], err, sizeof(err));
		regex_t re;

		if (!p)
			fail_msg("'%s' refused: %s", patterns[i], err);
		assert_int_equal(regcomp(&re, patterns[i], REG_EXTENDED | REG_NOSUB), 0);
		for (j = 0; j < N(texts); j++) {
			bool want = regexec(&re, texts[j], 0, NULL, 0) == 0;

			if (pattern_match(p, texts[j]) != want)
				fail_msg("'%s' on '%s': %d, regexec says %d", patterns[i], texts[j],
					 !want, want);
			checked++;
		}
		regfree(&re);
		pattern_free(p);
	}
	assert_int_equal(checked, N(patterns) * N(texts));
}

/* What the language leaves out is refused, with a reason. */
static void test_refused(void **state)
{
	static const struct {
		const char *pattern, *reason;
	} bad[] = {
		{ "*a", "repeats nothing" },
		{ "+a", "repeats nothing" },
		{ "a|*b", "repeats nothing" },
		{ "(*a)", "repeats nothing" },
		{ "{1}", "repeats nothing" },
		{ "^*", "repeats an anchor" },
		{ "a{", "'{' is not" },
		{ "a{x}", "'{' is not" },
		{ "a{}", "'{' is not" },
		{ "a{1", "'{' is not" },
		{ "a{2,1}", "counts backwards" },
		{ "a{256}", "a count above 255" },
		{ "a{1,99999}", "a count above 255" },
		{ "(a", "'(' without ')'" },
		{ "a)", "')' without '('" },
		{ ")", "')' without '('" },
		{ "[a", "'[' without ']'" },
		{ "[", "'[' without ']'" },
		{ "[]", "'[' without ']'" },
		{ "[z-a]", "goes backwards" },
		{ "[[:foo:]]", "unknown class" },
		{ "[[:alpha:]", "'[' without ']'" },
		{ "[[.a.]]", "not supported" },
		{ "[[=a=]]", "not supported" },
		{ "(a)\\1", "not supported" },
		{ "\\d", "not supported" },
		{ "\\w+", "not supported" },
		{ "a\\", "ends the pattern" },
	};
	size_t i;

	for (i = 0; i < N(bad); i++) {
		char err[128] = "";

		errno = 0;
		if (pattern_compile(bad[i].pattern, err, sizeof(err)))
			fail_msg("'%s' compiled", bad[i].pattern);
		assert_int_equal(errno, EINVAL);
		if (!strstr(err, bad[i].reason))
			fail_msg("'%s': '%s', not '%s'", bad[i].pattern, err, bad[i].reason);
		assert_null(strchr(err, '\n'));
	}
}

/* The length cap and the states cap. */
static void test_caps(void **state)
{
	char src[PATTERN_MAX_LEN + 2], err[128];
	struct pattern *p;

	memset(src, 'a', PATTERN_MAX_LEN);
	src[PATTERN_MAX_LEN] = '\0';
	p = pattern_compile(src, err, sizeof(err));
	assert_non_null(p);
	assert_true(pattern_match(p, src));
	pattern_free(p);
	src[PATTERN_MAX_LEN] = 'a';
	src[PATTERN_MAX_LEN + 1] = '\0';
	assert_null(pattern_compile(src, err, sizeof(err)));
	assert_string_equal(err, "longer than 256 bytes");

	/* 4 x 255 states fit; one more does not */
	p = pattern_compile("a{255}b{255}c{255}d{255}", err, sizeof(err));
	assert_non_null(p);
	assert_int_equal(pattern_states(p), 4 * 255 + 1);
	pattern_free(p);
	assert_null(pattern_compile("a{255}b{255}c{255}d{255}efgh", err, sizeof(err)));
	assert_non_null(strstr(err, "more than 1024 states"));
	/* an expansion that would be 255^4 states stops at the cap */
	assert_null(pattern_compile("(((a{255}){255}){255}){255}", err, sizeof(err)));
	assert_non_null(strstr(err, "more than 1024 states"));
	/* the most states a pattern of 256 bytes without {m,n} takes: every
	 * byte a '|' (two states each) */
	memset(src, '|', PATTERN_MAX_LEN);
	src[PATTERN_MAX_LEN] = '\0';
	p = pattern_compile(src, err, sizeof(err));
	assert_non_null(p);
	assert_true(pattern_states(p) <= 2 * PATTERN_MAX_LEN + 1);
	pattern_free(p);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Each match took at most 2 x (text length + 1) x states steps. */
static void check_bound(const struct pattern *p, const char *text, bool want)
{
	unsigned long bound = 2ul * (strlen(text) + 1) * pattern_states(p);

	assert_int_equal(pattern_match(p, text), want);
	if (pattern_last_steps() > bound)
		fail_msg("%lu steps > %lu", pattern_last_steps(), bound);
}

/* The audit's patterns: glibc took 12.5 GB and 37 s for "a" and 24 '+',
 * and was killed at 26. Here they compile to a few states and match in
 * linear steps. */
static void test_pathological(void **state)
{
	char src[64], err[128], *text = malloc(65537);
	struct pattern *p;
	double t0 = now_s();
	int n;

	assert_non_null(text);
	memset(text, 'a', 65536);
	text[65536] = '\0';
	for (n = 24; n <= 60; n += 2) {
		src[0] = 'a';
		memset(src + 1, '+', (size_t)n);
		src[n + 1] = '\0';
		p = pattern_compile(src, err, sizeof(err));
		assert_non_null(p);
		assert_true(pattern_states(p) <= (size_t)n + 2);
		check_bound(p, "xyz", false);
		check_bound(p, text, true);
		pattern_free(p);
	}
	p = pattern_compile("(a*)*b", err, sizeof(err));
	assert_non_null(p);
	check_bound(p, text, false); /* no b: every position tried, still linear */
	text[65535] = 'b';
	check_bound(p, text, true);
	pattern_free(p);
	text[65535] = 'a';
	p = pattern_compile("(a|aa|a*|(a+)+)*(x|y){0,200}$z", err, sizeof(err));
	assert_non_null(p);
	check_bound(p, text, false);
	pattern_free(p);
	/* all of it well under a second, even on a loaded machine */
	assert_true(now_s() - t0 < 5.0);
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_as_regexec),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_caps),
		cmocka_unit_test(test_pathological),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_figures.c - how the views show the probes' slowdown (figures.h):
 * nothing before it is measured, a plain figure when its range is narrow,
 * the range when it is wide, only the lower bound when the range has no
 * upper end.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "ui/figures.h"

static void test_slowdown_figure(void **state)
{
	char b[64];

	(void)state;
	/* the calibration's guess is never shown */
	assert_string_equal(fig_slowdown(b, sizeof(b), false, 21564, 21564, 21564), "-");
	assert_string_equal(fig_slowdown(b, sizeof(b), true, 12.5, 11, 14), "12.5%");
	/* 1 + S known within 25% either way: plain */
	assert_false(fig_slowdown_approx(300, 240, 380));
	assert_string_equal(fig_slowdown(b, sizeof(b), true, 950, 620, 1900), "~950% (620-1900%)");
	assert_true(fig_slowdown_approx(950, 620, 1900));
	assert_string_equal(fig_slowdown(b, sizeof(b), true, 33786, 3864, INFINITY), ">= 3864%");
	assert_true(fig_slowdown_approx(100, 80, INFINITY));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_slowdown_figure),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

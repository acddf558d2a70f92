// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_metrics.c - /metrics' bound on sites and what it leaves out: with
 * more sites than the exposition shows, the rest are one site="other"
 * series in the additive families (in-use bytes, bytes allocated per
 * second), so summing a family gives every site's total; none in the
 * growth and score families; and no "other" series at all when every
 * site is shown.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export/metrics.h"
#include "util/strpool.h"
#include "target_fixture.h"

static struct mt_frame frame(const char *fn, const char *module, __u64 addr)
{
	struct mt_frame f = {
		.addr = addr,
		.rel_addr = addr & 0xffff,
		.function = strpool_intern(fn),
		.module = strpool_intern(module),
		.module_path = strpool_intern(module),
	};

	return f;
}

/* A model of nsites sites fn_0 .. fn_N, site i holding 100 * (i + 1)
 * bytes (rate 1: every allocation sampled with weight 1). */
static struct mt_model *model_of(int nsites)
{
	struct mt_model_opts o = { .rate = 1, .group = MT_GROUP_FUNCTION };
	struct mt_model *m = model_new(&o);
	char name[32];

	assert_non_null(m);
	assert_non_null(test_target(m, 10));
	for (int i = 0; i < nsites; i++) {
		struct mt_frame f[3];
		struct mt_sample_in in = { .pid = 10,
					   .ts_ns = 1,
					   .addr = 0x1000 + 0x100 * (__u64)i,
					   .size = 100 * (__u64)(i + 1),
					   .frames = f,
					   .nframes = 3 };

		snprintf(name, sizeof(name), "fn_%d", i);
		f[0] = frame("malloc", "libc.so.6", 0x7f0000001000);
		f[1] = frame(name, "app", 0x401000 + 0x100 * (__u64)i);
		f[2] = frame("main", "app", 0x402000);
		assert_int_equal(model_apply(m, MT_INPUT_ALLOC(&in)), 0);
	}
	model_apply(m, MT_INPUT_TICK(1000000000ULL));
	return m;
}

struct family_sum {
	int series, other;
	double sum, other_value;
};

/* The series of one family in text: how many, their sum, the "other" one. */
static struct family_sum sum_family(const char *text, const char *family)
{
	struct family_sum r = { 0 };
	char prefix[96], *copy = strdup(text), *line, *save;
	const char *other = "{site=\"" METRICS_OTHER_SITE "\",function=\"" METRICS_OTHER_FUNCTION
			    "\",module=\"\",file=\"\",line=\"0\"} ";

	assert_non_null(copy);
	snprintf(prefix, sizeof(prefix), "%s{", family);
	for (line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		double v;

		if (strncmp(line, prefix, strlen(prefix)))
			continue;
		v = strtod(strrchr(line, ' ') + 1, NULL);
		r.series++;
		r.sum += v;
		if (!strncmp(line + strlen(family), other, strlen(other))) {
			r.other++;
			r.other_value = v;
		}
	}
	free(copy);
	return r;
}

static void test_rest_is_one_other_series(void **state)
{
	struct mt_model *m = model_of(61);
	struct mt_status st = { .duty = 1 };
	struct family_sum inuse, alloc;
	char *text;
	size_t len;

	assert_int_equal(metrics_text(m, &st, 1.5, &text, &len), 0);
	assert_non_null(strstr(text, "memtop_sites 61\n"));
	inuse = sum_family(text, "memtop_site_inuse_bytes");
	assert_int_equal(inuse.other, 1);
	assert_true(inuse.series - 1 <= 2 * METRICS_TOP_SITES && inuse.series - 1 < 61);
	/* 100 + 200 + ... + 6100: every byte, shown or summed into "other" */
	assert_true(inuse.sum == 189100.0);
	assert_true(inuse.other_value > 0 && inuse.other_value < 189100.0);
	alloc = sum_family(text, "memtop_site_alloc_bytes_per_second");
	assert_int_equal(alloc.other, 1);
	assert_int_equal(alloc.series, inuse.series);
	assert_int_equal(sum_family(text, "memtop_site_leak_score").other, 0);
	assert_int_equal(sum_family(text, "memtop_site_leak_score").series, inuse.series - 1);
	assert_int_equal(sum_family(text, "memtop_site_growth_bytes_per_second").other, 0);
	free(text);
	model_free(m);
}

static void test_no_other_when_all_shown(void **state)
{
	struct mt_model *m = model_of(5);
	struct mt_status st = { .duty = 1 };
	struct family_sum inuse;
	char *text;
	size_t len;

	assert_int_equal(metrics_text(m, &st, 1.5, &text, &len), 0);
	inuse = sum_family(text, "memtop_site_inuse_bytes");
	assert_int_equal(inuse.series, 5);
	assert_int_equal(inuse.other, 0);
	assert_true(inuse.sum == 1500.0);
	assert_null(strstr(text, METRICS_OTHER_FUNCTION));
	free(text);
	model_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rest_is_one_other_series),
		cmocka_unit_test(test_no_other_when_all_shown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

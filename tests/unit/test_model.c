// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_model.c - site aggregation: weights, in-use accounting through
 * frees, call-site choice past allocator machinery, grouping and
 * regrouping, per-process forgetting, rates and sorting, the per-target
 * bound on stacks, a sample without a frame, the device tier (its own sites, out of the heap,
 * per-device totals and growth, the tier filter, its words).
 */
#include <math.h>
#include <stdio.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "model/model.h"
#include "target_fixture.h"
#include "probe/device_source.h"
#include "util/sampling.h"
#include "util/strpool.h"
#include "frame_fixture.h"

#define RATE 4096

static void alloc(struct mt_model *m, pid_t pid, __u64 addr, __u64 size, const struct mt_frame *fr,
		  int n)
{
	struct mt_sample_in in = {
		.pid = pid, .ts_ns = 1, .addr = addr, .size = size, .frames = fr, .nframes = n
	};

	assert_int_equal(model_apply(m, MT_INPUT_ALLOC(&in)), 0);
}

/* A device allocation of the device tier: weight 1, exact. */
static void dev_alloc(struct mt_model *m, pid_t pid, __u64 addr, __u64 size, __u64 ts,
		      const struct mt_frame *fr, int n, __u8 kind)
{
	struct mt_sample_in in = { .pid = pid,
				   .ts_ns = ts,
				   .addr = addr,
				   .size = size,
				   .weight_bytes = size,
				   .dev = { MT_TIER_DEVICE, MT_DEV_VULKAN, kind, 0, 2 },
				   .frames = fr,
				   .nframes = n };

	assert_int_equal(model_apply(m, MT_INPUT_ALLOC(&in)), 0);
}

static struct mt_site *site_named(struct mt_model *m, const char *fn)
{
	size_t i;

	for (i = 0; i < model_site_count(m); i++)
		if (!strcmp(model_site_at(m, i)->frame->function, fn))
			return model_site_at(m, i);
	return NULL;
}

static struct mt_model *new_model(enum mt_group g, const char *skip)
{
	struct mt_model_opts o = { .rate = RATE, .group = g, .skip_regex = skip };
	struct mt_model *m = model_new(&o);

	assert_non_null(m);
	return m;
}

static void test_weights_and_frees(void **state)
{
	struct mt_model *m = new_model(MT_GROUP_FUNCTION, NULL);
	struct mt_frame st[2] = { frame("leak_site", 10), frame("main", 20) };
	double w = sampling_weight(100, RATE);
	struct mt_site *s;

	test_target(m, 7);
	alloc(m, 7, 0x1000, 100, st, 2);
	alloc(m, 7, 0x2000, 100, st, 2);
	s = site_named(m, "leak_site");
	assert_non_null(s);
	assert_true(fabs(s->alloc_bytes - 2 * w * 100) < 1e-6);
	assert_true(fabs(s->inuse_objects - 2 * w) < 1e-9);
	assert_int_equal(s->samples, 2);
	assert_int_equal(s->live_samples, 2);
	assert_int_equal(s->size_hist[7], 2); /* 100 is in (64, 128] */

	model_apply(m, MT_INPUT_FREE(7, 0x1000, 2));
	assert_true(fabs(s->inuse_bytes - w * 100) < 1e-6);
	assert_true(fabs(s->freed_bytes - w * 100) < 1e-6);
	assert_true(fabs(model_target(m, 7)->inuse_bytes - w * 100) < 1e-6);
	/* a second free of the same address, or of one never sampled */
	model_apply(m, MT_INPUT_FREE(7, 0x1000, 3));
	model_apply(m, MT_INPUT_FREE(8, 0x2000, 3));
	assert_int_equal(model_drops(m)->unknown_frees, 2);
	model_apply(m, MT_INPUT_FREE(7, 0x2000, 4));
	assert_true(s->inuse_bytes == 0);
	assert_true(fabs(s->alloc_bytes - 2 * w * 100) < 1e-6); /* allocation totals stay */
	model_free(m);
}

static void test_untracked_counts_but_never_in_use(void **state)
{
	struct mt_model *m = new_model(MT_GROUP_FUNCTION, NULL);
	struct mt_frame st[1] = { frame("f", 1) };
	struct mt_sample_in in = {
		.pid = 1, .addr = 0x10, .size = 64, .untracked = true, .frames = st, .nframes = 1
	};
	struct mt_site *s;

	assert_int_equal(model_apply(m, MT_INPUT_ALLOC(&in)), 0);
	s = site_named(m, "f");
	assert_int_equal(s->samples, 1);
	assert_true(s->inuse_bytes == 0);
	assert_true(s->alloc_bytes > 0);
	model_free(m);
}

static void test_site_skips_allocator_frames(void **state)
{
	struct mt_model *m = new_model(MT_GROUP_FUNCTION, "^my_xalloc$");
	struct mt_frame cpp[4] = { frame("operator new(unsigned long)", 1),
				   frame("std::vector<int, std::allocator<int> >::_M_realloc_insert",
					 2),
				   frame("build_index", 3), frame("main", 4) };
	struct mt_frame wrapped[3] = { frame("my_xalloc", 5), frame("parse_config", 6),
				       frame("main", 7) };
	struct mt_frame all_machinery[1] = { frame("malloc", 8) };

	alloc(m, 1, 0x10, 32, cpp, 4);
	alloc(m, 1, 0x20, 32, wrapped, 3);
	alloc(m, 1, 0x30, 32, all_machinery, 1);
	assert_non_null(site_named(m, "build_index"));
	assert_non_null(site_named(m, "parse_config"));
	assert_non_null(site_named(m, "malloc")); /* nothing else to blame */
	assert_int_equal(site_named(m, "build_index")->stack->site_frame, 2);
	model_free(m);
}

static void test_grouping_and_regrouping(void **state)
{
	struct mt_model *m = new_model(MT_GROUP_FUNCTION, NULL);
	/* the same function reached from two callers, at two lines */
	struct mt_frame a[2] = { frame("cache_put", 100), frame("handler_a", 1) };
	struct mt_frame b[2] = { frame("cache_put", 101), frame("handler_b", 2) };
	double total;

	alloc(m, 1, 0x10, 1000, a, 2);
	alloc(m, 1, 0x20, 1000, b, 2);
	alloc(m, 1, 0x30, 1000, b, 2);
	assert_int_equal(model_site_count(m), 1);
	total = model_site_at(m, 0)->inuse_bytes;
	assert_int_equal(model_stack_count(m), 2);

	assert_int_equal(model_apply(m, MT_INPUT_GROUP(MT_GROUP_LINE)), 0);
	assert_int_equal(model_site_count(m), 2);
	assert_true(fabs(model_inuse_bytes(m) - total) < 1e-6);

	assert_int_equal(model_apply(m, MT_INPUT_GROUP(MT_GROUP_STACK)), 0);
	assert_int_equal(model_site_count(m), 2);
	/* frees after regrouping land in the new sites */
	model_apply(m, MT_INPUT_FREE(1, 0x20, 5));
	model_apply(m, MT_INPUT_FREE(1, 0x30, 5));
	assert_true(fabs(model_inuse_bytes(m) - total / 3) < 1e-6);

	assert_int_equal(model_apply(m, MT_INPUT_GROUP(MT_GROUP_FUNCTION)), 0);
	assert_int_equal(model_site_count(m), 1);
	assert_int_equal(model_site_at(m, 0)->samples, 3);
	assert_int_equal(model_site_at(m, 0)->live_samples, 1);
	model_free(m);
}

static void test_drop_process(void **state)
{
	struct mt_model *m = new_model(MT_GROUP_FUNCTION, NULL);
	struct mt_frame st[1] = { frame("f", 1) };
	int i;

	test_target(m, 1);
	test_target(m, 2);
	for (i = 0; i < 500; i++) {
		alloc(m, 1, 0x1000 + i * 16, 64, st, 1);
		alloc(m, 2, 0x1000 + i * 16, 64, st, 1);
	}
	model_apply(m, MT_INPUT_DROP(1));
	assert_true(model_target(m, 1)->inuse_bytes == 0);
	assert_true(fabs(model_target(m, 2)->inuse_bytes - 500 * 64 * sampling_weight(64, RATE)) <
		    1e-3);
	assert_int_equal(site_named(m, "f")->live_samples, 500);
	/* forgotten, not freed */
	assert_true(site_named(m, "f")->freed_bytes == 0);
	model_apply(m, MT_INPUT_FREE(1, 0x1000, 9));
	assert_int_equal(model_drops(m)->unknown_frees, 1);
	model_free(m);
}

static void test_reused_address_replaces_sample(void **state)
{
	struct mt_model *m = new_model(MT_GROUP_FUNCTION, NULL);
	struct mt_frame st[1] = { frame("f", 1) };

	alloc(m, 1, 0x10, 64, st, 1);
	alloc(m, 1, 0x10, 64, st, 1); /* its free was lost */
	assert_int_equal(site_named(m, "f")->live_samples, 1);
	model_free(m);
}

/* A sample that comes without a frame (V8's root) is counted under one
 * frame that says so, whatever the grouping: its site is never read past
 * the end of its stack (ASan in make asan), and its free finds it. */
static void test_sample_without_a_frame(void **state)
{
	static const enum mt_group groups[] = { MT_GROUP_FUNCTION, MT_GROUP_LINE, MT_GROUP_STACK };
	size_t g;

	for (g = 0; g < sizeof(groups) / sizeof(groups[0]); g++) {
		struct mt_model *m = new_model(groups[g], NULL);
		struct mt_site *s;

		alloc(m, 1, 0x10, 64, NULL, 0);
		alloc(m, 1, 0x20, 64, NULL, 0);
		s = site_named(m, MT_NO_FRAME);
		assert_non_null(s);
		assert_int_equal(model_site_count(m), 1);
		assert_int_equal(s->stack->nframes, 1);
		assert_int_equal(s->live_samples, 2);
		model_apply(m, MT_INPUT_FREE(1, 0x10, 2));
		assert_int_equal(s->live_samples, 1);
		model_free(m);
	}
}

/* Past max_stacks a target's new stacks go to its overflow site; its old
 * stacks and other targets' are untouched, and a free still finds the
 * folded sample. */
static void test_stacks_bounded_per_target(void **state)
{
	struct mt_model_opts o = { .rate = RATE, .group = MT_GROUP_FUNCTION, .max_stacks = 4 };
	struct mt_model *m = model_new(&o);
	char name[16];
	int i;

	assert_non_null(m);
	test_target(m, 1);
	test_target(m, 2);
	for (i = 0; i < 10; i++) {
		struct mt_frame st[1];

		snprintf(name, sizeof(name), "f%d", i);
		st[0] = frame(name, (__u64)i);
		alloc(m, 1, 0x1000 + (__u64)i * 16, 64, st, 1);
		if (i < 4)
			alloc(m, 2, 0x1000 + (__u64)i * 16, 64, st, 1);
	}
	assert_int_equal(model_target(m, 1)->nstacks, 4);
	assert_int_equal(model_target(m, 1)->limits.stacks_folded, 6);
	assert_int_equal(model_target(m, 2)->limits.stacks_folded, 0);
	assert_non_null(site_named(m, "f3"));
	assert_null(site_named(m, "f4"));
	assert_int_equal(site_named(m, MT_STACKS_OVERFLOW)->samples, 6);
	/* an old stack of the full target still counts where it belongs */
	alloc(m, 1, 0x9000, 64, (struct mt_frame[]){ frame("f0", 0) }, 1);
	assert_int_equal(site_named(m, "f0")->samples, 3);
	model_apply(m, MT_INPUT_FREE(1, 0x1000 + 9 * 16, 2));
	assert_int_equal(site_named(m, MT_STACKS_OVERFLOW)->live_samples, 5);
	assert_true(model_target(m, 1)->inuse_bytes > 0);
	model_free(m);
}

static void test_rates_and_sorting(void **state)
{
	struct mt_model *m = new_model(MT_GROUP_FUNCTION, NULL);
	struct mt_frame big[1] = { frame("big", 1) }, small[1] = { frame("small", 2) };
	struct mt_site *out[4];
	__u64 t0 = 1000000000ULL;
	int i;

	model_apply(m, MT_INPUT_TICK(t0));
	for (i = 0; i < 10; i++)
		alloc(m, 1, 0x100 + i * 64, 8192, big, 1);
	alloc(m, 1, 0x10000, 16, small, 1);
	model_apply(m, MT_INPUT_TICK(t0 + 2000000000ULL));
	assert_true(fabs(model_interval_s(m) - 2.0) < 1e-9);
	assert_true(fabs(site_named(m, "big")->alloc_bytes_per_s -
			 10 * 8192 * sampling_weight(8192, RATE) / 2) < 1e-6);
	assert_int_equal(model_sites_sorted(m, MT_SORT_INUSE, out, 4), 2);
	assert_string_equal(out[0]->frame->function, "big");
	assert_int_equal(model_sites_sorted(m, MT_SORT_NAME, out, 1), 1);
	assert_string_equal(out[0]->frame->function, "big");
	model_apply(m, MT_INPUT_TICK(t0 + 3000000000ULL));
	assert_true(site_named(m, "big")->alloc_bytes_per_s == 0);
	model_free(m);
}

static void test_bad_skip_regex(void **state)
{
	struct mt_model_opts o = { .rate = RATE, .skip_regex = "([unclosed" };

	assert_null(model_new(&o));
}

/* The sizes every view shows are the model's estimated objects: a sample
 * drawn at half duty, or weighted by the process's own sampler, stands
 * for as many objects in its size bucket as in alloc_objects. */
static void test_size_objects_use_the_weights(void **state)
{
	struct mt_model *m = new_model(MT_GROUP_FUNCTION, NULL);
	struct mt_frame st[2] = { frame("sized", 10), frame("main", 20) };
	struct mt_sample_in in = { .pid = 7, .ts_ns = 1, .size = 100, .frames = st, .nframes = 2 };
	struct mt_site *s;
	double sum = 0;
	int i;

	test_target(m, 7);
	in.addr = 0x1000;
	in.duty = 0.5; /* the allocation probes were on half the time */
	assert_int_equal(model_apply(m, MT_INPUT_ALLOC(&in)), 0);
	in.addr = 0x2000;
	in.duty = 0;
	in.weight_bytes = 1 << 20; /* the process's sampler: this sample is 1 MiB */
	assert_int_equal(model_apply(m, MT_INPUT_ALLOC(&in)), 0);
	s = site_named(m, "sized");
	assert_non_null(s);
	for (i = 0; i < MT_SIZE_BUCKETS; i++)
		sum += s->size_objects[i];
	assert_true(fabs(sum - s->alloc_objects) < 1e-6);
	assert_true(fabs(s->size_objects[7] - s->alloc_objects) < 1e-6);  /* (64, 128] */
	assert_true(s->size_objects[7] > 2 * sampling_weight(100, RATE)); /* not the bare rate */
	model_free(m);
}

/* MT_IN_FACTS: a report without MT_FACT_WATCHED reaches only a
 * target that exists; one with it makes the target; the groups a report
 * does not carry stay as they were. */
static void test_facts_door(void **state)
{
	struct mt_model *m = new_model(MT_GROUP_FUNCTION, NULL);
	struct mt_target_facts f = { .pid = 42, .set = MT_FACT_RSS, .rss_bytes = 4096 };
	const struct mt_target *t;

	assert_int_equal(model_apply(m, MT_INPUT_FACTS(&f)), -ENOENT);
	assert_null(model_target(m, 42));
	f = (struct mt_target_facts){ .pid = 42,
				      .set = MT_FACT_WATCHED | MT_FACT_COMM | MT_FACT_HOW,
				      .watched_ns = 7,
				      .comm = "server",
				      .allocator = "glibc",
				      .mechanism = "uprobes",
				      .mechanism_why = "static binary" };
	assert_int_equal(model_apply(m, MT_INPUT_FACTS(&f)), 0);
	t = model_target(m, 42);
	assert_non_null(t);
	assert_true(t->alive);
	assert_int_equal(t->start_ns, 7);
	assert_string_equal(t->mechanism_why, "static binary");
	f = (struct mt_target_facts){ .pid = 42,
				      .set = MT_FACT_RSS | MT_FACT_FILE_LIM,
				      .rss_bytes = 8192,
				      .files_refused = 3,
				      .maps_cut = 2 };
	assert_int_equal(model_apply(m, MT_INPUT_FACTS(&f)), 0);
	assert_int_equal(t->rss_bytes, 8192);
	assert_int_equal(t->limits.files_refused, 3);
	assert_int_equal(t->limits.maps_cut, 2);
	assert_string_equal(t->comm, "server"); /* not in that report: kept */
	assert_string_equal(t->allocator, "glibc");
	assert_ptr_equal(model_target_names(m, 42), &t->names);
	assert_null(model_target_names(m, 43));
	model_free(m);
}

/* A process that exec'd (MT_IN_DROP) runs a new program: the old one's
 * Java heap, V8's naming of its heap, Go runtime and blind-to runtime are
 * gone from its target; its name and counters stay until reported anew. */
static void test_exec_forgets_the_program(void **state)
{
	struct mt_model *m = new_model(MT_GROUP_FUNCTION, NULL);
	struct mt_target_facts f = {
		.pid = 42,
		.set = MT_FACT_WATCHED | MT_FACT_COMM | MT_FACT_HOW | MT_FACT_JAVA | MT_FACT_NAMED |
		       MT_FACT_GO | MT_FACT_RUNTIME | MT_FACT_COUNTERS,
		.comm = "java",
		.allocator = "glibc",
		.mechanism = "in-process",
		.java = "jvmti",
		.java_note = "agent loaded",
		.java_samples = 900,
		.heap_named = true,
		.named_by = "v8-sampling",
		.go_version = "go1.19",
		.go_rate = 524288,
		.runtime = "python",
		.runtime_heap = "pymalloc",
		.runtime_tool = "--inject",
		.counters = { .alloc_calls = 77 },
	};
	const struct mt_target *t;

	(void)state;
	assert_int_equal(model_apply(m, MT_INPUT_FACTS(&f)), 0);
	t = model_target(m, 42);
	assert_string_equal(t->mechanism, "in-process+v8-sampling");
	model_apply(m, MT_INPUT_DROP(42));
	assert_string_equal(t->java, "");
	assert_string_equal(t->java_note, "");
	assert_int_equal(t->java_samples, 0);
	assert_false(t->heap_named);
	assert_string_equal(t->mechanism, "in-process");
	assert_string_equal(t->go_version, "");
	assert_int_equal(t->go_rate, 0);
	assert_string_equal(t->runtime, "");
	assert_null(t->runtime_heap);
	/* the process's own stay until its next report */
	assert_string_equal(t->comm, "java");
	assert_int_equal(t->counters.alloc_calls, 77);
	assert_true(t->alive);
	model_free(m);
}

static struct mt_site *site_of_tier(struct mt_model *m, const char *fn, unsigned tier)
{
	for (size_t i = 0; i < model_site_count(m); i++) {
		struct mt_site *s = model_site_at(m, i);

		if (!strcmp(s->frame->function, fn) && s->stack->dev.tier == tier)
			return s;
	}
	return NULL;
}

static void test_device_tier(void **state)
{
	struct mt_model *m = new_model(MT_GROUP_FUNCTION, NULL);
	struct mt_frame st[2] = { frame("upload", 10), frame("main", 20) };
	struct mt_site *host, *dev, *v[8];
	const struct mt_device_total *d;
	__u64 key = MT_DEVICE_KEY(MT_DEV_VULKAN, 0x1000);
	int i;

	test_target(m, 7);
	/* the same stack on the heap and on the device: two sites */
	alloc(m, 7, 0x1000, 4096, st, 2);
	dev_alloc(m, 7, key, 1 << 20, 2, st, 2, MT_DK_DEVICE_LOCAL);
	host = site_of_tier(m, "upload", MT_TIER_HOST);
	dev = site_of_tier(m, "upload", MT_TIER_DEVICE);
	assert_non_null(host);
	assert_non_null(dev);
	assert_ptr_not_equal(host, dev);
	assert_true(dev->inuse_bytes == 1 << 20); /* weight 1: exact */
	assert_int_equal(dev->stack->dev.type, 2);
	/* the device's bytes stay out of the heap figures */
	assert_true(fabs(model_target(m, 7)->inuse_bytes - host->inuse_bytes) < 1e-6);
	assert_true(model_target(m, 7)->device_inuse_bytes == 1 << 20);
	assert_true(fabs(model_inuse_bytes(m) - host->inuse_bytes) < 1e-6);
	/* another kind from the same function: a site of its own */
	dev_alloc(m, 7, MT_DEVICE_KEY(MT_DEV_VULKAN, 0x2000), 1 << 20, 3, st, 2, MT_DK_HOST_VISIBLE);
	assert_int_equal(model_site_count(m), 3);
	/* the tier filter */
	assert_int_equal(model_sites_sorted_tier(m, MT_SORT_INUSE, MT_TIERS_DEVICE, v, 8), 2);
	assert_true(v[0]->stack->dev.tier == MT_TIER_DEVICE);
	assert_int_equal(model_sites_sorted_tier(m, MT_SORT_INUSE, MT_TIERS_HOST, v, 8), 1);
	assert_ptr_equal(v[0], host);
	assert_int_equal(model_sites_sorted_tier(m, MT_SORT_INUSE, MT_TIERS_ALL, v, 8), 3);
	/* a free of the handle; one of a handle never seen is no fault */
	model_apply(m, MT_INPUT_FREE(7, key, 4));
	assert_true(dev->inuse_bytes == 0);
	model_apply(m, MT_INPUT_FREE(7, MT_DEVICE_KEY(MT_DEV_VULKAN, 0x9000), 5));
	assert_int_equal(model_drops(m)->unknown_frees, 0);
	/* per device: held and growth, 1 MiB more every second */
	for (i = 0; i < 10; i++) {
		dev_alloc(m, 7, MT_DEVICE_KEY(MT_DEV_VULKAN, 0x10000 + i), 1 << 20,
			  (2 + i) * 1000000000ULL, st, 2, MT_DK_HOST_VISIBLE);
		model_apply(m, MT_INPUT_TICK((2 + i) * 1000000000ULL + 1));
	}
	assert_int_equal(model_device_count(m), 1);
	d = model_device_at(m, 0);
	assert_int_equal(d->api, MT_DEV_VULKAN);
	assert_true(d->inuse_bytes == 11.0 * (1 << 20));
	assert_true(fabs(d->growth_bytes_per_s - (1 << 20)) < 1e3);
	/* an ended process's device memory went with it */
	model_apply(m, MT_INPUT_ENDED(7, &(struct mt_target_end){ .kind = MT_END_EXIT },
				      12000000000ULL));
	model_apply(m, MT_INPUT_TICK(13000000000ULL));
	assert_true(model_device_at(m, 0)->inuse_bytes == 0);
	model_free(m);
}

static void test_device_words(void **state)
{
	char buf[128];
	struct mt_dev_tag t = { MT_TIER_DEVICE, MT_DEV_VULKAN,
				MT_DK_DEVICE_LOCAL | MT_DK_HOST_VISIBLE, 1, 0 };
	struct mt_dev_tag u = { MT_TIER_DEVICE, MT_DEV_VULKAN, MT_DK_UNKNOWN, 0, 3 };
	struct mt_dev_tag host = { 0 };

	assert_string_equal(device_tag_describe(&t, buf, sizeof(buf)),
			    "vulkan:1 device-local,host-visible");
	assert_string_equal(device_tag_describe(&u, buf, sizeof(buf)), "vulkan:0 type 3");
	assert_string_equal(device_tag_describe(&host, buf, sizeof(buf)), "");
	assert_string_equal(device_kind_describe(MT_DK_MANAGED | MT_DK_PINNED_HOST, buf, 14),
			    "managed"); /* cut at a whole name */
	assert_string_equal(device_api_name(MT_DEV_CUDA_VMM), "cuda");
	assert_string_equal(device_api_name(99), "?");
	assert_true(device_tier_shown(MT_TIER_DEVICE, MT_TIERS_ALL));
	assert_false(device_tier_shown(MT_TIER_DEVICE, MT_TIERS_HOST));
	assert_false(device_tier_shown(MT_TIER_HOST, MT_TIERS_DEVICE));
	/* handle spaces never meet each other, a heap block or a mapping */
	assert_true(MT_DEVICE_KEY(MT_DEV_OPENCL, 0x1000) != MT_DEVICE_KEY(MT_DEV_VULKAN, 0x1000));
	assert_true(MT_ADDR_IS_DEVICE(MT_DEVICE_KEY(MT_DEV_CUDA, 0x7f0000001000ULL)));
	assert_false(MT_ADDR_IS_DEVICE(0x7f0000001000ULL));
	assert_false(MT_ADDR_IS_DEVICE(MT_ADDR_MMAP | 0x1000));
}

/* The probe table's API names are the views' words for them. */
static void test_device_api_names_agree(void **state)
{
	const struct device_api *const *v;
	size_t i, n = device_source_apis(&v);

	assert_true(n >= 3);
	for (i = 0; i < n; i++)
		assert_string_equal(v[i]->name, device_api_name(v[i]->api));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_weights_and_frees),
		cmocka_unit_test(test_sample_without_a_frame),
		cmocka_unit_test(test_facts_door),
		cmocka_unit_test(test_exec_forgets_the_program),
		cmocka_unit_test(test_device_api_names_agree),
		cmocka_unit_test(test_size_objects_use_the_weights),
		cmocka_unit_test(test_untracked_counts_but_never_in_use),
		cmocka_unit_test(test_site_skips_allocator_frames),
		cmocka_unit_test(test_grouping_and_regrouping),
		cmocka_unit_test(test_drop_process),
		cmocka_unit_test(test_reused_address_replaces_sample),
		cmocka_unit_test(test_stacks_bounded_per_target),
		cmocka_unit_test(test_rates_and_sorting),
		cmocka_unit_test(test_bad_skip_regex),
		cmocka_unit_test(test_device_tier),
		cmocka_unit_test(test_device_words),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

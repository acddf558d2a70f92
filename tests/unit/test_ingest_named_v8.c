// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_ingest_named_v8.c - V8's MT_EV_NAMED records (abi.h, docs/node.md)
 * through ingest_record:
 * a valid one becomes a sample whose site is the innermost named frame
 * with a file (a builtin without one is passed over), its free by the same
 * address takes it out of in-use; every malformed one (lengths that do
 * not add up, too long a name, a NUL byte, too many frames, an unknown
 * source, a short record) is refused whole and counted; V8's own heap
 * pages are not taken in as mmap samples while its heap is named.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>
#include <linux/types.h>

#include "memtop/abi.h"
#include "model/ingest.h"
#include "model/ingest_named.h"
#include "model/model.h"
#include "target_fixture.h"
#include "util/sampling.h"
#include "util/strpool.h"

#define RATE 524288

struct named_frame_in {
	const char *function, *file;
	__u32 line;
};

/* A record of the frames given, innermost first; its size. */
static size_t build(unsigned char *buf, __u64 addr, __u64 size, const struct named_frame_in *f,
		    __u32 n)
{
	struct mt_event_named *ev = (struct mt_event_named *)buf;
	struct mt_named_frame *frames = (struct mt_named_frame *)(ev + 1);
	char *text;
	size_t t = 0;
	__u32 i;

	memset(ev, 0, sizeof(*ev));
	ev->kind = MT_EV_NAMED;
	ev->pid = 7;
	ev->nframes = n;
	ev->ts_ns = 1;
	ev->addr = MT_ADDR_NAMED | addr;
	ev->size = size;
	ev->rate = RATE;
	ev->runtime = MT_NAMED_V8;
	text = (char *)(frames + n);
	for (i = 0; i < n; i++) {
		size_t fl = strlen(f[i].function), il = f[i].file ? strlen(f[i].file) : 0;

		frames[i].line = f[i].line;
		frames[i].function_len = (__u16)fl;
		frames[i].file_len = (__u16)il;
		memcpy(text + t, f[i].function, fl);
		memcpy(text + t + fl, f[i].file ? f[i].file : "", il);
		t += fl + il;
	}
	ev->text_len = (__u32)t;
	return sizeof(*ev) + n * sizeof(frames[0]) + t;
}

static unsigned char buf[1 << 16];

static struct mt_model *model(struct ingest *in)
{
	struct mt_model_opts o = { .rate = RATE, .group = MT_GROUP_FUNCTION };
	struct mt_model *m = model_new(&o);

	assert_non_null(m);
	memset(in, 0, sizeof(*in));
	in->model = m;
	test_target(m, 7);
	return m;
}

static const struct mt_site *site_named(struct mt_model *m, const char *fn)
{
	size_t i;

	for (i = 0; i < model_site_count(m); i++)
		if (!strcmp(model_site_at(m, i)->frame->function, fn))
			return model_site_at(m, i);
	return NULL;
}

static void test_valid_record_and_free(void **state)
{
	static const struct named_frame_in st[] = {
		{ "padEnd", NULL, 0 },
		{ "leakRecords", "/srv/app/leak.js", 41 },
		{ "", "/srv/app/leak.js", 7 },
	};
	struct ingest in;
	struct mt_model *m = model(&in);
	const struct mt_site *s;
	struct mt_event_free fr = {
		.kind = MT_EV_FREE, .pid = 7, .ts_ns = 2, .addr = MT_ADDR_NAMED | 42
	};
	size_t n = build(buf, 42, 200, st, 3);

	(void)state;
	assert_int_equal(ingest_record(&in, buf, n), 0);
	s = site_named(m, "leakRecords");
	assert_non_null(s); /* the builtin without a file is passed over */
	assert_string_equal(s->frame->file, "/srv/app/leak.js");
	assert_int_equal(s->frame->line, 41);
	assert_string_equal(s->frame->module, "[js]");
	assert_string_equal(ingest_named_mechanism(s->frame), "v8-sampling");
	assert_true(s->frame->flags & MT_FRAME_NAMED);
	assert_string_equal(s->stack->frames[2].function, "(anonymous)");
	assert_true(fabs(s->inuse_bytes - 200 * sampling_weight(200, RATE)) < 1e-6);
	assert_int_equal(ingest_record(&in, &fr, sizeof(fr)), 0);
	assert_true(s->inuse_bytes == 0);
	assert_int_equal(in.bad_records, 0);
	model_free(m);
}

static void test_malformed_records(void **state)
{
	static const struct named_frame_in st[] = { { "f", "a.js", 1 }, { "g", "b.js", 2 } };
	struct mt_event_named *ev = (struct mt_event_named *)buf;
	struct mt_named_frame *frames = (struct mt_named_frame *)(ev + 1);
	struct ingest in;
	struct mt_model *m = model(&in);
	size_t n;
	int bad = 0;

	(void)state;
	n = build(buf, 1, 64, st, 2);
	assert_int_equal(ingest_record(&in, buf, n - 1), -EINVAL); /* short */
	bad++;
	assert_int_equal(ingest_record(&in, buf, n + 1), -EINVAL); /* trailing bytes */
	bad++;
	frames[0].function_len++; /* lengths exceed the text */
	assert_int_equal(ingest_record(&in, buf, n), -EINVAL);
	bad++;
	n = build(buf, 1, 64, st, 2);
	((char *)(frames + 2))[1] = '\0'; /* a NUL in the text */
	assert_int_equal(ingest_record(&in, buf, n), -EINVAL);
	bad++;
	n = build(buf, 1, 64, st, 2);
	ev->runtime = 99; /* unknown runtime */
	assert_int_equal(ingest_record(&in, buf, n), -EINVAL);
	bad++;
	n = build(buf, 1, 64, st, 2);
	ev->nframes = MT_NAMED_MAX_FRAMES + 1; /* too many frames */
	assert_int_equal(ingest_record(&in, buf, n), -EINVAL);
	bad++;
	{
		char longname[MT_NAMED_NAME_MAX + 2];
		struct named_frame_in big = { longname, "a.js", 1 };

		memset(longname, 'x', sizeof(longname) - 1);
		longname[sizeof(longname) - 1] = '\0';
		n = build(buf, 1, 64, &big, 1); /* a name over MT_NAMED_NAME_MAX */
		assert_int_equal(ingest_record(&in, buf, n), -EINVAL);
		bad++;
	}
	assert_int_equal(in.bad_records, bad);
	assert_int_equal(model_site_count(m), 0);
	model_free(m);
}

static void test_v8_pages_not_counted_twice(void **state)
{
	struct mt_frame fr[2] = { { .function = "v8::base::OS::Allocate" },
				  { .function = "v8::internal::MemoryAllocator::AllocatePage" } };
	struct mt_frame other[1] = { { .function = "mmap_my_buffer" } };
	struct ingest in;
	struct mt_model *m = model(&in);
	const struct mt_target *t = model_target(m, 7);
	struct mt_target_facts named = { .pid = 7, .set = MT_FACT_NAMED, .heap_named = true };

	(void)state;
	assert_false(ingest_named_page(t, fr, 2)); /* not named: counted as mmap */
	model_apply(m, MT_INPUT_FACTS(&named));
	assert_true(ingest_named_page(t, fr, 2));
	assert_false(ingest_named_page(t, other, 1));
	assert_false(ingest_named_page(NULL, fr, 2));
	model_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid_record_and_free),
		cmocka_unit_test(test_malformed_records),
		cmocka_unit_test(test_v8_pages_not_counted_twice),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

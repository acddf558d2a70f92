// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_ingest_named.c - MT_EV_NAMED records (a JVM's samples, docs/java.md)
 * through ingest_record(): frames named by text become MT_FRAME_NAMED
 * frames of "[java]" with their file and line, weighted at the record's
 * rate; a free of the same tag takes the sample out of in-use; every
 * malformed variant is counted and changes nothing.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>
#include <errno.h>
#include <linux/types.h>

#include "memtop/abi.h"
#include "model/ingest.h"
#include "model/model.h"
#include "target_fixture.h"
#include "util/sampling.h"

#define RATE 4096

struct named_rec {
	union {
		struct mt_event_named ev;
		unsigned char bytes[1024];
	};
	size_t len;
};

/* A record of nf frames named fn[i] in file[i] at line 10 + i. */
static void build(struct named_rec *r, __u64 tag, __u64 size, int nf, const char *const *fn,
		  const char *const *file)
{
	struct mt_named_frame *f;
	char *text;
	__u32 at = 0;
	int i;

	memset(r, 0, sizeof(*r));
	r->ev.kind = MT_EV_NAMED;
	r->ev.pid = 42;
	r->ev.tid = 43;
	r->ev.nframes = nf;
	r->ev.ts_ns = 1000;
	r->ev.addr = tag | MT_ADDR_NAMED;
	r->ev.size = size;
	r->ev.rate = RATE;
	r->ev.runtime = MT_NAMED_JAVA;
	f = (struct mt_named_frame *)(&r->ev + 1);
	text = (char *)(f + nf);
	for (i = 0; i < nf; i++) {
		f[i].line = 10 + i;
		f[i].function_len = strlen(fn[i]);
		f[i].file_len = strlen(file[i]);
		memcpy(text + at, fn[i], f[i].function_len);
		memcpy(text + at + f[i].function_len, file[i], f[i].file_len);
		at += f[i].function_len + f[i].file_len;
	}
	r->ev.text_len = at;
	r->len = sizeof(r->ev) + nf * sizeof(*f) + at;
}

static const char *const fns[] = { "com.example.Leaker.leak", "com.example.Main.main" };
static const char *const files[] = { "Leaker.java", "Main.java" };

static struct ingest *setup(void)
{
	static struct ingest in;
	struct mt_model_opts o = { .rate = RATE, .group = MT_GROUP_FUNCTION };

	memset(&in, 0, sizeof(in));
	in.model = model_new(&o);
	assert_non_null(in.model);
	test_target(in.model, 42);
	return &in;
}

static void test_named_sample_and_free(void **state)
{
	struct ingest *in = setup();
	struct mt_event_free fr = { .kind = MT_EV_FREE, .pid = 42, .ts_ns = 2000 };
	struct named_rec r;
	const struct mt_site *s;

	build(&r, 7, 1000, 2, fns, files);
	assert_int_equal(ingest_record(in, r.bytes, r.len), 0);
	assert_int_equal(model_site_count(in->model), 1);
	s = model_site_at(in->model, 0);
	assert_string_equal(s->frame->function, "com.example.Leaker.leak");
	assert_string_equal(s->frame->file, "Leaker.java");
	assert_int_equal(s->frame->line, 10);
	assert_string_equal(s->frame->module, "[java]");
	assert_true(s->frame->flags & MT_FRAME_NAMED);
	assert_int_equal(s->stack->nframes, 2);
	assert_string_equal(s->stack->frames[1].function, "com.example.Main.main");
	assert_true(fabs(s->inuse_bytes - 1000 * sampling_weight(1000, RATE)) < 1e-6);
	fr.addr = 7 | MT_ADDR_NAMED;
	assert_int_equal(ingest_record(in, &fr, sizeof(fr)), 0);
	assert_true(s->inuse_bytes < 1e-6);
	assert_int_equal(in->named_stacks, 1);
	assert_int_equal(in->bad_records, 0);
	model_free(in->model);
}

static void test_named_malformed(void **state)
{
	struct ingest *in = setup();
	struct named_rec r;
	__u64 bad = 0;

	build(&r, 7, 100, 2, fns, files);
	assert_int_equal(ingest_record(in, r.bytes, r.len - 1), -EINVAL); /* short */
	bad++;
	assert_int_equal(ingest_record(in, r.bytes, sizeof(r.ev) - 1), -EINVAL);
	bad++;
	r.ev.text_len++; /* lengths do not add up */
	assert_int_equal(ingest_record(in, r.bytes, r.len + 1), -EINVAL);
	bad++;
	build(&r, 7, 100, 2, fns, files);
	r.ev.nframes = MT_NAMED_MAX_FRAMES + 1;
	assert_int_equal(ingest_record(in, r.bytes, r.len), -EINVAL);
	bad++;
	build(&r, 7, 100, 2, fns, files);
	r.ev.addr = 7; /* not a named address */
	assert_int_equal(ingest_record(in, r.bytes, r.len), -EINVAL);
	bad++;
	build(&r, 7, 100, 2, fns, files);
	r.ev.runtime = 99;
	assert_int_equal(ingest_record(in, r.bytes, r.len), -EINVAL);
	bad++;
	build(&r, 7, 100, 2, fns, files);
	r.ev.rate = 0;
	assert_int_equal(ingest_record(in, r.bytes, r.len), -EINVAL);
	bad++;
	build(&r, 7, 100, 2, fns, files);
	r.bytes[sizeof(r.ev) + 2 * sizeof(struct mt_named_frame) + 3] = '\0'; /* NUL in a name */
	assert_int_equal(ingest_record(in, r.bytes, r.len), -EINVAL);
	bad++;
	build(&r, 7, 100, 2, fns, files);
	/* an empty function is a runtime's anonymous one (V8): named so, taken */
	((struct mt_named_frame *)(&r.ev + 1))[0].function_len = 0;
	((struct mt_named_frame *)(&r.ev + 1))[0].file_len += strlen(fns[0]);
	assert_int_equal(ingest_record(in, r.bytes, r.len), 0);
	build(&r, 7, 100, 2, fns, files);
	((struct mt_named_frame *)(&r.ev + 1))[1].function_len = MT_NAMED_NAME_MAX + 1;
	assert_int_equal(ingest_record(in, r.bytes, r.len), -EINVAL);
	bad++;
	assert_int_equal(in->bad_records, bad);
	assert_int_equal(model_site_count(in->model), 1); /* the anonymous one's alone */
	model_free(in->model);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_named_sample_and_free),
		cmocka_unit_test(test_named_malformed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

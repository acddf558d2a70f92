// SPDX-License-Identifier: GPL-2.0-only
/*
 * ingest_named.c - MT_EV_NAMED records (abi.h) into the model: samples
 * whose frames a managed runtime named itself (a JVM through memtop's
 * JVMTI agent, docs/java.md; V8's sampling heap profiler, docs/node.md),
 * function, file and line as text.
 *
 * The record's bytes come from the watched process: every length is
 * checked against the record, MT_NAMED_NAME_MAX and MT_NAMED_TEXT_MAX,
 * the lengths must add up to the text exactly, and a NUL byte refuses the
 * record. Names are interned and charged to the sample's target
 * (util/strpool.h), as ingest.c charges native names. Each frame's
 * module is its runtime's ("[java]", "[js]"), flagged MT_FRAME_NAMED; the
 * model picks the innermost frame as the call site.
 */
#include "model/ingest_named.h"

#include <errno.h>
#include <string.h>

#include "util/strpool.h"

/* Each runtime that names its samples: the module its frames show, and
 * the mechanism that saw them (json.md's `mechanism`). */
static const struct {
	__u32 runtime;
	const char *module;
	const char *mechanism;
} runtimes[] = {
	{ MT_NAMED_JAVA, "[java]", "jvmti" },
	{ MT_NAMED_V8, "[js]", "v8-sampling" },
};

static const char *runtime_module(__u32 runtime)
{
	size_t i;

	for (i = 0; i < sizeof(runtimes) / sizeof(runtimes[0]); i++)
		if (runtimes[i].runtime == runtime)
			return runtimes[i].module;
	return NULL;
}

const char *ingest_named_mechanism(const struct mt_frame *f)
{
	size_t i;

	if (!f || !(f->flags & MT_FRAME_NAMED) || !f->module)
		return NULL;
	for (i = 0; i < sizeof(runtimes) / sizeof(runtimes[0]); i++)
		if (!strcmp(runtimes[i].module, f->module))
			return runtimes[i].mechanism;
	return NULL;
}

/* A named record's lengths hold together (its names are checked as read). */
static bool named_ok(const struct mt_event_named *ev, size_t size)
{
	return size >= sizeof(*ev) && ev->nframes <= MT_NAMED_MAX_FRAMES &&
	       ev->text_len <= MT_NAMED_TEXT_MAX && runtime_module(ev->runtime) && ev->rate > 0 &&
	       (ev->addr & MT_ADDR_NAMED) && !(ev->addr & MT_ADDR_MMAP) &&
	       size == sizeof(*ev) + ev->nframes * sizeof(struct mt_named_frame) + ev->text_len;
}

/* The frames of a named sample into frames[], validated: -EINVAL for a
 * length that does not add up or a NUL in a name. A frame without a
 * function name is "(anonymous)" (V8's anonymous functions). */
static int named_frames(const struct mt_event_named *ev, struct mt_frame *frames)
{
	const struct mt_named_frame *nf = (const void *)(ev + 1);
	const char *text = (const char *)(nf + ev->nframes), *module;
	size_t at = 0;
	__u32 i;

	module = strpool_intern(runtime_module(ev->runtime));
	for (i = 0; i < ev->nframes; i++) {
		struct mt_named_frame f;
		struct mt_frame *o = &frames[i];

		memcpy(&f, &nf[i], sizeof(f));
		if (f.function_len > MT_NAMED_NAME_MAX || f.file_len > MT_NAMED_NAME_MAX ||
		    at + f.function_len + f.file_len > ev->text_len ||
		    memchr(text + at, '\0', f.function_len + f.file_len))
			return -EINVAL;
		memset(o, 0, sizeof(*o));
		o->function = f.function_len ? strpool_intern_len(text + at, f.function_len)
					     : strpool_intern("(anonymous)");
		at += f.function_len;
		o->file = f.file_len ? strpool_intern_len(text + at, f.file_len) : NULL;
		at += f.file_len;
		o->line = f.line;
		o->module = module;
		o->flags = MT_FRAME_NAMED;
	}
	return at == ev->text_len ? 0 : -EINVAL;
}

int ingest_named(struct ingest *in, const void *data, size_t size)
{
	const struct mt_event_named *ev = data;
	struct mt_frame frames[MT_NAMED_MAX_FRAMES];
	struct mt_sample_in s = { 0 };
	const struct mt_target *t;
	struct strpool_budget *was;
	int e;

	if (!named_ok(ev, size))
		return -EINVAL;
	t = model_target(in->model, (pid_t)ev->pid);
	was = strpool_charge(model_target_names(in->model, (pid_t)ev->pid));
	e = named_frames(ev, frames);
	strpool_charge(was);
	ingest_set_aside(in, t, false);
	if (e)
		return e;
	s.pid = (pid_t)ev->pid;
	s.ts_ns = ev->ts_ns;
	s.addr = ev->addr;
	s.size = ev->size;
	s.rate = ev->rate;
	s.truncated = ev->flags & MT_NEF_TRUNCATED;
	s.frames = frames;
	s.nframes = ev->nframes;
	in->named_stacks++;
	return model_apply(in->model, MT_INPUT_ALLOC(&s));
}

bool ingest_named_page(const struct mt_target *t, const struct mt_frame *frames, int nframes)
{
	static const char v8_pages[] = "v8::internal::MemoryAllocator::";
	int i;

	if (!t || !t->heap_named)
		return false;
	for (i = 0; i < nframes; i++)
		if (frames[i].function && !strncmp(frames[i].function, v8_pages, sizeof(v8_pages) - 1))
			return true;
	return false;
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * ingest_named.c - MT_EV_NAMED records (abi.h) into the model: samples
 * whose frames a managed runtime named itself (V8's sampling heap
 * profiler, docs/node.md), function, file and line as text.
 *
 * The record's bytes come from the watched process: every length is
 * checked against the record and MT_NAMED_TEXT_MAX, the lengths must add
 * up to the text exactly, and a NUL byte refuses the record. Names are
 * interned and charged to the sample's target (util/strpool.h), as
 * ingest.c charges native names. Each frame's module is the mechanism
 * that named it (NODE_SOURCE_MECHANISM's words, "v8-sampling"), flagged
 * MT_FRAME_NAMED; the model picks the innermost frame as the call site.
 */
#include "model/ingest_named.h"

#include <errno.h>
#include <string.h>

#include "util/strpool.h"

static const char *source_module(__u32 source)
{
	switch (source) {
	case MT_NAMED_V8:
		return "v8-sampling";
	default:
		return NULL;
	}
}

/* Does the record hold together? Its frames and text exactly fill it. */
static bool named_valid(const struct mt_event_named *ev, size_t size)
{
	size_t text = 0;
	__u32 i;

	if (size < sizeof(*ev) || ev->nframes > MT_NAMED_MAX_FRAMES || !source_module(ev->source) ||
	    size != sizeof(*ev) + ev->nframes * sizeof(ev->frames[0]) + ev->text_len)
		return false;
	for (i = 0; i < ev->nframes; i++) {
		if (ev->frames[i].function_len > MT_NAMED_TEXT_MAX ||
		    ev->frames[i].file_len > MT_NAMED_TEXT_MAX)
			return false;
		text += ev->frames[i].function_len + ev->frames[i].file_len;
	}
	return text == ev->text_len &&
	       !memchr((const char *)(ev->frames + ev->nframes), '\0', ev->text_len);
}

int ingest_named(struct ingest *in, const void *data, size_t size)
{
	const struct mt_event_named *ev = data;
	struct mt_frame frames[MT_NAMED_MAX_FRAMES];
	struct mt_sample_in s = { 0 };
	struct mt_target *t;
	struct strpool_budget *was;
	const char *text, *module;
	__u32 i;

	if (!named_valid(ev, size))
		return -EINVAL;
	t = model_target(in->model, (pid_t)ev->pid, false);
	was = strpool_charge(t ? &t->names : NULL);
	module = strpool_intern(source_module(ev->source));
	text = (const char *)(ev->frames + ev->nframes);
	for (i = 0; i < ev->nframes; i++) {
		const struct mt_named_frame *nf = &ev->frames[i];

		memset(&frames[i], 0, sizeof(frames[i]));
		frames[i].function = nf->function_len ? strpool_intern_len(text, nf->function_len)
						      : strpool_intern("(anonymous)");
		text += nf->function_len;
		frames[i].file = nf->file_len ? strpool_intern_len(text, nf->file_len) : NULL;
		text += nf->file_len;
		frames[i].line = nf->line;
		frames[i].module = module;
		frames[i].flags = MT_FRAME_NAMED;
	}
	strpool_charge(was);
	if (t)
		t->limits.names_refused = t->names.refused;
	s.pid = (pid_t)ev->pid;
	s.ts_ns = ev->ts_ns;
	s.addr = ev->addr;
	s.size = ev->size;
	s.weight_bytes = ev->weight_bytes ? ev->weight_bytes : ev->size;
	s.truncated = ev->flags & MT_NAMEDF_TRUNCATED;
	s.frames = frames;
	s.nframes = ev->nframes;
	model_on_alloc(in->model, &s);
	return 0;
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

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ingest_named.h - MT_EV_NAMED records (abi.h): samples whose frames the
 * process's runtime named itself (a JVM's agent, V8's profiler),
 * validated and fed to the model (ingest_record() calls it for that
 * kind).
 */
#ifndef MEMTOP_INGEST_NAMED_H
#define MEMTOP_INGEST_NAMED_H

#include <stddef.h>

#include "model/ingest.h"

/* One MT_EV_NAMED record of size bytes. 0, -EINVAL for a malformed one
 * (nothing taken from it), or what the model's MT_IN_ALLOC says. */
int ingest_named(struct ingest *in, const void *data, size_t size);

/* The mechanism that saw a site whose frame its runtime named
 * (MT_FRAME_NAMED): "jvmti", "v8-sampling"; NULL for any other frame. */
const char *ingest_named_mechanism(const struct mt_frame *f);

/* Is an mmap sample with these frames a page of a heap whose objects the
 * runtime names itself (t->heap_named), so that taking it in would count
 * them twice? V8's: a mapping made by its heap's page allocator
 * (v8::internal::MemoryAllocator). */
bool ingest_named_page(const struct mt_target *t, const struct mt_frame *frames, int nframes);

#endif /* MEMTOP_INGEST_NAMED_H */

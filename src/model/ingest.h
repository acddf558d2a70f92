/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ingest.h - ring-buffer records to model updates: validates each record,
 * unwinds and symbolizes sampled stacks, and feeds the model. Takes plain
 * bytes, so a recorded event stream replays through it without BPF.
 */
#ifndef MEMTOP_INGEST_H
#define MEMTOP_INGEST_H

#include <stddef.h>
#include <linux/types.h>

#include "memtop/abi.h"
#include "model/model.h"
#include "stacks/symbolize.h"
#include "stacks/unwind.h"

/* Python frame records waiting for their sample, by thread. */
#define INGEST_PY_SLOTS 64
/* Devices numbered (processes x APIs x devices) before the slots of ended
 * processes are taken back; past them a device is numbered 255. */
#define INGEST_DEV_SLOTS 256

/* A device a process named (VkDevice, cl_context) and its number. */
struct ingest_dev {
	pid_t pid;
	__u32 api;
	__u64 handle;
	__u32 index;
};

struct python_names;

struct ingest {
	struct mt_model *model;
	struct symbolizer *sym;
	struct unwinder *unw; /* NULL: frame-pointer stacks only */
	/* The symbolizer's and unwinder's cache, told each sample's time so a
	 * table read before it is re-read on a miss; NULL: not told
	 * (replayed records, whose processes are not read). */
	struct proc_cache *pc;
	__u64 records;     /* records accepted */
	__u64 bad_records; /* malformed records skipped */
	__u64 unwound;     /* stacks from the stack copy (CFI) */
	__u64 fp_stacks;   /* stacks from the frame-pointer walk */
	/* Called for MT_EV_PROC records (--cgroup); may be NULL. */
	void (*on_proc)(void *ctx, pid_t pid, __u32 what);
	void *proc_ctx;
	/* Names interpreter frames (stacks/python.h); NULL: MT_EV_PY records
	 * are kept but their frames not merged. */
	struct python_names *py;
	__u64 python_stacks; /* samples that carried Python frames */
	__u64 named_stacks;  /* samples whose frames the process named (MT_EV_NAMED) */
	struct mt_event_py py_pending[INGEST_PY_SLOTS];
	struct ingest_dev devs[INGEST_DEV_SLOTS];
	size_t ndevs;
};

/* One record as the ring buffer delivers it. 0, or -EINVAL for a
 * malformed record (counted, skipped). */
int ingest_record(struct ingest *in, const void *data, size_t size);

/* What ingest set aside for t (names past its share of the string pool,
 * with page_named one more mapping of its runtime's own heap pages not
 * taken in), told to the model by its one door when it changed. */
void ingest_set_aside(struct ingest *in, const struct mt_target *t, bool page_named);

#endif /* MEMTOP_INGEST_H */

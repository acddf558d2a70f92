/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * pprof.h - google/pprof profile.proto (package perftools.profiles) built
 * from symbolized stacks, and the heap profile of a model.
 *
 * The builder interns everything a Profile deduplicates: string_table
 * (index 0 is ""), functions by (name, file), mappings by (pid, file,
 * build ID, load bias), locations by (mapping, address, lines). Samples
 * list locations leaf first. Nothing here does I/O; export.c writes files
 * and push.c sends buffers.
 */
#ifndef MEMTOP_PPROF_H
#define MEMTOP_PPROF_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <linux/types.h>

#include "stacks/frame.h"
#include "model/model.h"
#include "util/pbuf.h"

/* Name of the frame added on top of a stack the unwinder could not finish. */
#define PPROF_TRUNCATED_FRAME "[truncated]"

struct pprof;

/* A label of a sample: Label.key with Label.str, or with Label.num when
 * str is NULL or empty. */
struct pprof_label {
	const char *key;
	const char *str;
	__s64 num;
};

/* NULL with errno set on failure. */
struct pprof *pprof_new(void);
void pprof_free(struct pprof *p);

/* Append a sample type (ValueType). Sample values follow this order.
 * 0 or -errno (-EBUSY once samples were added). */
int pprof_add_sample_type(struct pprof *p, const char *type, const char *unit);
/* period_type and period. 0 or -errno. */
int pprof_set_period(struct pprof *p, const char *type, const char *unit, __s64 period);
/* time_nanos (UTC ns since the epoch) and duration_nanos; 0 leaves a
 * field out. */
void pprof_set_time(struct pprof *p, __s64 time_ns, __s64 duration_ns);
/* default_sample_type: the sample type viewers show first (they show the
 * last one when none is set); NULL or "" unsets it. May be called after
 * samples were added or the profile encoded. 0 or -errno. */
int pprof_set_default_sample_type(struct pprof *p, const char *type);
/* Append a comment line. 0 or -errno. */
int pprof_add_comment(struct pprof *p, const char *text);

/* Add one sample. frames are innermost first; a run of MT_FRAME_INLINED
 * frames and the frame after it become one Location with several Lines
 * (inlined callee first), at that frame's address. Frames with a
 * module_path get a Mapping per (pid, module_path, build_id, addr -
 * rel_addr); others get none. truncated adds an outermost
 * PPROF_TRUNCATED_FRAME. values holds one entry per sample type. labels
 * (nlabels of them) are copied. 0 or -errno (-EINVAL: no sample types). */
int pprof_add_sample(struct pprof *p, pid_t pid, const struct mt_frame *frames, __u32 nframes,
		     bool truncated, const __s64 *values, const struct pprof_label *labels,
		     size_t nlabels);
size_t pprof_sample_count(const struct pprof *p);

/* Serialize the Profile (uncompressed) into out. 0 or -errno. The builder
 * is unchanged and may be encoded again. */
int pprof_encode(const struct pprof *p, struct bytebuf *out);
/* Serialize and gzip into a malloc'ed buffer, as files on disk and
 * ingest endpoints expect. 0 or -errno. */
int pprof_encode_gz(const struct pprof *p, __u8 **out, size_t *outlen);

/* ---- heap profile of a model ------------------------------------------ */

/* Baseline of alloc_* values per (stack, pid), for profiles that report
 * allocation growth since the previous profile rather than since attach
 * (what an ingest endpoint that stores every push as it is expects). */
struct pprof_delta;
struct pprof_delta *pprof_delta_new(void); /* NULL with errno set */
void pprof_delta_free(struct pprof_delta *d);

struct pprof_model_opts {
	pid_t pid;                 /* only this target; 0: every target */
	struct pprof_delta *delta; /* NULL: alloc_* since attach; else growth
				    * since the last profile built with this
				    * baseline, which is then advanced */
	__s64 time_ns;             /* collection time, UTC ns; 0: model_now() */
	__s64 duration_ns;         /* span alloc_* covers; 0: since the
				    * earliest start of the targets covered */
	const char *version;       /* for the comment; NULL: MEMTOP_VERSION */
};

/* The heap profile of m, Go style: sample types alloc_objects/count,
 * alloc_space/bytes, inuse_objects/count, inuse_space/bytes, all
 * unsampled estimates; period_type space/bytes with period = the sampling
 * rate; one sample per (stack, pid) with a non-zero value, starting at the
 * stack's call-site frame (allocator frames are left out, so flat cost
 * lands on the caller); labels pid (numeric, so pprof's -tagfocus=pid=N
 * works) and comm (string) when the profile covers several targets; comments naming the targets and memtop's
 * version. NULL with errno set on failure. */
struct pprof *pprof_from_model(struct mt_model *m, const struct pprof_model_opts *o);

/* ---- helpers shared with the other exports ---------------------------- */

/* The frames of s that exports show: from the call-site frame outwards
 * (all of them when site_frame is out of range). Sets *n. */
const struct mt_frame *pprof_stack_frames(const struct mt_stack *s, __u32 *n);
/* Display name of a frame: its function, else "module+0xREL", else
 * "0xADDR". Returns f->function or buf. */
const char *pprof_frame_name(const struct mt_frame *f, char *buf, size_t len);
/* Convert a CLOCK_MONOTONIC time to UTC ns since the epoch using the
 * current offset between CLOCK_REALTIME and CLOCK_MONOTONIC. */
__s64 pprof_wall_ns(__u64 mono_ns);

#endif /* MEMTOP_PPROF_H */

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rec_codec.h - the payload of every recording frame (docs/recording.md),
 * written and read side by side so that each layout is spelled once.
 * The writer is record/recorder.c, the reader record/replay.c.
 *
 * Each rec_put_* appends one whole frame to a buffer. Each rec_get_*
 * reads a payload through a bounded cursor and returns false when it is
 * short, too long, or holds a value out of range: the frame is then not
 * applied. Strings read are interned (util/strpool.h).
 */
#ifndef MEMTOP_REC_CODEC_H
#define MEMTOP_REC_CODEC_H

#include <stdbool.h>
#include <linux/types.h>

#include "config.h"
#include "model/model.h"
#include "record/recording.h"
#include "input/status.h"

struct rec_header {
	__u16 version; /* REC_VERSION when written */
	__u64 session; /* random, the same in every segment of a run */
	__u32 segment; /* 0, 1, ...: rotation's count */
	__u64 rate;
	enum mt_group group;
	const char *skip_regex; /* NULL: none */
	double interval_s;
	double start_wall_s;
	const char *version_str;
	const char *targets;
	__u32 max_stacks; /* --max-stacks (version 2); 0: the default */
};

void rec_put_header(struct bytebuf *b, const struct rec_header *h);
/* True too for a version this memtop does not read (then only h->version
 * is set): the caller refuses it, saying which (rec_version_known()). */
bool rec_get_header(struct rec_cur *c, struct rec_header *h);
/* A version this memtop reads: REC_VERSION_OLDEST to REC_VERSION. */
bool rec_version_known(__u16 version);

void rec_put_string(struct bytebuf *b, __u32 id, const char *s, __u16 flags);
bool rec_get_string(struct rec_cur *c, __u32 *id, const char **s);

/* A frame with its strings as ids of REC_STRING frames (0: NULL). */
struct rec_frame_ids {
	__u64 addr, rel_addr;
	__u32 function, module, module_path, build_id, file;
	__u32 line, flags;
};
#define REC_STACK_FRAME_BYTES 44 /* one frame's bytes in a REC_STACK payload */
void rec_put_stack(struct bytebuf *b, __u32 id, const struct rec_frame_ids *f, __u32 n, __u16 flags);
/* Reads the id and the count; then rec_get_stack_frame() n times. */
bool rec_get_stack(struct rec_cur *c, __u32 *id, __u32 *n);
bool rec_get_stack_frame(struct rec_cur *c, struct rec_frame_ids *f);

/* A sampled allocation; in->frames and nframes are not written (stack
 * is the REC_STACK id). */
void rec_put_alloc(struct bytebuf *b, __u32 stack, const struct mt_sample_in *in, __u16 flags);
bool rec_get_alloc(struct rec_cur *c, __u32 *stack, struct mt_sample_in *in);

/* REC_TARGET and REC_DROP: a pid. */
void rec_put_pid(struct bytebuf *b, enum rec_type type, pid_t pid, __u16 flags);
bool rec_get_pid(struct rec_cur *c, pid_t *pid);

void rec_put_free(struct bytebuf *b, pid_t pid, __u64 addr, __u64 ts_ns);
bool rec_get_free(struct rec_cur *c, pid_t *pid, __u64 *addr, __u64 *ts_ns);

void rec_put_ended(struct bytebuf *b, pid_t pid, const struct mt_target_end *e, __u64 at_ns,
		   __u16 flags);
bool rec_get_ended(struct rec_cur *c, pid_t *pid, struct mt_target_end *e, __u64 *at_ns);

void rec_put_group(struct bytebuf *b, enum mt_group g, __u16 flags);
bool rec_get_group(struct rec_cur *c, enum mt_group *g);

/* REC_FACTS: a target's facts report (input/target_facts.h), the fields
 * of the groups in its set, written by one table: kind, id, group, and
 * where the field is in struct mt_target_facts. A reader applies the
 * groups it knows and skips rows it does not, so a fact added to the
 * table is recorded and replayed with no other change. */
enum rec_fact_kind {
	REC_FACT_STR,      /* a char array, cut to fit */
	REC_FACT_INTERNED, /* a const char * into the string pool, or NULL */
	REC_FACT_INT,      /* an integer of 1 to 8 bytes (x86-64: little-endian) */
	REC_FACT_F64,      /* a double */
};
struct rec_fact {
	__u8 id; /* 1..63, never reused */
	__u8 kind;
	__u32 group;      /* the enum mt_fact_set bit that carries it */
	const char *name; /* the field, for tests and messages */
	size_t offset, size;
};
/* The table; at most REC_MAX_FACTS rows. */
#define REC_MAX_FACTS 63
const struct rec_fact *rec_facts(size_t *n);
void rec_put_facts(struct bytebuf *b, const struct mt_target_facts *f, __u16 flags);
/* False too for a report that does not hold together (a runtime without
 * its words, a slowdown range upside down, phase_seen out of range). */
bool rec_get_facts(struct rec_cur *c, struct mt_target_facts *f);

/* REC_DROPS: the loss counters (the model takes the data path's three,
 * and its own two where they are ahead of its count: a segment's opening
 * state). */
void rec_put_drops(struct bytebuf *b, const struct mt_drops *d, __u16 flags);
bool rec_get_drops(struct rec_cur *c, struct mt_drops *d);

/* REC_TICK: an interval of the model closed at now_ns. */
void rec_put_tick(struct bytebuf *b, __u64 now_ns, __u16 flags);
bool rec_get_tick(struct rec_cur *c, __u64 *now_ns);

/* REC_INTERVAL: an interval the front ends showed, and the status they
 * showed with it (the status's strings point into the string pool). */
void rec_put_interval(struct bytebuf *b, const struct mt_status *st, __u16 flags);
bool rec_get_interval(struct rec_cur *c, struct mt_status *st);

/* A slowdown range as recorded holds together (low <= high, or high
 * infinite: only a lower bound). */
bool rec_range_ok(double low, double high);

/* Version 1's REC_INTERVAL, which carried the tick, the drops and every
 * target's fields itself: its head; then rec_get_target_v1() *ntargets
 * times, rec_get_target_how_v1() as many times, rec_get_facts_v1() as
 * many, and rec_get_measure_v1(). Each target comes out as a facts
 * report, which the replay applies by the model's one door. */
bool rec_get_interval_v1(struct rec_cur *c, __u64 *now_ns, struct mt_drops *d, struct mt_status *st,
			 __u32 *ntargets);
bool rec_get_target_v1(struct rec_cur *c, struct mt_target_facts *f);
bool rec_get_target_how_v1(struct rec_cur *c, struct mt_target_facts *f);
bool rec_get_facts_v1(struct rec_cur *c, struct mt_target_facts *f);
bool rec_get_measure_v1(struct rec_cur *c, struct mt_status *st);

#endif /* MEMTOP_REC_CODEC_H */

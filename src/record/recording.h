/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * recording.h - the recording format (docs/recording.md), version 1:
 * what a frame is on the wire, how one is built and how one is found and
 * checked in untrusted bytes. Pure: bytes in, bytes or fields out.
 *
 * A recording is one or more segments, each the 8-byte magic then frames.
 * A frame is
 *     u32 length of the payload (<= REC_MAX_PAYLOAD)
 *     u16 type (enum rec_type)   u16 flags (enum rec_flag)
 *     payload[length]
 *     u32 CRC-32 (zlib's) of type, flags and payload
 * all little-endian, so a reader stops cleanly at the last complete frame
 * of a file whose writer was killed or ran out of disk.
 *
 * Payload fields are read with a cursor (struct rec_cur) that never reads
 * past its end: a short or malformed payload sets cur.bad and reads zeros.
 */
#ifndef MEMTOP_RECORDING_H
#define MEMTOP_RECORDING_H

#include "util/bytebuf.h"
#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#define REC_MAGIC "\x89MTREC\r\n"
#define REC_MAGIC_LEN 8
#define REC_VERSION 2              /* what memtop writes */
#define REC_VERSION_OLDEST 1       /* the oldest it reads */
#define REC_FRAME_OVERHEAD 12      /* length, type, flags, CRC */
#define REC_MAX_PAYLOAD (4u << 20) /* no frame is larger */
#define REC_MAX_STRING 65536       /* bytes of one string */
#define REC_MAX_FRAMES 1024        /* frames of one stack */
#define REC_MAX_TARGETS 65536      /* targets in one interval */

enum rec_type {
	REC_HEADER = 1,    /* a segment's first frame: version, session, options */
	REC_STRING = 2,    /* u32 id, string: ids from 1, each defined once */
	REC_STACK = 3,     /* u32 id, flags, frames: ids from 1 */
	REC_TARGET = 4,    /* version 1: a target appears (or a new process reuses its pid) */
	REC_ALLOC = 5,     /* a sampled allocation, symbolized */
	REC_FREE = 6,      /* a free of a sampled address */
	REC_DROP = 7,      /* a process's live samples are forgotten (exec) */
	REC_ENDED = 8,     /* a target died, and how */
	REC_GROUP = 9,     /* the grouping changed */
	REC_INTERVAL = 10, /* an interval shown: the status (version 1: also the
			    * tick, the drops and every target's figures) */
	REC_FACTS = 11,    /* a target's facts report (version 2) */
	REC_DROPS = 12,    /* the loss counters (version 2) */
	REC_TICK = 13,     /* the model closed an interval (version 2) */
	REC_TYPE_MAX = REC_TICK,
};

enum rec_flag {
	/* Part of a segment's opening state: what the session held when the
	 * segment began. A reader that read the segment before skips it. */
	REC_F_KEY = 1 << 0,
	/* REC_INTERVAL: the interval before the display started (nothing was
	 * shown for it). */
	REC_F_QUIET = 1 << 1,
};

/* ---- building ------------------------------------------------------------ */

/* Frames are built in a util/bytebuf: its error is sticky, so a writer
 * builds a whole interval and checks b->err once. */
void rec_put_bytes(struct bytebuf *b, const void *d, size_t n);
void rec_put_u8(struct bytebuf *b, __u8 v);
void rec_put_u16(struct bytebuf *b, __u16 v);
void rec_put_u32(struct bytebuf *b, __u32 v);
void rec_put_u64(struct bytebuf *b, __u64 v);
void rec_put_f64(struct bytebuf *b, double v);
/* u32 length then the bytes; NULL is length 0xffffffff. Cut to
 * REC_MAX_STRING. */
void rec_put_str(struct bytebuf *b, const char *s);

/* Open a frame of type at the end of b; rec_frame_end() fills in its
 * length and CRC. Returns the frame's start, for rec_frame_end(). */
size_t rec_frame_begin(struct bytebuf *b, enum rec_type type, __u16 flags);
void rec_frame_end(struct bytebuf *b, size_t start);

/* ---- reading ------------------------------------------------------------- */

enum rec_scan {
	REC_SCAN_FRAME = 0, /* a complete, checked frame */
	REC_SCAN_SEGMENT,   /* the magic of a (next) segment: skipped */
	REC_SCAN_MORE,      /* the bytes end inside a frame (or are empty) */
	REC_SCAN_BAD,       /* not a frame: bad length, type or CRC */
};

struct rec_frame {
	enum rec_type type;
	__u16 flags;
	const unsigned char *payload;
	size_t len;
	size_t size; /* bytes of the whole frame (or the magic) */
};

/* Look at the bytes at d[0..n): a frame, a segment's magic, too few bytes,
 * or garbage. Never reads outside d[0..n). */
enum rec_scan rec_scan(const unsigned char *d, size_t n, struct rec_frame *f);

struct rec_cur {
	const unsigned char *p;
	size_t n;
	bool bad; /* a read went past the end, or a value was out of range */
};

void rec_cur_init(struct rec_cur *c, const struct rec_frame *f);
__u8 rec_get_u8(struct rec_cur *c);
__u16 rec_get_u16(struct rec_cur *c);
__u32 rec_get_u32(struct rec_cur *c);
__u64 rec_get_u64(struct rec_cur *c);
double rec_get_f64(struct rec_cur *c);
/* A string as rec_put_str() wrote it: its bytes inside the payload (not
 * NUL-terminated) and their count in *len; NULL for a NULL string. A
 * string with a NUL inside, or longer than REC_MAX_STRING, sets bad. */
const char *rec_get_str(struct rec_cur *c, size_t *len);

#endif /* MEMTOP_RECORDING_H */

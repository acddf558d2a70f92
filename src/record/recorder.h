/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * recorder.h - `--record FILE`: everything the model learns, appended to a
 * recording (docs/recording.md) as it happens, one flush per interval, so
 * that the file holds every complete interval whatever stops memtop.
 *
 * With a bound (--record-max SIZE) the recording is two segments, FILE
 * and FILE.1, each closed once it holds SIZE/2: the older one is then
 * dropped, FILE becomes FILE.1 and a new FILE opens with the session's
 * state (the dictionary, the targets, the live samples) so that it can be
 * read without the segments before it. The new segment is written whole
 * under FILE.new and renamed over FILE: FILE is complete at every moment.
 *
 * Each segment holds at least twice its opening state, so a state larger
 * than a quarter of SIZE makes the files grow past SIZE: said by
 * recorder_warning().
 *
 * A write that fails (ENOSPC, EIO) cuts the file back to its last
 * complete frame and stops the recording; recorder_failed() says why.
 */
#ifndef MEMTOP_RECORDER_H
#define MEMTOP_RECORDER_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "config.h"
#include "model/model.h"
#include "input/status.h"

struct recorder_opts {
	const char *path;
	__u64 max_bytes;     /* 0: unbounded */
	const char *targets; /* what the run watches, in words ("-p 4242") */
	double interval_s;
	__u64 rate;
	enum mt_group group;
	const char *skip_regex;
	__u32 max_stacks; /* --max-stacks; 0: the model's default */
	const char *version;
};

struct recorder;

/* Create (or truncate) FILE: a regular file, never through a symlink,
 * mode 0600. o's strings are copied. NULL with err ("cannot record to
 * FILE: CAUSE"). */
struct recorder *recorder_open(const struct recorder_opts *o, char *err, size_t errlen);
/* Be told every input of m from now on (before any target exists). */
void recorder_watch(struct recorder *r, struct mt_model *m);
/* The interval the front end is about to show (quiet: the one before the
 * display started): written with what was learned during it, and
 * flushed; the segment rotates when full. */
void recorder_interval(struct recorder *r, const struct mt_model *m, const struct mt_status *st,
		       bool quiet);
/* Why the recording stopped, or NULL while it goes on. */
const char *recorder_failed(const struct recorder *r);
/* Why the files grow past --record-max (the opening state of a segment
 * is more than a quarter of it: each segment then holds twice its state),
 * or NULL. */
const char *recorder_warning(const struct recorder *r);
/* Bytes written to the file so far (both segments). */
__u64 recorder_bytes(const struct recorder *r);

/* For the session server (record/session.h): a new descriptor of segment
 * which (0: the current one, 1: the one before; -1 when there is none),
 * its number, and the bytes of it flushed. */
int recorder_dup_segment(const struct recorder *r, int which, __u32 *segment, __u64 *size);
/* The current segment's number and flushed size. */
__u32 recorder_segment(const struct recorder *r, __u64 *size);

void recorder_close(struct recorder *r);

#endif /* MEMTOP_RECORDER_H */

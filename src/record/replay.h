/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * replay.h - a recording (record/recording.h, docs/recording.md) read back
 * into a model: the bytes of a file or of a session's stream go in, the
 * model and status the live run had at each of its intervals come out, so
 * the same views and exports show them. Pure: no I/O (a file is read
 * through the caller's read_at, replay_set_source()).
 *
 * The bytes are untrusted: every length, id and count is checked, a frame
 * that fails its CRC or does not make sense ends the replay at the last
 * complete interval before it, with one line saying where and why.
 */
#ifndef MEMTOP_REPLAY_H
#define MEMTOP_REPLAY_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "config.h"
#include "model/model.h"
#include "input/status.h"

/* What the recording says about the run that wrote it (its first segment
 * header). */
struct replay_info {
	__u64 session; /* random id of the run */
	__u32 segment; /* the first segment read (0 unless older ones were rotated away) */
	__u64 rate;
	enum mt_group group;
	double interval_s; /* -d of the run */
	double start_wall_s;
	char version[32];  /* memtop version that wrote it */
	char targets[256]; /* "-p 4242", "-- ./server", "--cgroup ..." */
};

struct replay;

/* NULL (ENOMEM). */
struct replay *replay_new(void);
void replay_free(struct replay *r);

/* Append bytes (a session stream's as they arrive). The replay keeps
 * them, to rewind. 0, or -ENOMEM; -EINVAL after replay_set_source(). */
int replay_append(struct replay *r, const void *d, size_t n);

/* Bytes the replay reads when it needs them instead of keeping them (a
 * file: --replay). read_at reads up to n bytes at offset off into buf and
 * returns how many (fewer only at the end: the bytes stop there), or
 * -errno. The replay never reads past size. */
struct replay_source {
	long (*read_at)(void *ctx, void *buf, size_t n, __u64 off);
	void *ctx;
	__u64 size;
	size_t window; /* bytes read at a time; 0: REPLAY_WINDOW */
};

/* Read from src from now on, through a window of src->window bytes
 * (larger only while a frame is: at most REC_MAX_PAYLOAD plus its 12
 * bytes), so the bytes cost that window whatever the recording's size;
 * counting its intervals (replay_count) reads it once more through a
 * second window, freed once it reached the end. A rewind reads from the
 * first byte again. Before any byte is appended or read. 0 or -EINVAL. */
#define REPLAY_WINDOW (1u << 20)
int replay_set_source(struct replay *r, const struct replay_source *src);

/* Bytes the replay holds of the recording now (its windows, or what was
 * appended): for tests of the bound. */
size_t replay_bytes_held(const struct replay *r);

/* Apply frames up to the end of the next interval: 1 when one closed (the
 * model ticked; show it unless replay_quiet()), 0 when the bytes end first
 * (more may be appended), -errno when the bytes cannot be read further
 * (err says why and at which offset; the model stays at the last
 * interval). */
int replay_step(struct replay *r, char *err, size_t errlen);

/* Rebuild the model from the first byte kept to the end of interval k
 * (replay_first() when k is before it; k <= replay_at()). 0 (the model
 * pointer changed), or -errno (err) with the replay left as it was. */
int replay_rewind(struct replay *r, long k, char *err, size_t errlen);

/* Forget whole segments from the front so that at most keep segments are
 * held (a session's endless stream: memory bounded as the session's own
 * files are). The intervals keep their numbers; the oldest one held is
 * replay_first(). A model that stands in what is to be forgotten first
 * moves on past it (replay_step()). 0 when the model did not move, 1 when
 * it did (show it), -errno (err) when a frame on the way did not read
 * (nothing was forgotten). Nothing is forgotten once the replay failed. */
int replay_trim(struct replay *r, int keep, char *err, size_t errlen);

/* The bytes held (appended, less what replay_trim() forgot). */
size_t replay_bytes(const struct replay *r);

/* The oldest interval the bytes kept hold (0 until replay_trim() forgot
 * some); replay_rewind() goes no further back. */
long replay_first(const struct replay *r);

/* The interval the model stands at (0: the first), -1 before any. */
long replay_at(const struct replay *r);
/* Intervals the appended bytes hold, complete ones only (a cheap scan). */
long replay_count(struct replay *r);
/* The interval the model stands at was before the display started. */
bool replay_quiet(const struct replay *r);
/* Bytes after the last complete frame (a cut tail), 0 when clean. */
size_t replay_tail_bytes(const struct replay *r);

/* NULL before the first header was read. */
struct mt_model *replay_model(const struct replay *r);
struct mt_status *replay_status(struct replay *r);
const struct replay_info *replay_info(const struct replay *r);

#endif /* MEMTOP_REPLAY_H */

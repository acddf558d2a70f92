// SPDX-License-Identifier: GPL-2.0-only
/*
 * replay.c - a recording read back into a model (replay.h).
 *
 * Rewinding is a fresh model fed from the first byte kept again, which is
 * exact (the model is a function of its inputs) and needs no snapshot of
 * the model. The bytes are either appended and kept whole (a session's
 * stream), or read from a source when needed (a file), through a window
 * that holds one frame at least and REPLAY_WINDOW bytes usually: what a
 * replay of a file costs is its model, not the file. Counting the
 * intervals reads the source once more through a second window, freed at
 * its end; nothing per interval is kept. A reader that reads on from
 * one segment into the next (a session stream, or FILE.1 then FILE) skips
 * the next segment's opening state (REC_F_KEY frames): it has it already,
 * and those frames' interval (the one just shown again) is not counted.
 *
 * An endless stream is bounded by replay_trim(): whole segments are
 * forgotten from the front, the oldest segment kept then opens with its
 * opening state, so a rewind starts there. Intervals keep their numbers
 * (replay_first() is the oldest one still held).
 *
 * Dictionaries: strings and stacks have ids from 1, each defined before
 * use; a definition again (a later segment's opening state) is ignored.
 */
#include "record/replay.h"
#include "util/grow.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record/rec_codec.h"
#include "record/recording.h"
#include "util/pattern.h"
#include "util/strpool.h"

/* Segment starts remembered for replay_trim(). */
#define REPLAY_SEGS 8

struct rec_stack {
	__u32 n;
	struct mt_frame *frames;
};

/* Bytes of a source: off is the source's offset of buf[0]. */
struct window {
	unsigned char *buf;
	size_t cap, len;
	size_t off;
};

struct replay {
	unsigned char *data; /* appended (no source) */
	size_t len, cap;
	struct replay_source src;
	bool has_src;
	struct window win;       /* applying */
	struct window count_win; /* replay_count() */
	size_t end;              /* bytes there are: len, or the source's */

	/* applying */
	size_t pos; /* next byte to apply */
	long at;    /* interval the model stands at */
	bool quiet;
	int segments; /* seen so far */
	__u64 session;
	__u32 segment;
	__u16 version;   /* the recording's format */
	bool in_segment; /* a magic was read: a header must follow */
	bool skip_key;
	int error; /* once set, nothing more is applied */
	char error_msg[256];
	struct mt_model *model;
	struct mt_status status;
	struct replay_info info;
	__u64 last_now_ns;

	const char **strings; /* [id - 1] */
	size_t nstrings, strings_cap;
	struct rec_stack *stacks; /* [id - 1] */
	size_t nstacks, stacks_cap;

	/* counting (replay_count) */
	size_t scan_pos;
	long scanned;
	bool counted; /* a source's count is final */
	size_t tail;  /* bytes after the last complete frame */
	int scan_seg; /* segments scanned (their magic seen) */
	/* where the last REPLAY_SEGS segments scanned start, and the intervals
	 * counted before each */
	size_t seg_off[REPLAY_SEGS];
	long seg_count[REPLAY_SEGS];
	int nseg;

	/* forgetting (replay_trim) */
	long first;     /* the interval the first byte kept opens with */
	size_t dropped; /* bytes forgotten before data[0] */
};

struct replay *replay_new(void)
{
	struct replay *r = calloc(1, sizeof(*r));

	if (r)
		r->at = -1;
	return r;
}

static void forget_model(struct replay *r)
{
	size_t i;

	model_free(r->model);
	r->model = NULL;
	for (i = 0; i < r->nstacks; i++)
		free(r->stacks[i].frames);
	free(r->stacks);
	free(r->strings);
	r->stacks = NULL;
	r->strings = NULL;
	r->nstacks = r->stacks_cap = r->nstrings = r->strings_cap = 0;
}

void replay_free(struct replay *r)
{
	if (!r)
		return;
	forget_model(r);
	free(r->data);
	free(r->win.buf);
	free(r->count_win.buf);
	free(r);
}

int replay_set_source(struct replay *r, const struct replay_source *src)
{
	if (r->len || r->has_src || !src->read_at)
		return -EINVAL;
	r->src = *src;
	if (!r->src.window)
		r->src.window = REPLAY_WINDOW;
	r->has_src = true;
	r->end = src->size > SIZE_MAX / 2 ? SIZE_MAX / 2 : (size_t)src->size;
	return 0;
}

size_t replay_bytes_held(const struct replay *r)
{
	return r->has_src ? r->win.cap + r->count_win.cap : r->cap;
}

int replay_append(struct replay *r, const void *d, size_t n)
{
	if (r->has_src)
		return -EINVAL;
	if (!n)
		return 0;
	if (n > SIZE_MAX / 2 - r->len)
		return -ENOMEM;
	if (r->len + n > r->cap) {
		size_t cap = r->cap ? r->cap : 65536;
		unsigned char *p;

		while (cap < r->len + n)
			cap *= 2;
		p = realloc(r->data, cap);
		if (!p)
			return -ENOMEM;
		r->data = p;
		r->cap = cap;
	}
	memcpy(r->data + r->len, d, n);
	r->len += n;
	r->end = r->len;
	return 0;
}

/* ---- the bytes ---------------------------------------------------------- */

/* The bytes from pos on into *p: at least want of them unless the
 * recording ends first; returns how many there are at *p (0 at the end),
 * or -errno when the source cannot be read. Appended bytes are all there;
 * a source's are read into w, keeping what w holds from pos on. */
static long bytes_at(struct replay *r, struct window *w, size_t pos, size_t want,
		     const unsigned char **p)
{
	size_t keep = 0, n;

	*p = NULL;
	if (pos >= r->end)
		return 0;
	if (!r->has_src) {
		*p = r->data + pos;
		return (long)(r->len - pos);
	}
	if (want > r->end - pos)
		want = r->end - pos;
	if (w->buf && pos >= w->off && pos + want <= w->off + w->len) {
		*p = w->buf + (pos - w->off);
		return (long)(w->off + w->len - pos);
	}
	n = want > r->src.window ? want : r->src.window;
	if (n > r->end - pos)
		n = r->end - pos;
	if (n > w->cap) {
		unsigned char *nb = realloc(w->buf, n);

		if (!nb)
			return -ENOMEM;
		w->buf = nb;
		w->cap = n;
	}
	if (w->buf && w->len && pos >= w->off && pos < w->off + w->len) {
		keep = w->off + w->len - pos;
		memmove(w->buf, w->buf + (pos - w->off), keep);
	}
	w->off = pos;
	w->len = keep;
	while (w->len < n) {
		long got = r->src.read_at(r->src.ctx, w->buf + w->len, n - w->len, pos + w->len);

		if (got < 0)
			return got;
		if (got == 0) { /* shorter than it was: the end is here now */
			r->end = pos + w->len;
			break;
		}
		w->len += (size_t)got;
	}
	*p = w->buf;
	return (long)w->len;
}

/* The frame at pos, read through w: rec_scan() on the source's bytes, with
 * the window grown to the frame when it is larger than what w held. *e is
 * set (and REC_SCAN_MORE returned) when the source cannot be read. */
static enum rec_scan scan_at(struct replay *r, struct window *w, size_t pos, struct rec_frame *f,
			     int *e)
{
	const unsigned char *p;
	long n = bytes_at(r, w, pos, REC_FRAME_OVERHEAD, &p);
	enum rec_scan s;

	*e = 0;
	if (n < 0) {
		*e = (int)n;
		memset(f, 0, sizeof(*f));
		return REC_SCAN_MORE;
	}
	s = rec_scan(p, (size_t)n, f);
	if (s == REC_SCAN_MORE && r->has_src && (size_t)n < r->end - pos && n >= 4) {
		size_t need = REC_FRAME_OVERHEAD + ((size_t)p[0] | (size_t)p[1] << 8 |
						    (size_t)p[2] << 16 | (size_t)p[3] << 24);

		if (need <= REC_MAX_PAYLOAD + REC_FRAME_OVERHEAD && need > (size_t)n) {
			n = bytes_at(r, w, pos, need, &p);
			if (n < 0) {
				*e = (int)n;
				memset(f, 0, sizeof(*f));
				return REC_SCAN_MORE;
			}
			s = rec_scan(p, (size_t)n, f);
		}
	}
	return s;
}

/* ---- errors ----------------------------------------------------------- */

static int failf(struct replay *r, int e, const char *fmt, ...)
{
	va_list ap;
	char what[200];

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	snprintf(r->error_msg, sizeof(r->error_msg), "at byte %zu: %s", r->dropped + r->pos, what);
	r->error = e;
	return e;
}

/* ---- dictionaries --------------------------------------------------------- */

/* id 0 is NULL; an id not defined yet makes the frame bad. */
static bool string_of(const struct replay *r, __u32 id, const char **out)
{
	if (id == 0) {
		*out = NULL;
		return true;
	}
	if (id > r->nstrings)
		return false;
	*out = r->strings[id - 1];
	return true;
}

static int apply_string(struct replay *r, struct rec_cur *c)
{
	__u32 id;
	const char *s;

	if (!rec_get_string(c, &id, &s))
		return failf(r, -EBADMSG, "a malformed string");
	if (id <= r->nstrings)
		return 0; /* defined already (a segment's opening state) */
	if (id != r->nstrings + 1)
		return failf(r, -EBADMSG, "string id %u skips ids", id);
	if (grow_array(&r->strings, &r->strings_cap, id, sizeof(*r->strings)))
		return failf(r, -ENOMEM, "out of memory");
	r->strings[r->nstrings++] = s;
	return 0;
}

static int apply_stack(struct replay *r, struct rec_cur *c)
{
	struct rec_stack st = { 0 };
	__u32 id, n, i;

	if (!rec_get_stack(c, &id, &n))
		return failf(r, -EBADMSG, "a malformed stack");
	if (id <= r->nstacks)
		return 0;
	if (id != r->nstacks + 1)
		return failf(r, -EBADMSG, "stack id %u skips ids", id);
	/* a count the payload cannot hold is bad before anything is
	 * allocated for it */
	if ((size_t)n * REC_STACK_FRAME_BYTES > c->n)
		return failf(r, -EBADMSG, "stack %u: %u frames in %zu bytes", id, n, c->n);
	st.n = n;
	st.frames = calloc(n ? n : 1, sizeof(*st.frames));
	if (!st.frames || grow_array(&r->stacks, &r->stacks_cap, id, sizeof(*r->stacks))) {
		free(st.frames);
		return failf(r, -ENOMEM, "out of memory");
	}
	for (i = 0; i < n; i++) {
		struct rec_frame_ids f;
		struct mt_frame *o = &st.frames[i];

		if (!rec_get_stack_frame(c, &f) || !string_of(r, f.function, &o->function) ||
		    !string_of(r, f.module, &o->module) ||
		    !string_of(r, f.module_path, &o->module_path) ||
		    !string_of(r, f.build_id, &o->build_id) || !string_of(r, f.file, &o->file)) {
			free(st.frames);
			return failf(r, -EBADMSG, "stack %u: frame %u names an unknown string", id,
				     i);
		}
		o->addr = f.addr;
		o->rel_addr = f.rel_addr;
		o->line = f.line;
		o->flags = f.flags;
	}
	r->stacks[r->nstacks++] = st;
	return 0;
}

/* ---- frames ---------------------------------------------------------------- */

static int apply_header(struct replay *r, struct rec_cur *c)
{
	struct rec_header h;
	struct mt_model_opts mo;

	if (!rec_get_header(c, &h))
		return failf(r, -EBADMSG, "a malformed segment header");
	if (!rec_version_known(h.version))
		return failf(r, -EPROTONOSUPPORT,
			     "recording format version %u; this memtop reads versions %d to %d",
			     h.version, REC_VERSION_OLDEST, REC_VERSION);
	r->in_segment = false;
	if (r->segments++) {
		if (h.session != r->session || h.segment != r->segment + 1 || h.version != r->version)
			return failf(
				r, -EBADMSG,
				"segment %u of session %016llx does not follow segment %u of %016llx",
				h.segment, (unsigned long long)h.session, r->segment,
				(unsigned long long)r->session);
		r->segment = h.segment;
		r->skip_key = true;
		return 0;
	}
	r->session = h.session;
	r->segment = h.segment;
	r->version = h.version;
	r->skip_key = false;
	if (h.skip_regex) { /* the same bounded compile as --skip's (util/pattern.h) */
		char why[128];
		struct pattern *p = pattern_compile(h.skip_regex, why, sizeof(why));

		if (!p && errno == EINVAL)
			return failf(r, -EINVAL, "its --skip pattern (%zu bytes) is refused: %s",
				     strlen(h.skip_regex), why);
		pattern_free(p);
	}
	mo = (struct mt_model_opts){ .rate = h.rate,
				     .group = h.group,
				     .skip_regex = h.skip_regex,
				     .max_stacks = h.max_stacks };
	r->model = model_new(&mo);
	if (!r->model)
		return failf(r, -errno, "cannot set up the model: %s",
			     errno == EINVAL ? "the --skip pattern does not compile"
					     : strerror(errno));
	r->info = (struct replay_info){ .session = h.session,
					.segment = h.segment,
					.rate = h.rate,
					.group = h.group,
					.interval_s = h.interval_s,
					.start_wall_s = h.start_wall_s };
	snprintf(r->info.version, sizeof(r->info.version), "%s", h.version_str ? h.version_str : "");
	snprintf(r->info.targets, sizeof(r->info.targets), "%s", h.targets ? h.targets : "");
	return 0;
}

static int apply_alloc(struct replay *r, struct rec_cur *c)
{
	struct mt_sample_in in;
	__u32 stack;

	if (!rec_get_alloc(c, &stack, &in))
		return failf(r, -EBADMSG, "a malformed allocation");
	if (!stack || stack > r->nstacks)
		return failf(r, -EBADMSG, "an allocation of unknown stack %u", stack);
	in.frames = r->stacks[stack - 1].frames;
	in.nframes = r->stacks[stack - 1].n;
	/* -ENOMEM is counted by the model, as live */
	model_apply(r->model, MT_INPUT_ALLOC(&in));
	return 0;
}

/* A shown interval closes: the front ends may show the model now. */
static int interval_shown(struct replay *r, __u16 flags)
{
	r->quiet = flags & REC_F_QUIET;
	/* after replay_trim() the oldest segment kept opens with interval
	 * `first`: a KEY interval there is that one, as replay_count() has
	 * it, however many a stream puts in */
	if (!(flags & REC_F_KEY) || !r->first || r->at < r->first)
		r->at++;
	return 1;
}

static int apply_tick(struct replay *r, __u64 now)
{
	if (now < r->last_now_ns)
		return failf(r, -EBADMSG, "an interval that ends before the last one");
	model_apply(r->model, MT_INPUT_TICK(now));
	r->last_now_ns = now;
	return 0;
}

/* A facts report of either version, into the model by its door. */
static int apply_facts(struct replay *r, const struct mt_target_facts *f)
{
	int e = model_apply(r->model, MT_INPUT_FACTS(f));

	return e == -ENOMEM ? failf(r, -ENOMEM, "out of memory") : 0;
}

/* Version 1's interval: the tick, the drops and every target's fields in
 * one frame, applied as the inputs version 2 records one by one. */
static int apply_interval_v1(struct replay *r, struct rec_cur *c, __u16 flags)
{
	struct mt_target_facts *tf;
	struct mt_drops d;
	__u64 now;
	__u32 n, i;
	int e = 0;

	if (!rec_get_interval_v1(c, &now, &d, &r->status, &n))
		return failf(r, -EBADMSG, "a malformed interval");
	/* a target takes more than 4 bytes of the payload */
	tf = n <= c->n / 4 ? calloc(n ? n : 1, sizeof(*tf)) : NULL;
	if (!tf)
		return failf(r, -EBADMSG, "a malformed interval");
	for (i = 0; i < n && !e; i++)
		if (!rec_get_target_v1(c, &tf[i]))
			e = -EBADMSG;
	for (i = 0; i < n && !e; i++)
		if (!rec_get_target_how_v1(c, &tf[i]))
			e = -EBADMSG;
	for (i = 0; i < n && !e; i++)
		if (!rec_get_facts_v1(c, &tf[i]))
			e = -EBADMSG;
	if (!e && !rec_get_measure_v1(c, &r->status))
		e = -EBADMSG;
	for (i = 0; i < n && !e; i++) {
		/* a target the interval names first is watched from now */
		if (!model_target(r->model, tf[i].pid))
			tf[i].set |= MT_FACT_WATCHED;
		e = apply_facts(r, &tf[i]);
	}
	free(tf);
	if (e == -EBADMSG)
		return failf(r, -EBADMSG, "a malformed target in an interval");
	if (e)
		return e;
	model_apply(r->model, MT_INPUT_DROPS(&d));
	e = apply_tick(r, now);
	return e ? e : interval_shown(r, flags);
}

/* One frame of the data, the model exists. 1: an interval closed. */
static int apply_frame(struct replay *r, const struct rec_frame *f)
{
	struct rec_cur c;
	struct mt_target_end e;
	struct mt_target_facts tf;
	struct mt_drops d;
	enum mt_group g;
	__u64 a, b;
	pid_t pid;

	rec_cur_init(&c, f);
	switch (f->type) {
	case REC_STRING:
		return apply_string(r, &c);
	case REC_STACK:
		return apply_stack(r, &c);
	case REC_ALLOC:
		return apply_alloc(r, &c);
	case REC_TARGET:
		if (!rec_get_pid(&c, &pid) || r->version != 1)
			return failf(r, -EBADMSG, "a malformed target");
		tf = (struct mt_target_facts){ .pid = pid, .set = MT_FACT_WATCHED };
		return apply_facts(r, &tf);
	case REC_FACTS:
		if (!rec_get_facts(&c, &tf) || r->version < 2)
			return failf(r, -EBADMSG, "a malformed report of a target");
		return apply_facts(r, &tf);
	case REC_DROP:
		if (!rec_get_pid(&c, &pid))
			return failf(r, -EBADMSG, "a malformed dropped process");
		model_apply(r->model, MT_INPUT_DROP(pid));
		return 0;
	case REC_DROPS:
		if (!rec_get_drops(&c, &d) || r->version < 2)
			return failf(r, -EBADMSG, "malformed drops");
		model_apply(r->model, MT_INPUT_DROPS(&d));
		return 0;
	case REC_FREE:
		if (!rec_get_free(&c, &pid, &a, &b))
			return failf(r, -EBADMSG, "a malformed free");
		model_apply(r->model, MT_INPUT_FREE(pid, a, b));
		return 0;
	case REC_ENDED:
		if (!rec_get_ended(&c, &pid, &e, &a))
			return failf(r, -EBADMSG, "a malformed end of a target");
		model_apply(r->model, MT_INPUT_ENDED(pid, &e, a));
		return 0;
	case REC_GROUP:
		if (!rec_get_group(&c, &g))
			return failf(r, -EBADMSG, "a malformed grouping");
		if (model_apply(r->model, MT_INPUT_GROUP(g)))
			return failf(r, -ENOMEM, "out of memory");
		return 0;
	case REC_TICK:
		if (!rec_get_tick(&c, &a) || r->version < 2)
			return failf(r, -EBADMSG, "a malformed tick");
		return apply_tick(r, a);
	case REC_INTERVAL:
		if (r->version == 1)
			return apply_interval_v1(r, &c, f->flags);
		if (!rec_get_interval(&c, &r->status))
			return failf(r, -EBADMSG, "a malformed interval");
		return interval_shown(r, f->flags);
	case REC_HEADER:
	default:
		return failf(r, -EBADMSG, "a segment header inside a segment");
	}
}

int replay_step(struct replay *r, char *err, size_t errlen)
{
	int e = 0;

	while (!r->error) {
		struct rec_frame f;
		int rd;
		enum rec_scan s = scan_at(r, &r->win, r->pos, &f, &rd);
		struct rec_cur c;

		if (rd) {
			failf(r, rd, "cannot read it: %s", strerror(-rd));
			break;
		}
		if (s == REC_SCAN_MORE)
			return 0;
		if (s == REC_SCAN_BAD) {
			failf(r, -EBADMSG,
			      r->pos ? "not a frame (a bad length, type or checksum)"
				     : "not a memtop recording");
			break;
		}
		if (s == REC_SCAN_SEGMENT) {
			r->in_segment = true;
			r->pos += f.size;
			continue;
		}
		if (r->pos == 0) { /* a frame, but no magic before it */
			failf(r, -EBADMSG, "not a memtop recording");
			break;
		}
		if (r->in_segment != (f.type == REC_HEADER)) {
			failf(r, -EBADMSG,
			      r->in_segment ? "a segment without a header"
					    : "a segment header without its magic");
			break;
		}
		if (f.type == REC_HEADER) {
			rec_cur_init(&c, &f);
			e = apply_header(r, &c);
		} else if ((f.flags & REC_F_KEY) && r->skip_key) {
			e = 0;
		} else {
			e = apply_frame(r, &f);
		}
		if (e < 0)
			break;
		r->pos += f.size;
		if (e == 1)
			return 1;
	}
	if (err && errlen)
		snprintf(err, errlen, "%s", r->error_msg);
	return r->error;
}

int replay_rewind(struct replay *r, long k, char *err, size_t errlen)
{
	struct replay old = *r;
	int e = 0;

	if (k < r->first)
		k = r->first;
	if (k > r->at)
		return -ERANGE;
	/* the model and dictionaries stay aside until the new ones stand at
	 * k: a rebuild that fails leaves the replay as it was. Only bytes
	 * already applied are read again, so that takes a stream that tells
	 * a segment's opening state apart from what came before it
	 * (replay_trim()) */
	r->model = NULL;
	r->strings = NULL;
	r->stacks = NULL;
	r->nstacks = r->stacks_cap = r->nstrings = r->strings_cap = 0;
	r->pos = 0;
	r->at = r->first - 1;
	r->segments = 0;
	r->in_segment = false;
	r->error = 0;
	r->last_now_ns = 0;
	memset(&r->status, 0, sizeof(r->status));
	r->status.replay = old.status.replay;
	while (r->at < k && (e = replay_step(r, err, errlen)) == 1)
		;
	if (e < 0 || r->at < k) {
		if (e >= 0) {
			e = -EBADMSG;
			if (err && errlen)
				snprintf(err, errlen,
					 "at byte %zu: the data ends before interval %ld",
					 r->dropped + r->pos, k);
		}
		forget_model(r);
		*r = old;
		return e;
	}
	forget_model(&old);
	return 0;
}

long replay_at(const struct replay *r)
{
	return r->at;
}

long replay_count(struct replay *r)
{
	int rd = 0;

	while (!rd && !r->counted) {
		struct rec_frame f;
		enum rec_scan s = scan_at(r, &r->count_win, r->scan_pos, &f, &rd);

		if (s == REC_SCAN_BAD || s == REC_SCAN_MORE)
			break;
		if (s == REC_SCAN_SEGMENT) {
			if (r->nseg == REPLAY_SEGS) {
				memmove(r->seg_off, r->seg_off + 1,
					sizeof(r->seg_off) - sizeof(*r->seg_off));
				memmove(r->seg_count, r->seg_count + 1,
					sizeof(r->seg_count) - sizeof(*r->seg_count));
				r->nseg--;
			}
			r->seg_off[r->nseg] = r->scan_pos;
			r->seg_count[r->nseg++] = r->scanned;
			r->scan_seg++;
		}
		/* as replay_step(): a later segment's opening interval is skipped */
		if (s == REC_SCAN_FRAME && f.type == REC_INTERVAL &&
		    !(r->scan_seg > 1 && (f.flags & REC_F_KEY)))
			r->scanned++;
		r->scan_pos += f.size;
	}
	r->tail = r->end > r->scan_pos ? r->end - r->scan_pos : 0;
	if (r->has_src) { /* a source does not grow: this count is final */
		r->counted = true;
		free(r->count_win.buf);
		r->count_win = (struct window){ 0 };
	}
	return r->scanned;
}

size_t replay_bytes(const struct replay *r)
{
	return r->len;
}

long replay_first(const struct replay *r)
{
	return r->first;
}

int replay_trim(struct replay *r, int keep, char *err, size_t errlen)
{
	size_t cut;
	long first;
	int i, drop;
	bool moved;

	replay_count(r);
	if (keep < 1 || r->nseg <= keep)
		return 0;
	drop = r->nseg - keep;
	cut = r->seg_off[drop];
	/* the segment's opening interval is the one shown before it began */
	first = r->seg_count[drop] - 1;
	if (!cut || first < r->first)
		return 0;
	if (r->error)
		return 0; /* nothing is applied past an error: nothing moves */
	/* a model that stands in what is to be forgotten moves on past it
	 * (a viewer paused far back): the same frames it would apply anyway */
	moved = r->pos < cut;
	while (r->pos < cut) {
		int e = replay_step(r, err, errlen);

		if (e < 0)
			return e;
		if (e == 0)
			break; /* cannot be: the scan saw complete frames past cut */
	}
	if (r->pos < cut)
		return 0;
	memmove(r->data, r->data + cut, r->len - cut);
	r->len -= cut;
	r->pos -= cut;
	r->dropped += cut;
	r->scan_pos -= cut;
	for (i = drop; i < r->nseg; i++) {
		r->seg_off[i - drop] = r->seg_off[i] - cut;
		r->seg_count[i - drop] = r->seg_count[i];
	}
	r->nseg -= drop;
	r->first = first;
	if (r->len < r->cap / 4 && r->cap > (1u << 20)) {
		unsigned char *p = realloc(r->data, r->cap / 2);

		if (p) {
			r->data = p;
			r->cap /= 2;
		}
	}
	return moved;
}

bool replay_quiet(const struct replay *r)
{
	return r->quiet;
}

size_t replay_tail_bytes(const struct replay *r)
{
	return r->tail;
}

struct mt_model *replay_model(const struct replay *r)
{
	return r->model;
}

struct mt_status *replay_status(struct replay *r)
{
	return &r->status;
}

const struct replay_info *replay_info(const struct replay *r)
{
	return &r->info;
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * recorder.c - the recording writer (recorder.h). It is the model's observer:
 * every input the model takes is appended to a buffer as a frame (strings
 * and stacks once, by id, before their first use), and each interval
 * closes with the figures the front ends show, then one write(2) of the
 * buffer. Nothing is written between intervals, so the file only ever
 * ends after a complete interval, unless the write itself is cut (killed
 * mid-write, disk full): the reader stops at the last complete frame, and
 * a failed write is cut back here.
 */
#include "record/recorder.h"
#include "util/grow.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/random.h>
#include <sys/stat.h>

#include "record/rec_codec.h"
#include "record/recording.h"
#include "util/clock.h"
#include "util/hmap.h"
#include "util/strpool.h"

/* Past this much buffered between two intervals, the buffer is written
 * at once (a burst of samples must not hold memory). */
#define FLUSH_BYTES (1u << 20)

struct rec_string {
	const char *s;
	__u32 id;
};

struct rec_stackdef {
	__u32 id, n;
	struct mt_frame *frames;   /* to compare */
	struct rec_frame_ids *ids; /* as written */
};

struct recorder {
	/* FILE, FILE.1, and FILE.new while a rotation writes it */
	char path[4096], old_path[4104], new_path[4104];
	int fd, old_fd; /* current segment, the one before (-1) */
	__u32 segment;
	__u64 seg_size, old_size, seg_max, total;
	struct recorder_opts o;
	__u64 session;
	char failed[512];
	char warning[256]; /* the bound cannot hold: said once */
	__u64 state_size;  /* bytes of the last segment's opening state */
	struct bytebuf buf;
	struct mt_model *model;

	struct hmap strings; /* rec_string by pointer */
	struct rec_string **string_v;
	size_t nstrings, strings_cap;
	struct hmap stacks; /* rec_stackdef by frames */
	struct rec_stackdef **stack_v;
	size_t nstacks, stacks_cap;
};

/* The recording ends here; the file keeps every interval before. */
static void stop(struct recorder *r, const char *cause)
{
	if (r->failed[0])
		return;
	snprintf(r->failed, sizeof(r->failed),
		 "recording to %.200s stopped: %.200s (it holds every interval before)", r->path,
		 cause);
}

/* ---- dictionaries ---------------------------------------------------------- */

static bool string_eq(const void *val, const void *key)
{
	return ((const struct rec_string *)val)->s == key;
}

/* The id of an interned string, defining it first when new; 0 for NULL
 * (and when memory runs out: the name is then lost, not the frame). */
static __u32 string_id(struct recorder *r, const char *s)
{
	__u64 h = hmap_mix(0x5715, (__u64)(unsigned long)s);
	struct rec_string *e;

	if (!s)
		return 0;
	e = hmap_get(&r->strings, h, string_eq, s);
	if (e)
		return e->id;
	e = malloc(sizeof(*e));
	if (!e)
		return 0;
	e->s = s;
	e->id = (__u32)r->nstrings + 1;
	if (hmap_put(&r->strings, h, e) ||
	    grow_push((void ***)&r->string_v, &r->nstrings, &r->strings_cap, e)) {
		hmap_del(&r->strings, h, string_eq, s);
		free(e);
		return 0;
	}
	rec_put_string(&r->buf, e->id, s, 0);
	return e->id;
}

struct stack_key {
	const struct mt_frame *f;
	__u32 n;
};

static __u64 stack_hash(const struct mt_frame *f, __u32 n)
{
	__u64 h = hmap_mix(0x57ac, n);
	__u32 i;

	for (i = 0; i < n; i++) {
		h = hmap_mix(h, f[i].addr);
		h = hmap_mix(h, (__u64)(unsigned long)f[i].function);
		h = hmap_mix(h, (__u64)(unsigned long)f[i].module_path);
		h = hmap_mix(h, f[i].line);
	}
	return h;
}

static bool stack_eq(const void *val, const void *key)
{
	const struct rec_stackdef *d = val;
	const struct stack_key *k = key;

	return d->n == k->n && !memcmp(d->frames, k->f, k->n * sizeof(*k->f));
}

static void stackdef_free(struct rec_stackdef *d)
{
	if (!d)
		return;
	free(d->frames);
	free(d->ids);
	free(d);
}

/* The id of a stack, defining it (and its strings) first when new; 0
 * when memory runs out. */
static __u32 stack_id(struct recorder *r, const struct mt_frame *f, __u32 n)
{
	struct stack_key k = { f, n > REC_MAX_FRAMES ? REC_MAX_FRAMES : n };
	__u64 h = stack_hash(k.f, k.n);
	struct rec_stackdef *d = hmap_get(&r->stacks, h, stack_eq, &k);
	__u32 i;

	if (d)
		return d->id;
	d = calloc(1, sizeof(*d));
	if (d) {
		d->frames = calloc(k.n ? k.n : 1, sizeof(*d->frames));
		d->ids = calloc(k.n ? k.n : 1, sizeof(*d->ids));
	}
	if (!d || !d->frames || !d->ids) {
		stackdef_free(d);
		return 0;
	}
	d->n = k.n;
	memcpy(d->frames, k.f, k.n * sizeof(*k.f));
	for (i = 0; i < k.n; i++)
		d->ids[i] = (struct rec_frame_ids){
			.addr = f[i].addr,
			.rel_addr = f[i].rel_addr,
			.function = string_id(r, f[i].function),
			.module = string_id(r, f[i].module),
			.module_path = string_id(r, f[i].module_path),
			.build_id = string_id(r, f[i].build_id),
			.file = string_id(r, f[i].file),
			.line = f[i].line,
			.flags = f[i].flags,
		};
	d->id = (__u32)r->nstacks + 1;
	if (hmap_put(&r->stacks, h, d) ||
	    grow_push((void ***)&r->stack_v, &r->nstacks, &r->stacks_cap, d)) {
		hmap_del(&r->stacks, h, stack_eq, &k);
		stackdef_free(d);
		return 0;
	}
	rec_put_stack(&r->buf, d->id, d->ids, d->n, 0);
	return d->id;
}

/* ---- writing ----------------------------------------------------------------- */

/* Append the buffer to the current segment; on a failed or short write,
 * cut the file back to what it held and stop recording. */
static void flush(struct recorder *r)
{
	size_t done = 0;

	if (r->failed[0] || r->fd < 0) {
		bytebuf_clear(&r->buf);
		return;
	}
	if (r->buf.err) {
		stop(r, "out of memory");
		bytebuf_clear(&r->buf);
		return;
	}
	while (done < r->buf.len) {
		ssize_t n = write(r->fd, r->buf.data + done, r->buf.len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			int e = n < 0 ? errno : ENOSPC;

			if (ftruncate(r->fd, (off_t)r->seg_size))
				(void)0; /* the reader stops at the cut frame anyway */
			stop(r, strerror(e));
			bytebuf_clear(&r->buf);
			return;
		}
		done += (size_t)n;
	}
	r->seg_size += done;
	r->total += done;
	bytebuf_clear(&r->buf);
}

static void put_header(struct recorder *r)
{
	struct rec_header h = {
		.version = REC_VERSION,
		.session = r->session,
		.segment = r->segment,
		.rate = r->o.rate,
		.group = r->model ? model_group(r->model) : r->o.group,
		.skip_regex = r->o.skip_regex,
		.interval_s = r->o.interval_s,
		.version_str = r->o.version,
		.targets = r->o.targets,
		.max_stacks = r->o.max_stacks,
	};

	h.start_wall_s = clock_wall_s();
	rec_put_bytes(&r->buf, REC_MAGIC, REC_MAGIC_LEN);
	rec_put_header(&r->buf, &h);
}

static int open_segment(const char *path, char *err, size_t errlen)
{
	struct stat st = { 0 };
	int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);

	if (fd < 0) {
		snprintf(err, errlen, "cannot record to %.300s: %s", path,
			 errno == ELOOP ? "it is a symbolic link" : strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || ftruncate(fd, 0)) {
		snprintf(err, errlen, "cannot record to %.300s: %s", path,
			 S_ISREG(st.st_mode) ? strerror(errno) : "not a regular file");
		close(fd);
		return -1;
	}
	fcntl(fd, F_SETFL, 0); /* a regular file: blocking writes */
	/* read and write: the session server (session.h) reads the segments
	 * through duplicates of these descriptors */
	return fd;
}

/* ---- the model's observer ------------------------------------------------------ */

/* Each input as a frame: what replay gives the model again. */
static void on_input(void *ctx, const struct mt_input *in)
{
	struct recorder *r = ctx;
	__u32 id;

	switch (in->kind) {
	case MT_IN_ALLOC:
		id = stack_id(r, in->alloc->frames, in->alloc->nframes);
		if (id)
			rec_put_alloc(&r->buf, id, in->alloc, 0);
		break;
	case MT_IN_FREE:
		rec_put_free(&r->buf, in->pid, in->addr, in->ts_ns);
		break;
	case MT_IN_FACTS:
		/* the runtime's words are interned: the reader's are too */
		rec_put_facts(&r->buf, in->facts, 0);
		break;
	case MT_IN_ENDED:
		rec_put_ended(&r->buf, in->pid, in->end, in->ts_ns, 0);
		break;
	case MT_IN_DROP:
		rec_put_pid(&r->buf, REC_DROP, in->pid, 0);
		break;
	case MT_IN_DROPS:
		rec_put_drops(&r->buf, in->drops, 0);
		break;
	case MT_IN_GROUP:
		rec_put_group(&r->buf, in->group, 0);
		break;
	case MT_IN_TICK:
		rec_put_tick(&r->buf, in->ts_ns, 0);
		break;
	}
	if (r->buf.len > FLUSH_BYTES)
		flush(r);
}

void recorder_watch(struct recorder *r, struct mt_model *m)
{
	const struct mt_model_observer o = { .ctx = r, .input = on_input };

	r->model = m;
	model_set_observer(m, &o);
}

/* ---- rotation ------------------------------------------------------------------- */

static void put_carried(void *ctx, const struct mt_live_view *l)
{
	struct recorder *r = ctx;
	struct mt_sample_in in = {
		.pid = l->pid,
		.ts_ns = l->ts_ns,
		.addr = l->addr,
		.size = l->size,
		.weight_bytes = l->size ? (__u64)llround(l->weight * (double)l->size) : 0,
		.truncated = l->stack->truncated,
		.mmap = l->stack->mmap,
		.dev = l->stack->dev,
	};
	struct stack_key k = { l->stack->frames, l->stack->nframes };
	struct rec_stackdef *d;

	if (k.n > REC_MAX_FRAMES)
		k.n = REC_MAX_FRAMES;
	d = hmap_get(&r->stacks, stack_hash(k.f, k.n), stack_eq, &k);
	if (d)
		rec_put_alloc(&r->buf, d->id, &in, REC_F_KEY);
}

/* What a reader starting at the new segment needs: the dictionary, the
 * targets and all their facts, the live samples, the deaths, the drops,
 * and the interval just shown. */
static void put_opening_state(struct recorder *r, const struct mt_model *m, const struct mt_status *st)
{
	size_t i, n = model_target_count(m);

	for (i = 0; i < r->nstrings; i++)
		rec_put_string(&r->buf, r->string_v[i]->id, r->string_v[i]->s, REC_F_KEY);
	for (i = 0; i < r->nstacks; i++)
		rec_put_stack(&r->buf, r->stack_v[i]->id, r->stack_v[i]->ids, r->stack_v[i]->n,
			      REC_F_KEY);
	for (i = 0; i < n; i++) {
		struct mt_target_facts f;

		model_target_facts(model_target_at(m, i), &f);
		f.set |= MT_FACT_WATCHED;
		rec_put_facts(&r->buf, &f, REC_F_KEY);
	}
	model_live_each(m, put_carried, r);
	for (i = 0; i < n; i++) {
		const struct mt_target *t = model_target_at(m, i);

		if (!t->alive)
			rec_put_ended(&r->buf, t->pid, &t->end, t->exit_ns, REC_F_KEY);
	}
	rec_put_drops(&r->buf, model_drops(m), REC_F_KEY);
	rec_put_tick(&r->buf, model_now(m), REC_F_KEY);
	rec_put_interval(&r->buf, st, REC_F_KEY | REC_F_QUIET);
}

/* FILE.1 becomes the current segment and FILE the new one, written whole
 * under FILE.new, so that FILE is a complete recording at every moment:
 * FILE.1 is first linked to the current segment, then FILE.new renamed
 * over FILE (on a file system without hard links FILE.1 is renamed from
 * FILE, which is then missing for a moment). 0, or -1 with the cause. */
static int swap_segments(struct recorder *r, char *cause, size_t len)
{
	if (unlink(r->old_path) && errno != ENOENT) {
		snprintf(cause, len, "cannot remove FILE.1: %s", strerror(errno));
		return -1;
	}
	if (link(r->path, r->old_path) && rename(r->path, r->old_path)) {
		snprintf(cause, len, "cannot rename it to FILE.1: %s", strerror(errno));
		return -1;
	}
	if (rename(r->new_path, r->path)) {
		snprintf(cause, len, "cannot rename FILE.new to it: %s", strerror(errno));
		return -1;
	}
	return 0;
}

static void rotate(struct recorder *r, const struct mt_model *m, const struct mt_status *st)
{
	char err[512];
	int fd = open_segment(r->new_path, err, sizeof(err)), cur_fd = r->fd;
	__u64 cur_size = r->seg_size, total = r->total;

	if (fd < 0) {
		stop(r, err);
		return;
	}
	r->fd = fd;
	r->seg_size = 0;
	r->segment++;
	put_header(r);
	put_opening_state(r, m, st);
	flush(r);
	if (!r->failed[0] && swap_segments(r, err, sizeof(err)))
		stop(r, err);
	if (r->failed[0]) {
		/* FILE holds every interval before; the new segment goes */
		close(fd);
		unlink(r->new_path);
		r->fd = cur_fd;
		r->seg_size = cur_size;
		r->total = total;
		r->segment--;
		return;
	}
	if (r->old_fd >= 0)
		close(r->old_fd);
	r->old_fd = cur_fd;
	r->old_size = cur_size;
	r->total = cur_size + r->seg_size;
	r->state_size = r->seg_size;
	if (r->state_size * 2 > r->seg_max && !r->warning[0])
		snprintf(r->warning, sizeof(r->warning),
			 "the session's state (%llu KiB of names, stacks and live samples) is more "
			 "than a quarter of --record-max: the recording grows past it",
			 (unsigned long long)(r->state_size >> 10));
}

void recorder_interval(struct recorder *r, const struct mt_model *m, const struct mt_status *st,
		       bool quiet)
{
	if (r->failed[0])
		return;
	rec_put_interval(&r->buf, st, quiet ? REC_F_QUIET : 0);
	flush(r);
	/* a segment holds at least as much again as its opening state, or
	 * it would rotate at every interval */
	if (r->seg_max && r->seg_size >= r->seg_max && r->seg_size >= 2 * r->state_size &&
	    !r->failed[0])
		rotate(r, m, st);
}

/* ---- life ------------------------------------------------------------------------ */

struct recorder *recorder_open(const struct recorder_opts *o, char *err, size_t errlen)
{
	struct recorder *r = calloc(1, sizeof(*r));

	if (!r) {
		snprintf(err, errlen, "cannot record: %s", strerror(errno));
		return NULL;
	}
	r->o = *o;
	/* the caller's strings need not outlive this call */
	r->o.targets = strpool_intern(o->targets ? o->targets : "");
	r->o.version = strpool_intern(o->version ? o->version : "");
	r->o.skip_regex = strpool_intern(o->skip_regex);
	r->old_fd = -1;
	snprintf(r->path, sizeof(r->path), "%s", o->path);
	snprintf(r->old_path, sizeof(r->old_path), "%s.1", o->path);
	snprintf(r->new_path, sizeof(r->new_path), "%s.new", o->path);
	r->seg_max = o->max_bytes / 2;
	hmap_init(&r->strings);
	hmap_init(&r->stacks);
	if (getrandom(&r->session, sizeof(r->session), GRND_NONBLOCK) != sizeof(r->session))
		r->session = (__u64)time(NULL) << 20 ^ (__u64)getpid();
	r->fd = open_segment(r->path, err, errlen);
	if (r->fd < 0) {
		free(r);
		return NULL;
	}
	/* an older run's FILE.1 is not this run's past; the FILE.new of one
	 * killed inside a rotation goes too (a rotation truncates it anyway) */
	if (o->max_bytes)
		unlink(r->new_path);
	if (o->max_bytes && unlink(r->old_path) && errno != ENOENT) {
		snprintf(err, errlen, "cannot record to %.300s: cannot remove its FILE.1: %s",
			 r->path, strerror(errno));
		close(r->fd);
		free(r);
		return NULL;
	}
	put_header(r);
	flush(r);
	if (r->failed[0]) {
		snprintf(err, errlen, "%s", r->failed);
		recorder_close(r);
		return NULL;
	}
	return r;
}

const char *recorder_failed(const struct recorder *r)
{
	return r->failed[0] ? r->failed : NULL;
}

const char *recorder_warning(const struct recorder *r)
{
	return r->warning[0] ? r->warning : NULL;
}

__u64 recorder_bytes(const struct recorder *r)
{
	return r->total;
}

int recorder_dup_segment(const struct recorder *r, int which, __u32 *segment, __u64 *size)
{
	int fd = which ? r->old_fd : r->fd;

	if (fd < 0 || (which && !r->segment))
		return -1;
	*segment = which ? r->segment - 1 : r->segment;
	*size = which ? r->old_size : r->seg_size;
	return fcntl(fd, F_DUPFD_CLOEXEC, 0);
}

__u32 recorder_segment(const struct recorder *r, __u64 *size)
{
	*size = r->seg_size;
	return r->segment;
}

void recorder_close(struct recorder *r)
{
	size_t i;

	if (!r)
		return;
	if (r->model)
		model_set_observer(r->model, NULL);
	flush(r);
	if (r->fd >= 0)
		close(r->fd);
	if (r->old_fd >= 0)
		close(r->old_fd);
	for (i = 0; i < r->nstrings; i++)
		free(r->string_v[i]);
	for (i = 0; i < r->nstacks; i++)
		stackdef_free(r->stack_v[i]);
	free(r->string_v);
	free(r->stack_v);
	hmap_fini(&r->strings);
	hmap_fini(&r->stacks);
	bytebuf_fini(&r->buf);
	free(r);
}

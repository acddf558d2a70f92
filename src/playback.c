// SPDX-License-Identifier: GPL-2.0-only
/*
 * playback.c - recorded data through the live front ends (playback.h).
 *
 * The data is a record/replay.h: bytes in, the model of each interval
 * out. -b and --json print every interval the live run printed (not the
 * one before its display started), as fast as they are read. The TUI
 * plays the recording at the pace of the refresh interval (-d, + and -;
 * the recording's own by default), Space pauses, [ ] { } seek; a seek
 * back rebuilds the model from the start (exact, and fast: the model only
 * adds up its inputs). A session (memtop attach) starts at its newest
 * interval and follows it while the view stands at the end; it keeps the
 * stream's last STREAM_SEGMENTS segments, as the session keeps its files,
 * so its memory does not grow with the session's age.
 *
 * A file is read where the replay asks (replay_set_source): what --replay
 * holds is the model and a window of the file, whatever its size. Only a
 * regular file is read, to the size it had when opened: a device or a
 * FIFO (endless, or blocking) is refused in one line.
 */
#include "playback.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/signalfd.h>
#include <sys/stat.h>

#include "export/snapshots.h"
#include "record/rec_codec.h"
#include "record/recording.h"
#include "record/replay.h"
#include "ui/frontend.h"
#include "util/clock.h"
#include "util/evloop.h"
#include "util/safe_open.h"
#include "util/sanitize.h"

/* A session's stream is read this much at a time. */
#define STREAM_CHUNK (256u << 10)
/* How long a viewer waits for a session's first interval. */
#define FIRST_INTERVAL_MS 5000
/* Segments of a session's stream a viewer keeps to move back through: as
 * many as the session keeps in its files (FILE.1 and FILE). */
#define STREAM_SEGMENTS 2

/* FILE.1 then FILE as one recording, read where the replay asks
 * (replay_set_source): the replay holds a window of it, not the file. */
struct rec_files {
	int fd[2];
	__u64 size[2]; /* as each was when opened: read no further */
	int n;
};

struct playback {
	const struct mt_config *cfg;
	const char *name;
	struct replay *rp;
	const struct mt_frontend *fe;
	struct mt_fe_ctx ctx;
	struct mt_replay_pos pos;
	struct snapshots snap;
	bool fe_started;
	int fd;   /* a session's socket; -1 for a file */
	bool eof; /* the stream ended */
	int sigfd;
	struct rec_files files; /* --replay's */
	char err[512];
	int error; /* replay_step()'s, once it failed */
};

/* One "memtop: ..." line on stderr, sanitized: it may quote the file. */
static void __attribute__((format(printf, 1, 2))) say(const char *fmt, ...)
{
	char line[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	fprintf(stderr, "memtop: %s\n", sanitize_inplace(line));
}

/* ---- reading ---------------------------------------------------------------- */

static long files_read_at(void *ctx, void *buf, size_t n, __u64 off)
{
	struct rec_files *rf = ctx;
	size_t done = 0;
	int i;

	for (i = 0; i < rf->n && done < n; i++) {
		size_t want;
		ssize_t got;

		if (off >= rf->size[i]) {
			off -= rf->size[i];
			continue;
		}
		want = n - done < rf->size[i] - off ? n - done : (size_t)(rf->size[i] - off);
		do
			got = pread(rf->fd[i], (char *)buf + done, want, (off_t)off);
		while (got < 0 && errno == EINTR);
		if (got < 0)
			return -errno;
		done += (size_t)got;
		if ((size_t)got < want)
			break; /* the file shrank since: the recording ends here */
		off = 0;
	}
	return (long)done;
}

/* path for reading, only if it is a regular file (util/safe_open.h: a
 * FIFO, device or socket is never opened), and its size now. fd or
 * -errno. */
static int open_recording(const char *path, __u64 *size)
{
	struct safe_open_rules rules = { .root_fd = -1 };
	struct stat st;
	int fd = safe_open_read(path, &rules);

	if (fd < 0)
		return fd;
	if (fstat(fd, &st)) {
		int e = -errno;

		close(fd);
		return e;
	}
	*size = (__u64)st.st_size;
	return fd;
}

/* The header of the recording at path, if it starts with one. */
static bool read_header(const char *path, struct rec_header *h)
{
	unsigned char buf[8192];
	struct rec_frame f;
	struct rec_cur c;
	__u64 size;
	int fd = open_recording(path, &size);
	ssize_t n = fd >= 0 ? pread(fd, buf, sizeof(buf), 0) : -1;

	if (fd >= 0)
		close(fd);
	if (n < REC_MAGIC_LEN || rec_scan(buf, (size_t)n, &f) != REC_SCAN_SEGMENT ||
	    rec_scan(buf + REC_MAGIC_LEN, (size_t)n - REC_MAGIC_LEN, &f) != REC_SCAN_FRAME ||
	    f.type != REC_HEADER)
		return false;
	rec_cur_init(&c, &f);
	return rec_get_header(&c, h) && rec_version_known(h->version);
}

static int add_file(struct playback *pb, const char *path)
{
	struct rec_files *rf = &pb->files;
	int fd = open_recording(path, &rf->size[rf->n]);

	if (fd == -SAFE_OPEN_ENOTREG) {
		say("%s: not a regular file (a device, FIFO, socket or directory): --replay reads "
		    "a recording from a regular file only",
		    path);
		return fd;
	}
	if (fd < 0) {
		say("cannot read %s: %s", path, strerror(-fd));
		return fd;
	}
	rf->fd[rf->n++] = fd;
	return 0;
}

/* FILE, after FILE.1 when that is the segment before it (--record-max).
 * Read as they are when opened: what a writer appends later is not shown. */
static int load_file(struct playback *pb, const char *path)
{
	char older[PATH_MAX + 3];
	struct rec_header now, before;
	struct replay_source src = { .read_at = files_read_at, .ctx = &pb->files };
	int e, i;

	snprintf(older, sizeof(older), "%s.1", path);
	if (read_header(path, &now) && read_header(older, &before) &&
	    before.session == now.session && before.segment + 1 == now.segment) {
		e = add_file(pb, older);
		if (e)
			return e;
	}
	e = add_file(pb, path);
	if (e)
		return e;
	for (i = 0; i < pb->files.n; i++)
		src.size += pb->files.size[i];
	return replay_set_source(pb->rp, &src);
}

/* Forget the stream's segments past STREAM_SEGMENTS. 1 when the model
 * stood in them and moved on past them. */
static int trim_stream(struct playback *pb)
{
	int e = replay_trim(pb->rp, STREAM_SEGMENTS, pb->err, sizeof(pb->err));

	if (e < 0)
		pb->error = e;
	return e == 1;
}

/* What a session sent since. 0, 1 when trimming it moved the model on
 * (trim_stream), or -EPIPE once the session closed the stream. */
static int read_stream(struct playback *pb)
{
	static unsigned char buf[STREAM_CHUNK];
	int e = 0;

	for (;;) {
		ssize_t n = read(pb->fd, buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (n <= 0) {
			pb->eof = true;
			e = -EPIPE;
			break;
		}
		/* past a bad frame nothing more is shown: what follows is
		 * not kept either */
		if (!pb->error && replay_append(pb->rp, buf, (size_t)n))
			return -ENOMEM;
	}
	return trim_stream(pb) && !e ? 1 : e;
}

/* ---- moving ------------------------------------------------------------------ */

/* One interval on, when the bytes hold it. 1, 0 (not yet) or -errno. */
static int step(struct playback *pb)
{
	int e;

	if (pb->error)
		return pb->error;
	e = replay_step(pb->rp, pb->err, sizeof(pb->err));
	if (e < 0)
		pb->error = e;
	return e;
}

static void update_pos(struct playback *pb)
{
	pb->pos.at = replay_at(pb->rp);
	pb->pos.first = replay_first(pb->rp);
	pb->pos.count = replay_count(pb->rp);
	if (pb->error && pb->pos.count > pb->pos.at + 1)
		pb->pos.count = pb->pos.at + 1; /* nothing past the bad frame */
	pb->ctx.model = replay_model(pb->rp);
}

/* The model at interval k. */
static int seek(struct playback *pb, long k)
{
	int e = 0;

	if (k < replay_at(pb->rp)) {
		pb->error = 0;
		e = replay_rewind(pb->rp, k, pb->err, sizeof(pb->err));
		if (e < 0)
			pb->error = e;
	}
	while (!e && replay_at(pb->rp) < k && (e = step(pb)) == 1)
		e = 0;
	update_pos(pb);
	return e < 0 ? e : 0;
}

/* ---- the display ------------------------------------------------------------- */

static int show(struct playback *pb, bool moved)
{
	int act;

	update_pos(pb);
	pb->ctx.refresh = moved;
	act = pb->fe->tick(&pb->ctx);
	pb->ctx.refresh = false;
	return act;
}

static int start_display(struct playback *pb)
{
	int e;

	pb->ctx.model = replay_model(pb->rp);
	pb->ctx.cfg = pb->cfg;
	pb->ctx.status = replay_status(pb->rp);
	pb->ctx.status->replay = &pb->pos;
	pb->ctx.interval_s = pb->cfg->given & MT_GIVEN_DELAY ? pb->cfg->interval_s
							     : replay_info(pb->rp)->interval_s;
	if (!(pb->ctx.interval_s >= 0.05 && pb->ctx.interval_s <= 3600))
		pb->ctx.interval_s = 1.0;
	update_pos(pb);
	e = pb->fe->start(&pb->ctx);
	if (e) {
		const char *m = pb->ctx.status->message;

		if (m[0])
			say("%s", m);
		else
			say("cannot start the %s display: %s", pb->fe->name, strerror(-e));
		return e;
	}
	pb->fe_started = true;
	return 0;
}

/* The model stands at an interval recorded before the live display
 * started: is one the live run showed in the file? 1 (the model back where
 * it was), 0 when the file ends first (nothing to replay), or -errno. */
static int shown_interval_follows(struct playback *pb)
{
	long first = replay_at(pb->rp);
	int e;

	while ((e = step(pb)) == 1 && replay_quiet(pb->rp))
		;
	if (e == 1)
		e = seek(pb, first) ? pb->error : 1;
	return e;
}

/* The first interval, so that every view has a model to show. */
static int first_interval(struct playback *pb)
{
	__u64 deadline = clock_mono_ns() + FIRST_INTERVAL_MS * 1000000ULL;
	int e;

	while ((e = step(pb)) == 0 && pb->fd >= 0 && !pb->eof) {
		struct pollfd p = { .fd = pb->fd, .events = POLLIN };
		__u64 now = clock_mono_ns();

		if (now >= deadline)
			break;
		if (poll(&p, 1, (int)((deadline - now) / 1000000) + 1) > 0)
			read_stream(pb);
	}
	if (e == 1 && pb->fd < 0 && replay_quiet(pb->rp))
		e = shown_interval_follows(pb);
	if (e == 1)
		return 0;
	if (e < 0)
		say("%s: %s", pb->name, pb->err);
	else if (pb->fd < 0 && replay_at(pb->rp) >= 0)
		say("%s: no complete interval in it: it ends before the first interval the live run "
		    "showed (memtop was stopped, or the disk filled, while it attached)",
		    pb->name);
	else if (pb->fd >= 0)
		say("%s: %s", pb->name,
		    pb->eof ? "the session closed the connection (a viewer of "
			      "someone else's session, or too many viewers?)"
			    : "no interval from the session within 5 s");
	else
		say("%s: %s", pb->name,
		    replay_count(pb->rp) || replay_tail_bytes(pb->rp) || replay_model(pb->rp)
			    ? "no complete interval in it"
			    : "empty: not a memtop recording");
	return -EINVAL;
}

/* -b, --json: each interval the live run printed, then the exports. */
static int run_batch(struct playback *pb)
{
	long shown = 0;
	int e = 1, act = 0;

	for (; e == 1; e = step(pb)) {
		if (replay_quiet(pb->rp))
			continue;
		act = show(pb, false);
		shown++;
		if ((pb->cfg->count > 0 && shown >= pb->cfg->count) || (act & MT_FE_QUIT))
			return 0;
	}
	return e;
}

/* The live view's loop (util/evloop.h): the signals, a session's stream,
 * the keys; a timer steps the play, and one wakes a file's replay every
 * second while it does not play. */
struct play_run {
	struct playback *pb;
	struct evloop loop;
	bool following; /* a session's newest interval on screen: new ones come from it */
	__u64 next;     /* the next step while playing a file */
	int f_stream, t_step, t_wake;
};

static __u64 interval_ns(const struct playback *pb)
{
	return (__u64)(pb->ctx.interval_s * 1e9);
}

/* What the display asked for, or a show() returned. */
static void play_act(struct play_run *r, int act)
{
	struct playback *pb = r->pb;

	if (act & MT_FE_QUIT) {
		evloop_stop(&r->loop, 0);
		return;
	}
	if (act & MT_FE_SEEK) {
		seek(pb, pb->ctx.seek);
		r->following = pb->fd >= 0 && replay_at(pb->rp) + 1 >= replay_count(pb->rp);
		if (show(pb, true) & MT_FE_QUIT)
			evloop_stop(&r->loop, 0);
		r->next = clock_mono_ns() + interval_ns(pb);
	}
	if (act & MT_FE_INTERVAL)
		r->next = clock_mono_ns() + interval_ns(pb);
}

static void on_play_signal(struct evloop *l, void *ctx, short revents)
{
	(void)ctx;
	(void)revents;
	evloop_stop(l, 0);
}

static void on_play_stream(struct evloop *l, void *ctx, short revents)
{
	struct play_run *r = ctx;
	struct playback *pb = r->pb;
	bool moved = read_stream(pb) == 1;
	int act = 0;

	(void)l;
	(void)revents;
	if (r->following && !pb->ctx.paused && seek(pb, LONG_MAX) == 0)
		act |= show(pb, true);
	else if (moved)
		act |= show(pb, true); /* it moved past what was forgotten */
	else
		update_pos(pb);
	if (pb->eof) {
		pb->pos.ended = true;
		snprintf(pb->ctx.status->message, sizeof(pb->ctx.status->message),
			 "the session closed the connection: it ended (or this viewer was "
			 "too slow); what it sent stays on screen");
		act |= show(pb, false);
	}
	play_act(r, act);
}

static void on_play_input(struct evloop *l, void *ctx, short revents)
{
	struct play_run *r = ctx;

	(void)l;
	(void)revents;
	play_act(r, r->pb->fe->input(&r->pb->ctx));
}

static void on_play_step(struct evloop *l, void *ctx, __u64 now)
{
	struct play_run *r = ctx;
	struct playback *pb = r->pb;
	int act = 0;

	(void)l;
	(void)now;
	if (!pb->pos.playing || r->following)
		return;
	if (step(pb) == 1)
		act |= show(pb, true);
	r->next = clock_mono_ns() + interval_ns(pb);
	play_act(r, act);
}

static void play_before_wait(struct evloop *l, void *ctx, __u64 now)
{
	struct play_run *r = ctx;
	struct playback *pb = r->pb;
	bool at_end = replay_at(pb->rp) + 1 >= replay_count(pb->rp), stepping;

	pb->pos.playing = !pb->ctx.paused && !at_end;
	/* following, new intervals come from the stream: no timer (a
	 * timeout of 0 here once spun the viewer on a core) */
	stepping = pb->pos.playing && !r->following;
	evloop_fd_set(l, r->f_stream, pb->eof ? -1 : pb->fd);
	evloop_timer_at(l, r->t_step, stepping ? r->next : EVLOOP_NEVER);
	evloop_timer_at(l, r->t_wake,
			!stepping && !pb->eof && pb->fd < 0 ? now + 1000000000ULL : EVLOOP_NEVER);
}

/* The TUI: play, pause, seek; follow a session while at its end. */
static int run_tui(struct playback *pb)
{
	struct play_run r = { .pb = pb, .following = pb->fd >= 0, .next = clock_mono_ns() };
	struct evloop *l = &r.loop;
	int act = show(pb, true);

	if (r.following) {
		seek(pb, LONG_MAX); /* the newest interval the stream holds */
		act |= show(pb, true);
	}
	if (act & MT_FE_QUIT)
		return 0;
	pb->pos.playing = true;
	evloop_init(l, NULL);
	evloop_add_fd(l, pb->sigfd, on_play_signal, &r);
	r.f_stream = evloop_add_fd(l, pb->fd, on_play_stream, &r);
	evloop_add_fd(l, pb->fe->input_fd(&pb->ctx), on_play_input, &r);
	r.t_step = evloop_add_timer(l, on_play_step, &r);
	r.t_wake = evloop_add_timer(l, NULL, NULL);
	evloop_hooks(l, play_before_wait, NULL, &r);
	return evloop_run(l);
}

static int block_signals(struct playback *pb)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGQUIT);
	sigaddset(&set, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &set, NULL))
		return -errno;
	pb->sigfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	return pb->sigfd < 0 ? -errno : 0;
}

/* After the data: say how it ended. 0, or 1 for a corrupt recording. */
static int verdict(struct playback *pb)
{
	replay_count(pb->rp);
	if (pb->error) {
		say("%s: %s; the intervals before it were shown", pb->name, pb->err);
		return 1;
	}
	if (pb->fd < 0 && replay_tail_bytes(pb->rp) && replay_at(pb->rp) + 1 >= replay_count(pb->rp))
		say("%s ends inside a frame (memtop was stopped while writing it, or the disk was "
		    "full): shown up to its last complete interval",
		    pb->name);
	return 0;
}

static int run(struct playback *pb)
{
	char err[512];
	int e, code = 1;

	signal(SIGPIPE, SIG_IGN);
	if (pb->fe->check && pb->fe->check(pb->cfg, err, sizeof(err))) {
		say("%s", err);
		return 1;
	}
	if (snapshots_init(&pb->snap, pb->cfg, err, sizeof(err))) {
		say("%s", err);
		return 1;
	}
	if (block_signals(pb) || first_interval(pb) || start_display(pb))
		goto out;
	e = pb->fe->input_fd ? run_tui(pb) : run_batch(pb);
	pb->fe->stop(&pb->ctx);
	pb->fe_started = false;
	code = e < 0 && e != pb->error ? 1 : verdict(pb);
	if (snapshots_finish(&pb->snap, replay_model(pb->rp), err, sizeof(err))) {
		say("%s", err);
		code = 1;
	}
out:
	if (pb->fe_started)
		pb->fe->stop(&pb->ctx);
	snapshots_fini(&pb->snap);
	if (pb->sigfd >= 0)
		close(pb->sigfd);
	return code;
}

static const struct mt_frontend *frontend_for(const struct mt_config *cfg)
{
	if (cfg->json)
		return &frontend_json;
	if (cfg->batch)
		return &frontend_text;
	return &frontend_tui;
}

int playback_file(const struct mt_config *cfg)
{
	struct playback pb = { .cfg = cfg, .name = cfg->replay, .fd = -1, .sigfd = -1 };
	int code;

	pb.fe = frontend_for(cfg);
	pb.rp = replay_new();
	if (!pb.rp) {
		say("out of memory");
		return 1;
	}
	code = load_file(&pb, cfg->replay) ? 1 : run(&pb);
	replay_free(pb.rp);
	while (pb.files.n)
		close(pb.files.fd[--pb.files.n]);
	return code;
}

int playback_stream(const struct mt_config *cfg, int fd, const char *name)
{
	struct playback pb = { .cfg = cfg, .name = name, .fd = fd, .sigfd = -1 };
	int code;

	pb.fe = &frontend_tui;
	pb.pos.live = true;
	pb.pos.source = name;
	pb.rp = replay_new();
	if (!pb.rp) {
		say("out of memory");
		return 1;
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	read_stream(&pb);
	code = run(&pb);
	replay_free(pb.rp);
	return code;
}

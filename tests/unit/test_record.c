// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_record.c - the recording, written by record/recorder.c from a model
 * fed by hand and read back by record/replay.c: the replayed model equals
 * the live one at every interval (sites, targets, status), a file cut at
 * any byte replays up to its last complete interval and says how much
 * was cut, a flipped byte ends the replay with an error at that frame,
 * frames with ids or counts that do not make sense are refused, and with
 * --record-max the two segments stay within the bound and FILE.1 + FILE
 * replays on from the rotated state; a session's endless stream, trimmed
 * to its last segments as a viewer keeps it, holds bounded bytes, numbers
 * its intervals as the whole stream does, and rewinds to its oldest kept.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "record/recorder.h"
#include "record/rec_codec.h"
#include "record/recording.h"
#include "record/replay.h"
#include "ui/frontend.h"
#include "util/strpool.h"
#include "target_fixture.h"
#include "frame_fixture.h"

#define RATE 4096
#define NS 1000000000ULL

static char dir[] = "/tmp/test_record.XXXXXX";

static struct mt_model *new_model(void)
{
	struct mt_model_opts o = { .rate = RATE, .group = MT_GROUP_FUNCTION };
	struct mt_model *m = model_new(&o);

	assert_non_null(m);
	return m;
}

static struct recorder *open_rec(const char *name, __u64 max, char *path)
{
	struct recorder_opts o = { .path = path,
				   .max_bytes = max,
				   .targets = "-p 7",
				   .interval_s = 1,
				   .rate = RATE,
				   .version = "test" };
	char err[512];
	struct recorder *r;

	snprintf(path, PATH_MAX, "%s/%s", dir, name);
	r = recorder_open(&o, err, sizeof(err));
	if (!r)
		fail_msg("%s", err);
	return r;
}

/* Interval k of a leaking process 7 and a churning 8: every input kind. */
static void feed_at(struct mt_model *m, struct mt_status *st, int k, int tick)
{
	struct mt_frame leak[2] = { frame("malloc", 1), frame("leak_here", 100) };
	struct mt_frame churn[2] = { frame("malloc", 1), frame("churn", 200 + k % 3) };
	struct mt_sample_in in = {
		.ts_ns = tick * NS + 1, .size = 1000 + k, .frames = leak, .nframes = 2
	};
	struct mt_target_facts f = {
		.pid = 7,
		.set = MT_FACT_COMM | MT_FACT_HOW | MT_FACT_RSS | MT_FACT_COUNTERS |
		       MT_FACT_SLOWDOWN | MT_FACT_PHASE | MT_FACT_FILE_LIM | MT_FACT_INGEST,
		.comm = "leaker",
		.allocator = "glibc",
		.mechanism = "in-process",
	};
	struct mt_drops lost = { .events_lost = k, .pending_full = 2 * k };
	int i;

	if (k == 0) {
		model_apply(m, MT_INPUT_WATCHED(7));
		model_apply(m, MT_INPUT_WATCHED(8));
	}
	for (i = 0; i < 20; i++) {
		in.pid = 7;
		in.addr = 0x1000 + tick * 100 + i;
		in.frames = leak;
		model_apply(m, MT_INPUT_ALLOC(&in));
		in.pid = 8;
		in.addr = 0x9000 + i;
		in.frames = churn;
		in.truncated = i & 1;
		model_apply(m, MT_INPUT_ALLOC(&in));
		if (i % 2)
			model_apply(m, MT_INPUT_FREE(8, 0x9000 + i, in.ts_ns + 5));
	}
	model_apply(m, MT_INPUT_FREE(8, 0xdead, in.ts_ns)); /* unknown */
	if (k == 4)
		model_apply(m, MT_INPUT_DROP(8));
	if (tick >= 10) /* a long run leaks only so much */
		for (i = 0; i < 20; i++)
			model_apply(m, MT_INPUT_FREE(7, 0x1000 + (tick - 10) * 100 + i, in.ts_ns));
	if (k == 6 && k == tick) {
		struct mt_target_end e = { .kind = MT_END_SIGNAL, .signal = 9, .at_wall_s = 1e9 };

		model_apply(m, MT_INPUT_ENDED(8, &e, tick * NS + 500));
	}
	if (k == 7 && k == tick)
		model_apply(m, MT_INPUT_GROUP(MT_GROUP_LINE));
	f.rss_bytes = 1000000 + k * 4096;
	f.counters.alloc_calls = 100 * (k + 1);
	f.counters.alloc_bytes = 100000 * (k + 1);
	f.slowdown_pct = k * 0.5;
	/* not measured in the first interval, unbounded above in the third */
	f.slowdown_measured = k > 0;
	f.slowdown_low_pct = k * 0.25;
	f.slowdown_high_pct = k == 2 ? INFINITY : k * 0.75;
	f.phase_seen = k % 2 ? 0.5 : 1;
	/* limits hit, more of them as it goes */
	f.files_refused = k;
	f.maps_cut = k / 2;
	f.names_refused = 3 * k;
	model_apply(m, MT_INPUT_FACTS(&f));
	model_apply(m, MT_INPUT_DROPS(&lost));
	st->est_slowdown_pct = f.slowdown_pct;
	st->est_slowdown_measured = f.slowdown_measured;
	st->est_slowdown_low_pct = f.slowdown_low_pct;
	st->est_slowdown_high_pct = f.slowdown_high_pct;
	model_apply(m, MT_INPUT_TICK((tick + 1) * NS));
	st->wall_s = 1.7e9 + tick;
	st->events_per_s = 40 + k;
	st->probe_mode = "session";
	snprintf(st->message, sizeof(st->message), "interval %d", k);
}

static void feed(struct mt_model *m, struct mt_status *st, int k)
{
	feed_at(m, st, k, k);
}

/* The JSON line -b --json prints of m with st (a malloc'd string). */
static char *json_of(struct mt_model *m, struct mt_status *st)
{
	struct mt_config cfg = { .top = 50 };
	struct mt_fe_ctx ctx = { .model = m, .cfg = &cfg, .status = st, .interval_s = 1 };
	char *text;
	size_t len;
	FILE *f = tmpfile();
	int saved = dup(STDOUT_FILENO);

	assert_non_null(f);
	assert_true(saved >= 0);
	fflush(stdout);
	assert_true(dup2(fileno(f), STDOUT_FILENO) >= 0);
	frontend_json.tick(&ctx);
	fflush(stdout);
	assert_true(dup2(saved, STDOUT_FILENO) >= 0);
	close(saved);
	len = (size_t)ftell(f);
	text = calloc(1, len + 1);
	assert_non_null(text);
	rewind(f);
	assert_int_equal(fread(text, 1, len, f), len);
	fclose(f);
	return text;
}

/* The two models print the same JSON line (with the same status). */
static void assert_same_json(struct mt_model *a, struct mt_model *b, struct mt_status *st)
{
	char *x = json_of(a, st), *y = json_of(b, st);

	assert_string_equal(x, y);
	free(x);
	free(y);
}

/* The figures a view shows, compared between the live and the replayed
 * model (the views print them rounded; these must be exactly equal),
 * and the JSON both print. */
static void assert_same(struct mt_model *a, struct mt_model *b)
{
	struct mt_status st = { .wall_s = 1.7e9, .probe_mode = "session" };
	size_t i;

	assert_int_equal(model_site_count(a), model_site_count(b));
	assert_int_equal(model_target_count(a), model_target_count(b));
	assert_int_equal(model_group(a), model_group(b));
	for (i = 0; i < model_site_count(a); i++) {
		struct mt_site *x = model_site_at(a, i), *y = model_site_at(b, i);

		assert_string_equal(x->frame->function, y->frame->function);
		assert_true(x->inuse_bytes == y->inuse_bytes);
		assert_true(x->alloc_bytes == y->alloc_bytes);
		assert_true(x->stats.leak_score == y->stats.leak_score);
		assert_true(x->stats.long_fit.slope == y->stats.long_fit.slope);
		assert_int_equal(x->samples, y->samples);
		assert_int_equal(x->ended_ns, y->ended_ns);
	}
	for (i = 0; i < model_target_count(a); i++) {
		const struct mt_target *x = model_target_at(a, i), *y = model_target_at(b, i);

		assert_int_equal(x->pid, y->pid);
		assert_string_equal(x->comm, y->comm);
		assert_int_equal(x->alive, y->alive);
		assert_int_equal(x->rss_bytes, y->rss_bytes);
		assert_true(x->inuse_bytes == y->inuse_bytes);
		assert_true(x->alloc_calls_per_s == y->alloc_calls_per_s);
		assert_int_equal(x->end.kind, y->end.kind);
	}
	assert_memory_equal(model_drops(a), model_drops(b), sizeof(struct mt_drops));
	assert_same_json(a, b, &st);
}

static unsigned char *slurp(const char *path, size_t *len)
{
	struct stat st;
	unsigned char *d;
	int fd = open(path, O_RDONLY);

	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	d = malloc(st.st_size + 1);
	assert_non_null(d);
	assert_int_equal(read(fd, d, st.st_size), st.st_size);
	close(fd);
	*len = (size_t)st.st_size;
	return d;
}

#define INTERVALS 10

/* Live models kept at every interval, to compare with the replay. */
static struct mt_model *record_run(const char *name, __u64 max, char *path)
{
	struct recorder *r = open_rec(name, max, path);
	struct mt_model *m = new_model();
	struct mt_status st = { 0 };
	int k;

	recorder_watch(r, m);
	for (k = 0; k < INTERVALS; k++) {
		feed(m, &st, k);
		recorder_interval(r, m, &st, k == 0);
	}
	assert_null(recorder_failed(r));
	recorder_close(r);
	return m;
}

static void test_replay_equals_live(void **state)
{
	char path[PATH_MAX], err[256];
	struct recorder *r = open_rec("eq.mtr", 0, path);
	struct mt_model *m = new_model();
	struct mt_status st = { 0 };
	struct replay *rp = replay_new();
	unsigned char *d;
	size_t done = 0;
	int k;

	recorder_watch(r, m);
	for (k = 0; k < INTERVALS; k++) {
		size_t now;

		feed(m, &st, k);
		recorder_interval(r, m, &st, k == 0);
		/* what the file holds now replays to this very model */
		d = slurp(path, &now);
		assert_int_equal(replay_append(rp, d + done, now - done), 0);
		done = now;
		free(d);
		assert_int_equal(replay_step(rp, err, sizeof(err)), 1);
		assert_int_equal(replay_at(rp), k);
		assert_int_equal(replay_quiet(rp), k == 0);
		assert_same(m, replay_model(rp));
		assert_string_equal(replay_status(rp)->message, st.message);
		assert_true(replay_status(rp)->wall_s == st.wall_s);
		assert_string_equal(replay_status(rp)->probe_mode, "session");
		/* the slowdown's measure and the share the phases saw, too */
		assert_true(replay_status(rp)->est_slowdown_measured == st.est_slowdown_measured);
		assert_true(replay_status(rp)->est_slowdown_low_pct == st.est_slowdown_low_pct);
		assert_true(replay_status(rp)->est_slowdown_high_pct == st.est_slowdown_high_pct);
		{
			const struct mt_target *lt = model_target(m, 7);
			const struct mt_target *rt = model_target(replay_model(rp), 7);

			assert_non_null(rt);
			assert_true(rt->slowdown_measured == lt->slowdown_measured);
			assert_true(rt->slowdown_high_pct == lt->slowdown_high_pct);
			assert_true(rt->phase_seen == lt->phase_seen);
		}
		assert_int_equal(replay_step(rp, err, sizeof(err)), 0); /* no more yet */
	}
	assert_int_equal(replay_count(rp), INTERVALS);
	assert_int_equal(replay_tail_bytes(rp), 0);
	assert_string_equal(replay_info(rp)->targets, "-p 7");
	/* back in time and forward again: the same models */
	assert_int_equal(replay_rewind(rp, 3, err, sizeof(err)), 0);
	assert_int_equal(replay_at(rp), 3);
	assert_int_equal(replay_rewind(rp, 0, err, sizeof(err)), 0);
	while (replay_step(rp, err, sizeof(err)) == 1)
		;
	assert_int_equal(replay_at(rp), INTERVALS - 1);
	assert_same(m, replay_model(rp));
	replay_free(rp);
	recorder_close(r);
	model_free(m);
}

/* Cut at every byte: never an error, never a crash, and exactly the
 * complete intervals before the cut. */
static void test_cut_anywhere(void **state)
{
	char path[PATH_MAX], err[256];
	struct mt_model *m = record_run("cut.mtr", 0, path);
	size_t len, n;
	unsigned char *d = slurp(path, &len);
	long last = -2;

	for (n = 0; n <= len; n = n < len && n + 1 + n / 64 > len ? len : n + 1 + n / 64) {
		struct replay *rp = replay_new();
		long full;
		int e;

		assert_int_equal(replay_append(rp, d, n), 0);
		full = replay_count(rp);
		while ((e = replay_step(rp, err, sizeof(err))) == 1)
			;
		assert_int_equal(e, 0);
		assert_int_equal(replay_at(rp), full - 1);
		assert_true(replay_at(rp) >= last);
		last = replay_at(rp);
		if (n == len)
			assert_int_equal(replay_tail_bytes(rp), 0);
		replay_free(rp);
	}
	assert_int_equal(last, INTERVALS - 1);
	free(d);
	model_free(m);
}

/* A flipped byte: the replay stops with an error at that frame, and the
 * intervals before it are there. */
static void test_flipped_byte(void **state)
{
	char path[PATH_MAX], err[256];
	struct mt_model *m = record_run("flip.mtr", 0, path);
	size_t len, at;
	unsigned char *d = slurp(path, &len);

	for (at = 0; at < len; at += 97) {
		struct replay *rp = replay_new();
		int e;

		d[at] ^= 0x20;
		assert_int_equal(replay_append(rp, d, len), 0);
		while ((e = replay_step(rp, err, sizeof(err))) == 1)
			;
		d[at] ^= 0x20;
		/* a bad length cannot be told from a cut tail: then it is one */
		replay_count(rp);
		assert_true(e < 0 || replay_tail_bytes(rp) > 0);
		if (e < 0)
			assert_non_null(strstr(err, "at byte"));
		assert_true(replay_at(rp) < INTERVALS - 1 || at >= len - 400);
		replay_free(rp);
	}
	free(d);
	model_free(m);
}

/* A recording in memory, read through replay_set_source() as a file is:
 * every read counted, and never past the bytes. */
struct mem_source {
	const unsigned char *d;
	size_t len;
	size_t reads, max_read;
};

static long mem_read_at(void *ctx, void *buf, size_t n, __u64 off)
{
	struct mem_source *ms = ctx;

	ms->reads++;
	if (n > ms->max_read)
		ms->max_read = n;
	if (off >= ms->len)
		return 0;
	if (n > ms->len - off)
		n = ms->len - off;
	memcpy(buf, ms->d + off, n);
	return (long)n;
}

static struct replay *replay_of_source(struct mem_source *ms, size_t window)
{
	struct replay_source src = {
		.read_at = mem_read_at, .ctx = ms, .size = ms->len, .window = window
	};
	struct replay *rp = replay_new();

	assert_non_null(rp);
	assert_int_equal(replay_set_source(rp, &src), 0);
	assert_int_equal(replay_append(rp, "x", 1), -EINVAL); /* one or the other */
	return rp;
}

/* The largest frame in d (what a window must hold at least). */
static size_t largest_frame(const unsigned char *d, size_t len)
{
	size_t at = 0, big = 0;
	struct rec_frame f;

	while (at < len && rec_scan(d + at, len - at, &f) <= REC_SCAN_SEGMENT) {
		big = f.size > big ? f.size : big;
		at += f.size;
	}
	return big;
}

/* Read through a source as --replay reads a file: the same models at every
 * interval, the same count, cut tail and error as the bytes appended,
 * holding a window (or the largest frame) of the bytes, never all of them;
 * a rewind reads from the start again. Windows smaller than every frame,
 * than some and than the file. */
static void test_replay_through_a_source(void **state)
{
	static const size_t windows[] = { 1, 64, 1000, 0 };
	char path[PATH_MAX], err[256], err2[256];
	struct mt_model *m = record_run("src.mtr", 0, path);
	size_t len, i, big;
	unsigned char *d = slurp(path, &len);

	big = largest_frame(d, len);
	assert_true(big > 64 && big < len / 4);
	for (i = 0; i < sizeof(windows) / sizeof(windows[0]); i++) {
		struct mem_source ms = { .d = d, .len = len };
		struct replay *rp = replay_of_source(&ms, windows[i]);
		struct replay *ref = replay_new();
		size_t w = windows[i] ? windows[i] : REPLAY_WINDOW;
		size_t bound = w > big ? w : big;
		int e;

		replay_append(ref, d, len);
		assert_int_equal(replay_count(rp), INTERVALS);
		assert_int_equal(replay_tail_bytes(rp), 0);
		while ((e = replay_step(rp, err, sizeof(err))) == 1) {
			assert_int_equal(replay_step(ref, err2, sizeof(err2)), 1);
			assert_int_equal(replay_at(rp), replay_at(ref));
			assert_same(replay_model(ref), replay_model(rp));
			assert_true(replay_bytes_held(rp) <= bound);
			assert_true(ms.max_read <= bound);
		}
		assert_int_equal(e, 0);
		assert_int_equal(replay_at(rp), INTERVALS - 1);
		assert_same(m, replay_model(rp));
		if (windows[i] && windows[i] < len)
			assert_true(replay_bytes_held(rp) < len);
		assert_int_equal(replay_rewind(rp, 2, err, sizeof(err)), 0);
		assert_int_equal(replay_at(rp), 2);
		while (replay_step(rp, err, sizeof(err)) == 1)
			;
		assert_same(m, replay_model(rp));
		replay_free(rp);
		replay_free(ref);
	}
	/* cut inside the last frame, and a flipped byte: as appended */
	for (i = 0; i < 2; i++) {
		struct mem_source ms = { .d = d, .len = i ? len : len - 5 };
		struct replay *rp = replay_of_source(&ms, 64);
		struct replay *ref = replay_new();
		int e, e2;

		if (i)
			d[len / 2] ^= 0x20;
		replay_append(ref, d, ms.len);
		while ((e = replay_step(rp, err, sizeof(err))) == 1)
			;
		while ((e2 = replay_step(ref, err2, sizeof(err2))) == 1)
			;
		assert_int_equal(e, e2);
		assert_int_equal(replay_at(rp), replay_at(ref));
		assert_int_equal(replay_count(rp), replay_count(ref));
		assert_int_equal(replay_tail_bytes(rp), replay_tail_bytes(ref));
		if (e)
			assert_string_equal(err, err2);
		if (i)
			d[len / 2] ^= 0x20;
		replay_free(rp);
		replay_free(ref);
	}
	free(d);
	model_free(m);
}

/* A header whose --skip pattern util/pattern.c refuses: one error, the
 * reason in it, before anything is applied; one it accepts (the audit's
 * 26 '+', which glibc could not compile in 24 GB) replays. */
static void test_header_pattern_bounded(void **state)
{
	char big[300], plus[28], err[256];
	const char *skip[] = { big, "(a)\\1", plus };
	struct rec_header h = { .version = REC_VERSION, .rate = RATE };
	struct mt_status st = { 0 };
	struct mt_model *m = new_model();
	size_t i;

	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	plus[0] = 'a';
	memset(plus + 1, '+', 26);
	plus[27] = '\0';
	for (i = 0; i < 3; i++) {
		struct bytebuf b = { 0 };
		struct replay *rp = replay_new();
		int e;

		h.skip_regex = skip[i];
		rec_put_bytes(&b, REC_MAGIC, REC_MAGIC_LEN);
		rec_put_header(&b, &h);
		rec_put_tick(&b, NS, 0);
		rec_put_interval(&b, &st, 0);
		replay_append(rp, b.data, b.len);
		e = replay_step(rp, err, sizeof(err));
		if (i < 2) {
			assert_int_equal(e, -EINVAL);
			assert_non_null(strstr(err, "at byte 8: its --skip pattern"));
			assert_non_null(strstr(err, i ? "\\1 is not supported" : "longer than 256"));
			assert_null(replay_model(rp));
		} else {
			assert_int_equal(e, 1);
		}
		replay_free(rp);
		bytebuf_fini(&b);
	}
	model_free(m);
}

/* Every fact of the table (rec_codec.h) set to a value of its own in a
 * report the live model takes comes back from the replay as it was:
 * limits hit, a Go target's rate, a JVM's agent, how it is watched, all
 * of them; and both models print the same JSON. */
static void test_facts_round_trip(void **state)
{
	char path[PATH_MAX], err[256];
	struct recorder *r = open_rec("facts.mtr", 0, path);
	struct mt_status st = { .wall_s = 1.7e9 };
	struct mt_model *m = new_model();
	struct mt_target_facts f = { .pid = 7, .set = MT_FACT_WATCHED }, got, want;
	const struct rec_fact *facts;
	struct replay *rp = replay_new();
	char names[REC_MAX_FACTS][24];
	unsigned char *d;
	size_t i, n, len;

	(void)state;
	facts = rec_facts(&n);
	assert_true(n > 20);
	for (i = 0; i < n; i++) {
		char *at = (char *)&f + facts[i].offset;
		__u64 u = facts[i].size == 1 ? 1 : facts[i].id * 1000003ULL + 7;
		double v = facts[i].id + 0.25;

		f.set |= facts[i].group;
		snprintf(names[i], sizeof(names[i]), "fact %u", facts[i].id);
		if (facts[i].kind == REC_FACT_STR)
			snprintf(at, facts[i].size, "%s", names[i]);
		else if (facts[i].kind == REC_FACT_INTERNED)
			*(const char **)at = strpool_intern(names[i]);
		else if (facts[i].kind == REC_FACT_INT)
			memcpy(at, &u, facts[i].size);
		else
			memcpy(at, &v, sizeof(v));
	}
	f.slowdown_high_pct = f.slowdown_low_pct + 1; /* a range that holds */
	f.phase_seen = 0.5;
	f.rates_off_share = 0.25; /* a share */
	recorder_watch(r, m);
	assert_int_equal(model_apply(m, MT_INPUT_FACTS(&f)), 0);
	model_apply(m, MT_INPUT_TICK(NS));
	recorder_interval(r, m, &st, false);
	assert_null(recorder_failed(r));
	d = slurp(path, &len);
	assert_int_equal(replay_append(rp, d, len), 0);
	free(d);
	assert_int_equal(replay_step(rp, err, sizeof(err)), 1);
	assert_non_null(model_target(replay_model(rp), 7));
	model_target_facts(model_target(m, 7), &want);
	model_target_facts(model_target(replay_model(rp), 7), &got);
	for (i = 0; i < n; i++) {
		const char *a = (const char *)&want + facts[i].offset;
		const char *z = (const char *)&got + facts[i].offset;

		if (facts[i].kind == REC_FACT_STR && strcmp(a, z))
			fail_msg("%s: %s replayed as %s", facts[i].name, a, z);
		else if (facts[i].kind == REC_FACT_INTERNED &&
			 strcmp(*(const char *const *)a, *(const char *const *)z ?: "(null)"))
			fail_msg("%s: replayed as %s", facts[i].name, *(const char *const *)z);
		else if (facts[i].kind >= REC_FACT_INT && memcmp(a, z, facts[i].size))
			fail_msg("%s: replayed otherwise", facts[i].name);
	}
	assert_same_json(m, replay_model(rp), &st);
	replay_free(rp);
	recorder_close(r);
	model_free(m);
}

/* A well-formed frame that does not make sense is refused, not applied. */
static void test_bad_references(void **state)
{
	struct bytebuf b = { 0 };
	struct rec_header h = { .version = REC_VERSION, .rate = RATE };
	struct mt_sample_in in = { .pid = 1, .size = 8 };
	struct rec_frame_ids f = { .function = 5 };
	struct replay *rp;
	char err[256];

	rec_put_bytes(&b, REC_MAGIC, REC_MAGIC_LEN);
	rec_put_header(&b, &h);
	rec_put_alloc(&b, 1, &in, 0); /* stack 1 was never defined */
	rp = replay_new();
	replay_append(rp, b.data, b.len);
	assert_int_equal(replay_step(rp, err, sizeof(err)), -EBADMSG);
	assert_non_null(strstr(err, "unknown stack 1"));
	replay_free(rp);

	bytebuf_clear(&b);
	rec_put_bytes(&b, REC_MAGIC, REC_MAGIC_LEN);
	rec_put_header(&b, &h);
	rec_put_stack(&b, 1, &f, 1, 0); /* string 5 was never defined */
	rp = replay_new();
	replay_append(rp, b.data, b.len);
	assert_int_equal(replay_step(rp, err, sizeof(err)), -EBADMSG);
	assert_non_null(strstr(err, "unknown string"));
	replay_free(rp);

	bytebuf_clear(&b);
	h.version = REC_VERSION + 1;
	rec_put_bytes(&b, REC_MAGIC, REC_MAGIC_LEN);
	rec_put_header(&b, &h);
	rp = replay_new();
	replay_append(rp, b.data, b.len);
	assert_int_equal(replay_step(rp, err, sizeof(err)), -EPROTONOSUPPORT);
	assert_non_null(strstr(err, "version 3; this memtop reads versions 1 to 2"));
	replay_free(rp);

	/* a version 2 frame in a version 1 recording makes no sense */
	bytebuf_clear(&b);
	h.version = 1;
	rec_put_bytes(&b, REC_MAGIC, REC_MAGIC_LEN);
	rec_put_header(&b, &h);
	rec_put_tick(&b, NS, 0);
	rp = replay_new();
	replay_append(rp, b.data, b.len);
	assert_int_equal(replay_step(rp, err, sizeof(err)), -EBADMSG);
	assert_non_null(strstr(err, "a malformed tick"));
	replay_free(rp);
	bytebuf_fini(&b);
}

/* FILE after an interval: there, opening with the magic, and no FILE.new
 * left (a rotation writes the new segment whole under FILE.new, then
 * renames it over FILE). Its inode. */
static ino_t whole_segment(const char *path)
{
	char draft[PATH_MAX + 4], magic[REC_MAGIC_LEN];
	struct stat st;
	int fd = open(path, O_RDONLY);

	assert_true(fd >= 0);
	assert_int_equal(read(fd, magic, sizeof(magic)), REC_MAGIC_LEN);
	assert_memory_equal(magic, REC_MAGIC, REC_MAGIC_LEN);
	assert_int_equal(fstat(fd, &st), 0);
	close(fd);
	snprintf(draft, sizeof(draft), "%s.new", path);
	assert_int_equal(access(draft, F_OK), -1);
	return st.st_ino;
}

/* --record-max: both segments within the bound (plus the interval that
 * filled one), FILE.1 then FILE replays, and in-use carried over. FILE
 * is whole after every interval, each rotation makes the segment before
 * FILE.1 (the same file, not a copy), and a FILE.new a killed run left
 * is removed. */
static void test_rotation(void **state)
{
	char path[PATH_MAX], older[PATH_MAX + 4], draft[PATH_MAX + 4], err[256];
	const __u64 max = 64 << 10;
	struct mt_model *m = new_model();
	struct mt_status st = { 0 };
	struct recorder *r;
	struct replay *rp;
	struct stat a, b;
	unsigned char *d;
	size_t len;
	ino_t ino, was = 0;
	int k, e, rotations = 0;
	FILE *f;

	snprintf(draft, sizeof(draft), "%s/rot.mtr.new", dir);
	f = fopen(draft, "w");
	assert_non_null(f);
	fputs("a killed run's draft", f);
	fclose(f);
	r = open_rec("rot.mtr", max, path);
	assert_int_equal(access(draft, F_OK), -1);
	snprintf(older, sizeof(older), "%s.1", path);
	recorder_watch(r, m);
	for (k = 0; k < 400; k++) {
		feed_at(m, &st, k % 6, k); /* no death, no regrouping: a long steady run */
		recorder_interval(r, m, &st, false);
		ino = whole_segment(path);
		if (was && ino != was) {
			rotations++;
			assert_int_equal(stat(older, &b), 0);
			assert_int_equal(b.st_ino, was);
		}
		was = ino;
	}
	assert_true(rotations >= 2);
	recorder_close(r);
	assert_int_equal(stat(path, &a), 0);
	assert_int_equal(stat(older, &b), 0);
	assert_true((__u64)(a.st_size + b.st_size) <= max + 16384);

	rp = replay_new();
	d = slurp(older, &len);
	replay_append(rp, d, len);
	free(d);
	d = slurp(path, &len);
	replay_append(rp, d, len);
	free(d);
	while ((e = replay_step(rp, err, sizeof(err))) == 1)
		;
	if (e)
		fail_msg("%s", err);
	assert_true(replay_info(rp)->segment > 0);
	/* what is live at the end, and the figures the data path set */
	/* carried samples weigh whole bytes (docs/recording.md) */
	assert_true(fabs(model_target(replay_model(rp), 7)->inuse_bytes -
			 model_target(m, 7)->inuse_bytes) <=
		    1e-6 * model_target(m, 7)->inuse_bytes + 200);
	assert_true(model_target(m, 7)->inuse_bytes > 100000);
	assert_int_equal(model_target(replay_model(rp), 7)->rss_bytes, model_target(m, 7)->rss_bytes);
	replay_free(rp);
	model_free(m);
}

/* What a session's stream sent since *off of the segment *ino: the rest of
 * FILE.1 once FILE was rotated, then FILE (record/session.c sends the
 * same bytes). */
static void stream_more(const char *path, ino_t *ino, size_t *off, struct replay **rps, int n)
{
	char older[PATH_MAX + 4];
	unsigned char *d;
	struct stat st;
	size_t len;
	int i;

	snprintf(older, sizeof(older), "%s.1", path);
	assert_int_equal(stat(path, &st), 0);
	if (*ino && st.st_ino != *ino) {
		d = slurp(older, &len);
		for (i = 0; i < n; i++)
			assert_int_equal(replay_append(rps[i], d + *off, len - *off), 0);
		free(d);
		*off = 0;
	}
	*ino = st.st_ino;
	d = slurp(path, &len);
	for (i = 0; i < n; i++)
		assert_int_equal(replay_append(rps[i], d + *off, len - *off), 0);
	free(d);
	*off = len;
}

/* memtop attach: the stream of a session that rotates, kept whole and
 * trimmed to 2 segments side by side. Both count the same intervals (a
 * later segment's opening interval is not one more), the trimmed one holds
 * at most about the session's bound, its model ends where the whole one's
 * does, it rewinds no further than its oldest interval kept, and one left
 * standing in what is forgotten moves on to the oldest kept. */
static void test_stream_trimmed(void **state)
{
	char path[PATH_MAX], err[256];
	const __u64 max = 64 << 10;
	struct recorder *r = open_rec("stream.mtr", max, path);
	struct mt_model *m = new_model();
	struct mt_status st = { 0 };
	struct replay *rps[3] = { replay_new(), replay_new(), replay_new() };
	struct replay *whole = rps[0], *kept = rps[1], *behind = rps[2];
	size_t off = 0, most = 0;
	ino_t ino = 0;
	long first;
	int k, e, moved = 0;

	recorder_watch(r, m);
	for (k = 0; k < 400; k++) {
		feed_at(m, &st, k % 6, k);
		recorder_interval(r, m, &st, false);
		stream_more(path, &ino, &off, rps, 3);
		while ((e = replay_step(whole, err, sizeof(err))) == 1)
			;
		assert_int_equal(e, 0);
		assert_int_equal(replay_trim(kept, 2, err, sizeof(err)), 0);
		while ((e = replay_step(kept, err, sizeof(err))) == 1)
			;
		if (e)
			fail_msg("%s", err);
		assert_int_equal(replay_count(whole), k + 1);
		assert_int_equal(replay_at(whole), k);
		assert_int_equal(replay_count(kept), k + 1);
		assert_int_equal(replay_at(kept), k);
		if (replay_bytes(kept) > most)
			most = replay_bytes(kept);
		/* behind stays at its first interval until trimming forgets it */
		if (k == 0)
			assert_int_equal(replay_step(behind, err, sizeof(err)), 1);
		e = replay_trim(behind, 2, err, sizeof(err));
		assert_true(e == 0 || e == 1);
		if (e == 1) {
			moved++;
			assert_int_equal(replay_at(behind), replay_first(behind));
		}
	}
	recorder_close(r);
	first = replay_first(kept);
	assert_true(first > 300);
	assert_true(replay_bytes(whole) > 4 * max);
	/* two segments and the one that is opening: within the bound and a
	 * segment more (and its opening state) */
	assert_true(most <= max + max / 2 + 16384);
	assert_true(moved >= 2);
	/* moved on, not rebuilt: it is the whole stream's model */
	while ((e = replay_step(behind, err, sizeof(err))) == 1)
		;
	assert_int_equal(replay_at(behind), replay_at(whole));
	assert_same(replay_model(behind), replay_model(whole));
	assert_int_equal(model_target(replay_model(kept), 7)->rss_bytes,
			 model_target(m, 7)->rss_bytes);
	assert_true(fabs(model_target(replay_model(kept), 7)->inuse_bytes -
			 model_target(m, 7)->inuse_bytes) <=
		    1e-6 * model_target(m, 7)->inuse_bytes + 200);
	/* back to interval 0: the oldest kept, whose figures are the whole
	 * stream's at that interval */
	assert_int_equal(replay_rewind(kept, 0, err, sizeof(err)), 0);
	assert_int_equal(replay_at(kept), first);
	assert_int_equal(replay_rewind(whole, first, err, sizeof(err)), 0);
	assert_int_equal(model_target(replay_model(kept), 7)->rss_bytes,
			 model_target(replay_model(whole), 7)->rss_bytes);
	assert_true(replay_status(kept)->wall_s == replay_status(whole)->wall_s);
	for (k = 0; k < 3; k++)
		replay_free(rps[k]);
	model_free(m);
}

static void test_refuses_symlink(void **state)
{
	char path[PATH_MAX], link[PATH_MAX], err[512];
	struct recorder_opts o = { .path = link, .rate = RATE };

	snprintf(path, sizeof(path), "%s/target", dir);
	snprintf(link, sizeof(link), "%s/link.mtr", dir);
	assert_int_equal(symlink(path, link), 0);
	assert_null(recorder_open(&o, err, sizeof(err)));
	assert_non_null(strstr(err, "symbolic link"));
	assert_int_equal(access(path, F_OK), -1); /* nothing created through it */
}

static int setup(void **state)
{
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_replay_equals_live),
		cmocka_unit_test(test_cut_anywhere),
		cmocka_unit_test(test_flipped_byte),
		cmocka_unit_test(test_bad_references),
		cmocka_unit_test(test_facts_round_trip),
		cmocka_unit_test(test_rotation),
		cmocka_unit_test(test_refuses_symlink),
		cmocka_unit_test(test_replay_through_a_source),
		cmocka_unit_test(test_header_pattern_bounded),
		cmocka_unit_test(test_stream_trimmed),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_pprof.c - the profile.proto builder and the model -> heap profile
 * conversion. Every profile is gunzipped and decoded with the independent
 * reader in pbdec.h into plain arrays, and checked against profile.proto's
 * rules (string_table[0] == "", non-zero unique ids, leaf first, inlined
 * callee first, main binary as mapping 1) and against the numbers that
 * went in. The model tests feed a real model (model.c) and compare with
 * the unsampling weight computed here from its definition.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "export/pprof.h"
#include "util/strpool.h"
#include "target_fixture.h"
#include "pbdec.h"

/* ==== a decoded Profile =============================================== */

#define MAXN 64
#define MAXL 16

struct dsample {
	uint64_t locs[MAXL], vals[8], lab_key[4], lab_str[4], lab_num[4];
	size_t nlocs, nvals, nlab;
};

struct dmapping {
	uint64_t id, start, limit, offset, file, build;
	uint64_t has[4]; /* functions, filenames, line numbers, inline frames */
};

struct dlocation {
	uint64_t id, mapping, addr, fn[MAXL], line[MAXL];
	size_t nlines;
};

struct dfunction {
	uint64_t id, name, sysname, file;
};

struct dprof {
	char *str[512];
	size_t nstr;
	uint64_t st_type[8], st_unit[8];
	size_t nst;
	struct dsample s[MAXN];
	size_t ns;
	struct dmapping m[MAXN];
	size_t nm;
	struct dlocation l[MAXN];
	size_t nl;
	struct dfunction f[MAXN];
	size_t nf;
	int64_t time, duration, period;
	uint64_t ptype, punit, comments[8];
	size_t ncomments;
};

/* Fields 1 and 2 of a message as integers (ValueType, Label, Line). */
static void decode_value_type(const struct pbfield *f, uint64_t *type, uint64_t *unit)
{
	struct pbdec d = pbdec_of(f->data, f->len);
	struct pbfield g;

	*type = *unit = 0;
	while (pbdec_next(&d, &g) == 1) {
		if (g.num == 1)
			*type = g.v;
		else if (g.num == 2)
			*unit = g.v;
	}
}

static void decode_sample(const struct pbfield *f, struct dsample *s)
{
	struct pbdec d = pbdec_of(f->data, f->len);
	struct pbfield g;

	memset(s, 0, sizeof(*s));
	while (pbdec_next(&d, &g) == 1) {
		if (g.num == 1) {
			assert_int_equal(pbdec_ints(&g, s->locs, &s->nlocs, MAXL), 0);
		} else if (g.num == 2) {
			assert_int_equal(pbdec_ints(&g, s->vals, &s->nvals, 8), 0);
		} else if (g.num == 3) {
			struct pbdec ld = pbdec_of(g.data, g.len);
			struct pbfield h;

			assert_true(s->nlab < 4);
			while (pbdec_next(&ld, &h) == 1) {
				if (h.num == 1)
					s->lab_key[s->nlab] = h.v;
				else if (h.num == 2)
					s->lab_str[s->nlab] = h.v;
				else if (h.num == 3)
					s->lab_num[s->nlab] = h.v;
			}
			s->nlab++;
		}
	}
}

static void decode_mapping(const struct pbfield *f, struct dmapping *m)
{
	struct pbdec d = pbdec_of(f->data, f->len);
	struct pbfield g;

	memset(m, 0, sizeof(*m));
	while (pbdec_next(&d, &g) == 1) {
		switch (g.num) {
		case 1:
			m->id = g.v;
			break;
		case 2:
			m->start = g.v;
			break;
		case 3:
			m->limit = g.v;
			break;
		case 4:
			m->offset = g.v;
			break;
		case 5:
			m->file = g.v;
			break;
		case 6:
			m->build = g.v;
			break;
		case 7:
		case 8:
		case 9:
		case 10:
			m->has[g.num - 7] = g.v;
			break;
		}
	}
}

static void decode_location(const struct pbfield *f, struct dlocation *l)
{
	struct pbdec d = pbdec_of(f->data, f->len);
	struct pbfield g;

	memset(l, 0, sizeof(*l));
	while (pbdec_next(&d, &g) == 1) {
		if (g.num == 1) {
			l->id = g.v;
		} else if (g.num == 2) {
			l->mapping = g.v;
		} else if (g.num == 3) {
			l->addr = g.v;
		} else if (g.num == 4) {
			/* Line{function_id=1, line=2}: same shape again */
			assert_true(l->nlines < MAXL);
			decode_value_type(&g, &l->fn[l->nlines], &l->line[l->nlines]);
			l->nlines++;
		}
	}
}

static void decode_function(const struct pbfield *f, struct dfunction *fn)
{
	struct pbdec d = pbdec_of(f->data, f->len);
	struct pbfield g;

	memset(fn, 0, sizeof(*fn));
	while (pbdec_next(&d, &g) == 1) {
		if (g.num == 1)
			fn->id = g.v;
		else if (g.num == 2)
			fn->name = g.v;
		else if (g.num == 3)
			fn->sysname = g.v;
		else if (g.num == 4)
			fn->file = g.v;
	}
}

/* Gunzip and decode gz into p (allocated), checking the basic rules. */
static struct dprof *decode_gz(const __u8 *gz, size_t len)
{
	struct dprof *p = calloc(1, sizeof(*p));
	struct pbfield f;
	struct pbdec d;
	uint8_t *raw = NULL;
	size_t rawlen = 0, i, j;

	assert_non_null(p);
	assert_int_equal(pbdec_gunzip(gz, len, &raw, &rawlen), 0);
	d = pbdec_of(raw, rawlen);
	for (;;) {
		int rc = pbdec_next(&d, &f);

		assert_true(rc >= 0);
		if (!rc)
			break;
		switch (f.num) {
		case 1:
			assert_true(p->nst < 8);
			decode_value_type(&f, &p->st_type[p->nst], &p->st_unit[p->nst]);
			p->nst++;
			break;
		case 2:
			assert_true(p->ns < MAXN);
			decode_sample(&f, &p->s[p->ns++]);
			break;
		case 3:
			assert_true(p->nm < MAXN);
			decode_mapping(&f, &p->m[p->nm++]);
			break;
		case 4:
			assert_true(p->nl < MAXN);
			decode_location(&f, &p->l[p->nl++]);
			break;
		case 5:
			assert_true(p->nf < MAXN);
			decode_function(&f, &p->f[p->nf++]);
			break;
		case 6:
			assert_true(f.wire == 2 && p->nstr < 512);
			p->str[p->nstr] = strndup((const char *)f.data, f.len);
			p->nstr++;
			break;
		case 9:
			p->time = (int64_t)f.v;
			break;
		case 10:
			p->duration = (int64_t)f.v;
			break;
		case 11:
			decode_value_type(&f, &p->ptype, &p->punit);
			break;
		case 12:
			p->period = (int64_t)f.v;
			break;
		case 13:
			assert_int_equal(pbdec_ints(&f, p->comments, &p->ncomments, 8), 0);
			break;
		default:
			fail_msg("unexpected Profile field %u", f.num);
		}
	}
	free(raw);

	/* profile.proto rules */
	assert_true(p->nstr > 0);
	assert_string_equal(p->str[0], "");
	for (i = 0; i < p->ns; i++) {
		assert_int_equal(p->s[i].nvals, p->nst);
		for (j = 0; j < p->s[i].nlocs; j++)
			assert_true(p->s[i].locs[j] >= 1 && p->s[i].locs[j] <= p->nl);
	}
	for (i = 0; i < p->nm; i++)
		assert_int_equal(p->m[i].id, i + 1);
	for (i = 0; i < p->nl; i++) {
		assert_int_equal(p->l[i].id, i + 1);
		assert_true(p->l[i].mapping <= p->nm);
		for (j = 0; j < p->l[i].nlines; j++)
			assert_true(p->l[i].fn[j] >= 1 && p->l[i].fn[j] <= p->nf);
	}
	for (i = 0; i < p->nf; i++) {
		assert_int_equal(p->f[i].id, i + 1);
		assert_true(p->f[i].name < p->nstr && p->f[i].file < p->nstr);
	}
	return p;
}

static void dprof_free(struct dprof *p)
{
	size_t i;

	for (i = 0; i < p->nstr; i++)
		free(p->str[i]);
	free(p);
}

static const char *S(const struct dprof *p, uint64_t i)
{
	assert_true(i < p->nstr);
	return p->str[i];
}

static const struct dlocation *loc(const struct dprof *p, uint64_t id)
{
	assert_true(id >= 1 && id <= p->nl);
	return &p->l[id - 1];
}

/* Name of the function of line j of location id. */
static const char *fn_name(const struct dprof *p, uint64_t id, size_t j)
{
	const struct dlocation *l = loc(p, id);

	assert_true(j < l->nlines);
	return S(p, p->f[l->fn[j] - 1].name);
}

/* String label value of key on sample s, NULL if absent. */
static const char *label(const struct dprof *p, const struct dsample *s, const char *key)
{
	size_t i;

	for (i = 0; i < s->nlab; i++)
		if (!strcmp(S(p, s->lab_key[i]), key))
			return S(p, s->lab_str[i]);
	return NULL;
}

/* Numeric label value of key on sample s, -1 if absent. */
static int64_t label_num(const struct dprof *p, const struct dsample *s, const char *key)
{
	size_t i;

	for (i = 0; i < s->nlab; i++)
		if (!strcmp(S(p, s->lab_key[i]), key)) {
			assert_int_equal(s->lab_str[i], 0); /* num, not str */
			return (int64_t)s->lab_num[i];
		}
	return -1;
}

static struct dprof *encode_decode(const struct pprof *pp)
{
	__u8 *gz;
	size_t len;
	struct dprof *p;

	assert_int_equal(pprof_encode_gz(pp, &gz, &len), 0);
	p = decode_gz(gz, len);
	free(gz);
	return p;
}

/* ==== builder ========================================================= */

#define EXE "/opt/app/bin/leaky"
#define LIBC "/lib/x86_64-linux-gnu/libc.so.6"

static const struct mt_frame f_libc = {
	.addr = 0x7f0000029100,
	.rel_addr = 0x29100,
	.module = "libc.so.6",
	.module_path = LIBC,
	.build_id = "c0ffee",
	.flags = MT_FRAME_NOSYM,
};
static const struct mt_frame f_inl = {
	.addr = 0x555500001100,
	.rel_addr = 0x1100,
	.function = "helper_inl",
	.module = "leaky",
	.module_path = EXE,
	.build_id = "abcd",
	.file = "leaky.c",
	.line = 10,
	.flags = MT_FRAME_INLINED,
};
static const struct mt_frame f_site = {
	.addr = 0x555500001100,
	.rel_addr = 0x1100,
	.function = "leak_site",
	.module = "leaky",
	.module_path = EXE,
	.build_id = "abcd",
	.file = "leaky.c",
	.line = 20,
};
static const struct mt_frame f_main = {
	.addr = 0x555500001200,
	.rel_addr = 0x1200,
	.function = "main",
	.module = "leaky",
	.module_path = EXE,
	.build_id = "abcd",
	.file = "leaky.c",
	.line = 30,
};
static const struct mt_frame f_anon = {
	.addr = 0x10000,
	.module = "[anon]",
	.flags = MT_FRAME_ANON,
};

static struct pprof *heap_builder(void)
{
	struct pprof *p = pprof_new();

	assert_non_null(p);
	assert_int_equal(pprof_add_sample_type(p, "alloc_space", "bytes"), 0);
	assert_int_equal(pprof_add_sample_type(p, "inuse_space", "bytes"), 0);
	return p;
}

static void test_builder_profile(void **state)
{
	/* libc first, so the main binary has to be moved to mapping 1 */
	const struct mt_frame s1[] = { f_libc, f_inl, f_site, f_main };
	const struct mt_frame s2[] = { f_site, f_main };
	const struct mt_frame s3[] = { f_anon, f_main };
	const __s64 v1[] = { 1000, 800 }, v2[] = { 5, 0 }, v3[] = { -1, 7 };
	const struct pprof_label lab[] = { { .key = "pid", .num = 42 },
					   { .key = "comm", .str = "leaky" } };
	struct pprof *pp = heap_builder();
	const struct dmapping *exe, *libc;
	struct dprof *p;

	pprof_set_time(pp, 1700000000123456789LL, 5000000000LL);
	assert_int_equal(pprof_set_period(pp, "space", "bytes", 524288), 0);
	assert_int_equal(pprof_add_comment(pp, "first comment"), 0);
	assert_int_equal(pprof_add_comment(pp, "second"), 0);
	assert_int_equal(pprof_add_sample(pp, 42, s1, 4, false, v1, lab, 2), 0);
	assert_int_equal(pprof_add_sample(pp, 42, s2, 2, true, v2, NULL, 0), 0);
	assert_int_equal(pprof_add_sample(pp, 42, s3, 2, false, v3, NULL, 0), 0);
	assert_int_equal(pprof_sample_count(pp), 3);
	/* sample types are fixed once samples exist */
	assert_int_equal(pprof_add_sample_type(pp, "x", "y"), -EBUSY);
	p = encode_decode(pp);

	assert_int_equal(p->nst, 2);
	assert_string_equal(S(p, p->st_type[0]), "alloc_space");
	assert_string_equal(S(p, p->st_unit[1]), "bytes");
	assert_string_equal(S(p, p->ptype), "space");
	assert_string_equal(S(p, p->punit), "bytes");
	assert_int_equal(p->period, 524288);
	assert_true(p->time == 1700000000123456789LL);
	assert_true(p->duration == 5000000000LL);
	assert_int_equal(p->ncomments, 2);
	assert_string_equal(S(p, p->comments[0]), "first comment");
	assert_string_equal(S(p, p->comments[1]), "second");

	/* mappings: main binary first, libc second, with file names, build
	 * IDs and the load bias as memory_start */
	assert_int_equal(p->nm, 2);
	exe = &p->m[0];
	libc = &p->m[1];
	assert_string_equal(S(p, exe->file), EXE);
	assert_string_equal(S(p, exe->build), "abcd");
	assert_true(exe->start == 0x555500000000ULL && exe->limit == 0x555500001201ULL);
	assert_true(exe->has[0] && exe->has[1] && exe->has[2] && exe->has[3]);
	assert_string_equal(S(p, libc->file), LIBC);
	assert_string_equal(S(p, libc->build), "c0ffee");
	assert_true(libc->start == 0x7f0000000000ULL);
	assert_false(libc->has[0]); /* a NOSYM frame: not symbolized */

	/* sample 1: leaf first; the inlined helper and leak_site share one
	 * location, callee first */
	assert_int_equal(p->s[0].nlocs, 3);
	assert_int_equal(p->s[0].vals[0], 1000);
	assert_int_equal(p->s[0].vals[1], 800);
	assert_true(loc(p, p->s[0].locs[0])->addr == f_libc.addr);
	assert_int_equal(loc(p, p->s[0].locs[0])->mapping, 2);
	assert_string_equal(fn_name(p, p->s[0].locs[0], 0), "libc.so.6+0x29100");
	assert_int_equal(loc(p, p->s[0].locs[1])->nlines, 2);
	assert_int_equal(loc(p, p->s[0].locs[1])->mapping, 1);
	assert_true(loc(p, p->s[0].locs[1])->addr == f_site.addr);
	assert_string_equal(fn_name(p, p->s[0].locs[1], 0), "helper_inl");
	assert_int_equal(loc(p, p->s[0].locs[1])->line[0], 10);
	assert_string_equal(fn_name(p, p->s[0].locs[1], 1), "leak_site");
	assert_int_equal(loc(p, p->s[0].locs[1])->line[1], 20);
	assert_string_equal(fn_name(p, p->s[0].locs[2], 0), "main");
	assert_string_equal(S(p, p->f[loc(p, p->s[0].locs[2])->fn[0] - 1].file), "leaky.c");
	assert_int_equal(label_num(p, &p->s[0], "pid"), 42);
	assert_string_equal(label(p, &p->s[0], "comm"), "leaky");

	/* sample 2: leak_site alone is a new location (different lines), main
	 * is shared; the truncated marker is outermost */
	assert_int_equal(p->s[1].nlocs, 3);
	assert_true(p->s[1].locs[0] != p->s[0].locs[1]);
	assert_string_equal(fn_name(p, p->s[1].locs[0], 0), "leak_site");
	assert_true(p->s[1].locs[1] == p->s[0].locs[2]);
	assert_string_equal(fn_name(p, p->s[1].locs[2], 0), PPROF_TRUNCATED_FRAME);
	assert_int_equal(loc(p, p->s[1].locs[2])->mapping, 0);
	assert_int_equal(p->s[1].nlab, 0);

	/* sample 3: an anonymous frame has no mapping; negative values pass */
	assert_int_equal(loc(p, p->s[2].locs[0])->mapping, 0);
	assert_string_equal(fn_name(p, p->s[2].locs[0], 0), "[anon]+0x0");
	assert_true((int64_t)p->s[2].vals[0] == -1);

	/* functions are deduplicated: libc+off, helper, leak_site, main,
	 * [truncated], [anon] */
	assert_int_equal(p->nf, 6);
	dprof_free(p);
	pprof_free(pp);
}

static void test_builder_errors(void **state)
{
	struct pprof *pp = pprof_new();
	const __s64 v[] = { 1 };
	struct dprof *p;

	assert_non_null(pp);
	assert_int_equal(pprof_add_sample(pp, 1, &f_main, 1, false, v, NULL, 0), -EINVAL);
	/* an empty profile still encodes, with string_table[0] == "" */
	p = encode_decode(pp);
	assert_int_equal(p->nstr, 1);
	assert_int_equal(p->ns, 0);
	assert_int_equal(p->time, 0);
	dprof_free(p);
	pprof_free(pp);
	pprof_free(NULL);
}

/* The same file mapped at different addresses in two processes is two
 * mappings; within one process, locations are shared. */
static void test_builder_processes(void **state)
{
	struct mt_frame other = f_site;
	const __s64 v[] = { 1, 1 };
	struct pprof *pp = heap_builder();
	struct dprof *p;

	other.addr += 0x100000; /* another load address, same file offset */
	assert_int_equal(pprof_add_sample(pp, 1, &f_site, 1, false, v, NULL, 0), 0);
	assert_int_equal(pprof_add_sample(pp, 1, &f_site, 1, false, v, NULL, 0), 0);
	assert_int_equal(pprof_add_sample(pp, 2, &other, 1, false, v, NULL, 0), 0);
	p = encode_decode(pp);
	assert_int_equal(p->nm, 2);
	assert_int_equal(p->nl, 2);
	assert_true(p->s[0].locs[0] == p->s[1].locs[0]);
	assert_true(p->s[2].locs[0] != p->s[0].locs[0]);
	assert_true(p->m[1].start == p->m[0].start + 0x100000);
	assert_int_equal(p->nf, 1);
	dprof_free(p);
	pprof_free(pp);
}

static void test_frame_helpers(void **state)
{
	char buf[64];
	struct mt_frame nosym = f_libc, bare = { .addr = 0xdead };
	struct mt_stack *s = calloc(1, sizeof(*s) + 3 * sizeof(struct mt_frame));
	const struct mt_frame *fr;
	__u32 n;

	assert_string_equal(pprof_frame_name(&f_main, buf, sizeof(buf)), "main");
	assert_string_equal(pprof_frame_name(&nosym, buf, sizeof(buf)), "libc.so.6+0x29100");
	assert_string_equal(pprof_frame_name(&bare, buf, sizeof(buf)), "0xdead");

	assert_non_null(s);
	s->nframes = 3;
	s->site_frame = 1;
	fr = pprof_stack_frames(s, &n);
	assert_ptr_equal(fr, &s->frames[1]);
	assert_int_equal(n, 2);
	s->site_frame = 3; /* every frame is allocator machinery */
	fr = pprof_stack_frames(s, &n);
	assert_ptr_equal(fr, &s->frames[0]);
	assert_int_equal(n, 3);
	free(s);
}

static void test_wall_clock(void **state)
{
	struct timespec r, m;
	__s64 now, got;

	clock_gettime(CLOCK_REALTIME, &r);
	clock_gettime(CLOCK_MONOTONIC, &m);
	now = (__s64)r.tv_sec * 1000000000LL + r.tv_nsec;
	got = pprof_wall_ns((__u64)m.tv_sec * 1000000000ULL + (__u64)m.tv_nsec);
	assert_true(llabs(got - now) < 50000000LL); /* 50 ms */
	/* ten seconds ago on the monotonic clock is ten seconds ago in UTC */
	got = pprof_wall_ns((__u64)m.tv_sec * 1000000000ULL + (__u64)m.tv_nsec - 10000000000ULL);
	assert_true(llabs(got - (now - 10000000000LL)) < 50000000LL);
}

/* ==== from a model ==================================================== */

#define RATE 524288ULL
#define T0 1000000000000ULL /* monotonic ns */

static double weight(double size)
{
	return 1.0 / (1.0 - exp(-size / (double)RATE));
}

/* Interned frames: the model compares frame strings by pointer. */
static struct mt_frame frame(const char *fn, const char *module, const char *path, __u64 addr,
			     __u32 line)
{
	struct mt_frame f = {
		.addr = addr,
		.rel_addr = addr & 0xfffff,
		.function = strpool_intern(fn),
		.module = strpool_intern(module),
		.module_path = strpool_intern(path),
		.build_id = strpool_intern("0123abcd"),
		.file = strpool_intern(line ? "leaky.c" : NULL),
		.line = line,
	};

	return f;
}

static void alloc(struct mt_model *m, pid_t pid, __u64 addr, __u64 size, const char *site, __u64 ts)
{
	struct mt_frame f[3] = {
		frame("malloc", "libc.so.6", LIBC, 0x7f0000029100, 0),
		frame(site, "leaky", EXE, 0x555500001100, 20),
		frame("main", "leaky", EXE, 0x555500001200, 30),
	};
	struct mt_sample_in in = {
		.pid = pid,
		.ts_ns = ts,
		.addr = addr,
		.size = size,
		.frames = f,
		.nframes = 3,
	};

	assert_int_equal(model_apply(m, MT_INPUT_ALLOC(&in)), 0);
}

static struct mt_model *two_target_model(void)
{
	struct mt_model_opts o = { .rate = RATE, .group = MT_GROUP_FUNCTION };
	struct mt_model *m = model_new(&o);
	struct mt_target *t;

	assert_non_null(m);
	t = test_target(m, 100);
	snprintf(t->comm, sizeof(t->comm), "leaky");
	t->start_ns = T0;
	t->alive = true;
	t = test_target(m, 200);
	snprintf(t->comm, sizeof(t->comm), "other");
	t->start_ns = T0 + 1000000000ULL;
	t->alive = true;
	/* pid 100: 4 x 1 MiB leaked in leak_site, 1 x 64 KiB freed in churn */
	alloc(m, 100, 0x1000, 1 << 20, "leak_site", T0 + 1);
	alloc(m, 100, 0x2000, 1 << 20, "leak_site", T0 + 2);
	alloc(m, 100, 0x3000, 1 << 20, "leak_site", T0 + 3);
	alloc(m, 100, 0x4000, 1 << 20, "leak_site", T0 + 4);
	alloc(m, 100, 0x5000, 65536, "churn", T0 + 5);
	model_apply(m, MT_INPUT_FREE(100, 0x5000, T0 + 6));
	/* pid 200: one 2 MiB sample */
	alloc(m, 200, 0x1000, 2 << 20, "leak_site", T0 + 7);
	model_apply(m, MT_INPUT_TICK(T0 + 3000000000ULL));
	return m;
}

/* The sample whose leaf is function fn (and of process pid, if > 0). */
static const struct dsample *sample_of(const struct dprof *p, const char *fn, int64_t pid)
{
	size_t i;

	for (i = 0; i < p->ns; i++)
		if (!strcmp(fn_name(p, p->s[i].locs[0], 0), fn) &&
		    (pid <= 0 || label_num(p, &p->s[i], "pid") == pid))
			return &p->s[i];
	return NULL;
}

static bool comment_has(const struct dprof *p, const char *needle)
{
	size_t i;

	for (i = 0; i < p->ncomments; i++)
		if (strstr(S(p, p->comments[i]), needle))
			return true;
	return false;
}

static struct dprof *model_profile(struct mt_model *m, const struct pprof_model_opts *o)
{
	struct pprof *pp = pprof_from_model(m, o);
	struct dprof *p;

	assert_non_null(pp);
	p = encode_decode(pp);
	pprof_free(pp);
	return p;
}

static void test_model_profile(void **state)
{
	struct mt_model *m = two_target_model();
	const char *types[] = { "alloc_objects",        "alloc_space",
				"inuse_objects",        "inuse_space",
				"device_alloc_objects", "device_alloc_space",
				"device_inuse_objects", "device_inuse_space" };
	const char *units[] = { "count", "bytes", "count", "bytes",
				"count", "bytes", "count", "bytes" };
	struct pprof_model_opts o = { .version = "9.9-test" };
	const struct dsample *leak, *churn, *other;
	double w1m = weight(1 << 20), w64k = weight(65536), w2m = weight(2 << 20);
	struct dprof *p;
	size_t i;

	p = model_profile(m, &o);
	assert_int_equal(p->nst, 8);
	for (i = 0; i < 8; i++) {
		assert_string_equal(S(p, p->st_type[i]), types[i]);
		assert_string_equal(S(p, p->st_unit[i]), units[i]);
	}
	assert_string_equal(S(p, p->ptype), "space");
	assert_string_equal(S(p, p->punit), "bytes");
	assert_int_equal(p->period, RATE);
	/* collection time: model_now() on the wall clock; duration since the
	 * earliest target start */
	assert_true(llabs(p->time - pprof_wall_ns(T0 + 3000000000ULL)) < 50000000LL);
	assert_int_equal(p->duration, 3000000000LL);
	assert_true(comment_has(p, "memtop 9.9-test"));
	assert_true(comment_has(p, "pid 100 (leaky)"));
	assert_true(comment_has(p, "pid 200 (other)"));
	assert_true(comment_has(p, "unsampled"));

	/* allocator frames are left out: the call site is the leaf */
	leak = sample_of(p, "leak_site", 100);
	churn = sample_of(p, "churn", 100);
	other = sample_of(p, "leak_site", 200);
	assert_non_null(leak);
	assert_non_null(churn);
	assert_non_null(other);
	assert_null(sample_of(p, "malloc", 0));
	assert_int_equal(leak->nlocs, 2);
	assert_string_equal(fn_name(p, leak->locs[1], 0), "main");
	assert_string_equal(label(p, leak, "comm"), "leaky");
	assert_string_equal(label(p, other, "comm"), "other");

	/* unsampled estimates, rounded */
	assert_int_equal(leak->vals[0], llround(4 * w1m));
	assert_int_equal(leak->vals[1], llround(4 * w1m * (1 << 20)));
	assert_int_equal(leak->vals[2], llround(4 * w1m));
	assert_int_equal(leak->vals[3], llround(4 * w1m * (1 << 20)));
	assert_int_equal(churn->vals[1], llround(w64k * 65536));
	assert_int_equal(churn->vals[3], 0); /* freed */
	assert_int_equal(other->vals[3], llround(w2m * (2 << 20)));
	/* both processes map the exe at the same address here but are still
	 * separate mappings (one address space each) */
	assert_int_equal(p->nm, 2);
	assert_string_equal(S(p, p->m[0].file), EXE);
	dprof_free(p);

	/* one target: no labels, only its samples */
	o.pid = 200;
	p = model_profile(m, &o);
	assert_int_equal(p->ns, 1);
	assert_int_equal(p->s[0].nlab, 0);
	assert_int_equal(p->s[0].vals[3], llround(w2m * (2 << 20)));
	assert_true(comment_has(p, "pid 200 (other)"));
	assert_false(comment_has(p, "pid 100"));
	assert_int_equal(p->duration, 2000000000LL);
	dprof_free(p);
	model_free(m);
}

static void test_model_delta(void **state)
{
	struct mt_model *m = two_target_model();
	struct pprof_delta *d = pprof_delta_new();
	struct pprof_model_opts o = { .pid = 100, .delta = d, .time_ns = 42, .duration_ns = 7 };
	double w1m = weight(1 << 20);
	const struct dsample *leak;
	struct dprof *p;

	assert_non_null(d);
	/* first profile: everything since attach */
	p = model_profile(m, &o);
	assert_true(p->time == 42 && p->duration == 7);
	assert_true(comment_has(p, "since the previous profile"));
	leak = sample_of(p, "leak_site", 0);
	assert_non_null(leak);
	assert_int_equal(leak->vals[1], llround(4 * w1m * (1 << 20)));
	dprof_free(p);

	/* nothing new: only in-use values remain; churn (all zero) is gone */
	p = model_profile(m, &o);
	assert_int_equal(p->ns, 1);
	leak = sample_of(p, "leak_site", 0);
	assert_non_null(leak);
	assert_int_equal(leak->vals[0], 0);
	assert_int_equal(leak->vals[1], 0);
	assert_int_equal(leak->vals[3], llround(4 * w1m * (1 << 20)));
	dprof_free(p);

	/* one more leak: growth of one sample, in-use of five */
	alloc(m, 100, 0x6000, 1 << 20, "leak_site", T0 + 4000000000ULL);
	model_apply(m, MT_INPUT_TICK(T0 + 5000000000ULL));
	p = model_profile(m, &o);
	leak = sample_of(p, "leak_site", 0);
	assert_non_null(leak);
	assert_int_equal(leak->vals[1], llround(w1m * (1 << 20)));
	assert_int_equal(leak->vals[3], llround(5 * w1m * (1 << 20)));
	dprof_free(p);

	/* the other pid's baseline is separate: its first profile has all */
	o.pid = 200;
	p = model_profile(m, &o);
	assert_int_equal(p->s[0].vals[1], llround(weight(2 << 20) * (2 << 20)));
	dprof_free(p);
	pprof_delta_free(d);
	pprof_delta_free(NULL);
	model_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_builder_profile),   cmocka_unit_test(test_builder_errors),
		cmocka_unit_test(test_builder_processes), cmocka_unit_test(test_frame_helpers),
		cmocka_unit_test(test_wall_clock),        cmocka_unit_test(test_model_profile),
		cmocka_unit_test(test_model_delta),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

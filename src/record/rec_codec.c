// SPDX-License-Identifier: GPL-2.0-only
/*
 * rec_codec.c - the payload layout of each recording frame, written and
 * read in pairs (rec_codec.h). Readers check every value that could make
 * the model misbehave (an enum out of range, a count beyond its bound);
 * numbers the model only adds up are taken as they are.
 */
#include "record/rec_codec.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

#include "util/strpool.h"

/* An interned copy of a string read from a payload; NULL for NULL. */
static const char *get_interned(struct rec_cur *c)
{
	size_t n;
	const char *s = rec_get_str(c, &n);

	return s ? strpool_intern_len(s, n) : NULL;
}

/* A string into a fixed array, cut to fit. */
static void get_into(struct rec_cur *c, char *buf, size_t len)
{
	size_t n;
	const char *s = rec_get_str(c, &n);

	if (n >= len)
		n = len - 1;
	if (s)
		memcpy(buf, s, n);
	buf[s ? n : 0] = '\0';
}

/* ---- header ------------------------------------------------------------ */

void rec_put_header(struct bytebuf *b, const struct rec_header *h)
{
	size_t f = rec_frame_begin(b, REC_HEADER, 0);

	rec_put_u16(b, h->version);
	rec_put_u16(b, 0);
	rec_put_u64(b, h->session);
	rec_put_u32(b, h->segment);
	rec_put_u64(b, h->rate);
	rec_put_u8(b, (__u8)h->group);
	rec_put_str(b, h->skip_regex);
	rec_put_f64(b, h->interval_s);
	rec_put_f64(b, h->start_wall_s);
	rec_put_str(b, h->version_str);
	rec_put_str(b, h->targets);
	rec_put_u32(b, h->max_stacks); /* version 2 */
	rec_frame_end(b, f);
}

bool rec_version_known(__u16 version)
{
	return version >= REC_VERSION_OLDEST && version <= REC_VERSION;
}

bool rec_get_header(struct rec_cur *c, struct rec_header *h)
{
	memset(h, 0, sizeof(*h));
	h->version = rec_get_u16(c);
	if (!rec_version_known(h->version))
		return !c->bad; /* the caller refuses it by its version */
	rec_get_u16(c);
	h->session = rec_get_u64(c);
	h->segment = rec_get_u32(c);
	h->rate = rec_get_u64(c);
	h->group = (enum mt_group)rec_get_u8(c);
	h->skip_regex = get_interned(c);
	h->interval_s = rec_get_f64(c);
	h->start_wall_s = rec_get_f64(c);
	h->version_str = get_interned(c);
	h->targets = get_interned(c);
	if (h->version >= 2)
		h->max_stacks = rec_get_u32(c);
	if (h->rate < 1 || h->rate > (1ULL << 30) || h->group > MT_GROUP_STACK)
		c->bad = true;
	return !c->bad;
}

/* ---- dictionary ---------------------------------------------------------- */

void rec_put_string(struct bytebuf *b, __u32 id, const char *s, __u16 flags)
{
	size_t f = rec_frame_begin(b, REC_STRING, flags);

	rec_put_u32(b, id);
	rec_put_str(b, s);
	rec_frame_end(b, f);
}

bool rec_get_string(struct rec_cur *c, __u32 *id, const char **s)
{
	*id = rec_get_u32(c);
	*s = get_interned(c);
	if (!*s || !*id)
		c->bad = true;
	return !c->bad;
}

void rec_put_stack(struct bytebuf *b, __u32 id, const struct rec_frame_ids *fr, __u32 n, __u16 flags)
{
	size_t f = rec_frame_begin(b, REC_STACK, flags);
	__u32 i;

	rec_put_u32(b, id);
	rec_put_u32(b, n);
	for (i = 0; i < n; i++) {
		rec_put_u64(b, fr[i].addr);
		rec_put_u64(b, fr[i].rel_addr);
		rec_put_u32(b, fr[i].function);
		rec_put_u32(b, fr[i].module);
		rec_put_u32(b, fr[i].module_path);
		rec_put_u32(b, fr[i].build_id);
		rec_put_u32(b, fr[i].file);
		rec_put_u32(b, fr[i].line);
		rec_put_u32(b, fr[i].flags);
	}
	rec_frame_end(b, f);
}

bool rec_get_stack(struct rec_cur *c, __u32 *id, __u32 *n)
{
	*id = rec_get_u32(c);
	*n = rec_get_u32(c);
	if (!*id || *n > REC_MAX_FRAMES)
		c->bad = true;
	return !c->bad;
}

bool rec_get_stack_frame(struct rec_cur *c, struct rec_frame_ids *f)
{
	f->addr = rec_get_u64(c);
	f->rel_addr = rec_get_u64(c);
	f->function = rec_get_u32(c);
	f->module = rec_get_u32(c);
	f->module_path = rec_get_u32(c);
	f->build_id = rec_get_u32(c);
	f->file = rec_get_u32(c);
	f->line = rec_get_u32(c);
	f->flags = rec_get_u32(c);
	return !c->bad;
}

/* ---- data ----------------------------------------------------------------- */

enum { ALLOC_UNTRACKED = 1, ALLOC_TRUNCATED = 2, ALLOC_MMAP = 4, ALLOC_DEVICE = 8 };

void rec_put_alloc(struct bytebuf *b, __u32 stack, const struct mt_sample_in *in, __u16 flags)
{
	size_t f = rec_frame_begin(b, REC_ALLOC, flags);

	rec_put_u32(b, stack);
	rec_put_u32(b, (__u32)in->pid);
	rec_put_u64(b, in->ts_ns);
	rec_put_u64(b, in->addr);
	rec_put_u64(b, in->size);
	rec_put_u64(b, in->weight_bytes);
	rec_put_u64(b, in->rate);
	rec_put_f64(b, in->duty);
	rec_put_u8(b, (in->untracked ? ALLOC_UNTRACKED : 0) | (in->truncated ? ALLOC_TRUNCATED : 0) |
			      (in->mmap ? ALLOC_MMAP : 0) | (in->dev.tier ? ALLOC_DEVICE : 0));
	/* the device tier: fields at the end (docs/recording.md) */
	if (in->dev.tier) {
		rec_put_u8(b, in->dev.tier);
		rec_put_u8(b, in->dev.api);
		rec_put_u8(b, in->dev.kind);
		rec_put_u8(b, in->dev.index);
		rec_put_u16(b, (__u16)in->dev.type);
	}
	rec_frame_end(b, f);
}

bool rec_get_alloc(struct rec_cur *c, __u32 *stack, struct mt_sample_in *in)
{
	__u8 bits;

	memset(in, 0, sizeof(*in));
	*stack = rec_get_u32(c);
	in->pid = (pid_t)rec_get_u32(c);
	in->ts_ns = rec_get_u64(c);
	in->addr = rec_get_u64(c);
	in->size = rec_get_u64(c);
	in->weight_bytes = rec_get_u64(c);
	in->rate = rec_get_u64(c);
	in->duty = rec_get_f64(c);
	bits = rec_get_u8(c);
	in->untracked = bits & ALLOC_UNTRACKED;
	in->truncated = bits & ALLOC_TRUNCATED;
	in->mmap = bits & ALLOC_MMAP;
	if (bits & ALLOC_DEVICE) {
		in->dev.tier = rec_get_u8(c);
		in->dev.api = rec_get_u8(c);
		in->dev.kind = rec_get_u8(c);
		in->dev.index = rec_get_u8(c);
		in->dev.type = (__s16)rec_get_u16(c);
		if (in->dev.tier != MT_TIER_DEVICE || !in->dev.api || in->dev.api >= MT_DEV_API_COUNT)
			c->bad = true;
	}
	/* the model divides by neither, but a duty outside (0, 1] means nothing */
	if (!(in->duty >= 0 && in->duty <= 1))
		c->bad = true;
	return !c->bad;
}

void rec_put_pid(struct bytebuf *b, enum rec_type type, pid_t pid, __u16 flags)
{
	size_t f = rec_frame_begin(b, type, flags);

	rec_put_u32(b, (__u32)pid);
	rec_frame_end(b, f);
}

bool rec_get_pid(struct rec_cur *c, pid_t *pid)
{
	*pid = (pid_t)rec_get_u32(c);
	return !c->bad;
}

void rec_put_free(struct bytebuf *b, pid_t pid, __u64 addr, __u64 ts_ns)
{
	size_t f = rec_frame_begin(b, REC_FREE, 0);

	rec_put_u32(b, (__u32)pid);
	rec_put_u64(b, addr);
	rec_put_u64(b, ts_ns);
	rec_frame_end(b, f);
}

bool rec_get_free(struct rec_cur *c, pid_t *pid, __u64 *addr, __u64 *ts_ns)
{
	*pid = (pid_t)rec_get_u32(c);
	*addr = rec_get_u64(c);
	*ts_ns = rec_get_u64(c);
	return !c->bad;
}

void rec_put_ended(struct bytebuf *b, pid_t pid, const struct mt_target_end *e, __u64 at_ns,
		   __u16 flags)
{
	size_t f = rec_frame_begin(b, REC_ENDED, flags);

	rec_put_u32(b, (__u32)pid);
	rec_put_u64(b, at_ns);
	rec_put_u8(b, (__u8)e->kind);
	rec_put_u32(b, (__u32)e->code);
	rec_put_u32(b, (__u32)e->signal);
	rec_put_u8(b, e->core);
	rec_put_f64(b, e->at_wall_s);
	rec_put_u8(b, e->have_cgroup);
	rec_put_u64(b, e->cg_current);
	rec_put_u64(b, e->cg_max);
	rec_put_u64(b, (__u64)e->cg_oom_kill);
	rec_frame_end(b, f);
}

bool rec_get_ended(struct rec_cur *c, pid_t *pid, struct mt_target_end *e, __u64 *at_ns)
{
	memset(e, 0, sizeof(*e));
	*pid = (pid_t)rec_get_u32(c);
	*at_ns = rec_get_u64(c);
	e->kind = (enum mt_end_kind)rec_get_u8(c);
	e->code = (int)rec_get_u32(c);
	e->signal = (int)rec_get_u32(c);
	e->core = rec_get_u8(c);
	e->at_wall_s = rec_get_f64(c);
	e->have_cgroup = rec_get_u8(c);
	e->cg_current = rec_get_u64(c);
	e->cg_max = rec_get_u64(c);
	e->cg_oom_kill = (__s64)rec_get_u64(c);
	/* the views index tables by the kind and name the signal */
	if (e->kind > MT_END_UNKNOWN || e->signal < 0 || e->signal > 128)
		c->bad = true;
	return !c->bad;
}

void rec_put_group(struct bytebuf *b, enum mt_group g, __u16 flags)
{
	size_t f = rec_frame_begin(b, REC_GROUP, flags);

	rec_put_u8(b, (__u8)g);
	rec_frame_end(b, f);
}

bool rec_get_group(struct rec_cur *c, enum mt_group *g)
{
	*g = (enum mt_group)rec_get_u8(c);
	if (*g > MT_GROUP_STACK)
		c->bad = true;
	return !c->bad;
}

/* ---- interval ------------------------------------------------------------- */

static void get_counters(struct rec_cur *c, struct mt_proc_counters *k)
{
	k->alloc_calls = rec_get_u64(c);
	k->free_calls = rec_get_u64(c);
	k->alloc_bytes = rec_get_u64(c);
	k->probe_hits = rec_get_u64(c);
	k->samples = rec_get_u64(c);
}

static void put_cgroup(struct bytebuf *b, const struct mt_cgroup_status *cg)
{
	rec_put_u8(b, cg->on);
	rec_put_str(b, cg->path);
	rec_put_u8(b, cg->have_mem);
	rec_put_u8(b, cg->mem.v1);
	rec_put_u64(b, cg->mem.current);
	rec_put_u64(b, cg->mem.max);
	rec_put_u64(b, cg->mem.high);
	rec_put_u64(b, cg->mem.anon);
	rec_put_u64(b, cg->mem.file);
	rec_put_u64(b, (__u64)cg->mem.oom);
	rec_put_u64(b, (__u64)cg->mem.oom_kill);
	rec_put_f64(b, cg->growth_bytes_per_s);
	rec_put_f64(b, cg->growth_r2);
	rec_put_f64(b, cg->time_to_max_s);
	rec_put_u32(b, (__u32)cg->processes);
}

static void get_cgroup(struct rec_cur *c, struct mt_cgroup_status *cg)
{
	cg->on = rec_get_u8(c);
	cg->path = get_interned(c);
	cg->have_mem = rec_get_u8(c);
	cg->mem.v1 = rec_get_u8(c);
	cg->mem.current = rec_get_u64(c);
	cg->mem.max = rec_get_u64(c);
	cg->mem.high = rec_get_u64(c);
	cg->mem.anon = rec_get_u64(c);
	cg->mem.file = rec_get_u64(c);
	cg->mem.oom = (__s64)rec_get_u64(c);
	cg->mem.oom_kill = (__s64)rec_get_u64(c);
	cg->growth_bytes_per_s = rec_get_f64(c);
	cg->growth_r2 = rec_get_f64(c);
	cg->time_to_max_s = rec_get_f64(c);
	cg->processes = (int)rec_get_u32(c);
	if (cg->on && !cg->path)
		c->bad = true; /* the views print it */
}

static void put_push_serve(struct bytebuf *b, const struct mt_status *st)
{
	rec_put_u8(b, st->push_on);
	rec_put_u64(b, st->push.sent);
	rec_put_u64(b, st->push.failed);
	rec_put_u64(b, st->push.dropped);
	rec_put_u64(b, st->push.skipped);
	rec_put_u8(b, st->push.pending);
	rec_put_u64(b, (__u64)st->push.last_ok_time);
	rec_put_str(b, st->push.last_error);
	rec_put_u8(b, st->serve_on);
	rec_put_str(b, st->serve.address);
	rec_put_u64(b, st->serve.answered);
	rec_put_u64(b, st->serve.errors);
	rec_put_u64(b, st->serve.refused);
	rec_put_u64(b, st->serve.open);
}

static void get_push_serve(struct rec_cur *c, struct mt_status *st)
{
	st->push_on = rec_get_u8(c);
	st->push.sent = rec_get_u64(c);
	st->push.failed = rec_get_u64(c);
	st->push.dropped = rec_get_u64(c);
	st->push.skipped = rec_get_u64(c);
	st->push.pending = rec_get_u8(c);
	st->push.last_ok_time = (time_t)rec_get_u64(c);
	get_into(c, st->push.last_error, sizeof(st->push.last_error));
	st->serve_on = rec_get_u8(c);
	get_into(c, st->serve.address, sizeof(st->serve.address));
	st->serve.answered = rec_get_u64(c);
	st->serve.errors = rec_get_u64(c);
	st->serve.refused = rec_get_u64(c);
	st->serve.open = rec_get_u64(c);
}

/* ---- a target's facts, by table ------------------------------------------ */

#define FACT(id, kind, group, field)                                              \
	{                                                                         \
		id, kind, group, #field, offsetof(struct mt_target_facts, field), \
			sizeof(((struct mt_target_facts *)0)->field)              \
	}

/* Every field of a facts report (input/target_facts.h), with the group
 * that carries it. An id is never reused (19, the number of stacks
 * folded, was version 1's: the model counts it again from the samples);
 * a new fact is one new row, written and read with no other change. */
static const struct rec_fact facts[] = {
	FACT(1, REC_FACT_STR, MT_FACT_COMM, comm),
	FACT(2, REC_FACT_STR, MT_FACT_HOW, allocator),
	FACT(3, REC_FACT_STR, MT_FACT_HOW, mechanism),
	FACT(4, REC_FACT_STR, MT_FACT_HOW, mechanism_why),
	FACT(5, REC_FACT_STR, MT_FACT_RUNTIME, runtime),
	FACT(6, REC_FACT_INTERNED, MT_FACT_RUNTIME, runtime_heap),
	FACT(7, REC_FACT_INTERNED, MT_FACT_RUNTIME, runtime_tool),
	FACT(8, REC_FACT_STR, MT_FACT_GO, go_version),
	FACT(9, REC_FACT_INT, MT_FACT_GO, go_rate),
	FACT(10, REC_FACT_INT, MT_FACT_RSS, rss_bytes),
	FACT(11, REC_FACT_INT, MT_FACT_COUNTERS, counters.alloc_calls),
	FACT(12, REC_FACT_INT, MT_FACT_COUNTERS, counters.free_calls),
	FACT(13, REC_FACT_INT, MT_FACT_COUNTERS, counters.alloc_bytes),
	FACT(14, REC_FACT_INT, MT_FACT_COUNTERS, counters.samples),
	FACT(15, REC_FACT_INT, MT_FACT_COUNTERS, counters.probe_hits),
	FACT(16, REC_FACT_INT, MT_FACT_EXACT, counters_exact),
	FACT(17, REC_FACT_INT, MT_FACT_RATES, rates_exact),
	FACT(18, REC_FACT_F64, MT_FACT_SLOWDOWN, slowdown_pct),
	FACT(20, REC_FACT_INT, MT_FACT_FILE_LIM, files_refused),
	FACT(21, REC_FACT_INT, MT_FACT_FILE_LIM, maps_cut),
	FACT(22, REC_FACT_INT, MT_FACT_INGEST, names_refused),
	FACT(23, REC_FACT_INT, MT_FACT_GO, go_rate_by_memtop),
	FACT(24, REC_FACT_STR, MT_FACT_JAVA, java),
	FACT(25, REC_FACT_STR, MT_FACT_JAVA, java_note),
	FACT(26, REC_FACT_INT, MT_FACT_JAVA, java_samples),
	FACT(27, REC_FACT_INT, MT_FACT_JAVA, java_dropped),
	FACT(28, REC_FACT_F64, MT_FACT_JAVA, java_slowdown_pct),
	FACT(29, REC_FACT_INT, MT_FACT_NAMED, heap_named),
	FACT(30, REC_FACT_STR, MT_FACT_NAMED, named_by),
	FACT(31, REC_FACT_INT, MT_FACT_SLOWDOWN, slowdown_measured),
	FACT(32, REC_FACT_F64, MT_FACT_SLOWDOWN, slowdown_low_pct),
	FACT(33, REC_FACT_F64, MT_FACT_SLOWDOWN, slowdown_high_pct),
	FACT(34, REC_FACT_F64, MT_FACT_PHASE, phase_seen),
	FACT(35, REC_FACT_INT, MT_FACT_INGEST, pages_named),
	FACT(36, REC_FACT_F64, MT_FACT_GO, go_heap_goal),
	FACT(37, REC_FACT_F64, MT_FACT_RATES, rates_off_share),
};

_Static_assert(sizeof(facts) / sizeof(facts[0]) <= REC_MAX_FACTS, "a fact's id is 6 bits");

const struct rec_fact *rec_facts(size_t *n)
{
	*n = sizeof(facts) / sizeof(facts[0]);
	return facts;
}

/* Every group a row belongs to: what a reader applies of a report. */
static __u32 groups_known(void)
{
	__u32 g = MT_FACT_WATCHED;
	size_t i;

	for (i = 0; i < sizeof(facts) / sizeof(facts[0]); i++)
		g |= facts[i].group;
	return g;
}

/* On the wire a fact is a tag, its value's form in the top two bits (so
 * a reader skips a fact it does not know) and its id below, then the
 * value: a string, a u64 or an f64. */
enum { WIRE_STR, WIRE_U64, WIRE_F64 };

static __u8 wire_of(const struct rec_fact *x)
{
	return x->kind == REC_FACT_INT ? WIRE_U64 : x->kind == REC_FACT_F64 ? WIRE_F64 : WIRE_STR;
}

/* The rows of the groups in f->set: a count, then each one tagged. */
static void put_fact_list(struct bytebuf *b, const struct mt_target_facts *f)
{
	const char *at = (const char *)f;
	size_t i, n = sizeof(facts) / sizeof(facts[0]);
	__u8 count = 0;

	for (i = 0; i < n; i++)
		count += !!(facts[i].group & f->set);
	rec_put_u8(b, count);
	for (i = 0; i < n; i++) {
		const struct rec_fact *x = &facts[i];
		const void *v = at + x->offset;
		__u64 u = 0;
		double d;

		if (!(x->group & f->set))
			continue;
		rec_put_u8(b, (__u8)(wire_of(x) << 6 | x->id));
		switch (x->kind) {
		case REC_FACT_STR:
			rec_put_str(b, v);
			break;
		case REC_FACT_INTERNED:
			rec_put_str(b, *(const char *const *)v);
			break;
		case REC_FACT_INT:
			memcpy(&u, v, x->size); /* the low bytes */
			rec_put_u64(b, u);
			break;
		case REC_FACT_F64:
			memcpy(&d, v, sizeof(d));
			rec_put_f64(b, d);
			break;
		}
	}
}

/* The table's row with this id and wire form, or NULL. */
static const struct rec_fact *fact_of(__u8 id, __u8 wire)
{
	size_t i;

	for (i = 0; i < sizeof(facts) / sizeof(facts[0]); i++)
		if (facts[i].id == id && wire_of(&facts[i]) == wire)
			return &facts[i];
	return NULL;
}

/* Read a list into f; the groups of the rows found (c->bad: it was not
 * a list). Rows of ids this reader does not know are skipped. */
static __u32 get_fact_list(struct rec_cur *c, struct mt_target_facts *f)
{
	char *at = (char *)f;
	__u8 k, count = rec_get_u8(c);
	__u32 got = 0;

	for (k = 0; k < count && !c->bad; k++) {
		__u8 tag = rec_get_u8(c), wire = tag >> 6;
		const struct rec_fact *x = fact_of(tag & 63, wire);
		__u64 u;
		double d;
		size_t len;

		if (wire == WIRE_STR && !x)
			rec_get_str(c, &len);
		else if (wire == WIRE_STR && x->kind == REC_FACT_STR)
			get_into(c, at + x->offset, x->size);
		else if (wire == WIRE_STR)
			*(const char **)(at + x->offset) = get_interned(c);
		else if (wire == WIRE_U64 && (u = rec_get_u64(c), x))
			memcpy(at + x->offset, &u, x->size);
		else if (wire == WIRE_F64 && (d = rec_get_f64(c), x))
			memcpy(at + x->offset, &d, sizeof(d));
		else if (wire > WIRE_F64)
			c->bad = true; /* a form no writer has */
		if (x && !c->bad)
			got |= x->group;
	}
	return got;
}

/* A report read back holds together: the views print a runtime's words
 * beside its name and a slowdown's range, and phase_seen weighs. */
static bool facts_ok(const struct mt_target_facts *f)
{
	if ((f->set & MT_FACT_RUNTIME) && f->runtime[0] && (!f->runtime_heap || !f->runtime_tool))
		return false;
	if ((f->set & MT_FACT_SLOWDOWN) && !rec_range_ok(f->slowdown_low_pct, f->slowdown_high_pct))
		return false;
	if ((f->set & MT_FACT_PHASE) && !(f->phase_seen >= 0 && f->phase_seen <= 1000))
		return false;
	if ((f->set & MT_FACT_RATES) && !(f->rates_off_share >= 0 && f->rates_off_share <= 1))
		return false;
	if ((f->set & MT_FACT_GO) &&
	    !(f->go_heap_goal == 0 || (f->go_heap_goal >= 1 && f->go_heap_goal <= GO_HEAP_GOAL_MAX)))
		return false;
	return true;
}

void rec_put_facts(struct bytebuf *b, const struct mt_target_facts *f, __u16 flags)
{
	size_t fr = rec_frame_begin(b, REC_FACTS, flags);

	rec_put_u32(b, (__u32)f->pid);
	rec_put_u32(b, f->set);
	rec_put_u64(b, f->watched_ns);
	put_fact_list(b, f);
	rec_frame_end(b, fr);
}

bool rec_get_facts(struct rec_cur *c, struct mt_target_facts *f)
{
	memset(f, 0, sizeof(*f));
	f->pid = (pid_t)rec_get_u32(c);
	/* a group a later writer added is not applied: its fields are
	 * skipped as unknown rows */
	f->set = rec_get_u32(c) & groups_known();
	f->watched_ns = rec_get_u64(c);
	get_fact_list(c, f);
	if (!c->bad && !facts_ok(f))
		c->bad = true;
	return !c->bad;
}

void rec_put_drops(struct bytebuf *b, const struct mt_drops *d, __u16 flags)
{
	size_t f = rec_frame_begin(b, REC_DROPS, flags);

	rec_put_u64(b, d->events_lost);
	rec_put_u64(b, d->live_map_full);
	rec_put_u64(b, d->pending_full);
	rec_put_u64(b, d->unknown_frees);
	rec_put_u64(b, d->after_end);
	rec_frame_end(b, f);
}

static void get_drops(struct rec_cur *c, struct mt_drops *d)
{
	d->events_lost = rec_get_u64(c);
	d->live_map_full = rec_get_u64(c);
	d->pending_full = rec_get_u64(c);
	d->unknown_frees = rec_get_u64(c);
	d->after_end = rec_get_u64(c);
}

bool rec_get_drops(struct rec_cur *c, struct mt_drops *d)
{
	get_drops(c, d);
	return !c->bad;
}

void rec_put_tick(struct bytebuf *b, __u64 now_ns, __u16 flags)
{
	size_t f = rec_frame_begin(b, REC_TICK, flags);

	rec_put_u64(b, now_ns);
	rec_frame_end(b, f);
}

bool rec_get_tick(struct rec_cur *c, __u64 *now_ns)
{
	*now_ns = rec_get_u64(c);
	return !c->bad;
}

/* ---- the status of an interval ------------------------------------------- */

static void put_status(struct bytebuf *b, const struct mt_status *st)
{
	rec_put_str(b, st->probe_mode);
	rec_put_f64(b, st->events_per_s);
	rec_put_f64(b, st->est_cpu_pct);
	rec_put_f64(b, st->est_slowdown_pct);
	rec_put_f64(b, st->budget_pct);
	rec_put_f64(b, st->trap_ns);
	rec_put_f64(b, st->cost_ns);
	rec_put_u8(b, st->cost_measured);
	rec_put_f64(b, st->floor_pct);
	rec_put_u64(b, st->phase_rate);
	rec_put_str(b, st->budget_note);
	rec_put_f64(b, st->probe_hits_per_s);
	rec_put_u8(b, st->backed_off);
	rec_put_u8(b, st->budget_unreachable);
	rec_put_f64(b, st->duty);
	rec_put_u8(b, st->counters_exact);
	rec_put_u8(b, st->all_exited);
	put_cgroup(b, &st->cgroup);
	put_push_serve(b, st);
	rec_put_str(b, st->message);
	rec_put_str(b, st->cmd_log);
}

static void get_status(struct rec_cur *c, struct mt_status *st)
{
	st->probe_mode = get_interned(c);
	st->events_per_s = rec_get_f64(c);
	st->est_cpu_pct = rec_get_f64(c);
	st->est_slowdown_pct = rec_get_f64(c);
	st->budget_pct = rec_get_f64(c);
	st->trap_ns = rec_get_f64(c);
	st->cost_ns = rec_get_f64(c);
	st->cost_measured = rec_get_u8(c);
	st->floor_pct = rec_get_f64(c);
	st->phase_rate = rec_get_u64(c);
	get_into(c, st->budget_note, sizeof(st->budget_note));
	st->probe_hits_per_s = rec_get_f64(c);
	st->backed_off = rec_get_u8(c);
	st->budget_unreachable = rec_get_u8(c);
	st->duty = rec_get_f64(c);
	st->counters_exact = rec_get_u8(c);
	st->all_exited = rec_get_u8(c);
	get_cgroup(c, &st->cgroup);
	get_push_serve(c, st);
	get_into(c, st->message, sizeof(st->message));
	st->cmd_log = get_interned(c);
}

static void put_measure(struct bytebuf *b, const struct mt_status *st)
{
	rec_put_u8(b, st->est_slowdown_measured);
	rec_put_f64(b, st->est_slowdown_low_pct);
	rec_put_f64(b, st->est_slowdown_high_pct);
	rec_put_f64(b, st->inprocess_over_pct);
}

/* A range read back: low <= high, high may be INFINITY (unbounded). */
bool rec_range_ok(double low, double high)
{
	return low >= 0 && !isnan(high) && high >= low;
}

/* The status's slowdown measure. Version 1 wrote it after the targets,
 * and not at all at first: the figure then reads as measured and known
 * to itself. */
static bool get_measure(struct rec_cur *c, struct mt_status *st)
{
	if (!c->n) {
		st->est_slowdown_measured = true;
		st->est_slowdown_low_pct = st->est_slowdown_high_pct = st->est_slowdown_pct;
		return true;
	}
	st->est_slowdown_measured = rec_get_u8(c);
	st->est_slowdown_low_pct = rec_get_f64(c);
	st->est_slowdown_high_pct = rec_get_f64(c);
	st->inprocess_over_pct = c->n ? rec_get_f64(c) : 0;
	if (!rec_range_ok(st->est_slowdown_low_pct, st->est_slowdown_high_pct) ||
	    !(st->inprocess_over_pct >= 0))
		c->bad = true;
	return !c->bad;
}

/* Clear st but where the replay stands. */
static void status_reset(struct mt_status *st)
{
	const struct mt_replay_pos *pos = st->replay;

	memset(st, 0, sizeof(*st));
	st->replay = pos;
}

void rec_put_interval(struct bytebuf *b, const struct mt_status *st, __u16 flags)
{
	size_t f = rec_frame_begin(b, REC_INTERVAL, flags);

	rec_put_f64(b, st->wall_s);
	put_status(b, st);
	put_measure(b, st);
	rec_frame_end(b, f);
}

bool rec_get_interval(struct rec_cur *c, struct mt_status *st)
{
	status_reset(st);
	st->wall_s = rec_get_f64(c);
	get_status(c, st);
	return !c->bad && get_measure(c, st);
}

/* ---- version 1's interval ------------------------------------------------- */

enum { TARGET_COUNTERS_EXACT = 1, TARGET_RATES_EXACT = 2 };

bool rec_get_interval_v1(struct rec_cur *c, __u64 *now_ns, struct mt_drops *d, struct mt_status *st,
			 __u32 *ntargets)
{
	status_reset(st);
	*now_ns = rec_get_u64(c);
	st->wall_s = rec_get_f64(c);
	get_drops(c, d);
	get_status(c, st);
	*ntargets = rec_get_u32(c);
	if (*ntargets > REC_MAX_TARGETS)
		c->bad = true;
	return !c->bad;
}

bool rec_get_target_v1(struct rec_cur *c, struct mt_target_facts *f)
{
	__u8 bits;

	memset(f, 0, sizeof(*f));
	f->set = MT_FACT_COMM | MT_FACT_HOW | MT_FACT_RUNTIME | MT_FACT_RSS | MT_FACT_COUNTERS |
		 MT_FACT_EXACT | MT_FACT_RATES | MT_FACT_SLOWDOWN;
	f->pid = (pid_t)rec_get_u32(c);
	get_into(c, f->comm, sizeof(f->comm));
	get_into(c, f->allocator, sizeof(f->allocator));
	get_into(c, f->runtime, sizeof(f->runtime));
	f->runtime_heap = get_interned(c);
	f->runtime_tool = get_interned(c);
	f->rss_bytes = rec_get_u64(c);
	get_counters(c, &f->counters);
	bits = rec_get_u8(c);
	f->counters_exact = bits & TARGET_COUNTERS_EXACT;
	f->rates_exact = bits & TARGET_RATES_EXACT;
	f->slowdown_pct = rec_get_f64(c);
	/* written before the slowdown's measure was: measured, known to
	 * itself, every phase seen (the facts, when there, say otherwise) */
	f->slowdown_measured = true;
	f->slowdown_low_pct = f->slowdown_high_pct = f->slowdown_pct;
	f->phase_seen = 1;
	f->set |= MT_FACT_PHASE;
	return !c->bad;
}

bool rec_get_target_how_v1(struct rec_cur *c, struct mt_target_facts *f)
{
	if (!c->n)
		return true; /* written before the field was */
	get_into(c, f->mechanism, sizeof(f->mechanism));
	get_into(c, f->mechanism_why, sizeof(f->mechanism_why));
	return !c->bad;
}

bool rec_get_facts_v1(struct rec_cur *c, struct mt_target_facts *f)
{
	char *plus;

	if (!c->n)
		return facts_ok(f); /* written before the table was */
	f->set |= get_fact_list(c, f);
	if (c->bad)
		return false;
	/* version 1 wrote the mechanism as shown: the runtime that names
	 * its heap after a "+", which the model adds again */
	plus = strchr(f->mechanism, '+');
	if (plus && f->heap_named)
		*plus = '\0';
	if (!facts_ok(f))
		c->bad = true;
	return !c->bad;
}

bool rec_get_measure_v1(struct rec_cur *c, struct mt_status *st)
{
	return get_measure(c, st);
}

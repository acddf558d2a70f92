// SPDX-License-Identifier: GPL-2.0-only
/*
 * model.c - targets, interned stacks, call sites and live samples.
 *
 * Every sampled allocation lands in a stack aggregate (one per distinct
 * stack and process) and in the site its grouping key selects; a live
 * sample (pid, addr) remembers its aggregate so a later free can take its
 * weight back out of both. Sites are sums of their aggregates, which is
 * what makes regrouping possible: an MT_IN_GROUP input rebuilds the sites by
 * re-adding every aggregate under the new key.
 *
 * The call-site frame of a stack is its first frame that is not allocator
 * machinery (stacks/wrappers.h: the wrapper table, plus --skip).
 *
 * Every stack also keeps its own in-use and allocation-rate histories,
 * pushed at every tick from a common template so that all of them hold the
 * same points: a site's past is the sum of its stacks' pasts, which is how
 * regrouping keeps histories, slopes and scores instead of restarting them.
 *
 * A target's death is an input (MT_IN_ENDED): the next tick closes
 * its last interval at the moment of death and from then on nothing of it
 * changes; a site all of whose processes ended is frozen the same way.
 */
#include "model/model.h"
#include "util/grow.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stacks/wrappers.h"
#include "util/hmap.h"
#include "util/strpool.h"
#include "util/sampling.h"

/* Additive numbers shared by stack aggregates and sites. */
struct totals {
	double alloc_bytes;
	double alloc_objects;
	double inuse_bytes;
	double inuse_objects;
	double inuse_phased_bytes; /* of inuse_bytes, samples drawn at a duty below 1 */
	double inuse_phased_off;   /* the same, each times 1 - its duty */
	double inuse_var;          /* the sampler's variance of inuse_bytes (bytes^2) */
	double freed_bytes;
	__s64 samples;
	__s64 live_samples;
	__s64 truncated_samples;
	__s64 untracked_samples;
	__s64 size_hist[MT_SIZE_BUCKETS];
	double size_objects[MT_SIZE_BUCKETS];
};

struct stack_agg {
	struct mt_stack_agg pub; /* first: model_stack_at() hands out &pub */
	struct totals t;
	struct mt_site *site;
	bool ended; /* its process ended (as of the last tick) */
};

/* A stack's own past, whatever the grouping: the sums over its aggregates
 * at every tick. */
struct stack_rec {
	struct mt_history inuse, alloc_rate;
	double first_s;                              /* first tick that observed it; < 0 before */
	double prev_alloc_bytes, prev_alloc_objects; /* at the last tick */
	double alloc_bytes_per_s, alloc_objects_per_s;
	double inuse_bytes, alloc_bytes, alloc_objects; /* summed at the tick */
	__u64 ended_ns;      /* all its processes ended, the last at this time */
	double frozen_s;     /* the tick that closed it */
	bool alive;          /* scratch for the tick: a live process has data here */
	struct mt_stack pub; /* last: frames[] follows */
};

#define stack_rec_of(st) ((struct stack_rec *)((char *)(st)-offsetof(struct stack_rec, pub)))

struct live_sample {
	pid_t pid;
	__u64 addr;
	__u64 size;
	double weight;
	__u64 ts_ns;
	struct stack_agg *agg;
	float phased_off; /* 1 - the duty it was drawn at while the budget cycled
			   * the allocation probes; 0: drawn at full duty */
};

/* What a live sample adds to the variance of its in-use (Horvitz-
 * Thompson): (1 - p) (w s)^2, p the chance that its countdown ran out in
 * an allocation of its size. Its weight w is 1 / p, or 1 / (d p) for one
 * drawn at duty d, where the schedule decides the rest (the model's
 * schedule term, sampling_schedule_rel_sd): p = 1 / (w d). */
static double live_var(const struct live_sample *l)
{
	double d = 1 - l->phased_off, p = l->weight > 0 ? 1 / (l->weight * d) : 1;
	double b = l->weight * (double)l->size;

	return p < 1 ? (1 - p) * b * b : 0;
}

struct mt_model {
	__u64 rate;
	enum mt_group group;
	__u32 max_stacks;          /* per target */
	const char *s_overflow;    /* MT_STACKS_OVERFLOW, interned */
	const char *s_no_frame;    /* MT_NO_FRAME, interned */
	struct wrappers *wrappers; /* what is machinery, not a call site */

	struct hmap stacks; /* mt_stack by frames */
	struct stack_rec **stack_v;
	size_t nstack, stack_cap;
	struct mt_history clock; /* a zero pushed at every tick: new stacks' template */
	struct hmap aggs;        /* stack_agg by (stack, pid) */
	struct stack_agg **agg_v;
	size_t nagg, agg_cap;

	struct hmap sites; /* mt_site by group key */
	struct mt_site **site_v;
	size_t nsite, site_cap;

	struct hmap live; /* live_sample by (pid, addr) */

	struct hmap targets;
	struct mt_target **target_v;
	size_t ntarget, target_cap;

	struct mt_drops drops;
	/* the device tier: each device's total, in order of first use */
	struct mt_device_total devices[MT_DEVICES_MAX];
	size_t ndevices;
	__u64 start_ns, now_ns;
	double interval_s;
	struct mt_model_observer obs; /* all NULL: nobody is told */
};

static struct mt_target *target_get(struct mt_model *m, pid_t pid, bool create);

/* ---- small helpers -------------------------------------------------- */

static void totals_add(struct totals *dst, const struct totals *d, int sign)
{
	int i;

	dst->alloc_bytes += sign * d->alloc_bytes;
	dst->alloc_objects += sign * d->alloc_objects;
	dst->inuse_bytes += sign * d->inuse_bytes;
	dst->inuse_objects += sign * d->inuse_objects;
	dst->inuse_phased_bytes += sign * d->inuse_phased_bytes;
	dst->inuse_phased_off += sign * d->inuse_phased_off;
	dst->inuse_var += sign * d->inuse_var;
	dst->freed_bytes += sign * d->freed_bytes;
	dst->samples += sign * d->samples;
	dst->live_samples += sign * d->live_samples;
	dst->truncated_samples += sign * d->truncated_samples;
	dst->untracked_samples += sign * d->untracked_samples;
	for (i = 0; i < MT_SIZE_BUCKETS; i++) {
		dst->size_hist[i] += sign * d->size_hist[i];
		dst->size_objects[i] += sign * d->size_objects[i];
	}
}

/* The site's public fields are the sum of its aggregates' totals. */
static void site_add(struct mt_site *s, const struct totals *d)
{
	int i;

	s->alloc_bytes += d->alloc_bytes;
	s->alloc_objects += d->alloc_objects;
	s->inuse_bytes += d->inuse_bytes;
	s->inuse_objects += d->inuse_objects;
	s->freed_bytes += d->freed_bytes;
	s->samples += d->samples;
	s->live_samples += d->live_samples;
	s->truncated_samples += d->truncated_samples;
	s->untracked_samples += d->untracked_samples;
	for (i = 0; i < MT_SIZE_BUCKETS; i++) {
		s->size_hist[i] += d->size_hist[i];
		s->size_objects[i] += d->size_objects[i];
	}
	/* floating sums drift below zero once everything is freed */
	if (s->inuse_bytes < 0.5)
		s->inuse_bytes = 0;
	if (s->inuse_objects < 1e-6)
		s->inuse_objects = 0;
}

/* Apply one change to an aggregate, its site and its target. */
static void account(struct mt_model *m, struct stack_agg *a, const struct totals *d)
{
	struct mt_target *t = target_get(m, a->pub.pid, false);

	totals_add(&a->t, d, 1);
	a->pub.alloc_bytes = a->t.alloc_bytes;
	a->pub.alloc_objects = a->t.alloc_objects;
	a->pub.inuse_bytes = a->t.inuse_bytes > 0.5 ? a->t.inuse_bytes : 0;
	a->pub.inuse_objects = a->t.inuse_objects > 1e-6 ? a->t.inuse_objects : 0;
	site_add(a->site, d);
	if (t && a->pub.stack->dev.tier == MT_TIER_DEVICE) {
		t->device_inuse_bytes += d->inuse_bytes;
		if (t->device_inuse_bytes < 0.5)
			t->device_inuse_bytes = 0;
	} else if (t && !a->pub.stack->mmap) {
		t->sampled_bytes += d->alloc_bytes;
		t->sampled_objects += d->alloc_objects;
		t->inuse_bytes += d->inuse_bytes;
		t->inuse_objects += d->inuse_objects;
		if (t->inuse_bytes < 0.5)
			t->inuse_bytes = 0;
		if (t->inuse_objects < 1e-6)
			t->inuse_objects = 0;
	}
}

/* ---- stacks ---------------------------------------------------------- */

static __u64 frames_hash(const struct mt_frame *f, __u32 n, bool truncated)
{
	__u64 h = hmap_mix(n, truncated);
	__u32 i;

	for (i = 0; i < n; i++) {
		h = hmap_mix(h, (unsigned long)f[i].module_path);
		h = hmap_mix(h, f[i].rel_addr);
		h = hmap_mix(h, (unsigned long)f[i].function);
		h = hmap_mix(h, f[i].line);
	}
	return h;
}

static bool frame_same(const struct mt_frame *a, const struct mt_frame *b)
{
	return a->module_path == b->module_path && a->rel_addr == b->rel_addr &&
	       a->function == b->function && a->line == b->line && a->file == b->file &&
	       a->flags == b->flags;
}

struct stack_key {
	const struct mt_frame *frames;
	__u32 n;
	bool truncated;
	bool mmap;
	struct mt_dev_tag dev;
};

static bool stack_eq(const void *val, const void *key)
{
	const struct mt_stack *s = val;
	const struct stack_key *k = key;
	__u32 i;

	if (s->nframes != k->n || s->truncated != k->truncated || s->mmap != k->mmap ||
	    !dev_tag_eq(&s->dev, &k->dev))
		return false;
	for (i = 0; i < k->n; i++)
		if (!frame_same(&s->frames[i], &k->frames[i]))
			return false;
	return true;
}

static bool is_machinery(const struct mt_model *m, const struct mt_frame *f)
{
	return wrappers_match(m->wrappers, f);
}

static struct mt_stack *stack_find(struct mt_model *m, const struct mt_sample_in *in)
{
	struct stack_key key = { in->frames, in->nframes, in->truncated, in->mmap, in->dev };

	return hmap_get(&m->stacks, frames_hash(in->frames, in->nframes, in->truncated), stack_eq,
			&key);
}

static struct mt_stack *stack_intern(struct mt_model *m, const struct mt_sample_in *in)
{
	struct stack_key key = { in->frames, in->nframes, in->truncated, in->mmap, in->dev };
	__u64 h = frames_hash(in->frames, in->nframes, in->truncated);
	struct mt_stack *s = stack_find(m, in);
	struct stack_rec *r;
	__u32 i;
	bool found = false;

	if (s)
		return s;
	r = malloc(sizeof(*r) + in->nframes * sizeof(r->pub.frames[0]));
	if (!r)
		return NULL;
	/* zero at every tick before this one: aligned with every other stack */
	r->inuse = m->clock;
	r->alloc_rate = m->clock;
	r->first_s = -1;
	r->prev_alloc_bytes = r->prev_alloc_objects = 0;
	r->alloc_bytes_per_s = r->alloc_objects_per_s = 0;
	r->inuse_bytes = r->alloc_bytes = r->alloc_objects = 0;
	r->ended_ns = 0;
	r->frozen_s = 0;
	r->alive = false;
	s = &r->pub;
	s->id = m->stacks.len + 1;
	s->nframes = in->nframes;
	s->truncated = in->truncated;
	s->mmap = in->mmap;
	s->dev = in->dev;
	memcpy(s->frames, in->frames, in->nframes * sizeof(s->frames[0]));
	/* the call site: a pool's mapping is the pool's (alloc_pooled); else
	 * the innermost Python frame, or frame the runtime
	 * named (MT_EV_NAMED) with a file, when there is one (the
	 * interpreter's own C code is machinery to a Python program; a named
	 * frame without a file is the runtime's own builtin: V8's
	 * String.prototype.padEnd), else the first frame outside the
	 * allocator (a named frame never is allocator machinery), else the
	 * last */
	s->site_frame = in->nframes ? in->nframes - 1 : 0;
	for (i = 0; i < in->nframes && !found; i++) {
		if (in->frames[i].flags & MT_FRAME_POOL) {
			s->site_frame = i;
			found = true;
		}
	}
	for (i = 0; i < in->nframes && !found; i++) {
		if (in->frames[i].flags & MT_FRAME_PYTHON ||
		    (in->frames[i].flags & MT_FRAME_NAMED && in->frames[i].file)) {
			s->site_frame = i;
			found = true;
		}
	}
	for (i = 0; i < in->nframes && !found; i++) {
		if (in->frames[i].flags & MT_FRAME_NAMED || !is_machinery(m, &in->frames[i])) {
			s->site_frame = i;
			found = true;
		}
	}
	if (hmap_put(&m->stacks, h, s)) {
		free(r);
		return NULL;
	}
	if (grow_push((void ***)&m->stack_v, &m->nstack, &m->stack_cap, r)) {
		hmap_del(&m->stacks, h, stack_eq, &key);
		free(r);
		return NULL;
	}
	return s;
}

/* ---- sites ------------------------------------------------------------ */

/* What identifies a site under the current grouping. A frame with no
 * function name is identified by module and offset. */
struct site_key {
	enum mt_group group;
	const struct mt_stack *stack;
	const struct mt_frame *frame;
};

static __u64 site_hash(const struct site_key *k)
{
	const struct mt_frame *f = k->frame;
	__u64 h;

	if (k->group == MT_GROUP_STACK)
		return hmap_mix(3, (unsigned long)k->stack);
	h = hmap_mix(hmap_mix(k->group, k->stack->mmap), (unsigned long)f->module_path);
	h = hmap_mix(h, dev_tag_bits(&k->stack->dev));
	if (!f->function)
		return hmap_mix(h, f->rel_addr);
	h = hmap_mix(h, (unsigned long)f->function);
	if (k->group == MT_GROUP_LINE)
		h = hmap_mix(hmap_mix(h, (unsigned long)f->file), f->line);
	return h;
}

static bool site_eq(const void *val, const void *key)
{
	const struct mt_site *s = val;
	const struct site_key *k = key;
	const struct mt_frame *a = s->frame, *b = k->frame;

	if (k->group == MT_GROUP_STACK)
		return s->stack == k->stack;
	if (s->stack->mmap != k->stack->mmap || !dev_tag_eq(&s->stack->dev, &k->stack->dev))
		return false;
	if (a->module_path != b->module_path || a->function != b->function)
		return false;
	if (!a->function)
		return a->rel_addr == b->rel_addr;
	return k->group != MT_GROUP_LINE || (a->file == b->file && a->line == b->line);
}

static struct mt_site *site_get(struct mt_model *m, const struct mt_stack *stack)
{
	struct site_key key = { m->group, stack, &stack->frames[stack->site_frame] };
	__u64 h = site_hash(&key);
	struct mt_site *s = hmap_get(&m->sites, h, site_eq, &key);

	if (s)
		return s;
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->id = m->nsite + 1;
	s->stack = stack;
	s->frame = key.frame;
	site_stats_init(&s->stats);
	if (hmap_put(&m->sites, h, s) || grow_push((void ***)&m->site_v, &m->nsite, &m->site_cap, s)) {
		hmap_del(&m->sites, h, site_eq, &key);
		free(s);
		return NULL;
	}
	return s;
}

/* ---- aggregates ------------------------------------------------------- */

struct agg_key {
	const struct mt_stack *stack;
	pid_t pid;
};

static bool agg_eq(const void *val, const void *key)
{
	const struct stack_agg *a = val;
	const struct agg_key *k = key;

	return a->pub.stack == k->stack && a->pub.pid == k->pid;
}

static struct stack_agg *agg_find(struct mt_model *m, const struct mt_stack *stack, pid_t pid)
{
	struct agg_key key = { stack, pid };

	return hmap_get(&m->aggs, hmap_mix((unsigned long)stack, pid), agg_eq, &key);
}

static struct stack_agg *agg_get(struct mt_model *m, const struct mt_stack *stack, pid_t pid)
{
	struct agg_key key = { stack, pid };
	__u64 h = hmap_mix((unsigned long)stack, pid);
	struct stack_agg *a = agg_find(m, stack, pid);
	struct mt_target *t;

	if (a)
		return a;
	a = calloc(1, sizeof(*a));
	if (!a)
		return NULL;
	a->pub.stack = stack;
	a->pub.pid = pid;
	a->site = site_get(m, stack);
	if (!a->site || hmap_put(&m->aggs, h, a)) {
		free(a);
		return NULL;
	}
	if (grow_push((void ***)&m->agg_v, &m->nagg, &m->agg_cap, a)) {
		hmap_del(&m->aggs, h, agg_eq, &key);
		free(a);
		return NULL;
	}
	t = target_get(m, pid, false);
	if (t)
		t->nstacks++;
	return a;
}

/* The aggregate a sample of in->pid goes to: its own stack's, unless
 * that would be a new stack for a target that has max_stacks of them
 * already; then the target's overflow stack, one frame naming
 * MT_STACKS_OVERFLOW (which the bound does not count), and the sample
 * is counted in limits.stacks_folded. */
static struct stack_agg *agg_of_sample(struct mt_model *m, const struct mt_sample_in *in)
{
	struct mt_target *t = target_get(m, in->pid, false);
	struct mt_stack *stack;
	struct stack_agg *a;
	struct mt_frame over;
	struct mt_sample_in folded;

	if (!t || t->nstacks < m->max_stacks) {
		stack = stack_intern(m, in);
		return stack ? agg_get(m, stack, in->pid) : NULL;
	}
	stack = stack_find(m, in);
	a = stack ? agg_find(m, stack, in->pid) : NULL;
	if (a)
		return a;
	t->limits.stacks_folded++;
	over = (struct mt_frame){ .function = m->s_overflow, .module = m->s_overflow };
	folded = *in;
	folded.frames = &over;
	folded.nframes = 1;
	folded.truncated = false;
	stack = stack_intern(m, &folded);
	a = stack ? agg_find(m, stack, in->pid) : NULL;
	if (a || !stack)
		return a;
	a = agg_get(m, stack, in->pid);
	if (a)
		t->nstacks--; /* the overflow stack is not counted */
	return a;
}

/* ---- live samples ----------------------------------------------------- */

struct live_key {
	pid_t pid;
	__u64 addr;
};

static bool live_eq(const void *val, const void *key)
{
	const struct live_sample *l = val;
	const struct live_key *k = key;

	return l->pid == k->pid && l->addr == k->addr;
}

static __u64 live_hash(pid_t pid, __u64 addr)
{
	return hmap_mix(pid, addr);
}

/* Take a live sample out of the in-use numbers; counted as freed when
 * the program freed it (not when its process went away). */
static void live_release(struct mt_model *m, struct live_sample *l, bool freed)
{
	struct totals d = { 0 };

	d.inuse_bytes = -l->weight * l->size;
	d.inuse_objects = -l->weight;
	if (l->phased_off > 0) {
		d.inuse_phased_bytes = -l->weight * l->size;
		d.inuse_phased_off = d.inuse_phased_bytes * l->phased_off;
	}
	d.inuse_var = -live_var(l);
	d.live_samples = -1;
	if (freed)
		d.freed_bytes = l->weight * l->size;
	account(m, l->agg, &d);
	free(l);
}

/* ---- public API -------------------------------------------------------- */

struct mt_model *model_new(const struct mt_model_opts *opts)
{
	struct mt_model *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->rate = opts->rate;
	m->group = opts->group;
	m->max_stacks = opts->max_stacks ? opts->max_stacks : MT_MAX_STACKS_DEFAULT;
	m->s_overflow = strpool_intern(MT_STACKS_OVERFLOW);
	m->s_no_frame = strpool_intern(MT_NO_FRAME);
	m->wrappers = wrappers_new(opts->skip_regex);
	if (!m->wrappers) {
		free(m);
		return NULL;
	}
	hmap_init(&m->stacks);
	hmap_init(&m->aggs);
	hmap_init(&m->sites);
	hmap_init(&m->live);
	hmap_init(&m->targets);
	history_init(&m->clock);
	return m;
}

static void free_hmap_values(struct hmap *h)
{
	size_t i;

	for (i = 0; i < h->cap; i++)
		free(h->v[i].val);
	hmap_fini(h);
}

void model_free(struct mt_model *m)
{
	if (!m)
		return;
	free_hmap_values(&m->live);
	free_hmap_values(&m->aggs);
	free_hmap_values(&m->sites);
	hmap_fini(&m->stacks); /* its values are inside the stack records */
	for (size_t i = 0; i < m->nstack; i++)
		free(m->stack_v[i]);
	free(m->stack_v);
	free_hmap_values(&m->targets);
	free(m->agg_v);
	free(m->site_v);
	free(m->target_v);
	wrappers_free(m->wrappers);
	free(m);
}

enum mt_group model_group(const struct mt_model *m)
{
	return m->group;
}

__u64 model_rate(const struct mt_model *m)
{
	return m->rate;
}

static bool pid_alive(struct mt_model *m, pid_t pid, __u64 *ended_ns);
static void observe_ages(struct mt_model *m, struct mt_site_obs *obs, const __u64 *obs_ns,
			 const bool *frozen);
static void site_obs_fill(const struct mt_site *s, double now_s, double interval_s,
			  struct mt_site_obs *o);
static void site_set_oldest(struct mt_site *s, const struct mt_site_obs *o, __u64 at_ns);

/* Rebuild the past of every site from its stacks' (see the file comment):
 * histories summed, watched since its oldest stack, rates summed, and a
 * site whose stacks all ended cut back to the tick that froze them and
 * observed as at the death. */
static void regroup_restore(struct mt_model *m)
{
	size_t n = m->nsite ? m->nsite : 1, i;
	struct mt_site_obs *obs = calloc(n, sizeof(*obs));
	__u64 *obs_ns = calloc(n, sizeof(*obs_ns));
	double *first = calloc(n, sizeof(*first));
	bool *alive = calloc(n, sizeof(*alive)), *seen = calloc(n, sizeof(*seen));
	bool *frozen = calloc(n, sizeof(*frozen));

	if (!obs || !obs_ns || !first || !alive || !seen || !frozen)
		goto out;
	for (i = 0; i < m->nstack; i++) {
		struct stack_rec *r = m->stack_v[i];
		struct mt_site *s = site_get(m, &r->pub);
		size_t k;

		if (!s)
			continue;
		k = s->id - 1;
		if (!seen[k]) {
			s->stats.inuse = r->inuse;
			s->stats.alloc_rate = r->alloc_rate;
			first[k] = r->first_s;
			seen[k] = true;
		} else if (history_add(&s->stats.inuse, &r->inuse) ||
			   history_add(&s->stats.alloc_rate, &r->alloc_rate)) {
			continue; /* cannot happen: every stack starts from the clock */
		} else if (r->first_s >= 0 && (first[k] < 0 || r->first_s < first[k])) {
			first[k] = r->first_s;
		}
		s->alloc_bytes_per_s += r->alloc_bytes_per_s;
		s->alloc_objects_per_s += r->alloc_objects_per_s;
		s->prev_alloc_bytes += r->prev_alloc_bytes;
		s->prev_alloc_objects += r->prev_alloc_objects;
		if (r->alive || !r->frozen_s) {
			alive[k] = true;
		} else {
			if (r->ended_ns > s->ended_ns)
				s->ended_ns = r->ended_ns;
			if (r->frozen_s > s->frozen_s)
				s->frozen_s = r->frozen_s;
		}
	}
	for (i = 0; i < m->nsite; i++) {
		struct mt_site *s = m->site_v[i];

		if (alive[i]) {
			s->ended_ns = 0;
			s->frozen_s = 0;
		}
		obs_ns[i] = s->ended_ns && s->ended_ns < m->now_ns ? s->ended_ns : m->now_ns;
		if (!obs_ns[i])
			obs_ns[i] = 1; /* before the first tick: nothing to age */
		frozen[i] = s->ended_ns != 0;
	}
	observe_ages(m, obs, obs_ns, frozen);
	for (i = 0; i < m->nsite; i++) {
		struct mt_site *s = m->site_v[i];
		double at = s->ended_ns ? s->frozen_s : m->now_ns / 1e9;

		if (s->ended_ns) {
			history_truncate(&s->stats.inuse, at);
			history_truncate(&s->stats.alloc_rate, at);
		}
		site_obs_fill(s, at, m->interval_s, &obs[i]);
		site_set_oldest(s, &obs[i], obs_ns[i]);
		if (first[i] >= 0)
			site_stats_restore(&s->stats, first[i], &obs[i]);
	}
out:
	free(obs);
	free(obs_ns);
	free(first);
	free(alive);
	free(seen);
	free(frozen);
}

static int set_group(struct mt_model *m, enum mt_group group)
{
	size_t i;

	free_hmap_values(&m->sites);
	m->nsite = 0;
	m->group = group;
	for (i = 0; i < m->nagg; i++) {
		struct stack_agg *a = m->agg_v[i];

		a->site = site_get(m, a->pub.stack);
		if (!a->site)
			return -ENOMEM;
		site_add(a->site, &a->t);
	}
	regroup_restore(m);
	return 0;
}

static void target_ended(struct mt_model *m, struct mt_target *t, const struct mt_target_end *how,
			 __u64 at_ns)
{
	t->alive = false;
	t->exit_ns = at_ns ? at_ns : m->now_ns;
	t->end = *how;
	if (t->end.kind == MT_END_NONE)
		t->end.kind = MT_END_UNKNOWN;
	t->final_done = false;
}

static const char *signal_name(int sig, char *buf, size_t len)
{
	const char *abbrev = sig > 0 ? sigabbrev_np(sig) : NULL;

	if (abbrev)
		snprintf(buf, len, "SIG%s", abbrev);
	else
		snprintf(buf, len, "signal %d", sig);
	return buf;
}

static void fmt_mib(char *buf, size_t len, __u64 bytes)
{
	snprintf(buf, len, "%.1f MiB", bytes / 1048576.0);
}

void model_end_describe(const struct mt_target_end *e, char *buf, size_t len)
{
	char sig[32], cur[32], max[32];

	switch (e->kind) {
	case MT_END_EXIT:
		snprintf(buf, len, "exited with code %d", e->code);
		break;
	case MT_END_SIGNAL:
		snprintf(buf, len, "killed by %s%s", signal_name(e->signal, sig, sizeof(sig)),
			 e->core ? " (core dumped)" : "");
		break;
	case MT_END_OOM:
		if (!e->have_cgroup) {
			snprintf(buf, len, "OOM-killed");
			break;
		}
		fmt_mib(cur, sizeof(cur), e->cg_current);
		if (e->cg_max)
			fmt_mib(max, sizeof(max), e->cg_max);
		else
			snprintf(max, sizeof(max), "no limit");
		snprintf(buf, len, "OOM-killed (cgroup at %s of %s, oom_kill %lld)", cur, max,
			 (long long)e->cg_oom_kill);
		break;
	case MT_END_UNKNOWN:
		snprintf(buf, len, "exited (status unknown)");
		break;
	default:
		snprintf(buf, len, "alive");
		break;
	}
}

static int on_alloc(struct mt_model *m, const struct mt_sample_in *in)
{
	struct stack_agg *a = agg_of_sample(m, in);
	struct live_sample *l = NULL, *old;
	double w = in->weight_bytes && in->size
			   ? (double)in->weight_bytes / in->size
			   : sampling_phase_weight(in->size, in->rate ? in->rate : m->rate, in->duty);
	struct live_key key = { in->pid, in->addr };
	struct totals d = { 0 };

	if (!a)
		return -ENOMEM;
	if (!pid_alive(m, in->pid, &(__u64){ 0 })) {
		m->drops.after_end++;
		return 0;
	}
	/* The same address again without a free in between: the free was
	 * lost (ring buffer full); the old sample is no longer in use. */
	old = hmap_del(&m->live, live_hash(in->pid, in->addr), live_eq, &key);
	if (old)
		live_release(m, old, true);

	d.alloc_bytes = w * in->size;
	d.alloc_objects = w;
	d.samples = 1;
	d.truncated_samples = in->truncated;
	d.size_hist[size_hist_bucket(in->size, MT_SIZE_BUCKETS)] = 1;
	d.size_objects[size_hist_bucket(in->size, MT_SIZE_BUCKETS)] = w;
	if (!in->untracked) {
		l = malloc(sizeof(*l));
		if (l) {
			l->pid = in->pid;
			l->addr = in->addr;
			l->size = in->size;
			l->weight = w;
			l->ts_ns = in->ts_ns;
			l->agg = a;
			l->phased_off = !in->weight_bytes && in->duty > 0 && in->duty < 1
						? (float)(1 - in->duty)
						: 0;
			if (hmap_put(&m->live, live_hash(in->pid, in->addr), l)) {
				free(l);
				l = NULL;
			}
		}
		if (!l)
			m->drops.live_map_full++;
	}
	if (l) {
		d.inuse_bytes = w * in->size;
		d.inuse_objects = w;
		if (l->phased_off > 0) {
			d.inuse_phased_bytes = w * in->size;
			d.inuse_phased_off = d.inuse_phased_bytes * l->phased_off;
		}
		d.inuse_var = live_var(l);
		d.live_samples = 1;
	} else {
		d.untracked_samples = 1; /* the live map was full: in-use misses it */
	}
	account(m, a, &d);
	return 0;
}

/* An anonymous mapping made by the allocator itself (glibc's mmap of a
 * large block, jemalloc's extents): the heap's own, seen through its
 * allocations already. */
static bool mmap_of_allocator(const struct mt_model *m, const struct mt_sample_in *in)
{
	__u32 i;

	for (i = 0; i < in->nframes; i++)
		if (wrappers_is_allocator(m->wrappers, &in->frames[i]))
			return true;
	return false;
}

/* The frame of an anonymous mapping that maps memory for a runtime's own
 * pool (wrappers_pool: pymalloc's arenas), or -1: the first frame that is
 * not machinery, the caller of mmap. *pool gets the pool's name. */
static int mmap_pool_frame(const struct mt_model *m, const struct mt_sample_in *in, const char **pool)
{
	__u32 i;

	for (i = 0; i < in->nframes; i++) {
		if (in->frames[i].flags & MT_FRAME_POOL)
			return -1; /* named so already (a replayed recording) */
		if (is_machinery(m, &in->frames[i]))
			continue;
		*pool = wrappers_pool(m->wrappers, &in->frames[i]);
		return *pool ? (int)i : -1;
	}
	return -1;
}

/* A mapping for a pool is charged to the pool, not to the call that
 * happened to need a new one: which objects fill it is not seen, and a
 * bounded cache that churns is as likely to need the next arena as a leak
 * (issue 23). Its frame that called mmap becomes the site, named for the
 * pool and flagged MT_FRAME_POOL, so every arena of a process is one site;
 * the callers stay in the stack. */
static int alloc_pooled(struct mt_model *m, const struct mt_sample_in *in, int k, const char *pool)
{
	struct mt_sample_in pooled = *in;
	struct mt_frame *frames = malloc(in->nframes * sizeof(*frames));
	int err;

	if (!frames)
		return -ENOMEM;
	memcpy(frames, in->frames, in->nframes * sizeof(*frames));
	frames[k].function = strpool_intern(pool);
	frames[k].file = NULL;
	frames[k].line = 0;
	frames[k].flags = (frames[k].flags & ~(__u32)MT_FRAME_NOSYM) | MT_FRAME_POOL;
	pooled.frames = frames;
	err = frames[k].function ? on_alloc(m, &pooled) : -ENOMEM;
	free(frames);
	return err;
}

static int alloc_in(struct mt_model *m, const struct mt_sample_in *in)
{
	const char *pool = NULL;
	int k;

	if (!in->mmap)
		return on_alloc(m, in);
	if (mmap_of_allocator(m, in))
		return 0;
	k = mmap_pool_frame(m, in, &pool);
	return k < 0 ? on_alloc(m, in) : alloc_pooled(m, in, k, pool);
}

static void free_in(struct mt_model *m, pid_t pid, __u64 addr)
{
	struct live_key key = { pid, addr };
	struct live_sample *l;

	if (!pid_alive(m, pid, &(__u64){ 0 })) {
		m->drops.after_end++;
		return;
	}
	l = hmap_del(&m->live, live_hash(pid, addr), live_eq, &key);
	if (!l) {
		/* a mapping of the allocator's own is not in the model; a
		 * device handle made before memtop attached is no fault */
		if (!(addr & (MT_ADDR_MMAP | MT_ADDR_DEVICE)))
			m->drops.unknown_frees++;
		return;
	}
	live_release(m, l, true);
}

/* The mechanism shown: the data path's, then the runtime that names its
 * heap itself, if any ("in-process+v8-sampling"). */
static void compose_mechanism(struct mt_target *t)
{
	snprintf(t->mechanism, sizeof(t->mechanism), "%s%s%s", t->mechanism_own,
		 t->heap_named && t->named_by[0] ? "+" : "", t->heap_named ? t->named_by : "");
}

/* A process that exec'd runs a new program: what was known of the old
 * program's runtime goes with its samples (its Java heap, a runtime that
 * named its heap, its Go runtime, the runtime memtop is blind to). The
 * new program's are reported as they are learnt; what belongs to the
 * process (its name until the next report, counters, cost, limits)
 * stays. */
static void forget_program(struct mt_target *t)
{
	t->java[0] = t->java_note[0] = '\0';
	t->java_samples = t->java_dropped = 0;
	t->java_slowdown_pct = 0;
	t->heap_named = false;
	t->named_by[0] = '\0';
	compose_mechanism(t);
	t->go_version[0] = '\0';
	t->go_rate = 0; /* as a target that never was a Go program */
	t->go_rate_by_memtop = false;
	t->go_heap_goal = 0;
	t->runtime[0] = '\0';
	t->runtime_heap = t->runtime_tool = NULL;
}

static void drop_process(struct mt_model *m, pid_t pid)
{
	struct mt_target *t = target_get(m, pid, false);
	size_t i;

	if (t)
		forget_program(t);
	for (i = 0; i < m->live.cap;) {
		struct live_sample *l = m->live.v[i].val;
		struct live_key key;

		if (!l || l->pid != pid) {
			i++;
			continue;
		}
		/* deletion shifts later entries into slot i: look at it again */
		key.pid = l->pid;
		key.addr = l->addr;
		hmap_del(&m->live, live_hash(l->pid, l->addr), live_eq, &key);
		live_release(m, l, false);
	}
}

static bool target_eq(const void *val, const void *key)
{
	return ((const struct mt_target *)val)->pid == *(const pid_t *)key;
}

static int apply_facts(struct mt_model *m, const struct mt_target_facts *f)
{
	struct mt_target *t = target_get(m, f->pid, f->set & MT_FACT_WATCHED);

	if (!t)
		return f->set & MT_FACT_WATCHED ? -ENOMEM : -ENOENT;
	if (f->set & MT_FACT_WATCHED) {
		t->alive = true;
		t->exit_ns = 0;
		t->start_ns = f->watched_ns ? f->watched_ns : m->now_ns;
	}
	if (f->set & MT_FACT_COMM)
		memcpy(t->comm, f->comm, sizeof(t->comm));
	if (f->set & MT_FACT_HOW) {
		memcpy(t->allocator, f->allocator, sizeof(t->allocator));
		memcpy(t->mechanism_own, f->mechanism, sizeof(t->mechanism_own));
		memcpy(t->mechanism_why, f->mechanism_why, sizeof(t->mechanism_why));
	}
	if (f->set & MT_FACT_NAMED) {
		t->heap_named = f->heap_named;
		memcpy(t->named_by, f->named_by, sizeof(t->named_by));
	}
	if (f->set & (MT_FACT_HOW | MT_FACT_NAMED))
		compose_mechanism(t);
	if (f->set & MT_FACT_RUNTIME) {
		memcpy(t->runtime, f->runtime, sizeof(t->runtime));
		t->runtime_heap = f->runtime_heap;
		t->runtime_tool = f->runtime_tool;
	}
	if (f->set & MT_FACT_GO) {
		memcpy(t->go_version, f->go_version, sizeof(t->go_version));
		t->go_rate = f->go_rate;
		t->go_rate_by_memtop = f->go_rate_by_memtop;
		t->go_heap_goal = f->go_heap_goal;
	}
	if (f->set & MT_FACT_RSS)
		t->rss_bytes = f->rss_bytes;
	if (f->set & MT_FACT_COUNTERS) {
		t->counters = f->counters;
		t->counted = true;
	}
	if (f->set & MT_FACT_EXACT)
		t->counters_exact = f->counters_exact;
	if (f->set & MT_FACT_RATES) {
		t->rates_exact = f->rates_exact;
		t->rates_off_share = f->rates_off_share;
	}
	if (f->set & MT_FACT_SLOWDOWN) {
		t->slowdown_pct = f->slowdown_pct;
		t->slowdown_measured = f->slowdown_measured;
		t->slowdown_low_pct = f->slowdown_low_pct;
		t->slowdown_high_pct = f->slowdown_high_pct;
	}
	if (f->set & MT_FACT_PHASE)
		t->phase_seen = f->phase_seen;
	if (f->set & MT_FACT_FILE_LIM) {
		t->limits.files_refused = f->files_refused;
		t->limits.maps_cut = f->maps_cut;
	}
	if (f->set & MT_FACT_JAVA) {
		memcpy(t->java, f->java, sizeof(t->java));
		memcpy(t->java_note, f->java_note, sizeof(t->java_note));
		t->java_samples = f->java_samples;
		t->java_dropped = f->java_dropped;
		t->java_slowdown_pct = f->java_slowdown_pct;
	}
	if (f->set & MT_FACT_INGEST) {
		t->limits.names_refused = f->names_refused;
		t->pages_named = f->pages_named;
	}
	return 0;
}

void model_target_facts(const struct mt_target *t, struct mt_target_facts *f)
{
	memset(f, 0, sizeof(*f));
	f->pid = t->pid;
	f->set = MT_FACT_COMM | MT_FACT_HOW | MT_FACT_RUNTIME | MT_FACT_GO | MT_FACT_RSS |
		 MT_FACT_COUNTERS | MT_FACT_EXACT | MT_FACT_RATES | MT_FACT_SLOWDOWN |
		 MT_FACT_PHASE | MT_FACT_FILE_LIM | MT_FACT_JAVA | MT_FACT_NAMED | MT_FACT_INGEST;
	f->watched_ns = t->start_ns;
	memcpy(f->comm, t->comm, sizeof(f->comm));
	memcpy(f->allocator, t->allocator, sizeof(f->allocator));
	memcpy(f->mechanism, t->mechanism_own, sizeof(f->mechanism));
	memcpy(f->mechanism_why, t->mechanism_why, sizeof(f->mechanism_why));
	memcpy(f->runtime, t->runtime, sizeof(f->runtime));
	f->runtime_heap = t->runtime_heap;
	f->runtime_tool = t->runtime_tool;
	memcpy(f->go_version, t->go_version, sizeof(f->go_version));
	f->go_rate = t->go_rate;
	f->go_rate_by_memtop = t->go_rate_by_memtop;
	f->go_heap_goal = t->go_heap_goal;
	f->rss_bytes = t->rss_bytes;
	f->counters = t->counters;
	f->counters_exact = t->counters_exact;
	f->rates_exact = t->rates_exact;
	f->rates_off_share = t->rates_off_share;
	f->slowdown_pct = t->slowdown_pct;
	f->slowdown_measured = t->slowdown_measured;
	f->slowdown_low_pct = t->slowdown_low_pct;
	f->slowdown_high_pct = t->slowdown_high_pct;
	f->phase_seen = t->phase_seen;
	f->files_refused = t->limits.files_refused;
	f->maps_cut = t->limits.maps_cut;
	memcpy(f->java, t->java, sizeof(f->java));
	memcpy(f->java_note, t->java_note, sizeof(f->java_note));
	f->java_samples = t->java_samples;
	f->java_dropped = t->java_dropped;
	f->java_slowdown_pct = t->java_slowdown_pct;
	f->heap_named = t->heap_named;
	memcpy(f->named_by, t->named_by, sizeof(f->named_by));
	f->names_refused = t->limits.names_refused;
	f->pages_named = t->pages_named;
}

struct strpool_budget *model_target_names(struct mt_model *m, pid_t pid)
{
	struct mt_target *t = target_get(m, pid, false);

	return t ? &t->names : NULL;
}

static struct mt_target *target_get(struct mt_model *m, pid_t pid, bool create)
{
	__u64 h = hmap_mix(0x7a7, pid);
	struct mt_target *t = hmap_get(&m->targets, h, target_eq, &pid);

	if (t && create && !t->alive) {
		/* a new process with the pid of one that ended */
		t->alive = true;
		t->exit_ns = 0;
		memset(&t->end, 0, sizeof(t->end));
		t->final_done = false;
	}
	if (t || !create)
		return t;
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->pid = pid;
	t->alive = true;
	t->counters_exact = true;
	t->start_ns = m->now_ns;
	target_stats_init(&t->stats);
	if (hmap_put(&m->targets, h, t) ||
	    grow_push((void ***)&m->target_v, &m->ntarget, &m->target_cap, t)) {
		hmap_del(&m->targets, h, target_eq, &pid);
		free(t);
		return NULL;
	}
	return t;
}

size_t model_target_count(const struct mt_model *m)
{
	return m->ntarget;
}

const struct mt_target *model_target(const struct mt_model *m, pid_t pid)
{
	return target_get((struct mt_model *)m, pid, false);
}

const struct mt_target *model_target_at(const struct mt_model *m, size_t i)
{
	return i < m->ntarget ? m->target_v[i] : NULL;
}

size_t model_site_count(const struct mt_model *m)
{
	return m->nsite;
}

struct mt_site *model_site_at(const struct mt_model *m, size_t i)
{
	return i < m->nsite ? m->site_v[i] : NULL;
}

size_t model_stack_count(const struct mt_model *m)
{
	return m->nagg;
}

const struct mt_stack_agg *model_stack_at(const struct mt_model *m, size_t i)
{
	return i < m->nagg ? &m->agg_v[i]->pub : NULL;
}

const struct mt_site *model_stack_site(const struct mt_model *m, size_t i)
{
	return i < m->nagg ? m->agg_v[i]->site : NULL;
}

const struct mt_drops *model_drops(const struct mt_model *m)
{
	return &m->drops;
}

__u64 model_now(const struct mt_model *m)
{
	return m->now_ns;
}

double model_interval_s(const struct mt_model *m)
{
	return m->interval_s;
}

__u64 model_site_inline_capacity(const struct mt_site *s, double frac, double *absorbed)
{
	const double *objs = s->size_objects;
	double total = 0, fit = 0;
	__u64 cap;
	int i;

	for (i = 0; i < MT_SIZE_BUCKETS; i++)
		total += objs[i];
	cap = size_hist_inline_capacity(objs, MT_SIZE_BUCKETS, frac);
	for (i = 0; cap && i < MT_SIZE_BUCKETS && ((__u64)1 << i) <= cap; i++)
		fit += objs[i];
	if (absorbed)
		*absorbed = cap && total > 0 ? fit / total : 0;
	return cap;
}

double model_site_obj_rate(const struct mt_site *s)
{
	return s->alloc_bytes > 0 ? s->stats.rate_bytes_per_s * s->alloc_objects / s->alloc_bytes : 0;
}

double model_inuse_bytes(const struct mt_model *m)
{
	double sum = 0;
	size_t i;

	for (i = 0; i < m->nsite; i++)
		if (!m->site_v[i]->stack->mmap && m->site_v[i]->stack->dev.tier != MT_TIER_DEVICE)
			sum += m->site_v[i]->inuse_bytes;
	return sum;
}

/* The total of device (api, index), made on first use; NULL past
 * MT_DEVICES_MAX. */
static struct mt_device_total *device_total(struct mt_model *m, __u8 api, __u8 index)
{
	struct mt_device_total *d;
	size_t i;

	for (i = 0; i < m->ndevices; i++)
		if (m->devices[i].api == api && m->devices[i].index == index)
			return &m->devices[i];
	if (m->ndevices == MT_DEVICES_MAX)
		return NULL;
	d = &m->devices[m->ndevices++];
	memset(d, 0, sizeof(*d));
	d->api = api;
	d->index = index;
	d->inuse = m->clock; /* zero at every earlier tick, like a new stack */
	return d;
}

/* Each device's memory held by live processes, a point of its history
 * and its growth over the last MT_DEVICE_GROWTH_WINDOW_S. */
static void tick_devices(struct mt_model *m, double now_s)
{
	double t[MT_HIST_POINTS], v[MT_HIST_POINTS];
	struct mt_fit fit;
	size_t i;
	int n;

	for (i = 0; i < m->ndevices; i++)
		m->devices[i].inuse_bytes = 0;
	for (i = 0; i < m->nagg; i++) {
		const struct stack_agg *a = m->agg_v[i];
		const struct mt_dev_tag *tag = &a->pub.stack->dev;
		struct mt_device_total *d;

		if (tag->tier != MT_TIER_DEVICE || a->ended)
			continue;
		d = device_total(m, tag->api, tag->index);
		if (d)
			d->inuse_bytes += a->pub.inuse_bytes;
	}
	for (i = 0; i < m->ndevices; i++) {
		struct mt_device_total *d = &m->devices[i];

		history_push(&d->inuse, now_s, d->inuse_bytes);
		n = history_window(&d->inuse, now_s - MT_DEVICE_GROWTH_WINDOW_S, t, v,
				   MT_HIST_POINTS);
		stats_fit(t, v, n, &fit);
		d->growth_bytes_per_s = fit.slope;
	}
}

size_t model_device_count(const struct mt_model *m)
{
	return m->ndevices;
}

const struct mt_device_total *model_device_at(const struct mt_model *m, size_t i)
{
	return i < m->ndevices ? &m->devices[i] : NULL;
}

static int age_bucket(double age_s)
{
	int b = age_s < 2 ? 0 : (int)floor(log2(age_s));

	return b < MT_AGE_BUCKETS ? b : MT_AGE_BUCKETS - 1;
}

/* Ages of live samples per site: oldest and bytes per age bucket, into
 * obs[site index], each measured at its site's obs_ns[] (the tick, or the
 * death of a site that ends now); sites with obs_ns 0 are skipped. A site
 * that goes on leaves out the samples of its processes that ended (their
 * ages stopped with them); one being frozen (frozen[]) counts them all. */
static void observe_ages(struct mt_model *m, struct mt_site_obs *obs, const __u64 *obs_ns,
			 const bool *frozen)
{
	size_t i;

	for (i = 0; i < m->live.cap; i++) {
		const struct live_sample *l = m->live.v[i].val;
		struct mt_site_obs *o;
		size_t k;
		double age;

		if (!l)
			continue;
		k = l->agg->site->id - 1;
		if (!obs_ns[k] || (l->agg->ended && !frozen[k]))
			continue;
		o = &obs[k];
		age = obs_ns[k] > l->ts_ns ? (obs_ns[k] - l->ts_ns) / 1e9 : 0;
		if (age > o->oldest_live_age_s)
			o->oldest_live_age_s = age;
		o->live_bytes_by_age[age_bucket(age)] += l->weight * l->size;
	}
}

static double per_s(double now, double before, double dt)
{
	return dt > 0 && now >= before ? (now - before) / dt : 0;
}

/* t's rates over dt from its counters: what the allocation probes saw,
 * over the share of its allocations they saw when they were off part of
 * the interval (the time on, times phase_seen: what of the on-time's
 * share they saw); an interval they were off throughout keeps the last
 * estimate (a 0 there read as "nothing allocated" under the back-off). */
static void counted_rates(struct mt_target *t, double dt)
{
	double seen = 1;

	if (!t->rates_exact && t->rates_off_share > 0) {
		seen = (1 - t->rates_off_share) * (t->phase_seen > 0 ? t->phase_seen : 1);
		if (seen <= 0.01)
			return;
	}
	t->alloc_calls_per_s =
		per_s(t->counters.alloc_calls, t->prev_counters.alloc_calls, dt) / seen;
	t->alloc_bytes_per_s =
		per_s(t->counters.alloc_bytes, t->prev_counters.alloc_bytes, dt) / seen;
}

/* Whether pid's target is alive, else when it ended. Processes the model
 * has no target for count as alive. */
static bool pid_alive(struct mt_model *m, pid_t pid, __u64 *ended_ns)
{
	struct mt_target *t = target_get(m, pid, false);

	if (!t || t->alive)
		return true;
	if (t->exit_ns > *ended_ns)
		*ended_ns = t->exit_ns;
	return false;
}

/* Seconds an interval that closes at a death lasted: from the last tick
 * to the death, or the whole tick when the death came before it. */
static double closing_dt(const struct mt_model *m, __u64 end_ns, double dt)
{
	return end_ns > m->now_ns && m->now_ns ? (end_ns - m->now_ns) / 1e9 : dt;
}

/* Sum the aggregates into their stacks, mark which stacks and sites a
 * live process has data in, and push every stack's point. site_end[k] gets
 * the last death among site k's processes; site_alive[k] whether one lives. */
static void tick_stacks(struct mt_model *m, double now_s, double dt, bool *site_alive, __u64 *site_end)
{
	size_t i;

	for (i = 0; i < m->nstack; i++) {
		struct stack_rec *r = m->stack_v[i];

		r->inuse_bytes = r->alloc_bytes = r->alloc_objects = 0;
		r->alive = false;
	}
	for (i = 0; i < m->nagg; i++) {
		struct stack_agg *a = m->agg_v[i];
		struct stack_rec *r = stack_rec_of(a->pub.stack);
		__u64 end = 0;
		size_t k = a->site->id - 1;

		r->inuse_bytes += a->pub.inuse_bytes;
		r->alloc_bytes += a->t.alloc_bytes;
		r->alloc_objects += a->t.alloc_objects;
		a->ended = !pid_alive(m, a->pub.pid, &end);
		if (!a->ended) {
			r->alive = true;
			site_alive[k] = true;
		} else {
			if (end > r->ended_ns)
				r->ended_ns = end;
			if (end > site_end[k])
				site_end[k] = end;
		}
	}
	for (i = 0; i < m->nstack; i++) {
		struct stack_rec *r = m->stack_v[i];

		if (r->alive) {
			r->ended_ns = 0;
			r->frozen_s = 0;
		}
		if (r->alive || !r->frozen_s) {
			double d = r->alive ? dt : closing_dt(m, r->ended_ns, dt);

			r->alloc_bytes_per_s = per_s(r->alloc_bytes, r->prev_alloc_bytes, d);
			r->alloc_objects_per_s = per_s(r->alloc_objects, r->prev_alloc_objects, d);
			r->prev_alloc_bytes = r->alloc_bytes;
			r->prev_alloc_objects = r->alloc_objects;
			if (r->first_s < 0)
				r->first_s = now_s;
			if (!r->alive)
				r->frozen_s = now_s;
		}
		/* an ended stack repeats its last point: the points stay aligned */
		history_push(&r->inuse, now_s, r->inuse_bytes);
		history_push(&r->alloc_rate, now_s, r->alloc_bytes_per_s);
	}
}

/* A site's observation from its sums (ages come from observe_ages). */
static void site_obs_fill(const struct mt_site *s, double now_s, double interval_s,
			  struct mt_site_obs *o)
{
	o->now_s = now_s;
	o->inuse_bytes = s->inuse_bytes;
	o->inuse_paced_bytes = s->inuse_bytes;
	o->alloc_bytes = s->alloc_bytes;
	o->freed_bytes = s->freed_bytes;
	o->alloc_bytes_per_s = s->alloc_bytes_per_s;
	o->interval_s = interval_s;
	o->samples = s->samples;
	o->live_samples = s->live_samples;
}

static void site_set_oldest(struct mt_site *s, const struct mt_site_obs *o, __u64 at_ns)
{
	s->oldest_live_ns = s->live_samples ? at_ns - (__u64)(o->oldest_live_age_s * 1e9) : 0;
}

/* What is uncertain in a site's in-use, summed over its stacks. */
struct site_spread {
	double var;         /* the sampler's variance (live_var) */
	double phased_off;  /* the schedule's scale: mt_site_obs.inuse_phased_off_bytes */
	double paced_extra; /* the pace: mt_site_obs.inuse_paced_bytes - inuse_bytes */
};

/* Each site's spread (sp[k] for site k).
 *
 * The pace: what the site's in-use would be if its samples drawn under
 * the budget's duty cycle stood for its process's pace rather than the
 * time the probes were on: d * phase_seen instead of d
 * (probe/phase_share.h). A stream paced by the clock (a timer, a
 * client's requests that do not wait) is seen for the share d of time
 * the probes are on; one paced by the process's own work is seen as
 * often as its work goes on while they are on, and the probes slow that.
 * The weights take the first, which needs nothing measured and never
 * moves; the second is the other end of the range the figure is known to.
 *
 * The schedule: the share of time the probes were really on over the
 * cycles that drew those samples is d only on average (sampling.h,
 * sampling_schedule_rel_sd); its scale is the sum of each one's bytes
 * times 1 - its duty. */
static void sites_spread(struct mt_model *m, struct site_spread *sp)
{
	size_t i;

	for (i = 0; i < m->nagg; i++) {
		const struct stack_agg *a = m->agg_v[i];
		struct site_spread *x = &sp[a->site->id - 1];
		const struct mt_target *t;

		x->var += a->t.inuse_var;
		if (a->t.inuse_phased_bytes <= 0.5)
			continue;
		x->phased_off += a->t.inuse_phased_off;
		t = target_get(m, a->pub.pid, false);
		if (t && t->phase_seen > 0 && t->phase_seen != 1)
			x->paced_extra += a->t.inuse_phased_bytes * (1 / t->phase_seen - 1);
	}
}

static void tick_sites(struct mt_model *m, __u64 now_ns, double dt, const bool *site_alive,
		       const __u64 *site_end)
{
	size_t n = m->nsite ? m->nsite : 1, i;
	struct mt_site_obs *obs = calloc(n, sizeof(*obs));
	__u64 *obs_ns = calloc(n, sizeof(*obs_ns));
	bool *ending = calloc(n, sizeof(*ending));
	struct site_spread *sp = calloc(n, sizeof(*sp));
	double now_s = now_ns / 1e9;

	if (!obs || !obs_ns || !ending || !sp)
		goto out;
	sites_spread(m, sp);
	for (i = 0; i < m->nsite; i++) {
		struct mt_site *s = m->site_v[i];
		ending[i] = !site_alive[i] && site_end[i];
		if (site_alive[i] || !site_end[i])
			s->ended_ns = 0; /* alive, or has no process yet */
		if (s->ended_ns)
			continue; /* frozen at its death */
		/* a site ending now is observed as at the death */
		obs_ns[i] = ending[i] && site_end[i] < now_ns ? site_end[i] : now_ns;
		if (ending[i]) {
			double d = closing_dt(m, site_end[i], dt);

			s->alloc_bytes_per_s = per_s(s->alloc_bytes, s->prev_alloc_bytes, d);
			s->alloc_objects_per_s = per_s(s->alloc_objects, s->prev_alloc_objects, d);
		} else {
			s->alloc_bytes_per_s = per_s(s->alloc_bytes, s->prev_alloc_bytes, dt);
			s->alloc_objects_per_s = per_s(s->alloc_objects, s->prev_alloc_objects, dt);
		}
		s->prev_alloc_bytes = s->alloc_bytes;
		s->prev_alloc_objects = s->alloc_objects;
	}
	observe_ages(m, obs, obs_ns, ending);
	for (i = 0; i < m->nsite; i++) {
		struct mt_site *s = m->site_v[i];

		if (!obs_ns[i])
			continue;
		site_obs_fill(s, now_s, dt, &obs[i]);
		obs[i].inuse_paced_bytes = fmax(0, s->inuse_bytes + sp[i].paced_extra);
		obs[i].inuse_phased_off_bytes = fmax(0, sp[i].phased_off);
		obs[i].inuse_var = fmax(0, sp[i].var);
		site_set_oldest(s, &obs[i], obs_ns[i]);
		site_stats_update(&s->stats, &obs[i]);
		if (!site_alive[i] && site_end[i]) {
			s->ended_ns = site_end[i];
			s->frozen_s = now_s;
		}
	}
out:
	free(obs);
	free(obs_ns);
	free(ending);
	free(sp);
}

static void tick_targets(struct mt_model *m, __u64 now_ns, double now_s, double dt)
{
	size_t i;

	for (i = 0; i < m->ntarget; i++) {
		struct mt_target *t = m->target_v[i];
		double d = dt;

		if (!t->alive && t->final_done)
			continue; /* nothing of a dead target changes */
		if (!t->alive)
			d = closing_dt(m, t->exit_ns, dt);
		else if (t->counted && !t->rate_based && t->start_ns && t->start_ns < now_ns)
			/* its first counts are of all the time since it was watched:
			 * more than this interval when its start-up came before the
			 * last tick (a first interval of 1 s read 1.65 times the
			 * rate), less for a process watched since the last tick */
			d = (now_ns - t->start_ns) / 1e9;
		t->rate_based |= t->counted;
		if (t->counters_exact || t->counters.alloc_calls) {
			counted_rates(t, d);
		} else { /* nothing counted: the samples' estimate (rates_exact false) */
			t->alloc_calls_per_s = per_s(t->sampled_objects, t->prev_sampled_objects, d);
			t->alloc_bytes_per_s = per_s(t->sampled_bytes, t->prev_sampled_bytes, d);
		}
		t->prev_sampled_bytes = t->sampled_bytes;
		t->prev_sampled_objects = t->sampled_objects;
		t->probe_hits_per_s = per_s(t->counters.probe_hits, t->prev_counters.probe_hits, d);
		t->prev_counters = t->counters;
		/* its last point is its last RSS and heap, at the tick that saw the death */
		target_stats_update(&t->stats, now_s, t->rss_bytes, t->inuse_bytes);
		if (!t->alive)
			t->final_done = true;
	}
}

static void tick(struct mt_model *m, __u64 now_ns)
{
	size_t n = m->nsite ? m->nsite : 1;
	bool *site_alive = calloc(n, sizeof(*site_alive));
	__u64 *site_end = calloc(n, sizeof(*site_end));
	double dt, now_s = now_ns / 1e9;

	if (!m->start_ns)
		m->start_ns = now_ns;
	dt = m->now_ns ? (now_ns - m->now_ns) / 1e9 : 0;
	m->interval_s = dt;
	if (site_alive && site_end) {
		tick_stacks(m, now_s, dt, site_alive, site_end);
		tick_sites(m, now_ns, dt, site_alive, site_end);
	}
	tick_targets(m, now_ns, now_s, dt);
	tick_devices(m, now_s);
	history_push(&m->clock, now_s, 0);
	m->now_ns = now_ns;
	free(site_alive);
	free(site_end);
}

void model_set_observer(struct mt_model *m, const struct mt_model_observer *o)
{
	if (o)
		m->obs = *o;
	else
		memset(&m->obs, 0, sizeof(m->obs));
}

/* ---- the one door ------------------------------------------------------ */

static void tell(const struct mt_model *m, const struct mt_input *in)
{
	if (m->obs.input)
		m->obs.input(m->obs.ctx, in);
}

/* A sample, told and counted. One without a frame is given MT_NO_FRAME:
 * a site is a frame of its stack, never one past its end. */
static int apply_alloc(struct mt_model *m, const struct mt_input *in)
{
	struct mt_frame none = { .function = m->s_no_frame, .module = m->s_no_frame };
	struct mt_sample_in framed = *in->alloc;
	struct mt_input told = *in;

	if (!framed.nframes) {
		framed.frames = &none;
		framed.nframes = 1;
	}
	told.alloc = &framed;
	tell(m, &told);
	return alloc_in(m, &framed);
}

int model_apply(struct mt_model *m, const struct mt_input *in)
{
	struct mt_target *t;

	switch (in->kind) {
	case MT_IN_ALLOC:
		return apply_alloc(m, in);
	case MT_IN_FREE:
		tell(m, in);
		free_in(m, in->pid, in->addr);
		return 0;
	case MT_IN_FACTS:
		tell(m, in);
		return apply_facts(m, in->facts);
	case MT_IN_ENDED:
		t = target_get(m, in->pid, false);
		if (!t)
			return -ENOENT;
		if (!t->alive)
			return 0; /* already ended: the first report stands */
		tell(m, in);
		target_ended(m, t, in->end, in->ts_ns);
		return 0;
	case MT_IN_DROP:
		tell(m, in);
		drop_process(m, in->pid);
		return 0;
	case MT_IN_DROPS:
		tell(m, in);
		m->drops.events_lost = in->drops->events_lost;
		m->drops.live_map_full = in->drops->live_map_full;
		m->drops.pending_full = in->drops->pending_full;
		if (in->drops->unknown_frees > m->drops.unknown_frees)
			m->drops.unknown_frees = in->drops->unknown_frees;
		if (in->drops->after_end > m->drops.after_end)
			m->drops.after_end = in->drops->after_end;
		return 0;
	case MT_IN_GROUP:
		if (in->group == m->group)
			return 0;
		tell(m, in);
		return set_group(m, in->group);
	case MT_IN_TICK:
		tell(m, in);
		tick(m, in->ts_ns);
		return 0;
	}
	return -EINVAL;
}

void model_live_each(const struct mt_model *m, void (*fn)(void *ctx, const struct mt_live_view *l),
		     void *ctx)
{
	size_t i;

	for (i = 0; i < m->live.cap; i++) {
		const struct live_sample *l = m->live.v[i].val;
		struct mt_live_view v;

		if (!l)
			continue;
		v = (struct mt_live_view){ .pid = l->pid,
					   .addr = l->addr,
					   .size = l->size,
					   .weight = l->weight,
					   .ts_ns = l->ts_ns,
					   .stack = l->agg->pub.stack };
		fn(ctx, &v);
	}
}

/* ---- sorting ------------------------------------------------------------ */

static double sort_value(const struct mt_site *s, enum mt_sort key)
{
	switch (key) {
	case MT_SORT_INUSE:
		return s->inuse_bytes;
	case MT_SORT_ALLOC_RATE: /* what the views show: the smoothed rates */
		return s->stats.rate_bytes_per_s;
	case MT_SORT_OBJ_RATE:
		return model_site_obj_rate(s);
	case MT_SORT_GROWTH:
		return s->stats.long_fit.slope;
	case MT_SORT_LEAK:
		return s->stats.leak_score;
	case MT_SORT_AGE:
		return s->stats.oldest_live_age_s;
	default:
		return 0;
	}
}

static enum mt_sort sort_key_for_qsort;

static const char *site_name(const struct mt_site *s)
{
	return s->frame->function ? s->frame->function : (s->frame->module ? s->frame->module : "");
}

static int site_cmp(const void *pa, const void *pb)
{
	const struct mt_site *a = *(struct mt_site *const *)pa, *b = *(struct mt_site *const *)pb;
	double va, vb;

	if (sort_key_for_qsort == MT_SORT_NAME)
		return strcmp(site_name(a), site_name(b));
	va = sort_value(a, sort_key_for_qsort);
	vb = sort_value(b, sort_key_for_qsort);
	if (va != vb)
		return va < vb ? 1 : -1;
	if (a->inuse_bytes != b->inuse_bytes)
		return a->inuse_bytes < b->inuse_bytes ? 1 : -1;
	return (int)a->id - (int)b->id;
}

size_t model_sites_sorted(const struct mt_model *m, enum mt_sort key, struct mt_site **out, size_t max)
{
	size_t n = m->nsite;

	if (!max)
		return 0;
	struct mt_site **tmp = malloc((n ? n : 1) * sizeof(*tmp));

	if (!tmp)
		return 0;
	if (n) /* site_v is NULL before the first site */
		memcpy(tmp, m->site_v, n * sizeof(*tmp));
	sort_key_for_qsort = key;
	qsort(tmp, n, sizeof(*tmp), site_cmp);
	if (n > max)
		n = max;
	memcpy(out, tmp, n * sizeof(*tmp));
	free(tmp);
	return n;
}

size_t model_sites_sorted_tier(const struct mt_model *m, enum mt_sort key, unsigned int tiers,
			       struct mt_site **out, size_t max)
{
	size_t n = m->nsite, i, k = 0;
	struct mt_site **all;

	if (tiers == MT_TIERS_ALL)
		return model_sites_sorted(m, key, out, max);
	all = malloc((n ? n : 1) * sizeof(*all));
	if (!all)
		return 0;
	n = model_sites_sorted(m, key, all, n);
	for (i = 0; i < n && k < max; i++)
		if (device_tier_shown(all[i]->stack->dev.tier, tiers))
			out[k++] = all[i];
	free(all);
	return k;
}

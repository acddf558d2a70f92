// SPDX-License-Identifier: GPL-2.0-only
/*
 * frontend_json.c - `memtop -b --json`: one JSON object per interval on
 * stdout, one line each (docs/json.md is the schema). Sites are sorted by
 * leak score, then in-use bytes; --top limits how many are written.
 */
#include "ui/frontend.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model/ingest_named.h"
#include "model/unseen.h"
#include "ui/figures.h"
#include "stacks/symbol_hint.h"
#include "util/clock.h"
#include "util/json_writer.h"
#include "ui/top_sites.h"

/* One "key": value member; the _or_null forms write null unless present. */
static void kv_uint(struct json_writer *w, const char *k, __u64 v)
{
	jw_key(w, k);
	jw_uint(w, v);
}

static void kv_int(struct json_writer *w, const char *k, __s64 v)
{
	jw_key(w, k);
	jw_int(w, v);
}

static void kv_bool(struct json_writer *w, const char *k, bool v)
{
	jw_key(w, k);
	jw_bool(w, v);
}

/* NULL writes null */
static void kv_string(struct json_writer *w, const char *k, const char *v)
{
	jw_key(w, k);
	jw_string(w, v);
}

static void kv_double(struct json_writer *w, const char *k, double v, int decimals)
{
	jw_key(w, k);
	jw_double_fixed(w, v, decimals);
}

static void kv_uint_or_null(struct json_writer *w, const char *k, __u64 v, bool present)
{
	jw_key(w, k);
	if (present)
		jw_uint(w, v);
	else
		jw_null(w);
}

static void kv_int_or_null(struct json_writer *w, const char *k, __s64 v, bool present)
{
	jw_key(w, k);
	if (present)
		jw_int(w, v);
	else
		jw_null(w);
}

static void kv_double_or_null(struct json_writer *w, const char *k, double v, int decimals,
			      bool present)
{
	jw_key(w, k);
	if (present)
		jw_double_fixed(w, v, decimals);
	else
		jw_null(w);
}

/* [low, high] of a measured figure (high null: unbounded), else null. */
static void write_range(struct json_writer *w, const char *k, bool present, double low, double high)
{
	jw_key(w, k);
	if (!present) {
		jw_null(w);
		return;
	}
	jw_array_begin(w);
	jw_double_fixed(w, low, 2);
	if (isfinite(high))
		jw_double_fixed(w, high, 2);
	else
		jw_null(w);
	jw_array_end(w);
}

/* Where a frame is: the members a site and each of its frames share. */
static void write_location(struct json_writer *w, const struct mt_frame *f)
{
	kv_string(w, "function", f->function);
	kv_string(w, "module", f->module ? f->module : "");
	kv_string(w, "file", f->file);
	kv_uint(w, "line", f->line);
}

static void write_frame(struct json_writer *w, const struct mt_frame *f)
{
	char hint[512];

	jw_object_begin(w);
	write_location(w, f);
	kv_uint(w, "offset", f->rel_addr);
	if (f->flags & MT_FRAME_INLINED)
		kv_bool(w, "inlined", true);
	if (symbol_hint(f, hint, sizeof(hint)))
		kv_string(w, "symbol_hint", hint);
	jw_object_end(w);
}

/* A JVM's Java heap (docs/java.md): null for a process that is not one
 * memtop looked at as a JVM. */
static void write_java(struct json_writer *w, const struct mt_target *t)
{
	jw_key(w, "java");
	if (!t->java[0] && !t->java_note[0]) {
		jw_null(w);
		return;
	}
	jw_object_begin(w);
	kv_string(w, "mechanism", t->java[0] ? t->java : NULL);
	kv_string(w, "note", t->java_note);
	kv_uint(w, "samples", t->java_samples);
	kv_uint(w, "dropped", t->java_dropped);
	kv_double(w, "slowdown_pct", t->java_slowdown_pct, 2);
	jw_object_end(w);
}

/* How a site's samples were taken: "jvmti" for frames a JVM named,
 * else the mechanism of the first target it has a stack in. */
static const char *site_mechanism(const struct mt_model *m, const struct mt_site *s)
{
	size_t i, n = model_stack_count(m);
	const char *named = ingest_named_mechanism(s->frame);

	if (named)
		return named; /* its runtime named it: "jvmti", "v8-sampling" */
	for (i = 0; i < n; i++) {
		if (model_stack_site(m, i) == s) {
			const struct mt_target *t = model_target(m, model_stack_at(m, i)->pid);

			return t && t->mechanism[0] ? t->mechanism : NULL;
		}
	}
	return NULL;
}

/* A device site's "device": which API, device and kind of memory. */
static void write_device_tag(struct json_writer *w, const struct mt_dev_tag *t)
{
	char kind[96];

	jw_key(w, "device");
	jw_object_begin(w);
	kv_string(w, "api", device_api_name(t->api));
	kv_uint(w, "index", t->index);
	kv_string(w, "kind", device_kind_describe(t->kind, kind, sizeof(kind)));
	jw_key(w, "memory_type");
	if (t->type >= 0)
		jw_uint(w, (__u64)t->type);
	else
		jw_null(w);
	jw_object_end(w);
}

/* Each device's memory held by the watched processes, and its growth. */
static void write_devices(struct json_writer *w, const struct mt_model *m)
{
	jw_key(w, "devices");
	jw_array_begin(w);
	for (size_t i = 0; i < model_device_count(m); i++) {
		const struct mt_device_total *d = model_device_at(m, i);

		jw_object_begin(w);
		kv_string(w, "api", device_api_name(d->api));
		kv_uint(w, "index", d->index);
		kv_double(w, "inuse_bytes", d->inuse_bytes, 0);
		kv_double(w, "growth_bytes_per_s", d->growth_bytes_per_s, 1);
		jw_object_end(w);
	}
	jw_array_end(w);
}

static void write_site(struct json_writer *w, const struct mt_model *m, const struct mt_site *s)
{
	const struct mt_site_stats *st = &s->stats;
	double absorbed;
	__u64 cap;
	__u32 i;
	int r;

	jw_object_begin(w);
	kv_uint(w, "id", s->id);
	kv_string(w, "source", s->stack->dev.tier ? "device" : s->stack->mmap ? "mmap" : "heap");
	kv_string(w, "tier", device_tier_name(s->stack->dev.tier));
	if (s->stack->dev.tier)
		write_device_tag(w, &s->stack->dev);
	kv_string(w, "mechanism", site_mechanism(m, s));
	write_location(w, s->frame);
	kv_double(w, "alloc_bytes_per_s", s->alloc_bytes_per_s, 1);
	kv_double(w, "alloc_objects_per_s", s->alloc_objects_per_s, 2);
	kv_double(w, "inuse_bytes", s->inuse_bytes, 0);
	kv_double(w, "inuse_objects", s->inuse_objects, 1);
	kv_double(w, "alloc_bytes", s->alloc_bytes, 0);
	kv_double(w, "alloc_objects", s->alloc_objects, 1);
	kv_uint(w, "samples", s->samples);
	kv_uint(w, "live_samples", s->live_samples);
	kv_uint(w, "untracked_samples", s->untracked_samples);
	kv_double(w, "slope_bytes_per_s", st->long_fit.slope, 1);
	kv_double(w, "slope_r2", st->long_fit.r2, 3);
	kv_double(w, "leak_score", st->leak_score, 1);
	kv_double(w, "leak_confidence", st->confidence, 2);
	jw_key(w, "leak_reasons");
	jw_array_begin(w);
	for (r = 0; r < st->nreasons && r < MT_REASONS; r++)
		jw_string(w, st->reasons[r]);
	jw_array_end(w);
	kv_double(w, "oldest_live_age_s", st->oldest_live_age_s, 1);
	kv_double(w, "freed_fraction", st->freed_fraction, 3);
	jw_key(w, "size_histogram");
	jw_object_begin(w);
	for (i = 0; i < MT_SIZE_BUCKETS; i++) {
		char key[24];

		if (!s->size_hist[i])
			continue;
		/* keyed by the bucket's upper bound: sizes in (2^(i-1), 2^i] */
		snprintf(key, sizeof(key), "%llu", 1ULL << i);
		jw_key(w, key);
		jw_uint(w, s->size_hist[i]);
	}
	jw_object_end(w);
	cap = model_site_inline_capacity(s, 0.9, &absorbed);
	kv_uint_or_null(w, "inline_capacity_90", cap, cap);
	if (cap)
		kv_double(w, "inline_absorbed", absorbed, 3);
	kv_bool(w, "truncated", s->stack->truncated);
	/* how far sampling lets these be trusted, and whether they still move */
	kv_double(w, "alloc_bytes_per_s_smoothed", st->rate_bytes_per_s, 1);
	kv_double(w, "rate_window_s", st->rate_window_s, 3);
	kv_double(w, "alloc_rate_rel_error", st->rate_rel_err, 3);
	kv_double(w, "inuse_rel_error", st->inuse_rel_err, 3);
	kv_double(w, "inuse_bytes_low", st->inuse_low_bytes, 0);
	kv_double(w, "inuse_bytes_high", st->inuse_high_bytes, 0);
	kv_bool(w, "growth_shown", st->growth_shown);
	kv_uint(w, "history_points", st->inuse.level[0].count);
	kv_bool(w, "ended", s->ended_ns != 0);
	jw_key(w, "stack");
	jw_array_begin(w);
	for (i = 0; i < s->stack->nframes; i++)
		write_frame(w, &s->stack->frames[i]);
	jw_array_end(w);
	jw_object_end(w);
}

static const char *const end_kinds[] = {
	[MT_END_NONE] = "alive", [MT_END_EXIT] = "exit",       [MT_END_SIGNAL] = "signal",
	[MT_END_OOM] = "oom",    [MT_END_UNKNOWN] = "unknown",
};

/* How a dead target ended (docs/json.md END). */
static void write_end(struct json_writer *w, const struct mt_target_end *e)
{
	char buf[160];
	bool sig = e->kind == MT_END_SIGNAL || e->kind == MT_END_OOM;

	jw_key(w, "end");
	jw_object_begin(w);
	kv_string(w, "how", end_kinds[e->kind]);
	model_end_describe(e, buf, sizeof(buf));
	kv_string(w, "description", buf);
	kv_int_or_null(w, "exit_code", e->code, e->kind == MT_END_EXIT);
	snprintf(buf, sizeof(buf), "SIG%s",
		 sig && sigabbrev_np(e->signal) ? sigabbrev_np(e->signal) : "");
	kv_string(w, "signal", sig ? buf : NULL);
	kv_int_or_null(w, "signal_number", e->signal, sig);
	kv_bool(w, "core_dumped", e->core);
	kv_double(w, "time", e->at_wall_s, 3);
	jw_key(w, "cgroup");
	if (e->have_cgroup) {
		jw_object_begin(w);
		kv_uint(w, "memory_current", e->cg_current);
		kv_uint_or_null(w, "memory_max", e->cg_max, e->cg_max);
		kv_int_or_null(w, "oom_kill", e->cg_oom_kill, e->cg_oom_kill >= 0);
		jw_object_end(w);
	} else {
		jw_null(w);
	}
	jw_object_end(w);
}

/* A managed runtime's name, and the words when memtop does not see most
 * of the target's memory (model/unseen.h); null when there are none. */
static void write_unseen(struct json_writer *w, const struct mt_target *t)
{
	char words[512];

	jw_key(w, "runtime");
	if (t->runtime[0])
		jw_string(w, t->runtime);
	else
		jw_null(w);
	kv_bool(w, "unseen_growth", unseen_growth(t));
	jw_key(w, "unseen_memory");
	if (unseen_describe(t, words, sizeof(words)))
		jw_string(w, words);
	else
		jw_null(w);
}

/* t and its figures; now_wall_s: the record's time, at the model's last
 * tick (when it began to be counted is told from it). */
static void write_target(struct json_writer *w, const struct mt_model *m, const struct mt_target *t,
			 double now_wall_s)
{
	__u64 now = model_now(m);

	jw_object_begin(w);
	kv_int(w, "pid", t->pid);
	kv_string(w, "comm", t->comm);
	kv_string(w, "allocator", t->allocator);
	kv_string(w, "mechanism", t->mechanism);
	jw_key(w, "mechanism_reason");
	if (t->mechanism_why[0])
		jw_string(w, t->mechanism_why);
	else
		jw_null(w);
	write_unseen(w, t);
	kv_bool(w, "alive", t->alive);
	if (t->alive) {
		jw_key(w, "end");
		jw_null(w);
	} else {
		write_end(w, &t->end);
	}
	write_java(w, t);
	kv_uint(w, "rss_bytes", t->rss_bytes);
	/* a process found after memtop started is counted from then on,
	 * not from its start */
	kv_double_or_null(w, "counted_since", now_wall_s - (double)(now - t->start_ns) / 1e9, 3,
			  t->start_ns && t->start_ns <= now);
	kv_bool(w, "counters_exact", t->counters_exact);
	/* counts memtop did not see are not zeros */
	kv_uint_or_null(w, "alloc_calls", t->counters.alloc_calls, t->counters_exact);
	kv_uint_or_null(w, "free_calls", t->counters.free_calls, t->counters_exact);
	kv_uint_or_null(w, "alloc_bytes", t->counters.alloc_bytes, t->counters_exact);
	kv_uint(w, "samples", t->counters.samples);
	kv_uint(w, "probe_hits", t->counters.probe_hits);
	kv_bool(w, "rates_exact", t->rates_exact);
	kv_double(w, "alloc_calls_per_s", t->alloc_calls_per_s, 1);
	kv_double(w, "alloc_bytes_per_s", t->alloc_bytes_per_s, 1);
	kv_double_or_null(w, "slowdown_pct", t->slowdown_pct, 2,
			  t->slowdown_measured && isfinite(t->slowdown_high_pct));
	write_range(w, "slowdown_range_pct", t->slowdown_measured, t->slowdown_low_pct,
		    t->slowdown_high_pct);
	kv_double(w, "phase_seen", t->phase_seen > 0 ? t->phase_seen : 1, 3);
	kv_double(w, "inuse_bytes", t->inuse_bytes, 0);
	kv_double(w, "device_inuse_bytes", t->device_inuse_bytes, 0);
	kv_double_or_null(w, "heap_explains_rss_growth", t->stats.heap_explains, 3,
			  t->stats.heap_explains >= 0);
	kv_uint(w, "stacks", t->nstacks);
	jw_key(w, "limits");
	jw_object_begin(w);
	kv_uint(w, "stacks_folded", t->limits.stacks_folded);
	kv_uint(w, "files_refused", t->limits.files_refused);
	kv_uint(w, "maps_cut", t->limits.maps_cut);
	kv_uint(w, "names_refused", t->limits.names_refused);
	jw_object_end(w);
	jw_object_end(w);
}

static void write_cgroup(struct json_writer *w, const struct mt_cgroup_status *cg)
{
	jw_key(w, "cgroup");
	jw_object_begin(w);
	kv_string(w, "path", cg->path);
	kv_int(w, "processes", cg->processes);
	if (cg->have_mem) {
		kv_string(w, "memory_source", cg->mem.v1 ? "v1" : "v2");
		kv_uint(w, "memory_current", cg->mem.current);
		kv_uint_or_null(w, "memory_max", cg->mem.max, cg->mem.max);
		kv_uint_or_null(w, "memory_high", cg->mem.high, cg->mem.high);
		kv_uint(w, "anon", cg->mem.anon);
		kv_uint(w, "file", cg->mem.file);
		kv_int_or_null(w, "oom", cg->mem.oom, cg->mem.oom >= 0);
		kv_int_or_null(w, "oom_kill", cg->mem.oom_kill, cg->mem.oom_kill >= 0);
		kv_double(w, "growth_bytes_per_s", cg->growth_bytes_per_s, 1);
		kv_double_or_null(w, "time_to_max_s", cg->time_to_max_s, 1, cg->time_to_max_s >= 0);
	}
	jw_object_end(w);
}

static void write_push(struct json_writer *w, const struct push_status *p)
{
	jw_key(w, "push");
	jw_object_begin(w);
	kv_uint(w, "sent", p->sent);
	kv_uint(w, "failed", p->failed);
	kv_uint(w, "dropped", p->dropped);
	kv_uint(w, "skipped", p->skipped);
	kv_bool(w, "pending", p->pending);
	kv_int_or_null(w, "last_ok_time", p->last_ok_time, p->last_ok_time);
	kv_string(w, "last_error", p->last_error);
	jw_object_end(w);
}

static void write_serve(struct json_writer *w, const struct serve_status *s)
{
	jw_key(w, "serve");
	jw_object_begin(w);
	kv_string(w, "address", s->address);
	kv_uint(w, "answered", s->answered);
	kv_uint(w, "errors", s->errors);
	kv_uint(w, "refused", s->refused);
	kv_uint(w, "open", s->open);
	jw_object_end(w);
}

static int json_start(struct mt_fe_ctx *ctx)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	return 0;
}

static int json_tick(struct mt_fe_ctx *ctx)
{
	struct mt_model *m = ctx->model;
	const struct mt_status *st = ctx->status;
	const struct mt_drops *d = model_drops(m);
	size_t n, i;
	struct mt_site **sites;
	struct json_writer w;
	double now_wall_s;

	sites = top_sites(ctx, &n);
	if (!sites)
		return MT_FE_NONE;

	jw_init(&w, stdout);
	jw_object_begin(&w);
	now_wall_s = st->wall_s > 0 ? st->wall_s : clock_wall_s();
	kv_double(&w, "time", now_wall_s, 3);
	kv_double(&w, "interval_s", model_interval_s(m), 3);
	kv_uint(&w, "rate", model_rate(m));
	if (st->cmd_log)
		kv_string(&w, "cmd_log", st->cmd_log);
	jw_key(&w, "targets");
	jw_array_begin(&w);
	for (i = 0; i < model_target_count(m); i++)
		write_target(&w, m, model_target_at(m, i), now_wall_s);
	jw_array_end(&w);
	jw_key(&w, "sites");
	jw_array_begin(&w);
	for (i = 0; i < n; i++)
		write_site(&w, m, sites[i]);
	jw_array_end(&w);
	write_devices(&w, m);
	if (st->cgroup.on)
		write_cgroup(&w, &st->cgroup);
	if (st->push_on)
		write_push(&w, &st->push);
	if (st->serve_on)
		write_serve(&w, &st->serve);
	jw_key(&w, "dropped");
	jw_object_begin(&w);
	kv_uint(&w, "events", d->events_lost);
	kv_uint(&w, "live_map_full", d->live_map_full);
	kv_uint(&w, "pending_full", d->pending_full);
	kv_uint(&w, "unknown_frees", d->unknown_frees);
	kv_uint(&w, "after_end", d->after_end);
	jw_object_end(&w);
	jw_key(&w, "overhead");
	jw_object_begin(&w);
	kv_string(&w, "mode", st->probe_mode ? st->probe_mode : "");
	kv_double(&w, "probe_hits_per_s", st->probe_hits_per_s, 1);
	kv_double(&w, "est_cpu_pct", st->est_cpu_pct, 2);
	kv_double(&w, "events_per_s", st->events_per_s, 1);
	kv_double(&w, "trap_ns", st->trap_ns, 0);
	/* a figure not measured yet, or known only from below, is no
	 * figure: null, and why */
	kv_double_or_null(&w, "est_slowdown_pct", st->est_slowdown_pct, 2,
			  st->est_slowdown_measured && isfinite(st->est_slowdown_high_pct));
	write_range(&w, "est_slowdown_range_pct", st->est_slowdown_measured,
		    st->est_slowdown_low_pct, st->est_slowdown_high_pct);
	jw_key(&w, "est_slowdown_note");
	if (!st->est_slowdown_measured)
		jw_string(&w, FIG_SLOWDOWN_NOT_MEASURED);
	else if (!isfinite(st->est_slowdown_high_pct))
		jw_string(&w, FIG_SLOWDOWN_UNBOUNDED);
	else
		jw_null(&w);
	kv_double_or_null(&w, "floor_pct", st->floor_pct, 2, st->est_slowdown_measured);
	kv_double(&w, "hit_ns", st->cost_ns, 0);
	kv_bool(&w, "hit_ns_measured", st->cost_measured);
	kv_double(&w, "budget_pct", st->budget_pct, 1);
	kv_double(&w, "duty", st->duty, 3);
	kv_uint(&w, "sampling_rate_bytes", st->phase_rate);
	kv_bool(&w, "backed_off", st->backed_off);
	kv_bool(&w, "budget_unreachable", st->budget_unreachable);
	jw_key(&w, "budget_note");
	if (st->budget_note[0])
		jw_string(&w, st->budget_note);
	else
		jw_null(&w);
	kv_bool(&w, "counters_exact", st->counters_exact);
	jw_object_end(&w);
	jw_object_end(&w);
	if (jw_finish(&w))
		fprintf(stderr, "memtop: cannot write JSON: %s\n", strerror(-jw_finish(&w)));
	fputc('\n', stdout);
	fflush(stdout);
	jw_fini(&w);
	free(sites);
	return MT_FE_NONE;
}

static void json_stop(struct mt_fe_ctx *ctx)
{
	fflush(stdout);
}

const struct mt_frontend frontend_json = {
	.name = "json",
	.start = json_start,
	.tick = json_tick,
	.stop = json_stop,
};

// SPDX-License-Identifier: GPL-2.0-only
/*
 * frontend_json.c - `memtop -b --json`: one JSON object per interval on
 * stdout, one line each (docs/json.md is the schema). Sites are sorted by
 * leak score, then in-use bytes; --top limits how many are written.
 */
#include "memtop/frontend.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "memtop/json_writer.h"

static void write_frame(struct json_writer *w, const struct mt_frame *f)
{
	jw_object_begin(w);
	jw_key(w, "function");
	if (f->function)
		jw_string(w, f->function);
	else
		jw_null(w);
	jw_key(w, "module");
	jw_string(w, f->module ? f->module : "");
	jw_key(w, "file");
	if (f->file)
		jw_string(w, f->file);
	else
		jw_null(w);
	jw_key(w, "line");
	jw_uint(w, f->line);
	jw_key(w, "offset");
	jw_uint(w, f->rel_addr);
	if (f->flags & MT_FRAME_INLINED) {
		jw_key(w, "inlined");
		jw_bool(w, true);
	}
	jw_object_end(w);
}

static void write_site(struct json_writer *w, const struct mt_site *s)
{
	const struct mt_frame *f = s->frame;
	const struct mt_site_stats *st = &s->stats;
	__u32 i;
	int r;

	jw_object_begin(w);
	jw_key(w, "id");
	jw_uint(w, s->id);
	jw_key(w, "function");
	if (f->function)
		jw_string(w, f->function);
	else
		jw_null(w);
	jw_key(w, "module");
	jw_string(w, f->module ? f->module : "");
	jw_key(w, "file");
	if (f->file)
		jw_string(w, f->file);
	else
		jw_null(w);
	jw_key(w, "line");
	jw_uint(w, f->line);
	jw_key(w, "alloc_bytes_per_s");
	jw_double_fixed(w, s->alloc_bytes_per_s, 1);
	jw_key(w, "alloc_objects_per_s");
	jw_double_fixed(w, s->alloc_objects_per_s, 2);
	jw_key(w, "inuse_bytes");
	jw_double_fixed(w, s->inuse_bytes, 0);
	jw_key(w, "inuse_objects");
	jw_double_fixed(w, s->inuse_objects, 1);
	jw_key(w, "alloc_bytes");
	jw_double_fixed(w, s->alloc_bytes, 0);
	jw_key(w, "alloc_objects");
	jw_double_fixed(w, s->alloc_objects, 1);
	jw_key(w, "samples");
	jw_uint(w, s->samples);
	jw_key(w, "live_samples");
	jw_uint(w, s->live_samples);
	jw_key(w, "slope_bytes_per_s");
	jw_double_fixed(w, st->long_fit.slope, 1);
	jw_key(w, "slope_r2");
	jw_double_fixed(w, st->long_fit.r2, 3);
	jw_key(w, "leak_score");
	jw_double_fixed(w, st->leak_score, 1);
	jw_key(w, "leak_confidence");
	jw_double_fixed(w, st->confidence, 2);
	jw_key(w, "leak_reasons");
	jw_array_begin(w);
	for (r = 0; r < st->nreasons && r < MT_REASONS; r++)
		jw_string(w, st->reasons[r]);
	jw_array_end(w);
	jw_key(w, "oldest_live_age_s");
	jw_double_fixed(w, st->oldest_live_age_s, 1);
	jw_key(w, "freed_fraction");
	jw_double_fixed(w, st->freed_fraction, 3);
	jw_key(w, "size_histogram");
	jw_object_begin(w);
	for (i = 0; i < MT_SIZE_BUCKETS; i++) {
		char key[24];

		if (!s->size_hist[i])
			continue;
		snprintf(key, sizeof(key), "%llu", 1ULL << i);
		jw_key(w, key);
		jw_uint(w, s->size_hist[i]);
	}
	jw_object_end(w);
	jw_key(w, "truncated");
	jw_bool(w, s->stack->truncated);
	jw_key(w, "stack");
	jw_array_begin(w);
	for (i = 0; i < s->stack->nframes; i++)
		write_frame(w, &s->stack->frames[i]);
	jw_array_end(w);
	jw_object_end(w);
}

static void write_target(struct json_writer *w, const struct mt_target *t)
{
	jw_object_begin(w);
	jw_key(w, "pid");
	jw_int(w, t->pid);
	jw_key(w, "comm");
	jw_string(w, t->comm);
	jw_key(w, "alive");
	jw_bool(w, t->alive);
	jw_key(w, "rss_bytes");
	jw_uint(w, t->rss_bytes);
	jw_key(w, "counters_exact");
	jw_bool(w, t->counters_exact);
	/* counts memtop did not see are not zeros */
	jw_key(w, "alloc_calls");
	if (t->counters_exact)
		jw_uint(w, t->counters.alloc_calls);
	else
		jw_null(w);
	jw_key(w, "free_calls");
	if (t->counters_exact)
		jw_uint(w, t->counters.free_calls);
	else
		jw_null(w);
	jw_key(w, "alloc_bytes");
	if (t->counters_exact)
		jw_uint(w, t->counters.alloc_bytes);
	else
		jw_null(w);
	jw_key(w, "samples");
	jw_uint(w, t->counters.samples);
	jw_key(w, "probe_hits");
	jw_uint(w, t->counters.probe_hits);
	jw_key(w, "alloc_calls_per_s");
	jw_double_fixed(w, t->alloc_calls_per_s, 1);
	jw_key(w, "alloc_bytes_per_s");
	jw_double_fixed(w, t->alloc_bytes_per_s, 1);
	jw_key(w, "inuse_bytes");
	jw_double_fixed(w, t->inuse_bytes, 0);
	jw_key(w, "heap_explains_rss_growth");
	if (t->stats.heap_explains >= 0)
		jw_double_fixed(w, t->stats.heap_explains, 3);
	else
		jw_null(w);
	jw_object_end(w);
}

static void write_opt_count(struct json_writer *w, const char *key, __s64 v)
{
	jw_key(w, key);
	if (v >= 0)
		jw_int(w, v);
	else
		jw_null(w);
}

static void write_cgroup(struct json_writer *w, const struct mt_cgroup_status *cg)
{
	jw_key(w, "cgroup");
	jw_object_begin(w);
	jw_key(w, "path");
	jw_string(w, cg->path);
	jw_key(w, "processes");
	jw_int(w, cg->processes);
	if (cg->have_mem) {
		jw_key(w, "memory_source");
		jw_string(w, cg->mem.v1 ? "v1" : "v2");
		jw_key(w, "memory_current");
		jw_uint(w, cg->mem.current);
		jw_key(w, "memory_max");
		if (cg->mem.max)
			jw_uint(w, cg->mem.max);
		else
			jw_null(w);
		jw_key(w, "memory_high");
		if (cg->mem.high)
			jw_uint(w, cg->mem.high);
		else
			jw_null(w);
		jw_key(w, "anon");
		jw_uint(w, cg->mem.anon);
		jw_key(w, "file");
		jw_uint(w, cg->mem.file);
		write_opt_count(w, "oom", cg->mem.oom);
		write_opt_count(w, "oom_kill", cg->mem.oom_kill);
		jw_key(w, "growth_bytes_per_s");
		jw_double_fixed(w, cg->growth_bytes_per_s, 1);
		jw_key(w, "time_to_max_s");
		if (cg->time_to_max_s >= 0)
			jw_double_fixed(w, cg->time_to_max_s, 1);
		else
			jw_null(w);
	}
	jw_object_end(w);
}

static void write_push(struct json_writer *w, const struct push_status *p)
{
	jw_key(w, "push");
	jw_object_begin(w);
	jw_key(w, "sent");
	jw_uint(w, p->sent);
	jw_key(w, "failed");
	jw_uint(w, p->failed);
	jw_key(w, "dropped");
	jw_uint(w, p->dropped);
	jw_key(w, "skipped");
	jw_uint(w, p->skipped);
	jw_key(w, "pending");
	jw_bool(w, p->pending);
	jw_key(w, "last_ok_time");
	if (p->last_ok_time)
		jw_int(w, p->last_ok_time);
	else
		jw_null(w);
	jw_key(w, "last_error");
	jw_string(w, p->last_error);
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
	size_t n = model_site_count(m), i;
	struct mt_site **sites;
	struct json_writer w;
	struct timespec now;

	if (ctx->cfg->top > 0 && (size_t)ctx->cfg->top < n)
		n = ctx->cfg->top;
	sites = calloc(n ? n : 1, sizeof(*sites));
	if (!sites)
		return MT_FE_NONE;
	n = model_sites_sorted(m, MT_SORT_LEAK, sites, n);
	clock_gettime(CLOCK_REALTIME, &now);

	jw_init(&w, stdout);
	jw_object_begin(&w);
	jw_key(&w, "time");
	jw_double_fixed(&w, now.tv_sec + now.tv_nsec / 1e9, 3);
	jw_key(&w, "interval_s");
	jw_double_fixed(&w, model_interval_s(m), 3);
	jw_key(&w, "rate");
	jw_uint(&w, model_rate(m));
	jw_key(&w, "targets");
	jw_array_begin(&w);
	for (i = 0; i < model_target_count(m); i++)
		write_target(&w, model_target_at(m, i));
	jw_array_end(&w);
	jw_key(&w, "sites");
	jw_array_begin(&w);
	for (i = 0; i < n; i++)
		write_site(&w, sites[i]);
	jw_array_end(&w);
	if (st->cgroup.on)
		write_cgroup(&w, &st->cgroup);
	if (st->push_on)
		write_push(&w, &st->push);
	jw_key(&w, "dropped");
	jw_object_begin(&w);
	jw_key(&w, "events");
	jw_uint(&w, d->events_lost);
	jw_key(&w, "live_map_full");
	jw_uint(&w, d->live_map_full);
	jw_key(&w, "pending_full");
	jw_uint(&w, d->pending_full);
	jw_key(&w, "unknown_frees");
	jw_uint(&w, d->unknown_frees);
	jw_object_end(&w);
	jw_key(&w, "overhead");
	jw_object_begin(&w);
	jw_key(&w, "mode");
	jw_string(&w, st->probe_mode ? st->probe_mode : "");
	jw_key(&w, "probe_hits_per_s");
	jw_double_fixed(&w, st->probe_hits_per_s, 1);
	jw_key(&w, "est_cpu_pct");
	jw_double_fixed(&w, st->est_cpu_pct, 2);
	jw_key(&w, "events_per_s");
	jw_double_fixed(&w, st->events_per_s, 1);
	jw_key(&w, "trap_ns");
	jw_double_fixed(&w, st->trap_ns, 0);
	jw_key(&w, "est_slowdown_pct");
	jw_double_fixed(&w, st->est_slowdown_pct, 2);
	jw_key(&w, "budget_pct");
	jw_double_fixed(&w, st->budget_pct, 1);
	jw_key(&w, "duty");
	jw_double_fixed(&w, st->duty, 3);
	jw_key(&w, "backed_off");
	jw_bool(&w, st->backed_off);
	jw_key(&w, "counters_exact");
	jw_bool(&w, st->counters_exact);
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

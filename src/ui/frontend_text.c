// SPDX-License-Identifier: GPL-2.0-only
/*
 * frontend_text.c - `memtop -b`: a top-like text report per interval on
 * stdout, targets first, then call sites by leak score and in-use bytes.
 */
#include "ui/frontend.h"
#include "model/unseen.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ui/figures.h"
#include "ui/format.h"
#include "util/sanitize.h"
#include "ui/top_sites.h"

/* The last status message printed, so each is printed once. */
struct text_state {
	char last_message[sizeof(((struct mt_status *)0)->message)];
};

static int text_start(struct mt_fe_ctx *ctx)
{
	ctx->priv = calloc(1, sizeof(struct text_state));
	if (!ctx->priv)
		return -ENOMEM;
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("ALLOC/s and OBJ/s: over the last %.0f s; ~: sampling error above %.0f%%; "
	       "GROWTH/m: - until it stands out of the noise\n\n",
	       MT_RATE_WINDOW_S, 100 * MT_APPROX_REL_ERR);
	return 0;
}

static void print_targets(struct mt_model *m)
{
	char rss[16], heap[16], rate[16], calls[16];
	char comm[64];
	size_t i;

	/* ALLOCATOR holds the longest name attach.c makes, a chained pair
	 * such as "glibc+jemalloc" (14) */
	printf("%7s %-15s %-14s %-10s %-7s %7s %7s %9s %8s %12s %12s\n", "PID", "COMM", "ALLOCATOR",
	       "HOW", "STATE", "RSS", "HEAP", "ALLOC/s", "CALLS/s", "ALLOCS", "FREES");
	for (i = 0; i < model_target_count(m); i++) {
		const struct mt_target *t = model_target_at(m, i);
		char allocs[24] = "-", frees[24] = "-", state[16];

		/* counts memtop did not see are shown as "-", not zeros */
		if (t->counters_exact) {
			snprintf(allocs, sizeof(allocs), "%llu",
				 (unsigned long long)t->counters.alloc_calls);
			snprintf(frees, sizeof(frees), "%llu",
				 (unsigned long long)t->counters.free_calls);
		}
		/* rates are exact again once an interval was fully probed */
		fmt_process_rates(rate, sizeof(rate), calls, sizeof(calls), t->alloc_bytes_per_s,
				  t->alloc_calls_per_s, t->rates_exact);
		printf("%7d %-15s %-14s %-10s %-7s %7s %7s %7s/s %8s %12s %12s\n", t->pid,
		       sanitize_text(comm, sizeof(comm), t->comm),
		       t->allocator[0] ? t->allocator : "-", t->mechanism[0] ? t->mechanism : "-",
		       fig_state(state, sizeof(state), t), fmt_bytes(rss, sizeof(rss), t->rss_bytes),
		       fmt_bytes(heap, sizeof(heap), t->inuse_bytes), rate, calls, allocs, frees);
	}
	/* how each dead one ended, in words; its figures above are as at its death */
	for (i = 0; i < model_target_count(m); i++) {
		const struct mt_target *t = model_target_at(m, i);
		char how[160], when[16];
		time_t at = (time_t)t->end.at_wall_s;
		struct tm tm;

		if (t->alive)
			continue;
		model_end_describe(&t->end, how, sizeof(how));
		localtime_r(&at, &tm);
		strftime(when, sizeof(when), "%H:%M:%S", &tm);
		printf("ended: PID %d %s at %s; its figures are as at that moment\n", t->pid, how,
		       when);
	}
	/* memory memtop does not see, in words (model/unseen.h) */
	for (i = 0; i < model_target_count(m); i++) {
		const struct mt_target *t = model_target_at(m, i);
		char words[512];

		if (t->alive && unseen_describe(t, words, sizeof(words)))
			printf("%s: PID %d (%s): %s\n", unseen_growth(t) ? "warning" : "note",
			       t->pid, sanitize_text(comm, sizeof(comm), t->comm), words);
	}
}

static void print_cgroup(const struct mt_cgroup_status *cg)
{
	char cur[16], max[16], rate[16], eta[16];

	if (!cg->have_mem) {
		printf("cgroup %s  %d processes  (no memory controller)\n", cg->path, cg->processes);
		return;
	}
	printf("cgroup %s  %d processes  memory %s / %s  growth %s/s  limit in %s  oom_kill %lld\n",
	       cg->path, cg->processes, fmt_bytes(cur, sizeof(cur), cg->mem.current),
	       cg->mem.max ? fmt_bytes(max, sizeof(max), cg->mem.max) : "max",
	       fmt_bytes(rate, sizeof(rate), cg->growth_bytes_per_s),
	       fmt_age(eta, sizeof(eta), cg->time_to_max_s), (long long)cg->mem.oom_kill);
}

/* One line per device: the memory the watched processes hold on it. */
static void print_devices(const struct mt_model *m)
{
	char held[16], growth[16];

	for (size_t i = 0; i < model_device_count(m); i++) {
		const struct mt_device_total *d = model_device_at(m, i);

		printf("device %s:%u  held %s  growth %s/s\n", device_api_name(d->api), d->index,
		       fmt_bytes(held, sizeof(held), d->inuse_bytes),
		       fmt_bytes(growth, sizeof(growth), d->growth_bytes_per_s));
	}
}

static int text_tick(struct mt_fe_ctx *ctx)
{
	struct text_state *ts = ctx->priv;
	struct mt_model *m = ctx->model;
	const struct mt_status *st = ctx->status;
	const struct mt_drops *d = model_drops(m);
	size_t n, i;
	struct mt_site **sites;
	char a[16], b[16], c[16], e[16], g[16], label[512], slow[48];
	time_t now = st->wall_s > 0 ? (time_t)st->wall_s : time(NULL);
	struct tm tm;

	sites = top_sites(ctx, &n);
	if (!sites)
		return MT_FE_NONE;
	localtime_r(&now, &tm);
	printf("memtop %02d:%02d:%02d  interval %.1fs  rate %s  mode %s  events/s %.0f  lost %llu  untracked %llu\n",
	       tm.tm_hour, tm.tm_min, tm.tm_sec, model_interval_s(m),
	       fmt_bytes(a, sizeof(a), model_rate(m)), st->probe_mode ? st->probe_mode : "?",
	       st->events_per_s, (unsigned long long)d->events_lost,
	       (unsigned long long)d->live_map_full);
	if (st->cmd_log)
		printf("command output: %s\n", st->cmd_log);
	printf("overhead: target slowdown %s, %.0f ns per probe hit (%s), %.0f hits/s",
	       st->est_slowdown_measured
		       ? fig_slowdown(slow, sizeof(slow), true, st->est_slowdown_pct,
				      st->est_slowdown_low_pct, st->est_slowdown_high_pct)
		       : "not measured yet",
	       st->cost_ns > 0 ? st->cost_ns : st->trap_ns,
	       st->cost_measured ? "measured on the target" : "calibrated on memtop",
	       st->probe_hits_per_s);
	if (st->backed_off) {
		char off[64];

		printf(", budget %.0f%%: %s, total counts not exact", st->budget_pct,
		       fmt_backoff(off, sizeof(off), true, st->duty, (double)st->phase_rate));
	}
	putchar('\n');
	if (st->message[0] && strcmp(st->message, ts->last_message)) {
		char note[sizeof(st->message)];

		printf("note: %s\n", sanitize_text(note, sizeof(note), st->message));
		memcpy(ts->last_message, st->message, sizeof(ts->last_message));
	}
	if (st->cgroup.on)
		print_cgroup(&st->cgroup);
	print_targets(m);
	print_devices(m);
	printf("%9s %8s %8s %8s %5s %6s %8s  %s\n", "ALLOC/s", "OBJ/s", "IN-USE", "GROWTH/m",
	       "LEAK", "AGE", "SAMPLES", "FUNCTION (MODULE FILE:LINE)");
	for (i = 0; i < n; i++) {
		const struct mt_site *s = sites[i];
		char untracked[64] = "", dev[128] = "";

		if (s->untracked_samples)
			snprintf(untracked, sizeof(untracked),
				 " [in-use low: %llu untracked, --live-max]",
				 (unsigned long long)s->untracked_samples);
		if (s->stack->dev.tier) {
			dev[0] = ' ';
			dev[1] = '[';
			device_tag_describe(&s->stack->dev, dev + 2, sizeof(dev) - 3);
			strcat(dev, "]");
		}
		printf("%7s/s %8s %8s %8s %5.0f %6s %8llu  %s%s%s%s%s%s\n",
		       fig_rate(a, sizeof(a), s), fig_obj_rate(b, sizeof(b), s),
		       fig_inuse(c, sizeof(c), s, s->inuse_bytes), fig_growth(e, sizeof(e), s),
		       s->stats.leak_score, fmt_age(g, sizeof(g), s->stats.oldest_live_age_s),
		       (unsigned long long)s->samples, fmt_frame(label, sizeof(label), s->frame), dev,
		       s->stack->mmap ? " [mmap]" : "", s->stack->truncated ? " [truncated]" : "",
		       s->ended_ns ? " [ended]" : "", untracked);
	}
	putchar('\n');
	fflush(stdout);
	free(sites);
	return MT_FE_NONE;
}

static void text_stop(struct mt_fe_ctx *ctx)
{
	fflush(stdout);
	free(ctx->priv);
	ctx->priv = NULL;
}

const struct mt_frontend frontend_text = {
	.name = "text",
	.start = text_start,
	.tick = text_tick,
	.stop = text_stop,
};

// SPDX-License-Identifier: GPL-2.0-only
/*
 * view_site.c - one call site in depth (Enter in the site table): its
 * figures, why it scores what it does, its stacks by name, its in-use
 * history as a graph, and its size distribution with the inline-capacity
 * advice. Scrolls as one long page; Esc goes back.
 *
 * The site is found again by id at each refresh and copied, so the page
 * holds still while paused and survives the site disappearing (after a
 * regroup) by saying so. A site whose processes all ended says how the
 * last one ended, and its graph stops at that moment with a marker.
 */
#include "ui/tui/tui.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "ui/figures.h"
#include "ui/format.h"
#include "model/stats.h"
#include "stacks/symbol_hint.h"

#define GRAPH_MAX 512
#define HIST_LINES 12
#define INLINE_FRACTION 0.9

/* Whether stack belongs to site under the model's current grouping; the
 * same identity as model.c's site key (function and module, plus file and
 * line when grouping by line, or the whole stack). */
static void collect_stacks(struct tui *t, const struct mt_site *s)
{
	struct tui_site *p = &t->site;
	size_t n = model_stack_count(t->model);

	p->nstacks = 0;
	p->more_stacks = 0;
	for (size_t i = 0; i < n; i++) {
		const struct mt_stack_agg *a = model_stack_at(t->model, i);
		struct tui_site_stack e;
		int k;

		if (!a || !a->stack || model_stack_site(t->model, i) != s)
			continue;
		e = (struct tui_site_stack){ a->stack, a->pid, a->inuse_bytes, a->alloc_bytes };
		/* Insertion into the top TUI_SITE_STACKS by in-use, then allocated. */
		for (k = p->nstacks; k > 0; k--) {
			const struct tui_site_stack *o = &p->stacks[k - 1];

			if (o->inuse_bytes > e.inuse_bytes ||
			    (o->inuse_bytes == e.inuse_bytes && o->alloc_bytes >= e.alloc_bytes))
				break;
		}
		if (k >= TUI_SITE_STACKS) {
			p->more_stacks++;
			continue;
		}
		if (p->nstacks == TUI_SITE_STACKS)
			p->more_stacks++;
		else
			p->nstacks++;
		memmove(&p->stacks[k + 1], &p->stacks[k], (p->nstacks - 1 - k) * sizeof(e));
		p->stacks[k] = e;
	}
}

static void site_refresh(struct tui *t)
{
	struct tui_site *p = &t->site;
	size_t n = model_site_count(t->model);

	for (size_t i = 0; i < n; i++) {
		const struct mt_site *s = model_site_at(t->model, i);

		if (s->id != p->id)
			continue;
		p->valid = true;
		p->snap = *s;
		p->frame = *s->frame;
		collect_stacks(t, s);
		return;
	}
	p->valid = false;
}

/* The target whose death ended site s (the last of its processes to go). */
static const struct mt_target *ending_target(const struct tui *t, const struct mt_site *s)
{
	for (size_t i = 0; i < model_target_count(t->model); i++) {
		const struct mt_target *tg = model_target_at(t->model, i);

		if (!tg->alive && tg->exit_ns == s->ended_ns)
			return tg;
	}
	return NULL;
}

/* "ended 12:03:04: PID 42 killed by SIGSEGV" */
static void fmt_ended(const struct tui *t, const struct mt_site *s, char *buf, size_t len)
{
	const struct mt_target *tg = ending_target(t, s);
	char how[160], when[16] = "?";
	time_t at;
	struct tm tm;

	if (!tg) {
		snprintf(buf, len, "ended");
		return;
	}
	at = (time_t)tg->end.at_wall_s;
	if (localtime_r(&at, &tm))
		strftime(when, sizeof(when), "%H:%M:%S", &tm);
	model_end_describe(&tg->end, how, sizeof(how));
	snprintf(buf, len, "ended %s: PID %d %s", when, (int)tg->pid, how);
}

static void title(struct tui *t, struct tui_page *pg, const char *s)
{
	tui_page_line(pg); /* blank line before a section */
	tui_put(t, tui_page_line(pg), 0, t->cols, t->attr[THEME_TITLE], s);
}

static void draw_summary(struct tui *t, struct tui_page *pg)
{
	const struct mt_site *s = &t->site.snap;
	const struct mt_site_stats *st = &s->stats;
	char a[32], b[32], c[32], d[32];
	int y, x;
	enum theme_elem le = st->leak_score >= 60   ? THEME_LEAK_HIGH
			     : st->leak_score >= 30 ? THEME_LEAK_MID
						    : THEME_LEAK_LOW;

	tui_put_frame(t, tui_page_line(pg), 0, t->cols, &t->site.frame, t->attr[THEME_TITLE],
		      t->attr[THEME_DIM]);
	if (s->ended_ns) {
		char ended[256];

		fmt_ended(t, s, ended, sizeof(ended));
		tui_putf(t, tui_page_line(pg), 2, t->cols - 2, t->attr[THEME_WARNING],
			 "%s; every figure here is as at that moment", ended);
	}
	tui_putf(t, tui_page_line(pg), 2, t->cols - 2, t->attr[THEME_NORMAL],
		 "in use %s in %llu live samples   allocated %s   freed %.0f%%",
		 fig_inuse(a, sizeof(a), s, s->inuse_bytes), (unsigned long long)s->live_samples,
		 fmt_bytes(b, sizeof(b), s->alloc_bytes), 100 * st->freed_fraction);
	if (st->inuse_high_bytes > 1.1 * st->inuse_low_bytes)
		tui_putf(t, tui_page_line(pg), 2, t->cols - 2, t->attr[THEME_NORMAL],
			 "in use is %s to %s: the back-off saw its process's work and the "
			 "time in different shares (probes.md 6.5)",
			 fmt_bytes(a, sizeof(a), st->inuse_low_bytes),
			 fmt_bytes(b, sizeof(b), st->inuse_high_bytes));
	if (s->untracked_samples)
		tui_putf(t, tui_page_line(pg), 2, t->cols - 2, t->attr[THEME_WARNING],
			 "in use is low: %llu of its samples found the live map full and are "
			 "not tracked (raise --live-max)",
			 (unsigned long long)s->untracked_samples);
	tui_putf(t, tui_page_line(pg), 2, t->cols - 2, t->attr[THEME_NORMAL],
		 "allocating %s/s, %s objects/s over the last %s   oldest live %s   %llu samples%s",
		 fig_rate(a, sizeof(a), s), fig_obj_rate(b, sizeof(b), s),
		 fmt_age(d, sizeof(d), st->rate_window_s),
		 fmt_age(c, sizeof(c), st->oldest_live_age_s), (unsigned long long)s->samples,
		 s->truncated_samples ? " (some stacks incomplete)" : "");
	if (st->growth_shown)
		tui_putf(t, tui_page_line(pg), 2, t->cols - 2, t->attr[THEME_NORMAL],
			 "growth %s/min over %s (%s %.2f), recently %s/min%s",
			 tui_fmt_growth(a, sizeof(a), st->long_fit.slope * 60),
			 fmt_age(b, sizeof(b), st->long_fit.span_s), t->unicode ? "R\u00b2" : "R^2",
			 st->long_fit.r2, tui_fmt_growth(d, sizeof(d), st->short_fit.slope * 60),
			 st->plateau ? ", levelling off" : "");
	else
		tui_putf(t, tui_page_line(pg), 2, t->cols - 2, t->attr[THEME_DIM],
			 "growth: none that stands out of the sampling noise over %s",
			 fmt_age(b, sizeof(b), st->long_fit.span_s));
	y = tui_page_line(pg);
	x = 2 + tui_put(t, y, 2, t->cols - 2, t->attr[THEME_NORMAL], "leak score ");
	x += tui_putf(t, y, x, t->cols - x, t->attr[le], "%.0f ", st->leak_score);
	tui_bar(t, y, x, 10, st->leak_score / 100, t->attr[le]);
	x += 11;
	tui_putf(t, y, x, t->cols - x, t->attr[THEME_DIM], "confidence %.0f%%", 100 * st->confidence);
}

static void draw_reasons(struct tui *t, struct tui_page *pg)
{
	const struct mt_site_stats *st = &t->site.snap.stats;

	title(t, pg, "Why this score");
	if (st->nreasons == 0)
		tui_put(t, tui_page_line(pg), 2, t->cols - 2, t->attr[THEME_DIM], "no reasons yet");
	for (int i = 0; i < st->nreasons && i < MT_REASONS; i++)
		tui_putf(t, tui_page_line(pg), 2, t->cols - 2, t->attr[THEME_NORMAL], "%s %s",
			 t->unicode ? "\u2022" : "-", st->reasons[i]);
}

/* For each stripped module of a stack (frames without a symbol), once:
 * how to get its symbols. */
static void draw_symbol_hints(struct tui *t, struct tui_page *pg, const struct mt_stack *st)
{
	char hint[512];

	for (__u32 f = 0; f < st->nframes; f++) {
		bool seen = false;

		for (__u32 g = 0; g < f && !seen; g++)
			seen = (st->frames[g].flags & MT_FRAME_NOSYM) &&
			       st->frames[g].module_path == st->frames[f].module_path;
		if (!seen && symbol_hint(&st->frames[f], hint, sizeof(hint)))
			tui_put(t, tui_page_line(pg), 4, t->cols - 4, t->attr[THEME_DIM], hint);
	}
}

static void draw_stacks(struct tui *t, struct tui_page *pg)
{
	const struct tui_site *p = &t->site;
	char a[32], b[32], head[96];

	snprintf(head, sizeof(head), "Stacks (%d%s, by in-use)", p->nstacks + p->more_stacks,
		 p->more_stacks ? ", largest shown" : "");
	title(t, pg, head);
	if (!p->nstacks)
		tui_put(t, tui_page_line(pg), 2, t->cols - 2, t->attr[THEME_DIM],
			"no stack recorded");
	for (int i = 0; i < p->nstacks; i++) {
		const struct tui_site_stack *e = &p->stacks[i];
		const struct mt_stack *st = e->stack;

		tui_putf(t, tui_page_line(pg), 2, t->cols - 2, t->attr[THEME_HEADER],
			 "#%d  in use %s  allocated %s  pid %d", i + 1,
			 fmt_bytes(a, sizeof(a), e->inuse_bytes),
			 fmt_bytes(b, sizeof(b), e->alloc_bytes), (int)e->pid);
		for (__u32 f = 0; f < st->nframes; f++) {
			/* Allocator frames above the call site are shown dimmed. */
			bool alloc = f < st->site_frame;
			int y = tui_page_line(pg);

			tui_put_frame(t, y, 4, t->cols - 4, &st->frames[f],
				      t->attr[alloc ? THEME_DIM : THEME_NORMAL], t->attr[THEME_DIM]);
		}
		if (st->truncated)
			tui_put(t, tui_page_line(pg), 4, t->cols - 4, t->attr[THEME_WARNING],
				"(stack incomplete: the unwinder stopped here)");
		draw_symbol_hints(t, pg, st);
	}
	if (p->more_stacks)
		tui_putf(t, tui_page_line(pg), 2, t->cols - 2, t->attr[THEME_DIM], "and %d more",
			 p->more_stacks);
}

static void draw_history(struct tui *t, struct tui_page *pg)
{
	const struct mt_site *s = &t->site.snap;
	double tt[GRAPH_MAX], v[GRAPH_MAX], max = 0, end;
	int w = t->cols - 10, gh = t->rows >= 40 ? 8 : 4, n, y;
	char a[32], b[32], head[96];

	if (w > GRAPH_MAX)
		w = GRAPH_MAX;
	if (w < 4)
		return;
	/* the window ends at the site's newest point: for a site that ended,
	 * the tick that froze it, however long ago */
	end = tui_now_s(t);
	if (s->ended_ns && history_last_t(&s->stats.inuse) >= 0) {
		end = history_last_t(&s->stats.inuse);
		w--; /* the last column is the marker */
	}
	n = history_window(&s->stats.inuse, end - w * t->ctx->interval_s, tt, v, w);
	for (int i = 0; i < n; i++)
		if (v[i] > max)
			max = v[i];
	snprintf(head, sizeof(head), "In use over the last %s (peak %s)",
		 fmt_age(a, sizeof(a), n > 1 ? tt[n - 1] - tt[0] : 0), fmt_bytes(b, sizeof(b), max));
	title(t, pg, head);
	if (n < 2) {
		tui_put(t, tui_page_line(pg), 2, t->cols - 2, t->attr[THEME_DIM],
			"not enough history yet");
		return;
	}
	/* Reserve the rows, then draw the graph across them; clipping keeps
	 * whatever is scrolled out of view off the screen. */
	y = pg->y0 + pg->n - pg->scroll;
	for (int i = 0; i < gh; i++)
		tui_page_line(pg);
	tui_put_right(t, y, 0, 8, t->attr[THEME_DIM], fmt_bytes(a, sizeof(a), max));
	tui_put_right(t, y + gh - 1, 0, 8, t->attr[THEME_DIM], "0");
	tui_graph(t, y, 9, w, gh, v, n, 0, max, t->attr[THEME_GRAPH]);
	if (s->ended_ns) {
		char ended[256];

		for (int r = 0; r < gh; r++)
			tui_put(t, y + r, 9 + w, 1, t->attr[THEME_WARNING],
				t->unicode ? "\u2502" : "|");
		fmt_ended(t, s, ended, sizeof(ended));
		tui_putf(t, tui_page_line(pg), 2, t->cols - 2, t->attr[THEME_WARNING],
			 "%s %s: no history after it", t->unicode ? "\u2502" : "|", ended);
	}
}

static void bucket_label(char *buf, size_t len, int i)
{
	char lo[16], hi[16];

	/* the model's bucket i: sizes in (2^(i-1), 2^i] */
	if (i == 0) {
		snprintf(buf, len, "0-1 B");
		return;
	}
	fmt_bytes(lo, sizeof(lo), ldexp(1, i - 1) + 1);
	fmt_bytes(hi, sizeof(hi), ldexp(1, i));
	snprintf(buf, len, "%s-%s B", lo, hi);
}

static void draw_sizes(struct tui *t, struct tui_page *pg)
{
	const struct mt_site *s = &t->site.snap;
	/* buckets as size_hist_bucket(): a capacity of 2^i holds all of
	 * bucket i and below */
	double objs[MT_SIZE_BUCKETS] = { 0 }, bytes[MT_SIZE_BUCKETS] = { 0 };
	double total = 0, total_bytes = 0, max = 0, fit;
	int first = -1, last = -1;
	__u64 cap;
	char a[32];

	for (int i = 0; i < MT_SIZE_BUCKETS; i++) {
		double size = i == 0 ? 1 : ldexp(1.5, i - 1); /* mid-bucket */

		if (!s->size_hist[i])
			continue;
		objs[i] = s->size_objects[i]; /* the model's weights (model.h) */
		bytes[i] = objs[i] * size;
		total += objs[i];
		total_bytes += bytes[i];
		if (objs[i] > max)
			max = objs[i];
		if (first < 0)
			first = i;
		last = i;
	}
	title(t, pg, "Allocation sizes (estimated objects, bytes)");
	if (first < 0) {
		tui_put(t, tui_page_line(pg), 2, t->cols - 2, t->attr[THEME_DIM], "no samples");
		return;
	}
	if (last - first >= HIST_LINES)
		first = last - HIST_LINES + 1;
	for (int i = first; i <= last; i++) {
		int y = tui_page_line(pg), bw = t->cols - 40;
		char label[40];

		bucket_label(label, sizeof(label), i);
		tui_put_right(t, y, 0, 14, t->attr[THEME_NORMAL], label);
		/* "100.0% 100.0%": 13 columns, up to the bar's */
		tui_putf(t, y, 15, 14, t->attr[THEME_NORMAL], "%5.1f%% %5.1f%%",
			 100 * objs[i] / total, 100 * bytes[i] / total_bytes);
		if (bw > 40)
			bw = 40;
		tui_bar(t, y, 30, bw, objs[i] / max, t->attr[THEME_GRAPH]);
	}
	cap = model_site_inline_capacity(s, INLINE_FRACTION, &fit);
	if (cap)
		tui_putf(t, tui_page_line(pg), 2, t->cols - 2, t->attr[THEME_HEADER_VALUE],
			 "an inline buffer of %s would absorb %.0f%% of these allocations",
			 fmt_bytes(a, sizeof(a), (double)cap), 100 * fit);
	else
		tui_putf(t, tui_page_line(pg), 2, t->cols - 2, t->attr[THEME_DIM],
			 "no inline buffer up to %s would absorb %.0f%% of these allocations",
			 fmt_bytes(a, sizeof(a), MT_INLINE_MAX), 100 * INLINE_FRACTION);
}

static void site_draw(struct tui *t, int y, int h)
{
	struct tui_site *p = &t->site;
	struct tui_page pg = { .y0 = y, .h = h, .scroll = p->scroll };

	p->page = h;
	/* A resize or a shorter page can leave it scrolled past its end. */
	if (p->lines && p->scroll > p->lines - h)
		p->scroll = p->lines > h ? p->lines - h : 0;
	pg.scroll = p->scroll;
	if (!p->valid && p->snap.id != p->id) {
		tui_put(t, y + 1, 2, t->cols - 2, t->attr[THEME_DIM],
			"this site is gone (regrouped?): Esc goes back to the table");
		return;
	}
	draw_summary(t, &pg);
	draw_reasons(t, &pg);
	draw_stacks(t, &pg);
	draw_history(t, &pg);
	draw_sizes(t, &pg);
	p->lines = pg.n;
}

static bool site_action(struct tui *t, enum key_action a)
{
	struct tui_site *p = &t->site;

	return tui_scroll_move(&p->scroll, p->lines, p->page, a);
}

static void site_status(struct tui *t, char *buf, size_t len)
{
	const struct tui_site *p = &t->site;

	snprintf(buf, len, "site %u%s, lines %d-%d of %d (Esc back)", p->id,
		 p->valid ? "" : " (gone)", p->scroll + 1,
		 p->scroll + p->page < p->lines ? p->scroll + p->page : p->lines, p->lines);
}

const struct tui_view view_site = {
	.name = "site",
	.kv = KV_SITE,
	.snapshot = site_refresh,
	.draw = site_draw,
	.action = site_action,
	.status = site_status,
};

// SPDX-License-Identifier: GPL-2.0-only
/*
 * header.c - the lines above the view: who is watched, the figures that
 * say how far to trust the rest (RSS, heap since attach, the target's
 * slowdown, events per second), the warnings, and the heap sparkline.
 *
 * Priority when space runs out: warnings never vanish. On a tall enough
 * terminal (14 rows or more) the header has three lines and the warnings
 * lead the third one, ahead of the cgroup figures and the sparkline; on a
 * short one the header is the target line plus, when there is something
 * to warn about, one line of warnings. Each warning has a long and a short
 * form; the short ones are used when the long ones do not all fit, and a
 * figure that does not fit whole is left out rather than cut.
 */
#include "ui/tui/tui.h"

#include <stdio.h>
#include <time.h>
#include <string.h>

#include "ui/figures.h"
#include "model/unseen.h"
#include "ui/format.h"

/* The newest point of any target's in-use history: the last tick, or once
 * every target ended the tick that froze the last of them, so the
 * sparkline of a dead session stays as it was instead of scrolling away. */
static double header_newest(const struct tui *t, size_t n)
{
	double newest = -1;

	for (size_t i = 0; i < n; i++) {
		double x = history_last_t(&model_target_at(t->model, i)->stats.inuse);

		if (x > newest)
			newest = x;
	}
	return newest >= 0 ? newest : tui_now_s(t);
}

/* The target to warn about for memory the probes do not see. */
static void header_unseen(struct tui *t, struct tui_header *h, size_t n)
{
	const struct mt_target *pick = NULL;

	for (size_t i = 0; i < n && !(pick && unseen_growth(pick)); i++) {
		const struct mt_target *tg = model_target_at(t->model, i);

		if (tg->alive && (unseen_growth(tg) || (!pick && tg->runtime[0])))
			pick = tg;
	}
	h->go_pid = 0;
	h->ninjected = 0;
	h->injected_pid = 0;
	for (size_t i = 0; i < n; i++) {
		const struct mt_target *tg = model_target_at(t->model, i);

		if (tg->alive && !strcmp(tg->mechanism, "in-process") && !h->ninjected++)
			h->injected_pid = tg->pid;

		/* one with MemProfileRate 0 first: it is the one to warn about */
		if (tg->alive && tg->go_version[0] && (!h->go_pid || !tg->go_rate)) {
			h->go_pid = tg->pid;
			h->go_rate = tg->go_rate;
		}
	}
	h->unseen_pid = pick ? pick->pid : 0;
	h->unseen_growth = pick && unseen_growth(pick);
	h->unseen_explains = pick ? pick->stats.heap_explains : -1;
	snprintf(h->unseen_runtime, sizeof(h->unseen_runtime), "%s", pick ? pick->runtime : "");
}

/* The allocator the live targets are probed in: one name, or "mixed". */
static void header_allocator(struct tui *t, struct tui_header *h, size_t n)
{
	h->allocator[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		const struct mt_target *tg = model_target_at(t->model, i);

		if (!tg->alive || !tg->allocator[0])
			continue;
		if (!h->allocator[0])
			snprintf(h->allocator, sizeof(h->allocator), "%s", tg->allocator);
		else if (strcmp(h->allocator, tg->allocator))
			snprintf(h->allocator, sizeof(h->allocator), "mixed");
	}
}

void header_refresh(struct tui *t)
{
	struct tui_header *h = &t->hdr;
	const struct mt_drops *d = model_drops(t->model);
	size_t n = model_target_count(t->model), first_dead;
	double since = header_newest(t, n) -
		       (TUI_SPARK_MAX + 1) * (t->ctx->interval_s > 0 ? t->ctx->interval_s : 1);

	memset(h->spark, 0, sizeof(h->spark));
	h->nspark = 0;
	h->ntargets = (int)n;
	h->nalive = 0;
	h->rss_bytes = 0;
	h->ended[0] = '\0';
	h->ended_clean = false;
	for (first_dead = 0; first_dead < n; first_dead++)
		if (!model_target_at(t->model, first_dead)->alive)
			break;
	for (size_t i = 0; i < n; i++) {
		const struct mt_target *tg = model_target_at(t->model, i);
		double tt[TUI_SPARK_MAX], v[TUI_SPARK_MAX];
		int k;

		if (i < TUI_HDR_TARGETS) {
			h->target[i].pid = tg->pid;
			memcpy(h->target[i].comm, tg->comm, sizeof(h->target[i].comm));
			h->target[i].comm[sizeof(h->target[i].comm) - 1] = '\0';
			h->target[i].alive = tg->alive;
			fig_state(h->target[i].state, sizeof(h->target[i].state), tg);
		}
		if (!tg->alive && i == first_dead) {
			char how[80];

			model_end_describe(&tg->end, how, sizeof(how));
			snprintf(h->ended, sizeof(h->ended), "PID %d %s", (int)tg->pid, how);
			h->ended_clean = tg->end.kind == MT_END_EXIT && !tg->end.code;
		}
		if (tg->alive) {
			h->nalive++;
			h->rss_bytes += tg->rss_bytes;
		}
		/* Sum the targets' in-use histories, aligned on the newest
		 * point (they are ticked together). */
		k = history_window(&tg->stats.inuse, since, tt, v, TUI_SPARK_MAX);
		for (int j = 0; j < k; j++)
			h->spark[TUI_SPARK_MAX - k + j] += v[j];
		if (k > h->nspark)
			h->nspark = k;
	}
	header_unseen(t, h, n);
	header_allocator(t, h, n);
	h->inuse_bytes = model_inuse_bytes(t->model);
	h->rate = model_rate(t->model);
	h->events_per_s = t->status->events_per_s;
	h->lost = d->events_lost;
	h->untracked = d->live_map_full;
	h->probe_mode = t->status->probe_mode;
	h->est_cpu_pct = t->status->est_cpu_pct;
	h->slowdown_pct = t->status->est_slowdown_pct;
	h->slowdown_measured = t->status->est_slowdown_measured;
	h->slowdown_low_pct = t->status->est_slowdown_low_pct;
	h->slowdown_high_pct = t->status->est_slowdown_high_pct;
	h->floor_pct = t->status->floor_pct;
	h->budget_pct = t->status->budget_pct;
	h->backed_off = t->status->backed_off;
	h->unreachable = t->status->budget_unreachable;
	h->inprocess_over_pct = t->status->inprocess_over_pct;
	h->duty = t->status->duty;
	h->phase_rate = t->status->phase_rate;
	h->cgroup = t->status->cgroup;
}

/* ---- warnings ------------------------------------------------------------ */

#define WARN_MAX 8 /* every warning below at once */

struct warning {
	char text[96];  /* long form */
	char brief[32]; /* short form, for narrow terminals */
};

static int warnings_collect(const struct tui *t, struct warning *w)
{
	const struct tui_header *h = &t->hdr;
	char a[32];
	int n = 0;

	if (h->ntargets > 0 && h->nalive == 0) {
		if (h->ntargets == 1 && h->ended[0])
			snprintf(w[n].text, sizeof(w[n].text), "%.70s: data frozen", h->ended);
		else
			snprintf(w[n].text, sizeof(w[n].text), "targets ended: data frozen");
		snprintf(w[n].brief, sizeof(w[n].brief), "ENDED");
		n++;
	}
	if (h->unreachable) {
		snprintf(w[n].text, sizeof(w[n].text),
			 "budget unreachable: free() probes alone cost %.1f%%", h->floor_pct);
		snprintf(w[n].brief, sizeof(w[n].brief), "OVER BUDGET");
		n++;
	}
	if (h->inprocess_over_pct > 0) {
		snprintf(w[n].text, sizeof(w[n].text),
			 "over budget: in-process sampling costs %.1f%%; a larger --rate samples less",
			 h->inprocess_over_pct);
		snprintf(w[n].brief, sizeof(w[n].brief), "OVER BUDGET");
		n++;
	}
	if (h->backed_off) {
		snprintf(w[n].text, sizeof(w[n].text), "backed off: probes on %.0f%%, 1 sample/%s",
			 100 * h->duty, fmt_bytes(a, sizeof(a), (double)h->phase_rate));
		snprintf(w[n].brief, sizeof(w[n].brief), "BACKOFF %.0f%%", 100 * h->duty);
		n++;
	}
	if (h->lost) {
		snprintf(w[n].text, sizeof(w[n].text), "lost %s events (ring buffer full)",
			 fmt_count(a, sizeof(a), (double)h->lost));
		snprintf(w[n].brief, sizeof(w[n].brief), "LOST %.20s", a);
		n++;
	}
	if (h->unseen_pid && h->unseen_growth) {
		snprintf(w[n].text, sizeof(w[n].text),
			 "PID %d: the heap seen explains %.0f%% of RSS growth%s%s%s",
			 (int)h->unseen_pid, 100 * h->unseen_explains,
			 h->unseen_runtime[0] ? " (" : "", h->unseen_runtime,
			 h->unseen_runtime[0] ? " heap unseen)" : "; see mmap sites");
		snprintf(w[n].brief, sizeof(w[n].brief), "RSS UNSEEN");
		n++;
	} else if (h->unseen_pid) {
		snprintf(w[n].text, sizeof(w[n].text), "PID %d runs %s: its own heap is not seen",
			 (int)h->unseen_pid, h->unseen_runtime);
		snprintf(w[n].brief, sizeof(w[n].brief), "%.16s HEAP", h->unseen_runtime);
		n++;
	}
	if (h->go_pid && !h->go_rate) {
		snprintf(w[n].text, sizeof(w[n].text),
			 "PID %d: Go MemProfileRate is 0: the runtime samples nothing, no samples will come",
			 (int)h->go_pid);
		snprintf(w[n].brief, sizeof(w[n].brief), "GO RATE 0");
		n++;
	} else if (h->go_pid) {
		snprintf(w[n].text, sizeof(w[n].text),
			 "PID %d: Go heap as its runtime samples it; frees show once the GC sweeps them",
			 (int)h->go_pid);
		snprintf(w[n].brief, sizeof(w[n].brief), "GO GC FREES");
		n++;
	}
	if (h->ninjected) {
		/* memtop changed them: said until it exits and puts them back */
		if (h->ninjected == 1)
			snprintf(w[n].text, sizeof(w[n].text),
				 "PID %d runs memtop's sampler (in-process): put back when memtop exits",
				 (int)h->injected_pid);
		else
			snprintf(w[n].text, sizeof(w[n].text),
				 "%d processes run memtop's sampler (in-process): put back when "
				 "memtop exits",
				 h->ninjected);
		snprintf(w[n].brief, sizeof(w[n].brief), "INJECTED %d", h->ninjected);
		n++;
	}
	if (h->untracked) {
		snprintf(w[n].text, sizeof(w[n].text),
			 "live map full: %s samples untracked, in-use stops growing (--live-max)",
			 fmt_count(a, sizeof(a), (double)h->untracked));
		snprintf(w[n].brief, sizeof(w[n].brief), "MAP FULL");
		n++;
	}
	return n;
}

bool header_has_warnings(const struct tui *t)
{
	struct warning w[WARN_MAX];

	return warnings_collect(t, w) > 0;
}

/* The warnings from column x in at most w columns: long forms when all
 * fit, else short ones. Returns the next column. */
static int draw_warnings(struct tui *t, int y, int x, int w)
{
	struct warning warn[WARN_MAX];
	int n = warnings_collect(t, warn), len = 0;
	bool brief;

	if (!n)
		return x;
	for (int i = 0; i < n; i++)
		len += tui_width(t, warn[i].text) + 2;
	brief = len > w;
	x += tui_put(t, y, x, w, t->attr[THEME_WARNING], "!") + 1;
	for (int i = 0; i < n && x < t->cols; i++) {
		const char *s = brief ? warn[i].brief : warn[i].text;

		x += tui_put(t, y, x, t->cols - x, t->attr[THEME_WARNING], s);
		x += i + 1 < n ? tui_put(t, y, x, t->cols - x, t->attr[THEME_HEADER],
					 brief ? " " : "; ")
			       : 2;
	}
	return x;
}

/* ---- lines --------------------------------------------------------------- */

/* "label value  " left to right, whole or not at all; returns the next
 * column. */
static int pair(struct tui *t, int y, int x, const char *label, const char *value, attr_t va)
{
	if (x + tui_width(t, label) + tui_width(t, value) > t->cols)
		return x;
	x += tui_put(t, y, x, t->cols - x, t->attr[THEME_HEADER], label);
	x += tui_put(t, y, x, t->cols - x, va, value);
	return x + 2;
}

static void draw_targets(struct tui *t, int y)
{
	const struct tui_header *h = &t->hdr;
	const struct mt_replay_pos *pos = t->status->replay;
	char right[96], buf[64];
	int x, rw;

	if (pos) {
		/* where a replay stands, and the recorded moment */
		time_t at = (time_t)t->status->wall_s;
		struct tm tm;
		char when[16] = "";

		if (localtime_r(&at, &tm))
			strftime(when, sizeof(when), "%H:%M:%S", &tm);
		snprintf(right, sizeof(right), "%s%s %ld/%ld %s", t->paused ? "PAUSED " : "",
			 pos->ended  ? "ENDED"
			 : pos->live ? "SESSION"
				     : "REPLAY",
			 pos->at + 1, pos->count, when);
	} else {
		snprintf(right, sizeof(right), "%s every %.4gs", t->paused ? "PAUSED " : "",
			 t->ctx->interval_s);
	}
	rw = tui_width(t, right);
	x = tui_put(t, y, 0, t->cols, t->attr[THEME_TITLE], "memtop") + 1;
	if (h->ntargets == 0)
		x += tui_put(t, y, x, t->cols - x, t->attr[THEME_HEADER], "no target");
	for (int i = 0; i < h->ntargets && i < TUI_HDR_TARGETS; i++) {
		int need;

		snprintf(buf, sizeof(buf), "%d %s ", h->target[i].pid, h->target[i].comm);
		need = tui_width(t, buf) + 6;
		if (x + need > t->cols - rw - 1 && i > 0) {
			tui_putf(t, y, x, t->cols - rw - 1 - x, t->attr[THEME_HEADER], "+%d more",
				 h->ntargets - i);
			x = t->cols;
			break;
		}
		x += tui_put(t, y, x, t->cols - x, t->attr[THEME_HEADER_VALUE], buf);
		x += tui_put(t, y, x, t->cols - x,
			     t->attr[h->target[i].alive ? THEME_TARGET_ALIVE : THEME_TARGET_EXITED],
			     h->target[i].state);
		x += 2;
	}
	if (h->ntargets > TUI_HDR_TARGETS && x < t->cols - rw - 1)
		tui_putf(t, y, x, t->cols - rw - 1 - x, t->attr[THEME_HEADER], "+%d more",
			 h->ntargets - TUI_HDR_TARGETS);
	if (x + rw < t->cols)
		tui_put(t, y, t->cols - rw, rw, t->attr[t->paused ? THEME_WARNING : THEME_HEADER],
			right);
}

/* The figures, most telling first: what the process holds, what memtop
 * sees of it, what watching costs it, how busy the data path is. */
/* Devices named in the header at most (the rest are in -b and JSON). */
#define TUI_HDR_DEVICES 3

static void draw_figures(struct tui *t, int y)
{
	const struct tui_header *h = &t->hdr;
	char a[32], b[32], s[48];
	int x = 0;

	x = pair(t, y, x, "RSS ", fmt_bytes(a, sizeof(a), h->rss_bytes), t->attr[THEME_HEADER_VALUE]);
	x = pair(t, y, x, "heap since attach ", fmt_bytes(a, sizeof(a), h->inuse_bytes),
		 t->attr[THEME_HEADER_VALUE]);
	/* each device's memory the watched processes hold, and its growth
	 * (the device tier, docs/device-memory.md) */
	for (size_t i = 0; i < model_device_count(t->model) && i < TUI_HDR_DEVICES; i++) {
		const struct mt_device_total *d = model_device_at(t->model, i);
		char name[32], g[32], held[80];

		snprintf(name, sizeof(name), "%s:%u ", device_api_name(d->api), d->index);
		fmt_bytes(g, sizeof(g), d->growth_bytes_per_s > 0 ? d->growth_bytes_per_s : 0);
		snprintf(held, sizeof(held), "%s +%s/s", fmt_bytes(a, sizeof(a), d->inuse_bytes), g);
		x = pair(t, y, x, name, held,
			 t->attr[d->growth_bytes_per_s > 0 ? THEME_WARNING : THEME_HEADER_VALUE]);
	}
	/* the target's slowdown, the number --max-overhead limits (JSON
	 * overhead.est_slowdown_pct) */
	if (h->slowdown_measured)
		fig_slowdown(s, sizeof(s), true, h->slowdown_pct, h->slowdown_low_pct,
			     h->slowdown_high_pct);
	else
		snprintf(s, sizeof(s), "measuring");
	x = pair(t, y, x, "slowdown ", s,
		 t->attr[h->slowdown_measured && h->budget_pct > 0 && h->slowdown_pct > h->budget_pct
				 ? THEME_WARNING
				 : THEME_HEADER_VALUE]);
	x = pair(t, y, x, "events/s ", fmt_count(a, sizeof(a), h->events_per_s),
		 t->attr[THEME_HEADER_VALUE]);
	x = pair(t, y, x, "1 sample/", fmt_bytes(a, sizeof(a), (double)h->rate),
		 t->attr[THEME_HEADER_VALUE]);
	snprintf(b, sizeof(b), "%s%s%s", h->probe_mode ? h->probe_mode : "probes",
		 h->allocator[0] ? " " : "", h->allocator);
	pair(t, y, x, "mode ", b, t->attr[THEME_HEADER_VALUE]);
}

static void draw_limit_and_spark(struct tui *t, int y)
{
	const struct mt_cgroup_status *cg = &t->hdr.cgroup;
	const struct cgroup_mem *m = &cg->mem;
	char a[32], b[32], c[32];
	int x = draw_warnings(t, y, 0, t->cols), w;

	if (cg->have_mem && m->max) {
		bool near = m->current > 0.9 * m->max ||
			    (cg->time_to_max_s >= 0 && cg->time_to_max_s < 600);
		attr_t va = t->attr[near ? THEME_WARNING : THEME_HEADER_VALUE];

		snprintf(c, sizeof(c), "%s/%s", fmt_bytes(a, sizeof(a), (double)m->current),
			 fmt_bytes(b, sizeof(b), (double)m->max));
		x = pair(t, y, x, "cgroup ", c, va);
		if (cg->time_to_max_s >= 0)
			x = pair(t, y, x, "limit in ~",
				 fmt_age(a, sizeof(a), cg->time_to_max_s > 1 ? cg->time_to_max_s : 1),
				 va);
		else
			x = pair(t, y, x, "", "not growing", t->attr[THEME_HEADER]);
	} else if (cg->have_mem) {
		x = pair(t, y, x, "cgroup ", fmt_bytes(a, sizeof(a), (double)m->current),
			 t->attr[THEME_HEADER_VALUE]);
		x = pair(t, y, x, "", "no limit", t->attr[THEME_HEADER]);
	}
	if (cg->have_mem && m->oom_kill > 0)
		x = pair(t, y, x, "oom kills ", fmt_count(a, sizeof(a), (double)m->oom_kill),
			 t->attr[THEME_WARNING]);
	if (x + 12 > t->cols)
		return; /* no room for a sparkline worth reading */
	x += tui_put(t, y, x, t->cols - x, t->attr[THEME_HEADER], "heap ");
	w = t->cols - x;
	if (w > 0 && t->hdr.nspark > 0) {
		int n = t->hdr.nspark < w ? t->hdr.nspark : w;

		tui_sparkline(t, y, x, w, t->hdr.spark + TUI_SPARK_MAX - n, n,
			      t->attr[THEME_SPARKLINE]);
	}
}

int header_rows(const struct tui *t)
{
	if (t->rows >= 14)
		return 3;
	return header_has_warnings(t) && t->rows >= 8 ? 2 : 1;
}

void header_draw(struct tui *t)
{
	int rows = header_rows(t);

	draw_targets(t, 0);
	if (rows == 3) {
		draw_figures(t, 1);
		draw_limit_and_spark(t, 2);
	} else if (rows == 2) {
		draw_warnings(t, 1, 0, t->cols);
	} else if (header_has_warnings(t)) {
		/* the smallest screens: a marker over the right edge */
		tui_put(t, 0, t->cols - 1, 1, t->attr[THEME_WARNING], "!");
	}
}

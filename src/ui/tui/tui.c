// SPDX-License-Identifier: GPL-2.0-only
/*
 * tui.c - frontend_tui: the live ncurses view of `memtop -p PID`.
 *
 * Owns the session (struct tui), the screen layout (header, view area,
 * status line, key bar), view switching, the input line, and the actions
 * that mean the same in every view (quit, help, pause, refresh interval,
 * export). Keys are dispatched through the key table (keys.c): the current
 * view gets the action first and the rest falls through to here.
 *
 * Layout, top to bottom: three header lines (one on very short terminals),
 * the view, a status line and the key bar. Each frame is drawn with erase()
 * and refresh(), so curses sends only the cells that changed.
 */
#include "ui/tui/tui.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <wchar.h>
#include <wctype.h>

#include "export/export.h"
#include "ui/format.h"

#define MSG_SECONDS 8

static const double intervals[] = { 0.25, 0.5, 1, 2, 3, 5, 10, 15, 30, 60 };
#define NINTERVALS (int)(sizeof(intervals) / sizeof(intervals[0]))

static __u64 mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

double tui_now_s(const struct tui *t)
{
	return model_now(t->model) / 1e9;
}

void tui_message(struct tui *t, bool error, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(t->msg, sizeof(t->msg), fmt, ap);
	va_end(ap);
	t->msg_error = error;
	t->msg_ns = mono_ns();
}

void tui_show(struct tui *t, const struct tui_view *v)
{
	t->view = v;
	if (v->snapshot && (!t->paused || !(t->snapped & v->kv)))
		v->snapshot(t);
	t->snapped |= v->kv;
}

void tui_input_begin(struct tui *t, enum key_action kind, char *text)
{
	t->input.active = true;
	t->input.kind = kind;
	t->input.target = text;
	snprintf(t->input.saved, sizeof(t->input.saved), "%s", text);
}

/* ---- header -------------------------------------------------------------- */

static void header_refresh(struct tui *t)
{
	struct tui_header *h = &t->hdr;
	struct mt_drops *d = model_drops(t->model);
	size_t n = model_target_count(t->model);
	double since = tui_now_s(t) -
		       (TUI_SPARK_MAX + 1) * (t->ctx->interval_s > 0 ? t->ctx->interval_s : 1);

	memset(h->spark, 0, sizeof(h->spark));
	h->nspark = 0;
	h->ntargets = (int)n;
	h->nalive = 0;
	h->rss_bytes = 0;
	for (size_t i = 0; i < n; i++) {
		const struct mt_target *tg = model_target_at(t->model, i);
		double tt[TUI_SPARK_MAX], v[TUI_SPARK_MAX];
		int k;

		if (i < TUI_HDR_TARGETS) {
			h->target[i].pid = tg->pid;
			memcpy(h->target[i].comm, tg->comm, sizeof(h->target[i].comm));
			h->target[i].comm[sizeof(h->target[i].comm) - 1] = '\0';
			h->target[i].alive = tg->alive;
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
	h->inuse_bytes = model_inuse_bytes(t->model);
	h->rate = model_rate(t->model);
	h->events_per_s = t->status->events_per_s;
	h->lost = d->events_lost;
	h->untracked = d->live_map_full;
	h->probe_mode = t->status->probe_mode;
	h->est_cpu_pct = t->status->est_cpu_pct;
	h->slowdown_pct = t->status->est_slowdown_pct;
	h->budget_pct = t->status->budget_pct;
	h->backed_off = t->status->backed_off;
	h->unreachable = t->status->budget_unreachable;
	h->duty = t->status->duty;
	h->phase_rate = t->status->phase_rate;
	h->cgroup = t->status->cgroup;
}

/* "label value  " pairs left to right; returns the next column. */
static int pair(struct tui *t, int y, int x, const char *label, const char *value, attr_t va)
{
	if (x >= t->cols)
		return x;
	x += tui_put(t, y, x, t->cols - x, t->attr[THEME_HEADER], label);
	x += tui_put(t, y, x, t->cols - x, va, value);
	return x + 2;
}

static void draw_targets(struct tui *t, int y)
{
	const struct tui_header *h = &t->hdr;
	char right[64], buf[64];
	int x, rw;

	snprintf(right, sizeof(right), "%s every %.4gs", t->paused ? "PAUSED " : "",
		 t->ctx->interval_s);
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
			     h->target[i].alive ? "alive" : "exited");
		x += 2;
	}
	if (h->ntargets > TUI_HDR_TARGETS && x < t->cols - rw - 1)
		tui_putf(t, y, x, t->cols - rw - 1 - x, t->attr[THEME_HEADER], "+%d more",
			 h->ntargets - TUI_HDR_TARGETS);
	if (x + rw < t->cols)
		tui_put(t, y, t->cols - rw, rw,
			t->attr[t->paused ? THEME_WARNING : THEME_HEADER], right);
}

static void draw_figures(struct tui *t, int y)
{
	const struct tui_header *h = &t->hdr;
	char a[32], b[32];
	int x = 0;

	x = pair(t, y, x, "RSS ", fmt_bytes(a, sizeof(a), h->rss_bytes),
		 t->attr[THEME_HEADER_VALUE]);
	x = pair(t, y, x, "heap ", fmt_bytes(a, sizeof(a), h->inuse_bytes),
		 t->attr[THEME_HEADER_VALUE]);
	x = pair(t, y, x, "rate ", fmt_bytes(a, sizeof(a), (double)h->rate),
		 t->attr[THEME_HEADER_VALUE]);
	x = pair(t, y, x, "ev/s ", fmt_count(a, sizeof(a), h->events_per_s),
		 t->attr[THEME_HEADER_VALUE]);
	snprintf(b, sizeof(b), "%llu", (unsigned long long)h->lost);
	if (h->untracked)
		snprintf(b + strlen(b), sizeof(b) - strlen(b), "+%llu",
			 (unsigned long long)h->untracked);
	x = pair(t, y, x, "lost ", b,
		 t->attr[h->lost || h->untracked ? THEME_WARNING : THEME_HEADER_VALUE]);
	x = pair(t, y, x, "mode ", h->probe_mode ? h->probe_mode : "probes",
		 t->attr[THEME_HEADER_VALUE]);
	/* the target's slowdown, the number --max-overhead limits */
	snprintf(b, sizeof(b), "%.1f%%", h->slowdown_pct);
	x = pair(t, y, x, "target slowdown ", b,
		 t->attr[h->budget_pct > 0 && h->slowdown_pct > h->budget_pct ? THEME_WARNING
									   : THEME_HEADER_VALUE]);
	if (h->backed_off) {
		char c[64];

		pair(t, y, x, "", fmt_backoff(c, sizeof(c), true, h->duty, (double)h->phase_rate),
		     t->attr[THEME_WARNING]);
	}
}

static void draw_limit_and_spark(struct tui *t, int y)
{
	const struct mt_cgroup_status *cg = &t->hdr.cgroup;
	const struct cgroup_mem *m = &cg->mem;
	char a[32], b[32], c[32];
	int x = 0, w;

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
	x += tui_put(t, y, x, t->cols - x, t->attr[THEME_HEADER], "heap ");
	w = t->cols - x;
	if (w > 0 && t->hdr.nspark > 0) {
		int n = t->hdr.nspark < w ? t->hdr.nspark : w;

		tui_sparkline(t, y, x, w, t->hdr.spark + TUI_SPARK_MAX - n, n,
			      t->attr[THEME_SPARKLINE]);
	}
}

static int header_rows(const struct tui *t)
{
	return t->rows >= 14 ? 3 : 1;
}

static void draw_header(struct tui *t)
{
	draw_targets(t, 0);
	if (header_rows(t) == 3) {
		draw_figures(t, 1);
		draw_limit_and_spark(t, 2);
	}
}

/* ---- status line ----------------------------------------------------------- */

static void draw_input(struct tui *t, int y)
{
	const char *label = t->input.kind == KA_SEARCH ? "Search: " : "Filter: ";
	int x = tui_put(t, y, 0, t->cols, t->attr[THEME_HEADER], label);

	x += tui_put(t, y, x, t->cols - x - 1, t->attr[THEME_INPUT], t->input.target);
	/* A block for the cursor: the real one stays hidden. */
	tui_fill(t, y, x, 1, A_REVERSE);
}

static void draw_status(struct tui *t, int y)
{
	tui_fill(t, y, 0, t->cols, t->attr[THEME_STATUS]);
	if (t->input.active) {
		draw_input(t, y);
		return;
	}
	if (t->msg[0] && mono_ns() - t->msg_ns < MSG_SECONDS * 1000000000ULL) {
		tui_put(t, y, 0, t->cols,
			t->attr[t->msg_error ? THEME_STATUS_ERROR : THEME_STATUS], t->msg);
		return;
	}
	if (t->hdr.ntargets > 0 && t->hdr.nalive == 0) {
		tui_put(t, y, 0, t->cols, t->attr[THEME_WARNING],
			"target exited: its data stays on screen; e exports it, q quits");
	} else if (t->status->message[0]) {
		tui_put(t, y, 0, t->cols, t->attr[THEME_STATUS], t->status->message);
	} else if (t->view->status) {
		char buf[256] = "";

		t->view->status(t, buf, sizeof(buf));
		tui_put(t, y, 0, t->cols, t->attr[THEME_DIM], buf);
	}
}

static void draw(struct tui *t)
{
	int hr = header_rows(t), bottom = t->rows >= 6 ? 2 : 1;
	int vy = hr, vh = t->rows - hr - bottom;

	erase();
	t->clip_y0 = 0;
	t->clip_y1 = t->rows;
	if (t->rows < 3 || t->cols < 20) {
		tui_put(t, 0, 0, t->cols, t->attr[THEME_WARNING], "memtop: window too small");
		refresh();
		return;
	}
	draw_header(t);
	if (vh > 0) {
		t->clip_y0 = vy;
		t->clip_y1 = vy + vh;
		t->view->draw(t, vy, vh);
		t->clip_y0 = 0;
		t->clip_y1 = t->rows;
	}
	draw_status(t, t->rows - bottom);
	if (bottom == 2)
		tui_keybar(t, t->rows - 1, t->input.active ? KV_INPUT : t->view->kv);
	/* Park the cursor where a terminal without civis shows it least. */
	move(t->rows - 1, t->cols - 1);
	refresh();
}

/* ---- actions ------------------------------------------------------------- */

static void do_export(struct tui *t)
{
	char path[PATH_MAX], stamp[32], err[256] = "", size[16];
	time_t now = time(NULL);
	struct tm tm;
	pid_t pid = t->hdr.ntargets ? t->hdr.target[0].pid : getpid();
	int r;

	localtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
	snprintf(path, sizeof(path), "memtop-%d-%s.pb.gz", (int)pid, stamp);
	r = export_pprof_file(t->model, path, err, sizeof(err));
	if (r) {
		tui_message(t, true, "export failed: %s", err[0] ? err : strerror(-r));
	} else {
		FILE *f = fopen(path, "re");
		long n = 0;

		if (f) {
			fseek(f, 0, SEEK_END);
			n = ftell(f);
			fclose(f);
		}
		tui_message(t, false, "wrote %s (%s) - go tool pprof %s", path,
			    fmt_bytes(size, sizeof(size), (double)n), path);
	}
}

static int change_interval(struct tui *t, int dir)
{
	double cur = t->ctx->interval_s;
	int i;

	if (dir > 0) {
		for (i = 0; i < NINTERVALS - 1 && intervals[i] <= cur + 1e-9; i++)
			;
	} else {
		for (i = NINTERVALS - 1; i > 0 && intervals[i] >= cur - 1e-9; i--)
			;
	}
	if (fabs(intervals[i] - cur) < 1e-9) {
		tui_message(t, false, "refresh interval already %.4gs", cur);
		return 0;
	}
	t->ctx->interval_s = intervals[i];
	tui_message(t, false, "refresh every %.4gs", intervals[i]);
	return MT_FE_INTERVAL;
}

static void refresh_all(struct tui *t)
{
	header_refresh(t);
	if (t->view->snapshot)
		t->view->snapshot(t);
}

static int global_action(struct tui *t, enum key_action a)
{
	switch (a) {
	case KA_QUIT:
		return MT_FE_QUIT;
	case KA_HELP:
		if (t->view != &view_help) {
			t->help.from = t->view;
			t->help.scroll = 0;
			tui_show(t, &view_help);
		}
		return 0;
	case KA_NEXT_VIEW:
		tui_show(t, t->view == &view_flame ? &view_top : &view_flame);
		return 0;
	case KA_PROCS:
		tui_show(t, &view_procs);
		return 0;
	case KA_PAUSE:
		t->paused = !t->paused;
		t->snapped = t->view->kv; /* other views' snapshots are older */
		if (!t->paused)
			refresh_all(t);
		tui_message(t, false, t->paused ? "paused: the display is frozen, data is still "
						  "collected (Space resumes)" :
						  "resumed");
		return 0;
	case KA_SLOWER:
		return change_interval(t, +1);
	case KA_FASTER:
		return change_interval(t, -1);
	case KA_EXPORT:
		do_export(t);
		return 0;
	case KA_REDRAW:
		clearok(curscr, TRUE);
		return 0;
	case KA_BACK:
		if (t->view == &view_help)
			tui_show(t, t->help.from ? t->help.from : &view_top);
		else if (t->view != &view_top)
			tui_show(t, &view_top);
		return 0;
	default:
		return 0;
	}
}

/* Remove the last UTF-8 character of s. */
static void erase_last(char *s)
{
	size_t n = strlen(s);

	while (n > 0 && ((unsigned char)s[n - 1] & 0xc0) == 0x80)
		n--;
	if (n > 0)
		n--;
	s[n] = '\0';
}

static void input_key(struct tui *t, int key, bool is_code)
{
	char *s = t->input.target;
	enum key_action a = KA_NONE;

	if (is_code || key < 128)
		a = keys_lookup(key, KV_INPUT);
	switch (a) {
	case KA_INPUT_ACCEPT:
		t->input.active = false;
		return;
	case KA_INPUT_CANCEL:
		snprintf(s, TUI_TEXT_MAX, "%s", t->input.saved);
		t->input.active = false;
		break;
	case KA_INPUT_ERASE:
		erase_last(s);
		break;
	case KA_INPUT_CLEAR:
		s[0] = '\0';
		break;
	default: {
		char mb[MB_LEN_MAX + 1];
		mbstate_t st;
		size_t n, len = strlen(s);

		if (is_code || !iswprint((wint_t)key))
			return;
		memset(&st, 0, sizeof(st));
		n = t->utf8 ? wcrtomb(mb, (wchar_t)key, &st) : (key < 128 ? (mb[0] = key, 1) : 0);
		if (n == 0 || n == (size_t)-1 || len + n >= TUI_TEXT_MAX)
			return;
		memcpy(s + len, mb, n);
		s[len + n] = '\0';
	}
	}
	if (t->view->input_changed)
		t->view->input_changed(t);
}

static int key(struct tui *t, int k, bool is_code)
{
	enum key_action a;

	if (is_code && k == KEY_RESIZE)
		return 0; /* our SIGWINCH handler covers it */
	if (t->input.active) {
		input_key(t, k, is_code);
		return 0;
	}
	if (!is_code && k >= 128)
		return 0; /* no binding is outside ASCII; keeps clear of KEY_* codes */
	a = keys_lookup(k, t->view->kv);
	if (a == KA_NONE)
		return 0;
	if (t->view->action && t->view->action(t, a))
		return 0;
	return global_action(t, a);
}

/* ---- front-end ops ----------------------------------------------------------- */

static int tui_start(struct mt_fe_ctx *ctx)
{
	struct tui *t = calloc(1, sizeof(*t));
	char err[512] = "", exe[PATH_MAX];
	struct theme th;
	ssize_t n;
	int e;

	if (!t)
		return -ENOMEM;
	t->ctx = ctx;
	t->model = ctx->model;
	t->cfg = ctx->cfg;
	t->status = ctx->status;
	t->top.sort = MT_SORT_LEAK;
	t->view = &view_top;
	e = screen_init(t, err, sizeof(err));
	if (e) {
		snprintf(ctx->status->message, sizeof(ctx->status->message), "%s", err);
		free(t);
		return e;
	}
	ctx->priv = t;

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = '\0';
	snprintf(t->theme_name, sizeof(t->theme_name), "%s",
		 !t->color ? "mono" : t->cfg->theme ? t->cfg->theme : "default");
	e = theme_load(&th, t->theme_name, n > 0 ? exe : NULL, err, sizeof(err));
	if (e) {
		tui_message(t, true, "theme: %s; using the built-in default", err);
		snprintf(t->theme_name, sizeof(t->theme_name), "default (built-in)");
	} else if (!t->color && t->cfg->theme && strcmp(t->cfg->theme, "mono") != 0) {
		tui_message(t, false, "colour is off (%s): theme '%s' not used",
			    t->cfg->no_color || getenv("NO_COLOR") ? "NO_COLOR" : "terminal",
			    t->cfg->theme);
	}
	screen_apply_theme(t, &th);
	refresh_all(t);
	draw(t);
	return 0;
}

static int tui_input_fd(struct mt_fe_ctx *ctx)
{
	struct tui *t = ctx->priv;

	return t ? t->epfd : -1;
}

/* Signals and resizes seen through the input fd. */
static int check_screen(struct tui *t)
{
	int bits = screen_poll(t);

	if (bits & (SCREEN_QUIT | SCREEN_HANGUP))
		return MT_FE_QUIT;
	if (bits & SCREEN_RESIZE)
		screen_resize(t);
	return 0;
}

static int tui_tick(struct mt_fe_ctx *ctx)
{
	struct tui *t = ctx->priv;
	int act = check_screen(t);

	if (act & MT_FE_QUIT)
		return act;
	if (!t->paused)
		refresh_all(t);
	draw(t);
	return act;
}

/* An escape sequence curses could not decode (a TERM that does not match
 * the terminal, common over SSH) arrives as Esc followed by the rest of
 * the sequence. Taken at face value, the Esc would mean "back" and the
 * rest would be keys; swallow it instead. Called after an Esc with the
 * next character, if any. Returns true when it was such a sequence. */
static bool swallow_sequence(struct tui *t, int r, wint_t ch)
{
	wint_t c;

	if (r != OK || (ch != '[' && ch != 'O'))
		return false;
	/* CSI: parameters and intermediates (0x20-0x3f), then a final byte
	 * (0x40-0x7e); SS3: one more character. */
	while (get_wch(&c) == OK)
		if (ch == 'O' || (c >= 0x40 && c <= 0x7e))
			break;
	tui_message(t, false, "unknown key sequence ignored (is TERM=%s right?)",
		    getenv("TERM") ? getenv("TERM") : "");
	return true;
}

static int tui_input(struct mt_fe_ctx *ctx)
{
	struct tui *t = ctx->priv;
	int act = check_screen(t);
	wint_t ch;
	int r;

	if (act & MT_FE_QUIT)
		return act;
	while ((r = get_wch(&ch)) != ERR) {
		bool code = r == KEY_CODE_YES;

		if (!code && ch == 27) {
			wint_t next;
			int r2 = get_wch(&next);

			if (swallow_sequence(t, r2, next))
				continue;
			act |= key(t, 27, false);
			if (r2 == ERR || (act & MT_FE_QUIT))
				continue;
			ch = next; /* Alt+key, or Esc typed twice: both count */
			code = r2 == KEY_CODE_YES;
		}
		act |= key(t, (int)ch, code);
		if (act & MT_FE_QUIT)
			return act;
	}
	draw(t);
	return act;
}

static void tui_stop(struct mt_fe_ctx *ctx)
{
	struct tui *t = ctx->priv;
	const struct tui_view *views[] = { &view_top, &view_site, &view_flame, &view_procs,
					   &view_help };

	if (!t)
		return;
	screen_fini(t);
	for (size_t i = 0; i < sizeof(views) / sizeof(views[0]); i++)
		if (views[i]->fini)
			views[i]->fini(t);
	free(t);
	ctx->priv = NULL;
}

const struct mt_frontend frontend_tui = {
	.name = "tui",
	.start = tui_start,
	.input_fd = tui_input_fd,
	.tick = tui_tick,
	.input = tui_input,
	.stop = tui_stop,
};

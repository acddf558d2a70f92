// SPDX-License-Identifier: GPL-2.0-only
/*
 * tui.c - frontend_tui: the live ncurses view of `memtop -p PID`.
 *
 * Owns the session (struct tui), the screen layout (header, view area,
 * status line, key bar), view switching, the input line, the mouse, and
 * the actions that mean the same in every view (quit, help, settings,
 * pause, refresh interval, export with its question). Keys are dispatched
 * through the key table (keys.c): the current view gets the action first
 * and the rest falls through to here; a key bound nowhere in the view
 * answers with a one-line hint.
 *
 * Layout, top to bottom: the header (header.c: three lines, or one plus a
 * line of warnings on short terminals), the view, a status line and the
 * key bar. Each frame is drawn with erase() and refresh(), so curses sends
 * only the cells that changed.
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
#include "util/clock.h"

#define MSG_SECONDS 8

static const double intervals[] = { 0.25, 0.5, 1, 2, 3, 5, 10, 15, 30, 60 };
#define NINTERVALS (int)(sizeof(intervals) / sizeof(intervals[0]))

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
	t->msg_ns = clock_mono_ns();
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

/* ---- status line ----------------------------------------------------------- */

static void draw_input(struct tui *t, int y)
{
	const char *label = t->input.kind == KA_SEARCH  ? "Search: "
			    : t->input.kind == KA_SETUP ? "Export directory: "
							: "Filter: ";
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
	if (t->confirm) {
		/* the answer first: a long path may be cut at the right */
		tui_putf(t, y, 0, t->cols, t->attr[THEME_WARNING], "[y/N] write %s", t->confirm_path);
		return;
	}
	if (t->msg[0] && clock_mono_ns() - t->msg_ns < MSG_SECONDS * 1000000000ULL) {
		tui_put(t, y, 0, t->cols, t->attr[t->msg_error ? THEME_STATUS_ERROR : THEME_STATUS],
			t->msg);
		return;
	}
	if (t->hdr.ntargets > 0 && t->hdr.nalive == 0) {
		if (t->hdr.ended_clean || !t->hdr.ended[0])
			tui_put(t, y, 0, t->cols, t->attr[THEME_WARNING],
				"target exited: its data stays on screen; e exports it, q quits");
		else
			tui_putf(t, y, 0, t->cols, t->attr[THEME_WARNING],
				 "target ended (%s): its data stays on screen as at that moment; e exports it, q quits",
				 t->hdr.ended);
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
	header_draw(t);
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

/* Where e writes: memtop-PID-TIME.pb.gz in the export directory (the
 * settings' export_dir, else the current directory), as an absolute path
 * so the question shows exactly which file. */
static void export_path(struct tui *t, char *path, size_t len)
{
	char stamp[32], cwd[PATH_MAX] = ".";
	const char *dir = t->export_dir[0] ? t->export_dir : NULL;
	time_t now = time(NULL);
	struct tm tm;
	pid_t pid = t->hdr.ntargets ? t->hdr.target[0].pid : getpid();
	int n;

	localtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
	if (!dir || dir[0] != '/') {
		if (!getcwd(cwd, sizeof(cwd)))
			snprintf(cwd, sizeof(cwd), ".");
	}

	if (!dir)
		n = snprintf(path, len, "%s/memtop-%d-%s.pb.gz", cwd, (int)pid, stamp);
	else if (dir[0] != '/')
		n = snprintf(path, len, "%s/%s/memtop-%d-%s.pb.gz", cwd, dir, (int)pid, stamp);
	else
		n = snprintf(path, len, "%s%smemtop-%d-%s.pb.gz", dir,
			     dir[strlen(dir) - 1] == '/' ? "" : "/", (int)pid, stamp);
	if (n >= (int)len) /* the export then fails and says why */
		path[len - 1] = '\0';
}

static void do_export(struct tui *t, const char *path)
{
	char err[256] = "", size[16];
	int r;

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

int tui_change_interval(struct tui *t, int dir)
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

/* A command memtop launched still runs. */
static bool command_running(const struct tui *t)
{
	size_t i;

	if (!t->ctx->cfg->cmd_argv)
		return false;
	for (i = 0; i < model_target_count(t->model); i++)
		if (model_target_at(t->model, i)->alive)
			return true;
	return false;
}

/* q: quit, but first ask what becomes of a -- CMD that still runs. */
static int quit_or_ask(struct tui *t)
{
	if (!command_running(t))
		return MT_FE_QUIT;
	t->quit_asked = true;
	tui_message(t, true,
		    "quit: q or Enter stops %.60s (default) - d leaves it running, "
		    "unprobed - any other key stays",
		    t->ctx->cfg->cmd_argv[0]);
	return 0;
}

static int quit_answer(struct tui *t, int k, bool is_code)
{
	t->quit_asked = false;
	if (!is_code && (k == 'q' || k == '\n' || k == '\r'))
		return MT_FE_QUIT;
	if (is_code && (k == KEY_ENTER || k == KEY_F(10)))
		return MT_FE_QUIT;
	if (!is_code && (k == 'd' || k == 'D'))
		return MT_FE_QUIT | MT_FE_DETACH;
	tui_message(t, false, "not quitting");
	return 0;
}

/* [ ] { }: where a replay shows, as an interval for the loop to seek. */
static int time_move(struct tui *t, enum key_action a)
{
	const struct mt_replay_pos *pos = t->status->replay;
	long step = a == KA_TIME_BACK || a == KA_TIME_FORWARD ? 1 : 10, to;

	if (!pos) {
		tui_message(t, false,
			    "[ ] { } move through time in a replay (--replay, memtop attach)");
		return 0;
	}
	/* several keys before the replay moved: each from where the last left it */
	to = (t->seeking ? t->ctx->seek : pos->at) +
	     (a == KA_TIME_BACK || a == KA_TIME_BACK_MORE ? -step : step);
	if (to < pos->first)
		to = pos->first;
	if (to > pos->count - 1)
		to = pos->count - 1;
	t->ctx->seek = to;
	t->seeking = true;
	return MT_FE_SEEK;
}

static int global_action(struct tui *t, enum key_action a)
{
	switch (a) {
	case KA_QUIT:
		return quit_or_ask(t);
	case KA_HELP:
		if (t->view != &view_help) {
			t->help.from = t->view;
			t->help.scroll = 0;
			t->help.legend = false;
			tui_show(t, &view_help);
		} else if (!t->help.legend) {
			t->help.legend = true; /* ? again: the second page */
			t->help.scroll = 0;
		} else {
			tui_show(t, t->help.from ? t->help.from : &view_top);
		}
		return 0;
	case KA_NEXT_VIEW:
		tui_show(t, t->view == &view_flame ? &view_top : &view_flame);
		return 0;
	case KA_PROCS:
		tui_show(t, &view_procs);
		return 0;
	case KA_SETUP:
		if (t->view != &view_setup) {
			t->setup.from = t->view;
			tui_show(t, &view_setup);
		}
		return 0;
	case KA_TIME_BACK:
	case KA_TIME_FORWARD:
	case KA_TIME_BACK_MORE:
	case KA_TIME_FORWARD_MORE:
		return time_move(t, a);
	case KA_DETACH:
		if (t->status->replay && t->status->replay->live)
			return MT_FE_QUIT;
		tui_message(t, false, "d detaches from a session: only in memtop attach");
		return 0;
	case KA_PAUSE:
		if (t->status->replay) {
			t->paused = t->ctx->paused = !t->paused;
			tui_message(t, false,
				    t->paused ? "replay paused ([ ] step, Space resumes)"
					      : "replay resumed");
			return 0;
		}
		t->paused = !t->paused;
		t->snapped = t->view->kv; /* other views' snapshots are older */
		if (!t->paused)
			refresh_all(t);
		tui_message(t, false,
			    t->paused ? "paused: the display is frozen, data is still "
					"collected (Space resumes)"
				      : "resumed");
		return 0;
	case KA_SLOWER:
		return tui_change_interval(t, +1);
	case KA_FASTER:
		return tui_change_interval(t, -1);
	case KA_EXPORT:
		export_path(t, t->confirm_path, sizeof(t->confirm_path));
		t->confirm = true;
		return 0;
	case KA_REDRAW:
		clearok(curscr, TRUE);
		return 0;
	case KA_BACK:
		/* one level up: help goes back where it was opened */
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

/* Button 1 selects what is under the pointer (the view decides); the
 * wheel moves as the arrow keys do, three lines a notch. */
static void mouse(struct tui *t)
{
	MEVENT ev;
	int vy = header_rows(t);

	if (getmouse(&ev) != OK)
		return;
	if (ev.bstate & (BUTTON4_PRESSED | BUTTON5_PRESSED)) {
		enum key_action a = ev.bstate & BUTTON4_PRESSED ? KA_UP : KA_DOWN;

		for (int i = 0; i < 3 && t->view->action; i++)
			t->view->action(t, a);
		return;
	}
	if ((ev.bstate & (BUTTON1_PRESSED | BUTTON1_CLICKED)) && t->view->click && ev.y >= vy)
		t->view->click(t, ev.y - vy, ev.x);
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
	if (t->quit_asked)
		return quit_answer(t, k, is_code);
	if (t->confirm) {
		t->confirm = false;
		if (!is_code && (k == 'y' || k == 'Y'))
			do_export(t, t->confirm_path);
		else
			tui_message(t, false, "export cancelled: nothing written");
		return 0;
	}
	if (is_code && k == KEY_MOUSE) {
		mouse(t);
		return 0;
	}
	a = !is_code && k >= 128 ? KA_NONE : keys_lookup(k, t->view->kv);
	if (a == KA_NONE) {
		char name[32];

		/* an unbound key answers, in one line */
		if (!is_code && k >= 128)
			snprintf(name, sizeof(name), "this key");
		else
			keys_name(k, name, sizeof(name));
		tui_message(t, false, "%s does nothing here: ? or h lists the keys", name);
		return 0;
	}
	if (t->view->action && t->view->action(t, a)) {
		int act = t->act; /* what the view's action asks of app.c */

		t->act = 0;
		return act;
	}
	return global_action(t, a);
}

/* ---- front-end ops ----------------------------------------------------------- */

int tui_set_theme(struct tui *t, const char *spec, char *err, size_t errlen)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	struct theme th;
	int e;

	exe[n > 0 ? n : 0] = '\0';
	snprintf(t->theme_name, sizeof(t->theme_name), "%s",
		 !t->color ? "mono"
		 : spec    ? spec
			   : "default");
	e = theme_load(&th, t->theme_name, n > 0 ? exe : NULL, err, errlen);
	if (e)
		snprintf(t->theme_name, sizeof(t->theme_name), "default (built-in)");
	screen_apply_theme(t, &th);
	return e;
}

static int tui_start(struct mt_fe_ctx *ctx)
{
	struct tui *t = calloc(1, sizeof(*t));
	char err[512] = "";
	int e;

	if (!t)
		return -ENOMEM;
	t->ctx = ctx;
	t->model = ctx->model;
	t->cfg = ctx->cfg;
	t->top.tiers = ctx->cfg->tiers;
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

	setup_load(t); /* the settings file, under the command line */
	e = tui_set_theme(t, t->theme_want[0] ? t->theme_want : NULL, err, sizeof(err));
	if (e) {
		tui_message(t, true, "theme: %s; using the built-in default", err);
	} else if (!t->color && t->cfg->theme && strcmp(t->cfg->theme, "mono") != 0) {
		tui_message(t, false, "colour is off (%s): theme '%s' not used",
			    t->cfg->no_color || getenv("NO_COLOR") ? "NO_COLOR" : "terminal",
			    t->cfg->theme);
	}
	if (t->setup.error[0])
		tui_message(t, true, "%s", t->setup.error);
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
	t->model = ctx->model; /* a replay that rewound made a new one */
	t->seeking = false;
	if (!t->paused || ctx->refresh)
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
	const struct tui_view *views[] = { &view_top,   &view_site, &view_flame,
					   &view_procs, &view_help, &view_setup };

	if (!t)
		return;
	screen_fini(t);
	for (size_t i = 0; i < sizeof(views) / sizeof(views[0]); i++)
		if (views[i]->fini)
			views[i]->fini(t);
	free(t);
	ctx->priv = NULL;
}

static int tui_check(const struct mt_config *cfg, char *err, size_t errlen)
{
	return screen_check(err, errlen);
}

const struct mt_frontend frontend_tui = {
	.name = "tui",
	.check = tui_check,
	.start = tui_start,
	.input_fd = tui_input_fd,
	.tick = tui_tick,
	.input = tui_input,
	.stop = tui_stop,
};

// SPDX-License-Identifier: GPL-2.0-only
/*
 * widgets.c - the drawing primitives of the TUI: safe text, bars,
 * sparklines, graphs and the key bar, each with a Unicode form and an
 * ASCII form (--ascii, or a locale that is not UTF-8).
 *
 * Everything goes to stdscr through the width-aware tui_put(): text from
 * the target (function names, paths) can hold control characters or bytes
 * that are not valid in the locale, and must neither move the cursor nor
 * send escape sequences to the user's terminal.
 */
#include "ui/tui/tui.h"

#include <errno.h>
#include <stdlib.h>

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <wchar.h>
#include <wctype.h>

#include "ui/format.h"
#include "util/sanitize.h"

#define PUT_MAX 1024

/* Decode s into at most max wide characters of total width <= maxw,
 * replacing what cannot be shown. Sets *cut when s did not fit. */
static int decode(const struct tui *t, const char *s, int maxw, wchar_t *out, int *widths, int max,
		  int *cols, bool *cut)
{
	size_t left = strlen(s);
	int n = 0;

	*cols = 0;
	*cut = false;
	while (left) {
		wchar_t wc;
		int w;

		if (t->utf8) {
			/* the one rule for text from a target (util/sanitize.h) */
			unsigned int cp;
			size_t r = sanitize_decode(s, left, &cp);

			wc = (wchar_t)cp;
			s += r;
			left -= r;
		} else {
			unsigned char c = (unsigned char)*s++;

			left--;
			wc = c < 0x80 ? (wchar_t)c : L'?';
		}
		w = iswprint(wc) ? wcwidth(wc) : -1;
		if (w < 0) {
			wc = L'?';
			w = 1;
		}
		if (w == 0)
			continue; /* combining marks: dropped rather than misplaced */
		if (*cols + w > maxw || n == max) {
			*cut = true;
			break;
		}
		out[n] = wc;
		widths[n] = w;
		*cols += w;
		n++;
	}
	return n;
}

int tui_width(const struct tui *t, const char *s)
{
	wchar_t wbuf[PUT_MAX];
	int widths[PUT_MAX], cols;
	bool cut;

	decode(t, s, 1 << 20, wbuf, widths, PUT_MAX, &cols, &cut);
	return cols;
}

int tui_put(struct tui *t, int y, int x, int maxw, attr_t a, const char *s)
{
	wchar_t wbuf[PUT_MAX + 1];
	int widths[PUT_MAX], cols, n;
	bool cut;

	if (y < t->clip_y0 || y >= t->clip_y1 || x < 0 || x >= t->cols || maxw <= 0)
		return 0;
	if (maxw > t->cols - x)
		maxw = t->cols - x;
	n = decode(t, s, maxw, wbuf, widths, PUT_MAX, &cols, &cut);
	if (cut) {
		while (n > 0 && cols + 1 > maxw)
			cols -= widths[--n];
		wbuf[n++] = t->unicode ? L'\u2026' : L'~';
		cols++;
	}
	wbuf[n] = L'\0';
	attrset(a);
	mvaddnwstr(y, x, wbuf, n);
	attrset(A_NORMAL);
	return cols;
}

int tui_putf(struct tui *t, int y, int x, int maxw, attr_t a, const char *fmt, ...)
{
	char buf[PUT_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return tui_put(t, y, x, maxw, a, buf);
}

void tui_put_right(struct tui *t, int y, int x, int w, attr_t a, const char *s)
{
	int sw = tui_width(t, s);

	if (sw > w)
		tui_put(t, y, x, w, a, s);
	else
		tui_put(t, y, x + w - sw, sw, a, s);
}

void tui_fill(struct tui *t, int y, int x, int w, attr_t a)
{
	if (y < t->clip_y0 || y >= t->clip_y1 || x >= t->cols || w <= 0)
		return;
	if (x < 0) {
		w += x;
		x = 0;
	}
	if (w > t->cols - x)
		w = t->cols - x;
	attrset(a);
	mvhline(y, x, ' ', w);
	attrset(A_NORMAL);
}

static void put_wch(struct tui *t, int y, int x, wchar_t wc, attr_t a)
{
	wchar_t s[2] = { wc, L'\0' };

	if (y < t->clip_y0 || y >= t->clip_y1 || x < 0 || x >= t->cols)
		return;
	attrset(a);
	mvaddnwstr(y, x, s, 1);
	attrset(A_NORMAL);
}

void tui_bar(struct tui *t, int y, int x, int w, double frac, attr_t a)
{
	static const wchar_t eighths[] = L" \u258f\u258e\u258d\u258c\u258b\u258a\u2589";
	int units;

	if (w <= 0)
		return;
	if (!(frac > 0))
		frac = 0;
	if (frac > 1)
		frac = 1;
	units = (int)lround(frac * w * 8);
	for (int i = 0; i < w && x + i < t->cols; i++) {
		int u = units - i * 8;
		wchar_t c;

		if (t->unicode)
			c = u >= 8 ? L'\u2588' : u > 0 ? eighths[u] : L' ';
		else
			c = u >= 8 ? L'#' : u >= 4 ? L'-' : L'.';
		put_wch(t, y, x + i, c, a);
	}
}

static double series_max(const double *v, int n)
{
	double m = 0;

	for (int i = 0; i < n; i++)
		if (v[i] > m)
			m = v[i];
	return m;
}

void tui_sparkline(struct tui *t, int y, int x, int w, const double *v, int n, attr_t a)
{
	static const wchar_t uni[] = L"\u2581\u2582\u2583\u2584\u2585\u2586\u2587\u2588";
	static const wchar_t ascii[] = L"_.:-=+*#";
	const wchar_t *lv = t->unicode ? uni : ascii;
	double max;
	int pad;

	if (w <= 0)
		return;
	if (n > w) {
		v += n - w;
		n = w;
	}
	max = series_max(v, n);
	pad = w - n; /* newest point at the right edge */
	for (int i = 0; i < n && x + pad + i < t->cols; i++) {
		int l = max > 0 ? (int)lround(v[i] / max * 7) : 0;

		put_wch(t, y, x + pad + i, lv[l < 0 ? 0 : l > 7 ? 7 : l], a);
	}
}

void tui_graph(struct tui *t, int y, int x, int w, int h, const double *v, int n, double lo,
	       double hi, attr_t a)
{
	static const wchar_t uni[] = L" \u2581\u2582\u2583\u2584\u2585\u2586\u2587";
	int pad;

	if (w <= 0 || h <= 0)
		return;
	if (n > w) {
		v += n - w;
		n = w;
	}
	if (!(hi > lo))
		hi = lo + 1;
	pad = w - n;
	for (int i = 0; i < n; i++) {
		double f = (v[i] - lo) / (hi - lo);
		int units = (int)lround((f < 0 ? 0 : f > 1 ? 1 : f) * h * 8);

		/* A non-zero value always shows at least a sliver. */
		if (units == 0 && v[i] > lo)
			units = 1;
		for (int r = 0; r < h; r++) {
			int u = units - r * 8; /* r counts rows up from the bottom */
			int yy = y + h - 1 - r;
			wchar_t c;

			if (t->unicode)
				c = u >= 8 ? L'\u2588' : u > 0 ? uni[u] : L' ';
			else
				c = u >= 8 ? L'#' : u >= 4 ? L':' : u > 0 ? L'.' : L' ';
			if (c != L' ')
				put_wch(t, yy, x + pad + i, c, a);
		}
	}
}

void tui_keybar(struct tui *t, int y, unsigned kv)
{
	const struct key_binding *bar[32];
	size_t n = keys_bar(kv, bar, sizeof(bar) / sizeof(bar[0]));
	int x = 0;

	tui_fill(t, y, 0, t->cols, t->attr[THEME_NORMAL]);
	/* Most important first; a hint that does not fit is left out whole
	 * and a shorter one after it may still fit. */
	for (size_t i = 0; i < n && x < t->cols; i++) {
		char name[32];
		int need;

		keys_name(bar[i]->keys[0], name, sizeof(name));
		/* "q" then " Quit " as in htop's "F10Quit": whole hints only. */
		need = tui_width(t, name) + (int)strlen(bar[i]->hint) + 1;
		if (x + need > t->cols)
			continue;
		x += tui_put(t, y, x, t->cols - x, t->attr[THEME_HINT_KEY], name);
		x += tui_putf(t, y, x, t->cols - x, t->attr[THEME_HINT_TEXT], " %s", bar[i]->hint);
		x++;
	}
}

int tui_put_frame(struct tui *t, int y, int x, int w, const struct mt_frame *f, attr_t name_attr,
		  attr_t loc_attr)
{
	char name[512], loc[512];
	int used;

	fmt_frame_name(name, sizeof(name), f);
	used = tui_put(t, y, x, w, name_attr, name);
	if (f->file && f->line)
		snprintf(loc, sizeof(loc), " (%s %s:%u)", f->module ? f->module : "?",
			 fmt_basename(f->file), f->line);
	else if (f->function && f->module)
		snprintf(loc, sizeof(loc), " (%s)", f->module);
	else
		loc[0] = '\0';
	if (loc[0] && used < w)
		used += tui_put(t, y, x + used, w - used, loc_attr, loc);
	return used;
}

char *tui_fmt_growth(char *buf, size_t len, double bytes)
{
	char b[32];

	if (fabs(bytes) < 0.5) {
		snprintf(buf, len, "0");
		return buf;
	}
	fmt_bytes(b, sizeof(b), bytes);
	snprintf(buf, len, "%s%s", bytes > 0 ? "+" : "", b);
	return buf;
}

bool tui_list_move(int *sel, int n, int page, enum key_action a)
{
	int s = *sel;

	if (page < 1)
		page = 1;
	switch (a) {
	case KA_UP:
		s--;
		break;
	case KA_DOWN:
		s++;
		break;
	case KA_PAGE_UP:
		s -= page;
		break;
	case KA_PAGE_DOWN:
		s += page;
		break;
	case KA_HOME:
		s = 0;
		break;
	case KA_END:
		s = n - 1;
		break;
	default:
		return false;
	}
	if (s > n - 1)
		s = n - 1;
	if (s < 0)
		s = 0;
	*sel = s;
	return true;
}

void tui_list_follow(int *scroll, int sel, int n, int page)
{
	if (page < 1)
		page = 1;
	if (sel < *scroll)
		*scroll = sel;
	if (sel >= *scroll + page)
		*scroll = sel - page + 1;
	if (*scroll > n - page)
		*scroll = n - page;
	if (*scroll < 0)
		*scroll = 0;
}

bool tui_scroll_move(int *scroll, int lines, int page, enum key_action a)
{
	int max = lines - page;

	if (a == KA_END) {
		*scroll = max > 0 ? max : 0;
		return true;
	}
	if (!tui_list_move(scroll, lines, page, a))
		return false;
	if (*scroll > max)
		*scroll = max > 0 ? max : 0;
	return true;
}

int tui_page_line(struct tui_page *pg)
{
	int r = pg->n++ - pg->scroll;

	return r >= 0 && r < pg->h ? pg->y0 + r : -1;
}

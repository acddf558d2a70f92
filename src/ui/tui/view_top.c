// SPDX-License-Identifier: GPL-2.0-only
/*
 * view_top.c - the site table: one row per call site with its allocation
 * rates, in-use bytes, growth, leak score and the age of its oldest live
 * sample; sortable by any column, filtered by text, grouped by function,
 * line or stack. Enter opens the selected site (view_site.c).
 *
 * Until the user moves it, the cursor stays on the first row, whatever
 * site is there; once moved, it follows its site by id while the order
 * changes under it. A new sort, filter or grouping puts it back on top.
 */
#include "ui/tui/tui.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ui/format.h"

struct column {
	const char *title;
	enum mt_sort sort;
	int width; /* 0: the rest of the line */
};

/* Display order; < and > walk it. */
static const struct column columns[] = {
	{ "ALLOC/s", MT_SORT_ALLOC_RATE, 8 }, { "OBJ/s", MT_SORT_OBJ_RATE, 7 },
	{ "IN-USE", MT_SORT_INUSE, 8 },	      { "GROWTH/m", MT_SORT_GROWTH, 9 },
	{ "LEAK", MT_SORT_LEAK, 9 },	      { "AGE", MT_SORT_AGE, 6 },
	{ "FUNCTION", MT_SORT_NAME, 0 },
};
#define NCOLUMNS (int)(sizeof(columns) / sizeof(columns[0]))
#define COL_LEAK 4

static const char *const group_names[] = { "function", "line", "stack" };

static int column_of(enum mt_sort s)
{
	for (int i = 0; i < NCOLUMNS; i++)
		if (columns[i].sort == s)
			return i;
	return 0;
}

static int leak_width(const struct tui *t)
{
	return t->cols >= 120 ? 14 : columns[COL_LEAK].width;
}

static bool site_matches(const struct mt_site *s, const char *filter)
{
	char name[512];
	const struct mt_frame *f = s->frame;

	if (!filter[0])
		return true;
	fmt_frame_name(name, sizeof(name), f);
	return strcasestr(name, filter) || (f->module && strcasestr(f->module, filter)) ||
	       (f->file && strcasestr(f->file, filter));
}

/* With a process selected (the process list): that process's in-use per
 * site id, and NAN for sites it has no allocation at. NULL: no filter. */
static double *pid_inuse(struct tui *t, size_t nsites)
{
	double *v;

	if (!t->top.pid)
		return NULL;
	v = malloc((nsites + 1) * sizeof(*v));
	if (!v)
		return NULL;
	for (size_t i = 0; i <= nsites; i++)
		v[i] = NAN;
	for (size_t i = 0; i < model_stack_count(t->model); i++) {
		const struct mt_stack_agg *a = model_stack_at(t->model, i);
		const struct mt_site *s = model_stack_site(t->model, i);

		if (a->pid != t->top.pid || !s || s->id > nsites)
			continue;
		v[s->id] = (isnan(v[s->id]) ? 0 : v[s->id]) + a->inuse_bytes;
	}
	return v;
}

static void top_refresh(struct tui *t)
{
	struct tui_top *p = &t->top;
	size_t n = model_site_count(t->model);
	struct mt_site **v = malloc((n ? n : 1) * sizeof(*v));
	double *mine = pid_inuse(t, n);

	if (!v || tui_reserve((void **)&p->rows, &p->cap, n, sizeof(*p->rows)) || (p->pid && !mine)) {
		free(v);
		free(mine);
		tui_message(t, true, "out of memory");
		return;
	}
	n = model_sites_sorted(t->model, p->sort, v, n);
	p->nsites = n;
	p->nrows = 0;
	for (size_t i = 0; i < n; i++) {
		const struct mt_site *s = v[i];
		struct tui_row *r;

		if (!site_matches(s, p->filter) || (mine && isnan(mine[s->id])))
			continue;
		r = &p->rows[p->nrows++];
		r->id = s->id;
		r->frame = *s->frame;
		r->alloc_bytes_per_s = s->alloc_bytes_per_s;
		r->alloc_objects_per_s = s->alloc_objects_per_s;
		/* in use by the selected process; the other columns are the
		 * site's over all processes (the status line says so) */
		r->inuse_bytes = mine ? mine[s->id] : s->inuse_bytes;
		r->growth_per_min = s->stats.long_fit.slope * 60;
		r->leak_score = s->stats.leak_score;
		r->age_s = s->stats.oldest_live_age_s;
	}
	free(v);
	free(mine);
	if (p->invert) {
		for (size_t i = 0; i < p->nrows / 2; i++) {
			struct tui_row tmp = p->rows[i];

			p->rows[i] = p->rows[p->nrows - 1 - i];
			p->rows[p->nrows - 1 - i] = tmp;
		}
	}
	for (size_t i = 0; p->follow && i < p->nrows; i++) {
		if (p->rows[i].id == p->sel_id) {
			p->sel = (int)i;
			break;
		}
	}
	if (p->sel >= (int)p->nrows)
		p->sel = (int)p->nrows - 1;
	if (p->sel < 0)
		p->sel = 0;
	p->sel_id = p->nrows ? p->rows[p->sel].id : 0;
}

static void draw_titles(struct tui *t, int y)
{
	const struct tui_top *p = &t->top;
	int x = 0;

	tui_fill(t, y, 0, t->cols, t->attr[THEME_TABLE_HEADER]);
	for (int i = 0; i < NCOLUMNS && x < t->cols; i++) {
		bool sorted = columns[i].sort == p->sort;
		int w = i == COL_LEAK ? leak_width(t) : columns[i].width;
		attr_t a = t->attr[sorted ? THEME_TABLE_SORTED : THEME_TABLE_HEADER];
		char title[32];

		snprintf(title, sizeof(title), "%s%s", columns[i].title,
			 !sorted   ? "" :
			 t->unicode ? (p->invert ? "\u25b2" : "\u25bc") :
				      (p->invert ? "^" : "v"));
		if (w == 0) {
			tui_put(t, y, x, t->cols - x, a, title);
			break;
		}
		if (i == COL_LEAK || i == NCOLUMNS - 1)
			tui_put(t, y, x, w, a, title); /* left-aligned over a bar */
		else
			tui_put_right(t, y, x, w, a, title);
		x += w + 1;
	}
}

static void draw_row(struct tui *t, int y, const struct tui_row *r, bool selected)
{
	char b[32];
	int x = 0, lw = leak_width(t);
	attr_t base = t->attr[selected ? THEME_ROW_SELECTED : THEME_NORMAL];
	enum theme_elem le = r->leak_score >= 60 ? THEME_LEAK_HIGH :
			     r->leak_score >= 30 ? THEME_LEAK_MID :
						   THEME_LEAK_LOW;

	if (selected)
		tui_fill(t, y, 0, t->cols, base);
	tui_put_right(t, y, x, 8, base, fmt_bytes(b, sizeof(b), r->alloc_bytes_per_s));
	x += 9;
	tui_put_right(t, y, x, 7, base, fmt_count(b, sizeof(b), r->alloc_objects_per_s));
	x += 8;
	tui_put_right(t, y, x, 8, base, fmt_bytes(b, sizeof(b), r->inuse_bytes));
	x += 9;
	tui_put_right(t, y, x, 9, base, tui_fmt_growth(b, sizeof(b), r->growth_per_min));
	x += 10;
	snprintf(b, sizeof(b), "%3.0f", r->leak_score);
	tui_put(t, y, x, 3, selected ? base : t->attr[le], b);
	tui_bar(t, y, x + 4, lw - 4, r->leak_score / 100, selected ? base : t->attr[le]);
	x += lw + 1;
	tui_put_right(t, y, x, 6, base, fmt_age(b, sizeof(b), r->age_s));
	x += 7;
	if (x < t->cols)
		tui_put_frame(t, y, x, t->cols - x, &r->frame, base,
			      selected ? base : t->attr[THEME_DIM]);
}

static void top_draw(struct tui *t, int y, int h)
{
	struct tui_top *p = &t->top;
	int rows = h - 1;

	draw_titles(t, y);
	p->page = rows;
	if (p->nrows == 0) {
		char a[16];

		if (p->filter[0] && p->nsites)
			tui_putf(t, y + 2, 2, t->cols - 4, t->attr[THEME_DIM],
				 "no site matches \"%s\" (Esc clears the filter)", p->filter);
		else
			tui_putf(t, y + 2, 2, t->cols - 4, t->attr[THEME_DIM],
				 "no sampled allocation yet: one sample per %s allocated, on average",
				 fmt_bytes(a, sizeof(a), (double)model_rate(t->model)));
		return;
	}
	tui_list_follow(&p->scroll, p->sel, (int)p->nrows, rows);
	for (int i = 0; i < rows && p->scroll + i < (int)p->nrows; i++)
		draw_row(t, y + 1 + i, &p->rows[p->scroll + i], p->scroll + i == p->sel);
}

/* After a new order, the cursor goes back to the top. */
static void reorder(struct tui *t)
{
	t->top.sel = 0;
	t->top.follow = false;
	top_refresh(t);
}

static void set_sort(struct tui *t, enum mt_sort s)
{
	t->top.sort = s;
	reorder(t);
}

static bool top_action(struct tui *t, enum key_action a)
{
	struct tui_top *p = &t->top;
	int c;

	if (tui_list_move(&p->sel, (int)p->nrows, p->page, a)) {
		if (p->nrows)
			p->sel_id = p->rows[p->sel].id;
		p->follow = true;
		return true;
	}
	switch (a) {
	case KA_ENTER:
		if (!p->nrows)
			return true;
		t->site.id = p->rows[p->sel].id;
		t->site.scroll = 0;
		t->snapped &= ~(unsigned)KV_SITE; /* another site: always a fresh look */
		tui_show(t, &view_site);
		return true;
	case KA_FILTER:
		tui_input_begin(t, KA_FILTER, p->filter);
		return true;
	case KA_BACK:
		if (p->filter[0] || p->pid) {
			p->filter[0] = '\0';
			p->pid = 0;
			reorder(t);
		}
		return true;
	case KA_SORT_NEXT:
	case KA_SORT_PREV:
		c = column_of(p->sort) + (a == KA_SORT_NEXT ? 1 : NCOLUMNS - 1);
		set_sort(t, columns[c % NCOLUMNS].sort);
		return true;
	case KA_SORT_INVERT:
		p->invert = !p->invert;
		reorder(t);
		return true;
	case KA_SORT_INUSE:
		set_sort(t, MT_SORT_INUSE);
		return true;
	case KA_SORT_LEAK:
		set_sort(t, MT_SORT_LEAK);
		return true;
	case KA_GROUP: {
		enum mt_group g = (model_group(t->model) + 1) % 3;
		int e = model_set_group(t->model, g);

		if (e)
			tui_message(t, true, "cannot regroup: %s", strerror(-e));
		else
			tui_message(t, false, "grouped by %s: rates and histories restart",
				    group_names[g]);
		reorder(t);
		return true;
	}
	default:
		return false;
	}
}

static void top_status(struct tui *t, char *buf, size_t len)
{
	const struct tui_top *p = &t->top;
	int n = snprintf(buf, len, "%zu sites", p->nsites);

	if (p->filter[0])
		n += snprintf(buf + n, len - n, " (%zu match \"%s\")", p->nrows, p->filter);
	if (p->pid)
		n += snprintf(buf + n, len - n, ", %zu of PID %d (IN-USE: its own; Esc: all)",
			      p->nrows, p->pid);
	snprintf(buf + n, len - n, ", by %s, sorted by %s%s", group_names[model_group(t->model)],
		 columns[column_of(p->sort)].title, p->invert ? " (inverted)" : "");
}

static void top_input_changed(struct tui *t)
{
	reorder(t);
}

static void top_fini(struct tui *t)
{
	free(t->top.rows);
	t->top.rows = NULL;
	t->top.nrows = t->top.cap = 0;
}

const struct tui_view view_top = {
	.name = "sites",
	.kv = KV_TOP,
	.snapshot = top_refresh,
	.draw = top_draw,
	.action = top_action,
	.status = top_status,
	.input_changed = top_input_changed,
	.fini = top_fini,
};

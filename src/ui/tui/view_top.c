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
#include "util/grow.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ui/format.h"

struct column {
	const char *title;
	int sort;  /* an enum mt_sort, or MT_SORT_NONE: not a sort key */
	int width; /* 0: the rest of the line */
	int drop;  /* order in which narrow terminals drop it; 0: never */
};

#define MT_SORT_NONE (-1)

/* Display order; < and > walk the sortable ones. */
static const struct column columns[] = {
	{ "PID", MT_SORT_NONE, 7, 4 },        { "ALLOC/s", MT_SORT_ALLOC_RATE, 8, 3 },
	{ "OBJ/s", MT_SORT_OBJ_RATE, 7, 1 },  { "IN-USE", MT_SORT_INUSE, 8, 0 },
	{ "GROWTH/m", MT_SORT_GROWTH, 9, 6 }, { "LEAK", MT_SORT_LEAK, 9, 0 },
	{ "AGE", MT_SORT_AGE, 6, 2 },         { "FUNCTION", MT_SORT_NAME, 0, 0 },
};
#define NCOLUMNS (int)(sizeof(columns) / sizeof(columns[0]))
enum { COL_PID, COL_ALLOC, COL_OBJ, COL_INUSE, COL_GROWTH, COL_LEAK, COL_AGE, COL_NAME };
#define LEAK_NARROW 5 /* the score without its bar */
#define LEAK_WIDE 14  /* a longer bar from 120 columns */
#define LEAK_STEP 5   /* in the drop order: the bar goes after the 5th column */


const char *top_column_name(int i, bool *hideable)
{
	if (i < 0 || i >= NCOLUMNS - 1)
		return NULL;
	*hideable = columns[i].drop != 0;
	return columns[i].title;
}

const char *top_sort_name(enum mt_sort s)
{
	for (int i = 0; i < NCOLUMNS; i++)
		if (columns[i].sort == (int)s)
			return columns[i].title;
	return "LEAK";
}

bool top_sort_parse(const char *name, enum mt_sort *out)
{
	for (int i = 0; i < NCOLUMNS; i++) {
		if (columns[i].sort != MT_SORT_NONE && !strcasecmp(columns[i].title, name)) {
			*out = (enum mt_sort)columns[i].sort;
			return true;
		}
	}
	return false;
}

static int column_of(enum mt_sort s)
{
	for (int i = 0; i < NCOLUMNS; i++)
		if (columns[i].sort == (int)s)
			return i;
	return COL_LEAK;
}

/* Widths of the columns shown on this terminal (0: hidden) and the
 * function name's, by priority: the name keeps a readable minimum (a third
 * of the width, 12 to 24 columns) and numeric columns give way first, in
 * their drop order; the leak score and in-use bytes always stay. */
static void layout_compute(const struct tui *t, int *w)
{
	int name_min = t->cols / 3, used = 0;

	name_min = name_min < 12 ? 12 : name_min > 24 ? 24 : name_min;
	for (int i = 0; i < NCOLUMNS - 1; i++) {
		bool off = (i == COL_PID && t->hdr.ntargets < 2) || (t->top.hidden & (1u << i));

		w[i] = off ? 0 : i == COL_LEAK && t->cols >= 120 ? LEAK_WIDE : columns[i].width;
		used += w[i] ? w[i] + 1 : 0;
	}
	for (int step = 1; step <= 6 && t->cols - used < name_min; step++) {
		for (int i = 0; i < NCOLUMNS - 1; i++) {
			if (columns[i].drop != step || !w[i])
				continue;
			used -= w[i] + 1;
			w[i] = 0;
		}
		if (step == LEAK_STEP && t->cols - used < name_min) {
			used -= w[COL_LEAK] - LEAK_NARROW;
			w[COL_LEAK] = LEAK_NARROW;
		}
	}
	w[COL_NAME] = t->cols - used > 0 ? t->cols - used : 0;
}

/* Whether text is in the frame's name, module or file (no text: yes). */
static bool frame_matches(const struct mt_frame *f, const char *text)
{
	char name[512];

	if (!text[0])
		return true;
	fmt_frame_name(name, sizeof(name), f);
	return strcasestr(name, text) || (f->module && strcasestr(f->module, text)) ||
	       (f->file && strcasestr(f->file, text));
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

/* Per site id: the process with the most in-use bytes there (then the
 * most allocated), and whether other processes allocate there too. */
struct site_pid {
	pid_t pid;
	bool more;
	double inuse, alloc;
};

static struct site_pid *site_pids(struct tui *t, size_t nsites)
{
	struct site_pid *v;

	if (t->hdr.ntargets < 2)
		return NULL;
	v = calloc(nsites + 1, sizeof(*v));
	if (!v)
		return NULL;
	for (size_t i = 0; i < model_stack_count(t->model); i++) {
		const struct mt_stack_agg *a = model_stack_at(t->model, i);
		const struct mt_site *s = model_stack_site(t->model, i);
		struct site_pid *e;

		if (!a || !s || s->id > nsites)
			continue;
		e = &v[s->id];
		if (e->pid && e->pid != a->pid)
			e->more = true;
		if (!e->pid || a->inuse_bytes > e->inuse ||
		    (a->inuse_bytes == e->inuse && a->alloc_bytes > e->alloc)) {
			if (e->pid && e->pid != a->pid)
				e->more = true;
			e->pid = a->pid;
			e->inuse = a->inuse_bytes;
			e->alloc = a->alloc_bytes;
		}
	}
	return v;
}

static void top_refresh(struct tui *t)
{
	struct tui_top *p = &t->top;
	size_t n = model_site_count(t->model);
	struct mt_site **v = malloc((n ? n : 1) * sizeof(*v));
	double *mine = pid_inuse(t, n);
	struct site_pid *pids = site_pids(t, n);

	if (!v || grow_array(&p->rows, &p->cap, n, sizeof(*p->rows)) || (p->pid && !mine)) {
		free(v);
		free(mine);
		free(pids);
		tui_message(t, true, "out of memory");
		return;
	}
	n = model_sites_sorted(t->model, p->sort, v, n);
	p->nsites = n;
	p->nrows = 0;
	for (size_t i = 0; i < n; i++) {
		const struct mt_site *s = v[i];
		struct tui_row *r;

		if (!frame_matches(s->frame, p->filter) || (mine && isnan(mine[s->id])) ||
		    !device_tier_shown(s->stack->dev.tier, p->tiers))
			continue;
		r = &p->rows[p->nrows++];
		r->id = s->id;
		r->frame = *s->frame;
		/* smoothed over a stated window, as -b (ui/figures.h) */
		r->alloc_bytes_per_s = s->stats.rate_bytes_per_s;
		r->alloc_objects_per_s = model_site_obj_rate(s);
		r->rate_approx = s->stats.rate_rel_err > MT_APPROX_REL_ERR;
		r->inuse_approx = s->stats.inuse_rel_err > MT_APPROX_REL_ERR;
		r->growth_shown = s->stats.growth_shown;
		r->ended = s->ended_ns != 0;
		r->mmap = s->stack->mmap;
		r->dev = s->stack->dev;
		r->untracked = s->untracked_samples != 0;
		/* in use by the selected process; the other columns are the
		 * site's over all processes (the status line says so) */
		r->inuse_bytes = mine ? mine[s->id] : s->inuse_bytes;
		r->growth_per_min = s->stats.long_fit.slope * 60;
		r->leak_score = s->stats.leak_score;
		r->age_s = s->stats.oldest_live_age_s;
		r->pid = pids && s->id <= n ? pids[s->id].pid : 0;
		r->more_pids = pids && s->id <= n && pids[s->id].more;
	}
	free(v);
	free(mine);
	free(pids);
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

static void draw_titles(struct tui *t, int y, const int *w)
{
	const struct tui_top *p = &t->top;
	int x = 0;

	tui_fill(t, y, 0, t->cols, t->attr[THEME_TABLE_HEADER]);
	for (int i = 0; i < NCOLUMNS && x < t->cols; i++) {
		bool sorted = columns[i].sort == (int)p->sort;
		attr_t a = t->attr[sorted ? THEME_TABLE_SORTED : THEME_TABLE_HEADER];
		char title[32];

		if (!w[i])
			continue;
		snprintf(title, sizeof(title), "%s%s", columns[i].title,
			 !sorted      ? ""
			 : t->unicode ? (p->invert ? "\u25b2" : "\u25bc")
				      : (p->invert ? "^" : "v"));
		if (i == COL_LEAK || i == COL_NAME)
			tui_put(t, y, x, w[i], a, title); /* left-aligned over a bar */
		else
			tui_put_right(t, y, x, w[i], a, title);
		x += w[i] + 1;
	}
}

/* text into b, with "~" in front when the sampling error is large */
static const char *approx_cell(char *b, size_t len, const char *text, bool approx)
{
	snprintf(b, len, "%s%s", approx ? "~" : "", text);
	return b;
}

/* The text of a numeric cell. */
static const char *cell_format(const struct tui_row *r, int col, char *b, size_t len)
{
	char tmp[32];

	switch (col) {
	case COL_PID:
		if (r->pid)
			snprintf(b, len, "%d%s", (int)r->pid, r->more_pids ? "+" : "");
		else
			snprintf(b, len, "-");
		return b;
	case COL_ALLOC:
		return approx_cell(b, len, fmt_bytes(tmp, sizeof(tmp), r->alloc_bytes_per_s),
				   r->rate_approx);
	case COL_OBJ:
		return approx_cell(b, len, fmt_count(tmp, sizeof(tmp), r->alloc_objects_per_s),
				   r->rate_approx);
	case COL_INUSE:
		return approx_cell(b, len, fmt_bytes(tmp, sizeof(tmp), r->inuse_bytes),
				   r->inuse_approx && r->inuse_bytes > 0);
	case COL_GROWTH:
		if (!r->growth_shown) /* within the noise: no number */
			return strcpy(b, "-");
		return tui_fmt_growth(b, len, r->growth_per_min);
	case COL_LEAK:
		snprintf(b, len, "%3.0f", r->leak_score);
		return b;
	case COL_AGE:
		return fmt_age(b, len, r->age_s);
	default:
		b[0] = '\0';
		return b;
	}
}

static void draw_row(struct tui *t, int y, const struct tui_row *r, bool selected, const int *w)
{
	char b[32];
	int x = 0;
	attr_t base = t->attr[selected ? THEME_ROW_SELECTED : THEME_NORMAL];
	int sev = r->leak_score >= 60 ? 2 : r->leak_score >= 30 ? 1 : 0;
	/* the severity stays readable under the cursor: its own pair there */
	attr_t la = t->attr[selected ? THEME_LEAK_LOW_SELECTED + sev : THEME_LEAK_LOW + sev];

	if (selected)
		tui_fill(t, y, 0, t->cols, base);
	for (int i = 0; i < COL_NAME; i++) {
		if (!w[i])
			continue;
		cell_format(r, i, b, sizeof(b));
		if (i == COL_LEAK) {
			tui_put(t, y, x, 3, la, b);
			if (w[i] > 4)
				tui_bar(t, y, x + 4, w[i] - 4, r->leak_score / 100, la);
		} else {
			tui_put_right(t, y, x, w[i], base, b);
		}
		x += w[i] + 1;
	}
	if (x < t->cols)
		x += tui_put_frame(t, y, x, t->cols - x, &r->frame, base,
				   selected ? base : t->attr[THEME_DIM]);
	if (r->mmap && x < t->cols)
		x += tui_put(t, y, x, t->cols - x, t->attr[THEME_DIM], " [mmap]");
	if (r->dev.tier && x < t->cols) {
		char tag[128] = " [";

		device_tag_describe(&r->dev, tag + 2, sizeof(tag) - 3);
		strcat(tag, "]");
		x += tui_put(t, y, x, t->cols - x, t->attr[THEME_DIM], tag);
	}
	if (r->untracked && x < t->cols)
		tui_put(t, y, x, t->cols - x, t->attr[THEME_WARNING], " [in-use low]");
}

static void top_draw(struct tui *t, int y, int h)
{
	struct tui_top *p = &t->top;
	int rows = h - 1, w[NCOLUMNS];

	layout_compute(t, w);
	draw_titles(t, y, w);
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
		draw_row(t, y + 1 + i, &p->rows[p->scroll + i], p->scroll + i == p->sel, w);
}

/* Put the cursor on the first row from start (wrapping) whose name,
 * module or file holds the search text. False when none does. */
static bool search_from(struct tui *t, int start)
{
	struct tui_top *p = &t->top;

	if (!p->search[0] || !p->nrows)
		return false;
	for (size_t k = 0; k < p->nrows; k++) {
		int i = (int)((start + k) % p->nrows);

		if (frame_matches(&p->rows[i].frame, p->search)) {
			p->sel = i;
			p->sel_id = p->rows[i].id;
			p->follow = true;
			return true;
		}
	}
	return false;
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
		if (p->filter[0] || p->pid || p->search[0]) {
			p->filter[0] = '\0';
			p->search[0] = '\0';
			p->pid = 0;
			reorder(t);
		} else {
			tui_message(t, false, "the site table is the top level: q or F10 quits");
		}
		return true;
	case KA_SORT_NEXT:
	case KA_SORT_PREV:
		c = column_of(p->sort);
		do
			c = (c + (a == KA_SORT_NEXT ? 1 : NCOLUMNS - 1)) % NCOLUMNS;
		while (columns[c].sort == MT_SORT_NONE);
		set_sort(t, (enum mt_sort)columns[c].sort);
		return true;
	case KA_SEARCH:
		tui_input_begin(t, KA_SEARCH, p->search);
		return true;
	case KA_SEARCH_NEXT:
		if (!search_from(t, p->sel + 1))
			tui_message(t, false,
				    p->search[0] ? "no other site matches \"%s\""
						 : "nothing to search: / or F3 first",
				    p->search);
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
	case KA_TIER:
		p->tiers = (p->tiers + 1) % MT_TIERS_COUNT;
		tui_message(t, false, "tier: %s sites", device_tiers_name(p->tiers));
		reorder(t);
		return true;
	case KA_GROUP: {
		enum mt_group g = (model_group(t->model) + 1) % 3;
		int e = model_apply(t->model, MT_INPUT_GROUP(g));

		if (e)
			tui_message(t, true, "cannot regroup: %s", strerror(-e));
		else
			tui_message(t, false, "grouped by %s: each site keeps its past",
				    mt_group_names()[g]);
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
	if (p->tiers != MT_TIERS_ALL)
		n += snprintf(buf + n, len - n, ", %s tier only (T: next)",
			      device_tiers_name(p->tiers));
	snprintf(buf + n, len - n, ", by %s, sorted by %s%s", mt_group_names()[model_group(t->model)],
		 columns[column_of(p->sort)].title, p->invert ? " (inverted)" : "");
}

static void top_input_changed(struct tui *t)
{
	if (t->input.kind == KA_SEARCH)
		search_from(t, 0);
	else
		reorder(t);
}

/* A click on row (0: the column titles, which sort by the column under
 * the pointer) or the wheel. */
static void top_click(struct tui *t, int row, int col)
{
	struct tui_top *p = &t->top;
	int w[NCOLUMNS], x = 0;

	if (row == 0) {
		layout_compute(t, w);
		for (int i = 0; i < NCOLUMNS; i++) {
			if (!w[i] && i != COL_NAME)
				continue;
			if (col >= x && (col < x + w[i] + 1 || i == COL_NAME)) {
				if (columns[i].sort != MT_SORT_NONE)
					set_sort(t, (enum mt_sort)columns[i].sort);
				return;
			}
			x += w[i] + 1;
		}
		return;
	}
	if (p->scroll + row - 1 < (int)p->nrows) {
		p->sel = p->scroll + row - 1;
		p->sel_id = p->rows[p->sel].id;
		p->follow = true;
	}
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
	.click = top_click,
	.fini = top_fini,
};

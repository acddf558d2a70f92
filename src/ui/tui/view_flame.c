// SPDX-License-Identifier: GPL-2.0-only
/*
 * view_flame.c - the flame view: the call tree of in-use (or allocated)
 * bytes drawn as rows of boxes, root at the top, each box as wide as its
 * share. Arrows or h/j/k/l move between frames, Enter zooms into one, Esc
 * zooms back out, / highlights frames by name.
 *
 * The geometry is flame.c's; this file only rebuilds the tree from the
 * model's stacks on refresh and paints boxes. Zoom and cursor are carried
 * across refreshes by label path (flame_tree_match), so they stay put while
 * the numbers move.
 */
#include "ui/tui/tui.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ui/format.h"

static void flame_refresh(struct tui *t)
{
	struct tui_flame *p = &t->flame;
	struct flame_tree *nt = flame_tree_new("all");
	bool multi = model_target_count(t->model) > 1;
	size_t n = model_stack_count(t->model);
	int failed = 0;

	if (!nt) {
		tui_message(t, true, "flame view: out of memory");
		return;
	}
	for (size_t i = 0; i < n; i++) {
		const struct mt_stack_agg *a = model_stack_at(t->model, i);
		const struct mt_stack *st = a ? a->stack : NULL;
		const char *prefix[3];
		char proc[48], tag[128] = "[device ";
		int np = 0;
		__u32 skip;

		if (!st || !device_tier_shown(st->dev.tier, t->top.tiers))
			continue;
		if (multi) {
			const struct mt_target *tg = model_target(t->model, a->pid);

			snprintf(proc, sizeof(proc), "%s (%d)", tg ? tg->comm : "?", (int)a->pid);
			prefix[np++] = proc;
		}
		if (st->dev.tier) {
			/* the device tier under a root of its own (T filters) */
			device_tag_describe(&st->dev, tag + 8, sizeof(tag) - 9);
			strcat(tag, "]");
			prefix[np++] = tag;
		}
		if (st->truncated)
			prefix[np++] = "[incomplete stack]";
		/* From the call site outwards: allocator frames are noise here. */
		skip = st->site_frame <= st->nframes ? st->site_frame : st->nframes;
		if (flame_tree_add(nt, prefix, np, st->frames + skip, st->nframes - skip,
				   p->alloc_mode ? a->alloc_bytes : a->inuse_bytes))
			failed++;
	}
	if (failed)
		tui_message(t, true, "flame view: out of memory, %d stacks left out", failed);
	flame_tree_sort(nt);
	if (p->tree) {
		p->zoom = p->zoom ? flame_tree_match(nt, p->zoom) : NULL;
		p->sel = p->sel ? flame_tree_match(nt, p->sel) : NULL;
		flame_tree_free(p->tree);
	}
	if (p->zoom == flame_tree_root(nt))
		p->zoom = NULL;
	p->tree = nt;
	if (!p->sel)
		p->sel = flame_tree_root(nt);
}

static enum theme_elem box_elem(const struct tui_flame *p, const struct flame_box *b)
{
	unsigned h = 5381;

	if (b->node == p->sel)
		return THEME_FLAME_SELECTED;
	if (flame_node_matches(b->node, p->search))
		return THEME_FLAME_MATCH;
	if (b->ancestor)
		return THEME_FLAME_ANCESTOR;
	/* The same function gets the same colour everywhere. */
	for (const char *s = b->label; *s; s++)
		h = h * 33 + (unsigned char)*s;
	return THEME_FLAME_1 + h % 4;
}

static void draw_box(struct tui *t, int y, const struct tui_flame *p, const struct flame_box *b)
{
	attr_t a = t->attr[box_elem(p, b)];
	const char *sep = t->unicode ? "\u2502" : "|";

	if (b->width >= 2) {
		tui_fill(t, y, b->x, b->width - 1, a);
		tui_put(t, y, b->x, b->width - 1, a, b->label);
	}
	tui_put(t, y, b->x + b->width - 1, 1, a, sep);
}

/* The cursor's box, falling back to its nearest visible ancestor when the
 * box is too narrow to draw at this width. */
static ssize_t sel_box(struct tui_flame *p)
{
	for (const struct flame_node *n = p->sel; n; n = n->parent) {
		ssize_t i = flame_layout_find(&p->layout, n);

		if (i >= 0) {
			p->sel = n;
			return i;
		}
	}
	return -1;
}

static void draw_title(struct tui *t, int y, const struct tui_flame *p)
{
	const struct flame_node *root = flame_tree_root(p->tree);
	char a[32], path[256] = "";
	const struct flame_node *chain[64];
	int x, n = 0, used = 0;

	x = tui_putf(t, y, 0, t->cols, t->attr[THEME_TITLE], "%s %s",
		     p->alloc_mode ? "allocated bytes" : "in-use bytes",
		     fmt_bytes(a, sizeof(a), root->total));
	for (const struct flame_node *z = p->zoom; z && n < 64; z = z->parent)
		chain[n++] = z;
	while (n-- > 0 && used < (int)sizeof(path))
		used += snprintf(path + used, sizeof(path) - used, "%s%s", used ? " > " : "",
				 chain[n]->label);
	if (p->zoom)
		x += tui_putf(t, y, x + 2, t->cols - x - 2, t->attr[THEME_HEADER], "zoom %s", path) +
		     2;
	if (p->search[0]) {
		double m = flame_match_total(p->zoom ? p->zoom : root, p->search);
		const struct flame_node *z = p->zoom ? p->zoom : root;

		tui_putf(t, y, x + 2, t->cols - x - 2, t->attr[THEME_FLAME_MATCH],
			 "\"%s\": %s, %.1f%%", p->search, fmt_bytes(a, sizeof(a), m),
			 z->total > 0 ? 100 * m / z->total : 0);
	}
}

static void draw_info(struct tui *t, int y, const struct tui_flame *p)
{
	const struct flame_node *n = p->sel, *root = flame_tree_root(p->tree);
	const struct flame_node *z = p->zoom ? p->zoom : root;
	char a[32], b[32];
	int x;

	if (!n)
		return;
	if (n->frame)
		x = tui_put_frame(t, y, 0, t->cols, n->frame, t->attr[THEME_HEADER_VALUE],
				  t->attr[THEME_DIM]);
	else
		x = tui_put(t, y, 0, t->cols, t->attr[THEME_HEADER_VALUE], n->label);
	tui_putf(t, y, x + 2, t->cols - x - 2, t->attr[THEME_NORMAL],
		 "%s (%.1f%% of all, %.1f%% of view), self %s", fmt_bytes(a, sizeof(a), n->total),
		 root->total > 0 ? 100 * n->total / root->total : 0,
		 z->total > 0 ? 100 * n->total / z->total : 0, fmt_bytes(b, sizeof(b), n->self));
}

static void flame_draw(struct tui *t, int y, int h)
{
	struct tui_flame *p = &t->flame;
	int rows = h - 2, depth;
	ssize_t si;

	if (!p->tree)
		flame_refresh(t);
	if (!p->tree)
		return;
	draw_title(t, y, p);
	if (flame_tree_root(p->tree)->total <= 0) {
		tui_put(t, y + 2, 2, t->cols - 2, t->attr[THEME_DIM],
			p->alloc_mode ? "nothing allocated yet" : "nothing in use yet");
		return;
	}
	if (rows < 1 || flame_layout(p->tree, p->zoom, t->cols, 1, &p->layout))
		return;
	p->page = rows;
	si = sel_box(p);
	depth = si >= 0 ? p->layout.box[si].depth : 0;
	tui_list_follow(&p->scroll, depth, p->layout.rows, rows);
	for (size_t i = 0; i < p->layout.n; i++) {
		const struct flame_box *b = &p->layout.box[i];

		if (b->depth >= p->scroll && b->depth < p->scroll + rows)
			draw_box(t, y + 1 + b->depth - p->scroll, p, b);
	}
	draw_info(t, y + h - 1, p);
}

static void flame_go(struct tui_flame *p, enum flame_dir d, int times)
{
	ssize_t i = sel_box(p);

	if (i < 0)
		return;
	while (times-- > 0) {
		ssize_t j = (ssize_t)flame_layout_move(&p->layout, (size_t)i, d);

		if (j == i)
			break;
		i = j;
	}
	p->sel = p->layout.box[i].node;
}

static void search_next(struct tui *t)
{
	struct tui_flame *p = &t->flame;
	ssize_t cur = sel_box(p);
	size_t n = p->layout.n;

	if (!p->search[0] || cur < 0)
		return;
	for (size_t k = 1; k <= n; k++) {
		const struct flame_box *b = &p->layout.box[(cur + k) % n];

		if (flame_node_matches(b->node, p->search)) {
			p->sel = b->node;
			return;
		}
	}
	tui_message(t, false, "no frame matches \"%s\" in this view", p->search);
}

static bool flame_action(struct tui *t, enum key_action a)
{
	struct tui_flame *p = &t->flame;

	if (!p->tree)
		return false;
	switch (a) {
	case KA_UP:
		flame_go(p, FLAME_UP, 1);
		return true;
	case KA_DOWN:
		flame_go(p, FLAME_DOWN, 1);
		return true;
	case KA_LEFT:
		flame_go(p, FLAME_LEFT, 1);
		return true;
	case KA_RIGHT:
		flame_go(p, FLAME_RIGHT, 1);
		return true;
	case KA_PAGE_UP:
		flame_go(p, FLAME_UP, p->page > 1 ? p->page : 1);
		return true;
	case KA_PAGE_DOWN:
		flame_go(p, FLAME_DOWN, p->page > 1 ? p->page : 1);
		return true;
	case KA_HOME:
		p->sel = p->zoom ? p->zoom : flame_tree_root(p->tree);
		return true;
	case KA_END:
		flame_go(p, FLAME_DOWN, 1 << 16);
		return true;
	case KA_ENTER:
		if (p->sel && p->sel != flame_tree_root(p->tree))
			p->zoom = p->sel;
		else
			p->zoom = NULL;
		return true;
	case KA_BACK:
		if (!p->zoom)
			return false; /* at the top: back to the table */
		p->sel = p->zoom;
		p->zoom = p->zoom->parent == flame_tree_root(p->tree) ? NULL : p->zoom->parent;
		return true;
	case KA_SEARCH:
		tui_input_begin(t, KA_SEARCH, p->search);
		return true;
	case KA_SEARCH_NEXT:
		search_next(t);
		return true;
	case KA_FLAME_MODE:
		p->alloc_mode = !p->alloc_mode;
		flame_refresh(t);
		return true;
	default:
		return false;
	}
}

static void flame_status(struct tui *t, char *buf, size_t len)
{
	snprintf(buf, len,
		 "arrows or h/j/k/l move, Enter zooms in, Esc zooms out, / searches, "
		 "i switches bytes");
}

static void flame_fini(struct tui *t)
{
	struct tui_flame *p = &t->flame;

	flame_layout_fini(&p->layout);
	flame_tree_free(p->tree);
	p->tree = NULL;
	p->zoom = p->sel = NULL;
}

const struct tui_view view_flame = {
	.name = "flame",
	.kv = KV_FLAME,
	.snapshot = flame_refresh,
	.draw = flame_draw,
	.action = flame_action,
	.status = flame_status,
	.fini = flame_fini,
};

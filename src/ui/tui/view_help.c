// SPDX-License-Identifier: GPL-2.0-only
/*
 * view_help.c - the help screen (?, F1 or h), two pages. The first: how
 * to quit, then every row of the key table, section by section, in the
 * same order and words
 * as docs/keybindings.md, then how the screen is being drawn (theme,
 * colours, glyphs); generated from the table at each draw, so it cannot
 * disagree with dispatch. The second (? again): the legend, one line per
 * header field, warning and column (legend.c, as in docs/tui.md).
 */
#include "ui/tui/tui.h"
#include "ui/tui/legend.h"

#include <stdio.h>

#ifndef MEMTOP_VERSION
#define MEMTOP_VERSION "dev"
#endif

#define KEYS_COL 20

#define FIELD_COL 20

static void legend_draw(struct tui *t, struct tui_page *pg)
{
	tui_put(t, tui_page_line(pg), 0, t->cols, t->attr[THEME_TITLE],
		"memtop legend, page 2/2 (? or Esc closes)");
	for (size_t i = 0; i < legend_rows_len; i++) {
		const struct legend_row *r = &legend_rows[i];
		int ln;

		if (r->section) {
			tui_page_line(pg);
			tui_put(t, tui_page_line(pg), 0, t->cols, t->attr[THEME_TITLE], r->section);
		}
		ln = tui_page_line(pg);
		tui_put(t, ln, 1, FIELD_COL - 2, t->attr[THEME_HELP_KEY], r->field);
		tui_put(t, ln, FIELD_COL, t->cols - FIELD_COL, t->attr[THEME_NORMAL], r->meaning);
	}
}

/* How to quit, first, so the smallest help page shows it: the table's
 * quit row (its own section, the site table's, comes after a screenful
 * of keys that work everywhere). */
static void quit_draw(struct tui *t, struct tui_page *pg)
{
	for (size_t i = 0; i < key_table_len; i++) {
		const struct key_binding *b = &key_table[i];
		char names[128];
		int ln;

		if (b->action != KA_QUIT)
			continue;
		ln = tui_page_line(pg);
		keys_binding_names(b, names, sizeof(names));
		tui_put(t, ln, 2, KEYS_COL - 3, t->attr[THEME_HELP_KEY], names);
		tui_put(t, ln, KEYS_COL, t->cols - KEYS_COL, t->attr[THEME_NORMAL], b->help);
		return;
	}
}

static void help_draw(struct tui *t, int y, int h)
{
	struct tui_help *p = &t->help;
	struct tui_page pg;
	int ln;

	p->page = h;
	if (p->lines && p->scroll > p->lines - h)
		p->scroll = p->lines > h ? p->lines - h : 0;
	pg = (struct tui_page){ y, h, p->scroll, 0 };
	if (p->legend) {
		legend_draw(t, &pg);
		p->lines = pg.n;
		return;
	}
	tui_putf(t, tui_page_line(&pg), 0, t->cols, t->attr[THEME_TITLE],
		 "memtop %s keys, page 1/2 (? next: the legend; Esc or q closes)", MEMTOP_VERSION);
	quit_draw(t, &pg);
	for (size_t s = 0; s < key_sections_len; s++) {
		if (!keys_section_rows(&key_sections[s]))
			continue;
		tui_page_line(&pg);
		tui_put(t, tui_page_line(&pg), 0, t->cols, t->attr[THEME_TITLE],
			key_sections[s].title);
		for (size_t i = 0; i < key_table_len; i++) {
			const struct key_binding *b = &key_table[i];
			char names[128];

			if (!keys_in_section(b, &key_sections[s]))
				continue;
			ln = tui_page_line(&pg);
			keys_binding_names(b, names, sizeof(names));
			tui_put(t, ln, 2, KEYS_COL - 3, t->attr[THEME_HELP_KEY], names);
			tui_put(t, ln, KEYS_COL, t->cols - KEYS_COL, t->attr[THEME_NORMAL], b->help);
		}
	}
	tui_page_line(&pg);
	tui_put(t, tui_page_line(&pg), 0, t->cols, t->attr[THEME_TITLE], "Display");
	tui_putf(t, tui_page_line(&pg), 2, t->cols - 2, t->attr[THEME_NORMAL],
		 "theme %s, %s, %s glyphs, %dx%d", t->theme_name,
		 t->color ? (t->ncolors >= 256  ? "256 colours"
			     : t->ncolors >= 16 ? "16 colours"
						: "8 colours")
			  : "no colour",
		 t->unicode ? "Unicode" : "ASCII", t->cols, t->rows);
	tui_put(t, tui_page_line(&pg), 2, t->cols - 2, t->attr[THEME_DIM],
		"--theme NAME|PATH, --no-color (or NO_COLOR=1), --ascii; see docs/themes.md");
	p->lines = pg.n;
}

static bool help_action(struct tui *t, enum key_action a)
{
	struct tui_help *p = &t->help;

	return tui_scroll_move(&p->scroll, p->lines, p->page, a);
}

static void help_status(struct tui *t, char *buf, size_t len)
{
	const struct tui_help *p = &t->help;

	snprintf(buf, len, "lines %d-%d of %d", p->scroll + 1,
		 p->scroll + p->page < p->lines ? p->scroll + p->page : p->lines, p->lines);
}

const struct tui_view view_help = {
	.name = "help",
	.kv = KV_HELP,
	.draw = help_draw,
	.action = help_action,
	.status = help_status,
};

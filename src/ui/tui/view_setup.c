// SPDX-License-Identifier: GPL-2.0-only
/*
 * view_setup.c - the settings screen (F2), like htop's: sort column and
 * order, grouping, theme, refresh interval, which columns the site table
 * shows and where e writes. Each change applies at once; closing the
 * screen saves them through ui/tui/settings.h (views never write files),
 * and setup_load() applies the saved ones at start, under whatever the
 * command line said (-d, --group, --theme win) and not at all with
 * --no-config.
 */
#include "ui/tui/tui.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "ui/tui/settings.h"

static const char *const themes[] = { "default", "light", "high-contrast", "mono" };
#define NTHEMES (int)(sizeof(themes) / sizeof(themes[0]))

enum { ROW_SORT, ROW_INVERT, ROW_GROUP, ROW_THEME, ROW_INTERVAL, ROW_COLUMNS };

/* The site-table columns the settings may hide, as column indexes. */
static int hideable_columns(int *cols, int max)
{
	bool hideable;
	int n = 0;

	for (int i = 0; top_column_name(i, &hideable) && n < max; i++)
		if (hideable)
			cols[n++] = i;
	return n;
}

static int row_count(void)
{
	int cols[16];

	return ROW_COLUMNS + hideable_columns(cols, 16) + 1; /* + export directory */
}

static void hidden_from_names(struct tui *t, const char *names)
{
	char buf[128], *save = NULL;

	t->top.hidden = 0;
	snprintf(buf, sizeof(buf), "%s", names);
	for (char *w = strtok_r(buf, " ,", &save); w; w = strtok_r(NULL, " ,", &save)) {
		const char *name;
		bool hideable;

		for (int i = 0; (name = top_column_name(i, &hideable)); i++)
			if (hideable && !strcasecmp(name, w))
				t->top.hidden |= 1u << i;
	}
}

void setup_load(struct tui *t)
{
	const struct mt_config *cfg = t->cfg;
	struct mt_settings s;
	char err[PATH_MAX + 64] = "";
	enum mt_sort sort;
	int e;

	snprintf(t->theme_want, sizeof(t->theme_want), "%s", cfg->theme ? cfg->theme : "");
	if (settings_path(t->setup.path, sizeof(t->setup.path)))
		t->setup.path[0] = '\0';
	if (cfg->no_config || !t->setup.path[0])
		return;
	settings_init(&s);
	e = settings_load(&s, t->setup.path, err, sizeof(err));
	if (e == -ENOENT)
		return;
	if (e) {
		snprintf(t->setup.error, sizeof(t->setup.error), "settings not used: %s", err);
		return;
	}
	if (s.sort[0] && top_sort_parse(s.sort, &sort))
		t->top.sort = sort;
	if (s.invert >= 0)
		t->top.invert = s.invert;
	if (s.group >= 0 && !(cfg->given & MT_GIVEN_GROUP) && s.group != (int)model_group(t->model))
		model_apply(t->model, MT_INPUT_GROUP((enum mt_group)s.group));
	if (s.theme[0] && !(cfg->given & MT_GIVEN_THEME))
		snprintf(t->theme_want, sizeof(t->theme_want), "%s", s.theme);
	if (s.interval_s > 0 && !(cfg->given & MT_GIVEN_DELAY))
		t->ctx->interval_s = s.interval_s;
	if (s.have_hidden)
		hidden_from_names(t, s.hidden_columns);
	snprintf(t->export_dir, sizeof(t->export_dir), "%s", s.export_dir);
}

static void setup_save(struct tui *t)
{
	struct mt_settings s;
	char err[PATH_MAX + 64] = "";
	int cols[16], n = hideable_columns(cols, 16);
	size_t used = 0;

	if (!t->setup.path[0]) {
		tui_message(t, true, "settings not saved: neither HOME nor XDG_CONFIG_HOME is set");
		return;
	}
	settings_init(&s);
	/* what the screen does not show (inject) is kept as the file has it */
	settings_load(&s, t->setup.path, err, sizeof(err));
	err[0] = '\0';
	snprintf(s.sort, sizeof(s.sort), "%s", top_sort_name(t->top.sort));
	for (char *p = s.sort; *p; p++)
		*p = (char)tolower((unsigned char)*p);
	s.invert = t->top.invert;
	s.group = (int)model_group(t->model);
	snprintf(s.theme, sizeof(s.theme), "%s", t->theme_want[0] ? t->theme_want : "default");
	s.interval_s = t->ctx->interval_s;
	s.have_hidden = true;
	for (int i = 0; i < n; i++) {
		bool hideable;

		if (t->top.hidden & (1u << cols[i]) && used < sizeof(s.hidden_columns))
			used += snprintf(s.hidden_columns + used, sizeof(s.hidden_columns) - used,
					 "%s%s", used ? " " : "",
					 top_column_name(cols[i], &hideable));
	}
	snprintf(s.export_dir, sizeof(s.export_dir), "%s", t->export_dir);
	if (settings_save(&s, t->setup.path, err, sizeof(err)))
		tui_message(t, true, "settings not saved: %s", err);
	else
		tui_message(t, false, "settings saved to %s", t->setup.path);
}

/* The label and value of row i. */
static void row_text(struct tui *t, int i, const char **label, char *value, size_t len)
{
	int cols[16], n = hideable_columns(cols, 16);
	bool hideable;

	switch (i) {
	case ROW_SORT:
		*label = "Sort by";
		snprintf(value, len, "%s", top_sort_name(t->top.sort));
		return;
	case ROW_INVERT:
		*label = "Sort order";
		snprintf(value, len, "%s",
			 t->top.invert ? "inverted (smallest first)" : "largest first");
		return;
	case ROW_GROUP:
		*label = "Group sites by";
		snprintf(value, len, "%s", mt_group_names()[model_group(t->model)]);
		return;
	case ROW_THEME:
		*label = "Theme";
		snprintf(value, len, "%s", t->theme_name);
		return;
	case ROW_INTERVAL:
		*label = "Refresh every";
		snprintf(value, len, "%.4gs", t->ctx->interval_s);
		return;
	default:
		break;
	}
	if (i - ROW_COLUMNS < n) {
		int c = cols[i - ROW_COLUMNS];
		static char lbuf[32];

		snprintf(lbuf, sizeof(lbuf), "Column %s", top_column_name(c, &hideable));
		*label = lbuf;
		snprintf(value, len, "%s", t->top.hidden & (1u << c) ? "hidden" : "shown");
		return;
	}
	*label = "Export directory";
	snprintf(value, len, "%s", t->export_dir[0] ? t->export_dir : "(the current directory)");
}

static void setup_draw(struct tui *t, int y, int h)
{
	struct tui_setup *p = &t->setup;
	int n = row_count();

	p->page = h;
	tui_putf(t, y, 0, t->cols, t->attr[THEME_TITLE], "Settings, saved to %s when closed",
		 p->path[0] ? p->path : "(nowhere: no HOME)");
	for (int i = 0; i < n && 2 + i < h; i++) {
		const char *label;
		char value[PATH_MAX];
		bool sel = i == p->sel;
		attr_t a = t->attr[sel ? THEME_ROW_SELECTED : THEME_NORMAL];

		row_text(t, i, &label, value, sizeof(value));
		if (sel)
			tui_fill(t, y + 2 + i, 0, t->cols, a);
		tui_put(t, y + 2 + i, 2, 20, a, label);
		tui_putf(t, y + 2 + i, 22, t->cols - 22, sel ? a : t->attr[THEME_HELP_KEY],
			 "%s %s %s", t->unicode ? "\u25c2" : "<", value, t->unicode ? "\u25b8" : ">");
	}
}

static void change(struct tui *t, int dir)
{
	struct tui_setup *p = &t->setup;
	int cols[16], n = hideable_columns(cols, 16), k;
	char err[256] = "";

	switch (p->sel) {
	case ROW_SORT:
		t->top.sort =
			(enum mt_sort)(((int)t->top.sort + dir + MT_SORT_COUNT) % MT_SORT_COUNT);
		break;
	case ROW_INVERT:
		t->top.invert = !t->top.invert;
		break;
	case ROW_GROUP:
		model_apply(t->model, MT_INPUT_GROUP((enum mt_group)(
					      ((int)model_group(t->model) + dir + 3) % 3)));
		break;
	case ROW_THEME:
		for (k = 0;
		     k < NTHEMES && strcmp(themes[k], t->theme_want[0] ? t->theme_want : "default");
		     k++)
			;
		k = ((k < NTHEMES ? k : 0) + dir + NTHEMES) % NTHEMES;
		snprintf(t->theme_want, sizeof(t->theme_want), "%s", themes[k]);
		if (tui_set_theme(t, themes[k], err, sizeof(err)))
			tui_message(t, true, "theme: %s", err);
		break;
	case ROW_INTERVAL:
		t->act |= tui_change_interval(t, dir);
		break;
	default:
		if (p->sel - ROW_COLUMNS < n) {
			t->top.hidden ^= 1u << cols[p->sel - ROW_COLUMNS];
		} else {
			tui_input_begin(t, KA_SETUP, t->export_dir);
		}
		break;
	}
	p->changed = true;
	t->snapped &= ~(unsigned)KV_TOP; /* the table shows the change */
}

static bool setup_action(struct tui *t, enum key_action a)
{
	struct tui_setup *p = &t->setup;

	if (tui_list_move(&p->sel, row_count(), p->page, a))
		return true;
	switch (a) {
	case KA_LEFT:
		change(t, -1);
		return true;
	case KA_RIGHT:
		change(t, +1);
		return true;
	case KA_BACK:
		if (p->changed)
			setup_save(t);
		p->changed = false;
		t->top.sel = 0;
		t->top.follow = false;
		tui_show(t, p->from ? p->from : &view_top);
		return true;
	default:
		return false;
	}
}

static void setup_click(struct tui *t, int row, int col)
{
	if (row >= 2 && row - 2 < row_count())
		t->setup.sel = row - 2;
}

static void setup_status(struct tui *t, char *buf, size_t len)
{
	snprintf(buf, len, "Up/Down: a setting, Left/Right: its value, Esc: save and close");
}

const struct tui_view view_setup = {
	.name = "settings",
	.kv = KV_SETUP,
	.draw = setup_draw,
	.action = setup_action,
	.status = setup_status,
	.click = setup_click,
};

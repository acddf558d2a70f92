/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * theme.h - the TUI's colours as data: a fixed list of screen elements,
 * each with a foreground, a background and attributes, read from
 * themes/NAME.theme files (format in docs/themes.md):
 *
 *     # comment
 *     element = fg, bg[, attribute ...]
 *
 * Pure: no curses here. screen.c turns a struct theme into colour pairs for
 * the terminal at hand, reducing 256-colour values to 16 or 8 colours with
 * theme_color_reduce(). Parse errors name the file and line and leave the
 * theme as it was before the bad line.
 */
#ifndef MEMTOP_THEME_H
#define MEMTOP_THEME_H

#include <stdbool.h>
#include <stddef.h>

enum theme_elem {
	THEME_NORMAL = 0,    /* default text */
	THEME_HEADER,        /* header labels */
	THEME_HEADER_VALUE,  /* header numbers */
	THEME_TARGET_ALIVE,  /* "alive" marker */
	THEME_TARGET_EXITED, /* "exited" marker */
	THEME_WARNING,       /* lost events, overhead back-off, limit near */
	THEME_SPARKLINE,     /* header sparkline */
	THEME_TABLE_HEADER,  /* column titles */
	THEME_TABLE_SORTED,  /* title of the sort column */
	THEME_ROW_SELECTED,  /* cursor row */
	THEME_DIM,           /* secondary text: module, file:line */
	THEME_LEAK_LOW,      /* leak score < 30 */
	THEME_LEAK_MID,      /* leak score 30..59 */
	THEME_LEAK_HIGH,     /* leak score >= 60 */
	THEME_GRAPH,         /* history graph, histogram bars */
	THEME_TITLE,         /* section titles */
	THEME_FLAME_1,       /* flame boxes, four colours picked by name */
	THEME_FLAME_2,
	THEME_FLAME_3,
	THEME_FLAME_4,
	THEME_FLAME_SELECTED,     /* the flame cursor */
	THEME_FLAME_MATCH,        /* frames matching the / search */
	THEME_FLAME_ANCESTOR,     /* frames above the zoom root */
	THEME_STATUS,             /* status line */
	THEME_STATUS_ERROR,       /* status line reporting a failure */
	THEME_HINT_KEY,           /* key names in the bottom key bar */
	THEME_HINT_TEXT,          /* their labels */
	THEME_INPUT,              /* filter / search input */
	THEME_HELP_KEY,           /* key names on the help screen */
	THEME_LEAK_LOW_SELECTED,  /* the leak score under the cursor, by */
	THEME_LEAK_MID_SELECTED,  /* severity: the cursor row must not */
	THEME_LEAK_HIGH_SELECTED, /* hide the worst leak's red */
	THEME_COUNT,
};

/* Attribute bits (mapped onto A_* by screen.c). */
enum theme_attr {
	THEME_A_BOLD = 1 << 0,
	THEME_A_DIM = 1 << 1,
	THEME_A_UNDERLINE = 1 << 2,
	THEME_A_REVERSE = 1 << 3,
	THEME_A_STANDOUT = 1 << 4,
	THEME_A_ITALIC = 1 << 5,
	THEME_A_BLINK = 1 << 6,
};

#define THEME_DEFAULT_COLOR (-1) /* the terminal's own colour */

struct theme_style {
	short fg; /* THEME_DEFAULT_COLOR or 0..255 (xterm palette) */
	short bg;
	unsigned attrs; /* enum theme_attr bits */
};

struct theme {
	struct theme_style style[THEME_COUNT];
};

/* Element name as written in theme files ("row_selected"), or NULL. */
const char *theme_elem_name(enum theme_elem e);
/* One-line description of the element, for docs and tests. */
const char *theme_elem_help(enum theme_elem e);

/* The built-in themes, used when no file is found: "default" (colour) and
 * "mono" (attributes only, used whenever colour is off). */
void theme_builtin_default(struct theme *t);
void theme_builtin_mono(struct theme *t);

/* Apply the text of a theme file on top of t. source names the text in
 * messages. On error returns -EINVAL, writes "source:LINE: what" into err
 * and leaves t unchanged (all or nothing). */
int theme_parse(struct theme *t, const char *text, size_t len, const char *source, char *err,
		size_t errlen);

/* Read and apply a file (at most 64 KiB). -errno with "path: why" in err. */
int theme_parse_file(struct theme *t, const char *path, char *err, size_t errlen);

/* Where a theme named spec lives. A spec with a '/' or ending in ".theme"
 * is a path, taken as is. A name ([A-Za-z0-9_.-]) is looked up as
 * NAME.theme in, in order: $MEMTOP_THEME_DIR, EXE_DIR/../themes,
 * EXE_DIR/../share/memtop/themes, /usr/local/share/memtop/themes,
 * /usr/share/memtop/themes (exe_path may be NULL). 0 with path filled,
 * -ENOENT (err lists where it looked) or -EINVAL (bad name). */
int theme_resolve(const char *spec, const char *exe_path, char *path, size_t pathlen, char *err,
		  size_t errlen);

/* The theme for --theme spec (NULL: "default"): the built-in one of that
 * name overlaid with its file when there is one; for other names the
 * built-in default overlaid with the file, which must exist. On error t
 * holds the built-in default and err says why. 0 or -errno. */
int theme_load(struct theme *t, const char *spec, const char *exe_path, char *err, size_t errlen);

/* Colour c (0..255) as shown on a terminal with ncolors colours: itself
 * with 256, the nearest of the 16 standard colours with 16, the nearest of
 * 8 with 8 (then *bright says the colour was a bright one, to be rendered
 * bold; bright may be NULL). -1 (no colour) for c < 0 or ncolors < 8. */
int theme_color_reduce(int c, int ncolors, bool *bright);

/* WCAG contrast ratio (1 to 21) of two colours (0..255, xterm's palette):
 * how far apart their relative luminances are. 0 when either is
 * THEME_DEFAULT_COLOR, whose colour only the terminal knows. */
double theme_contrast(int fg, int bg);

#endif /* MEMTOP_THEME_H */

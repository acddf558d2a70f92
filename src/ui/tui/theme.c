// SPDX-License-Identifier: GPL-2.0-only
/*
 * theme.c - theme files to struct theme, and the colour arithmetic that
 * lets one file serve 256-, 16- and 8-colour terminals.
 *
 * One table lists every element with its file name, description and both
 * built-in styles; themes/default.theme and themes/mono.theme restate the
 * built-ins (test_theme checks they agree). Parsing is all or nothing: a
 * copy is edited and only committed when every line was valid, so a bad
 * file can never leave half a theme on screen.
 */
#include "ui/tui/theme.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/safe_open.h"
#include "util/trim.h"

#define D THEME_DEFAULT_COLOR
#define MAX_FILE (64 * 1024)
#define MAX_LINE 512

enum { BLACK, RED, GREEN, YELLOW, BLUE, MAGENTA, CYAN, WHITE, BRIGHT_BLACK };

/* clang-format off */
static const struct elem_def {
	const char *name;
	const char *help;
	struct theme_style color;
	struct theme_style mono;
} elems[THEME_COUNT] = {
	[THEME_NORMAL] = { "normal", "default text", { D, D, 0 }, { D, D, 0 } },
	[THEME_HEADER] = { "header", "header labels", { D, D, 0 }, { D, D, 0 } },
	[THEME_HEADER_VALUE] = { "header_value", "header numbers",
				 { CYAN, D, THEME_A_BOLD }, { D, D, THEME_A_BOLD } },
	[THEME_TARGET_ALIVE] = { "target_alive", "the 'alive' marker of a target",
				 { GREEN, D, THEME_A_BOLD }, { D, D, THEME_A_BOLD } },
	[THEME_TARGET_EXITED] = { "target_exited", "the 'exited' marker of a target",
				  { RED, D, THEME_A_BOLD },
				  { D, D, THEME_A_BOLD | THEME_A_REVERSE } },
	[THEME_WARNING] = { "warning", "lost events, overhead back-off, cgroup limit near",
			    { YELLOW, D, THEME_A_BOLD }, { D, D, THEME_A_BOLD } },
	[THEME_SPARKLINE] = { "sparkline", "the in-use sparkline in the header",
			      { CYAN, D, 0 }, { D, D, 0 } },
	[THEME_TABLE_HEADER] = { "table_header", "column titles of the site table",
				 { BLACK, GREEN, 0 }, { D, D, THEME_A_REVERSE } },
	[THEME_TABLE_SORTED] = { "table_sorted", "title of the sort column",
				 { BLACK, YELLOW, THEME_A_BOLD },
				 { D, D, THEME_A_REVERSE | THEME_A_BOLD | THEME_A_UNDERLINE } },
	[THEME_ROW_SELECTED] = { "row_selected", "the cursor row", { BLACK, CYAN, 0 },
				 { D, D, THEME_A_REVERSE } },
	[THEME_DIM] = { "dim", "secondary text: module, file:line", { BRIGHT_BLACK, D, 0 },
			{ D, D, 0 } },
	[THEME_LEAK_LOW] = { "leak_low", "leak score below 30", { GREEN, D, 0 }, { D, D, 0 } },
	[THEME_LEAK_MID] = { "leak_mid", "leak score 30 to 59", { YELLOW, D, 0 },
			     { D, D, THEME_A_BOLD } },
	[THEME_LEAK_HIGH] = { "leak_high", "leak score 60 and above", { RED, D, THEME_A_BOLD },
			      { D, D, THEME_A_BOLD | THEME_A_UNDERLINE } },
	[THEME_GRAPH] = { "graph", "history graph and size histogram bars", { GREEN, D, 0 },
			  { D, D, 0 } },
	[THEME_TITLE] = { "title", "section titles", { YELLOW, D, THEME_A_BOLD },
			  { D, D, THEME_A_BOLD | THEME_A_UNDERLINE } },
	[THEME_FLAME_1] = { "flame_1", "flame boxes (first of four colours)",
			    { BLACK, 208, 0 }, { D, D, THEME_A_REVERSE } },
	[THEME_FLAME_2] = { "flame_2", "flame boxes (second colour)", { BLACK, 214, 0 },
			    { D, D, THEME_A_REVERSE } },
	[THEME_FLAME_3] = { "flame_3", "flame boxes (third colour)", { BLACK, 202, 0 },
			    { D, D, THEME_A_REVERSE } },
	[THEME_FLAME_4] = { "flame_4", "flame boxes (fourth colour)", { BLACK, 220, 0 },
			    { D, D, THEME_A_REVERSE } },
	[THEME_FLAME_SELECTED] = { "flame_selected", "the flame cursor",
				   { WHITE, BLUE, THEME_A_BOLD },
				   { D, D, THEME_A_BOLD | THEME_A_UNDERLINE } },
	[THEME_FLAME_MATCH] = { "flame_match", "frames matching the search",
				{ BLACK, MAGENTA, THEME_A_BOLD },
				{ D, D, THEME_A_REVERSE | THEME_A_BOLD | THEME_A_UNDERLINE } },
	[THEME_FLAME_ANCESTOR] = { "flame_ancestor", "frames above the zoomed frame",
				   { BLACK, WHITE, 0 }, { D, D, THEME_A_REVERSE } },
	[THEME_STATUS] = { "status", "status line", { D, D, 0 }, { D, D, 0 } },
	[THEME_STATUS_ERROR] = { "status_error", "status line reporting a failure",
				 { WHITE, RED, THEME_A_BOLD },
				 { D, D, THEME_A_REVERSE | THEME_A_BOLD } },
	[THEME_HINT_KEY] = { "hint_key", "key names in the bottom key bar",
			     { D, D, THEME_A_BOLD }, { D, D, THEME_A_BOLD } },
	[THEME_HINT_TEXT] = { "hint_text", "labels in the bottom key bar", { BLACK, CYAN, 0 },
			      { D, D, THEME_A_REVERSE } },
	[THEME_INPUT] = { "input", "filter and search input", { D, D, THEME_A_BOLD },
			  { D, D, THEME_A_BOLD | THEME_A_UNDERLINE } },
	[THEME_HELP_KEY] = { "help_key", "key names on the help screen", { CYAN, D, THEME_A_BOLD },
			     { D, D, THEME_A_BOLD } },
	[THEME_LEAK_LOW_SELECTED] = { "leak_low_selected", "leak score below 30, cursor row",
				      { BLACK, GREEN, 0 }, { D, D, THEME_A_REVERSE } },
	[THEME_LEAK_MID_SELECTED] = { "leak_mid_selected", "leak score 30 to 59, cursor row",
				      { BLACK, YELLOW, THEME_A_BOLD },
				      { D, D, THEME_A_REVERSE | THEME_A_BOLD } },
	[THEME_LEAK_HIGH_SELECTED] = { "leak_high_selected", "leak score 60 and above, cursor row",
				       { WHITE, RED, THEME_A_BOLD },
				       { D, D, THEME_A_REVERSE | THEME_A_BOLD | THEME_A_UNDERLINE } },
};
/* clang-format on */

static const char *const color_names[16] = {
	"black",        "red",           "green",       "yellow",         "blue",
	"magenta",      "cyan",          "white",       "bright_black",   "bright_red",
	"bright_green", "bright_yellow", "bright_blue", "bright_magenta", "bright_cyan",
	"bright_white",
};

static const struct {
	const char *name;
	unsigned bit;
} attr_names[] = {
	{ "bold", THEME_A_BOLD },           { "dim", THEME_A_DIM },
	{ "underline", THEME_A_UNDERLINE }, { "reverse", THEME_A_REVERSE },
	{ "standout", THEME_A_STANDOUT },   { "italic", THEME_A_ITALIC },
	{ "blink", THEME_A_BLINK },         { "normal", 0 },
};

const char *theme_elem_name(enum theme_elem e)
{
	return (unsigned)e < THEME_COUNT ? elems[e].name : NULL;
}

const char *theme_elem_help(enum theme_elem e)
{
	return (unsigned)e < THEME_COUNT ? elems[e].help : NULL;
}

void theme_builtin_default(struct theme *t)
{
	for (int i = 0; i < THEME_COUNT; i++)
		t->style[i] = elems[i].color;
}

void theme_builtin_mono(struct theme *t)
{
	for (int i = 0; i < THEME_COUNT; i++)
		t->style[i] = elems[i].mono;
}

/* ---- colour arithmetic ------------------------------------------------ */

/* xterm's default RGB for the 16 standard colours. */
static const unsigned char rgb16[16][3] = {
	{ 0, 0, 0 },       { 205, 0, 0 },   { 0, 205, 0 },   { 205, 205, 0 },
	{ 0, 0, 238 },     { 205, 0, 205 }, { 0, 205, 205 }, { 229, 229, 229 },
	{ 127, 127, 127 }, { 255, 0, 0 },   { 0, 255, 0 },   { 255, 255, 0 },
	{ 92, 92, 255 },   { 255, 0, 255 }, { 0, 255, 255 }, { 255, 255, 255 },
};

static void rgb256(int c, int rgb[3])
{
	static const int level[6] = { 0, 95, 135, 175, 215, 255 };

	if (c < 16) {
		for (int i = 0; i < 3; i++)
			rgb[i] = rgb16[c][i];
	} else if (c < 232) {
		c -= 16;
		rgb[0] = level[c / 36];
		rgb[1] = level[c / 6 % 6];
		rgb[2] = level[c % 6];
	} else {
		rgb[0] = rgb[1] = rgb[2] = 8 + 10 * (c - 232);
	}
}

static int nearest(const int rgb[3], int from, int to)
{
	int best = from;
	long best_d = -1;

	for (int c = from; c < to; c++) {
		int o[3];
		long d = 0;

		rgb256(c, o);
		for (int i = 0; i < 3; i++)
			d += (long)(o[i] - rgb[i]) * (o[i] - rgb[i]);
		if (best_d < 0 || d < best_d) {
			best = c;
			best_d = d;
		}
	}
	return best;
}

static double luminance(int c)
{
	int rgb[3];
	double l[3];

	rgb256(c, rgb);
	for (int i = 0; i < 3; i++) {
		double v = rgb[i] / 255.0;

		l[i] = v <= 0.03928 ? v / 12.92 : pow((v + 0.055) / 1.055, 2.4);
	}
	return 0.2126 * l[0] + 0.7152 * l[1] + 0.0722 * l[2];
}

double theme_contrast(int fg, int bg)
{
	double a, b;

	if (fg < 0 || bg < 0 || fg > 255 || bg > 255)
		return 0;
	a = luminance(fg);
	b = luminance(bg);
	return a > b ? (a + 0.05) / (b + 0.05) : (b + 0.05) / (a + 0.05);
}

int theme_color_reduce(int c, int ncolors, bool *bright)
{
	int rgb[3];

	if (bright)
		*bright = false;
	if (c < 0 || c > 255 || ncolors < 8)
		return -1;
	if (ncolors >= 256 || c < ncolors)
		return c;
	if (c >= 16) {
		rgb256(c, rgb);
		c = nearest(rgb, 0, 16);
	}
	if (ncolors >= 16)
		return c;
	if (c >= 8) {
		if (bright)
			*bright = true;
		c -= 8;
	}
	return c;
}

/* ---- parser ------------------------------------------------------------ */

static int parse_color(const char *tok, short *out)
{
	char *end;
	long v;

	if (strcmp(tok, "default") == 0 || strcmp(tok, "none") == 0) {
		*out = D;
		return 0;
	}
	if (strcmp(tok, "gray") == 0 || strcmp(tok, "grey") == 0) {
		*out = BRIGHT_BLACK;
		return 0;
	}
	for (int i = 0; i < 16; i++) {
		if (strcmp(tok, color_names[i]) == 0) {
			*out = i;
			return 0;
		}
	}
	if (tok[0] == '#') {
		int rgb[3];
		unsigned r, g, b;
		int n;

		if (strlen(tok) != 7 || sscanf(tok + 1, "%2x%2x%2x%n", &r, &g, &b, &n) != 3 ||
		    n != 6 || strspn(tok + 1, "0123456789abcdefABCDEF") != 6)
			return -EINVAL;
		rgb[0] = r;
		rgb[1] = g;
		rgb[2] = b;
		*out = nearest(rgb, 16, 256);
		return 0;
	}
	if (!isdigit((unsigned char)tok[0]))
		return -EINVAL;
	errno = 0;
	v = strtol(tok, &end, 10);
	if (*end || errno)
		return -EINVAL;
	if (v > 255)
		return -ERANGE;
	*out = v;
	return 0;
}

static int parse_attr(const char *tok, unsigned *attrs)
{
	for (size_t i = 0; i < sizeof(attr_names) / sizeof(attr_names[0]); i++) {
		if (strcmp(tok, attr_names[i].name) == 0) {
			*attrs |= attr_names[i].bit;
			return 0;
		}
	}
	return -EINVAL;
}

static int find_elem(const char *name)
{
	for (int i = 0; i < THEME_COUNT; i++)
		if (strcmp(name, elems[i].name) == 0)
			return i;
	return -1;
}

#define FAIL(...)                                                               \
	do {                                                                    \
		snprintf(err, errlen, "%s:%d: ", source, lineno);               \
		snprintf(err + strlen(err), errlen - strlen(err), __VA_ARGS__); \
		return -EINVAL;                                                 \
	} while (0)

/* One "element = fg, bg, attr..." line (already trimmed, not empty). */
static int parse_line(struct theme *t, char *line, const char *source, int lineno, char *err,
		      size_t errlen)
{
	char *eq = strchr(line, '='), *name, *rest, *tok;
	struct theme_style st = { D, D, 0 };
	int e, field = 0;

	if (!eq)
		FAIL("expected 'element = foreground, background[, attribute...]'");
	*eq = '\0';
	name = trim_space(line);
	rest = trim_space(eq + 1);
	if (!*name)
		FAIL("missing element name before '='");
	e = find_elem(name);
	if (e < 0)
		FAIL("unknown element '%.60s' (see docs/themes.md for the list)", name);
	if (!*rest)
		FAIL("'%s' has no value: expected 'foreground, background[, attribute...]'", name);
	/* strsep, not strtok: "red,,bold" has an empty second field. */
	while ((tok = strsep(&rest, ","))) {
		char *word = trim_space(tok), *wsave = NULL;
		int r;

		if (!*word)
			FAIL("empty field %d in '%s'", field + 1, name);
		if (field < 2) {
			r = parse_color(word, field++ == 0 ? &st.fg : &st.bg);
			if (r == -ERANGE)
				FAIL("colour %.20s out of range (0-255)", word);
			if (r)
				FAIL("unknown colour '%.40s' (expected default, a name such as "
				     "red or bright_blue, 0-255, or #rrggbb)",
				     word);
			continue;
		}
		field++;
		/* Attributes may also be separated by spaces: "bold underline". */
		for (char *a = strtok_r(word, " \t", &wsave); a; a = strtok_r(NULL, " \t", &wsave))
			if (parse_attr(a, &st.attrs))
				FAIL("unknown attribute '%.40s' (expected bold, dim, underline, "
				     "reverse, standout, italic, blink or normal)",
				     a);
	}
	t->style[e] = st;
	return 0;
}

int theme_parse(struct theme *t, const char *text, size_t len, const char *source, char *err,
		size_t errlen)
{
	struct theme work = *t;
	char line[MAX_LINE + 2];
	int lineno = 0;
	size_t pos = 0;

	if (!source)
		source = "theme";
	if (memchr(text, '\0', len)) {
		snprintf(err, errlen, "%s: not a text file (contains a NUL byte)", source);
		return -EINVAL;
	}
	while (pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t n = (nl ? (size_t)(nl - text) : len) - pos;
		char *s, *hash;
		int err_;

		lineno++;
		if (n > MAX_LINE)
			FAIL("line longer than %d characters", MAX_LINE);
		memcpy(line, text + pos, n);
		line[n] = '\0';
		pos += n + 1;
		hash = strchr(line, '#');
		/* '#' starts a comment, except as the first character of a
		 * #rrggbb colour (after '=' or ','). */
		while (hash) {
			char *p = hash;

			while (p > line && (p[-1] == ' ' || p[-1] == '\t'))
				p--;
			if (p > line && (p[-1] == '=' || p[-1] == ',')) {
				hash = strchr(hash + 1, '#');
				continue;
			}
			*hash = '\0';
			break;
		}
		s = trim_space(line);
		if (!*s)
			continue;
		err_ = parse_line(&work, s, source, lineno, err, errlen);
		if (err_)
			return err_;
	}
	*t = work;
	return 0;
}

int theme_parse_file(struct theme *t, const char *path, char *err, size_t errlen)
{
	char *buf;
	size_t n;
	/* a FIFO or device is refused, not read */
	int r = safe_read_file(path, NULL, MAX_FILE, &buf, &n);

	if (r == -EFBIG)
		snprintf(err, errlen, "%s: larger than %d KiB, not a theme", path, MAX_FILE / 1024);
	else if (r == -ENOMEM)
		snprintf(err, errlen, "%s: out of memory", path);
	else if (r)
		snprintf(err, errlen, "%s: %s", path, safe_open_strerror(r));
	else
		r = theme_parse(t, buf, n, path, err, errlen);
	free(buf);
	return r;
}

static bool is_path(const char *spec)
{
	size_t n = strlen(spec);

	return strchr(spec, '/') || (n > 6 && strcmp(spec + n - 6, ".theme") == 0);
}

static bool valid_name(const char *s)
{
	if (!*s || *s == '.')
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && !strchr("_.-", *s))
			return false;
	return true;
}

int theme_resolve(const char *spec, const char *exe_path, char *path, size_t pathlen, char *err,
		  size_t errlen)
{
	char dirs[5][PATH_MAX];
	int ndirs = 0;
	const char *env = getenv("MEMTOP_THEME_DIR");
	size_t used;

	if (is_path(spec)) {
		if (snprintf(path, pathlen, "%s", spec) >= (int)pathlen) {
			snprintf(err, errlen, "theme path too long");
			return -ENAMETOOLONG;
		}
		return 0;
	}
	if (!valid_name(spec)) {
		snprintf(err, errlen,
			 "bad theme name '%.60s': use letters, digits, '_', '-', '.' or a path",
			 spec);
		return -EINVAL;
	}
	if (env && *env)
		snprintf(dirs[ndirs++], PATH_MAX, "%s", env);
	if (exe_path && strrchr(exe_path, '/')) {
		int dl = (int)(strrchr(exe_path, '/') - exe_path);

		snprintf(dirs[ndirs++], PATH_MAX, "%.*s/../themes", dl, exe_path);
		snprintf(dirs[ndirs++], PATH_MAX, "%.*s/../share/memtop/themes", dl, exe_path);
	}
	snprintf(dirs[ndirs++], PATH_MAX, "/usr/local/share/memtop/themes");
	snprintf(dirs[ndirs++], PATH_MAX, "/usr/share/memtop/themes");
	for (int i = 0; i < ndirs; i++) {
		struct stat st;

		if (snprintf(path, pathlen, "%s/%s.theme", dirs[i], spec) >= (int)pathlen)
			continue;
		if (!stat(path, &st))
			return 0; /* theme_parse_file() says if it is no regular file */
	}
	used = snprintf(err, errlen, "theme '%s' not found in", spec);
	for (int i = 0; i < ndirs && used < errlen; i++)
		used += snprintf(err + used, errlen - used, "%s %s", i ? "," : "", dirs[i]);
	return -ENOENT;
}

int theme_load(struct theme *t, const char *spec, const char *exe_path, char *err, size_t errlen)
{
	char path[PATH_MAX];
	bool builtin;
	int r;

	if (!spec || !*spec)
		spec = "default";
	builtin = strcmp(spec, "default") == 0 || strcmp(spec, "mono") == 0;
	if (strcmp(spec, "mono") == 0)
		theme_builtin_mono(t);
	else
		theme_builtin_default(t);
	err[0] = '\0';
	r = theme_resolve(spec, exe_path, path, sizeof(path), err, errlen);
	if (r == -ENOENT && builtin) {
		err[0] = '\0';
		return 0;
	}
	if (r)
		return r;
	r = theme_parse_file(t, path, err, errlen);
	if (r)
		theme_builtin_default(t);
	return r;
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * settings.c - the settings file of the live view (settings.h): where it
 * is, its text in and out, and reading it. Views never write files:
 * saving hands the text to export/ (export_write_file_in_dir).
 */
#include "ui/tui/settings.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "export/export.h"
#include "util/safe_open.h"
#include "util/trim.h"

#define MAX_FILE (16 * 1024)

/* enum mt_inject_mode */
static const char *const inject_names[] = { "auto", "never", "always" };

void settings_init(struct mt_settings *s)
{
	memset(s, 0, sizeof(*s));
	s->invert = -1;
	s->group = -1;
	s->inject = -1;
}

int settings_path(char *buf, size_t len)
{
	const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
	int n;

	if (xdg && xdg[0] == '/')
		n = snprintf(buf, len, "%s/memtop/memtoprc", xdg);
	else if (home && home[0])
		n = snprintf(buf, len, "%s/.config/memtop/memtoprc", home);
	else
		return -ENOENT;
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* v as the index of one of the three names into *out. 0 or -EINVAL. */
static int parse_choice(const char *v, const char *const names[3], int *out)
{
	for (int i = 0; i < 3; i++) {
		if (!strcmp(v, names[i])) {
			*out = i;
			return 0;
		}
	}
	return -EINVAL;
}

/* "DIGITS[.DIGITS]" without the locale's help. */
static int parse_seconds(const char *v, double *out)
{
	double x = 0, scale = 1;
	bool dot = false, digit = false;

	for (; *v; v++) {
		if (*v == '.' && !dot) {
			dot = true;
		} else if (*v >= '0' && *v <= '9') {
			digit = true;
			if (dot)
				x += (*v - '0') * (scale /= 10);
			else
				x = x * 10 + (*v - '0');
		} else {
			return -EINVAL;
		}
	}
	if (!digit || x < 0.05 || x > 3600)
		return -EINVAL;
	*out = x;
	return 0;
}

static int set_text(char *dst, size_t len, const char *v)
{
	if (strlen(v) >= len)
		return -ENAMETOOLONG;
	snprintf(dst, len, "%s", v);
	return 0;
}

/* One "key = value" line into s; a message into why on error. */
static int parse_line(struct mt_settings *s, char *key, char *v, const char **why)
{
	if (!strcmp(key, "sort"))
		return set_text(s->sort, sizeof(s->sort), v) ? (*why = "sort name too long", -EINVAL)
							     : 0;
	if (!strcmp(key, "invert")) {
		if (!strcmp(v, "yes") || !strcmp(v, "1"))
			s->invert = 1;
		else if (!strcmp(v, "no") || !strcmp(v, "0"))
			s->invert = 0;
		else
			return *why = "invert is yes or no", -EINVAL;
		return 0;
	}
	if (!strcmp(key, "group"))
		return parse_choice(v, mt_group_names(), &s->group)
			       ? (*why = "group is function, line or stack", -EINVAL)
			       : 0;
	if (!strcmp(key, "theme"))
		return set_text(s->theme, sizeof(s->theme), v) ? (*why = "theme too long", -EINVAL)
							       : 0;
	if (!strcmp(key, "interval"))
		return parse_seconds(v, &s->interval_s)
			       ? (*why = "interval is 0.05 to 3600 seconds", -EINVAL)
			       : 0;
	if (!strcmp(key, "hidden_columns")) {
		s->have_hidden = true;
		return set_text(s->hidden_columns, sizeof(s->hidden_columns), v)
			       ? (*why = "hidden_columns too long", -EINVAL)
			       : 0;
	}
	if (!strcmp(key, "inject"))
		return parse_choice(v, inject_names, &s->inject)
			       ? (*why = "inject is auto, never or always", -EINVAL)
			       : 0;
	if (!strcmp(key, "export_dir"))
		return set_text(s->export_dir, sizeof(s->export_dir), v)
			       ? (*why = "export_dir too long", -EINVAL)
			       : 0;
	return *why = "unknown setting", -EINVAL;
}

int settings_parse(struct mt_settings *s, const char *text, const char *source, char *err,
		   size_t errlen)
{
	struct mt_settings tmp = *s;
	const char *p = text;
	int line = 0;

	while (*p) {
		size_t n = strcspn(p, "\n");
		char buf[PATH_MAX + 64], *l, *eq;
		const char *why = NULL;

		line++;
		if (n >= sizeof(buf)) {
			snprintf(err, errlen, "%s:%d: line too long", source, line);
			return -EINVAL;
		}
		memcpy(buf, p, n);
		buf[n] = '\0';
		p += n + (p[n] == '\n');
		l = trim_space(buf);
		if (!*l || *l == '#')
			continue;
		eq = strchr(l, '=');
		if (!eq) {
			snprintf(err, errlen, "%s:%d: expected 'name = value'", source, line);
			return -EINVAL;
		}
		*eq = '\0';
		if (parse_line(&tmp, trim_space(l), trim_space(eq + 1), &why)) {
			snprintf(err, errlen, "%s:%d: %s", source, line, why);
			return -EINVAL;
		}
	}
	*s = tmp;
	return 0;
}

int settings_format(const struct mt_settings *s, char *buf, size_t len)
{
	size_t used = 0;

#define OUT(...)                                                       \
	used += snprintf(buf ? buf + (used < len ? used : len) : NULL, \
			 used < len ? len - used : 0, __VA_ARGS__)
	OUT("# memtop settings, saved by the settings screen (F2) of the live view.\n"
	    "# Options on the command line win; memtop --no-config ignores this file.\n");
	if (s->sort[0])
		OUT("sort = %s\n", s->sort);
	if (s->invert >= 0)
		OUT("invert = %s\n", s->invert ? "yes" : "no");
	if (s->group >= 0 && s->group < 3)
		OUT("group = %s\n", mt_group_names()[s->group]);
	if (s->theme[0])
		OUT("theme = %s\n", s->theme);
	if (s->interval_s > 0)
		OUT("interval = %.4g\n", s->interval_s);
	if (s->have_hidden)
		OUT("hidden_columns = %s\n", s->hidden_columns);
	if (s->export_dir[0])
		OUT("export_dir = %s\n", s->export_dir);
	if (s->inject >= 0 && s->inject < 3)
		OUT("inject = %s\n", inject_names[s->inject]);
#undef OUT
	return (int)used;
}

int settings_load(struct mt_settings *s, const char *path, char *err, size_t errlen)
{
	const struct safe_open_rules rules = { .root_fd = -1, .no_symlink = true };
	char *text;
	size_t len;
	int e = safe_read_file(path, &rules, MAX_FILE, &text, &len);

	if (e == -SAFE_OPEN_ENOTREG || e == -EFBIG) {
		snprintf(err, errlen, "%s: not a regular file of at most 16 KiB", path);
		return -EINVAL;
	}
	if (e) {
		if (e != -ENOENT)
			snprintf(err, errlen, "%s: %s", path, strerror(-e));
		return e;
	}
	e = settings_parse(s, text, path, err, errlen);
	free(text);
	return e;
}

int settings_save(const struct mt_settings *s, const char *path, char *err, size_t errlen)
{
	char text[PATH_MAX + 1024];
	int n = settings_format(s, text, sizeof(text));

	if (n < 0 || (size_t)n >= sizeof(text)) {
		snprintf(err, errlen, "cannot write %s: too long", path);
		return -ENAMETOOLONG;
	}
	return export_write_file_in_dir(path, text, (size_t)n, err, errlen);
}

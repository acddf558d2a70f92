/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * settings.h - the live view's saved settings: ~/.config/memtop/memtoprc
 * ($XDG_CONFIG_HOME/memtop/memtoprc when that is set), written when the
 * settings screen (F2) closes and read at start unless --no-config.
 *
 *     # memtop settings
 *     sort = leak
 *     invert = no
 *     group = function
 *     theme = default
 *     interval = 1
 *     hidden_columns = OBJ/s AGE
 *     export_dir = /var/tmp
 *
 * Values are kept as text except the ones with a fixed meaning here
 * (invert, group, interval); the TUI gives sort, theme and the column
 * names their meaning. Parsing is pure and all or nothing: a bad line
 * leaves the settings unchanged and names its line.
 */
#ifndef MEMTOP_SETTINGS_H
#define MEMTOP_SETTINGS_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "config.h"

struct mt_settings {
	char sort[16];             /* a column title, "leak"; "": unset */
	int invert;                /* 0, 1; -1: unset */
	int group;                 /* enum mt_group; -1: unset */
	char theme[64];            /* "": unset */
	double interval_s;         /* 0: unset */
	bool have_hidden;          /* hidden_columns was given (maybe empty) */
	char hidden_columns[128];  /* column titles separated by spaces */
	char export_dir[PATH_MAX]; /* "": the current directory */
	int inject;                /* enum mt_inject_mode for -p/--cgroup; -1: unset */
};

/* Nothing set. */
void settings_init(struct mt_settings *s);

/* Where the file lives: $XDG_CONFIG_HOME/memtop/memtoprc, else
 * $HOME/.config/memtop/memtoprc. 0, or -ENOENT without either variable,
 * -ENAMETOOLONG. */
int settings_path(char *buf, size_t len);

/* Apply text on top of s. On error returns -EINVAL, puts "source:LINE:
 * what" into err and leaves s unchanged. */
int settings_parse(struct mt_settings *s, const char *text, const char *source, char *err,
		   size_t errlen);

/* The file text for s (only what is set). snprintf semantics. */
int settings_format(const struct mt_settings *s, char *buf, size_t len);

/* Read path into s. 0; -ENOENT when there is no file (s unchanged); other
 * -errno with err set. */
int settings_load(struct mt_settings *s, const char *path, char *err, size_t errlen);

/* Write s to path, creating its directory (0700) when missing; the file
 * is replaced atomically (export_write_file_in_dir). 0 or -errno with err
 * set. */
int settings_save(const struct mt_settings *s, const char *path, char *err, size_t errlen);

#endif /* MEMTOP_SETTINGS_H */

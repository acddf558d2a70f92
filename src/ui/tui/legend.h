/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * legend.h - what every header field and column of the live view means,
 * one line each: the second page of the help (? twice) and the tables of
 * docs/tui.md read the same rows (tests/unit/test_legend.c checks the
 * docs). Pure data, no curses.
 */
#ifndef MEMTOP_LEGEND_H
#define MEMTOP_LEGEND_H

#include <stddef.h>

struct legend_row {
	const char *section; /* non-NULL on the first row of a section */
	const char *field;   /* as it appears on screen */
	const char *meaning; /* one line */
};

extern const struct legend_row legend_rows[];
extern const size_t legend_rows_len;

#endif /* MEMTOP_LEGEND_H */

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * figures.h - how the views show a figure that sampling makes uncertain
 * or a death made final, the same way in -b and in the TUI:
 *  - allocation rates are the smoothed ones (stats.h: MT_RATE_WINDOW_S),
 *  - a leading "~" marks a figure whose relative sampling error is above
 *    MT_APPROX_REL_ERR,
 *  - growth is "-" until it stands out of the noise (the leak score's own
 *    test, growth_shown),
 *  - a dead target's state names how it ended.
 */
#ifndef MEMTOP_FIGURES_H
#define MEMTOP_FIGURES_H

#include <stddef.h>

#include "model/model.h"

/* "~1.5M" / "25M": a site's smoothed allocation rate in bytes/s. */
char *fig_rate(char *buf, size_t len, const struct mt_site *s);
/* The same rate in objects/s. */
char *fig_obj_rate(char *buf, size_t len, const struct mt_site *s);
/* In-use bytes, "~" when few samples are live. */
char *fig_inuse(char *buf, size_t len, const struct mt_site *s, double bytes);
/* Growth of in-use per minute, or "-" while it is within the noise. */
char *fig_growth(char *buf, size_t len, const struct mt_site *s);
/* A target's state in one word: "alive", "exited" (code 0, or status
 * unknown), "exit 3", "SIGSEGV", "OOM". */
char *fig_state(char *buf, size_t len, const struct mt_target *t);

#endif /* MEMTOP_FIGURES_H */

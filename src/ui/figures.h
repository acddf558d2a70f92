/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * figures.h - how the views show a figure that sampling makes uncertain
 * or a death made final, the same way in -b and in the TUI:
 *  - allocation rates are the smoothed ones (stats.h: MT_RATE_WINDOW_S),
 *  - a leading "~" marks a figure whose relative sampling error is above
 *    MT_APPROX_REL_ERR,
 *  - growth is "-" until it stands out of the noise (the leak score's own
 *    test, growth_shown),
 *  - a dead target's state names how it ended,
 *  - the probes' slowdown is "-" until it is measured on the target, and
 *    "~S (low-high)" when what it rests on leaves it uncertain.
 */
#ifndef MEMTOP_FIGURES_H
#define MEMTOP_FIGURES_H

#include <stdbool.h>
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
/* Why a slowdown is not shown (JSON est_slowdown_note): not measured
 * yet, or known only from below. */
#define FIG_SLOWDOWN_NOT_MEASURED                                                              \
	"not measured yet: it needs the target's own CPU per free(), from its steps with the " \
	"allocation probes off and on"
#define FIG_SLOWDOWN_UNBOUNDED                                                                 \
	"only a lower bound: the probes take nearly all of the target's CPU, and its own CPU " \
	"per free() left over is too uncertain to divide by"
/* The probes' slowdown of a target, %: "-" while not measured, "12.5%",
 * "~950% (620-1900%)" when its range is wide, ">= 620%" when the range
 * has no upper end: the target's own CPU per free() could be nearly
 * nothing, and the figure would be a guess (status.h: est_slowdown_*;
 * mt_target: slowdown_*). */
char *fig_slowdown(char *buf, size_t len, bool measured, double pct, double low_pct, double high_pct);
/* Is a slowdown known to its range that much? (the "~" of fig_slowdown) */
bool fig_slowdown_approx(double pct, double low_pct, double high_pct);

#endif /* MEMTOP_FIGURES_H */

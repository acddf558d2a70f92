/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * metrics.h - the model and the data path's status as a Prometheus text
 * exposition (format 0.0.4): what --serve answers on /metrics.
 *
 * Label cardinality is bounded: at most METRICS_MAX_TARGETS targets (live
 * ones first, then by RSS) and the union of the METRICS_TOP_SITES sites
 * with the highest leak score and the METRICS_TOP_SITES with the most
 * bytes in use, so at most 2 * METRICS_TOP_SITES sites. The sites left
 * out are summed into one more series of the additive site families
 * (in-use bytes, bytes allocated per second), labelled
 * site="other", function="[other sites]", present only when some site
 * is left out. docs/export.md lists every metric.
 */
#ifndef MEMTOP_METRICS_H
#define MEMTOP_METRICS_H

#include <stddef.h>

#include "model/model.h"
#include "input/status.h"

#define METRICS_TOP_SITES 20
#define METRICS_MAX_TARGETS 64
#define METRICS_OTHER_SITE "other"
#define METRICS_OTHER_FUNCTION "[other sites]"

/* The exposition of m and st, taken at wall_s (unix seconds), into a
 * malloc'ed NUL-terminated *out of *len bytes. 0 or -ENOMEM. */
int metrics_text(struct mt_model *m, const struct mt_status *st, double wall_s, char **out,
		 size_t *len);

/* Append s to dst (room bytes, NUL-terminated when room > 0) as a label
 * value: backslash, double quote and newline escaped as the format says,
 * other control bytes and bytes that are not UTF-8 replaced by '?'.
 * Returns the length the whole escaped value needs (like snprintf). */
size_t metrics_escape_label(char *dst, size_t room, const char *s);

#endif /* MEMTOP_METRICS_H */

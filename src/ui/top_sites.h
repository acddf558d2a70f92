/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * top_sites.h - the call sites a batch front end prints (-b, --json):
 * the first --top of them by leak score, then in-use bytes (all of them
 * with --top 0), of the tiers --tier asks for.
 */
#ifndef MEMTOP_UI_TOP_SITES_H
#define MEMTOP_UI_TOP_SITES_H

#include <stddef.h>

#include "ui/frontend.h"

/* A new array of the sites to print, *n of them (free() it), or NULL
 * when out of memory. */
struct mt_site **top_sites(const struct mt_fe_ctx *ctx, size_t *n);

#endif /* MEMTOP_UI_TOP_SITES_H */

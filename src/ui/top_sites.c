// SPDX-License-Identifier: GPL-2.0-only
/*
 * top_sites.c - the call sites a batch front end prints (top_sites.h).
 */
#include "ui/top_sites.h"

#include <stdlib.h>

#include "model/model.h"

struct mt_site **top_sites(const struct mt_fe_ctx *ctx, size_t *n)
{
	size_t max = model_site_count(ctx->model);
	struct mt_site **sites;

	if (ctx->cfg->top > 0 && (size_t)ctx->cfg->top < max)
		max = (size_t)ctx->cfg->top;
	sites = calloc(max ? max : 1, sizeof(*sites));
	if (!sites)
		return NULL;
	*n = model_sites_sorted_tier(ctx->model, MT_SORT_LEAK, ctx->cfg->tiers, sites, max);
	return sites;
}

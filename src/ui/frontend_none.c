// SPDX-License-Identifier: GPL-2.0-only
/*
 * frontend_none.c - `--daemon`: no display at all. The session's data
 * goes to its recording and its socket (record/recorder.h, session.h);
 * a viewer shows it (`memtop attach`).
 */
#include "ui/frontend.h"

static int none_start(struct mt_fe_ctx *ctx)
{
	return 0;
}

static int none_tick(struct mt_fe_ctx *ctx)
{
	return MT_FE_NONE;
}

static void none_stop(struct mt_fe_ctx *ctx)
{
}

const struct mt_frontend frontend_none = {
	.name = "none",
	.start = none_start,
	.tick = none_tick,
	.stop = none_stop,
};

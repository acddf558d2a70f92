/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * frontend.h - how app.c's main loop talks to what the user sees: batch
 * text, JSON lines, or the ncurses TUI. One ops table per front end.
 *
 * The loop: wait on the ring buffer and, when the front end has one, its
 * input fd; drain events into the model; every interval tick the model
 * (MT_IN_TICK) and then call ops->tick(); when input_fd is readable call ops->input().
 * Front ends read the model and the shared status, and may change the
 * model's grouping or ask for an export; they never touch BPF.
 */
#ifndef MEMTOP_FRONTEND_H
#define MEMTOP_FRONTEND_H

#include <stdbool.h>
#include <linux/types.h>

#include "config.h"
#include "model/model.h"
#include "input/status.h"

/* What a front end may ask of the loop; returned by tick()/input(). */
enum mt_fe_action {
	MT_FE_NONE = 0,
	MT_FE_QUIT = 1 << 0,
	MT_FE_INTERVAL = 1 << 1, /* ctx->interval_s changed */
	MT_FE_DETACH = 1 << 2,   /* with QUIT: a -- CMD keeps running, unprobed */
	MT_FE_SEEK = 1 << 3,     /* a replay: show interval ctx->seek */
};

struct mt_fe_ctx {
	struct mt_model *model;
	const struct mt_config *cfg;
	struct mt_status *status;
	double interval_s; /* current refresh interval, front end may change it */
	void *priv;        /* front end's own state */
	/* A replay (status->replay is set): */
	long seek;    /* the interval MT_FE_SEEK asks for */
	bool paused;  /* the front end paused: the replay does not move on */
	bool refresh; /* this tick moved the replay: refresh even if paused */
};

struct mt_frontend {
	const char *name;
	/* Whether this front end can work here (a terminal that can address
	 * the cursor...), asked before anything is attached; may be NULL.
	 * 0, or -errno with one line in err saying what to do instead. */
	int (*check)(const struct mt_config *cfg, char *err, size_t errlen);
	/* Set up (screen, headers). 0 or -errno; on error nothing is left to
	 * undo and ctx->status->message may say why in one line. */
	int (*start)(struct mt_fe_ctx *ctx);
	/* The fd to watch for input, or -1. */
	int (*input_fd)(struct mt_fe_ctx *ctx);
	/* After each tick of the model. Returns enum mt_fe_action bits. */
	int (*tick)(struct mt_fe_ctx *ctx);
	/* input_fd is readable. Returns enum mt_fe_action bits. */
	int (*input)(struct mt_fe_ctx *ctx);
	/* Tear down; also the last chance to print final numbers. */
	void (*stop)(struct mt_fe_ctx *ctx);
};

extern const struct mt_frontend frontend_text; /* -b */
extern const struct mt_frontend frontend_json; /* -b --json */
extern const struct mt_frontend frontend_tui;  /* default */
extern const struct mt_frontend frontend_none; /* --daemon */

#endif /* MEMTOP_FRONTEND_H */

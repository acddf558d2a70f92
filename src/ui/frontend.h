/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * frontend.h - how app.c's main loop talks to what the user sees: batch
 * text, JSON lines, or the ncurses TUI. One ops table per front end.
 *
 * The loop: wait on the ring buffer and, when the front end has one, its
 * input fd; drain events into the model; every interval call model_tick()
 * and then ops->tick(); when input_fd is readable call ops->input().
 * Front ends read the model and the shared status, and may change the
 * model's grouping or ask for an export; they never touch BPF.
 */
#ifndef MEMTOP_FRONTEND_H
#define MEMTOP_FRONTEND_H

#include <stdbool.h>
#include <linux/types.h>

#include "probe/cgroup.h"
#include "config.h"
#include "model/model.h"
#include "export/push.h"

/* --cgroup: the pod's memory and where it is heading. */
struct mt_cgroup_status {
	bool on;		   /* watching a cgroup */
	const char *path;	   /* its v2 directory */
	bool have_mem;		   /* mem is valid (a memory controller was found) */
	struct cgroup_mem mem;
	double growth_bytes_per_s; /* least-squares slope of mem.current, last minute */
	double growth_r2;
	double time_to_max_s;	   /* at that slope; < 0 when not growing or no limit */
	int processes;		   /* live watched processes */
};

/* What the data path reports about itself, refreshed before every tick. */
struct mt_status {
	const char *probe_mode;	   /* "session", "uretprobe", "usdt" */
	double events_per_s;	   /* ring-buffer records per second */
	double est_cpu_pct;	   /* estimated cost to the targets, % of one CPU */
	double est_slowdown_pct;   /* worst target: time added to its own CPU time, % */
	double budget_pct;	   /* --max-overhead */
	double trap_ns;		   /* calibrated cost of one probe hit */
	double probe_hits_per_s;
	bool backed_off;	   /* overhead budget forced duty-cycling */
	bool budget_unreachable;   /* free() probes alone exceed the budget */
	double duty;		   /* fraction of time allocation probes are on, 1.0 normally */
	bool counters_exact;	   /* false once allocation probes were ever paused */
	bool all_exited;	   /* every target has exited */
	struct mt_cgroup_status cgroup;
	bool push_on;		   /* --push */
	struct push_status push;
	char message[512];	   /* last status-line message (export written, errors) */
};

/* What a front end may ask of the loop; returned by tick()/input(). */
enum mt_fe_action {
	MT_FE_NONE = 0,
	MT_FE_QUIT = 1 << 0,
	MT_FE_INTERVAL = 1 << 1, /* ctx->interval_s changed */
};

struct mt_fe_ctx {
	struct mt_model *model;
	const struct mt_config *cfg;
	struct mt_status *status;
	double interval_s; /* current refresh interval, front end may change it */
	void *priv;	   /* front end's own state */
};

struct mt_frontend {
	const char *name;
	/* Set up (screen, headers). 0 or -errno; on error nothing is left to
	 * undo and ctx->status->message may say why in one line. */
	int (*start)(struct mt_fe_ctx *ctx);
	/* The fd to watch for input, or -1. */
	int (*input_fd)(struct mt_fe_ctx *ctx);
	/* After each model_tick(). Returns enum mt_fe_action bits. */
	int (*tick)(struct mt_fe_ctx *ctx);
	/* input_fd is readable. Returns enum mt_fe_action bits. */
	int (*input)(struct mt_fe_ctx *ctx);
	/* Tear down; also the last chance to print final numbers. */
	void (*stop)(struct mt_fe_ctx *ctx);
};

extern const struct mt_frontend frontend_text; /* -b */
extern const struct mt_frontend frontend_json; /* -b --json */
extern const struct mt_frontend frontend_tui;  /* default */

#endif /* MEMTOP_FRONTEND_H */

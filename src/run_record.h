/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * run_record.h - the run's recording: `--record FILE`, or `--daemon`'s own
 * beside its socket (docs/recording.md). Opening it for --daemon checks
 * the run directory, removes what killed sessions left there and marks
 * this one; each interval is written as the front end is about to show
 * it; its failure and its outgrowing --record-max are each said once;
 * closing it writes the last interval and, for --daemon, removes the
 * session's files (a recording the user named stays).
 */
#ifndef MEMTOP_RUN_RECORD_H
#define MEMTOP_RUN_RECORD_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "config.h"
#include "model/model.h"
#include "input/status.h"

struct recorder;

struct run_record {
	struct recorder *rec; /* NULL: not recording */
	char path[PATH_MAX];  /* the file it writes */
	bool marked;          /* --daemon: RUN_DIR/ID.pid written, the files go at the end */
	bool said, warned;    /* its failure, its warning were said */
};

/* What cfg asks (nothing without --record or --daemon). say gets a line
 * for the user (a killed session's files removed). 0, or -errno with one
 * line in err. */
int run_record_open(struct run_record *rr, const struct mt_config *cfg,
		    void (*say)(const char *line), char *err, size_t errlen);

/* Be told every input of m from now on (before any target exists). */
void run_record_watch(struct run_record *rr, struct mt_model *m);

/* The interval the front end is about to show (quiet: the one before the
 * display started), written. */
void run_record_interval(struct run_record *rr, const struct mt_model *m,
			 const struct mt_status *st, bool quiet);

/* A line for the user, each cause once: the recording stopped, or it
 * grows past its bound. false when there is nothing new to say. */
bool run_record_news(struct run_record *rr, char *line, size_t len);

/* The last interval written, the file closed; --daemon's session files
 * removed. */
void run_record_close(struct run_record *rr, const struct mt_config *cfg);

#endif /* MEMTOP_RUN_RECORD_H */

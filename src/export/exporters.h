/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * exporters.h - the table of what memtop writes or sends out of a run,
 * one row per exporter with the same few operations; snapshots.c
 * iterates it. Adding an exporter is its module (the encoding or the
 * sending) plus one row in exporters.c.
 *
 * The recording (--record, record/recorder.h) is not a row: it is the
 * model's observer, writing each input as it is applied, and sessions
 * stream it; a row is a snapshot of the model taken at a tick or at exit.
 */
#ifndef MEMTOP_EXPORTERS_H
#define MEMTOP_EXPORTERS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "config.h"
#include "input/status.h"
#include "model/model.h"

/* One exporter in a run: its row, and the state its operations keep. */
struct exporter_run {
	const struct exporter *x;
	const struct mt_config *cfg;
	void *state;           /* the module's object (a server, a sender), or NULL */
	unsigned int numbered; /* files written so far (--output-every) */
	__u64 next_ns;         /* when the next one is due; 0: not yet set */
	bool said;             /* its one-time status line was given */
};

struct exporter {
	const char *name;
	/* Whether the run asks for it (its options). */
	bool (*wanted)(const struct mt_config *cfg);
	/* Before anything is attached: paths checked, addresses bound,
	 * threads started. 0, or -errno with one line in err (nothing left
	 * running then). */
	int (*start)(struct exporter_run *r, char *err, size_t errlen);
	/* After each model tick: what is due; results and failures into st.
	 * Never blocks on the network. May be NULL. */
	void (*tick)(struct exporter_run *r, struct mt_model *m, __u64 now_ns, struct mt_status *st);
	/* At exit: the last output (files, a last push). 0, or -errno with
	 * one line in err. Releases what start() made. May be NULL. */
	int (*finish)(struct exporter_run *r, struct mt_model *m, char *err, size_t errlen);
	/* Release without a last output (the run's set-up failed). May be
	 * NULL. */
	void (*stop)(struct exporter_run *r);
};

/* The rows, in the order they start, tick and finish. */
extern const struct exporter *const exporters[];
extern const size_t exporters_count;

#endif /* MEMTOP_EXPORTERS_H */

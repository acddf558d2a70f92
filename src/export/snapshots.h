/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * snapshots.h - when memtop writes or sends what export.h and push.h
 * produce: --output at exit and every --output-every seconds (numbered
 * files), --folded at exit, --push every --push-every seconds and once more
 * at exit; --serve's snapshots every tick (serve.h). Paths are checked and
 * the --serve address bound before anything is attached.
 */
#ifndef MEMTOP_SNAPSHOTS_H
#define MEMTOP_SNAPSHOTS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "config.h"
#include "input/status.h"
#include "model/model.h"
#include "export/exporters.h"

/* The exporters a run asked for (exporters.h), started. */
struct snapshots {
	struct exporter_run run[8];
	size_t n;
};

/* Start each exporter the run asks for (paths checked, the --serve
 * address bound, the push thread started). 0, or -errno with one line in
 * err; nothing is left running then. */
int snapshots_init(struct snapshots *s, const struct mt_config *cfg, char *err, size_t errlen);

/* After each model tick: numbered files and pushes that are due; results
 * and failures go to st (message, push status). Never blocks on the
 * network. */
void snapshots_tick(struct snapshots *s, struct mt_model *m, __u64 now_ns, struct mt_status *st);

/* At exit: the final --output and --folded files, and a last push (with a
 * few seconds' grace). 0, or -errno with one line in err for a file that
 * could not be written. */
int snapshots_finish(struct snapshots *s, struct mt_model *m, char *err, size_t errlen);

/* Stop them without a last output (setup failed). */
void snapshots_fini(struct snapshots *s);

#endif /* MEMTOP_SNAPSHOTS_H */

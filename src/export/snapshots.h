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
#include "export/push.h"
#include "export/serve.h"

struct snapshots {
	const struct mt_config *cfg;
	struct push *push;
	struct serve *serve;   /* --serve, or NULL */
	bool served_said;      /* its address went to the status line */
	unsigned int numbered; /* --output-every files written */
	__u64 next_ns;         /* when the next numbered file is due; 0: none */
};

/* Check the output paths and start the push thread. 0, or -errno with one
 * line in err; nothing is left running then. */
int snapshots_init(struct snapshots *s, const struct mt_config *cfg, char *err, size_t errlen);

/* After each model tick: numbered files and pushes that are due; results
 * and failures go to st (message, push status). Never blocks on the
 * network. */
void snapshots_tick(struct snapshots *s, struct mt_model *m, __u64 now_ns, struct mt_status *st);

/* At exit: the final --output and --folded files, and a last push (with a
 * few seconds' grace). 0, or -errno with one line in err for a file that
 * could not be written. */
int snapshots_finish(struct snapshots *s, struct mt_model *m, char *err, size_t errlen);

/* Stop the push thread without a last push (setup failed). */
void snapshots_fini(struct snapshots *s);

#endif /* MEMTOP_SNAPSHOTS_H */

// SPDX-License-Identifier: GPL-2.0-only
/*
 * exporters.c - the rows of the exporter table (exporters.h): --serve's
 * server, the pprof file (--output, --output-every), the folded stacks
 * (--folded) and the Pyroscope sender (--push). Each row adapts the
 * run's options to its module: the encoding is export.c's and pprof.c's,
 * the serving serve.c's, the sending push.c's.
 */
#include "export/exporters.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "export/export.h"
#include "export/push.h"
#include "export/serve.h"
#include "util/out_file.h"
#include "util/sanitize.h"

/* Seconds a last push may take at exit. */
#define PUSH_GRACE_S 3.0

/* ---- --serve ------------------------------------------------------------ */

static bool serve_wanted(const struct mt_config *cfg)
{
	return cfg->serve != NULL;
}

static int serve_row_start(struct exporter_run *r, char *err, size_t errlen)
{
	struct serve *s = serve_start(r->cfg->serve, err, errlen);

	if (!s)
		return -errno;
	r->state = s;
	fprintf(stderr,
		"memtop: serving http://%s/ (/metrics, /debug/pprof/heap, /debug/pprof/allocs)%s\n",
		serve_address(s),
		serve_is_loopback(s) ? ""
				     : ": not loopback, anyone who reaches it reads the profiles");
	return 0;
}

static void serve_row_tick(struct exporter_run *r, struct mt_model *m, __u64 now_ns,
			   struct mt_status *st)
{
	struct serve *s = r->state;

	if (!r->said && !st->message[0])
		/* once, for the live view, which hides the stderr line */
		snprintf(st->message, sizeof(st->message), "serving http://%s/", serve_address(s));
	r->said = true;
	serve_publish(s, m, st, now_ns);
	serve_get_status(s, &st->serve);
	st->serve_on = true;
}

static void serve_row_stop(struct exporter_run *r)
{
	serve_stop(r->state);
	r->state = NULL;
}

static int serve_row_finish(struct exporter_run *r, struct mt_model *m, char *err, size_t errlen)
{
	(void)m, (void)err, (void)errlen;
	serve_row_stop(r);
	return 0;
}

static const struct exporter serve_row = {
	.name = "serve",
	.wanted = serve_wanted,
	.start = serve_row_start,
	.tick = serve_row_tick,
	.finish = serve_row_finish,
	.stop = serve_row_stop,
};

/* ---- --output, --output-every --------------------------------------------- */

static bool pprof_wanted(const struct mt_config *cfg)
{
	return cfg->output != NULL;
}

static int pprof_row_start(struct exporter_run *r, char *err, size_t errlen)
{
	const struct mt_config *cfg = r->cfg;
	int e = export_check_path(cfg->output, err, errlen);

	if (e)
		return e;
	if (out_file_is_terminal(cfg->output)) {
		/* gzip's own rule: compressed bytes are not for a terminal (a
		 * target's names could even pass through a stored block) */
		snprintf(err, errlen,
			 "cannot write %s: a terminal (the profile is gzip-compressed binary: "
			 "redirect it to a file, or use --folded for text)",
			 cfg->output);
		return -ENOTTY;
	}
	if (cfg->output_every > 0 && out_file_is_stream(cfg->output)) {
		snprintf(err, errlen,
			 "--output-every: %s is not a regular file (numbered snapshots are files beside it)",
			 cfg->output);
		return -EINVAL;
	}
	return 0;
}

static void write_numbered(struct exporter_run *r, struct mt_model *m, struct mt_status *st)
{
	char path[4096], err[512];

	if (export_numbered_path(r->cfg->output, ++r->numbered, path, sizeof(path))) {
		snprintf(st->message, sizeof(st->message), "--output-every: name too long");
		return;
	}
	if (export_pprof_file(m, path, err, sizeof(err))) {
		snprintf(st->message, sizeof(st->message), "%.500s", err);
		fprintf(stderr, "memtop: %s\n", sanitize_inplace(err));
	} else {
		snprintf(st->message, sizeof(st->message), "wrote %.500s", path);
	}
}

static void pprof_row_tick(struct exporter_run *r, struct mt_model *m, __u64 now_ns,
			   struct mt_status *st)
{
	__u64 every = (__u64)(r->cfg->output_every * 1e9);

	if (r->cfg->output_every <= 0)
		return;
	if (!r->next_ns) {
		r->next_ns = now_ns + every;
	} else if (now_ns >= r->next_ns) {
		write_numbered(r, m, st);
		r->next_ns += every;
	}
}

static int pprof_row_finish(struct exporter_run *r, struct mt_model *m, char *err, size_t errlen)
{
	return export_pprof_file(m, r->cfg->output, err, errlen);
}

static const struct exporter pprof_row = {
	.name = "pprof",
	.wanted = pprof_wanted,
	.start = pprof_row_start,
	.tick = pprof_row_tick,
	.finish = pprof_row_finish,
};

/* ---- --folded ------------------------------------------------------------- */

static bool folded_wanted(const struct mt_config *cfg)
{
	return cfg->folded != NULL;
}

static int folded_row_start(struct exporter_run *r, char *err, size_t errlen)
{
	return export_check_path(r->cfg->folded, err, errlen);
}

static int folded_row_finish(struct exporter_run *r, struct mt_model *m, char *err, size_t errlen)
{
	return export_folded_file(m, r->cfg->folded, err, errlen);
}

static const struct exporter folded_row = {
	.name = "folded",
	.wanted = folded_wanted,
	.start = folded_row_start,
	.finish = folded_row_finish,
};

/* ---- --push --------------------------------------------------------------- */

static bool push_wanted(const struct mt_config *cfg)
{
	return cfg->push_url != NULL;
}

static int push_row_start(struct exporter_run *r, char *err, size_t errlen)
{
	struct push_opts po = { .url = r->cfg->push_url, .every_s = r->cfg->push_every };
	int e;

	r->state = push_new(&po);
	if (r->state)
		return 0;
	e = -errno;
	snprintf(err, errlen, "--push %s: %s", r->cfg->push_url,
		 e == -EINVAL ? "not a usable URL" : strerror(-e));
	return e;
}

static void push_row_tick(struct exporter_run *r, struct mt_model *m, __u64 now_ns,
			  struct mt_status *st)
{
	(void)now_ns;
	push_tick(r->state, m); /* -EBUSY: the last batch is still going */
	push_get_status(r->state, &st->push);
	st->push_on = true;
}

static int push_row_finish(struct exporter_run *r, struct mt_model *m, char *err, size_t errlen)
{
	(void)err, (void)errlen;
	push_now(r->state, m);
	push_free(r->state, PUSH_GRACE_S);
	r->state = NULL;
	return 0;
}

static void push_row_stop(struct exporter_run *r)
{
	push_free(r->state, 0);
	r->state = NULL;
}

static const struct exporter push_row = {
	.name = "push",
	.wanted = push_wanted,
	.start = push_row_start,
	.tick = push_row_tick,
	.finish = push_row_finish,
	.stop = push_row_stop,
};

/* Paths are checked before the server binds or the sender starts, so a
 * bad path ends the run before anything is announced. */
const struct exporter *const exporters[] = { &pprof_row, &folded_row, &serve_row, &push_row };
const size_t exporters_count = sizeof(exporters) / sizeof(exporters[0]);

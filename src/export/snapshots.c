// SPDX-License-Identifier: GPL-2.0-only
/*
 * snapshots.c - schedules the exports (snapshots.h). The encoding is
 * export.c's and pprof.c's, the sending push.c's; this file only decides
 * when, and reports how it went.
 */
#include "export/snapshots.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "export/export.h"
#include "export/serve.h"
#include "util/out_file.h"
#include "util/sanitize.h"

#define PUSH_GRACE_S 3.0

int snapshots_init(struct snapshots *s, const struct mt_config *cfg, char *err, size_t errlen)
{
	struct push_opts po = { 0 };
	int e;

	memset(s, 0, sizeof(*s));
	s->cfg = cfg;
	if (cfg->output && (e = export_check_path(cfg->output, err, errlen)))
		return e;
	if (cfg->output && out_file_is_terminal(cfg->output)) {
		/* gzip's own rule: compressed bytes are not for a terminal (a
		 * target's names could even pass through a stored block) */
		snprintf(err, errlen,
			 "cannot write %s: a terminal (the profile is gzip-compressed binary: "
			 "redirect it to a file, or use --folded for text)",
			 cfg->output);
		return -ENOTTY;
	}
	if (cfg->output && cfg->output_every > 0 && out_file_is_stream(cfg->output)) {
		snprintf(err, errlen,
			 "--output-every: %s is not a regular file (numbered snapshots are files beside it)",
			 cfg->output);
		return -EINVAL;
	}
	if (cfg->folded && (e = export_check_path(cfg->folded, err, errlen)))
		return e;
	if (cfg->serve && !(s->serve = serve_start(cfg->serve, err, errlen)))
		return -errno;
	if (s->serve)
		fprintf(stderr,
			"memtop: serving http://%s/ (/metrics, /debug/pprof/heap, /debug/pprof/allocs)%s\n",
			serve_address(s->serve),
			serve_is_loopback(s->serve)
				? ""
				: ": not loopback, anyone who reaches it reads the profiles");
	if (cfg->push_url) {
		po.url = cfg->push_url;
		po.every_s = cfg->push_every;
		s->push = push_new(&po);
		if (!s->push) {
			e = -errno;
			snprintf(err, errlen, "--push %s: %s", cfg->push_url,
				 e == -EINVAL ? "not a usable URL" : strerror(-e));
			serve_stop(s->serve);
			s->serve = NULL;
			return e;
		}
	}
	return 0;
}

static void write_numbered(struct snapshots *s, struct mt_model *m, struct mt_status *st)
{
	char path[4096], err[512];

	if (export_numbered_path(s->cfg->output, ++s->numbered, path, sizeof(path))) {
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

void snapshots_tick(struct snapshots *s, struct mt_model *m, __u64 now_ns, struct mt_status *st)
{
	if (s->cfg->output && s->cfg->output_every > 0) {
		if (!s->next_ns)
			s->next_ns = now_ns + (__u64)(s->cfg->output_every * 1e9);
		else if (now_ns >= s->next_ns) {
			write_numbered(s, m, st);
			s->next_ns += (__u64)(s->cfg->output_every * 1e9);
		}
	}
	if (s->serve && !s->served_said && !st->message[0])
		/* once, for the live view, which hides the stderr line */
		snprintf(st->message, sizeof(st->message), "serving http://%s/",
			 serve_address(s->serve));
	s->served_said = s->serve != NULL;
	serve_publish(s->serve, m, st, now_ns);
	if (s->serve) {
		serve_get_status(s->serve, &st->serve);
		st->serve_on = true;
	}
	if (s->push) {
		push_tick(s->push, m); /* -EBUSY: the last batch is still going */
		push_get_status(s->push, &st->push);
		st->push_on = true;
	}
}

int snapshots_finish(struct snapshots *s, struct mt_model *m, char *err, size_t errlen)
{
	int e = 0;

	serve_stop(s->serve);
	s->serve = NULL;
	if (s->cfg->output)
		e = export_pprof_file(m, s->cfg->output, err, errlen);
	if (!e && s->cfg->folded)
		e = export_folded_file(m, s->cfg->folded, err, errlen);
	if (s->push) {
		push_now(s->push, m);
		push_free(s->push, PUSH_GRACE_S);
		s->push = NULL;
	}
	return e;
}

void snapshots_fini(struct snapshots *s)
{
	serve_stop(s->serve);
	s->serve = NULL;
	if (s->push)
		push_free(s->push, 0);
	s->push = NULL;
}

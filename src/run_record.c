// SPDX-License-Identifier: GPL-2.0-only
/*
 * run_record.c - the run's recording (run_record.h).
 */
#include "run_record.h"

#include <errno.h>
#include <stdio.h>
#include <unistd.h>

#include "record/recorder.h"
#include "record/session.h"

#ifndef MEMTOP_VERSION
#define MEMTOP_VERSION "dev"
#endif

/* --daemon's own recording, when --record does not name one. */
#define DAEMON_RECORD_MAX (64ULL << 20)

/* What the run watches, in the words of its command line, for the
 * recording's header and `memtop attach`'s list. */
static void describe_targets(const struct mt_config *cfg, char *buf, size_t len)
{
	size_t n = 0;
	int i;

	buf[0] = '\0';
	if (cfg->cgroup)
		snprintf(buf, len, "--cgroup %s", cfg->cgroup);
	for (i = 0; i < cfg->npids && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s%d", i ? "," : "-p ", (int)cfg->pids[i]);
	for (i = 0; cfg->cmd_argv && cfg->cmd_argv[i] && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s%s", i ? " " : "-- ", cfg->cmd_argv[i]);
}

/* A session whose process is gone, and whose files session_sweep()
 * removed. */
static void said_swept(void *ctx, pid_t id, unsigned long long bytes)
{
	void (*say)(const char *line) = *(void (**)(const char *))ctx;
	char line[256];

	snprintf(line, sizeof(line),
		 "removed the files of session %d (%llu KiB), whose process is gone: it ended "
		 "without cleaning up (killed?)",
		 (int)id, (bytes + 1023) >> 10);
	say(line);
}

/* --daemon's run directory: checked, rid of what sessions killed before
 * they could clean up left, then this one's mark. */
static int mark_session(struct run_record *rr, void (*say)(const char *line), char *err, size_t errlen)
{
	if (session_check_dir(session_run_dir(), err, errlen))
		return -EPERM;
	session_sweep(session_run_dir(), getpid(), said_swept, &say);
	if (session_mark(session_run_dir(), getpid(), err, errlen))
		return -EIO;
	rr->marked = true;
	return 0;
}

int run_record_open(struct run_record *rr, const struct mt_config *cfg,
		    void (*say)(const char *line), char *err, size_t errlen)
{
	struct recorder_opts o = {
		.path = cfg->record,
		.max_bytes = cfg->record_max,
		.interval_s = cfg->interval_s,
		.rate = cfg->rate,
		.group = cfg->group,
		.skip_regex = cfg->skip_regex,
		.max_stacks = cfg->max_stacks,
		.version = MEMTOP_VERSION,
	};
	char targets[512];
	int e;

	*rr = (struct run_record){ 0 };
	if (!cfg->record && !cfg->daemon)
		return 0;
	if (cfg->daemon && (e = mark_session(rr, say, err, errlen)))
		return e;
	if (!o.path) {
		/* --daemon's own, beside its socket */
		snprintf(rr->path, sizeof(rr->path), "%s/%d.rec", session_run_dir(), (int)getpid());
		o.path = rr->path;
		if (!o.max_bytes)
			o.max_bytes = DAEMON_RECORD_MAX;
	} else {
		snprintf(rr->path, sizeof(rr->path), "%s", o.path);
	}
	describe_targets(cfg, targets, sizeof(targets));
	o.targets = targets;
	rr->rec = recorder_open(&o, err, errlen);
	return rr->rec ? 0 : -EIO;
}

void run_record_watch(struct run_record *rr, struct mt_model *m)
{
	if (rr->rec)
		recorder_watch(rr->rec, m);
}

void run_record_interval(struct run_record *rr, const struct mt_model *m,
			 const struct mt_status *st, bool quiet)
{
	if (rr->rec)
		recorder_interval(rr->rec, m, st, quiet);
}

bool run_record_news(struct run_record *rr, char *line, size_t len)
{
	if (!rr->rec)
		return false;
	if (recorder_failed(rr->rec) && !rr->said) {
		rr->said = true;
		snprintf(line, len, "%s", recorder_failed(rr->rec));
		return true;
	}
	if (recorder_warning(rr->rec) && !rr->warned) {
		rr->warned = true;
		snprintf(line, len, "%s", recorder_warning(rr->rec));
		return true;
	}
	return false;
}

void run_record_close(struct run_record *rr, const struct mt_config *cfg)
{
	recorder_close(rr->rec); /* its last interval is written: nothing is lost */
	rr->rec = NULL;
	/* --daemon: the session's files go with it (its own recording too;
	 * one --record named is the user's) */
	if (rr->marked)
		session_remove_files(session_run_dir(), getpid(), !cfg->record);
	rr->marked = false;
}

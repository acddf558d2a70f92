/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * cli.h - command line to struct mt_config. Pure: no I/O besides the
 * message buffer, so every error message is unit-tested.
 */
#ifndef MEMTOP_CLI_H
#define MEMTOP_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <linux/types.h>

#include "model/model.h"

#define MT_MAX_PIDS 256
#define MT_DEFAULT_RATE (512 * 1024)

enum mt_probe_mode {
	MT_PROBE_AUTO = 0,  /* session when the kernel has it, else uretprobe */
	MT_PROBE_SESSION,   /* uprobe_multi session: return trap only when sampled */
	MT_PROBE_URETPROBE, /* entry uprobe + uretprobe on every call */
};

struct mt_config {
	pid_t pids[MT_MAX_PIDS];
	int npids;
	char **cmd_argv; /* after "--", NULL-terminated, points into argv */
	int cmd_argc;
	const char *cgroup; /* --cgroup PATH|ID */

	bool batch;	   /* -b */
	bool json;	   /* --json (implies batch output format) */
	double interval_s; /* -d SECS, default 1.0 */
	long count;	   /* -n COUNT, -1: until stopped */
	int top;	   /* --top N sites per interval in batch text/JSON; 0: all */

	__u64 rate; /* --rate BYTES (K/M/G suffixes), default 512 KiB */
	enum mt_group group; /* --group function|line|stack */
	const char *skip_regex;	/* --skip REGEX */
	enum mt_probe_mode probe_mode; /* --probe-mode auto|session|uretprobe */
	__u32 stack_copy;  /* --stack-copy BYTES, default 8192, max MT_STACK_COPY_MAX */
	__u32 live_max;	   /* --live-max N entries of the live map, default 65536 */

	const char *theme; /* --theme NAME|PATH */
	bool ascii;	   /* --ascii */
	bool no_color;	   /* --no-color (NO_COLOR is read by the TUI) */

	const char *output; /* --output FILE (pprof) */
	double output_every; /* --output-every SECS; 0: only at exit */
	const char *folded; /* --folded FILE */
	const char *push_url; /* --push URL */
	double push_every;    /* --push-every SECS, default 15 */

	double max_overhead_pct; /* --max-overhead PCT of one CPU per target */
	bool no_preload;	 /* --no-preload */
	int verbose;		 /* -v, repeatable */
};

enum mt_cli_result {
	MT_CLI_RUN = 0,	    /* cfg is ready */
	MT_CLI_EXIT_OK = 1, /* --help or --version printed into out; exit 0 */
	MT_CLI_ERROR = -1,  /* one-line message in out; exit 2 */
};

/* Parse argv into cfg (which it initialises with the defaults). Messages
 * (help, version, or the error line without a trailing newline) go to out.
 * argv is not modified; cfg->cmd_argv points into it. */
enum mt_cli_result cli_parse(int argc, char **argv, struct mt_config *cfg, char *out,
			     size_t outlen);

/* "512K" -> 524288. 0 or -EINVAL / -ERANGE. Accepts K, M, G (binary) and
 * an optional trailing B/iB. */
int cli_parse_size(const char *s, __u64 *out);

#endif /* MEMTOP_CLI_H */

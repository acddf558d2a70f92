/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * config.h - the run configuration: what the user asked for, as parsed by
 * cli.c and read by every stage. A leaf header: it includes nothing of
 * memtop's, so any layer may include it without depending on another.
 */
#ifndef MEMTOP_CONFIG_H
#define MEMTOP_CONFIG_H

#include <stdbool.h>
#include <sys/types.h>
#include <linux/types.h>

enum mt_group {
	MT_GROUP_FUNCTION = 0, /* one site per call-site function+module */
	MT_GROUP_LINE,         /* one site per function+file:line */
	MT_GROUP_STACK,        /* one site per full stack */
};
#define MT_GROUP_COUNT 3

/* The names of enum mt_group, in its order: the one table --group,
 * memtoprc and the TUI use. */
static inline const char *const *mt_group_names(void)
{
	static const char *const names[MT_GROUP_COUNT] = { "function", "line", "stack" };

	return names;
}

/* Settings the command line gave (mt_config.given), which win over the
 * settings file the TUI reads (ui/tui/settings.h). */
enum mt_given {
	MT_GIVEN_DELAY = 1 << 0,  /* -d */
	MT_GIVEN_GROUP = 1 << 1,  /* --group */
	MT_GIVEN_THEME = 1 << 2,  /* --theme */
	MT_GIVEN_INJECT = 1 << 3, /* --inject or --no-inject */
};

/* Which memory tiers the site tables show (--tier, the TUI's T key;
 * docs/device-memory.md). */
enum mt_tiers {
	MT_TIERS_ALL = 0, /* host and device */
	MT_TIERS_HOST,    /* the heap (and mmap sites) only */
	MT_TIERS_DEVICE,  /* the device APIs' allocations only */
	MT_TIERS_COUNT,
};

#define MT_MAX_PIDS 256
#define MT_DEFAULT_RATE (512 * 1024)

enum mt_probe_mode {
	MT_PROBE_AUTO = 0,  /* session when the kernel has it, else uretprobe */
	MT_PROBE_SESSION,   /* uprobe_multi session: return trap only when sampled */
	MT_PROBE_URETPROBE, /* entry uprobe + uretprobe on every call */
};

/* Whether memtop may change a running process to sample it in-process
 * (docs/inject.md): the sampler loaded, its allocator calls rerouted. */
enum mt_inject_mode {
	MT_INJECT_AUTO = 0, /* when it can: uprobes, with the reason, when not */
	MT_INJECT_NEVER,    /* --no-inject: uprobes only, nothing written */
	MT_INJECT_ALWAYS,   /* --inject: in-process or the run fails */
};

struct mt_config {
	pid_t pids[MT_MAX_PIDS];
	int npids;
	char **cmd_argv; /* after "--", NULL-terminated, points into argv */
	int cmd_argc;
	const char *cgroup; /* --cgroup PATH|ID */

	bool batch;          /* -b */
	bool json;           /* --json (implies batch output format) */
	double interval_s;   /* -d SECS, default 1.0 */
	long count;          /* -n COUNT, -1: until stopped */
	int top;             /* --top N sites per interval in batch text/JSON; 0: all */
	enum mt_tiers tiers; /* --tier all|host|device: the sites shown */

	__u64 rate;                    /* --rate BYTES (K/M/G suffixes), default 512 KiB */
	enum mt_group group;           /* --group function|line|stack */
	const char *skip_regex;        /* --skip REGEX */
	enum mt_probe_mode probe_mode; /* --probe-mode auto|session|uretprobe */
	__u32 stack_copy;              /* --stack-copy BYTES, default 8192, max MT_STACK_COPY_MAX */
	__u32 live_max;                /* --live-max N entries of the live map, default 65536 */
	__u32 max_stacks; /* --max-stacks N distinct stacks kept per target, default 8192 */

	const char *theme; /* --theme NAME|PATH */
	bool no_config;    /* --no-config: ignore ~/.config/memtop/memtoprc */
	unsigned given;    /* enum mt_given bits: set on the command line, so
			    * they win over the settings file */
	bool ascii;        /* --ascii */
	bool no_color;     /* --no-color (NO_COLOR is read by the TUI) */

	const char *output;   /* --output FILE (pprof) */
	double output_every;  /* --output-every SECS; 0: only at exit */
	const char *folded;   /* --folded FILE */
	const char *push_url; /* --push URL */
	double push_every;    /* --push-every SECS, default 15 */
	const char *serve;    /* --serve ADDR (export/serve.h) */

	double max_overhead_pct;         /* --max-overhead PCT of one CPU per target */
	bool no_preload;                 /* --no-preload */
	bool no_hold;                    /* --no-hold: newcomers never held at their start */
	enum mt_inject_mode inject_mode; /* --inject, --no-inject, default auto */
	const char *cmd_log;             /* --cmd-log FILE: -- CMD's stdout and stderr */
	const char *record;              /* --record FILE (record/recorder.h) */
	__u64 record_max;                /* --record-max SIZE; 0: unbounded */
	const char *replay;              /* --replay FILE: no targets, the recording's data */
	bool daemon;                     /* --daemon: headless, detached, on a session socket */
	bool attach;                     /* memtop attach [ID|SOCKET]: a viewer of a session */
	const char *attach_to;           /* its argument; NULL: list the sessions */
	int verbose;                     /* -v, repeatable */
};

#endif /* MEMTOP_CONFIG_H */

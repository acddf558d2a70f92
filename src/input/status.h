/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * status.h - what the data path and its side channels report about
 * themselves (probe cost and back-off, cgroup memory figures, push
 * progress), refreshed by app.c before every tick and read by the front
 * ends and exports. Plain data, no functions: every stage may read it
 * without depending on the stage that fills it.
 */
#ifndef MEMTOP_STATUS_H
#define MEMTOP_STATUS_H

#include <stdbool.h>
#include <time.h>
#include <linux/types.h>

/* A cgroup's memory figures (probe/cgroup.c reads them). */
struct cgroup_mem {
	bool v1;       /* read from the v1 memory controller */
	__u64 current; /* bytes charged */
	__u64 max;     /* hard limit; 0: none */
	__u64 high;    /* throttling limit; 0: none */
	__u64 anon;    /* from memory.stat */
	__u64 file;
	__s64 oom;      /* memory.events oom; -1: not reported (v1) */
	__s64 oom_kill; /* memory.events oom_kill; -1: not reported */
};

/* The --serve server's counts (export/serve.c), since it started. */
struct serve_status {
	char address[80]; /* HOST:PORT it listens on */
	__u64 answered;   /* requests answered 200 */
	__u64 errors;     /* answered 4xx or 5xx (bad request, path, method, timeout) */
	__u64 refused;    /* connections turned away (503): all slots busy, or 4 from that client */
	__u64 open;       /* connections open now */
};

/* The Pyroscope sender's progress (export/push.c). */
struct push_status {
	__u64 sent;           /* profiles the endpoint accepted (2xx) */
	__u64 failed;         /* attempts that failed, retries included */
	__u64 dropped;        /* profiles given up on (rejected with a 4xx) */
	__u64 skipped;        /* due intervals skipped while a batch was pending */
	bool pending;         /* a batch is being sent or waiting for a retry */
	time_t last_ok_time;  /* wall clock of the last accepted profile; 0: none */
	char last_error[128]; /* cause of the last failed attempt; "" once an
			       * attempt succeeds again */
};

/* --cgroup: the pod's memory and where it is heading. */
struct mt_cgroup_status {
	bool on;          /* watching a cgroup */
	const char *path; /* its v2 directory */
	bool have_mem;    /* mem is valid (a memory controller was found) */
	struct cgroup_mem mem;
	double growth_bytes_per_s; /* least-squares slope of mem.current, last minute */
	double growth_r2;
	double time_to_max_s; /* at that slope; < 0 when not growing or no limit */
	int processes;        /* live watched processes */
};

/* What the data path reports about itself, refreshed before every tick. */
struct mt_status {
	const char *probe_mode;  /* "session", "uretprobe", "usdt" */
	double events_per_s;     /* ring-buffer records per second */
	double est_cpu_pct;      /* estimated cost to the targets, % of one CPU */
	double est_slowdown_pct; /* the slowdown the worst target suffers, %:
				    * probe time over its own work's time */
	/* est_slowdown_pct rests on a measure of that target: never shown
	 * otherwise (0 then). Its range: low to high (INFINITY: unbounded). */
	bool est_slowdown_measured;
	double est_slowdown_low_pct, est_slowdown_high_pct;
	double budget_pct;     /* --max-overhead */
	double trap_ns;        /* calibrated cost of one probe hit, on memtop */
	double cost_ns;        /* cost of one probe hit in the worst target */
	bool cost_measured;    /* cost_ns measured on it (else trap_ns) */
	double floor_pct;      /* the part of the slowdown free() and
				    * realloc() probes cost: the budget's floor */
	__u64 phase_rate;      /* sampling interval while the allocation
				    * probes are on: --rate * duty */
	char budget_note[256]; /* while the budget cannot be met: why, and
				    * the cheapest way out; "" otherwise */
	double probe_hits_per_s;
	bool backed_off;         /* overhead budget forced duty-cycling */
	bool budget_unreachable; /* free() probes alone exceed the budget */
	/* The worst in-process target's cost when it exceeds the budget: no
	 * probe to switch lowers it (a larger --rate would); 0: within it */
	double inprocess_over_pct;
	double duty;         /* fraction of time allocation probes are on, 1.0 normally */
	bool counters_exact; /* false once allocation probes were ever paused */
	bool all_exited;     /* every target has exited */
	struct mt_cgroup_status cgroup;
	bool push_on; /* --push */
	struct push_status push;
	bool serve_on; /* --serve */
	struct serve_status serve;
	char message[512];   /* last status-line message (export written, errors) */
	const char *cmd_log; /* -- CMD: the file its output goes to; NULL otherwise */
	double wall_s;       /* the wall clock at the last tick (unix seconds) */
	/* --replay, memtop attach: where the replay stands; NULL when live. */
	const struct mt_replay_pos *replay;
};

/* A replay's position (src/replay.c keeps it; the front ends show it and
 * may ask to move: MT_FE_SEEK with seek set). */
struct mt_replay_pos {
	long at;            /* the interval shown, 0 first */
	long first;         /* the oldest one held (a viewer forgets old segments) */
	long count;         /* intervals known so far */
	bool live;          /* memtop attach: new intervals keep coming */
	bool ended;         /* ... until the session closed the stream */
	bool playing;       /* moving on by itself (not paused, not at the end) */
	const char *source; /* the file or the session's socket */
};

#endif /* MEMTOP_STATUS_H */

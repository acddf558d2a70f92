/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * watch.h - the set of processes memtop watches, and their probes.
 *
 * A process is first prepared (checked, and the file to probe chosen:
 * glibc, or a file with otel_memory USDT probes), then attached. -p and
 * -- CMD prepare everything up front and any failure ends the run; with
 * --cgroup the set grows while running (processes forked or exec'd inside
 * the cgroup arrive from the BPF side) and a process that cannot be
 * probed is reported and skipped. Exits are noticed on refresh, and an
 * exited process's probes and cached state are released.
 */
#ifndef MEMTOP_WATCH_H
#define MEMTOP_WATCH_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <linux/types.h>

#include "util/strpool.h"
#include "probe/alloc_resolve.h"
#include "probe/allocators.h"
#include "probe/attach.h"
#include "probe/bpf_loader.h"
#include "probe/device_source.h"
#include "probe/go_runtime.h"
#include "probe/inject.h"
#include "probe/phase_share.h"
#include "probe/slowdown.h"
#include "probe/inject_cost.h"
#include "probe/hold.h"
#include "probe/source.h"
#include "config.h"
#include "input/target_facts.h"
#include "stacks/proc_cache.h"
#include "probe/target.h"
#include "stacks/unwind.h"

struct watch_env {
	const struct mt_config *cfg;
	struct mt_bpf *bpf;
	struct proc_cache *pc;
	struct unwinder *unw;    /* may be NULL */
	struct python_names *py; /* names CPython frames (stacks/python.h); may be NULL */
	double trap_ns;          /* calibrated cost of a probe hit */
	/* A process could not be watched (cgroup mode); may be NULL. */
	void (*warn)(void *ctx, const char *msg);
	void *warn_ctx;
	/* A watched process ended (called with warn_ctx): its wait status,
	 * -1 when unknown, and when it ended. The caller tells the model
	 * (an MT_IN_ENDED input); may be NULL. */
	void (*ended)(void *ctx, pid_t pid, int wstatus, __u64 at_ns);
	/* What memtop learnt about a watched process (input/target_facts.h),
	 * called with warn_ctx: the caller applies it to the model
	 * (an MT_IN_FACTS input); may be NULL. */
	void (*facts)(void *ctx, const struct mt_target_facts *f);
	/* A watched process exec'd: its live samples are gone (the caller
	 * drops them, model_drop_process); may be NULL. */
	void (*dropped)(void *ctx, pid_t pid);
	/* The budget the names interned on pid's behalf are charged to once
	 * it has a target (model_target_names), else NULL; may be NULL. */
	struct strpool_budget *(*names)(void *ctx, pid_t pid);
	/* memtop was asked to stop (a signal, called with warn_ctx): the
	 * refresh leaves out what only serves the next one (a rescan for
	 * new libraries, the sources' pumps) so that the exit is not kept
	 * waiting; may be NULL. */
	bool (*stop_asked)(void *ctx);
	/* Records of the sources memtop reads in user space (a JVM's agent,
	 * probe/jvm_source.h), for the caller's ingest_record(); NULL: those
	 * sources are not started. */
	void (*record)(void *ctx, const void *rec, size_t len);
	void *record_ctx;
};

struct inject_state;
struct mechanism;
/* A row of the source table (probe/source.h) on one process. */
struct source_slot {
	int phase;         /* enum in watch.c: unchecked, waiting, off, on */
	void *state;       /* the row's, while on */
	__u64 retry_ns;    /* waiting: the next try, ... */
	__u64 deadline_ns; /* ... and the last */
};

struct watched {
	pid_t pid;
	char comm[16];
	char lib[PATH_MAX]; /* the file probed: the allocator's, the one with
			     * otel_memory probes, or a Go executable */
	/* How its heap is seen: its row of the mechanism table
	 * (mechanism.h), once prepared; NULL before. */
	const struct mechanism *mech;
	bool probed; /* the row's probes are attached */
	/* The Go row's (mech_go.c): where its runtime's sampled path is. */
	struct go_target gt;
	struct go_probes *go_probes;
	__u64 go_rate_addr; /* as last given to the BPF side ... */
	bool go_rate_set;   /* ... if it was */
	/* its MemProfileRate was 0 and memtop set it (go_rate.h), put back
	 * when memtop lets the process go; tried: not again */
	struct go_rate_hold *go_rate_hold;
	bool go_rate_tried;
	bool launched;       /* started by memtop: reaped and stopped by it */
	bool reported;       /* attached once: env.facts made its target */
	bool runtime_named;  /* a runtime was reported for it */
	__u64 files_refused; /* its limits so far (proc_cache_take_limits) */
	__u64 maps_cut;
	bool joined;   /* new in the cgroup: said once when attached */
	bool held;     /* stopped at its loader's end until its probes are on (hold.h) */
	__u64 held_ns; /* ... since then, if it still was when they were */
	struct hold_parent held_parent; /* its parent, looked at again at the next refresh */
	int runtime_checks; /* a launched command: refreshes its runtime was looked for */
	bool gone;
	bool exited;          /* the exit was reported (watch_note_exit) */
	int wstatus;          /* ... with this wait status */
	__u64 exit_ns;        /* ... at this time */
	bool pending;         /* to be (re)attached: new in the cgroup, or exec'd */
	bool inject_at_start; /* -- CMD calling another allocator than glibc's: memtop's
			       * sampler goes in once its loader is done */
	__u64 pending_since_ns;
	struct mt_probe_set *probes; /* the uprobes, preloaded and in-process rows' */
	/* The in-process row's (mech_in_process.c): the sampler memtop put
	 * in it, or NULL, and its counts as last read. */
	struct inject_state *inj;
	struct mt_inject_counts inj_counts;
	/* A process new in a watched cgroup is handed over: counted by its
	 * allocator's uprobes from the moment memtop finds it, until the
	 * sampler counts every call (docs/inject.md, "The handover"). */
	bool hand_over;                         /* wanted (it joined, or exec'd, in the cgroup) */
	int handover;                           /* where it stands: enum in mech_in_process.c */
	struct mt_probe_set *uprobes;           /* the uprobes while the sampler takes over */
	__u32 adopt_serial;                     /* the round of blocks the sampler was given */
	size_t adopted;                         /* blocks given so far */
	__u64 handover_ns;                      /* when the uprobes were attached */
	bool handover_shown;                    /* a refresh has shown it on the uprobes */
	char uprobes_why[64];                   /* why it is not sampled in-process, when memtop
			       * could have done it ("" otherwise) */
	const struct allocator *alloc;          /* the allocator malloc binds to (allocators.h) */
	char alloc_prefix[MT_ALLOC_PREFIX_MAX]; /* its C-name prefix ("" or "je_") */
	/* a prefixed allocator the program calls besides it (je_malloc of a
	 * statically linked jemalloc), probed too; alloc NULL: none */
	struct alloc_target extra;
	struct slowdown cost;     /* what the probes cost it (slowdown.h) */
	struct phase_share share; /* what the budget's phases see of it (phase_share.h) */
	struct target_id id;      /* which process and program (0: not known) */
	/* The paths and names interned for it before it has a model target
	 * (preparing, attaching): handed to the target's budget then. */
	struct strpool_budget names;
	struct attach_info attached;         /* its probes, as said in the "attached" line */
	struct source_slot src[SOURCE_ROWS]; /* the source table's rows on it */
};

/* How w's allocations are seen: "in-process", "go-runtime", "preloaded"
 * or "uprobes" (docs/inject.md). */
const char *watch_mechanism(const struct watched *w);
/* The same in the words of the start-up line ("memtop's sampler,
 * in-process"; "glibc uprobes (not in-process: ...)"). */
void watch_said_how(const struct watched *w, char *buf, size_t len);

/* The probes' cost over a window, for the worst target. */
struct watch_cost {
	double slowdown_pct; /* what the target suffers */
	double floor_pct;    /* the part the probes that stay on cost */
	double cost_ns;      /* of one probe hit in that target */
	bool cost_measured;  /* cost_ns measured on it, not the calibration */
	__u64 span_ns;       /* the window the worst measure covers */
	/* slowdown_pct rests on a measure of the target (slowdown_est), and
	 * the range that measure leaves it */
	bool measured;
	double low_pct, high_pct;
};

struct watch_set {
	struct watch_env env;
	struct watched *v;
	int n;
	size_t cap;
	struct attach_info info; /* of the last attach */
	struct launched launch;  /* -- CMD held before exec */
	char cgroup_dir[PATH_MAX];
	int cgroup_fd;               /* --cgroup: the v2 directory, or -1 */
	bool keep_command;           /* -- CMD and its family outlive memtop (d) */
	double duty;                 /* the overhead budget's duty now (watch_set_duty) */
	struct inject_cost inj_cost; /* the injected sampler's cost per call, timed at the
				      * first injection (inject_cost.h) */
	bool inj_cost_tried;
	struct hold_guard hold; /* newcomers held at their start (hold.h) */
	bool holding;           /* newcomers are held now, under the guard */
	bool holds_over_said;   /* newcomers over the holds' budget said */
};

void watch_init(struct watch_set *ws, const struct watch_env *env);
/* Detach everything and end a command memtop launched, with the family
 * it followed (cmd_end.h). */
void watch_fini(struct watch_set *ws);
/* Leave a command memtop launched, and its family, running at
 * watch_fini() (their probes are removed all the same). Returns its pid,
 * or 0 when it no longer runs. */
pid_t watch_keep_command(struct watch_set *ws);

/* Prepare -p PID. 0, or -errno with one line in err. */
int watch_prepare_pid(struct watch_set *ws, pid_t pid, char *err, size_t errlen);
/* Launch -- CMD held before exec (with the in-process sampler unless
 * --no-preload). 0, or -errno with one line in err. */
int watch_prepare_command(struct watch_set *ws, char *err, size_t errlen);
/* Resolve --cgroup and prepare its processes. Processes that cannot be
 * watched are warned about and skipped. 0, or -errno with one line in err
 * (unknown or v1 cgroup, no process at all). */
int watch_prepare_cgroup(struct watch_set *ws, const char *spec, char *err, size_t errlen);

/* Attach every prepared process. 0, or -errno with one line in err;
 * nothing stays attached then. */
int watch_attach(struct watch_set *ws, char *err, size_t errlen);
/* Let a launched command exec. 0, or -errno with one line in err. */
int watch_release_command(struct watch_set *ws, char *err, size_t errlen);

/* A process appeared in the cgroup (MT_EV_PROC): whether it is to be
 * (re)attached (then pending). */
bool watch_on_proc(struct watch_set *ws, pid_t pid, __u32 what);
/* --cgroup: the processes of the cgroup (cgroup.procs, its children's
 * too) that no event announced, taken as new ones: a process moved in
 * while it runs (no fork or exec there), or one whose event a full ring
 * buffer dropped. Whether any was added (then pending). */
bool watch_rescan_cgroup(struct watch_set *ws);
/* Attach pending processes that are ready; give up on those that stayed
 * unprobeable too long. True while some remain pending. */
bool watch_retry_pending(struct watch_set *ws, __u64 now_ns);

/* Process pid exited with wait status wstatus at at_ns (exits.h); ignored
 * unless it is watched. Acted on at the next watch_refresh(). */
void watch_note_exit(struct watch_set *ws, pid_t pid, int wstatus, __u64 at_ns);

/* Read each live target's exact counters, RSS and liveness into the
 * model and release the exited ones, telling env.ended how each ended
 * (the wait status of a command memtop launched, else the one noted by
 * watch_note_exit, else a zombie's). Returns the number of live targets. */
int watch_refresh(struct watch_set *ws, __u64 now_ns);

/* Does the budget switch the probes that count pid's allocation calls
 * (uprobes)? Not for a process that samples itself (memtop's sampler in
 * it counts every call whatever the budget does), nor for one memtop
 * does not watch. */
bool watch_counts_switched(struct watch_set *ws, pid_t pid);

/* Read every live uprobe target's CPU time and counters: the end of a
 * step in which the allocation probes were in state (slowdown.h). Called
 * before and after every switch of the probes and on the budget's clock. */
void watch_measure(struct watch_set *ws, __u64 now_ns, enum slowdown_state state);

/* The largest slowdown_own_uncertainty() of the measured targets: how
 * far the start-up measure still is from a sharp cost (slowdown.h). */
double watch_own_uncertainty(const struct watch_set *ws);

/* The overhead budget's duty from now on (1 until called): the steps
 * watch_measure() ends after this are measured at it (phase_share.h),
 * and each target's share ratio goes to its model target (phase_seen). */
void watch_set_duty(struct watch_set *ws, double duty);

/* The worst target's cost over the steps since since_ns (at most max_ns
 * of them); also stored per target in the model (mt_target). With
 * switched_only, only of the targets whose allocation probes the budget
 * switches (not one that samples itself: the budget cannot lower what its
 * sampler costs, and must not pause for it). 0, or -EAGAIN: no such target
 * used CPU time in the window. */
int watch_overhead(struct watch_set *ws, __u64 since_ns, __u64 max_ns, bool switched_only,
		   struct watch_cost *out);

/* Allocation probes of every uprobe-mode target on or off (budget). */
void watch_set_allocs(struct watch_set *ws, bool on);

/* The budget has paused the allocation probes (at a duty below 1): each
 * target whose probes it switches missed calls, and its counts are not
 * exact, told to the model (env.facts). A target that samples itself
 * (memtop's sampler in it, a Go runtime) counts every call whatever the
 * budget does, and keeps its exact counts. */
void watch_budget_paused(struct watch_set *ws);

/* free() and realloc() of every uprobe-mode target off or back on: only
 * for the start-up cost measure, with sampling off (count_only). A target
 * whose free() cannot be probed again loses all its probes and is
 * attached again later, as after an exec. */
void watch_set_frees(struct watch_set *ws, bool on);

/* Run the source table's rows (probe/source.h) on every watched process:
 * what they streamed into env.record, their facts to env.facts, and the
 * rows that said "not yet" tried again. Called on every pass of the main
 * loop; never waits (but for a row's start, bounded: a JVM's attach). */
void watch_pump_sources(struct watch_set *ws, __u64 now_ns);

/* The first live target, for cgroup memory on a hybrid layout; -1 if none. */
pid_t watch_first_alive(const struct watch_set *ws);

#endif /* MEMTOP_WATCH_H */

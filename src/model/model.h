/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * model.h - what memtop knows: targets, interned stacks, call sites and the
 * live sampled allocations behind their in-use estimates.
 *
 * Everything it holds enters by one door, model_apply(): ingest.c hands
 * it decoded, symbolized samples and frees, app.c the data path's
 * reports about each target, its deaths, the drops and one tick per
 * interval, the recorder is told each input and replay feeds them back
 * the same way. Views (text, JSON, TUI, pprof) read the public fields of
 * mt_target and mt_site and never write them. Single threaded:
 * everything runs on the main loop.
 *
 * Estimates are unsampled: a sample of size s drawn at mean rate R stands
 * for w = 1 / (1 - exp(-s/R)) allocations (sampling.h), so a site's
 * alloc_bytes is the sum of w*s over its samples.
 */
#ifndef MEMTOP_MODEL_H
#define MEMTOP_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <linux/types.h>

#include "config.h"
#include "memtop/abi.h"
#include "input/target_facts.h"
#include "stacks/frame.h"
#include "model/device_tier.h"
#include "model/stats.h"
#include "util/strpool.h"

#define MT_SIZE_BUCKETS 48 /* log2 buckets as size_hist_bucket() (stats.h): (2^(i-1), 2^i] */

/* A deduplicated stack, innermost frame first. Owned by the model. */
struct mt_stack {
	__u32 id;
	__u32 nframes;
	__u32 site_frame;      /* index of the call-site frame (first non-allocator) */
	bool truncated;        /* the unwinder could not reach the outermost frame */
	bool mmap;             /* anonymous mappings (the mmap source), not heap blocks:
			   * its sites are its own and stay out of the heap totals */
	struct mt_dev_tag dev; /* the device tier's allocations (docs/device-memory.md):
				* sites of their own, out of the heap totals */
	struct mt_frame frames[];
};

struct mt_site {
	__u32 id;                     /* stable while the grouping is unchanged */
	const struct mt_stack *stack; /* first stack seen for this site */
	const struct mt_frame *frame; /* the call-site frame within stack */
	/* Estimates since attach (unsampled, see the header comment). */
	double alloc_bytes;
	double alloc_objects;
	double inuse_bytes;
	double inuse_objects;
	double freed_bytes; /* estimated bytes of this site later freed */
	__u64 samples;      /* sampled allocations seen */
	__u64 live_samples; /* of those, not freed yet */
	__u64 truncated_samples;
	__u64 untracked_samples; /* samples no in-use tracking could take (the
				  * kernel's or memtop's live map was full): this
				  * site's in-use is low by about as many samples */
	__u64 oldest_live_ns;    /* CLOCK_MONOTONIC of the oldest live sample; 0: none */
	/* Over the last interval (MT_IN_TICK). */
	double alloc_bytes_per_s;
	double alloc_objects_per_s;
	/* Sampled allocations per size_hist_bucket() bucket (counts of
	 * samples): bucket i holds sizes in (2^(i-1), 2^i]. */
	__u64 size_hist[MT_SIZE_BUCKETS];
	/* The allocations those samples stand for, per bucket: each sample's
	 * own weight (its size, the rate, the duty, a process's own sampler),
	 * as alloc_objects sums them. What every view of sizes shows. */
	double size_objects[MT_SIZE_BUCKETS];
	/* History, slopes and leak score; updated at every tick (MT_IN_TICK). */
	struct mt_site_stats stats;
	/* Every process this site has data from has ended (MT_IN_ENDED):
	 * its figures, history and score stay as they were at the last of
	 * those deaths, CLOCK_MONOTONIC ended_ns; 0 while one is alive. */
	__u64 ended_ns;
	/* private to model.c */
	double prev_alloc_bytes, prev_alloc_objects;
	double frozen_s; /* the tick that recorded its last point */
};

/* How a target ended, as an MT_IN_ENDED input said. */
enum mt_end_kind {
	MT_END_NONE = 0, /* alive */
	MT_END_EXIT,     /* exited: code */
	MT_END_SIGNAL,   /* killed by signal */
	MT_END_OOM,      /* killed by the OOM killer (SIGKILL while its cgroup's
			  * oom_kill count rose) */
	MT_END_UNKNOWN,  /* gone, its status unknown to memtop */
};

struct mt_target_end {
	enum mt_end_kind kind;
	int code;         /* MT_END_EXIT: the exit status */
	int signal;       /* MT_END_SIGNAL, MT_END_OOM: the signal number */
	bool core;        /* it dumped core */
	double at_wall_s; /* the death on the wall clock (unix seconds), for display */
	/* The memory cgroup it lived in, as last read before the death. */
	bool have_cgroup;
	__u64 cg_current;  /* memory.current (bytes) */
	__u64 cg_max;      /* memory.max; 0: none */
	__s64 cg_oom_kill; /* memory.events oom_kill after the death; -1: unknown */
};

/* What memtop declined to keep for one target, past its per-target
 * bounds (docs/reliability.md), since it was first watched. Counted, and
 * said in -b, the TUI and the JSON. */
struct mt_target_limits {
	__u64 stacks_folded; /* samples of stacks new past max_stacks: counted
			      * in the target's MT_STACKS_OVERFLOW site */
	__u64 files_refused; /* mappings whose file was not opened: the target
			      * already had PROC_CACHE_MAX_FILE_MAPS open */
	__u64 maps_cut;      /* reads of its /proc/PID/maps cut short (over
			      * PROC_MAPS_MAX_BYTES, PROC_MAPS_MAX_ENTRIES or
			      * PROC_MAPS_MAX_MS) */
	__u64 names_refused; /* new paths and names past the text it may add to
			      * the string pool (STRPOOL_OWNER_MAX_BYTES):
			      * shown as STRPOOL_OVERFLOW */
};

/* The function name of the site a target's stacks past max_stacks go to. */
#define MT_STACKS_OVERFLOW "[too many stacks]"
/* The one frame of a sample that came with none (a runtime's sample taken
 * outside any function of its own: V8's root). */
#define MT_NO_FRAME "[no frame]"

struct mt_target {
	pid_t pid;
	char comm[16];
	char allocator[16]; /* what is probed: "glibc", "jemalloc", "tcmalloc", "usdt" */
	/* How its allocations are seen (docs/inject.md): "in-process" (the
	 * sampler memtop loaded into it), "preloaded" (a sampler it runs
	 * itself), "go-runtime", "uprobes"; and with uprobes, why not
	 * in-process ("static binary"), or "" when it was not memtop's to
	 * choose (--no-inject, -- CMD --no-preload). */
	char mechanism[48];     /* mechanism_own, then "+" and named_by if any */
	char mechanism_own[16]; /* as the data path reported it */
	char mechanism_why[64];
	/* A managed runtime whose heap is its own (probe/runtime.h), or "";
	 * the strings are static. */
	char runtime[16];
	const char *runtime_heap;
	const char *runtime_tool;
	/* A Go process watched through its runtime's sampled path (docs/go.md):
	 * its Go version ("" otherwise) and runtime.MemProfileRate as last
	 * read (-1: unknown, e.g. a stripped binary; 0: the runtime samples
	 * nothing, so no samples will come). Set by the caller. */
	char go_version[32];
	__s64 go_rate;
	bool go_rate_by_memtop; /* go_rate is memtop's: the process had 0 */
	/* How far its GC lets the heap grow past the live part (1 + GOGC/100,
	 * from its environment at exec); 0: GOGC=off or unknown. */
	double go_heap_goal;
	/* A JVM's Java heap (docs/java.md): "jvmti" while memtop's agent
	 * streams its samples, else ""; java_note says how ("agent loaded",
	 * "agent reused") or why not; the agent's counts this session. Set by
	 * the caller. */
	char java[8];
	char java_note[256];
	__u64 java_samples;
	__u64 java_dropped;       /* lost in the agent: its queue was full */
	double java_slowdown_pct; /* what the agent costs it (jvm_source.h) */
	bool alive;
	__u64 rss_bytes;
	__u64 start_ns;           /* CLOCK_MONOTONIC when memtop began watching */
	__u64 exit_ns;            /* the moment of its death; 0 while alive */
	struct mt_target_end end; /* how it ended; kind MT_END_NONE while alive */
	/* Exact, every call counted in the kernel (summed over CPUs), unless
	 * counters_exact is false: the process samples itself (USDT) or the
	 * overhead budget paused the allocation probes. */
	struct mt_proc_counters counters;
	bool counters_exact;
	/* Its runtime names its heap's objects (MT_EV_NAMED: a Node.js
	 * process's V8 heap, docs/node.md): the runtime's own page mappings,
	 * which hold those objects, are not taken in again as mmap samples
	 * (set by the data path; pages_named counts them). */
	bool heap_named;
	char named_by[16]; /* the mechanism that names them ("v8-sampling") */
	__u64 pages_named;
	/* Over the last interval (MT_IN_TICK), from the exact counters; for a
	 * target memtop counts nothing of (the Go runtime's sampling, a
	 * sampler the process runs itself), estimated from its samples. */
	double alloc_calls_per_s;
	double alloc_bytes_per_s;
	double probe_hits_per_s;
	/* The rates above are exact: the allocation probes were on for the
	 * whole interval (set by the caller, like counters_exact). When they
	 * were not, rates_off_share is the share of the interval they were
	 * off, and the counted rates are scaled by what they saw of it (the
	 * rest, times phase_seen); the last estimate stays for an interval
	 * they were off throughout. 0: none off, or not known. */
	bool rates_exact;
	double rates_off_share;
	/* What the probes cost it: the slowdown it suffers, % (set by the
	 * overhead measure, probe/slowdown.h). Not to be shown unless
	 * slowdown_measured (until then the calibration's guess), and known
	 * only to the range [slowdown_low_pct, slowdown_high_pct] (high may
	 * be INFINITY). */
	double slowdown_pct;
	bool slowdown_measured;
	double slowdown_low_pct, slowdown_high_pct;
	/* Under the budget's duty cycle, the share of its allocations the
	 * probes saw over the share the duty promised (probe/phase_share.h):
	 * a sample drawn at duty d stood for 1 / (d * phase_seen) of them.
	 * Set by the overhead measure; 0 or 1: as the duty says. */
	double phase_seen;
	/* Estimated from samples. */
	double inuse_bytes; /* the heap: neither mappings nor device memory */
	double inuse_objects;
	double device_inuse_bytes; /* the device tier, every device (exact: weight 1) */
	double sampled_bytes;      /* allocated, all of its samples' estimates */
	double sampled_objects;
	/* History of rss and in-use for the target (stats.h). */
	struct mt_target_stats stats;
	__u32 nstacks; /* distinct stacks it has samples in */
	struct mt_target_limits limits;
	/* The paths and names interned for it (charged by ingest while it
	 * names the target's samples; limits.names_refused follows it). */
	struct strpool_budget names;
	/* private to model.c */
	struct mt_proc_counters prev_counters;
	double prev_sampled_bytes, prev_sampled_objects;
	/* Its counters were reported (counted), and a tick has taken them as
	 * the base of its rates (rate_based): the first report counts from
	 * start_ns, which may be before the last tick (tick_targets). */
	bool counted, rate_based;
	bool final_done; /* its last interval after the death was closed */
};

/* Global fault counters, cumulative. */
struct mt_drops {
	__u64 events_lost;   /* ring buffer full: samples or frees lost */
	__u64 live_map_full; /* samples not tracked for in-use */
	__u64 pending_full;  /* sampled calls whose return was lost */
	__u64 unknown_frees; /* frees of addresses the model did not know */
	__u64 after_end;     /* records of a process that had already ended (ignored) */
};

/* One sampled allocation as ingest hands it over. */
struct mt_sample_in {
	pid_t pid;
	__u64 ts_ns;
	__u64 addr;
	__u64 size;
	__u64 weight_bytes;            /* bytes it stands for, when the process sampled it;
			     * 0: memtop sampled it at rate and duty */
	__u64 rate;                    /* mean bytes between samples it was drawn at; 0: the
			     * model's rate */
	double duty;                   /* share of time the allocation probes were on;
			     * 0: always (1) */
	bool untracked;                /* no free will ever be reported for it */
	bool truncated;                /* stack incomplete */
	bool mmap;                     /* an anonymous mapping (MT_FN_MMAP), weight 1 */
	struct mt_dev_tag dev;         /* a device allocation (MT_FN_DEVICE), weight 1;
					* all zero: the host tier */
	const struct mt_frame *frames; /* innermost first, copied by the model */
	__u32 nframes;
};

struct mt_model_opts {
	__u64 rate; /* mean sampling interval in bytes (1: every call) */
	enum mt_group group;
	const char *skip_regex; /* extra allocator frames to skip; NULL: none */
	__u32 max_stacks;       /* distinct stacks kept per target; 0: MT_MAX_STACKS_DEFAULT.
				 * A sample of a target that has them all, in a stack it
				 * has not used yet, goes to its MT_STACKS_OVERFLOW site
				 * (limits.stacks_folded) */
};

#define MT_MAX_STACKS_DEFAULT 8192

/* NULL with errno set on failure (EINVAL for a bad skip_regex). */
struct mt_model *model_new(const struct mt_model_opts *opts);
void model_free(struct mt_model *m);

enum mt_group model_group(const struct mt_model *m);
__u64 model_rate(const struct mt_model *m);

/* ---- the one door: every input the model takes ---------------------------- */

enum mt_input_kind {
	/* alloc: a sampled allocation. -ENOMEM: dropped and counted. A
	 * sample without a frame is counted under one frame named
	 * MT_NO_FRAME. */
	MT_IN_ALLOC = 1,
	/* pid, addr, ts_ns: a free of a sampled address; one the model does
	 * not know is counted in drops.unknown_frees and otherwise ignored */
	MT_IN_FREE,
	/* facts: what a data source reports about a target
	 * (input/target_facts.h). MT_FACT_WATCHED makes the target (or a new
	 * process reusing an ended one's pid), alive and watched from
	 * watched_ns (0: the last tick); without it only an existing target
	 * takes the report (-ENOENT otherwise). The groups not in f->set
	 * stay as they were. */
	MT_IN_FACTS,
	/* pid, end, ts_ns: the target died at ts_ns (0: the last tick), as
	 * end says. From the next tick on its figures, and those of every
	 * site whose processes have all ended, stay as they were then, and
	 * its later records are ignored (drops.after_end). Its live samples
	 * stay: what it held when it died. The first report of a death
	 * stands; -ENOENT for an unknown pid. */
	MT_IN_ENDED,
	/* pid: the process exec'd. Its live samples no longer count as in
	 * use, and what was known of the old program's runtime goes too (a
	 * JVM's Java heap, a runtime that named its heap, a Go runtime, the
	 * runtime memtop is blind to) until the new program reports its
	 * own. */
	MT_IN_DROP,
	/* drops: the loss counters, totals. The data path's three
	 * (events_lost, live_map_full, pending_full) are taken as they are;
	 * the model's own two (unknown_frees, after_end) only where they are
	 * ahead of its count (a recording's new segment carries them over),
	 * so the data path passes 0 for them. */
	MT_IN_DROPS,
	/* group: regroup every site. Each site's past is rebuilt from the
	 * histories of the stacks it is made of (kept whatever the
	 * grouping), so rates, slopes and scores carry on; a site whose
	 * processes all ended stays as it was at their death. */
	MT_IN_GROUP,
	/* ts_ns: close an interval ending then (CLOCK_MONOTONIC): per-second
	 * rates, histories, slopes and leak scores of every site and
	 * target */
	MT_IN_TICK,
};

/* One input; only the fields its kind names are read. */
struct mt_input {
	enum mt_input_kind kind;
	pid_t pid;
	__u64 addr;
	__u64 ts_ns;
	enum mt_group group;
	const struct mt_sample_in *alloc;
	const struct mt_target_facts *facts;
	const struct mt_target_end *end;
	const struct mt_drops *drops;
};

/* The one way anything enters the model: the observer (recorder) is
 * told the input first, then it is applied. 0 or -errno, as each kind
 * says. */
int model_apply(struct mt_model *m, const struct mt_input *in);

/* Inputs spelled in one expression: model_apply(m, MT_INPUT_TICK(now)). */
#define MT_INPUT_ALLOC(s) (&(const struct mt_input){ .kind = MT_IN_ALLOC, .alloc = (s) })
#define MT_INPUT_FREE(p, a, t) \
	(&(const struct mt_input){ .kind = MT_IN_FREE, .pid = (p), .addr = (a), .ts_ns = (t) })
#define MT_INPUT_FACTS(f) (&(const struct mt_input){ .kind = MT_IN_FACTS, .facts = (f) })
#define MT_INPUT_ENDED(p, e, t) \
	(&(const struct mt_input){ .kind = MT_IN_ENDED, .pid = (p), .end = (e), .ts_ns = (t) })
#define MT_INPUT_DROP(p) (&(const struct mt_input){ .kind = MT_IN_DROP, .pid = (p) })
#define MT_INPUT_DROPS(d) (&(const struct mt_input){ .kind = MT_IN_DROPS, .drops = (d) })
#define MT_INPUT_GROUP(g) (&(const struct mt_input){ .kind = MT_IN_GROUP, .group = (g) })
#define MT_INPUT_TICK(t) (&(const struct mt_input){ .kind = MT_IN_TICK, .ts_ns = (t) })
/* A target watched from now (the last tick), nothing else known yet. */
#define MT_INPUT_WATCHED(p) \
	MT_INPUT_FACTS((&(const struct mt_target_facts){ .pid = (p), .set = MT_FACT_WATCHED }))

/* "exited with code 3", "killed by SIGSEGV (core dumped)", "OOM-killed
 * (cgroup 512.0 MiB of 512.0 MiB, oom_kill 1)", "exited" into buf. */
void model_end_describe(const struct mt_target_end *e, char *buf, size_t len);

/* Every fact the model holds about a target, as one report (every group
 * but MT_FACT_WATCHED set): what applied to a new model makes the same
 * target (a recording's new segment opens with it). */
void model_target_facts(const struct mt_target *t, struct mt_target_facts *f);

/* The budget the names interned on pid's behalf are charged to
 * (util/strpool.h), or NULL while it has no target. */
struct strpool_budget *model_target_names(struct mt_model *m, pid_t pid);

/* The target for pid, or NULL. Read-only: what it holds enters by
 * model_apply(). */
const struct mt_target *model_target(const struct mt_model *m, pid_t pid);
size_t model_target_count(const struct mt_model *m);
const struct mt_target *model_target_at(const struct mt_model *m, size_t i);

size_t model_site_count(const struct mt_model *m);
struct mt_site *model_site_at(const struct mt_model *m, size_t i);

const struct mt_drops *model_drops(const struct mt_model *m);

/* CLOCK_MONOTONIC of the last tick and the length of its interval. */
__u64 model_now(const struct mt_model *m);
double model_interval_s(const struct mt_model *m);

/* Sites sorted by key, best first, into out (at most max). Returns count. */
enum mt_sort {
	MT_SORT_INUSE = 0,
	MT_SORT_ALLOC_RATE,
	MT_SORT_OBJ_RATE,
	MT_SORT_GROWTH,
	MT_SORT_LEAK,
	MT_SORT_AGE,
	MT_SORT_NAME,
	MT_SORT_COUNT,
};
size_t model_sites_sorted(const struct mt_model *m, enum mt_sort key, struct mt_site **out,
			  size_t max);
/* The same, of the sites whose tier the filter tiers (enum mt_tiers) shows. */
size_t model_sites_sorted_tier(const struct mt_model *m, enum mt_sort key, unsigned int tiers,
			       struct mt_site **out, size_t max);

/* Per (stack, process) aggregates, for exports and the flame view, which
 * need whole stacks rather than sites. Estimates as in mt_site. */
struct mt_stack_agg {
	const struct mt_stack *stack;
	pid_t pid;
	double alloc_bytes;
	double alloc_objects;
	double inuse_bytes;
	double inuse_objects;
};
size_t model_stack_count(const struct mt_model *m);
const struct mt_stack_agg *model_stack_at(const struct mt_model *m, size_t i);
/* The site aggregate i belongs to under the current grouping. */
const struct mt_site *model_stack_site(const struct mt_model *m, size_t i);

/* Inline-capacity advice for a site: the smallest power-of-two buffer that
 * would hold at least frac of its allocations (estimated objects per size
 * bucket), and in *absorbed the share it would hold. 0 when none applies
 * (no samples, or above MT_INLINE_MAX). */
__u64 model_site_inline_capacity(const struct mt_site *s, double frac, double *absorbed);

/* A site's allocation rate in objects/s over the same window as its
 * smoothed byte rate (stats.rate_bytes_per_s), at its mix of sizes. */
double model_site_obj_rate(const struct mt_site *s);

/* Who is told of every input the model takes (the recorder,
 * record/recorder.h), before it is applied: what model_apply() is given,
 * except that a sample without a frame already carries its MT_NO_FRAME
 * frame, and a death already reported or a regrouping to the grouping in
 * force (which change nothing) are not told. */
struct mt_model_observer {
	void *ctx;
	void (*input)(void *ctx, const struct mt_input *in);
};
/* o is copied; NULL stops telling. */
void model_set_observer(struct mt_model *m, const struct mt_model_observer *o);

/* One live sample, as model_live_each() shows it. */
struct mt_live_view {
	pid_t pid;
	__u64 addr;
	__u64 size;
	double weight; /* allocations it stands for */
	__u64 ts_ns;
	const struct mt_stack *stack;
};
/* Call fn for every live sample (in no particular order). */
void model_live_each(const struct mt_model *m, void (*fn)(void *ctx, const struct mt_live_view *l),
		     void *ctx);

/* Sum of estimated in-use bytes over all heap sites (not mmap, not device). */
double model_inuse_bytes(const struct mt_model *m);

/* One device's memory held by the watched processes that are alive
 * (an ended process's device memory went with it), as of the last tick. */
struct mt_device_total {
	__u8 api;   /* enum mt_dev_api */
	__u8 index; /* as mt_dev_tag.index */
	double inuse_bytes;
	double growth_bytes_per_s; /* least-squares slope of inuse over the last
				    * MT_DEVICE_GROWTH_WINDOW_S; 0 until 3 points */
	struct mt_history inuse;   /* one point per tick */
};
#define MT_DEVICE_GROWTH_WINDOW_S 60.0
#define MT_DEVICES_MAX 32
size_t model_device_count(const struct mt_model *m);
const struct mt_device_total *model_device_at(const struct mt_model *m, size_t i);

#endif /* MEMTOP_MODEL_H */

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * target_facts.h - what a data source reports about a process it watches:
 * plain data, no functions. probe/ fills one and hands it to its caller,
 * which applies it to the model (model_apply(), MT_IN_FACTS: the one way a
 * target's facts enter it); `set` says which groups of fields the report
 * carries, and the model keeps the others as they were.
 */
#ifndef MEMTOP_INPUT_TARGET_FACTS_H
#define MEMTOP_INPUT_TARGET_FACTS_H

#include <stdbool.h>
#include <sys/types.h>
#include <linux/types.h>

#include "memtop/abi.h"

/* The groups of fields a report carries (mt_target_facts.set). */
enum mt_fact_set {
	MT_FACT_WATCHED = 1u << 0,   /* the watch (re)starts: the target is made if
				      * it does not exist, alive from now */
	MT_FACT_COMM = 1u << 1,      /* comm */
	MT_FACT_HOW = 1u << 2,       /* allocator, mechanism, mechanism_why */
	MT_FACT_RUNTIME = 1u << 3,   /* runtime, runtime_heap, runtime_tool */
	MT_FACT_GO = 1u << 4,        /* go_version, go_rate, go_rate_by_memtop, go_heap_goal */
	MT_FACT_RSS = 1u << 5,       /* rss_bytes */
	MT_FACT_COUNTERS = 1u << 6,  /* counters */
	MT_FACT_EXACT = 1u << 7,     /* counters_exact */
	MT_FACT_RATES = 1u << 8,     /* rates_exact, rates_off_share */
	MT_FACT_SLOWDOWN = 1u << 9,  /* slowdown_pct, its measure and range */
	MT_FACT_PHASE = 1u << 10,    /* phase_seen */
	MT_FACT_FILE_LIM = 1u << 11, /* files_refused, maps_cut */
	MT_FACT_JAVA = 1u << 12,     /* java, java_note and the agent's counts */
	MT_FACT_NAMED = 1u << 13,    /* heap_named, named_by */
	MT_FACT_INGEST = 1u << 14,   /* names_refused, pages_named (the model's
				      * ingest reports them) */
};

/* GOGC is an int32: the largest heap goal it can ask for. */
#define GO_HEAP_GOAL_MAX (1 + 2147483647 / 100.0)

struct mt_target_facts {
	pid_t pid;
	__u32 set;        /* enum mt_fact_set */
	__u64 watched_ns; /* MT_FACT_WATCHED: since when (CLOCK_MONOTONIC) */
	char comm[16];
	char allocator[16];
	char mechanism[16]; /* the mechanism of its native heap (MT_FACT_HOW) */
	char mechanism_why[64];
	/* a managed runtime whose heap is its own, or ""; the strings are
	 * static */
	char runtime[16];
	const char *runtime_heap;
	const char *runtime_tool;
	char go_version[32];
	__s64 go_rate;          /* runtime.MemProfileRate: -1 unknown */
	bool go_rate_by_memtop; /* go_rate is memtop's: the process had 0 */
	double go_heap_goal;    /* 1 + GOGC/100 at its start, at most GO_HEAP_GOAL_MAX;
				 * 0: GOGC=off, or unknown */
	__u64 rss_bytes;
	struct mt_proc_counters counters;
	bool counters_exact;
	bool rates_exact;
	double rates_off_share; /* while not rates_exact: the share of the interval
				 * the allocation probes were off (0: none, or unknown) */
	double slowdown_pct;
	bool slowdown_measured; /* on the target itself; else the calibration's guess */
	double slowdown_low_pct, slowdown_high_pct; /* the range it is known to */
	double phase_seen;
	__u64 files_refused; /* totals so far */
	__u64 maps_cut;
	/* A JVM's Java heap (docs/java.md): "jvmti" while memtop's agent
	 * streams its samples, else ""; java_note says how ("agent loaded",
	 * "agent reused") or why not; the agent's counts this session. */
	char java[8];
	char java_note[256];
	__u64 java_samples;
	__u64 java_dropped;       /* lost in the agent: its queue was full */
	double java_slowdown_pct; /* what the agent costs it (jvm_source.h) */
	/* Its runtime names its heap's objects itself (a Node.js process's V8
	 * heap, docs/node.md), through named_by ("v8-sampling"): shown after
	 * its mechanism ("in-process+v8-sampling"), and the runtime's own
	 * page mappings are not taken in again as mmap samples. */
	bool heap_named;
	char named_by[16];
	/* What the model's ingest set aside for it (MT_FACT_INGEST): names
	 * past its share of the string pool, and mappings of its runtime's
	 * own heap pages not taken in as samples. */
	__u64 names_refused;
	__u64 pages_named;
};

#endif /* MEMTOP_INPUT_TARGET_FACTS_H */

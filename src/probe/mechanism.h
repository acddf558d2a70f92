/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * mechanism.h - the table of ways a watched process's native heap is
 * seen (docs/inject.md, "The budget chooses"; docs/architecture.md,
 * "Adding a way to see the native heap"): the Go runtime's own sampling, a sampler the process runs
 * itself (preloaded), memtop's sampler put into it (in-process), and its
 * allocator's uprobes. Each is a row with the same operations; watch.c
 * asks the rows in order which one a process is, and from then on calls
 * that row's operations without knowing which it is.
 *
 * The rows beside the heap (CPython's frames, a JVM's agent, V8's
 * sampler, device memory) are the other table, source.h: any number of
 * them run on one process, while exactly one of these does.
 *
 * What a row keeps on a process lives in struct watched (watch.h): the
 * Go row's target and rate hold, the in-process row's injection.
 */
#ifndef MEMTOP_PROBE_MECHANISM_H
#define MEMTOP_PROBE_MECHANISM_H

#include <stdbool.h>
#include <limits.h>
#include <stddef.h>
#include <linux/types.h>

#include "probe/alloc_resolve.h"
#include "input/target_facts.h"

struct watch_set;
struct watched;

/* One process being chosen for: what the rows asked so far found. The
 * allocator malloc binds to is resolved once, by the first row that asks
 * (mechanism_serving). */
struct mech_ask {
	bool resolved;
	int resolve_e; /* 0, or -errno with resolve_err */
	struct alloc_target serving;
	char resolve_err[512];
};

/* A command memtop launches (-- CMD), chosen for before it runs: what the
 * rows asked so far found, and what its launch needs. */
struct mech_launch {
	char exe[PATH_MAX]; /* its executable; "" when not found (the launch says why) */
	/* The allocator it will call (mechanism_launch_allocator), once known: */
	bool allocator_known;
	char foreign[PATH_MAX];    /* the library its malloc binds to, "" for glibc's */
	struct alloc_target extra; /* a prefixed allocator beside it (je_malloc) */
	/* For the launch, set by the row chosen: */
	const char *preload; /* the sampler preloaded into it, or NULL */
	bool static_ok;      /* a static executable is fine (its runtime samples itself) */
	char sampler[PATH_MAX];
};

struct mechanism {
	const char *name; /* as the views and the JSON's "mechanism" say it */
	/* As the start-up line says it; NULL: "<allocator> uprobes" and why
	 * not in-process (watch_said_how). */
	const char *said;
	/* The process samples its own allocations: only sampled calls reach
	 * memtop's probes, so there are no allocation probes to duty-cycle. */
	bool samples_itself;
	/* memtop counts every allocation call (its probes, or its sampler's
	 * counters), so rates are exact while it is attached. */
	bool counts_exact;
	/* It watches a managed runtime's own heap (Go): no runtime is named
	 * as holding memory memtop does not see. */
	bool watches_runtime;
	/* Its sampler wraps CPython's object allocator for as long as a
	 * tool is attached (docs/python.md): a CPython process is not said
	 * to hold memory memtop does not see. */
	bool sees_pymalloc;
	/* Is w this row's? 0: it is, and w is prepared for it; 1: not this
	 * row's, the next one is asked; -errno with one line in err: it is,
	 * and it is refused (the process is not watched). */
	int (*choose)(struct watch_set *ws, struct watched *w, struct mech_ask *ask, char *err,
		      size_t errlen);
	/* A command before it runs (-- CMD): as choose, with what its launch
	 * needs into l. */
	int (*choose_command)(struct watch_set *ws, struct watched *w, struct mech_launch *l,
			      char *err, size_t errlen);
	/* The command chosen for has been launched as l says (w->pid is
	 * its): w prepared for attach (or left pending). */
	void (*launched)(struct watch_set *ws, struct watched *w, const struct mech_launch *l);
	/* Its probes on the prepared w: 0, or -errno with one line in err
	 * (nothing of it left attached). */
	int (*attach)(struct watch_set *ws, struct watched *w, char *err, size_t errlen);
	/* At attach: how w is watched, into f (its allocator, why not
	 * in-process, what of its runtime it sees); f comes with the
	 * mechanism's defaults. May be NULL. */
	void (*describe)(struct watch_set *ws, struct watched *w, struct mt_target_facts *f);
	/* Its exact counters, at every refresh, into f (the BPF side's are
	 * there already). May be NULL. */
	void (*counts)(struct watch_set *ws, struct watched *w, struct mt_target_facts *f);
	/* What it knows of a live w at attach and every refresh, into f.
	 * May be NULL. */
	void (*facts)(struct watch_set *ws, struct watched *w, struct mt_target_facts *f);
	/* Upkeep of a live w at every refresh, unless memtop is stopping.
	 * May be NULL. */
	void (*tend)(struct watch_set *ws, struct watched *w);
	/* What its own path cost the calls counted so far, ns (added to the
	 * slowdown's reading); samples: the BPF side's. May be NULL: none
	 * memtop can tell apart. */
	__u64 (*self_ns)(struct watch_set *ws, struct watched *w, __u64 samples);
	/* Let w go: its probes off, the process as it was before (what the
	 * row documents otherwise). Safe on a row attached in part. */
	void (*release)(struct watch_set *ws, struct watched *w);
};

/* The rows, in the order they are asked. */
extern const struct mechanism mechanism_go, mechanism_preloaded, mechanism_in_process,
	mechanism_uprobes;

/* Where `make install` puts the files memtop ships (the Makefile sets
 * it from PREFIX). */
#ifndef MEMTOP_LIBDIR
#define MEMTOP_LIBDIR "/usr/local/lib/memtop"
#endif
/* The sampler memtop puts into a process, beside memtop's binary or in
 * MEMTOP_LIBDIR (watch_find_lib). */
#define MECH_INJECT_SO "libmemtop-inject.so"
/* The sampler memtop preloads into a command it launches. */
#define MECH_SAMPLER_SO "libmemtop-sampler.so"

/* Choose w's row and prepare w for it: the rows asked in order. 0 (then
 * w->mech is set), or -errno with one line in err. */
int mechanism_choose(struct watch_set *ws, struct watched *w, char *err, size_t errlen);

/* Choose the row of the command w is to run (l->exe found beforehand, or
 * ""): the rows asked in order. 0 (then w->mech is set and l says how to
 * launch it), or -errno with one line in err. */
int mechanism_choose_command(struct watch_set *ws, struct watched *w, struct mech_launch *l,
			     char *err, size_t errlen);

/* The allocator the command of l will call (mech_launch.c), found once
 * and said where it keeps a sampler from seeing its calls. */
void mechanism_launch_allocator(struct watch_set *ws, struct mech_launch *l);
/* w's allocator as the launch of l leaves it: glibc's malloc (lib is
 * glibc's, as target_launch found it), with the prefixed allocator l
 * found beside it; a row that probes another changes it after. */
void mechanism_launch_glibc(struct watched *w, const struct mech_launch *l);
/* Would memtop's sampler, put into the command once it runs, see every
 * call of the allocator l found? */
bool mechanism_launch_injectable(const struct watch_set *ws, const struct mech_launch *l);

/* The allocator w's malloc binds to, resolved once per choice: 0 (then
 * w->alloc, alloc_prefix, lib and extra say it), or -errno with one line
 * in err. */
int mechanism_serving(struct watched *w, struct mech_ask *ask, char *err, size_t errlen);

/* The release of a row whose probes are w->probes (attach.h): off. */
void mechanism_release_probes(struct watch_set *ws, struct watched *w);

/* What the rows may use of watch.c. */
void watch_warn(struct watch_set *ws, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void watch_report(struct watch_set *ws, const struct mt_target_facts *f);
/* A file memtop ships: next to its binary, else in MEMTOP_LIBDIR. 0 or -ENOENT. */
int watch_find_lib(const char *name, char *path, size_t len);

#endif /* MEMTOP_PROBE_MECHANISM_H */

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * source.h - the table of sources beside a watched process's allocator
 * probes: a runtime's own sampler streaming in user space (a JVM's JVMTI
 * agent, docs/java.md; V8's sampling heap profiler, docs/node.md), a
 * second heap's API (device memory, docs/device-memory.md), or what names
 * a runtime's frames in the samples (CPython's interpreter, docs/python.md).
 * How the native heap itself is seen is the other table, mechanism.h.
 * Each is a row with the same operations; watch.c runs every row on every
 * process it attaches, and never branches on which. Adding such a source is its
 * module plus one row (source.c); docs/architecture.md has the recipe.
 *
 * A row's records go to env->record (or come from the BPF program, for a
 * row that attaches probes: device memory), in the ring-buffer record format
 * (include/memtop/abi.h), so ingest, the recording and every view take
 * them as the BPF side's; what it learns about the process goes into the
 * facts the caller hands to the model (input/target_facts.h).
 */
#ifndef MEMTOP_PROBE_SOURCE_H
#define MEMTOP_PROBE_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <linux/types.h>

#include "config.h"
#include "probe/bpf_loader.h"
#include "input/target_facts.h"

/* What a row may use. */
struct source_env {
	const struct mt_config *cfg;
	/* one line for the user (a refusal, a start), with warn_ctx */
	void (*warn)(void *ctx, const char *msg);
	void *warn_ctx;
	/* a record for ingest, with record_ctx; NULL: rows that stream
	 * records in user space do not start */
	void (*record)(void *ctx, const void *rec, size_t len);
	void *record_ctx;
	/* the BPF side, for rows whose records the BPF program makes */
	struct mt_bpf *bpf;
	/* a file memtop ships (its sampler, its agents): 0 or -ENOENT */
	int (*find_lib)(const char *name, char *path, size_t len);
};

/* The process a row starts on. */
struct source_proc {
	pid_t pid;
	bool launched; /* -- CMD: memtop started it (attached before its exec) */
};

struct source_ops {
	const char *name;
	/* Seconds a process that may become this row's (a runtime not up
	 * yet) is tried again after its attach; 0: only at attach. */
	unsigned int wait_s;
	/* Started, it sees the runtime heap that the target's facts would
	 * otherwise name as unseen (a JVM's, V8's): that runtime is not named
	 * for the process again. */
	bool sees_runtime;
	/* Start on pid. 0 with *state set: started; 0 with *state NULL: not
	 * this row's process, or refused (said, and in f); -EAGAIN: not yet,
	 * try again (within wait_s; on the last try, last is true and a
	 * process that is still not ready is refused). Facts into f (f->set
	 * says which). */
	int (*start)(const struct source_env *env, const struct source_proc *p, bool last,
		     void **state, struct mt_target_facts *f);
	/* Every pass of the loop: what came, as records, and the facts.
	 * 0, or -errno with one line in err once the stream ended or broke
	 * (f says so): the caller says it unless the process is gone, and
	 * calls stop(). */
	int (*pump)(const struct source_env *env, void *state, struct mt_target_facts *f, char *err,
		    size_t errlen);
	/* End and free (state may be NULL): the process is left as it was
	 * before start, or as the source documents. */
	void (*stop)(void *state);
	/* What it costs the process now, as a slowdown (%), added to the
	 * target's; NULL: nothing memtop can tell apart. */
	double (*cost_pct)(const void *state);
};

/* One line for the user from a row (env->warn), printf-style. */
void source_say(const struct source_env *env, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* The rows. */
extern const struct source_ops *const sources[];
#define SOURCE_ROWS 4

#endif /* MEMTOP_PROBE_SOURCE_H */

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * jvm_source.h - a JVM as a data source (docs/java.md): detect, attach,
 * pump, detach. The JVM's sampled allocations and their frees, streamed by
 * memtop's JVMTI agent (include/memtop/jvm_wire.h), become ring-buffer
 * records (MT_EV_NAMED, MT_EV_FREE of include/memtop/abi.h) handed to
 * the same entry as every other source's (model/ingest.h), so recording,
 * replay and every view take them unchanged.
 */
#ifndef MEMTOP_JVM_SOURCE_H
#define MEMTOP_JVM_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <linux/types.h>

struct jvm_source;

/* Where records go: the caller's ingest_record(). */
typedef void (*jvm_emit_fn)(void *ctx, const void *rec, size_t len);

/* Is pid a JVM? 0: no; 1: yes, attachable; -errno with one line in why
 * (a JVM memtop leaves alone: its native allocations are still seen). */
int jvm_source_detect(pid_t pid, char *why, size_t len);

/* Attach to the JVM pid: the agent agent_path loaded (or reused) and a
 * session opened at the sampling interval rate (bytes). NULL with errno
 * and one line in err; the JVM is then left as it was. */
struct jvm_source *jvm_source_start(pid_t pid, const char *agent_path, __u64 rate, char *err,
				    size_t len);

/* The agent was loaded by an earlier memtop. */
bool jvm_source_reused(const struct jvm_source *s);

/* The descriptor to poll for input. */
int jvm_source_fd(const struct jvm_source *s);

/* Read what the agent sent without waiting and emit each sample and free
 * as a record. 0, or -errno with one line in err once the stream ended
 * or broke (a malformed message ends it): the caller stops it. */
int jvm_source_pump(struct jvm_source *s, jvm_emit_fn emit, void *ctx, char *err, size_t len);

/* What the agent said it sampled and dropped (its queue full) this
 * session, as last reported, and what the session costs the JVM: the
 * CPU time of its callbacks and of the agent's thread over the JVM's own
 * CPU time since the agent's first report, as a slowdown (%). */
/* True once, the first time the agent widened its sampling interval past
 * memtop's (more than MT_JW_SAMPLES_PER_S_MAX samples a second): the
 * interval in *interval, the JVM in *pid. */
bool jvm_source_widened(struct jvm_source *s, __u64 *interval, pid_t *pid);
void jvm_source_counts(const struct jvm_source *s, __u64 *samples, __u64 *dropped, double *slowdown);

/* End the session (the agent switches its events off and restores the
 * JVM's sampling interval) and free s. NULL is fine. */
void jvm_source_stop(struct jvm_source *s);

#endif /* MEMTOP_JVM_SOURCE_H */

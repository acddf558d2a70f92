/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * jvm_attach.h - memtop's JVMTI agent into a running HotSpot JVM, through
 * the JVM's own dynamic attach mechanism (docs/java.md): which process is
 * a JVM it can attach to, and the connection to the agent, loaded first
 * unless an earlier memtop left it there.
 */
#ifndef MEMTOP_JVM_ATTACH_H
#define MEMTOP_JVM_ATTACH_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* The longest memtop waits for a JVM's attach mechanism and the agent's
 * load, all steps together. */
#define JVM_ATTACH_TIMEOUT_MS 10000

struct jvm_info {
	pid_t pid;   /* as memtop sees it */
	pid_t nspid; /* as the JVM sees itself (its pid namespace) */
	int feature; /* the Java feature version (17 for 17.0.15); 0: unknown */
};

/* Is pid a JVM (libjvm.so mapped)? 0: no; 1: yes, and attachable (info
 * filled); -EAGAIN: not yet (a `java` launcher that has not loaded its
 * VM, or a VM that does not handle SIGQUIT yet); other -errno with one
 * line in why: a JVM memtop will not attach to (older than 11, attach
 * disabled, -Xrs: SIGQUIT would not start the attach listener), left
 * untouched. */
int jvm_detect(pid_t pid, struct jvm_info *info, char *why, size_t len);

/* A connected stream socket to memtop's agent in the JVM, its peer
 * checked to be that process. The agent at agent_path (memtop's
 * libmemtop-jvmti.so) is copied into the JVM's /tmp and loaded through
 * the attach mechanism unless it already listens there (*reused).
 * Bounded by JVM_ATTACH_TIMEOUT_MS. -errno with one line in err; the
 * JVM is left as it was when it refused or did not answer. */
int jvm_attach(const struct jvm_info *ji, const char *agent_path, bool *reused, char *err,
	       size_t len);

#endif /* MEMTOP_JVM_ATTACH_H */

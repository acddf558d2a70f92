/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * cgroup.h - `memtop --cgroup`: finding a cgroup v2 directory from what a
 * user has at hand (a path, a cgroup id, a Kubernetes pod UID, a container
 * ID), listing the processes of its subtree, and reading its memory
 * figures: from cgroup v2, or from the v1 memory controller of its
 * processes on a hybrid layout (where memory is not on the v2 hierarchy).
 */
#ifndef MEMTOP_CGROUP_H
#define MEMTOP_CGROUP_H

#include "input/status.h"

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <linux/types.h>

/* The cgroup v2 mount point: /sys/fs/cgroup, or /sys/fs/cgroup/unified on a
 * hybrid layout. 0, or -ENOENT with one line in err. */
int cgroup_v2_root(char *root, size_t len, char *err, size_t errlen);

/* Resolve spec under the v2 hierarchy at root into an absolute directory:
 *  - an absolute path (under root, or taken relative to root),
 *  - a path relative to root,
 *  - a cgroup id (all digits: the directory's inode number),
 *  - a pod UID (dashes or underscores) or a container ID (or a prefix of at
 *    least 12 characters), searched in directory names: kubepods*.slice,
 *    *-pod<uid>.slice, cri-containerd-<id>.scope, docker-<id>.scope,
 *    crio-<id>.scope, cgroupfs' kubepods/<class>/pod<uid>/<id>.
 * When several directories match and one contains all the others, it wins.
 * 0, or -errno with one line in err (unknown, ambiguous listing the
 * matches, a cgroup v1 path). */
int cgroup_resolve(const char *root, const char *spec, char *out, size_t len, char *err,
		   size_t errlen);

/* The cgroup v2 directory of pid (its "0::" line in /proc/PID/cgroup)
 * under root. 0 or -errno. */
int cgroup_of_pid(pid_t pid, const char *root, char *out, size_t len);

/* Processes (tgids) of dir and every cgroup below it, sorted, no
 * duplicates, into a malloc'ed array. Returns the count or -errno. */
int cgroup_pids(const char *dir, pid_t **out);


/* Memory figures for the v2 directory dir; on a hybrid layout, from the v1
 * memory cgroup of pid (a process of dir), remembered in v1_dir (len
 * bytes, "" at first) so the figures stay readable once the cgroup has no
 * process left (pid <= 0). The effective limit is the smallest of dir's
 * and its ancestors'. 0, or -ENOENT when neither hierarchy has a memory
 * controller for it. */
int cgroup_read_mem(const char *dir, pid_t pid, char *v1_dir, size_t len, struct cgroup_mem *out);

#endif /* MEMTOP_CGROUP_H */

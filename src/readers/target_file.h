/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * target_file.h - the files a target names (its mappings, its debug
 * links), opened as the target sees them and only when they are regular
 * files: through util/safe_open.h, inside the target's root.
 */
#ifndef MEMTOP_TARGET_FILE_H
#define MEMTOP_TARGET_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "readers/proc_maps.h"

/* Open the file behind one of pid's mappings for reading:
 * /proc/PID/map_files/START-END (right for deleted and replaced files and
 * for other mount namespaces; needs CAP_SYS_ADMIN), else, unless the
 * mapping is deleted, its path inside the target's root, then (a chrooted
 * target's maps show our paths) inside ours, each only if it is the
 * mapping's inode. Descriptor or -errno (-SAFE_OPEN_ENOTREG: not a
 * regular file, -ESTALE: the path names another file now). */
int target_file_open_map(pid_t pid, const struct mt_map *map);

/* A path for the same file that the kernel and libbpf can be given (for
 * attaching probes): "/proc/PID/map_files/START-END" when that opens,
 * else "/proc/PID/root/PATH" once that checked out as the mapping's file.
 * 0 or -errno as target_file_open_map(). */
int target_file_map_path(pid_t pid, const struct mt_map *map, char *path, size_t len);

/* Open path as pid names it (a separate debug file): resolved inside
 * pid's root when in_target_root (else inside ours), and only if pid's
 * credentials could read it. Descriptor or -errno. */
int target_file_open_named(pid_t pid, bool in_target_root, const char *path);

#endif /* MEMTOP_TARGET_FILE_H */

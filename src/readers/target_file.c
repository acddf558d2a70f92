// SPDX-License-Identifier: GPL-2.0-only
/*
 * target_file.c - opening what a target names (target_file.h). Owns the
 * order in which a mapping's file is looked for and which root a name is
 * resolved in; the checks themselves are util/safe_open.c's.
 *
 * Why this order: /proc/PID/map_files/START-END is the mapped inode
 * itself, whatever happened to its name since (deleted, renamed, replaced
 * by a FIFO or by a symlink to /etc/shadow). A path is used only when that
 * link cannot be opened (memtop without CAP_SYS_ADMIN), never for a
 * deleted mapping, and only when it still names the mapped inode. Names
 * from inside the target (debug links, build-ID paths) resolve in its
 * root with RESOLVE_IN_ROOT, so an absolute symlink in a container's
 * /usr/lib/debug stays in the container, and they are read only if the
 * target itself could read them.
 */
#include "readers/target_file.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <unistd.h>

#include "util/safe_open.h"

static int root_open(pid_t pid)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/root", (int)pid);
	fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? (errno == ENOENT ? -ESRCH : -errno) : fd;
}

static void map_files_path(pid_t pid, const struct mt_map *map, char *path, size_t len)
{
	snprintf(path, len, "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, (int)pid,
		 (uint64_t)map->start, (uint64_t)map->end);
}

/* The mapping's path, in the target's root (in_root) or in ours, if it is
 * still the mapped inode. */
static int open_by_path(pid_t pid, const struct mt_map *map, bool in_root)
{
	struct safe_open_rules r = { .root_fd = -1, .want_ino = map->inode };
	int fd;

	if (!map->path || map->path[0] != '/' || map->deleted || !map->inode)
		return -ENOENT;
	if (in_root) {
		r.root_fd = root_open(pid);
		if (r.root_fd < 0)
			return r.root_fd;
	}
	fd = safe_open_read(map->path, &r);
	if (r.root_fd >= 0)
		close(r.root_fd);
	return fd;
}

int target_file_open_map(pid_t pid, const struct mt_map *map)
{
	char path[128];
	int fd;

	map_files_path(pid, map, path, sizeof(path));
	fd = safe_open_read(path, NULL);
	if (fd >= 0 || fd == -SAFE_OPEN_ENOTREG)
		return fd;
	fd = open_by_path(pid, map, true);
	if (fd >= 0 || fd == -SAFE_OPEN_ENOTREG)
		return fd;
	return open_by_path(pid, map, false);
}

int target_file_map_path(pid_t pid, const struct mt_map *map, char *path, size_t len)
{
	int fd;

	map_files_path(pid, map, path, len);
	fd = safe_open_read(path, NULL);
	if (fd < 0 && fd != -SAFE_OPEN_ENOTREG) {
		fd = open_by_path(pid, map, true);
		snprintf(path, len, "/proc/%d/root%s", (int)pid, map->path ? map->path : "");
	}
	if (fd < 0)
		return fd;
	close(fd);
	return 0;
}

int target_file_open_named(pid_t pid, bool in_target_root, const char *path)
{
	struct safe_reader reader;
	struct safe_open_rules r = { .root_fd = -1 };
	int fd, e;

	if (pid <= 0)
		return safe_open_read(path, &r);
	e = safe_reader_of_pid(pid, &reader);
	if (e)
		return e;
	r.reader = &reader;
	if (in_target_root) {
		r.root_fd = root_open(pid);
		if (r.root_fd < 0)
			return r.root_fd;
	}
	fd = safe_open_read(path, &r);
	if (r.root_fd >= 0)
		close(r.root_fd);
	return fd;
}

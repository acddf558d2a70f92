// SPDX-License-Identifier: GPL-2.0-only
/*
 * cmd_log.c - the file a launched command's stdout and stderr go to
 * (cmd_log.h): choosing its name, opening it without following a symlink
 * or blocking on a FIFO, and renaming the default after the command's PID.
 */
#include "probe/cmd_log.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#define CMD_LOG_PREFIX "memtop-cmd-"

/* The directory of beside ("." when it has none), into dir. */
static void dir_of(const char *beside, char *dir, size_t len)
{
	char tmp[PATH_MAX];

	if (!beside || !strchr(beside, '/')) {
		snprintf(dir, len, ".");
		return;
	}
	snprintf(tmp, sizeof(tmp), "%s", beside);
	snprintf(dir, len, "%s", dirname(tmp));
}

/* DIR/memtop-cmd-PID.log, or just the name in ".". 0 or -ENAMETOOLONG. */
static int name_in(const char *dir, pid_t pid, char *out, size_t len)
{
	bool here = !strcmp(dir, ".");

	if ((size_t)snprintf(out, len, "%s%s" CMD_LOG_PREFIX "%d.log", here ? "" : dir,
			     here ? "" : "/", (int)pid) >= len)
		return -ENAMETOOLONG;
	return 0;
}

int cmd_log_open(const char *file, const char *beside, char *path, size_t pathlen, bool *created,
		 char *err, size_t errlen)
{
	char dir[PATH_MAX];
	struct stat st;
	/* a name memtop made up is never a symlink it follows; one the user
	 * gave (/dev/stderr) is theirs */
	int fd, e, flags = O_WRONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | (file ? 0 : O_NOFOLLOW);

	*created = false;
	if (file) {
		snprintf(path, pathlen, "%s", file);
	} else {
		dir_of(beside, dir, sizeof(dir));
		if (name_in(dir, getpid(), path, pathlen)) {
			snprintf(err, errlen, "--cmd-log: %s: name too long", dir);
			return -ENAMETOOLONG;
		}
	}
	if (stat(path, &st) && errno == ENOENT) {
		fd = open(path, flags | O_CREAT | O_EXCL, 0600);
		*created = fd >= 0;
	} else {
		fd = open(path, flags);
	}
	if (fd < 0) {
		e = -errno;
		snprintf(err, errlen, "--cmd-log: cannot write %s: %s", path,
			 e == -ENXIO   ? "a FIFO with no reader"
			 : e == -ELOOP ? "a symbolic link"
				       : strerror(-e));
		return e;
	}
	if (fstat(fd, &st) || S_ISDIR(st.st_mode) || S_ISBLK(st.st_mode)) {
		snprintf(err, errlen,
			 "--cmd-log: cannot write %s: not a file, FIFO or character device", path);
		close(fd);
		return -EINVAL;
	}
	if (S_ISREG(st.st_mode) && !*created && ftruncate(fd, 0)) {
		e = -errno;
		snprintf(err, errlen, "--cmd-log: cannot write %s: %s", path, strerror(-e));
		close(fd);
		return e;
	}
	/* the command writes with blocking semantics, as to any file */
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	return fd;
}

void cmd_log_rename(char *path, size_t pathlen, bool explicit, pid_t pid)
{
	char dir[PATH_MAX], to[PATH_MAX];

	if (explicit)
		return;
	dir_of(path, dir, sizeof(dir));
	if (name_in(dir, pid, to, sizeof(to)))
		return;
	if (!renameat2(AT_FDCWD, path, AT_FDCWD, to, RENAME_NOREPLACE))
		snprintf(path, pathlen, "%s", to);
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * cmd_log.c - the file a launched command's stdout and stderr go to
 * (cmd_log.h): choosing its name in the state directory (never the
 * current one), keeping that directory to CMD_LOG_KEEP logs, opening the
 * file without following a symlink or blocking on a FIFO, and renaming
 * the default after the command's PID.
 */
#include "probe/cmd_log.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "util/grow.h"
#include "util/out_file.h"

#define CMD_LOG_PREFIX "memtop-cmd-"

/* The directory of path. */
static void dir_of(const char *path, char *dir, size_t len)
{
	char tmp[PATH_MAX];

	snprintf(tmp, sizeof(tmp), "%s", path);
	snprintf(dir, len, "%s", dirname(tmp));
}

/* DIR/memtop-cmd-PID.log. 0 or -ENAMETOOLONG. */
static int name_in(const char *dir, pid_t pid, char *out, size_t len)
{
	if ((size_t)snprintf(out, len, "%s/" CMD_LOG_PREFIX "%d.log", dir, (int)pid) >= len)
		return -ENAMETOOLONG;
	return 0;
}

/* An absolute path from the environment, or NULL. */
static const char *env_dir(const char *name)
{
	const char *v = getenv(name);

	return v && v[0] == '/' ? v : NULL;
}

int cmd_log_dir(char *dir, size_t len)
{
	const char *state = env_dir("XDG_STATE_HOME"), *home = env_dir("HOME");
	int n;

	if (state)
		n = snprintf(dir, len, "%s/memtop", state);
	else if (home)
		n = snprintf(dir, len, "%s/.local/state/memtop", home);
	else if (geteuid() == 0)
		n = snprintf(dir, len, "/var/log/memtop");
	else
		return -ENOENT;
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* Whether name is a default log's: memtop-cmd-DIGITS.log. */
static bool is_log_name(const char *name)
{
	const char *p = name + strlen(CMD_LOG_PREFIX);

	if (strncmp(name, CMD_LOG_PREFIX, strlen(CMD_LOG_PREFIX)) || !*p)
		return false;
	while (*p >= '0' && *p <= '9')
		p++;
	return p > name + strlen(CMD_LOG_PREFIX) && !strcmp(p, ".log");
}

struct old_log {
	char name[NAME_MAX + 1];
	struct timespec mtime;
};

static int older_first(const void *pa, const void *pb)
{
	const struct old_log *a = pa, *b = pb;

	if (a->mtime.tv_sec != b->mtime.tv_sec)
		return a->mtime.tv_sec < b->mtime.tv_sec ? -1 : 1;
	if (a->mtime.tv_nsec != b->mtime.tv_nsec)
		return a->mtime.tv_nsec < b->mtime.tv_nsec ? -1 : 1;
	return strcmp(a->name, b->name);
}

/* Make room for one more default log in dir: remove the oldest regular
 * files named memtop-cmd-PID.log until CMD_LOG_KEEP - 1 are left.
 * Anything else there is left alone; failures are not errors. */
static void prune(const char *dir)
{
	struct old_log *v = NULL;
	size_t n = 0, cap = 0, i;
	struct dirent *de;
	struct stat st;
	DIR *d = opendir(dir);

	if (!d)
		return;
	while ((de = readdir(d))) {
		if (!is_log_name(de->d_name) || strlen(de->d_name) > NAME_MAX ||
		    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
			continue;
		if (grow_array(&v, &cap, n + 1, sizeof(*v)))
			break;
		snprintf(v[n].name, sizeof(v[n].name), "%s", de->d_name);
		v[n++].mtime = st.st_mtim;
	}
	if (n >= CMD_LOG_KEEP) {
		qsort(v, n, sizeof(*v), older_first);
		for (i = 0; i + CMD_LOG_KEEP - 1 < n; i++)
			unlinkat(dirfd(d), v[i].name, 0);
	}
	free(v);
	closedir(d);
}

int cmd_log_open(const char *file, char *path, size_t pathlen, bool *created, char *err, size_t errlen)
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
		e = cmd_log_dir(dir, sizeof(dir));
		if (e) {
			snprintf(err, errlen,
				 "--cmd-log: no state directory for the command's output "
				 "(XDG_STATE_HOME and HOME unset): give --cmd-log FILE");
			return e;
		}
		e = out_file_make_dirs(dir);
		if (e) {
			snprintf(err, errlen, "--cmd-log: cannot make %s: %s (give --cmd-log FILE)",
				 dir, strerror(-e));
			return e;
		}
		if (name_in(dir, getpid(), path, pathlen)) {
			snprintf(err, errlen, "--cmd-log: %s: name too long", dir);
			return -ENAMETOOLONG;
		}
		prune(dir);
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

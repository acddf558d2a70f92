// SPDX-License-Identifier: GPL-2.0-only
/*
 * out_file.c - writing output files (out_file.h). Owns the choice between
 * replacing a regular file atomically and writing through anything else,
 * the mode and owner of what it creates, and the descriptors of streams
 * opened at check time. Nothing else: what is written is the caller's.
 *
 * A regular file goes through a mkostemp() sibling (O_EXCL, so a planted
 * symlink is never followed), written, fsync'ed, then renamed over the
 * destination: a full disk, a read-only or missing directory fails before
 * the rename and the temporary file is unlinked, so readers see the old
 * file or the new one, never a prefix. Anything else that can be written
 * (a FIFO, a character device, a socket, /dev/stdout) is opened without
 * O_CREAT or O_TRUNC and written through with O_NONBLOCK and poll(), so a
 * reader that stops reading costs at most OUT_FILE_STALL_MS.
 *
 * Symbolic links are resolved first, so a rename never lands on a link:
 * one that leads through a descriptor (/dev/stdout, /dev/fd/N,
 * /proc/PID/fd/N) is written through whatever it reaches, a regular file
 * at its end (O_APPEND: `memtop -b --folded /dev/stdout > out` appends to
 * out, and /dev/stdout stays the link it is); any other link is replaced
 * at the file it resolves to (the link stays); one that leads nowhere is
 * refused.
 */
#include "util/out_file.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

/* Streams opened by out_file_check(), kept for out_file_write(). */
#define HELD_MAX 8
static struct {
	char *path;
	int fd;
} held[HELD_MAX];

static int write_error(const char *path, int rc, char *err, size_t errlen)
{
	const char *why = strerror(-rc);

	if (rc == -EINVAL && (!path || !*path))
		why = "empty path";
	else if (rc == -ENXIO)
		why = "a FIFO with no reader";
	else if (rc == -ENOTBLK)
		why = "a block device: refused";
	else if (rc == -ETIMEDOUT)
		why = "its reader stopped reading";
	else if (rc == -ELOOP)
		why = "a symbolic link to nothing (or a loop): refused";
	snprintf(err, errlen, "cannot write %s: %s", path && *path ? path : "file", why);
	return rc;
}

/* ==== streams: written through ======================================== */

static bool is_stream_mode(mode_t m)
{
	return S_ISFIFO(m) || S_ISCHR(m) || S_ISSOCK(m);
}

/* /dev/fd/N or /proc/PID/fd/N (PID may be "self"). */
static bool is_fd_path(const char *p)
{
	const char *slash;

	if (!strncmp(p, "/dev/fd/", 8))
		return true;
	if (strncmp(p, "/proc/", 6))
		return false;
	slash = strchr(p + 6, '/');
	return slash && slash > p + 6 && !strncmp(slash, "/fd/", 4);
}

/* Does one of the links path goes through (or path itself) name a
 * descriptor: /proc/PID/fd/N, /proc/self/fd/N, /dev/fd/N? At most 40 hops,
 * as the kernel follows. */
static bool names_descriptor(const char *path)
{
	char cur[PATH_MAX], link[PATH_MAX];

	if ((size_t)snprintf(cur, sizeof(cur), "%s", path) >= sizeof(cur))
		return false;
	for (int hop = 0; hop < 40; hop++) {
		struct stat st;
		ssize_t n;

		if (is_fd_path(cur))
			return true;
		if (lstat(cur, &st) || !S_ISLNK(st.st_mode))
			return false;
		n = readlink(cur, link, sizeof(link) - 1);
		if (n < 0)
			return false;
		link[n] = '\0';
		if (link[0] == '/') {
			memcpy(cur, link, (size_t)n + 1);
		} else {
			char *slash = strrchr(cur, '/');
			size_t dir = slash ? (size_t)(slash - cur) + 1 : 0;

			if (dir + (size_t)n >= sizeof(cur))
				return false;
			memcpy(cur + dir, link, (size_t)n + 1);
		}
	}
	return false;
}

bool out_file_is_stream(const char *path)
{
	struct stat st;

	return path && !stat(path, &st) && (is_stream_mode(st.st_mode) || names_descriptor(path));
}

static int stream_open(const char *path, const struct stat *st)
{
	int fd;

	for (int i = 0; i < HELD_MAX; i++)
		if (held[i].path && !strcmp(held[i].path, path))
			return held[i].fd;
	if (S_ISSOCK(st->st_mode)) {
		struct sockaddr_un sa = { .sun_family = AF_UNIX };

		if (strlen(path) >= sizeof(sa.sun_path))
			return -ENAMETOOLONG;
		strcpy(sa.sun_path, path);
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		if (fd < 0)
			return -errno;
		if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
			int e = -errno;

			close(fd);
			return e;
		}
	} else {
		/* no O_CREAT, no O_TRUNC: the node is written, never replaced;
		 * O_NONBLOCK: a FIFO without reader is ENXIO at once; a regular
		 * file behind a descriptor is appended to */
		fd = open(path, O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC |
					(S_ISREG(st->st_mode) ? O_APPEND : 0));
		if (fd < 0)
			return -errno;
	}
	for (int i = 0; i < HELD_MAX; i++) {
		if (!held[i].path) {
			held[i].path = strdup(path);
			held[i].fd = fd;
			break;
		}
	}
	return fd;
}

bool out_file_is_terminal(const char *path)
{
	for (int i = 0; i < HELD_MAX; i++)
		if (held[i].path && !strcmp(held[i].path, path))
			return isatty(held[i].fd);
	return false;
}

static int stream_write(int fd, const char *p, size_t len)
{
	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EAGAIN) {
			struct pollfd pfd = { .fd = fd, .events = POLLOUT };
			int r = poll(&pfd, 1, OUT_FILE_STALL_MS);

			if (r < 0 && errno != EINTR)
				return -errno;
			if (r == 0)
				return -ETIMEDOUT;
			continue;
		}
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* ==== regular files: replaced atomically ============================= */

static int write_all(int fd, const void *data, size_t len)
{
	const char *p = data;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Best effort: make the rename itself durable. */
static void sync_dir_of(const char *path)
{
	char copy[PATH_MAX];
	int fd;

	snprintf(copy, sizeof(copy), "%s", path);
	fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
}

/* Create the temporary sibling of path: its name goes into tmp. Returns
 * the descriptor or -errno. */
static int open_temp(const char *path, char tmp[PATH_MAX])
{
	int fd;

	if ((size_t)snprintf(tmp, PATH_MAX, "%s.XXXXXX", path) >= PATH_MAX)
		return -ENAMETOOLONG;
	fd = mkostemp(tmp, O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/* The process umask, without changing it (umask(2) cannot read it alone,
 * and another thread may create files meanwhile). */
static mode_t current_umask(void)
{
	char line[128];
	unsigned int mask = 022;
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return 022;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Umask: %o", &mask) == 1)
			break;
	fclose(f);
	return (mode_t)mask & 0777;
}

/* Mode and owner for the new file: never more open than the umask allows
 * or than the file it replaces; that file's owner and group kept. */
static int set_mode(int fd, const struct stat *old)
{
	mode_t mode = OUT_FILE_MODE & ~current_umask();

	if (old) {
		mode &= old->st_mode & 0777;
		if (fchown(fd, old->st_uid, old->st_gid) && errno != EPERM)
			return -errno;
	}
	return fchmod(fd, mode) ? -errno : 0;
}

static int regular_write(const char *path, const struct stat *old, const void *data, size_t len)
{
	char tmp[PATH_MAX];
	int fd = open_temp(path, tmp), rc;

	if (fd < 0)
		return fd;
	rc = set_mode(fd, old);
	if (!rc)
		rc = write_all(fd, data, len);
	if (!rc && fsync(fd))
		rc = -errno;
	if (close(fd) && !rc)
		rc = -errno;
	if (!rc && rename(tmp, path))
		rc = -errno;
	if (rc) {
		unlink(tmp);
		return rc;
	}
	sync_dir_of(path);
	return 0;
}

/* ==== the choice ====================================================== */

/* Where path is written and how: 0 with *st filled (*through: written
 * through, not replaced), 1 when nothing is there, or -errno for what is
 * refused. real gets the path to replace: path, or the file a link
 * resolves to. */
static int classify(const char *path, struct stat *st, char real[PATH_MAX], bool *through)
{
	struct stat lst;

	if (!path || !*path)
		return -EINVAL;
	if ((size_t)snprintf(real, PATH_MAX, "%s", path) >= PATH_MAX)
		return -ENAMETOOLONG;
	*through = false;
	if (!lstat(path, &lst) && S_ISLNK(lst.st_mode)) {
		if (names_descriptor(path)) {
			*through = true;
		} else if (!realpath(path, real)) {
			return errno == ENOENT ? -ELOOP : -errno;
		}
	}
	if (stat(real, st))
		return errno == ENOENT ? 1 : -errno;
	if (S_ISDIR(st->st_mode))
		return -EISDIR;
	if (S_ISBLK(st->st_mode))
		return -ENOTBLK;
	if (!S_ISREG(st->st_mode) && !is_stream_mode(st->st_mode))
		return -EINVAL;
	*through = *through || is_stream_mode(st->st_mode);
	return 0;
}

int out_file_write(const char *path, const void *data, size_t len, char *err, size_t errlen)
{
	char real[PATH_MAX];
	struct stat st = { 0 };
	bool through = false;
	int rc = classify(path, &st, real, &through), fd;

	if (rc < 0)
		return write_error(path, rc, err, errlen);
	if (rc == 0 && through) {
		fd = stream_open(path, &st);
		rc = fd < 0 ? fd : stream_write(fd, data, len);
	} else {
		rc = regular_write(real, rc == 0 ? &st : NULL, data, len);
	}
	return rc ? write_error(path, rc, err, errlen) : 0;
}

int out_file_check(const char *path, char *err, size_t errlen)
{
	char tmp[PATH_MAX], real[PATH_MAX];
	struct stat st = { 0 };
	bool through = false;
	int rc = classify(path, &st, real, &through), fd;

	if (rc < 0)
		return write_error(path, rc, err, errlen);
	if (rc == 0 && through) {
		fd = stream_open(path, &st);
		return fd < 0 ? write_error(path, fd, err, errlen) : 0;
	}
	fd = open_temp(real, tmp);
	if (fd < 0)
		return write_error(path, fd, err, errlen);
	close(fd);
	unlink(tmp);
	return 0;
}

/* mkdir -p dir, the directories it makes 0700; dir itself must end up a
 * directory, not a symlink. 0 or -errno. */
int out_file_make_dirs(const char *dir)
{
	char tmp[PATH_MAX];
	struct stat st;

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s", dir) >= sizeof(tmp))
		return -ENAMETOOLONG;
	for (char *p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(tmp, 0700) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(tmp, 0700) && errno != EEXIST)
		return -errno;
	if (lstat(tmp, &st))
		return -errno;
	return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
}

/* ==== one file under two names ======================================== */

int out_file_canonical(const char *path, char *buf, size_t len)
{
	char dir[PATH_MAX], base[PATH_MAX], real[PATH_MAX];
	const char *slash;

	snprintf(buf, len, "%s", path ? path : "");
	if (!path || !*path)
		return -EINVAL;
	if (realpath(path, real)) {
		if ((size_t)snprintf(buf, len, "%s", real) >= len)
			return -ENAMETOOLONG;
		return 0;
	}
	slash = strrchr(path, '/');
	if (slash == path) {
		snprintf(dir, sizeof(dir), "/");
	} else if (slash) {
		if ((size_t)(slash - path) >= sizeof(dir))
			return -ENAMETOOLONG;
		memcpy(dir, path, (size_t)(slash - path));
		dir[slash - path] = '\0';
	} else {
		snprintf(dir, sizeof(dir), ".");
	}
	snprintf(base, sizeof(base), "%s", slash ? slash + 1 : path);
	if (!realpath(dir, real))
		return -errno;
	if ((size_t)snprintf(buf, len, "%s%s%s", real, strcmp(real, "/") ? "/" : "", base) >= len)
		return -ENAMETOOLONG;
	return 0;
}

enum out_file_same out_file_same(const char *a, const char *b)
{
	char ca[PATH_MAX], cb[PATH_MAX];
	struct stat sa, sb;
	bool ea, eb;

	if (!a || !b)
		return OUT_FILE_DIFFERENT;
	ea = !stat(a, &sa);
	eb = !stat(b, &sb);
	if (ea && eb) {
		if (sa.st_dev != sb.st_dev || sa.st_ino != sb.st_ino)
			return OUT_FILE_DIFFERENT;
		return S_ISCHR(sa.st_mode) ? OUT_FILE_SHARED : OUT_FILE_SAME;
	}
	if (ea || eb)
		return OUT_FILE_DIFFERENT;
	/* neither exists: as spelled once resolved (a missing directory
	 * leaves the name as given, refused later by the write check) */
	out_file_canonical(a, ca, sizeof(ca));
	out_file_canonical(b, cb, sizeof(cb));
	return strcmp(ca, cb) ? OUT_FILE_DIFFERENT : OUT_FILE_SAME;
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * safe_open.c - opening files named by someone else (safe_open.h). Owns
 * the rule that such a file is opened for reading only once it is known
 * to be a regular file, inside the root it was named in, of the expected
 * inode, and readable by the one who named it. Nothing else.
 *
 * Resolution is done with O_PATH, which opens nothing: no FIFO open that
 * waits for a writer, no device open with side effects, no atime or
 * inotify IN_OPEN on a file that is then refused. The checked O_PATH
 * descriptor is reopened through /proc/self/fd (the usual way to turn an
 * O_PATH descriptor into a readable one), with O_NONBLOCK so that even a
 * file swapped for a FIFO between the two steps cannot block, and the
 * result is checked to be the inode that was checked.
 */
#include "util/safe_open.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static int path_open(const char *path, int root_fd, bool no_symlink)
{
	struct open_how how = { .flags = O_PATH | O_CLOEXEC | (no_symlink ? O_NOFOLLOW : 0) };
	struct stat st;
	int fd;

	if (root_fd < 0) {
		fd = open(path, (int)how.flags);
	} else {
		/* inside the root: absolute symlinks and ".." stay in it */
		how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
		while (*path == '/')
			path++;
		fd = (int)syscall(SYS_openat2, root_fd, *path ? path : ".", &how, sizeof(how));
	}
	if (fd < 0)
		return -errno;
	/* O_PATH|O_NOFOLLOW opens a symlink itself: refuse it as O_NOFOLLOW would */
	if (no_symlink && !fstat(fd, &st) && S_ISLNK(st.st_mode)) {
		close(fd);
		return -ELOOP;
	}
	return fd;
}

static bool in_groups(const struct safe_reader *r, gid_t gid)
{
	if (gid == r->gid)
		return true;
	for (int i = 0; i < r->ngroups; i++)
		if (r->groups[i] == gid)
			return true;
	return false;
}

static bool may_read(const struct safe_reader *r, const struct stat *st)
{
	if (!r || r->any)
		return true;
	if (st->st_uid == r->uid)
		return st->st_mode & S_IRUSR;
	if (in_groups(r, st->st_gid))
		return st->st_mode & S_IRGRP;
	return st->st_mode & S_IROTH;
}

static int check(const struct stat *st, const struct safe_open_rules *rules)
{
	if (!S_ISREG(st->st_mode))
		return -SAFE_OPEN_ENOTREG;
	if (rules && rules->want_ino && (__u64)st->st_ino != rules->want_ino)
		return -ESTALE;
	if (rules && !may_read(rules->reader, st))
		return -EACCES;
	return 0;
}

int safe_open_read(const char *path, const struct safe_open_rules *rules)
{
	struct stat st, again;
	char self[64];
	int pfd, fd, e;

	if (!path || !*path)
		return -ENOENT;
	pfd = path_open(path, rules ? rules->root_fd : -1, rules && rules->no_symlink);
	if (pfd < 0)
		return pfd;
	e = fstat(pfd, &st) ? -errno : check(&st, rules);
	if (e) {
		close(pfd);
		return e;
	}
	snprintf(self, sizeof(self), "/proc/self/fd/%d", pfd);
	fd = open(self, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	e = fd < 0 ? -errno : 0;
	close(pfd);
	if (e)
		return e;
	if (fstat(fd, &again) || !S_ISREG(again.st_mode) || again.st_ino != st.st_ino ||
	    again.st_dev != st.st_dev) {
		close(fd);
		return -ESTALE;
	}
	return fd;
}

int safe_read_file(const char *path, const struct safe_open_rules *rules, size_t max, char **text,
		   size_t *len)
{
	int fd = safe_open_read(path, rules), e = 0;
	size_t n = 0;
	char *buf;

	*text = NULL;
	*len = 0;
	if (fd < 0)
		return fd;
	buf = malloc(max + 2);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	/* One byte more than max tells a file that is too large. */
	while (n <= max) {
		ssize_t r = read(fd, buf + n, max + 1 - n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			e = -errno;
			break;
		}
		if (!r)
			break;
		n += (size_t)r;
	}
	close(fd);
	if (!e && n > max)
		e = -EFBIG;
	if (e) {
		free(buf);
		return e;
	}
	buf[n] = '\0';
	*text = buf;
	*len = n;
	return 0;
}

const char *safe_open_strerror(int err)
{
	if (err < 0)
		err = -err;
	return err == SAFE_OPEN_ENOTREG ? "not a regular file" : strerror(err);
}

/* "Uid:\tR\tE\tS\tFS" and the like: the fourth number. */
static int fourth_id(const char *line, unsigned long *out)
{
	unsigned long v[4];

	if (sscanf(line, "%*s %lu %lu %lu %lu", &v[0], &v[1], &v[2], &v[3]) != 4)
		return -EINVAL;
	*out = v[3];
	return 0;
}

int safe_reader_of_pid(pid_t pid, struct safe_reader *r)
{
	char path[64], line[1024];
	unsigned long uid = 0, gid = 0;
	int have = 0;
	FILE *f;

	memset(r, 0, sizeof(*r));
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "Uid:", 4) && !fourth_id(line, &uid)) {
			have |= 1;
		} else if (!strncmp(line, "Gid:", 4) && !fourth_id(line, &gid)) {
			have |= 2;
		} else if (!strncmp(line, "Groups:", 7)) {
			char *s = line + 7, *end;

			while (r->ngroups < (int)(sizeof(r->groups) / sizeof(r->groups[0]))) {
				unsigned long g = strtoul(s, &end, 10);

				if (end == s)
					break;
				r->groups[r->ngroups++] = (gid_t)g;
				s = end;
			}
		}
	}
	fclose(f);
	if (have != 3)
		return -EINVAL;
	r->uid = (uid_t)uid;
	r->gid = (gid_t)gid;
	r->any = uid == 0;
	return 0;
}

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * safe_open.h - the one way memtop opens a file whose name it did not
 * choose itself: a path from a target's /proc/PID/maps, a .gnu_debuglink
 * or build-ID name, a theme the user named. Such a path may name a FIFO
 * (an open that never returns), a device, or a symlink out of a
 * container's root into the host's; see docs/reliability.md.
 */
#ifndef MEMTOP_UTIL_SAFE_OPEN_H
#define MEMTOP_UTIL_SAFE_OPEN_H

#include <stdbool.h>
#include <sys/types.h>
#include <linux/types.h>

/* The error for "exists, but is not a regular file" (a FIFO, a device, a
 * socket, a directory). */
#define SAFE_OPEN_ENOTREG EMEDIUMTYPE

/* Who must be able to read the file for memtop to read it on their
 * behalf: memtop runs as root, a target need not. Mode bits only (no ACL:
 * a file readable only through an ACL is refused, which costs at most
 * some debug information). */
struct safe_reader {
	bool any;  /* no restriction (a root target, or the user) */
	uid_t uid; /* file-system uid and gids of the reader */
	gid_t gid;
	int ngroups;
	gid_t groups[32];
};

struct safe_open_rules {
	int root_fd;                      /* resolve inside this directory (RESOLVE_IN_ROOT,
				 * no magic links), or -1: an ordinary lookup */
	__u64 want_ino;                   /* nonzero: the file must be this inode (-ESTALE) */
	const struct safe_reader *reader; /* NULL: no restriction */
	bool no_symlink;                  /* the last component may not be a symlink
				 * (-ELOOP), as O_NOFOLLOW */
};

/* Open path for reading, only if it is a regular file that passes rules:
 * the path is resolved with O_PATH (nothing is opened for reading yet, so
 * a FIFO, device or wrong file is never opened), checked with fstat, then
 * reopened O_RDONLY|O_NONBLOCK|O_CLOEXEC|O_NOCTTY and checked to be the
 * same inode. Returns the descriptor, or -errno: -SAFE_OPEN_ENOTREG for a
 * file that is not regular, -ESTALE for another inode than want_ino,
 * -EACCES when reader could not read it, -EXDEV when a magic link
 * (/proc/N/...) is met inside a root. A root needs openat2 (Linux 5.6):
 * -ENOSYS without it. */
int safe_open_read(const char *path, const struct safe_open_rules *rules);

/* The whole of the regular file path (safe_open_read() and rules) into a
 * malloc'ed, NUL-terminated *text of *len bytes: at most max, else -EFBIG.
 * 0 or -errno; *text is NULL on failure. */
int safe_read_file(const char *path, const struct safe_open_rules *rules, size_t max, char **text,
		   size_t *len);

/* strerror() that names SAFE_OPEN_ENOTREG "not a regular file". */
const char *safe_open_strerror(int err);

/* The credentials of pid (Uid/Gid/Groups of /proc/PID/status, the
 * file-system ids) into *r; uid 0 gives r->any. 0 or -errno. */
int safe_reader_of_pid(pid_t pid, struct safe_reader *r);

#endif /* MEMTOP_UTIL_SAFE_OPEN_H */

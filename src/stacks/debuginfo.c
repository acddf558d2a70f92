// SPDX-License-Identifier: GPL-2.0-only
/*
 * debuginfo.c - separate debug file search. Owns the search order and the
 * match check, nothing else: it opens candidates and hands the first good
 * one to the caller. Order, for each root (the target's /proc/PID/root,
 * then ours when it differs):
 *   1. DEBUGDIR/.build-id/xx/rest.debug       (build ID must match)
 *   2. DIR/LINK, DIR/.debug/LINK, DEBUGDIR/DIR/LINK
 *      (LINK from .gnu_debuglink, DIR the binary's directory; the build ID
 *      must match when both files have one, else the CRC32)
 * A candidate that is the binary itself, or holds neither symbols nor
 * DWARF, is skipped. Candidates are opened by target_file_open_named():
 * resolved inside the root searched (a container's absolute symlinks stay
 * in the container), regular files only, and only those the target's
 * credentials could read (a debug link naming /etc/shadow is refused
 * before it is opened).
 *
 * Then, when $DEBUGINFOD_URLS names servers, by build ID from them
 * (debuginfod_fetch.c: in the background; the caller asks again with
 * debuginfo_fetched()). The fetched file is checked like a local one.
 *
 * libdwfl's dwfl_standard_find_debuginfo() walks the same order, but opens
 * candidates with open() in our own root: it cannot resolve a container's
 * absolute symlinks inside /proc/PID/root, would block on a FIFO planted
 * at a debug link's path and does not check the target's rights, so the
 * search stays here (docs/architecture.md, "Libraries and why").
 */
#include "stacks/debuginfo.h"

#include "stacks/debuginfod_fetch.h"
#include "readers/target_file.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char *debug_dir;

static const char *dir_get(void)
{
	return debug_dir ? debug_dir : "/usr/lib/debug";
}

int debuginfo_set_debug_dir(const char *dir)
{
	char *d = dir ? strdup(dir) : NULL;

	if (dir && !d)
		return -ENOMEM;
	free(debug_dir);
	debug_dir = d;
	return 0;
}

/* Whether pid sees the same files at the same paths as we do: same mount
 * namespace and same root directory. Unknown counts as different. */
static bool same_view(pid_t pid)
{
	char path[64], ns_them[64], ns_us[64];
	struct stat a, b;
	ssize_t n, m;

	snprintf(path, sizeof(path), "/proc/%d/ns/mnt", (int)pid);
	n = readlink(path, ns_them, sizeof(ns_them));
	m = readlink("/proc/self/ns/mnt", ns_us, sizeof(ns_us));
	if (n <= 0 || n != m || memcmp(ns_them, ns_us, (size_t)n))
		return false;
	snprintf(path, sizeof(path), "/proc/%d/root", (int)pid);
	return !stat(path, &a) && !stat("/", &b) && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* The roots to search, as flags for target_file_open_named(): pid's own
 * (unless pid sees our view), then ours. Returns the count. */
static int roots_get(pid_t pid, bool roots[2])
{
	int n = 0;

	if (pid > 0 && !same_view(pid))
		roots[n++] = true;
	roots[n++] = false;
	return n;
}

struct want {
	pid_t pid; /* whose names these are: their root, their rights */
	bool in_target_root;
	struct elf_file *orig; /* NULL when looking up by build ID alone */
	const char *build_id;
	bool by_crc;
	__u32 crc;
};

/* c if it is the debug file w wants; else c is closed and NULL returned. */
static struct elf_file *candidate_check(struct elf_file *c, const struct want *w)
{
	const char *bid;
	bool ok;

	if (!c)
		return NULL;
	bid = elf_file_build_id(c);
	if (w->orig && elf_file_id(c)->dev == elf_file_id(w->orig)->dev &&
	    elf_file_id(c)->ino == elf_file_id(w->orig)->ino)
		ok = false; /* the binary itself */
	else if (w->build_id && bid)
		ok = !strcmp(w->build_id, bid);
	else if (w->by_crc)
		ok = elf_file_crc32(c) == w->crc;
	else
		ok = false;
	if (ok && (elf_file_has_dwarf(c) || elf_file_has_symtab(c)))
		return c;
	elf_file_close(c);
	return NULL;
}

static struct elf_file *candidate_try(const char *path, const struct want *w)
{
	int fd = target_file_open_named(w->pid, w->in_target_root, path);

	return candidate_check(fd >= 0 ? elf_file_open_fd(fd, path) : NULL, w);
}

/* candidate_try() on a formatted path; paths too long are skipped. */
__attribute__((format(printf, 2, 3))) static struct elf_file *candidate_at(const struct want *w,
									   const char *fmt, ...)
{
	char path[PATH_MAX];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(path, sizeof(path), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(path))
		return NULL;
	return candidate_try(path, w);
}

static struct elf_file *build_id_try(const char *bid, const struct want *w)
{
	size_t n = strlen(bid);

	/* a note's bytes as hex: nothing else may reach a path */
	if (n < 4 || strspn(bid, "0123456789abcdef") != n)
		return NULL;
	return candidate_at(w, "%s/.build-id/%.2s/%s.debug", dir_get(), bid, bid + 2);
}

struct elf_file *debuginfo_find_build_id(const char *build_id, pid_t pid)
{
	struct want w = { .pid = pid, .build_id = build_id };
	bool roots[2];
	int nroots = roots_get(pid, roots);

	if (build_id) {
		for (int r = 0; r < nroots; r++) {
			struct elf_file *c;

			w.in_target_root = roots[r];
			c = build_id_try(build_id, &w);

			if (c)
				return c;
		}
	}
	errno = ENOENT;
	return NULL;
}

struct elf_file *debuginfo_find(struct elf_file *ef, pid_t pid, const char *map_path)
{
	struct want w = { .pid = pid, .orig = ef, .build_id = elf_file_build_id(ef) };
	const char *link = NULL, *slash;
	char dir[PATH_MAX];
	bool roots[2];
	int nroots = roots_get(pid, roots);

	if (!map_path)
		map_path = elf_file_path(ef);
	if (!elf_file_debuglink(ef, &link, &w.crc))
		w.by_crc = true;
	slash = map_path ? strrchr(map_path, '/') : NULL;
	if (slash && (size_t)(slash - map_path) >= sizeof(dir))
		slash = NULL;
	if (slash) {
		memcpy(dir, map_path, (size_t)(slash - map_path));
		dir[slash - map_path] = '\0';
	}
	for (int r = 0; r < nroots; r++) {
		struct elf_file *c;

		w.in_target_root = roots[r];
		c = w.build_id ? build_id_try(w.build_id, &w) : NULL;
		if (c)
			return c;
		if (!link || !slash || strchr(link, '/') || !strcmp(link, "..") || !*link)
			continue;
		if ((c = candidate_at(&w, "%s/%s", dir, link)) ||
		    (c = candidate_at(&w, "%s/.debug/%s", dir, link)) ||
		    (c = candidate_at(&w, "%s%s/%s", dir_get(), dir, link)))
			return c;
	}
	return debuginfo_fetched(ef);
}

struct elf_file *debuginfo_fetched(struct elf_file *ef)
{
	/* The build ID alone says which file the servers should send. */
	struct want w = { .orig = ef, .build_id = elf_file_build_id(ef) };
	const char *path;
	struct elf_file *c;
	int fd;

	fd = w.build_id ? debuginfod_fetch_get(w.build_id, &path) : -ENOENT;
	if (fd == -EAGAIN) {
		errno = EAGAIN;
		return NULL;
	}
	c = fd >= 0 ? candidate_check(elf_file_open_fd(fd, path), &w) : NULL;
	if (!c)
		errno = ENOENT;
	return c;
}

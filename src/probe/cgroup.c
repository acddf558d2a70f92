// SPDX-License-Identifier: GPL-2.0-only
/*
 * cgroup.c - cgroup discovery and memory figures for --cgroup (cgroup.h).
 *
 * Resolution never guesses silently: an identifier that matches several
 * unrelated directories is an error that lists them. The search walks the
 * hierarchy depth-first to MAX_DEPTH levels, which covers every layout
 * Kubernetes drivers and container runtimes create.
 */
#include "probe/cgroup.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>

#include "util/grow.h"

#define CGROUP_SUPER_MAGIC 0x27e0eb
#define CGROUP2_SUPER_MAGIC 0x63677270
#define MAX_DEPTH 12
#define MAX_MATCHES 16
#define MIN_ID_PREFIX 12
#define V1_MEMORY_ROOT "/sys/fs/cgroup/memory"

static bool is_dir(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISDIR(st.st_mode);
}

static long fs_magic(const char *path)
{
	struct statfs sf;

	return statfs(path, &sf) ? 0 : (long)sf.f_type;
}

int cgroup_v2_root(char *root, size_t len, char *err, size_t errlen)
{
	static const char *const candidates[] = { "/sys/fs/cgroup", "/sys/fs/cgroup/unified" };
	size_t i;

	for (i = 0; i < sizeof(candidates) / sizeof(candidates[0]); i++) {
		if (fs_magic(candidates[i]) == CGROUP2_SUPER_MAGIC) {
			snprintf(root, len, "%s", candidates[i]);
			return 0;
		}
	}
	snprintf(err, errlen,
		 "no cgroup v2 hierarchy is mounted (looked at /sys/fs/cgroup and /sys/fs/cgroup/unified)");
	return -ENOENT;
}

/* ---- resolution ---------------------------------------------------------- */

struct matches {
	char *v[MAX_MATCHES];
	int n;
	int total;
};

static void matches_free(struct matches *m)
{
	int i;

	for (i = 0; i < m->n; i++)
		free(m->v[i]);
}

static void matches_add(struct matches *m, const char *path)
{
	m->total++;
	if (m->n < MAX_MATCHES)
		m->v[m->n++] = strdup(path);
}

/* Lower-case copy of an identifier, dashes kept (variant '-') or turned
 * into underscores (variant '_', the systemd driver's slice names). */
static void id_variant(const char *id, char sep, char *out, size_t len)
{
	size_t i;

	for (i = 0; id[i] && i + 1 < len; i++)
		out[i] = id[i] == '-' ? sep : (char)tolower((unsigned char)id[i]);
	out[i] = '\0';
}

static bool name_matches(const char *name, const char *dash, const char *under)
{
	return strstr(name, dash) || strstr(name, under);
}

/* Depth-first search for directories whose name contains the identifier
 * (or, for digits, whose inode is the cgroup id). */
static void search(const char *dir, int depth, const char *dash, const char *under, __u64 ino,
		   struct matches *m)
{
	DIR *d;
	struct dirent *de;

	if (depth > MAX_DEPTH || !(d = opendir(dir)))
		return;
	while ((de = readdir(d))) {
		char path[PATH_MAX];
		struct stat st;

		if (de->d_name[0] == '.' || de->d_type != DT_DIR)
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", dir, de->d_name) >= (int)sizeof(path))
			continue;
		if (ino ? !stat(path, &st) && st.st_ino == ino
			: name_matches(de->d_name, dash, under))
			matches_add(m, path);
		search(path, depth + 1, dash, under, ino, m);
	}
	closedir(d);
}

/* Is a an ancestor directory of (or equal to) b? */
static bool contains(const char *a, const char *b)
{
	size_t n = strlen(a);

	return !strncmp(a, b, n) && (b[n] == '/' || b[n] == '\0');
}

static int pick_match(struct matches *m, const char *spec, char *out, size_t len, char *err,
		      size_t errlen)
{
	size_t used;
	int i, j;

	if (m->total == 0) {
		snprintf(err, errlen, "no cgroup matches '%s'", spec);
		return -ENOENT;
	}
	for (i = 0; i < m->n; i++) {
		for (j = 0; j < m->n && contains(m->v[i], m->v[j]); j++)
			;
		if (j == m->n && m->total == m->n) {
			snprintf(out, len, "%s", m->v[i]);
			return 0;
		}
	}
	used = snprintf(err, errlen, "'%s' is ambiguous: %d cgroups match:", spec, m->total);
	for (i = 0; i < m->n && i < 4 && used < errlen; i++)
		used += snprintf(err + used, errlen - used, " %s", m->v[i]);
	if (m->total > 4 && used < errlen)
		snprintf(err + used, errlen - used, " ...");
	return -EEXIST;
}

static bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return false;
	return true;
}

static bool looks_like_id(const char *s)
{
	size_t n = strlen(s);

	if (n < MIN_ID_PREFIX)
		return false;
	for (; *s; s++)
		if (!isxdigit((unsigned char)*s) && *s != '-' && *s != '_')
			return false;
	return true;
}

/* An absolute or relative path: under root, or relative to it. */
static int resolve_path(const char *root, const char *spec, char *out, size_t len, char *err,
			size_t errlen)
{
	char path[PATH_MAX];
	long magic;

	if (spec[0] == '/' && contains(root, spec))
		snprintf(path, sizeof(path), "%s", spec);
	else
		snprintf(path, sizeof(path), "%s/%s", root, spec[0] == '/' ? spec + 1 : spec);
	if (is_dir(path) && fs_magic(path) == CGROUP2_SUPER_MAGIC) {
		snprintf(out, len, "%s", path);
		return 0;
	}
	magic = spec[0] == '/' ? fs_magic(spec) : 0;
	if (magic == CGROUP_SUPER_MAGIC) {
		snprintf(err, errlen,
			 "%s is a cgroup v1 directory: memtop needs the cgroup v2 hierarchy (%s)",
			 spec, root);
		return -ENOTSUP;
	}
	if (spec[0] == '/' && is_dir(spec) && !contains(root, spec)) {
		snprintf(err, errlen, "%s is not a cgroup v2 directory (the hierarchy is at %s)",
			 spec, root);
		return -ENOTDIR;
	}
	snprintf(err, errlen, "no such cgroup: %s (looked under %s)", spec, root);
	return -ENOENT;
}

int cgroup_resolve(const char *root, const char *spec, char *out, size_t len, char *err, size_t errlen)
{
	struct matches m = { 0 };
	char dash[256], under[256];
	int e;

	if (!spec || !*spec) {
		snprintf(err, errlen, "--cgroup: empty name");
		return -EINVAL;
	}
	if (strchr(spec, '/'))
		return resolve_path(root, spec, out, len, err, errlen);
	if (all_digits(spec)) {
		char *end;
		unsigned long long ino = strtoull(spec, &end, 10);

		search(root, 0, "", "", ino, &m);
	} else {
		char direct[PATH_MAX];

		/* a plain directory name directly under root, e.g. "system.slice" */
		snprintf(direct, sizeof(direct), "%s/%s", root, spec);
		if (!looks_like_id(spec) && is_dir(direct)) {
			snprintf(out, len, "%s", direct);
			return 0;
		}
		id_variant(spec, '-', dash, sizeof(dash));
		id_variant(spec, '_', under, sizeof(under));
		search(root, 0, dash, under, 0, &m);
	}
	e = pick_match(&m, spec, out, len, err, errlen);
	matches_free(&m);
	return e;
}

/* The path of pid's cgroup for controller ("" for the v2 "0::" line) from
 * /proc/PID/cgroup, lines "ID:CONTROLLERS:PATH". 0 or -errno. */
static int proc_cgroup_path(pid_t pid, const char *controller, char *out, size_t len)
{
	char path[64], line[PATH_MAX];
	FILE *f;
	int e = -ENOENT;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char *ctl = strchr(line, ':'), *p;

		if (!ctl || !(p = strchr(ctl + 1, ':')))
			continue;
		*p = '\0';
		if (strcmp(ctl + 1, controller))
			continue;
		p[1 + strcspn(p + 1, "\n")] = '\0';
		snprintf(out, len, "%s", strcmp(p + 1, "/") ? p + 1 : "");
		e = 0;
		break;
	}
	fclose(f);
	return e;
}

/* The directory of pid's cgroup for controller under the hierarchy
 * mounted at root. 0 or -errno. */
static int pid_cgroup_dir(pid_t pid, const char *controller, const char *root, char *out, size_t len)
{
	char rel[PATH_MAX];
	int e = proc_cgroup_path(pid, controller, rel, sizeof(rel));

	if (e)
		return e;
	if (snprintf(out, len, "%s%s", root, rel) >= (int)len)
		return -ENAMETOOLONG;
	return is_dir(out) ? 0 : -ENOENT;
}

int cgroup_of_pid(pid_t pid, const char *root, char *out, size_t len)
{
	return pid_cgroup_dir(pid, "", root, out, len);
}

/* dir/file opened for reading, or NULL with errno set. */
static FILE *open_in(const char *dir, const char *file)
{
	char path[PATH_MAX];

	if (snprintf(path, sizeof(path), "%s/%s", dir, file) >= (int)sizeof(path)) {
		errno = ENAMETOOLONG;
		return NULL;
	}
	return fopen(path, "re");
}

/* ---- processes ----------------------------------------------------------- */

struct pid_vec {
	pid_t *v;
	size_t n, cap;
};

static int pid_push(struct pid_vec *pv, pid_t pid)
{
	if (grow_array(&pv->v, &pv->cap, pv->n + 1, sizeof(*pv->v)))
		return -ENOMEM;
	pv->v[pv->n++] = pid;
	return 0;
}

static int collect(const char *dir, int depth, struct pid_vec *pv)
{
	char path[PATH_MAX];
	struct dirent *de;
	FILE *f;
	DIR *d;
	long pid;
	int e = 0;

	f = open_in(dir, "cgroup.procs");
	if (!f)
		return depth ? 0 : -errno;
	while (!e && fscanf(f, "%ld", &pid) == 1)
		if (pid > 0)
			e = pid_push(pv, (pid_t)pid);
	fclose(f);
	if (e || depth >= MAX_DEPTH || !(d = opendir(dir)))
		return e;
	while (!e && (de = readdir(d))) {
		if (de->d_name[0] == '.' || de->d_type != DT_DIR)
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", dir, de->d_name) < (int)sizeof(path))
			e = collect(path, depth + 1, pv);
	}
	closedir(d);
	return e;
}

static int pid_cmp(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

int cgroup_pids(const char *dir, pid_t **out)
{
	struct pid_vec pv = { 0 };
	int e = collect(dir, 0, &pv);
	size_t i, n = 0;

	if (e) {
		free(pv.v);
		return e;
	}
	if (pv.n)
		qsort(pv.v, pv.n, sizeof(pv.v[0]), pid_cmp);
	for (i = 0; i < pv.n; i++)
		if (!n || pv.v[n - 1] != pv.v[i])
			pv.v[n++] = pv.v[i];
	*out = pv.v;
	return (int)n; /* at most pid_max, 2^22 */
}

/* ---- memory ---------------------------------------------------------------- */

/* One number from dir/file; "max" (v2) reads as 0: no limit. */
static int read_u64(const char *dir, const char *file, __u64 *out)
{
	char buf[64];
	FILE *f = open_in(dir, file);
	int e = -ENOENT;

	if (!f)
		return errno ? -errno : -ENOENT;
	if (fgets(buf, sizeof(buf), f)) {
		if (!strncmp(buf, "max", 3)) {
			*out = 0;
			e = 0;
		} else if (sscanf(buf, "%llu", (unsigned long long *)out) == 1) {
			e = 0;
		}
	}
	fclose(f);
	return e;
}

/* A "key value" line of a flat-keyed file (memory.stat, memory.events). */
static int read_key(const char *dir, const char *file, const char *key, __u64 *out)
{
	char k[64];
	unsigned long long v;
	FILE *f = open_in(dir, file);
	int e = -ENOENT;

	if (!f)
		return errno ? -errno : -ENOENT;
	while (fscanf(f, "%63s %llu", k, &v) == 2) {
		if (!strcmp(k, key)) {
			*out = v;
			e = 0;
			break;
		}
	}
	fclose(f);
	return e;
}

/* The smallest non-zero limit in file from dir up to (and excluding) top. */
static __u64 effective_limit(const char *dir, const char *top, const char *file, __u64 unlimited)
{
	char path[PATH_MAX], *slash;
	__u64 best = 0, v = 0;

	snprintf(path, sizeof(path), "%s", dir);
	while (contains(top, path) && strcmp(path, top)) {
		if (!read_u64(path, file, &v) && v && v < unlimited && (!best || v < best))
			best = v;
		slash = strrchr(path, '/');
		if (!slash)
			break;
		*slash = '\0';
	}
	return best;
}

static int read_v2(const char *dir, struct cgroup_mem *out)
{
	char top[PATH_MAX], *slash;
	__u64 v = 0;

	if (read_u64(dir, "memory.current", &out->current))
		return -ENOENT;
	snprintf(top, sizeof(top), "%s", dir);
	/* the hierarchy's root: walk up while the parent is still cgroup2 */
	while ((slash = strrchr(top, '/')) && slash != top) {
		*slash = '\0';
		if (fs_magic(top) != CGROUP2_SUPER_MAGIC) {
			*slash = '/';
			break;
		}
	}
	out->v1 = false;
	out->max = effective_limit(dir, top, "memory.max", ~0ULL);
	out->high = effective_limit(dir, top, "memory.high", ~0ULL);
	out->oom = !read_key(dir, "memory.events", "oom", &v) ? (__s64)v : -1;
	out->oom_kill = !read_key(dir, "memory.events", "oom_kill", &v) ? (__s64)v : -1;
	if (read_key(dir, "memory.stat", "anon", &out->anon))
		out->anon = 0;
	if (read_key(dir, "memory.stat", "file", &out->file))
		out->file = 0;
	return 0;
}

/* v1 reports "no limit" as a page-rounded LLONG_MAX. */
#define V1_UNLIMITED (1ULL << 62)

static int read_v1(const char *dir, struct cgroup_mem *out)
{
	__u64 v = 0;

	if (!*dir || read_u64(dir, "memory.usage_in_bytes", &out->current))
		return -ENOENT;
	out->v1 = true;
	out->max = effective_limit(dir, V1_MEMORY_ROOT, "memory.limit_in_bytes", V1_UNLIMITED);
	out->high = effective_limit(dir, V1_MEMORY_ROOT, "memory.soft_limit_in_bytes", V1_UNLIMITED);
	out->oom = -1;
	out->oom_kill = !read_key(dir, "memory.oom_control", "oom_kill", &v) ? (__s64)v : -1;
	if (read_key(dir, "memory.stat", "total_rss", &out->anon))
		out->anon = 0;
	if (read_key(dir, "memory.stat", "total_cache", &out->file))
		out->file = 0;
	return 0;
}

int cgroup_read_mem(const char *dir, pid_t pid, char *v1_dir, size_t len, struct cgroup_mem *out)
{
	char found[PATH_MAX];

	memset(out, 0, sizeof(*out));
	if (!read_v2(dir, out))
		return 0;
	/* A process that is exiting may already show the root memory cgroup:
	 * the root is never the one a process of dir stands for. */
	if (pid > 0 && !pid_cgroup_dir(pid, "memory", V1_MEMORY_ROOT, found, sizeof(found)) &&
	    strcmp(found, V1_MEMORY_ROOT) && strcmp(found, V1_MEMORY_ROOT "/"))
		snprintf(v1_dir, len, "%s", found);
	return read_v1(v1_dir, out);
}

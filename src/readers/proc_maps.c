// SPDX-License-Identifier: GPL-2.0-only
/*
 * proc_maps.c - /proc/PID/maps parsing. Owns the text-to-struct step only:
 * every line is validated field by field (hex ranges with start < end,
 * four permission characters, hex offset, hex major:minor, decimal inode,
 * optional path), and one bad line rejects the whole text with -EINVAL
 * rather than yielding a partial table. Paths are interned; a trailing
 * " (deleted)" is stripped and recorded in mt_map.deleted. The result is
 * sorted by start address for binary search. A torn read of a changing
 * process is read again (MAPS_READ_ATTEMPTS). What one read keeps is
 * bounded (PROC_MAPS_MAX_BYTES, PROC_MAPS_MAX_ENTRIES, PROC_MAPS_MAX_MS): the text is in
 * address order, so a cut table is the lower part of the real one.
 */
#include "readers/proc_maps.h"
#include "util/grow.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>

#include "util/bytebuf.h"
#include "util/clock.h"
#include "util/strpool.h"

#define DELETED_SUFFIX " (deleted)"
#define MAPS_READ_ATTEMPTS 4

/* Parse hex digits at *p up to a non-hex character; at least one digit and
 * at most 16. Advances *p. */
static int parse_hex(const char **p, const char *end, __u64 *out)
{
	const char *s = *p;
	__u64 v = 0;
	int n = 0;

	for (; s < end; s++, n++) {
		int d;

		if (*s >= '0' && *s <= '9')
			d = *s - '0';
		else if (*s >= 'a' && *s <= 'f')
			d = *s - 'a' + 10;
		else if (*s >= 'A' && *s <= 'F')
			d = *s - 'A' + 10;
		else
			break;
		if (n == 16)
			return -EINVAL;
		v = v << 4 | (__u64)d;
	}
	if (!n)
		return -EINVAL;
	*p = s;
	*out = v;
	return 0;
}

static int parse_dec(const char **p, const char *end, __u64 *out)
{
	const char *s = *p;
	__u64 v = 0;

	if (s >= end || *s < '0' || *s > '9')
		return -EINVAL;
	for (; s < end && *s >= '0' && *s <= '9'; s++) {
		if (v > (~0ULL - 9) / 10)
			return -EINVAL;
		v = v * 10 + (__u64)(*s - '0');
	}
	*p = s;
	*out = v;
	return 0;
}

static int expect_char(const char **p, const char *end, char c)
{
	if (*p >= end || **p != c)
		return -EINVAL;
	(*p)++;
	return 0;
}

static void skip_spaces(const char **p, const char *end)
{
	while (*p < end && (**p == ' ' || **p == '\t'))
		(*p)++;
}

/* One line without its newline. */
/* m's path from the name the kernel gives (plen bytes at s, no NUL). */
static int set_path(struct mt_map *m, const char *s, size_t plen)
{
	if (plen > strlen(DELETED_SUFFIX) &&
	    !memcmp(s + plen - strlen(DELETED_SUFFIX), DELETED_SUFFIX, strlen(DELETED_SUFFIX))) {
		m->deleted = true;
		plen -= strlen(DELETED_SUFFIX);
	}
	m->path = strpool_intern_len(s, plen);
	return m->path ? 0 : -ENOMEM;
}

static int parse_line(const char *s, const char *end, struct mt_map *m)
{
	static const char perm_ok[4][2] = { { 'r', '-' }, { 'w', '-' }, { 'x', '-' }, { 'p', 's' } };
	__u64 major, minor;
	size_t plen;

	memset(m, 0, sizeof(*m));
	if (parse_hex(&s, end, &m->start) || expect_char(&s, end, '-') ||
	    parse_hex(&s, end, &m->end) || expect_char(&s, end, ' '))
		return -EINVAL;
	if (m->start >= m->end)
		return -EINVAL;
	if (end - s < 5 || s[4] != ' ')
		return -EINVAL;
	for (int i = 0; i < 4; i++) {
		if (s[i] != perm_ok[i][0] && s[i] != perm_ok[i][1])
			return -EINVAL;
		m->perms[i] = s[i];
	}
	m->perms[4] = '\0';
	s += 5;
	if (parse_hex(&s, end, &m->offset) || expect_char(&s, end, ' ') ||
	    parse_hex(&s, end, &major) || expect_char(&s, end, ':') || parse_hex(&s, end, &minor) ||
	    expect_char(&s, end, ' ') || parse_dec(&s, end, &m->inode))
		return -EINVAL;
	if (major > 0xffffffffu || minor > 0xffffffffu)
		return -EINVAL;
	m->dev_major = (__u32)major;
	m->dev_minor = (__u32)minor;
	if (s < end && *s != ' ' && *s != '\t')
		return -EINVAL;
	skip_spaces(&s, end);
	plen = (size_t)(end - s);
	if (!plen)
		return 0;
	if (memchr(s, '\0', plen))
		return -EINVAL;
	return set_path(m, s, plen);
}

static int map_cmp(const void *a, const void *b)
{
	const struct mt_map *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

int proc_maps_parse(const char *text, size_t len, struct mt_maps *out)
{
	const char *p = text, *end = text + len;
	struct mt_map *v = NULL;
	size_t n = 0, cap = 0;
	int err = 0;

	out->v = NULL;
	out->n = 0;
	out->cut = false;
	if (!text && len)
		return -EINVAL;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *eol = nl ? nl : end;

		if (eol == p) { /* blank line: only tolerated as trailing */
			p = eol + 1;
			if (p < end) {
				err = -EINVAL;
				break;
			}
			continue;
		}
		if (n == PROC_MAPS_MAX_ENTRIES) {
			out->cut = true;
			break;
		}
		if (grow_array(&v, &cap, n + 1, sizeof(*v))) {
			err = -ENOMEM;
			break;
		}
		err = parse_line(p, eol, &v[n]);
		if (err)
			break;
		n++;
		p = nl ? nl + 1 : end;
	}
	if (err) {
		free(v);
		return err;
	}
	if (n)
		qsort(v, n, sizeof(*v), map_cmp);
	for (size_t i = 1; i < n; i++) {
		if (v[i].start < v[i - 1].end) { /* overlapping ranges: not a maps file */
			free(v);
			return -EINVAL;
		}
	}
	out->v = v;
	out->n = n;
	return 0;
}

/* The kernel builds the text as it is read: asked for at most this much
 * at a time, so the time bound is looked at often. */
#define READ_CHUNK (256 * 1024)

/* Read a /proc file (its size is unknown until read), at most max bytes
 * of it and for at most max_ms (0: no time bound), into a util/bytebuf;
 * *cut when there was more. */
static int read_proc_file(const char *path, size_t max, unsigned int max_ms, char **text,
			  size_t *len, bool *cut)
{
	__u64 deadline = max_ms ? clock_mono_ns() + max_ms * 1000000ULL : UINT64_MAX;
	struct bytebuf b;
	int fd, err = 0;
	__u8 *data;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	bytebuf_init(&b);
	*cut = false;
	for (;;) {
		size_t room;
		ssize_t r;

		if (b.len >= max || (b.len && clock_mono_ns() > deadline)) {
			char c;

			*cut = read(fd, &c, 1) == 1;
			break;
		}
		/* at least 16 KiB at a time; the buffer doubles as it fills */
		if (!bytebuf_reserve(&b, 16384)) {
			err = b.err;
			break;
		}
		room = b.cap - b.len - 1;
		if (room > max - b.len)
			room = max - b.len;
		r = read(fd, b.data + b.len, room < READ_CHUNK ? room : READ_CHUNK);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			break;
		}
		if (!r)
			break;
		b.len += (size_t)r;
	}
	close(fd);
	if (err) {
		bytebuf_fini(&b);
		return err;
	}
	err = bytebuf_take(&b, &data, len);
	if (err)
		return err;
	if (!data) {
		/* an empty file: the caller still owns a buffer */
		data = malloc(1);
		if (!data)
			return -ENOMEM;
	}
	*text = (char *)data;
	return 0;
}

int proc_maps_read_within(pid_t pid, struct mt_maps *out, unsigned int max_ms)
{
	char path[64], *text = NULL;
	size_t len = 0;
	bool cut = false;
	int err;

	out->v = NULL;
	out->n = 0;
	if (pid <= 0)
		return -EINVAL;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	/* The kernel hands maps out a page at a time: a process that maps or
	 * unmaps meanwhile can give a torn text (overlapping or out-of-order
	 * ranges, -EINVAL), so a bad text is read again a few times. */
	for (int attempt = 0; attempt < MAPS_READ_ATTEMPTS; attempt++) {
		text = NULL;
		len = 0;
		err = read_proc_file(path, PROC_MAPS_MAX_BYTES, max_ms, &text, &len, &cut);
		if (err == -EAGAIN || err == -EINTR)
			continue;
		if (err)
			return err;
		/* A process that exited between open and read leaves an empty file. */
		if (!len) {
			free(text);
			return -ESRCH;
		}
		if (cut) { /* end at the last whole line */
			while (len && text[len - 1] != '\n')
				len--;
		}
		err = proc_maps_parse(text, len, out);
		free(text);
		out->cut |= cut;
		if (err != -EINVAL)
			return err;
	}
	return err;
}

int proc_maps_read(pid_t pid, struct mt_maps *out)
{
	return proc_maps_read_within(pid, out, 0);
}

/* The PROCMAP_QUERY ioctl of /proc/PID/maps (Linux 6.11,
 * include/uapi/linux/fs.h): the mapping containing one address, without
 * the text of any other. Declared here: Debian 12's headers predate it. */
struct procmap_query {
	__u64 size;
	__u64 query_flags;
	__u64 query_addr;
	__u64 vma_start;
	__u64 vma_end;
	__u64 vma_flags;
	__u64 vma_page_size;
	__u64 vma_offset;
	__u64 inode;
	__u32 dev_major;
	__u32 dev_minor;
	__u32 vma_name_size;
	__u32 build_id_size;
	__u64 vma_name_addr;
	__u64 build_id_addr;
};
#define PROCMAP_QUERY _IOWR('f', 17, struct procmap_query)
#define PROCMAP_QUERY_VMA_READABLE 0x01
#define PROCMAP_QUERY_VMA_WRITABLE 0x02
#define PROCMAP_QUERY_VMA_EXECUTABLE 0x04
#define PROCMAP_QUERY_VMA_SHARED 0x08

/* The mapping containing addr into *m: 0, -ENOENT when none does, or
 * -errno (-ENOTTY: a kernel without the ioctl). */
static int query_one(int fd, __u64 addr, char *name, size_t namelen, struct mt_map *m)
{
	struct procmap_query q = { .size = sizeof(q),
				   .query_addr = addr,
				   .vma_name_size = (__u32)namelen,
				   .vma_name_addr = (__u64)(uintptr_t)name };

	if (ioctl(fd, PROCMAP_QUERY, &q) < 0)
		return -errno;
	memset(m, 0, sizeof(*m));
	m->start = q.vma_start;
	m->end = q.vma_end;
	m->offset = q.vma_offset;
	m->inode = q.inode;
	m->dev_major = q.dev_major;
	m->dev_minor = q.dev_minor;
	m->perms[0] = q.vma_flags & PROCMAP_QUERY_VMA_READABLE ? 'r' : '-';
	m->perms[1] = q.vma_flags & PROCMAP_QUERY_VMA_WRITABLE ? 'w' : '-';
	m->perms[2] = q.vma_flags & PROCMAP_QUERY_VMA_EXECUTABLE ? 'x' : '-';
	m->perms[3] = q.vma_flags & PROCMAP_QUERY_VMA_SHARED ? 's' : 'p';
	return q.vma_name_size > 1 ? set_path(m, name, q.vma_name_size - 1) : 0;
}

int proc_maps_read_at(pid_t pid, const __u64 *addrs, size_t n, struct mt_maps *out)
{
	char path[64], *name = malloc(PATH_MAX + sizeof(DELETED_SUFFIX));
	size_t i;
	int fd, e = 0;

	memset(out, 0, sizeof(*out));
	out->v = calloc(n ? n : 1, sizeof(*out->v));
	if (!out->v || !name) {
		free(name);
		proc_maps_free(out);
		return -ENOMEM;
	}
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		e = errno == ENOENT ? -ESRCH : -errno;
	for (i = 0; fd >= 0 && i < n && !e; i++) {
		struct mt_map m;

		if (proc_maps_find(out, addrs[i]))
			continue; /* in a mapping already asked for */
		e = query_one(fd, addrs[i], name, PATH_MAX + sizeof(DELETED_SUFFIX), &m);
		if (e == -ENOENT) {
			e = 0; /* in no mapping: left out */
			continue;
		}
		if (!e) {
			out->v[out->n++] = m;
			qsort(out->v, out->n, sizeof(*out->v), map_cmp);
		}
	}
	if (fd >= 0)
		close(fd);
	free(name);
	if (e)
		proc_maps_free(out);
	return e;
}

const struct mt_map *proc_maps_find(const struct mt_maps *m, __u64 addr)
{
	size_t lo = 0, hi = m->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (addr < m->v[mid].start)
			hi = mid;
		else if (addr >= m->v[mid].end)
			lo = mid + 1;
		else
			return &m->v[mid];
	}
	return NULL;
}

void proc_maps_free(struct mt_maps *m)
{
	if (!m)
		return;
	free(m->v);
	m->v = NULL;
	m->n = 0;
}

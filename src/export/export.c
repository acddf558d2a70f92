// SPDX-License-Identifier: GPL-2.0-only
/*
 * export.c - model snapshots as files (see export.h): gzipped pprof from
 * pprof.c, folded stacks for flame-graph tools, and the one place that
 * writes them to disk.
 *
 * Every file goes through export_write_file(), that is util/out_file.c:
 * a regular file is replaced atomically (mode 0600 & ~umask, never more
 * open than the file it replaces), a FIFO or device is written through,
 * never replaced.
 */
#include "export/export.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "export/pprof.h"
#include "util/bytebuf.h"
#include "util/out_file.h"
#include "util/sanitize.h"

/* ==== files ========================================================== */

/* Every export goes through util/out_file.c, the one writer of outputs. */
int export_write_file(const char *path, const void *data, size_t len, char *err, size_t errlen)
{
	return out_file_write(path, data, len, err, errlen);
}

int export_write_file_in_dir(const char *path, const void *data, size_t len, char *err, size_t errlen)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');
	int e;

	if (strlen(path) >= sizeof(dir)) {
		snprintf(err, errlen, "cannot write %s: too long", path);
		return -ENAMETOOLONG;
	}
	if (slash && slash > path) {
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
		e = out_file_make_dirs(dir);
		if (e) {
			snprintf(err, errlen, "cannot create %s: %s", dir, strerror(-e));
			return e;
		}
	}
	return export_write_file(path, data, len, err, errlen);
}

int export_check_path(const char *path, char *err, size_t errlen)
{
	return out_file_check(path, err, errlen);
}

size_t export_numbered_stem(const char *base)
{
	static const char gz_suffix[] = ".pb.gz";
	const char *name = strrchr(base, '/'), *ext;
	size_t blen = strlen(base), glen = sizeof(gz_suffix) - 1;

	name = name ? name + 1 : base;
	if (strlen(name) > glen && !strcmp(base + blen - glen, gz_suffix))
		ext = base + blen - glen;
	else
		ext = strrchr(name, '.');
	if (!ext || ext == name) /* no extension, or a dot file like ".prof" */
		ext = base + blen;
	return (size_t)(ext - base);
}

int export_numbered_path(const char *base, unsigned int n, char *buf, size_t len)
{
	size_t stem = export_numbered_stem(base);
	int w = snprintf(buf, len, "%.*s.%04u%s", (int)stem, base, n, base + stem);

	if (w < 0 || (size_t)w >= len)
		return -ENAMETOOLONG;
	return 0;
}

bool export_is_numbered(const char *base, const char *name)
{
	size_t stem = export_numbered_stem(base), ext = strlen(base) - stem;
	size_t len = strlen(name), digits;

	if (len < stem + 1 + 4 + ext || strncmp(name, base, stem) || name[stem] != '.' ||
	    strcmp(name + len - ext, base + stem))
		return false;
	digits = len - ext - stem - 1;
	for (size_t i = 0; i < digits; i++)
		if (name[stem + 1 + i] < '0' || name[stem + 1 + i] > '9')
			return false;
	return true;
}

/* ==== pprof =========================================================== */

int export_pprof_buf(struct mt_model *m, __u8 **out, size_t *outlen)
{
	struct pprof *p = pprof_from_model(m, NULL);
	int err;

	if (!p)
		return -errno;
	err = pprof_encode_gz(p, out, outlen);
	pprof_free(p);
	return err;
}

int export_pprof_file(struct mt_model *m, const char *path, char *err, size_t errlen)
{
	size_t len = 0;
	__u8 *buf = NULL;
	int rc = export_pprof_buf(m, &buf, &len);

	if (rc) {
		snprintf(err, errlen, "cannot encode pprof for %s: %s", path, strerror(-rc));
		return rc;
	}
	rc = export_write_file(path, buf, len, err, errlen);
	free(buf);
	return rc;
}

/* ==== folded stacks =================================================== */

struct folded_line {
	char *stack;
	__u64 value;
};

/* A frame name as folded text: the characters the format reserves (';'
 * separates frames) replaced by '_', and the terminal rule of
 * util/sanitize.h applied (control characters, newlines included, and
 * invalid UTF-8 become '?'). Folded stacks are text for people and
 * flamegraph.pl, whatever they are written to: /dev/stdout on a terminal
 * must not receive a target's escape sequences. */
static void text_add_frame(struct bytebuf *t, const char *name)
{
	size_t i, start = t->len;

	bytebuf_puts(t, name);
	if (t->err || !t->data)
		return;
	/* the bytes keep a NUL after them (bytebuf.h); never longer once
	 * sanitized */
	sanitize_inplace((char *)t->data + start);
	t->len = start + strlen((char *)t->data + start);
	for (i = start; i < t->len; i++)
		if (t->data[i] == ';')
			t->data[i] = '_';
}

/* "outermost;...;innermost" for one stack aggregate into t (reset first). */
static void fold_stack(struct bytebuf *t, struct mt_model *m, const struct mt_stack_agg *a,
		       bool prefix)
{
	const struct mt_frame *frames;
	char buf[160];
	bool first = true;
	__u32 n;

	frames = pprof_stack_frames(a->stack, &n);
	bytebuf_clear(t);
	if (prefix) {
		const struct mt_target *tg = model_target(m, a->pid);

		snprintf(buf, sizeof(buf), "%.*s-%d", (int)sizeof(tg->comm), tg ? tg->comm : "?",
			 (int)a->pid);
		text_add_frame(t, buf);
		first = false;
	}
	if (a->stack->dev.tier) {
		/* the device tier's bytes under a root of their own, never
		 * summed into the heap's (docs/device-memory.md) */
		char tag[128] = "[device ";

		device_tag_describe(&a->stack->dev, tag + 8, sizeof(tag) - 9);
		strcat(tag, "]");
		if (!first)
			bytebuf_puts(t, ";");
		text_add_frame(t, tag);
		first = false;
	}
	if (a->stack->truncated) {
		if (!first)
			bytebuf_puts(t, ";");
		text_add_frame(t, PPROF_TRUNCATED_FRAME);
		first = false;
	}
	while (n--) {
		if (!first)
			bytebuf_puts(t, ";");
		text_add_frame(t, pprof_frame_name(&frames[n], buf, sizeof(buf)));
		first = false;
	}
}

static int cmp_line(const void *a, const void *b)
{
	return strcmp(((const struct folded_line *)a)->stack, ((const struct folded_line *)b)->stack);
}

/* Collect one line per stack aggregate with in-use bytes into *lines. */
static int collect_lines(struct mt_model *m, struct folded_line **lines, size_t *nlines)
{
	size_t n = model_stack_count(m), i, k = 0;
	bool prefix = model_target_count(m) > 1;
	struct folded_line *v = calloc(n ? n : 1, sizeof(*v));
	struct bytebuf t;

	if (!v)
		return -ENOMEM;
	bytebuf_init(&t);
	for (i = 0; i < n; i++) {
		const struct mt_stack_agg *a = model_stack_at(m, i);
		double bytes;

		if (!a || !a->stack)
			continue;
		bytes = a->inuse_bytes;
		if (!(bytes >= 0.5) || !isfinite(bytes))
			continue;
		fold_stack(&t, m, a, prefix);
		if (t.err || !(v[k].stack = strdup(bytebuf_text(&t))))
			goto nomem;
		v[k++].value = (__u64)llround(bytes);
	}
	bytebuf_fini(&t);
	*lines = v;
	*nlines = k;
	return 0;
nomem:
	while (k--)
		free(v[k].stack);
	free(v);
	bytebuf_fini(&t);
	return -ENOMEM;
}

int export_folded_buf(struct mt_model *m, char **out, size_t *outlen)
{
	struct folded_line *v;
	struct bytebuf t;
	__u8 *data;
	size_t n, i, j;
	int rc = collect_lines(m, &v, &n);

	if (rc)
		return rc;
	qsort(v, n, sizeof(*v), cmp_line);
	bytebuf_init(&t);
	bytebuf_add(&t, "", 0); /* an empty model still yields "" */
	for (i = 0; i < n; i = j) {
		__u64 sum = 0;
		char num[32];

		/* stacks that differ only in addresses fold to the same line */
		for (j = i; j < n && !strcmp(v[i].stack, v[j].stack); j++)
			sum += v[j].value;
		bytebuf_puts(&t, v[i].stack);
		snprintf(num, sizeof(num), " %llu\n", (unsigned long long)sum);
		bytebuf_puts(&t, num);
	}
	for (i = 0; i < n; i++)
		free(v[i].stack);
	free(v);
	rc = bytebuf_take(&t, &data, outlen);
	if (!rc)
		*out = (char *)data;
	return rc;
}

int export_folded_file(struct mt_model *m, const char *path, char *err, size_t errlen)
{
	size_t len;
	char *buf;
	int rc = export_folded_buf(m, &buf, &len);

	if (rc) {
		snprintf(err, errlen, "cannot build folded stacks for %s: %s", path, strerror(-rc));
		return rc;
	}
	rc = export_write_file(path, buf, len, err, errlen);
	free(buf);
	return rc;
}

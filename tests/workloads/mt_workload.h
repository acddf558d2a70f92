/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * mt_workload.h - plumbing shared by the ground-truth workloads.
 *
 * A workload prints "READY pid=N", then makes no allocator call at all until
 * its measured phase starts, runs that phase, prints what the phase did as
 * one JSON line (the truth), and then makes no allocator call again until it
 * leaves with _exit() (no atexit handlers, no thread exits). Output goes
 * through write(2) from static buffers and a small formatter of its own,
 * never stdio, so the C runtime adds nothing to what memtop counts: memtop's
 * exact counters read after the phase must equal the truth's totals.
 *
 * Options every workload takes (all are --name=VALUE):
 *   --start=stdin|SECS|fifo:PATH
 *                       begin the phase on the first byte read from stdin
 *                       (default), SECS seconds after READY, or on the
 *                       first byte read from the FIFO PATH (for `memtop --
 *                       CMD`, whose child reads /dev/null: the test starts
 *                       it once memtop is ready, not after a guessed delay)
 *   --hold=stdin|SECS   after the truth, wait for a byte or EOF on stdin
 *                       (default), or SECS seconds; then _exit(0)
 *   --out=PATH          write READY and the truth to PATH instead of stdout
 *                       (for `memtop -- CMD`, whose stdout is memtop's)
 * Workload-specific numbers are read with wl_arg_u64()/wl_arg_double();
 * an option no one asked about is an error, so a typo cannot go unnoticed.
 *
 * The truth counts what memtop counts (docs: counting rules): alloc_calls
 * are malloc, calloc, realloc and reallocarray with a new size > 0 (with a
 * NULL pointer too: that is a malloc), posix_memalign, aligned_alloc,
 * memalign, valloc, pvalloc; alloc_bytes are the requested sizes (calloc:
 * nmemb * size); free_calls are free() of a non-NULL pointer and realloc(p, 0).
 * Per call site the truth also keeps the requested sizes with their counts,
 * and the sizes of the blocks the site still owns (and had at its peak), so
 * the tests can derive the sampling error of every estimate.
 */
#ifndef MEMTOP_WORKLOAD_H
#define MEMTOP_WORKLOAD_H

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* A site function: never inlined, cloned, merged with a twin or given a
 * suffixed name, so memtop must report exactly this name. */
#define WL_SITE __attribute__((noipa))

#define WL_MAX_SIZES 64
#define WL_JSON_MAX (256 * 1024)

/* Escape hatch for the volatile stores that keep allocations alive. */
static void *volatile wl_sink;

struct wl_opts {
	double start;           /* seconds after READY; < 0: first byte on stdin */
	const char *start_fifo; /* or on the FIFO's first byte */
	double hold;            /* seconds after the truth; < 0: byte or EOF on stdin */
};

/* Sizes with signed counts (a histogram of requested or live blocks). */
struct wl_hist {
	uint64_t size[WL_MAX_SIZES];
	int64_t count[WL_MAX_SIZES];
	int n;
};

/* Ground truth of one call site (one function). */
struct wl_site {
	const char *function;
	uint64_t alloc_calls;
	uint64_t free_calls;
	uint64_t alloc_bytes;
	int64_t inuse_bytes; /* bytes of blocks this site allocated, still live */
	int64_t inuse_objects;
	int64_t peak_inuse_bytes;
	struct wl_hist allocs;    /* requested sizes of every allocation call */
	struct wl_hist live;      /* sizes of the blocks still live */
	struct wl_hist peak_live; /* live sizes when inuse_bytes peaked */
};

static inline void wl_write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			_exit(3);
		buf += n;
		len -= (size_t)n;
	}
}

/* Fatal error of the workload itself: one line on stderr, exit 2. */
static inline void wl_die(const char *what, const char *detail)
{
	static const char prefix[] = "workload: ";

	wl_write_all(2, prefix, sizeof(prefix) - 1);
	wl_write_all(2, what, strlen(what));
	if (detail) {
		wl_write_all(2, ": ", 2);
		wl_write_all(2, detail, strlen(detail));
	}
	wl_write_all(2, "\n", 1);
	_exit(2);
}

/* ==== Time ==== */

static inline double wl_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static inline void wl_sleep(double secs)
{
	struct timespec ts, rem;

	if (secs <= 0)
		return;
	ts.tv_sec = (time_t)secs;
	ts.tv_nsec = (long)((secs - (double)ts.tv_sec) * 1e9);
	while (nanosleep(&ts, &rem) < 0 && errno == EINTR)
		ts = rem;
}

/* Spread `total` steps over `duration` seconds from t0: sleep until step
 * `done` is due. */
static inline void wl_pace(double t0, uint64_t done, uint64_t total, double duration)
{
	double due;

	if (!total || duration <= 0)
		return;
	due = t0 + duration * (double)done / (double)total;
	wl_sleep(due - wl_now());
}

/* ==== Options ==== */

static inline const char *wl_arg(int argc, char **argv, const char *name)
{
	size_t len = strlen(name);

	for (int i = 1; i < argc; i++)
		if (!strncmp(argv[i], "--", 2) && !strncmp(argv[i] + 2, name, len) &&
		    argv[i][2 + len] == '=')
			return argv[i] + 3 + len;
	return NULL;
}

static inline uint64_t wl_arg_u64(int argc, char **argv, const char *name, uint64_t def)
{
	const char *v = wl_arg(argc, argv, name);
	char *end;
	unsigned long long x;

	if (!v)
		return def;
	errno = 0;
	x = strtoull(v, &end, 0);
	if (errno || end == v || *end || *v == '-')
		wl_die("bad number", v);
	return x;
}

static inline double wl_arg_double(int argc, char **argv, const char *name, double def)
{
	const char *v = wl_arg(argc, argv, name);
	char *end;
	double x;

	if (!v)
		return def;
	errno = 0;
	x = strtod(v, &end);
	if (errno || end == v || *end || x < 0)
		wl_die("bad number", v);
	return x;
}

static inline double wl_arg_when(int argc, char **argv, const char *name)
{
	const char *v = wl_arg(argc, argv, name);

	if (!v || !strcmp(v, "stdin"))
		return -1;
	return wl_arg_double(argc, argv, name, -1);
}

/* Parse the shared options, reject unknown ones (known: NULL-terminated
 * names of the workload's own options) and redirect stdout for --out. */
static inline void wl_init(int argc, char **argv, const char *const *known, struct wl_opts *o)
{
	static const char *const shared[] = { "start", "hold", "out", NULL };
	const char *start, *out;

	for (int i = 1; i < argc; i++) {
		const char *eq = strchr(argv[i], '=');
		int ok = 0;

		if (strncmp(argv[i], "--", 2) || !eq)
			wl_die("options are --name=VALUE", argv[i]);
		for (int pass = 0; pass < 2 && !ok; pass++)
			for (const char *const *k = pass ? known : shared; k && *k; k++)
				if (strlen(*k) == (size_t)(eq - argv[i] - 2) &&
				    !strncmp(argv[i] + 2, *k, strlen(*k)))
					ok = 1;
		if (!ok)
			wl_die("unknown option", argv[i]);
	}
	start = wl_arg(argc, argv, "start");
	o->start_fifo = start && !strncmp(start, "fifo:", 5) ? start + 5 : NULL;
	o->start = o->start_fifo ? -1 : wl_arg_when(argc, argv, "start");
	o->hold = wl_arg_when(argc, argv, "hold");
	out = wl_arg(argc, argv, "out");
	if (out) {
		int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

		if (fd < 0 || dup2(fd, 1) < 0)
			wl_die("cannot open --out", out);
		close(fd);
	}
}

/* ==== Protocol ==== */

static inline char *wl_fmt_u64(char *end, uint64_t v)
{
	*--end = '\0';
	do {
		*--end = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	return end;
}

static inline void wl_ready(void)
{
	char num[24];
	const char *p = wl_fmt_u64(num + sizeof(num), (uint64_t)getpid());

	wl_write_all(1, "READY pid=", 10);
	wl_write_all(1, p, strlen(p));
	wl_write_all(1, "\n", 1);
}

static inline void wl_wait_start(const struct wl_opts *o)
{
	char c;
	ssize_t n;
	int fd = 0; /* stdin, or the FIFO */

	if (o->start >= 0) {
		wl_sleep(o->start);
		return;
	}
	if (o->start_fifo) {
		fd = open(o->start_fifo, O_RDONLY | O_CLOEXEC); /* waits for the writer */
		if (fd < 0)
			wl_die("cannot open --start", o->start_fifo);
	}
	do
		n = read(fd, &c, 1);
	while (n < 0 && errno == EINTR);
	if (fd)
		close(fd);
	if (n <= 0) /* nobody will ever start us: leave quietly */
		_exit(0);
}

static inline __attribute__((noreturn)) void wl_hold_exit(const struct wl_opts *o)
{
	char c;

	if (o->hold >= 0)
		wl_sleep(o->hold);
	else
		while (read(0, &c, 1) < 0 && errno == EINTR)
			;
	_exit(0);
}

/* ==== Truth bookkeeping ==== */

static inline void wl_hist_add(struct wl_hist *h, uint64_t size, int64_t delta)
{
	int i;

	for (i = 0; i < h->n; i++)
		if (h->size[i] == size)
			break;
	if (i == h->n) {
		if (h->n == WL_MAX_SIZES)
			wl_die("too many distinct sizes in one site", NULL);
		h->size[h->n] = size;
		h->count[h->n++] = 0;
	}
	h->count[i] += delta;
}

static inline void wl_site_merge_hist(struct wl_hist *dst, const struct wl_hist *src)
{
	for (int i = 0; i < src->n; i++)
		wl_hist_add(dst, src->size[i], src->count[i]);
}

/* One allocation call of `size` bytes by site s, which now owns the block. */
static inline void wl_site_alloc(struct wl_site *s, uint64_t size)
{
	s->alloc_calls++;
	s->alloc_bytes += size;
	wl_hist_add(&s->allocs, size, 1);
	wl_hist_add(&s->live, size, 1);
	s->inuse_bytes += (int64_t)size;
	s->inuse_objects++;
	if (s->inuse_bytes > s->peak_inuse_bytes) {
		s->peak_inuse_bytes = s->inuse_bytes;
		s->peak_live = s->live;
	}
}

/* A block of `size` bytes owned by site `owner` left the heap (freed, or
 * moved by realloc), without a free call being counted. */
static inline void wl_site_release(struct wl_site *owner, uint64_t size)
{
	wl_hist_add(&owner->live, size, -1);
	owner->inuse_bytes -= (int64_t)size;
	owner->inuse_objects--;
}

/* Site s made one counted free call of a block owned by `owner`. */
static inline void wl_site_free(struct wl_site *s, struct wl_site *owner, uint64_t size)
{
	s->free_calls++;
	wl_site_release(owner, size);
}

/* Add src's counts to dst (per-thread truths of one shared function). Peak
 * in-use of the sum is not known: it is bounded by the sum of the peaks. */
static inline void wl_site_merge(struct wl_site *dst, const struct wl_site *src)
{
	dst->alloc_calls += src->alloc_calls;
	dst->free_calls += src->free_calls;
	dst->alloc_bytes += src->alloc_bytes;
	dst->inuse_bytes += src->inuse_bytes;
	dst->inuse_objects += src->inuse_objects;
	dst->peak_inuse_bytes += src->peak_inuse_bytes;
	wl_site_merge_hist(&dst->allocs, &src->allocs);
	wl_site_merge_hist(&dst->live, &src->live);
	wl_site_merge_hist(&dst->peak_live, &src->peak_live);
}

/* ==== JSON ==== */

struct wl_json {
	char buf[WL_JSON_MAX];
	size_t len;
	int need_comma;
};

static inline void wl_json_raw(struct wl_json *j, const char *s)
{
	size_t n = strlen(s);

	if (j->len + n + 2 > sizeof(j->buf))
		wl_die("truth line too long", NULL);
	memcpy(j->buf + j->len, s, n);
	j->len += n;
}

static inline void wl_json_sep(struct wl_json *j)
{
	if (j->need_comma)
		wl_json_raw(j, ",");
	j->need_comma = 0;
}

static inline void wl_json_key(struct wl_json *j, const char *key)
{
	wl_json_sep(j);
	wl_json_raw(j, "\"");
	wl_json_raw(j, key);
	wl_json_raw(j, "\":");
}

static inline void wl_json_open(struct wl_json *j, const char *bracket)
{
	wl_json_sep(j);
	wl_json_raw(j, bracket);
}

static inline void wl_json_close(struct wl_json *j, const char *bracket)
{
	wl_json_raw(j, bracket);
	j->need_comma = 1;
}

static inline void wl_json_u64(struct wl_json *j, uint64_t v)
{
	char num[24];

	wl_json_sep(j);
	wl_json_raw(j, wl_fmt_u64(num + sizeof(num), v));
	j->need_comma = 1;
}

static inline void wl_json_i64(struct wl_json *j, int64_t v)
{
	if (v < 0) {
		wl_json_sep(j);
		wl_json_raw(j, "-");
		wl_json_u64(j, (uint64_t)-v);
	} else {
		wl_json_u64(j, (uint64_t)v);
	}
}

/* Identifiers only: no quoting is needed for the names workloads use. */
static inline void wl_json_str(struct wl_json *j, const char *s)
{
	wl_json_sep(j);
	wl_json_raw(j, "\"");
	wl_json_raw(j, s);
	wl_json_raw(j, "\"");
	j->need_comma = 1;
}

static inline void wl_json_kv(struct wl_json *j, const char *key, int64_t v)
{
	wl_json_key(j, key);
	wl_json_i64(j, v);
}

static inline void wl_json_hist(struct wl_json *j, const char *key, const struct wl_hist *h)
{
	wl_json_key(j, key);
	wl_json_open(j, "[");
	for (int i = 0; i < h->n; i++) {
		if (!h->count[i])
			continue;
		wl_json_open(j, "[");
		wl_json_u64(j, h->size[i]);
		wl_json_i64(j, h->count[i]);
		wl_json_close(j, "]");
	}
	wl_json_close(j, "]");
}

/* Print the truth line: {"truth": name, "pid", "time", totals, "sites":
 * [{"function", counts, "alloc_sizes", "live_sizes", "peak_live_sizes"}]}.
 * Totals are the sums over the sites, so every allocator call of the phase
 * must belong to one of them. */
static inline void wl_truth_print(const char *name, struct wl_site *const *sites, int nsites)
{
	static struct wl_json j;
	uint64_t calls = 0, frees = 0, bytes = 0;
	struct timespec ts;
	char num[24];

	for (int i = 0; i < nsites; i++) {
		calls += sites[i]->alloc_calls;
		frees += sites[i]->free_calls;
		bytes += sites[i]->alloc_bytes;
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	j.len = 0;
	j.need_comma = 0;
	wl_json_open(&j, "{");
	wl_json_key(&j, "truth");
	wl_json_str(&j, name);
	wl_json_kv(&j, "pid", getpid());
	wl_json_key(&j, "time");
	wl_json_u64(&j, (uint64_t)ts.tv_sec);
	wl_json_raw(&j, ".");
	wl_json_raw(&j, wl_fmt_u64(num + sizeof(num), 1000000 + (uint64_t)ts.tv_nsec / 1000) + 1);
	wl_json_kv(&j, "alloc_calls", (int64_t)calls);
	wl_json_kv(&j, "free_calls", (int64_t)frees);
	wl_json_kv(&j, "alloc_bytes", (int64_t)bytes);
	wl_json_key(&j, "sites");
	wl_json_open(&j, "[");
	for (int i = 0; i < nsites; i++) {
		const struct wl_site *s = sites[i];

		wl_json_open(&j, "{");
		wl_json_key(&j, "function");
		wl_json_str(&j, s->function);
		wl_json_kv(&j, "alloc_calls", (int64_t)s->alloc_calls);
		wl_json_kv(&j, "free_calls", (int64_t)s->free_calls);
		wl_json_kv(&j, "alloc_bytes", (int64_t)s->alloc_bytes);
		wl_json_kv(&j, "inuse_bytes", s->inuse_bytes);
		wl_json_kv(&j, "inuse_objects", s->inuse_objects);
		wl_json_kv(&j, "peak_inuse_bytes", s->peak_inuse_bytes);
		wl_json_hist(&j, "alloc_sizes", &s->allocs);
		wl_json_hist(&j, "live_sizes", &s->live);
		wl_json_hist(&j, "peak_live_sizes", &s->peak_live);
		wl_json_close(&j, "}");
	}
	wl_json_close(&j, "]");
	wl_json_close(&j, "}");
	wl_json_raw(&j, "\n");
	wl_write_all(1, j.buf, j.len);
}

#endif /* MEMTOP_WORKLOAD_H */

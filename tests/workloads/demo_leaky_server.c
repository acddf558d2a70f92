// cflags: -O2 -fno-omit-frame-pointer
/*
 * demo_leaky_server - the `make demo` workload: a pretend HTTP server that
 * runs until killed and prints nothing. Per request (--rps per second,
 * default 400):
 *
 *   serve_forever -> handle_request -> parse_headers   header strings, freed
 *                                       -> session_cache_leak   2.5 KiB
 *                                          session record kept forever: the leak
 *                 -> handle_request -> render_page + lru_cache_put   bounded
 *                                       LRU of 512 rendered pages (2-8 KiB)
 *                 -> handle_request -> build_response   64 KiB buffer, freed,
 *                                       after --work-us of CPU work on it
 *
 * The CPU work keeps the probes' cost small next to the server's own (as in
 * a real server), so memtop's default overhead budget leaves them on. At
 * the default rate memtop's 512 KiB sampling sees the leak (1 MiB/s) within
 * a few seconds, the LRU plateau at ~2.5 MiB and the churn on top. It stops
 * by itself after leaking 1 GiB so a forgotten demo cannot eat the machine.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mt_workload.h"

#define LRU_ENTRIES 512
#define LRU_BUCKETS 1024
#define NPATHS 4096
#define SESSION_BYTES 2560
#define RESPONSE_BYTES (64 * 1024)
#define LEAK_LIMIT (1024ull * 1024 * 1024)

struct session {
	struct session *next;
	uint64_t id;
	char user_agent[SESSION_BYTES - 16];
};

struct page {
	int path;       /* -1: slot unused */
	int prev, next; /* LRU list by index, most recent at head */
	int hnext;      /* hash chain */
	size_t len;
	char *body;
};

struct header {
	const char *name;
	char *value;
};

static struct session *sessions; /* the leak: nothing ever expires them */
static uint64_t leaked_bytes;
static struct page lru[LRU_ENTRIES];
static int lru_head = -1, lru_tail = -1, lru_used;
static int buckets[LRU_BUCKETS];
static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t rand_next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* Roughly Zipf: small path numbers are much more popular. */
static int pick_path(void)
{
	uint64_t r = rand_next();
	int bits = 1 + (int)(r % 12);

	return (int)((r >> 8) & ((1u << bits) - 1)) % NPATHS;
}

static void lru_unlink(int i)
{
	if (lru[i].prev >= 0)
		lru[lru[i].prev].next = lru[i].next;
	else
		lru_head = lru[i].next;
	if (lru[i].next >= 0)
		lru[lru[i].next].prev = lru[i].prev;
	else
		lru_tail = lru[i].prev;
}

static void lru_push_front(int i)
{
	lru[i].prev = -1;
	lru[i].next = lru_head;
	if (lru_head >= 0)
		lru[lru_head].prev = i;
	lru_head = i;
	if (lru_tail < 0)
		lru_tail = i;
}

static void bucket_remove(int i)
{
	int *pp = &buckets[lru[i].path % LRU_BUCKETS];

	while (*pp != i)
		pp = &lru[*pp].hnext;
	*pp = lru[i].hnext;
}

static struct page *lru_get(int path)
{
	for (int i = buckets[path % LRU_BUCKETS]; i >= 0; i = lru[i].hnext) {
		if (lru[i].path == path) {
			lru_unlink(i);
			lru_push_front(i);
			return &lru[i];
		}
	}
	return NULL;
}

WL_SITE static char *render_page(int path, size_t *len)
{
	size_t n = 2048 + (size_t)(path % 7) * 1024;
	char *body = malloc(n);

	memset(body, 'a' + path % 26, n);
	*len = n;
	return body;
}

/* Insert a rendered page, evicting the least recently used one when full. */
WL_SITE static struct page *lru_cache_put(int path, char *body, size_t len)
{
	int i;

	if (lru_used < LRU_ENTRIES) {
		i = lru_used++;
	} else {
		i = lru_tail;
		lru_unlink(i);
		bucket_remove(i);
		free(lru[i].body);
	}
	lru[i].path = path;
	lru[i].body = body;
	lru[i].len = len;
	lru[i].hnext = buckets[path % LRU_BUCKETS];
	buckets[path % LRU_BUCKETS] = i;
	lru_push_front(i);
	return &lru[i];
}

WL_SITE static void session_cache_leak(uint64_t id, const char *agent)
{
	struct session *s = malloc(sizeof(*s));

	s->id = id;
	snprintf(s->user_agent, sizeof(s->user_agent), "%s", agent);
	s->next = sessions;
	sessions = s;
	leaked_bytes += sizeof(*s);
}

WL_SITE static struct header *parse_headers(uint64_t req, int *count)
{
	static const char *const names[] = { "Host", "User-Agent", "Cookie" };
	int n = sizeof(names) / sizeof(names[0]);
	struct header *h = calloc((size_t)n, sizeof(*h));
	char value[160];

	for (int i = 0; i < n; i++) {
		int len = snprintf(value, sizeof(value), "%s-value-%llu-%d", names[i],
				   (unsigned long long)req, (int)(rand_next() % 100));

		h[i].name = names[i];
		h[i].value = malloc((size_t)len + 1 + (size_t)(rand_next() % 64));
		memcpy(h[i].value, value, (size_t)len + 1);
	}
	session_cache_leak(req, h[1].value);
	*count = n;
	return h;
}

/* Checksum the response again and again for `work_us` of CPU time: the
 * server's real work. */
WL_SITE static uint32_t compress_response(const char *buf, size_t len, double work_us)
{
	double end = wl_now() + work_us / 1e6;
	uint32_t h = 2166136261u;

	do
		for (size_t i = 0; i < len; i += 64)
			h = (h ^ (uint8_t)buf[i]) * 16777619u;
	while (wl_now() < end);
	return h;
}

WL_SITE static void build_response(const struct page *pg, double work_us)
{
	char *buf = malloc(RESPONSE_BYTES);
	size_t n = pg->len < RESPONSE_BYTES ? pg->len : RESPONSE_BYTES;

	memcpy(buf, pg->body, n);
	memset(buf + n, ' ', RESPONSE_BYTES - n);
	buf[0] = (char)compress_response(buf, RESPONSE_BYTES, work_us);
	wl_sink = buf; /* "send" */
	free(buf);
}

WL_SITE static void handle_request(uint64_t req, double work_us)
{
	int nh, path = pick_path();
	struct header *h = parse_headers(req, &nh);
	struct page *pg = lru_get(path);

	if (!pg) {
		size_t len;
		char *body = render_page(path, &len);

		pg = lru_cache_put(path, body, len);
	}
	build_response(pg, work_us);
	for (int i = 0; i < nh; i++)
		free(h[i].value);
	free(h);
}

WL_SITE static void serve_forever(uint64_t rps, double work_us)
{
	double t0 = wl_now();

	for (uint64_t req = 1; leaked_bytes < LEAK_LIMIT; req++) {
		handle_request(req, work_us);
		if (req % 10 == 0)
			wl_pace(t0, req, rps, 1.0);
	}
}

int main(int argc, char **argv)
{
	static const char *const known[] = { "rps", "work-us", NULL };
	struct wl_opts o;

	wl_init(argc, argv, known, &o);
	for (int i = 0; i < LRU_BUCKETS; i++)
		buckets[i] = -1;
	serve_forever(wl_arg_u64(argc, argv, "rps", 400), wl_arg_double(argc, argv, "work-us", 300));
	wl_die("leaked 1 GiB, stopping", NULL);
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * serve.c - the --serve HTTP server (serve.h): the listening socket, one
 * thread with a poll() loop over non-blocking connections, request
 * parsing and routing, and the hand-over of snapshots from the main loop.
 * What ADDR means is serve_addr.c's.
 *
 * Two sides share one mutex:
 *  - the main loop (serve_publish) renders /metrics every tick and the
 *    profiles while scrapers ask for them (PROFILE_IDLE_MS), and swaps
 *    them in as reference-counted blobs. It also owns the alloc baselines of
 *    ?seconds= requests: a connection that asks for one fills a slot
 *    (NEW); the next publish takes the baseline (RUNNING), the first one N
 *    seconds later builds the profile (DONE) and wakes the thread through
 *    an eventfd. Profiles are built outside the lock.
 *  - the server thread owns the sockets. It takes a reference to a blob
 *    under the lock and writes it without it, so a slow reader holds
 *    memory for one snapshot and never the main loop. A connection that
 *    goes away or times out while its slot is pending marks it CANCELLED;
 *    the main loop frees what it held.
 *
 * HTTP/1.0 and 1.1 requests, GET only, Connection: close on every answer.
 * The thread takes no signals: they stay with the main loop's signalfd.
 */
#include "export/serve.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/uio.h>

#include "export/metrics.h"
#include "export/pprof.h"
#include "export/serve_peer.h"
#include "util/clock.h"

/* Room for a burst of connections: one client's over its cap are taken
 * and closed at once, and must not fill the queue in front of others. */
#define LISTEN_BACKLOG 128
/* A ?seconds= request waits N seconds, plus up to two intervals for the
 * ticks that start and end it, plus this. */
#define WAIT_SLACK_S 10
#define DRAIN_MS 1000
/* Profiles are built every tick only while someone asks for them: after
 * this long without a profile request the main loop stops, and the next
 * request waits for one tick. */
#define PROFILE_IDLE_MS (10 * 60 * 1000)

/* ==== shared state ========================================================= */

struct blob {
	int refs; /* under serve.lock */
	size_t len;
	char data[];
};

enum kind { K_HEAP, K_ALLOCS, K_METRICS, K_NKINDS };

static const char *const kind_default_type[] = {
	[K_HEAP] = "inuse_space",
	[K_ALLOCS] = "alloc_space",
};
static const char *const kind_name[] = {
	[K_HEAP] = "heap",
	[K_ALLOCS] = "allocs",
	[K_METRICS] = "metrics",
};

enum slot_state { SLOT_FREE, SLOT_NEW, SLOT_RUNNING, SLOT_DONE, SLOT_CANCELLED };

/* A profile a connection waits for: the current one (seconds 0, before
 * the first profile was built) or the allocations of the next seconds. */
struct slot {
	enum slot_state state;
	enum kind kind;
	int seconds;
	struct blob *result; /* SLOT_DONE; NULL: building failed */
	/* main loop only */
	struct pprof_delta *delta; /* the baseline taken at start_ns */
	__u64 start_ns;
};

/* C_DRAIN: the answer is out and our side shut down; what the client
 * still sends is read and dropped until it closes (or a second passes),
 * so closing never resets the connection under an unread answer. */
enum conn_state { C_FREE, C_READ, C_WAIT, C_WRITE, C_DRAIN };

struct conn {
	int fd;
	enum conn_state state;
	__s64 deadline_ms;
	size_t used;
	char req[SERVE_MAX_REQUEST];
	char head[512];
	size_t hlen, off; /* off runs over head, then body */
	struct blob *body;
	const char *text; /* a static body, when body is NULL */
	size_t text_len;
	enum kind kind;
	int slot;               /* -1: none */
	int code;               /* the answer's status; 0: none yet */
	struct serve_peer peer; /* who, for SERVE_MAX_PER_CLIENT */
};

struct serve {
	int listen_fd;
	int wake_fd;
	char addr[80];
	bool loopback;
	pthread_t thread;
	bool thread_on;

	pthread_mutex_t lock;
	struct blob *current[K_NKINDS];
	bool want_profiles;    /* a profile was asked for: build them every tick */
	__s64 last_profile_ms; /* when, on the monotonic clock */
	double interval_s;
	struct slot slots[SERVE_MAX_CONNS];
	bool closing;
	struct serve_status st; /* address set before the thread starts */

	/* server thread only */
	struct conn conns[SERVE_MAX_CONNS];
};

static struct blob *blob_new(const void *data, size_t len)
{
	struct blob *b = malloc(sizeof(*b) + len);

	if (!b)
		return NULL;
	b->refs = 1;
	b->len = len;
	memcpy(b->data, data, len);
	return b;
}

/* Under s->lock. */
static void blob_put(struct blob *b)
{
	if (b && --b->refs == 0)
		free(b);
}

static void wake(struct serve *s)
{
	__u64 one = 1;

	if (write(s->wake_fd, &one, sizeof(one)) < 0) {
		/* the counter is saturated: the thread is awake anyway */
	}
}

/* ==== the main loop's side ===================================================== */

/* The gzipped heap profile of m; with a baseline, alloc_* since it. */
static struct blob *build_profile(struct mt_model *m, enum kind k, struct pprof_delta *delta,
				  __s64 duration_ns)
{
	struct pprof_model_opts o = { .delta = delta, .duration_ns = duration_ns };
	struct pprof *p = pprof_from_model(m, &o);
	struct blob *b = NULL;
	__u8 *gz = NULL;
	size_t len = 0;

	if (!p)
		return NULL;
	if (!pprof_set_default_sample_type(p, kind_default_type[k]) && !pprof_encode_gz(p, &gz, &len))
		b = blob_new(gz, len);
	free(gz);
	pprof_free(p);
	return b;
}

static void swap_current(struct serve *s, enum kind k, struct blob *b)
{
	struct blob *old;

	if (!b)
		return; /* out of memory: the previous snapshot stays */
	pthread_mutex_lock(&s->lock);
	old = s->current[k];
	s->current[k] = b;
	blob_put(old);
	pthread_mutex_unlock(&s->lock);
}

/* One slot's turn: start its baseline, or build its profile when due.
 * The slot's state is read and written under the lock, profiles are
 * built outside it. Returns whether a waiting connection can be answered. */
static bool step_slot(struct serve *s, struct slot *sl, struct mt_model *m, __u64 now)
{
	enum slot_state st, next;
	struct blob *b = NULL;

	pthread_mutex_lock(&s->lock);
	st = sl->state;
	if (st == SLOT_CANCELLED)
		sl->state = SLOT_FREE;
	if (st == SLOT_NEW && sl->seconds == 0) {
		/* the current profile, built just before; none yet when the
		 * request came after this tick read want_profiles: the next */
		b = s->current[sl->kind];
		if (b) {
			b->refs++;
			sl->result = b;
			sl->state = SLOT_DONE;
		}
	}
	pthread_mutex_unlock(&s->lock);
	if (st == SLOT_CANCELLED) {
		pprof_delta_free(sl->delta);
		sl->delta = NULL;
		return false;
	}
	if (st == SLOT_NEW && sl->seconds == 0)
		return b != NULL;

	if (st == SLOT_NEW) {
		struct pprof_model_opts o = { 0 };
		struct pprof *p = NULL;

		sl->delta = pprof_delta_new();
		o.delta = sl->delta;
		if (sl->delta)
			p = pprof_from_model(m, &o); /* takes the baseline */
		pprof_free(p);
		sl->start_ns = now;
		next = p ? SLOT_RUNNING : SLOT_DONE; /* failed: answered with 500 */
	} else if (st == SLOT_RUNNING && now >= sl->start_ns + (__u64)sl->seconds * 1000000000ULL) {
		b = build_profile(m, sl->kind, sl->delta, (__s64)(now - sl->start_ns));
		next = SLOT_DONE;
	} else {
		return false;
	}
	if (next == SLOT_DONE) {
		pprof_delta_free(sl->delta);
		sl->delta = NULL;
	}
	pthread_mutex_lock(&s->lock);
	if (sl->state == SLOT_CANCELLED) {
		/* the client left while this was built */
		blob_put(b);
		sl->state = SLOT_FREE;
		next = SLOT_FREE;
	} else {
		sl->result = b;
		sl->state = next;
	}
	pthread_mutex_unlock(&s->lock);
	if (next == SLOT_FREE) {
		pprof_delta_free(sl->delta);
		sl->delta = NULL;
	}
	return next == SLOT_DONE;
}

void serve_publish(struct serve *s, struct mt_model *m, const struct mt_status *st, __u64 now_ns)
{
	char *text = NULL;
	size_t len = 0, i;
	bool want, woke = false;

	if (!s)
		return;
	if (!metrics_text(m, st, clock_wall_s(), &text, &len))
		swap_current(s, K_METRICS, blob_new(text, len));
	free(text);
	pthread_mutex_lock(&s->lock);
	if (s->want_profiles &&
	    ((__s64)(clock_mono_ns() / 1000000)) - s->last_profile_ms > PROFILE_IDLE_MS) {
		/* nobody scrapes them any more: a stale one is never served */
		s->want_profiles = false;
		blob_put(s->current[K_HEAP]);
		blob_put(s->current[K_ALLOCS]);
		s->current[K_HEAP] = s->current[K_ALLOCS] = NULL;
	}
	want = s->want_profiles;
	s->interval_s = model_interval_s(m);
	pthread_mutex_unlock(&s->lock);
	if (want) {
		swap_current(s, K_HEAP, build_profile(m, K_HEAP, NULL, 0));
		swap_current(s, K_ALLOCS, build_profile(m, K_ALLOCS, NULL, 0));
	}
	for (i = 0; i < SERVE_MAX_CONNS; i++)
		woke |= step_slot(s, &s->slots[i], m, now_ns);
	if (woke)
		wake(s);
}

/* ==== HTTP ==================================================================== */

static const char *reason(int code)
{
	switch (code) {
	case 200:
		return "OK";
	case 400:
		return "Bad Request";
	case 404:
		return "Not Found";
	case 405:
		return "Method Not Allowed";
	case 408:
		return "Request Timeout";
	case 431:
		return "Request Header Fields Too Large";
	case 500:
		return "Internal Server Error";
	case 503:
		return "Service Unavailable";
	default:
		return "Error";
	}
}

#define PPROF_TYPE "application/octet-stream"

static void respond(struct conn *c, int code, const char *type, struct blob *body, const char *text)
{
	size_t blen = body ? body->len : strlen(text);
	char disp[96] = "";
	int n;

	if (!strcmp(type, PPROF_TYPE))
		snprintf(disp, sizeof(disp), "Content-Disposition: attachment; filename=\"%s\"\r\n",
			 kind_name[c->kind]);
	n = snprintf(c->head, sizeof(c->head),
		     "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n%s%s"
		     "X-Content-Type-Options: nosniff\r\nCache-Control: no-store\r\n"
		     "Connection: close\r\n\r\n",
		     code, reason(code), type, blen, code == 405 ? "Allow: GET\r\n" : "", disp);
	c->hlen = n > 0 && (size_t)n < sizeof(c->head) ? (size_t)n : 0;
	c->off = 0;
	c->body = body;
	c->text = body ? NULL : text;
	c->text_len = body ? 0 : blen;
	c->state = C_WRITE;
	c->deadline_ms = ((__s64)(clock_mono_ns() / 1000000)) + SERVE_WRITE_TIMEOUT_S * 1000;
	c->code = code;
}

static void respond_error(struct conn *c, int code, const char *text)
{
	respond(c, code, "text/plain; charset=utf-8", NULL, text);
}

/* seconds= of a query, Go's way: absent or 0, the current profile; 1 to
 * SERVE_MAX_SECONDS, a delta; else -EINVAL. debug= other than 0 asks for
 * a text format memtop does not write: -ENOTSUP. Other keys are ignored. */
static int query_seconds(const char *q, int *seconds)
{
	*seconds = 0;
	while (q && *q) {
		size_t n = strcspn(q, "&");

		if (!strncmp(q, "seconds=", 8)) {
			long v = 0;
			const char *p = q + 8;

			if (p == q + n)
				return -EINVAL;
			for (; p < q + n; p++) {
				if (*p < '0' || *p > '9' ||
				    (v = v * 10 + (*p - '0')) > SERVE_MAX_SECONDS)
					return -EINVAL;
			}
			*seconds = (int)v;
		} else if (!strncmp(q, "debug=", 6) && !(n == 7 && q[6] == '0')) {
			return -ENOTSUP;
		}
		q += n;
		if (*q == '&')
			q++;
	}
	return 0;
}

static int take_slot(struct serve *s, enum kind k, int seconds)
{
	int i;

	for (i = 0; i < SERVE_MAX_CONNS; i++) {
		struct slot *sl = &s->slots[i];

		if (sl->state != SLOT_FREE)
			continue;
		sl->state = SLOT_NEW;
		sl->kind = k;
		sl->seconds = seconds;
		sl->result = NULL;
		return i;
	}
	return -1;
}

/* A profile request: the current snapshot, or a slot to wait on. */
static void route_profile(struct serve *s, struct conn *c, enum kind k, const char *query)
{
	struct blob *b = NULL;
	double wait_s;
	int seconds, e = query_seconds(query, &seconds);

	c->kind = k;
	if (e == -ENOTSUP) {
		respond_error(c, 400, "only the protobuf format is served: drop debug=\n");
		return;
	}
	if (e) {
		respond_error(c, 400, "seconds= must be a whole number from 0 to 300\n");
		return;
	}
	pthread_mutex_lock(&s->lock);
	s->want_profiles = true;
	s->last_profile_ms = ((__s64)(clock_mono_ns() / 1000000));
	if (!seconds && s->current[k]) {
		b = s->current[k];
		b->refs++;
	} else {
		c->slot = take_slot(s, k, seconds);
	}
	wait_s = seconds + 2 * (s->interval_s > 0 ? s->interval_s : 1) + WAIT_SLACK_S;
	pthread_mutex_unlock(&s->lock);
	if (b) {
		respond(c, 200, PPROF_TYPE, b, NULL);
	} else if (c->slot < 0) {
		respond_error(c, 503, "too many profiles are being collected\n");
	} else {
		c->state = C_WAIT;
		c->deadline_ms = ((__s64)(clock_mono_ns() / 1000000)) + (__s64)(wait_s * 1000);
	}
}

static const char index_text[] =
	"memtop\n\n"
	"/debug/pprof/heap     heap profile (gzipped profile.proto), default inuse_space\n"
	"/debug/pprof/allocs   the same, default alloc_space; ?seconds=N: allocations of the next N s\n"
	"/metrics              Prometheus text format\n";

/* The request is complete in c->req (headers ended). */
static void route(struct serve *s, struct conn *c)
{
	char method[16], target[2048], version[16];
	char *query;
	struct blob *b = NULL;

	c->req[c->used < sizeof(c->req) ? c->used : sizeof(c->req) - 1] = '\0';
	if (sscanf(c->req, "%15[A-Z] %2047[^ \r\n] %15[^ \r\n]", method, target, version) != 3 ||
	    target[0] != '/' || (strcmp(version, "HTTP/1.1") && strcmp(version, "HTTP/1.0"))) {
		respond_error(c, 400, "bad request\n");
		return;
	}
	if (strcmp(method, "GET")) {
		respond_error(c, 405, "only GET\n");
		return;
	}
	query = strchr(target, '?');
	if (query)
		*query++ = '\0';
	if (!strcmp(target, "/debug/pprof/heap")) {
		route_profile(s, c, K_HEAP, query);
	} else if (!strcmp(target, "/debug/pprof/allocs")) {
		route_profile(s, c, K_ALLOCS, query);
	} else if (!strcmp(target, "/metrics")) {
		c->kind = K_METRICS;
		pthread_mutex_lock(&s->lock);
		b = s->current[K_METRICS];
		if (b)
			b->refs++;
		pthread_mutex_unlock(&s->lock);
		if (b)
			respond(c, 200, "text/plain; version=0.0.4; charset=utf-8", b, NULL);
		else
			respond_error(c, 503, "no interval closed yet\n");
	} else if (!strcmp(target, "/")) {
		respond_error(c, 200, index_text);
	} else {
		respond_error(c, 404, "not found\n");
	}
}

/* ==== the server thread ============================================================ */

static void conn_close(struct serve *s, struct conn *c)
{
	pthread_mutex_lock(&s->lock);
	s->st.open--;
	if (c->slot >= 0) {
		struct slot *sl = &s->slots[c->slot];

		if (sl->state == SLOT_DONE) {
			blob_put(sl->result);
			sl->result = NULL;
			sl->state = SLOT_FREE;
		} else if (sl->state != SLOT_FREE) {
			sl->state = SLOT_CANCELLED;
		}
	}
	blob_put(c->body);
	pthread_mutex_unlock(&s->lock);
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	c->body = NULL;
	c->slot = -1;
	c->state = C_FREE;
}

/* Answer 503 and close at once: turned away without holding a slot. */
static void refuse(struct serve *s, int fd, bool per_client)
{
	static const char busy[] = "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n"
				   "Connection: close\r\n\r\n";
	static const char client[] =
		"HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\n"
		"Content-Length: 39\r\nConnection: close\r\n\r\n"
		"too many connections from this client\r\n";
	const char *a = per_client ? client : busy;

	if (send(fd, a, strlen(a), MSG_DONTWAIT | MSG_NOSIGNAL) < 0) {
		/* best effort */
	}
	close(fd);
	pthread_mutex_lock(&s->lock);
	s->st.refused++;
	pthread_mutex_unlock(&s->lock);
}

/* At most this many connections taken per turn of the loop: a client
 * that connects as fast as it can does not keep the others waiting on
 * the accept loop. */
#define ACCEPT_PER_TURN 64

static void on_accept(struct serve *s)
{
	int fd, i, free_i, same, turn;

	for (turn = 0; turn < ACCEPT_PER_TURN &&
		       (fd = accept4(s->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0;
	     turn++) {
		struct serve_peer peer;

		serve_peer_of(fd, &peer);
		for (i = 0, free_i = -1, same = 0; i < SERVE_MAX_CONNS; i++) {
			if (s->conns[i].state == C_FREE) {
				if (free_i < 0)
					free_i = i;
			} else if (serve_peer_same(&s->conns[i].peer, &peer)) {
				same++;
			}
		}
		if (same >= SERVE_MAX_PER_CLIENT || free_i < 0) {
			refuse(s, fd, same >= SERVE_MAX_PER_CLIENT);
			continue;
		}
		pthread_mutex_lock(&s->lock);
		s->st.open++;
		pthread_mutex_unlock(&s->lock);
		s->conns[free_i] =
			(struct conn){ .fd = fd,
				       .state = C_READ,
				       .slot = -1,
				       .peer = peer,
				       .deadline_ms = ((__s64)(clock_mono_ns() / 1000000)) +
						      SERVE_READ_TIMEOUT_S * 1000 };
	}
}

static void on_readable(struct serve *s, struct conn *c)
{
	ssize_t n = recv(c->fd, c->req + c->used, sizeof(c->req) - 1 - c->used, 0);

	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
		conn_close(s, c);
		return;
	}
	if (n < 0)
		return;
	c->used += (size_t)n;
	c->req[c->used] = '\0';
	if (strstr(c->req, "\r\n\r\n") || strstr(c->req, "\n\n"))
		route(s, c);
	else if (c->used >= sizeof(c->req) - 1)
		respond_error(c, 431, "request too large\n");
}

static void on_writable(struct serve *s, struct conn *c)
{
	const char *body = c->body ? c->body->data : c->text;
	size_t blen = c->body ? c->body->len : c->text_len, total = c->hlen + blen;
	struct iovec iov[2];
	int n = 0;
	ssize_t w;

	if (c->off < c->hlen)
		iov[n++] = (struct iovec){ c->head + c->off, c->hlen - c->off };
	if (blen) {
		size_t boff = c->off > c->hlen ? c->off - c->hlen : 0;

		iov[n++] = (struct iovec){ (void *)(body + boff), blen - boff };
	}
	w = n ? writev(c->fd, iov, n) : 0;
	if (w < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (w < 0) {
		conn_close(s, c);
		return;
	}
	c->off += (size_t)w;
	if (c->off < total)
		return;
	pthread_mutex_lock(&s->lock);
	if (c->code == 200)
		s->st.answered++;
	else
		s->st.errors++;
	pthread_mutex_unlock(&s->lock);
	shutdown(c->fd, SHUT_WR);
	c->state = C_DRAIN;
	c->deadline_ms = ((__s64)(clock_mono_ns() / 1000000)) + DRAIN_MS;
}

/* At most this many reads of a draining client per turn of the loop. */
#define DRAIN_READS_PER_TURN 16

/* Read what the client still sends, to its end: a client that closed
 * behind the rest of its request frees its slot in this turn, before the
 * turn's new connections are counted against its cap. */
static void on_drain(struct serve *s, struct conn *c)
{
	char junk[4096];
	int i;

	for (i = 0; i < DRAIN_READS_PER_TURN; i++) {
		ssize_t n = recv(c->fd, junk, sizeof(junk), 0);

		if (n > 0)
			continue;
		if (n == 0 || (errno != EAGAIN && errno != EINTR))
			conn_close(s, c);
		return;
	}
}

/* Connections whose ?seconds= profile is ready. */
static void collect_done(struct serve *s)
{
	size_t i;

	for (i = 0; i < SERVE_MAX_CONNS; i++) {
		struct conn *c = &s->conns[i];
		struct slot *sl;
		struct blob *b;

		if (c->state != C_WAIT)
			continue;
		sl = &s->slots[c->slot];
		pthread_mutex_lock(&s->lock);
		if (sl->state != SLOT_DONE) {
			pthread_mutex_unlock(&s->lock);
			continue;
		}
		b = sl->result;
		sl->result = NULL;
		sl->state = SLOT_FREE;
		c->slot = -1;
		pthread_mutex_unlock(&s->lock);
		if (b)
			respond(c, 200, PPROF_TYPE, b, NULL);
		else
			respond_error(c, 500, "the profile could not be built\n");
	}
}

static void *serve_main(void *arg)
{
	struct serve *s = arg;
	struct pollfd pfd[SERVE_MAX_CONNS + 2];
	int map[SERVE_MAX_CONNS];

	for (;;) {
		__s64 now = ((__s64)(clock_mono_ns() / 1000000)), next = now + 1000;
		int n = 2, i, timeout;

		pthread_mutex_lock(&s->lock);
		if (s->closing) {
			pthread_mutex_unlock(&s->lock);
			break;
		}
		pthread_mutex_unlock(&s->lock);
		pfd[0] = (struct pollfd){ .fd = s->listen_fd, .events = POLLIN };
		pfd[1] = (struct pollfd){ .fd = s->wake_fd, .events = POLLIN };
		for (i = 0; i < SERVE_MAX_CONNS; i++) {
			struct conn *c = &s->conns[i];

			if (c->state == C_FREE)
				continue;
			if (now >= c->deadline_ms) {
				if (c->state == C_READ)
					respond_error(c, 408, "request timed out\n");
				else
					conn_close(s, c);
				continue;
			}
			if (c->deadline_ms < next)
				next = c->deadline_ms;
			if (c->state == C_WAIT)
				continue;
			map[n - 2] = i;
			pfd[n++] =
				(struct pollfd){ .fd = c->fd,
						 .events = c->state == C_WRITE ? POLLOUT : POLLIN };
		}
		timeout = (int)(next > now ? next - now : 0);
		if (poll(pfd, (nfds_t)n, timeout) < 0 && errno != EINTR)
			break;
		if (pfd[1].revents) {
			__u64 v;

			if (read(s->wake_fd, &v, sizeof(v)) < 0) {
				/* nothing to read: woken anyway */
			}
			collect_done(s);
		}
		for (i = 2; i < n; i++) {
			struct conn *c = &s->conns[map[i - 2]];

			if (!pfd[i].revents || c->state == C_FREE)
				continue;
			if (c->state == C_READ && (pfd[i].revents & (POLLIN | POLLHUP | POLLERR)))
				on_readable(s, c);
			else if (c->state == C_WRITE)
				on_writable(s, c);
			else if (c->state == C_DRAIN)
				on_drain(s, c);
		}
		if (pfd[0].revents & POLLIN)
			on_accept(s);
	}
	return NULL;
}

/* ==== life cycle ====================================================================== */

static int bind_listen(struct serve *s, const char *spec, char *err, size_t errlen)
{
	struct sockaddr_storage ss, got = { 0 };
	socklen_t len, glen = sizeof(got);
	char host[INET6_ADDRSTRLEN] = "";
	int one = 1, e;

	e = serve_parse_addr(spec, &ss, &len, &s->loopback, err, errlen);
	if (e)
		return e;
	s->listen_fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (s->listen_fd < 0)
		goto fail;
	setsockopt(s->listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ss.ss_family == AF_INET6)
		setsockopt(s->listen_fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(s->listen_fd, (struct sockaddr *)&ss, len) || listen(s->listen_fd, LISTEN_BACKLOG) ||
	    getsockname(s->listen_fd, (struct sockaddr *)&got, &glen))
		goto fail;
	if (got.ss_family == AF_INET6) {
		struct sockaddr_in6 a;

		memcpy(&a, &got, sizeof(a));
		inet_ntop(AF_INET6, &a.sin6_addr, host, sizeof(host));
		snprintf(s->addr, sizeof(s->addr), "[%s]:%u", host, ntohs(a.sin6_port));
	} else {
		struct sockaddr_in a;

		memcpy(&a, &got, sizeof(a));
		inet_ntop(AF_INET, &a.sin_addr, host, sizeof(host));
		snprintf(s->addr, sizeof(s->addr), "%s:%u", host, ntohs(a.sin_port));
	}
	return 0;
fail:
	e = -errno;
	snprintf(err, errlen, "--serve %s: %s", spec, strerror(errno));
	return e;
}

struct serve *serve_start(const char *spec, char *err, size_t errlen)
{
	struct serve *s = calloc(1, sizeof(*s));
	sigset_t all, old;
	int e, i;

	if (!s) {
		snprintf(err, errlen, "--serve: %s", strerror(ENOMEM));
		return NULL;
	}
	s->listen_fd = -1;
	s->wake_fd = -1;
	for (i = 0; i < SERVE_MAX_CONNS; i++) {
		s->conns[i].fd = -1;
		s->conns[i].slot = -1;
	}
	pthread_mutex_init(&s->lock, NULL);
	e = bind_listen(s, spec, err, errlen);
	if (!e) {
		s->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		if (s->wake_fd < 0) {
			e = -errno;
			snprintf(err, errlen, "--serve: eventfd: %s", strerror(-e));
		}
	}
	if (!e) {
		/* the thread takes no signals: they stay with the main loop */
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		e = -pthread_create(&s->thread, NULL, serve_main, s);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		if (e)
			snprintf(err, errlen, "--serve: cannot start its thread: %s", strerror(-e));
		s->thread_on = !e;
	}
	if (e) {
		serve_stop(s);
		errno = -e;
		return NULL;
	}
	return s;
}

const char *serve_address(const struct serve *s)
{
	return s->addr;
}

void serve_get_status(struct serve *s, struct serve_status *out)
{
	pthread_mutex_lock(&s->lock);
	*out = s->st;
	pthread_mutex_unlock(&s->lock);
	snprintf(out->address, sizeof(out->address), "%s", s->addr);
}

bool serve_is_loopback(const struct serve *s)
{
	return s->loopback;
}

void serve_stop(struct serve *s)
{
	int i;

	if (!s)
		return;
	if (s->thread_on) {
		pthread_mutex_lock(&s->lock);
		s->closing = true;
		pthread_mutex_unlock(&s->lock);
		wake(s);
		pthread_join(s->thread, NULL);
	}
	for (i = 0; i < SERVE_MAX_CONNS; i++)
		if (s->conns[i].state != C_FREE)
			conn_close(s, &s->conns[i]);
	for (i = 0; i < SERVE_MAX_CONNS; i++) {
		blob_put(s->slots[i].result);
		pprof_delta_free(s->slots[i].delta);
	}
	for (i = 0; i < K_NKINDS; i++)
		blob_put(s->current[i]);
	if (s->listen_fd >= 0)
		close(s->listen_fd);
	if (s->wake_fd >= 0)
		close(s->wake_fd);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_push.c - the Pyroscope pusher against a tiny HTTP server running on
 * a thread of this test (127.0.0.1, an ephemeral port): request shape
 * (URL, labels, gzipped pprof body), one profile per target, retry with
 * backoff after a 5xx, giving up on a 4xx, an unreachable endpoint that
 * is reported and never blocks, and URL building edge cases.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "export/push.h"
#include "util/strpool.h"
#include "target_fixture.h"
#include "pbdec.h"

/* ==== a one-thread HTTP server ======================================== */

#define MAXREQ 16

struct server {
	int fd;
	int port;
	pthread_t thread;
	pthread_mutex_t lock;
	int statuses[MAXREQ]; /* answer to the n-th request; 0: 200 */
	char targets[MAXREQ][1024];
	__u8 *bodies[MAXREQ];
	size_t lens[MAXREQ];
	int nreq;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Read one request from c: its target (path and query) and body. */
static int read_request(int c, char *target, size_t tlen, __u8 **body, size_t *blen)
{
	char head[8192], *end, *cl;
	size_t have = 0, want;
	ssize_t n;

	while (!(end = memmem(head, have, "\r\n\r\n", 4))) {
		n = read(c, head + have, sizeof(head) - 1 - have);
		if (n <= 0)
			return -1;
		have += (size_t)n;
	}
	head[have] = '\0';
	if (sscanf(head, "POST %1023s HTTP/1.1", target) != 1)
		return -1;
	(void)tlen;
	cl = strcasestr(head, "Content-Length:");
	want = cl ? strtoul(cl + 15, NULL, 10) : 0;
	*body = malloc(want + 1);
	*blen = have - (size_t)(end + 4 - head);
	memcpy(*body, end + 4, *blen);
	while (*blen < want) {
		n = read(c, *body + *blen, want - *blen);
		if (n <= 0)
			return -1;
		*blen += (size_t)n;
	}
	return 0;
}

static void *server_main(void *arg)
{
	struct server *s = arg;
	int c;

	while ((c = accept(s->fd, NULL, NULL)) >= 0) {
		char reply[128];
		int i, status;

		pthread_mutex_lock(&s->lock);
		i = s->nreq < MAXREQ ? s->nreq : MAXREQ - 1;
		pthread_mutex_unlock(&s->lock);
		if (read_request(c, s->targets[i], sizeof(s->targets[i]), &s->bodies[i], &s->lens[i])) {
			close(c);
			continue;
		}
		status = s->statuses[i] ? s->statuses[i] : 200;
		snprintf(reply, sizeof(reply),
			 "HTTP/1.1 %d X\r\nContent-Length: 10\r\nConnection: close\r\n\r\nreason %03d",
			 status, status % 1000);
		if (write(c, reply, strlen(reply)) < 0)
			perror("write");
		close(c);
		pthread_mutex_lock(&s->lock);
		s->nreq++;
		pthread_mutex_unlock(&s->lock);
	}
	return NULL;
}

static void server_start(struct server *s)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t alen = sizeof(a);

	memset(s, 0, sizeof(*s));
	pthread_mutex_init(&s->lock, NULL);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	s->fd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(s->fd >= 0);
	assert_int_equal(bind(s->fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(s->fd, 16), 0);
	assert_int_equal(getsockname(s->fd, (struct sockaddr *)&a, &alen), 0);
	s->port = ntohs(a.sin_port);
	assert_int_equal(pthread_create(&s->thread, NULL, server_main, s), 0);
}

static void server_stop(struct server *s)
{
	int i;

	shutdown(s->fd, SHUT_RDWR);
	close(s->fd);
	pthread_join(s->thread, NULL);
	for (i = 0; i < MAXREQ; i++)
		free(s->bodies[i]);
	pthread_mutex_destroy(&s->lock);
}

static int server_requests(struct server *s)
{
	int n;

	pthread_mutex_lock(&s->lock);
	n = s->nreq;
	pthread_mutex_unlock(&s->lock);
	return n;
}

/* Wait until the pusher is idle (nothing pending) or timeout_s passes. */
static void wait_idle(struct push *p, double timeout_s)
{
	double end = now_s() + timeout_s;
	struct push_status st;

	do {
		usleep(20000);
		push_get_status(p, &st);
	} while (st.pending && now_s() < end);
}

/* Until the pusher has failed at least n times or timeout_s passes; its
 * status then in *st. */
static void wait_failed(struct push *p, unsigned long n, double timeout_s, struct push_status *st)
{
	double end = now_s() + timeout_s;

	for (;;) {
		push_get_status(p, st);
		if (st->failed >= n || now_s() >= end)
			return;
		usleep(5000);
	}
}

/* ==== a model with two targets ======================================== */

static struct mt_model *model_two(void)
{
	struct mt_model_opts o = { .rate = 1 };
	struct mt_model *m = model_new(&o);
	struct mt_frame f = {
		.addr = 0x401000,
		.rel_addr = 0x1000,
		.function = strpool_intern("leak_site"),
		.module = strpool_intern("app"),
		.module_path = strpool_intern("/usr/bin/app"),
	};
	struct mt_sample_in in = { .ts_ns = 1, .size = 100, .frames = &f, .nframes = 1 };
	struct mt_target *t;

	assert_non_null(m);
	t = test_target(m, 11);
	snprintf(t->comm, sizeof(t->comm), "my app"); /* a space: sanitized */
	t->alive = true;
	t = test_target(m, 22);
	snprintf(t->comm, sizeof(t->comm), "idle");
	t->alive = true;
	in.pid = 11;
	in.addr = 0x1000;
	assert_int_equal(model_apply(m, MT_INPUT_ALLOC(&in)), 0);
	model_apply(m, MT_INPUT_TICK(5000000000ULL));
	return m;
}

static struct push *pusher(int port, double backoff_max)
{
	struct push_opts o = { .host = "node-1", .every_s = 1, .backoff_max_s = backoff_max };
	char url[64];
	struct push *p;

	snprintf(url, sizeof(url), "http://127.0.0.1:%d/", port);
	o.url = url;
	p = push_new(&o);
	assert_non_null(p);
	return p;
}

static void test_push_request(void **state)
{
	struct mt_model *m = model_two();
	struct server s;
	struct push_status st;
	struct push *p;
	uint8_t *raw = NULL;
	size_t rawlen = 0;

	server_start(&s);
	p = pusher(s.port, 0);
	/* the first tick only starts the interval */
	assert_int_equal(push_tick(p, m), 0);
	assert_int_equal(push_now(p, m), 0);
	wait_idle(p, 5);
	/* pid 22 had nothing to report: one request */
	assert_int_equal(server_requests(&s), 1);
	assert_non_null(strstr(
		s.targets[0],
		"/ingest?name=memtop.alloc%7Bhost%3Dnode-1%2Cpid%3D11%2Ccomm%3Dmy_app%7D&from="));
	assert_non_null(strstr(s.targets[0], "&format=pprof"));
	assert_true(s.lens[0] > 20 && s.bodies[0][0] == 0x1f && s.bodies[0][1] == 0x8b);
	assert_int_equal(pbdec_gunzip(s.bodies[0], s.lens[0], &raw, &rawlen), 0);
	assert_non_null(memmem(raw, rawlen, "leak_site", 9));
	assert_non_null(memmem(raw, rawlen, "alloc_space", 11));
	free(raw);
	push_get_status(p, &st);
	assert_int_equal(st.sent, 1);
	assert_int_equal(st.failed, 0);
	assert_string_equal(st.last_error, "");
	assert_true(st.last_ok_time > 0);

	/* nothing new was allocated, but the leak is still in use: the next
	 * push reports it again (alloc growth 0) */
	assert_int_equal(push_now(p, m), 0);
	wait_idle(p, 5);
	assert_int_equal(server_requests(&s), 2);
	push_free(p, 1);
	server_stop(&s);
	model_free(m);
}

static void test_push_retry_and_reject(void **state)
{
	struct mt_model *m = model_two();
	struct server s;
	struct push_status st;
	struct push *p;

	server_start(&s);
	s.statuses[0] = 503; /* retried after the 1 s backoff */
	s.statuses[2] = 400; /* rejected: not retried */
	p = pusher(s.port, 0);
	assert_int_equal(push_now(p, m), 0);
	wait_failed(p, 1, 5, &st);
	assert_true(st.pending);
	assert_int_equal(st.failed, 1);
	assert_string_equal(st.last_error, "push rejected: HTTP 503: reason 503");
	/* still pending: the interval is skipped, not queued */
	assert_int_equal(push_now(p, m), -EBUSY);
	wait_idle(p, 5);
	push_get_status(p, &st);
	assert_int_equal(server_requests(&s), 2);
	assert_int_equal(st.sent, 1);
	assert_int_equal(st.skipped, 1);
	assert_string_equal(st.last_error, "");

	assert_int_equal(push_now(p, m), 0);
	wait_idle(p, 5);
	push_get_status(p, &st);
	assert_int_equal(server_requests(&s), 3);
	assert_int_equal(st.dropped, 1);
	assert_int_equal(st.failed, 2);
	assert_false(st.pending);
	assert_non_null(strstr(st.last_error, "HTTP 400"));
	push_free(p, 1);
	server_stop(&s);
	model_free(m);
}

/* Nothing listens: every attempt fails fast and is reported; push_free()
 * with no grace returns at once although a retry is pending. */
static void test_push_unreachable(void **state)
{
	struct mt_model *m = model_two();
	struct server s;
	struct push_status st;
	struct push *p;
	double t0;
	int port;

	server_start(&s);
	port = s.port;
	server_stop(&s); /* the port is now closed */
	p = pusher(port, 0.2);
	t0 = now_s();
	assert_int_equal(push_now(p, m), 0);
	assert_true(now_s() - t0 < 0.5); /* the caller never waits */
	wait_failed(p, 2, 5, &st);
	assert_true(st.failed >= 2); /* retried, backoff capped at 0.2 s */
	assert_int_equal(st.sent, 0);
	assert_true(st.pending);
	assert_non_null(strstr(st.last_error, "push failed: "));
	t0 = now_s();
	push_free(p, 0);
	assert_true(now_s() - t0 < 1.5);
	model_free(m);
}

static void test_ingest_url(void **state)
{
	char buf[512];

	assert_int_equal(push_ingest_url("https://pyro.example:4040/", "app", "h.example", 7,
					 "a/b{c}", 100, 115, buf, sizeof(buf)),
			 0);
	assert_string_equal(buf, "https://pyro.example:4040/ingest?name=app%7Bhost%3Dh.example"
				 "%2Cpid%3D7%2Ccomm%3Da_b_c_%7D&from=100&until=115&format=pprof");
	/* an /ingest URL is used as it is; a path prefix is kept */
	assert_int_equal(push_ingest_url("http://gw/pyroscope/ingest", NULL, "h", 1, "", 1, 2, buf,
					 sizeof(buf)),
			 0);
	assert_string_equal(buf, "http://gw/pyroscope/ingest?name=memtop.alloc%7Bhost%3Dh%2Cpid"
				 "%3D1%2Ccomm%3Dunknown%7D&from=1&until=2&format=pprof");
	assert_int_equal(push_ingest_url("ftp://x", "a", "h", 1, "c", 1, 2, buf, sizeof(buf)),
			 -EINVAL);
	assert_int_equal(push_ingest_url("http://x/?a=b", "a", "h", 1, "c", 1, 2, buf, sizeof(buf)),
			 -EINVAL);
	assert_int_equal(push_ingest_url("http://x", "a", "h", 1, "c", 1, 2, buf, 40), -ENAMETOOLONG);
}

/* A failing endpoint is said once per change: when it starts failing,
 * when it fails for another reason, when it accepts again; not once per
 * attempt. */
static void test_push_state_change(void **state)
{
	struct push_status st = { 0 };
	struct push_said said = { 0 };
	char buf[256];

	(void)state;
	assert_null(push_state_change(&st, "http://x", &said, buf, sizeof(buf)));
	snprintf(st.last_error, sizeof(st.last_error), "Couldn't connect to server");
	st.failed = 1;
	assert_non_null(push_state_change(&st, "http://x", &said, buf, sizeof(buf)));
	assert_string_equal(buf, "--push http://x: failing: Couldn't connect to server "
				 "(1 attempts failed; retrying)");
	st.failed = 5; /* the same failure again and again: nothing new */
	assert_null(push_state_change(&st, "http://x", &said, buf, sizeof(buf)));
	snprintf(st.last_error, sizeof(st.last_error), "HTTP 503");
	assert_non_null(push_state_change(&st, "http://x", &said, buf, sizeof(buf)));
	assert_non_null(strstr(buf, "failing: HTTP 503"));
	st.last_error[0] = '\0';
	st.sent = 1;
	assert_non_null(push_state_change(&st, "http://x", &said, buf, sizeof(buf)));
	assert_string_equal(buf, "--push http://x: profiles accepted again (5 attempts had failed)");
	assert_null(push_state_change(&st, "http://x", &said, buf, sizeof(buf)));
}

static void test_push_new_errors(void **state)
{
	struct push_opts o = { .url = "localhost:4040" };

	errno = 0;
	assert_null(push_new(&o));
	assert_int_equal(errno, EINVAL);
	o.url = "http://localhost:4040";
	o.app = "bad app{}";
	assert_null(push_new(&o));
	assert_int_equal(errno, EINVAL);
	assert_null(push_new(NULL));
	push_free(NULL, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_push_request),
		cmocka_unit_test(test_push_retry_and_reject),
		cmocka_unit_test(test_push_unreachable),
		cmocka_unit_test(test_ingest_url),
		cmocka_unit_test(test_push_new_errors),
		cmocka_unit_test(test_push_state_change),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

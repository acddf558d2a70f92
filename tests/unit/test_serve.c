// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_serve.c - the pure parts of --serve: which ADDR forms are accepted
 * and which are loopback (a bare port or :PORT is never the wildcard),
 * the Prometheus label-value escaping (backslash, quote, newline, control
 * bytes and invalid UTF-8), and the /metrics text of a model with more
 * sites than the cap: at most 2 * METRICS_TOP_SITES sites, the biggest
 * one in, every line a HELP, TYPE or sample line; the client a loopback
 * connection counts against is its socket's owner, whatever 127.x
 * address it comes from.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "export/metrics.h"
#include "export/serve.h"
#include "export/serve_peer.h"
#include "util/strpool.h"
#include "target_fixture.h"

static void expect_addr(const char *spec, int family, const char *host, int port, bool lo)
{
	struct sockaddr_storage ss;
	socklen_t len = 0;
	bool loopback = !lo;
	char err[160] = "", got[64];

	assert_int_equal(serve_parse_addr(spec, &ss, &len, &loopback, err, sizeof(err)), 0);
	assert_int_equal(ss.ss_family, family);
	if (family == AF_INET) {
		struct sockaddr_in *a = (struct sockaddr_in *)&ss;

		inet_ntop(AF_INET, &a->sin_addr, got, sizeof(got));
		assert_int_equal(ntohs(a->sin_port), port);
		assert_int_equal(len, sizeof(*a));
	} else {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;

		inet_ntop(AF_INET6, &a->sin6_addr, got, sizeof(got));
		assert_int_equal(ntohs(a->sin6_port), port);
		assert_int_equal(len, sizeof(*a));
	}
	assert_string_equal(got, host);
	assert_int_equal(loopback, lo);
}

static void expect_bad(const char *spec, const char *msg_part)
{
	struct sockaddr_storage ss;
	socklen_t len;
	bool loopback;
	char err[160] = "";

	assert_int_equal(serve_parse_addr(spec, &ss, &len, &loopback, err, sizeof(err)), -EINVAL);
	if (!strstr(err, msg_part))
		fail_msg("'%s': message '%s' does not say '%s'", spec, err, msg_part);
}

static void test_addr_forms(void **state)
{
	expect_addr("127.0.0.1:6060", AF_INET, "127.0.0.1", 6060, true);
	expect_addr(":6060", AF_INET, "127.0.0.1", 6060, true);
	expect_addr("6060", AF_INET, "127.0.0.1", 6060, true);
	expect_addr("localhost:0", AF_INET, "127.0.0.1", 0, true);
	expect_addr("127.1.2.3:80", AF_INET, "127.1.2.3", 80, true);
	expect_addr("[::1]:6060", AF_INET6, "::1", 6060, true);
	/* spelled out: accepted, and known not to be loopback */
	expect_addr("0.0.0.0:6060", AF_INET, "0.0.0.0", 6060, false);
	expect_addr("10.1.2.3:6060", AF_INET, "10.1.2.3", 6060, false);
	expect_addr("[::]:6060", AF_INET6, "::", 6060, false);
}

static void test_addr_refused(void **state)
{
	expect_bad("", "port");
	expect_bad(":", "port");
	expect_bad("127.0.0.1:65536", "port");
	expect_bad("127.0.0.1:-1", "port");
	expect_bad("127.0.0.1:http", "port");
	expect_bad("example.com:80", "not looked up");
	expect_bad("::1:6060", "brackets");
	expect_bad("[::1]6060", "[IPV6]:PORT");
	expect_bad("[127.0.0.1]:80", "not an IP address");
}

static void expect_escape(const char *in, const char *out)
{
	char buf[128];

	assert_int_equal(metrics_escape_label(buf, sizeof(buf), in), strlen(out));
	assert_string_equal(buf, out);
}

static void test_escape(void **state)
{
	char small[4];

	expect_escape("plain", "plain");
	expect_escape("a\"b\\c\nd", "a\\\"b\\\\c\\nd");
	expect_escape("tab\there\x7f", "tab?here?");
	expect_escape("std::vector<int>::push_back", "std::vector<int>::push_back");
	expect_escape("caf\xc3\xa9 \xe2\x82\xac", "caf\xc3\xa9 \xe2\x82\xac"); /* valid UTF-8 stays */
	expect_escape("bad\xff\xc3(\xc0\xaf", "bad?"
					      "?(?"
					      "?"); /* invalid bytes */
	expect_escape("\xed\xa0\x80", "???");       /* a surrogate */
	expect_escape("", "");
	expect_escape(NULL, "");
	/* truncated like snprintf: the needed length is returned */
	assert_int_equal(metrics_escape_label(small, sizeof(small), "a\"bc"), 5);
	assert_string_equal(small, "a\\\"");
}

static struct mt_frame frame(const char *fn, const char *module, __u64 addr)
{
	struct mt_frame f = {
		.addr = addr,
		.rel_addr = addr & 0xffff,
		.function = strpool_intern(fn),
		.module = strpool_intern(module),
		.module_path = strpool_intern(module),
	};

	return f;
}

static void test_metrics_bounded(void **state)
{
	struct mt_model_opts o = { .rate = 1, .group = MT_GROUP_FUNCTION };
	struct mt_model *m = model_new(&o);
	struct mt_status st = { .duty = 1,
				.est_slowdown_pct = 2.5,
				.est_slowdown_measured = true,
				.est_slowdown_low_pct = 2.5,
				.est_slowdown_high_pct = 2.5 };
	struct mt_target *t;
	char *text, *line, *save, name[32];
	size_t len, sites = 0;
	int i;

	assert_non_null(m);
	t = test_target(m, 10);
	snprintf(t->comm, sizeof(t->comm), "a\"pp");
	t->rss_bytes = 4096;
	for (i = 0; i <= 60; i++) {
		struct mt_frame f[3];
		struct mt_sample_in in = { .pid = 10,
					   .ts_ns = 1,
					   .addr = 0x1000 + 0x100 * (__u64)i,
					   .size = 100 * (__u64)(i + 1),
					   .frames = f,
					   .nframes = 3 };

		/* fn_0 .. fn_59, and the biggest with every character to escape */
		snprintf(name, sizeof(name), i == 60 ? "we\"ird\\na\nme" : "fn_%d", i);
		f[0] = frame("malloc", "libc.so.6", 0x7f0000001000);
		f[1] = frame(name, "app", 0x401000 + 0x100 * (__u64)i);
		f[2] = frame("main", "app", 0x402000);
		assert_int_equal(model_apply(m, MT_INPUT_ALLOC(&in)), 0);
	}
	model_apply(m, MT_INPUT_TICK(1000000000ULL));
	assert_int_equal(metrics_text(m, &st, 1.5, &text, &len), 0);
	assert_int_equal(strlen(text), len);
	assert_non_null(strstr(text, "memtop_target_rss_bytes{pid=\"10\",comm=\"a\\\"pp\"} 4096\n"));
	assert_non_null(strstr(text, "memtop_overhead_slowdown_percent 2.5\n"));
	assert_non_null(strstr(text, "memtop_sites 61\n"));
	/* a slowdown not measured yet (or known only from below) is no number */
	st.est_slowdown_measured = false;
	free(text);
	assert_int_equal(metrics_text(m, &st, 1.5, &text, &len), 0);
	assert_non_null(strstr(text, "memtop_overhead_slowdown_percent NaN\n"));
	st.est_slowdown_measured = true;
	st.est_slowdown_high_pct = INFINITY;
	free(text);
	assert_int_equal(metrics_text(m, &st, 1.5, &text, &len), 0);
	assert_non_null(strstr(text, "memtop_overhead_slowdown_percent NaN\n"));
	/* the biggest site, with its name escaped */
	assert_non_null(strstr(text, "memtop_site_inuse_bytes{site=\""));
	assert_non_null(strstr(
		text,
		",function=\"we\\\"ird\\\\na\\nme\",module=\"app\",file=\"\",line=\"0\"} 6100\n"));
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(line, "# HELP ", 7) || !strncmp(line, "# TYPE ", 7))
			continue;
		if (strncmp(line, "memtop_", 7) || !strchr(line, ' '))
			fail_msg("not a sample line: %s", line);
		sites += !strncmp(line, "memtop_site_inuse_bytes{", 24);
	}
	assert_true(sites >= METRICS_TOP_SITES && sites <= 2 * METRICS_TOP_SITES);
	free(text);
	model_free(m);
}

/* A connection from 127.0.0.N to a listener on 127.0.0.1: the accepted
 * end's peer. */
static void peer_from(int lfd, const char *from, struct serve_peer *p)
{
	struct sockaddr_in a = { .sin_family = AF_INET }, src = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	int c = socket(AF_INET, SOCK_STREAM, 0), fd;

	assert_int_equal(getsockname(lfd, (struct sockaddr *)&a, &len), 0);
	inet_pton(AF_INET, from, &src.sin_addr);
	assert_int_equal(bind(c, (struct sockaddr *)&src, sizeof(src)), 0);
	assert_int_equal(connect(c, (struct sockaddr *)&a, sizeof(a)), 0);
	fd = accept(lfd, NULL, NULL);
	assert_true(fd >= 0);
	serve_peer_of(fd, p);
	close(fd);
	close(c);
}

static void test_peer_is_the_local_user(void **state)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct serve_peer p1, p2, far1, far2;
	int lfd = socket(AF_INET, SOCK_STREAM, 0);

	assert_int_equal(bind(lfd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(lfd, 4), 0);
	peer_from(lfd, "127.0.0.1", &p1);
	peer_from(lfd, "127.0.0.2", &p2);
	close(lfd);
	assert_true(p1.local && p2.local);
	assert_int_equal(p1.uid, geteuid());
	assert_true(serve_peer_same(&p1, &p2)); /* another 127.x is the same user */
	/* remote peers are their addresses, never a local user */
	far1 = (struct serve_peer){ .family = AF_INET, .addr = { 10, 0, 0, 1 } };
	far2 = (struct serve_peer){ .family = AF_INET, .addr = { 10, 0, 0, 2 } };
	assert_true(serve_peer_same(&far1, &far1));
	assert_false(serve_peer_same(&far1, &far2));
	far1.uid = p1.uid;
	assert_false(serve_peer_same(&far1, &p1));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_addr_forms),
		cmocka_unit_test(test_addr_refused),
		cmocka_unit_test(test_escape),
		cmocka_unit_test(test_metrics_bounded),
		cmocka_unit_test(test_peer_is_the_local_user),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

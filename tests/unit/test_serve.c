// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_serve.c - the pure parts of --serve: which ADDR forms are accepted
 * and which are loopback (a bare port or :PORT is never the wildcard),
 * and the Prometheus label-value escaping (backslash, quote, newline,
 * control bytes and invalid UTF-8).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

#include "export/metrics.h"
#include "export/serve.h"

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
	expect_escape("bad\xff\xc3(\xc0\xaf", "bad?" "?(?" "?");		     /* invalid bytes */
	expect_escape("\xed\xa0\x80", "???");				     /* a surrogate */
	expect_escape("", "");
	expect_escape(NULL, "");
	/* truncated like snprintf: the needed length is returned */
	assert_int_equal(metrics_escape_label(small, sizeof(small), "a\"bc"), 5);
	assert_string_equal(small, "a\\\"");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_addr_forms),
		cmocka_unit_test(test_addr_refused),
		cmocka_unit_test(test_escape),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

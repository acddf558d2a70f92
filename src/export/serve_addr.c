// SPDX-License-Identifier: GPL-2.0-only
/*
 * serve_addr.c - what --serve's ADDR means (serve_addr.h): HOST:PORT,
 * :PORT or PORT, [V6]:PORT; IP literals only, loopback unless spelled
 * out. Pure: no socket is opened here.
 */
#include "export/serve_addr.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

static int parse_port(const char *s, in_port_t *port)
{
	unsigned long v = 0;

	if (!*s)
		return -EINVAL;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || (v = v * 10 + (unsigned long)(*s - '0')) > 65535)
			return -EINVAL;
	}
	*port = htons((in_port_t)v);
	return 0;
}

int serve_parse_addr(const char *spec, struct sockaddr_storage *ss, socklen_t *len, bool *loopback,
		     char *err, size_t errlen)
{
	char host[64];
	const char *port;
	struct sockaddr_in *v4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)ss;
	bool bracket = spec[0] == '[';
	size_t hlen;

	memset(ss, 0, sizeof(*ss));
	if (bracket) {
		const char *end = strchr(spec, ']');

		if (!end || end[1] != ':') {
			snprintf(err, errlen, "'%s' is not [IPV6]:PORT", spec);
			return -EINVAL;
		}
		hlen = (size_t)(end - spec - 1);
		port = end + 2;
		spec++;
	} else {
		const char *colon = strrchr(spec, ':');

		if (colon && memchr(spec, ':', (size_t)(colon - spec))) {
			snprintf(err, errlen, "'%s': an IPv6 address goes in brackets ([::1]:6060)",
				 spec);
			return -EINVAL;
		}
		hlen = colon ? (size_t)(colon - spec) : 0;
		port = colon ? colon + 1 : spec;
	}
	if (hlen >= sizeof(host)) {
		snprintf(err, errlen, "'%.64s...': host too long", spec);
		return -EINVAL;
	}
	memcpy(host, spec, hlen);
	host[hlen] = '\0';
	if (!hlen || !strcmp(host, "localhost"))
		snprintf(host, sizeof(host), "%s", SERVE_DEFAULT_HOST);
	if (parse_port(port, bracket ? &v6->sin6_port : &v4->sin_port)) {
		snprintf(err, errlen, "'%s': the port is not a number from 0 to 65535", port);
		return -EINVAL;
	}
	if (!bracket && inet_pton(AF_INET, host, &v4->sin_addr) == 1) {
		v4->sin_family = AF_INET;
		*len = sizeof(*v4);
		*loopback = (ntohl(v4->sin_addr.s_addr) >> 24) == 127;
		return 0;
	}
	if (bracket && inet_pton(AF_INET6, host, &v6->sin6_addr) == 1) {
		const struct in6_addr *a = &v6->sin6_addr;

		v6->sin6_family = AF_INET6;
		*len = sizeof(*v6);
		*loopback = IN6_IS_ADDR_LOOPBACK(a) ||
			    (IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127);
		return 0;
	}
	snprintf(err, errlen,
		 "'%s' is not an IP address (names other than localhost are not looked up)", host);
	return -EINVAL;
}

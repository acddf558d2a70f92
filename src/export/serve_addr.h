/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * serve_addr.h - parsing --serve's ADDR into a socket address, and
 * whether it is loopback (cli.c checks it, serve.c binds it).
 */
#ifndef MEMTOP_SERVE_ADDR_H
#define MEMTOP_SERVE_ADDR_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

#define SERVE_DEFAULT_HOST "127.0.0.1"

/* Parse --serve's ADDR: "HOST:PORT", ":PORT" or "PORT" (HOST then
 * 127.0.0.1), "[V6]:PORT"; HOST is an IPv4 or IPv6 literal or
 * "localhost" (no name lookups); PORT 0 picks a free one. A non-loopback
 * address is accepted only when spelled out as a literal (never implied):
 * *loopback says which it is. 0, or -EINVAL with one line in err. */
int serve_parse_addr(const char *spec, struct sockaddr_storage *ss, socklen_t *len, bool *loopback,
		     char *err, size_t errlen);

#endif /* MEMTOP_SERVE_ADDR_H */

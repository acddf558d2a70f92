// SPDX-License-Identifier: GPL-2.0-only
/*
 * serve_peer.c - the client a --serve connection counts against
 * (serve_peer.h): the connecting socket's owner when it is on this host,
 * found by the connection's four-tuple through sock_diag, as ss(8) finds
 * sockets; else the peer's address.
 */
#include "export/serve_peer.h"

#include <netinet/in.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>

#define DIAG_WAIT_MS 100

/* Port and address of a socket address into a diag id's port and address. */
static bool diag_end(const struct sockaddr_storage *ss, __be16 *port, __be32 addr[4])
{
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *a = (const struct sockaddr_in *)ss;

		*port = a->sin_port;
		memcpy(addr, &a->sin_addr, 4);
		return true;
	}
	if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)ss;

		*port = a->sin6_port;
		memcpy(addr, &a->sin6_addr, 16);
		return true;
	}
	return false;
}

/* The owner of the TCP socket whose own end is `from` and whose peer is
 * `to`, when it is on this host. */
static bool local_owner(const struct sockaddr_storage *from, const struct sockaddr_storage *to,
			uid_t *uid)
{
	struct {
		struct nlmsghdr nlh;
		struct inet_diag_req_v2 r;
	} req = {
		.nlh = { .nlmsg_len = sizeof(req),
			 .nlmsg_type = SOCK_DIAG_BY_FAMILY,
			 .nlmsg_flags = NLM_F_REQUEST },
		.r = { .sdiag_family = (__u8)from->ss_family,
		       .sdiag_protocol = IPPROTO_TCP,
		       .idiag_states = ~0u,
		       .id = { .idiag_cookie = { INET_DIAG_NOCOOKIE, INET_DIAG_NOCOOKIE } } },
	};
	struct sockaddr_nl nl = { .nl_family = AF_NETLINK };
	struct timeval tv = { .tv_usec = DIAG_WAIT_MS * 1000 };
	long buf[1024];
	bool found = false;
	ssize_t n;
	int fd;

	if (from->ss_family != to->ss_family ||
	    !diag_end(from, &req.r.id.idiag_sport, req.r.id.idiag_src) ||
	    !diag_end(to, &req.r.id.idiag_dport, req.r.id.idiag_dst))
		return false;
	fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (fd < 0)
		return false;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (sendto(fd, &req, sizeof(req), 0, (struct sockaddr *)&nl, sizeof(nl)) != sizeof(req))
		goto out;
	n = recv(fd, buf, sizeof(buf), 0);
	if (n > 0) {
		struct nlmsghdr *h = (struct nlmsghdr *)buf;
		size_t left = (size_t)n;

		for (; NLMSG_OK(h, left); h = NLMSG_NEXT(h, left)) {
			const struct inet_diag_msg *m = NLMSG_DATA(h);

			if (h->nlmsg_type != SOCK_DIAG_BY_FAMILY ||
			    h->nlmsg_len < NLMSG_LENGTH(sizeof(*m)))
				break;
			/* the exact lookup answers that one socket; check anyway */
			if (m->id.idiag_sport == req.r.id.idiag_sport &&
			    m->id.idiag_dport == req.r.id.idiag_dport) {
				*uid = m->idiag_uid;
				found = true;
				break;
			}
		}
	}
out:
	close(fd);
	return found;
}

void serve_peer_of(int fd, struct serve_peer *p)
{
	struct sockaddr_storage peer = { 0 }, self = { 0 };
	socklen_t plen = sizeof(peer), slen = sizeof(self);
	uid_t uid;

	memset(p, 0, sizeof(*p));
	if (getpeername(fd, (struct sockaddr *)&peer, &plen) ||
	    getsockname(fd, (struct sockaddr *)&self, &slen))
		return; /* family 0: all such peers are one client */
	p->family = peer.ss_family;
	if (peer.ss_family == AF_INET)
		memcpy(p->addr, &((struct sockaddr_in *)&peer)->sin_addr, 4);
	else if (peer.ss_family == AF_INET6)
		memcpy(p->addr, &((struct sockaddr_in6 *)&peer)->sin6_addr, 16);
	if (local_owner(&peer, &self, &uid)) {
		p->local = true;
		p->uid = uid;
	}
}

bool serve_peer_same(const struct serve_peer *a, const struct serve_peer *b)
{
	if (a->local || b->local)
		return a->local && b->local && a->uid == b->uid;
	return a->family == b->family && !memcmp(a->addr, b->addr, sizeof(a->addr));
}

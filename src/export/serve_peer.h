/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * serve_peer.h - who a --serve connection comes from, the key of the
 * per-client connection cap (serve.c). A peer on this host is its
 * socket's owner (a uid): on loopback every user shares 127.0.0.1, and
 * anyone may bind any 127.x address, so there the address says nothing.
 * A peer elsewhere is its address.
 */
#ifndef MEMTOP_SERVE_PEER_H
#define MEMTOP_SERVE_PEER_H

#include <stdbool.h>
#include <sys/types.h>
#include <linux/types.h>

struct serve_peer {
	bool local;    /* its socket was found on this host: uid says who */
	uid_t uid;     /* local: the owner of the connecting socket */
	__u8 addr[16]; /* not local: its address (IPv4 in the first 4 bytes) */
	__u16 family;  /* AF_INET or AF_INET6; 0 when unknown */
};

/* The peer of the accepted TCP connection fd. A local peer is looked up
 * by the connection's four-tuple with sock_diag (NETLINK_SOCK_DIAG, no
 * privilege needed); when that fails (the peer closed already, another
 * network namespace) it is its address. Never blocks long: the netlink
 * answer is waited for at most 100 ms. */
void serve_peer_of(int fd, struct serve_peer *p);

/* Whether a and b are the same client. */
bool serve_peer_same(const struct serve_peer *a, const struct serve_peer *b);

#endif /* MEMTOP_SERVE_PEER_H */

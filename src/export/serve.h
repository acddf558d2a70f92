/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * serve.h - --serve ADDR: a small HTTP/1.1 server on its own thread that
 * answers scrapers: GET /debug/pprof/heap and /debug/pprof/allocs (gzipped
 * profile.proto, as Go's net/http/pprof; ?seconds=N, 1 to
 * SERVE_MAX_SECONDS, gives the allocations of the next N seconds) and GET
 * /metrics (Prometheus text, export/metrics.h).
 *
 * The server never touches the model. The main loop calls serve_publish()
 * after each model tick: it renders /metrics and, once a profile has been
 * asked for, the two profiles, and swaps them in under a mutex; requests
 * are answered from the last published copy. ?seconds= requests are
 * handed to the main loop the same way (a slot per connection) and
 * completed by the first serve_publish() N seconds later. Every socket is
 * non-blocking: at most SERVE_MAX_CONNS connections in all and
 * SERVE_MAX_PER_CLIENT from one client (export/serve_peer.h: a user on this
 * host, else an address; one past either is answered 503 and closed at
 * once, so one client cannot hold every slot), a request of at most
 * SERVE_MAX_REQUEST bytes read within SERVE_READ_TIMEOUT_S, an answer
 * written within SERVE_WRITE_TIMEOUT_S, then Connection: close. Only GET;
 * other methods get 405, other paths 404.
 */
#ifndef MEMTOP_SERVE_H
#define MEMTOP_SERVE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>
#include <linux/types.h>

#include "export/serve_addr.h"
#include "model/model.h"
#include "input/status.h"

#define SERVE_MAX_CONNS 16
#define SERVE_MAX_PER_CLIENT 4
#define SERVE_MAX_REQUEST 8192
#define SERVE_READ_TIMEOUT_S 5
#define SERVE_WRITE_TIMEOUT_S 10
#define SERVE_MAX_SECONDS 300

struct serve;

/* Bind and listen on spec and start the server thread. NULL with errno
 * set and one line in err ("--serve 127.0.0.1:6060: address already in
 * use"); nothing is left open then. */
struct serve *serve_start(const char *spec, char *err, size_t errlen);

/* The bound address as "HOST:PORT" (the real port when 0 was asked). */
const char *serve_address(const struct serve *s);
/* Whether it is a loopback address. */
bool serve_is_loopback(const struct serve *s);

/* After each model tick, on the main loop: new /metrics text, new
 * profiles when someone asked for one, and the ?seconds= requests that
 * start or are due now. Never waits on a client. */
void serve_publish(struct serve *s, struct mt_model *m, const struct mt_status *st, __u64 now_ns);

/* A consistent copy of its counts, for the JSON. */
void serve_get_status(struct serve *s, struct serve_status *out);

/* Stop the thread, close every connection and free s (NULL is fine). */
void serve_stop(struct serve *s);

#endif /* MEMTOP_SERVE_H */

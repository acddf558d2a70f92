/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * push.h - periodic pprof snapshots sent to a Pyroscope-compatible ingest
 * endpoint: POST {base}/ingest?name=APP{host=..,pid=..,comm=..}&from=S&
 * until=S&format=pprof with a gzipped profile.proto body, one request per
 * target per interval.
 *
 * Single producer: push_tick()/push_now() run on the main loop, encode the
 * profiles there (the model is single threaded) and hand the batch to a
 * sender thread through a one-slot queue. The sender POSTs with libcurl
 * (connect timeout 2 s, whole request 10 s), retries network errors and
 * 5xx/408/429 answers with exponential backoff up to a cap, and gives up
 * on other 4xx answers. The main loop never waits on the network.
 *
 * alloc_objects/alloc_space hold the growth since the previous batch (see
 * docs/export.md for why), inuse_* the current estimates.
 */
#ifndef MEMTOP_PUSH_H
#define MEMTOP_PUSH_H

#include "input/status.h"

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <time.h>
#include <linux/types.h>

#include "model/model.h"

#define PUSH_DEFAULT_APP "memtop.alloc"

struct push;

struct push_opts {
	const char *url;          /* http(s)://host:port[/prefix], or its /ingest URL */
	const char *app;          /* application name, [A-Za-z0-9._-]; NULL: PUSH_DEFAULT_APP */
	const char *host;         /* host label; NULL: gethostname() */
	double every_s;           /* push_tick() period; <= 0: 15 */
	double connect_timeout_s; /* <= 0: 2 */
	double timeout_s;         /* whole request; <= 0: 10 */
	double backoff_max_s;     /* longest wait between retries; <= 0: 60 */
};


/* Start the sender thread. NULL with errno set: EINVAL for a URL that is
 * not http(s):// or has a query string, or a bad app name; ENOMEM;
 * whatever pthread_create or curl_global_init fail with. */
struct push *push_new(const struct push_opts *o);

/* Call after each tick of the model. When every_s has passed since the last
 * due time, encode one profile per target with something to report and
 * hand the batch to the sender. 0 when nothing was due or the batch was
 * handed over; -EBUSY when the previous batch is still pending (the
 * interval is skipped and its allocations go into the next batch);
 * other -errno on failure. */
int push_tick(struct push *p, struct mt_model *m);

/* Same, due or not (for a final push at exit). */
int push_now(struct push *p, struct mt_model *m);

/* A consistent copy of the counters, for the status line and JSON. */
void push_get_status(struct push *p, struct push_status *out);

/* What was last said about the push state (zeroed at start). */
struct push_said {
	bool failing;
	char error[sizeof(((struct push_status *)0)->last_error)];
};

/* The push state as one line for the user, when it changed since *said
 * (updated): the endpoint starts failing, fails for another reason, or
 * accepts profiles again. Returns buf, or NULL when nothing changed; so a
 * failure is said once per change, not once per attempt. */
const char *push_state_change(const struct push_status *now, const char *url,
			      struct push_said *said, char *buf, size_t len);

/* Give a pending batch up to grace_s seconds to go out (retries
 * included), then abort any transfer, stop the thread and free p. */
void push_free(struct push *p, double grace_s);

/* The ingest URL for one target's profile into buf: base as in
 * push_opts.url; label values are reduced to [A-Za-z0-9._-] (others
 * become '_'), the name is percent-encoded. 0 or -EINVAL (bad base) /
 * -ENAMETOOLONG (buf too small). */
int push_ingest_url(const char *base, const char *app, const char *host, pid_t pid,
		    const char *comm, __s64 from_s, __s64 until_s, char *buf, size_t len);

#endif /* MEMTOP_PUSH_H */

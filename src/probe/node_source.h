/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * node_source.h - a Node.js process's JavaScript heap by call site, from
 * V8's sampling heap profiler run inside the process by libmemtop-v8.so
 * (include/memtop/v8_abi.h, docs/node.md). No port, no socket, no
 * inspector: memtop maps the agent like its injected sampler, starts it
 * on the JavaScript thread while that thread waits in its event loop,
 * renews its lease at every poll and reads its snapshots through
 * /proc/PID/mem. The live samples of successive snapshots, diffed by
 * V8's sample id, become MT_EV_NAMED and MT_EV_FREE records for ingest.
 */
#ifndef MEMTOP_PROBE_NODE_SOURCE_H
#define MEMTOP_PROBE_NODE_SOURCE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <linux/types.h>

#include "memtop/v8_abi.h"
#include "probe/inject_image.h"

/* Where records go: the caller's ingest_record(). */
typedef void (*node_emit_fn)(void *ctx, const void *rec, size_t len);

/* The JSON mechanism (and the module of the frames it names). */
#define NODE_SOURCE_MECHANISM "v8-sampling"
/* How long memtop waits for the JavaScript thread to wait in its event
 * loop before it gives up starting the agent. */
#define NODE_START_GIVE_UP_MS 10000
/* How long one try lets a busy JavaScript thread run on, traced, to its
 * next epoll_wait (the holder's whole work is bounded by 2 s). */
#define NODE_LOOP_WAIT_MS 1000

struct node_source {
	pid_t pid;
	struct inject_image im;
	char libc[PATH_MAX];
	__u64 base;     /* the agent's load address */
	__u64 ctl;      /* its control block, in the process */
	__u64 buf;      /* its snapshot buffer, in the process */
	__u64 rate;     /* mean bytes between samples */
	__u64 lease_ns; /* how long each renewal lets the agent run on alone */
	__u64 fn[MT_V8_FN_COUNT];
	__u64 since_ns; /* the first try of the start */
	__u64 request;
	__u64 seq_done; /* the snapshot last taken in */
	bool started;   /* the agent samples for this memtop */
	bool gave_up;
	unsigned int tries;
	__u64 held_ns; /* how long the start held the JavaScript thread */
	__u64 ran_ns;  /* how long it ran on, traced, to its epoll_wait first */
	/* the live samples of the last snapshot, by sample id, sorted */
	__u64 *live;
	size_t nlive;
	unsigned char *snap; /* a copy of the last snapshot */
	size_t snap_cap;
	__u64 named, freed;  /* records handed to ingest */
	__u64 bad_snapshots; /* refused: they did not hold together */
	/* what the agent's snapshots cost the JavaScript thread: its time
	 * writing them over the last poll interval, as a slowdown (%) */
	double cost_pct;
	__u64 cost_collect_ns, cost_at_ns;
	char v8_version[32];
};

/* Does pid run V8 with the API the agent calls exported (node, or a
 * libnode it maps)? Reads only its link map. */
bool node_detect(pid_t pid);

/* Map the agent (agent_so) into pid unless a copy is mapped, tell it the
 * functions, the rate and a lease of lease_ms, and try to start it (it
 * starts only while the JavaScript thread waits in its event loop; if not
 * now, node_poll tries again). 0 (started or to be started), or -errno
 * with one line in err and nothing changed in the process. */
int node_attach(struct node_source *ns, pid_t pid, const char *agent_so, __u64 rate,
		unsigned int lease_ms, char *err, size_t errlen);

/* Renew the lease, start the agent if it is not yet, and hand the samples
 * of its newest snapshot to emit: new ones as MT_EV_NAMED records, gone
 * ones as MT_EV_FREE. The number of records, or -errno with one line in
 * err (-ETIMEDOUT: the agent could not be started in
 * NODE_START_GIVE_UP_MS; the source is given up). */
int node_poll(struct node_source *ns, node_emit_fn emit, void *ctx, __u64 now_ns, char *err,
	      size_t errlen);

/* Ask the agent to stop V8's profiler (it does so on the JavaScript
 * thread, at most MT_V8_TICK_MS later) and wait up to wait_ms for it.
 * The agent stays mapped. 0 when it stopped, -ESTALE when it is gone (a
 * process that exec'd: nothing is written to it), -ETIMEDOUT when it had
 * not stopped yet (it will: its lease ends), -errno. */
int node_detach(struct node_source *ns, unsigned int wait_ms);

void node_free(struct node_source *ns);

#endif /* MEMTOP_PROBE_NODE_SOURCE_H */

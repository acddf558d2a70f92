// SPDX-License-Identifier: GPL-2.0-only
/*
 * source_v8.c - the V8 row of the source table (source.h): a Node.js
 * process's JavaScript heap by call site, from V8's sampling heap
 * profiler run inside the process by libmemtop-v8.so (node_source.h,
 * docs/node.md). By default on every process of -p and --cgroup whose V8
 * exports the profiler's API; never with --no-inject (nothing is written
 * into any process) nor for -- CMD (memtop attaches before V8 exists).
 */
#include "probe/source.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>

#include "probe/node_source.h"
#include "util/clock.h"

#define V8_AGENT_SO "libmemtop-v8.so"

struct v8_row {
	struct node_source ns;
	struct source_env env; /* to say what happens at stop too */
	__u64 polled_ns;       /* the last poll: at most one per MT_V8_TICK_MS */
	bool said_started;
};

/* How long each renewal lets the agent run on alone: four refreshes, at
 * least 5 s (a killed memtop's agent stops itself that much later). */
static unsigned int lease_ms(const struct source_env *env)
{
	double ms = env->cfg->interval_s * 4000.0;

	return ms > 5000.0 ? (unsigned int)ms : 5000u;
}

/* How often a snapshot is asked for: twice per display interval, between
 * the agent's tick and POLL_MAX_MS. Each one is built on the JavaScript
 * thread and read and compared by memtop, whose own CPU (11% of a core
 * at one every 100 ms, in tests/bench/node.py) a two-core machine's
 * target loses too. */
#define POLL_MAX_MS 500

static __u64 poll_ns(const struct source_env *env)
{
	double ms = env->cfg->interval_s * 500.0;

	if (ms > POLL_MAX_MS)
		ms = POLL_MAX_MS;
	if (ms < MT_V8_TICK_MS)
		ms = MT_V8_TICK_MS;
	return (__u64)(ms * 1e6);
}

/* Once started: its heap is named, seen, and the start is said. */
static void facts_started(struct v8_row *r, struct mt_target_facts *f)
{
	f->set |= MT_FACT_NAMED | MT_FACT_RUNTIME;
	f->heap_named = true;
	snprintf(f->named_by, sizeof(f->named_by), "%s", NODE_SOURCE_MECHANISM);
	f->runtime[0] = '\0'; /* its V8 heap is seen */
	f->runtime_heap = f->runtime_tool = NULL;
	if (r->said_started)
		return;
	r->said_started = true;
	source_say(&r->env,
		   "PID %d: V8 %s: sampling heap profiler started in-process; its JavaScript "
		   "thread held %.2f ms (traced %.2f ms to its event loop's wait)",
		   r->ns.pid, r->ns.v8_version, r->ns.held_ns / 1e6, r->ns.ran_ns / 1e6);
}

static int v8_row_start(const struct source_env *env, const struct source_proc *p, bool last,
			void **state, struct mt_target_facts *f)
{
	char so[PATH_MAX], err[512];
	struct v8_row *r;
	int e;

	(void)last;
	*state = NULL;
	if (!env->record || p->launched || env->cfg->inject_mode == MT_INJECT_NEVER ||
	    !node_detect(p->pid))
		return 0;
	if (env->find_lib(V8_AGENT_SO, so, sizeof(so))) {
		source_say(env, "PID %d: %s not found: its V8 heap is not sampled", p->pid,
			   V8_AGENT_SO);
		return 0;
	}
	r = calloc(1, sizeof(*r));
	if (!r)
		return 0;
	r->env = *env;
	e = node_attach(&r->ns, p->pid, so, env->cfg->rate, lease_ms(env), err, sizeof(err));
	if (e) {
		source_say(env, "%s; its V8 heap is not sampled", err);
		free(r);
		return 0;
	}
	*state = r;
	if (r->ns.started)
		facts_started(r, f);
	return 0;
}

static int v8_row_pump(const struct source_env *env, void *state, struct mt_target_facts *f,
		       char *err, size_t errlen)
{
	struct v8_row *r = state;
	__u64 now = clock_mono_ns();
	int e;

	if (now - r->polled_ns < poll_ns(env))
		return 0;
	r->polled_ns = now;
	e = node_poll(&r->ns, env->record, env->record_ctx, now, err, errlen);
	if (r->ns.started)
		facts_started(r, f);
	if (e < 0 && r->ns.gave_up) {
		/* not its heap any more: the native mechanism alone */
		f->set |= MT_FACT_NAMED;
		f->heap_named = false;
		f->named_by[0] = '\0';
		return e;
	}
	if (e < 0 && kill(r->ns.pid, 0) == 0)
		source_say(env, "%s", err);
	return 0;
}

static void v8_row_stop(void *state)
{
	struct v8_row *r = state;
	bool alive;
	int e;

	if (!r)
		return;
	alive = kill(r->ns.pid, 0) == 0;
	if (r->ns.started) {
		e = node_detach(&r->ns, 500);
		if (e == -ETIMEDOUT)
			source_say(&r->env,
				   "PID %d: V8's sampling heap profiler stops at its next event-loop turn",
				   r->ns.pid);
		else if (!e && alive)
			source_say(&r->env, "PID %d: V8's sampling heap profiler stopped", r->ns.pid);
		else if (e && e != -ESTALE && alive)
			source_say(&r->env, "PID %d: cannot stop V8's sampling heap profiler: %s",
				   r->ns.pid, strerror(-e));
	}
	node_free(&r->ns);
	free(r);
}

static double v8_row_cost(const void *state)
{
	const struct v8_row *r = state;

	return r->ns.started ? r->ns.cost_pct : 0; /* its snapshots, on the JavaScript thread */
}

const struct source_ops source_v8 = {
	.name = NODE_SOURCE_MECHANISM,
	.sees_runtime = true,
	.start = v8_row_start,
	.pump = v8_row_pump,
	.stop = v8_row_stop,
	.cost_pct = v8_row_cost,
};

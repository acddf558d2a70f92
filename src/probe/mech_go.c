// SPDX-License-Identifier: GPL-2.0-only
/*
 * mech_go.c - the Go row of the mechanism table (mechanism.h): a Go
 * program's runtime samples its own heap (MemProfileRate), and memtop
 * probes the runtime's sampled path (go_attach.h). A rate of 0 (nothing
 * in the program asked for profiles) is set to memtop's while it
 * watches, unless --no-inject, and put back when it lets go (go_rate.h,
 * docs/go.md).
 */
#include "probe/mechanism.h"

#include <errno.h>
#include <stdio.h>

#include "probe/bpf_loader.h"
#include "probe/go_attach.h"
#include "probe/go_rate.h"
#include "probe/go_runtime.h"
#include "probe/target.h"
#include "probe/watch.h"

/* The Go row on a program at path (a command before its exec has no
 * /proc/PID/exe of its own yet): 0 when w is prepared for it, 1 when path
 * is not a Go program, -errno (one line in err) when it is one memtop
 * cannot probe. */
static int go_exe(struct watch_set *ws, struct watched *w, const char *path, char *err, size_t errlen)
{
	int e;

	if (!go_runtime_is_go(path))
		return 1;
	e = go_runtime_inspect(path, &w->gt, err, errlen);
	if (e)
		return e == -ENOENT ? 1 : e;
	snprintf(w->lib, sizeof(w->lib), "%s", path);
	if (ws->env.cfg->inject_mode == MT_INJECT_ALWAYS)
		watch_warn(ws,
			   "PID %d is a Go program (%s): its runtime samples itself, --inject is "
			   "not needed and not done",
			   w->pid, w->gt.version);
	return 0;
}

static int go_choose(struct watch_set *ws, struct watched *w, struct mech_ask *ask, char *err,
		     size_t errlen)
{
	char exe[64];

	(void)ask;
	snprintf(exe, sizeof(exe), "/proc/%d/exe", w->pid);
	return go_exe(ws, w, exe, err, errlen);
}

/* A Go command: its runtime samples itself, no sampler is preloaded, and
 * a static executable is fine. */
static int go_choose_command(struct watch_set *ws, struct watched *w, struct mech_launch *l,
			     char *err, size_t errlen)
{
	int e = l->exe[0] ? go_exe(ws, w, l->exe, err, errlen) : 1;

	l->static_ok = !e;
	return e;
}

static void go_launched(struct watch_set *ws, struct watched *w, const struct mech_launch *l)
{
	(void)ws, (void)w, (void)l; /* prepared by its choice: lib is the executable */
}

static int go_attach_row(struct watch_set *ws, struct watched *w, char *err, size_t errlen)
{
	w->go_probes = go_attach(ws->env.bpf, w->pid, w->lib, &w->gt, &ws->info, err, errlen);
	return w->go_probes ? 0 : errno ? -errno : -EINVAL;
}

/* A Go target whose runtime.MemProfileRate is 0 (nothing in it references
 * runtime.MemProfile, or it set 0 itself): set to memtop's rate, once,
 * unless --no-inject (docs/go.md). *rate: the rate now. */
static void go_rate_turn_on(struct watch_set *ws, struct watched *w, __u64 addr, __s64 *rate)
{
	const struct mt_config *cfg = ws->env.cfg;
	char err[256];
	int e;

	if (w->go_rate_hold || w->go_rate_tried || cfg->inject_mode == MT_INJECT_NEVER)
		return;
	e = go_rate_enable(w->pid, addr, go_runtime_ready_addr(w->pid, &w->gt), (__s64)cfg->rate,
			   &w->go_rate_hold, err, sizeof(err));
	if (e == -EAGAIN)
		return; /* its runtime is still starting: at the next refresh */
	w->go_rate_tried = true;
	if (!e) {
		*rate = go_rate_set_to(w->go_rate_hold);
		watch_warn(ws,
			   "PID %d: runtime.MemProfileRate was 0 (the Go runtime sampled nothing): "
			   "set to %lld, memtop's rate, while memtop watches, and put back at exit "
			   "(--no-inject leaves it)",
			   w->pid, (long long)*rate);
	} else if (e != -EALREADY) {
		watch_warn(ws, "PID %d: runtime.MemProfileRate is 0 and memtop cannot set it: %s",
			   w->pid, err);
	}
}

/* Its version and runtime.MemProfileRate for the views, and the rate's
 * address for the BPF side once it is known (a PIE launched by memtop is
 * placed only at its exec). */
static void go_facts(struct watch_set *ws, struct watched *w, struct mt_target_facts *t)
{
	struct mt_go_proc proc = { .rate = 512 * 1024 };
	bool held = w->launched && ws->launch.go_fd >= 0; /* before its exec */
	__s64 rate = -1;
	char gogc[32];

	snprintf(t->go_version, sizeof(t->go_version), "%s", w->gt.version);
	/* its environment from its start, as its runtime read it (a later
	 * debug.SetGCPercent is not seen); held before its exec, the one it
	 * will exec with */
	t->go_heap_goal = go_runtime_heap_goal(
		target_env_get(w->pid, "GOGC", gogc, sizeof(gogc)) ? gogc : NULL);
	/* its heap is seen: not a runtime memtop is blind to */
	t->runtime[0] = '\0';
	t->runtime_heap = t->runtime_tool = NULL;
	t->set |= MT_FACT_GO | MT_FACT_RUNTIME;
	if (held)
		proc.rate_addr = w->gt.pie ? 0 : w->gt.rate_vaddr;
	else
		proc.rate_addr = go_runtime_rate_addr(w->pid, &w->gt);
	if (held || go_runtime_read_rate(w->pid, proc.rate_addr, &rate))
		rate = -1;
	if (rate == 0)
		go_rate_turn_on(ws, w, proc.rate_addr, &rate);
	t->go_rate = rate;
	t->go_rate_by_memtop = w->go_rate_hold != NULL && rate == go_rate_set_to(w->go_rate_hold);
	if (rate > 0)
		proc.rate = (__u64)rate;
	if (!w->go_rate_set || proc.rate_addr != w->go_rate_addr) {
		w->go_rate_set = !bpf_loader_set_go(ws->env.bpf, w->pid, &proc);
		w->go_rate_addr = proc.rate_addr;
	}
}

/* Its MemProfileRate back to what it was, and its probes off. */
static void go_release(struct watch_set *ws, struct watched *w)
{
	if (w->go_rate_hold && go_rate_restore(w->go_rate_hold) == -EBUSY)
		watch_warn(ws,
			   "PID %d: its program changed runtime.MemProfileRate while watched: "
			   "left as it is",
			   w->pid);
	w->go_rate_hold = NULL;
	w->go_rate_tried = false;
	go_detach(w->go_probes);
	w->go_probes = NULL;
	w->go_rate_addr = 0;
	w->go_rate_set = false;
}

const struct mechanism mechanism_go = {
	.name = "go-runtime",
	.said = "the Go runtime's own sampling",
	.samples_itself = true,
	.counts_exact = false,
	.watches_runtime = true,
	.choose = go_choose,
	.choose_command = go_choose_command,
	.launched = go_launched,
	.attach = go_attach_row,
	.facts = go_facts,
	.release = go_release,
};

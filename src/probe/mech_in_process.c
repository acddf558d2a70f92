// SPDX-License-Identifier: GPL-2.0-only
/*
 * mech_in_process.c - the in-process row of the mechanism table
 * (mechanism.h): memtop's sampler put into the process (inject.h), its
 * GOT slots rerouted through it, its USDT probes watched like a
 * preloaded sampler's. By default where it sees every call (docs/inject.md,
 * "The budget chooses"), always with --inject; the sampler counts every
 * call, and its own cost is timed once (inject_cost.h). A CPython
 * interpreter's object allocator is wrapped too, by a call it runs at
 * its next Python code.
 */
#include "probe/mechanism.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe/alloc_resolve.h"
#include "probe/inject.h"
#include "probe/target.h"
#include "probe/watch.h"
#include "readers/proc_maps.h"
#include "stacks/python.h"
#include "util/clock.h"


/* Seconds an injected CPython has to run the pending call that wraps its
 * object allocator before memtop says it has not. */
#define PY_WRAP_DEADLINE_NS 5000000000ULL

/* The C API to wrap CPython's object allocator with, if pid runs CPython
 * of the supported version. */
static bool python_api(pid_t pid, __u64 api[MT_PY_API_COUNT])
{
	struct mt_maps maps = { 0 };
	struct mt_py_proc py;
	char msg[PATH_MAX + 128];
	int e;

	/* PYTHONMALLOC=malloc or malloc_debug: objects come from malloc,
	 * already seen there; a wrap of the object allocator would sample
	 * each of them twice */
	if (target_env_is(pid, "PYTHONMALLOC", "malloc") ||
	    target_env_is(pid, "PYTHONMALLOC", "malloc_debug"))
		return false;
	if (proc_maps_read(pid, &maps))
		return false;
	e = python_detect(pid, &maps, &py, api, msg, sizeof(msg));
	proc_maps_free(&maps);
	return !e;
}

/* Put an injected process back: its GOT slots to their old values. */
static void inject_end(struct watch_set *ws, struct watched *w)
{
	char err[512];

	if (!w->inj)
		return;
	if (inject_detach(w->inj, err, sizeof(err))) {
		if (target_alive(w->pid))
			watch_warn(ws, "%s", err);
	} else {
		if (w->inj->py_note[0])
			watch_warn(ws, "%s", w->inj->py_note);
		watch_warn(ws,
			   "PID %d: GOT restored (%zu slots); one thread held %.2f ms "
			   "(longest hold %.2f ms)",
			   w->pid, w->inj->nslots, w->inj->pause_ns / 1e6,
			   w->inj->pause_max_ns / 1e6);
	}
	inject_free(w->inj);
	free(w->inj);
	w->inj = NULL;
}

/* Put memtop's sampler into w. 0, or -errno with one line in err (and
 * the reason in w->uprobes_why). */
static int inject_into(struct watch_set *ws, struct watched *w, char *err, size_t errlen)
{
	__u64 py[MT_PY_API_COUNT];
	char so[PATH_MAX];
	int e;

	if (watch_find_lib(MECH_INJECT_SO, so, sizeof(so))) {
		snprintf(err, errlen, "%s not found next to memtop or in %s", MECH_INJECT_SO,
			 MEMTOP_LIBDIR);
		return -ENOENT;
	}
	inject_end(ws, w); /* a process prepared again (it exec'd): its old image's */
	w->inj = calloc(1, sizeof(*w->inj));
	if (!w->inj) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	e = inject_attach(w->inj, w->pid, so, ws->env.cfg->rate, python_api(w->pid, py) ? py : NULL,
			  err, errlen);
	if (e) {
		snprintf(w->uprobes_why, sizeof(w->uprobes_why), "%s",
			 w->inj->why ? w->inj->why : "the injection failed");
		free(w->inj);
		w->inj = NULL;
		return e;
	}
	if (!ws->inj_cost_tried) {
		/* what its calls cost, for the slowdown (inject_cost.h) */
		ws->inj_cost_tried = true;
		if (inject_cost_calibrate(so, &ws->inj_cost, err, errlen))
			watch_warn(ws, "%s: the sampler's own cost is not counted in the slowdown",
				   err);
	}
	w->inj->py_since_ns = clock_mono_ns();
	w->inj->py_said = -1;
	snprintf(w->lib, sizeof(w->lib), "%s", w->inj->path);
	watch_warn(ws,
		   "PID %d: sampler %s, %zu GOT slots rerouted; one thread held %.2f ms "
		   "(it took %.2f ms to stop)",
		   w->pid, w->inj->reused ? "reused" : "injected", w->inj->nslots,
		   w->inj->pause_ns / 1e6, w->inj->reach_ns / 1e6);
	return 0;
}

/* A process whose malloc is an allocator memtop has no uprobe table for
 * (err says which): the sampler forwards every call to whatever
 * allocator lies behind it, as with --inject, unless it would miss calls
 * (the executable's own malloc). When that is refused too, both reasons
 * are the one line. */
static int inject_unknown_allocator(struct watch_set *ws, struct watched *w, char *err, size_t errlen)
{
	char no_table[512], why[512];
	int e;

	snprintf(no_table, sizeof(no_table), "%s", err);
	w->alloc = NULL;
	w->extra = (struct alloc_target){ 0 };
	if (inject_blind_spot(w->pid, why, sizeof(why)) == 1)
		e = -ENOTSUP; /* calls the sampler would not see */
	else
		e = inject_into(ws, w, why, sizeof(why));
	if (e)
		snprintf(err, errlen, "%s; and not in-process: %s", no_table, why);
	return e;
}

/* With --inject, any process (a known allocator is named); by default,
 * one whose allocator memtop has no table for, and any other where the
 * sampler sees every call. Otherwise the reason is kept for the uprobes
 * row and said (w->uprobes_why). */
static int in_process_choose(struct watch_set *ws, struct watched *w, struct mech_ask *ask,
			     char *err, size_t errlen)
{
	const struct mt_config *cfg = ws->env.cfg;
	const struct alloc_target *serving = &ask->serving;
	char why[512];
	int e;

	if (cfg->inject_mode == MT_INJECT_ALWAYS) {
		w->alloc = mechanism_serving(w, ask, err, errlen) ? NULL : w->alloc;
		w->extra = (struct alloc_target){ 0 };
		return inject_into(ws, w, err, errlen);
	}
	e = mechanism_serving(w, ask, err, errlen);
	if (e == -ENOTSUP && cfg->inject_mode == MT_INJECT_AUTO && cfg->probe_mode == MT_PROBE_AUTO)
		return inject_unknown_allocator(ws, w, err, errlen);
	if (e)
		return e;
	w->uprobes_why[0] = '\0';
	if (cfg->inject_mode == MT_INJECT_NEVER)
		return 1;
	if (cfg->probe_mode != MT_PROBE_AUTO)
		snprintf(w->uprobes_why, sizeof(w->uprobes_why), "--probe-mode %s",
			 cfg->probe_mode == MT_PROBE_SESSION ? "session" : "uretprobe");
	else if (serving->prefix[0])
		snprintf(w->uprobes_why, sizeof(w->uprobes_why), "allocator called as %smalloc",
			 serving->prefix);
	else if (w->extra.alloc)
		snprintf(w->uprobes_why, sizeof(w->uprobes_why), "a second allocator (%s)",
			 w->extra.alloc->name);
	else if (inject_blind_spot(w->pid, w->uprobes_why, sizeof(w->uprobes_why)) == 1)
		; /* calls the sampler would not see: the uprobes see them */
	else if (!inject_into(ws, w, why, sizeof(why)))
		return 0;
	else
		watch_warn(ws, "%s: watching it with uprobes", why);
	return 1;
}

/* A command calling another allocator than glibc's gets memtop's sampler
 * the way a running process does, once its loader is done
 * (mechanism_launch_injectable). */
static int in_process_choose_command(struct watch_set *ws, struct watched *w, struct mech_launch *l,
				     char *err, size_t errlen)
{
	(void)w, (void)err, (void)errlen;
	mechanism_launch_allocator(ws, l);
	return l->foreign[0] && mechanism_launch_injectable(ws, l) ? 0 : 1;
}

/* Prepared and attached as a running process once it is one
 * (watch_retry_pending): memtop's sampler, or uprobes and why. */
static void in_process_launched(struct watch_set *ws, struct watched *w, const struct mech_launch *l)
{
	(void)ws;
	mechanism_launch_glibc(w, l);
	w->inject_at_start = true;
	w->pending = true;
	w->pending_since_ns = clock_mono_ns();
}

/* Its probes are a preloaded sampler's: the same USDT probes. */
static int in_process_attach(struct watch_set *ws, struct watched *w, char *err, size_t errlen)
{
	return mechanism_preloaded.attach(ws, w, err, errlen);
}

/* In-process, the allocator behind the sampler, where memtop knows it. */
static void in_process_describe(struct watch_set *ws, struct watched *w, struct mt_target_facts *f)
{
	(void)ws;
	if (w->alloc)
		snprintf(f->allocator, sizeof(f->allocator), "%s", w->alloc->name);
}

/* The calls the sampler counted, in f's exact counters (the USDT probes'
 * hits and samples stay the BPF side's). Once the process is gone its
 * memory is too: its last counts stay. */
static void in_process_counts(struct watch_set *ws, struct watched *w, struct mt_target_facts *f)
{
	(void)ws;
	inject_counts(w->inj, &w->inj_counts);
	f->counters.alloc_calls = w->inj_counts.alloc_calls;
	f->counters.alloc_bytes = w->inj_counts.alloc_bytes;
	f->counters.free_calls = w->inj_counts.free_calls;
}

/* Say once whether the sampler wraps CPython's object allocator: when it
 * does, or when it still does not by the deadline. */
static void python_report(struct watch_set *ws, struct watched *w)
{
	int state;

	if (!w->inj->python || w->inj->py_said == MT_PY_HOOK_ON)
		return;
	state = inject_python_state(w->inj);
	if (state == MT_PY_HOOK_ON) {
		/* pymalloc's objects are seen now: no word that they are not */
		struct mt_target_facts f = { .pid = w->pid, .set = MT_FACT_RUNTIME };

		watch_report(ws, &f);
		watch_warn(ws,
			   "PID %d: CPython's object allocator wrapped: the objects pymalloc serves "
			   "are sampled too",
			   w->pid);
		w->inj->py_said = state;
	} else if (w->inj->py_said < 0 &&
		   clock_mono_ns() - w->inj->py_since_ns > PY_WRAP_DEADLINE_NS) {
		watch_warn(ws,
			   "PID %d: CPython's object allocator is not wrapped after %llu s: its main "
			   "thread has run no Python code since (a C call holding the GIL, or a "
			   "wait in C); objects pymalloc serves are not seen until it does",
			   w->pid, PY_WRAP_DEADLINE_NS / 1000000000ULL);
		w->inj->py_said = state;
	}
}

/* Objects dlopen'ed since: their slots rerouted too. */
static void in_process_tend(struct watch_set *ws, struct watched *w)
{
	char err[512];

	if (inject_rescan(w->inj, err, sizeof(err)) < 0)
		watch_warn(ws, "%s", err);
	python_report(ws, w);
}

/* What the sampler's own path cost the calls it counted. */
static __u64 in_process_self_ns(struct watch_set *ws, struct watched *w, __u64 samples)
{
	if (inject_counts(w->inj, &w->inj_counts))
		return 0;
	return (__u64)inject_cost_ns(&ws->inj_cost, &w->inj_counts, samples);
}

/* The GOT first (calls stop reaching the sampler), then its probes. */
static void in_process_release(struct watch_set *ws, struct watched *w)
{
	inject_end(ws, w);
	mechanism_release_probes(ws, w);
}

const struct mechanism mechanism_in_process = {
	.name = "in-process",
	.said = "memtop's sampler, in-process",
	.samples_itself = true,
	.counts_exact = true,
	.choose = in_process_choose,
	.choose_command = in_process_choose_command,
	.launched = in_process_launched,
	.attach = in_process_attach,
	.describe = in_process_describe,
	.counts = in_process_counts,
	.tend = in_process_tend,
	.self_ns = in_process_self_ns,
	.release = in_process_release,
};

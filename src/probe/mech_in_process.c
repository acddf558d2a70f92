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
#include "probe/attach.h"
#include "probe/bpf_loader.h"
#include "probe/inject.h"
#include "probe/inject_handover.h"
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
	if (ws->env.bpf) /* none yet when it was prepared but not attached */
		bpf_loader_inject_final(ws->env.bpf, w->pid, 0);
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

/* The sampler file memtop puts in (0), or one line in err (-ENOENT). */
static int sampler_file(char *so, size_t len, char *err, size_t errlen)
{
	if (!watch_find_lib(MECH_INJECT_SO, so, len))
		return 0;
	snprintf(err, errlen, "%s not found next to memtop or in %s", MECH_INJECT_SO, MEMTOP_LIBDIR);
	return -ENOENT;
}

/* Put memtop's sampler into w. 0, or -errno with one line in err (and
 * the reason in w->uprobes_why). */
static int inject_into(struct watch_set *ws, struct watched *w, char *err, size_t errlen)
{
	__u64 py[MT_PY_API_COUNT];
	char so[PATH_MAX];
	int e;

	if (sampler_file(so, sizeof(so), err, errlen))
		return -ENOENT;
	inject_end(ws, w); /* a process prepared again (it exec'd): its old image's */
	w->inj = calloc(1, sizeof(*w->inj));
	if (!w->inj) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	/* its children are watched too where the watch follows new processes */
	e = inject_attach(w->inj, w->pid, so, ws->env.cfg->rate, python_api(w->pid, py) ? py : NULL,
			  ws->cgroup_fd >= 0 || ws->launch.pid > 0, err, errlen);
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
		   "(it took %.2f ms to stop)%s",
		   w->pid, w->inj->reused ? "reused" : "injected", w->inj->nslots,
		   w->inj->pause_ns / 1e6, w->inj->reach_ns / 1e6,
		   w->inj->since_fork ? "; its calls counted from its fork" : "");
	return 0;
}

/* The sampler's USDT probes are on w: a forked child counting since its
 * fork counts while they are from now on (else it counts on, unread:
 * harmless), and its last counts are summed by the BPF side as it ends
 * (abi.h, struct mt_inject_final; else its last read stands). */
static void probes_on(struct watch_set *ws, struct watched *w)
{
	inject_mark_probed(w->inj);
	bpf_loader_inject_final(ws->env.bpf, w->pid, inject_slots_at(w->inj));
}

/* ---- the handover (docs/inject.md, "The handover") ---------------------- */

/* Where a handed-over process stands (w->handover). */
enum {
	HANDOVER_NONE,     /* injected at once, or done */
	HANDOVER_UPROBES,  /* counted by its allocator's uprobes; the sampler
			    * goes in at the refresh after the first one that
			    * shows the process */
	HANDOVER_ADOPTING, /* the sampler counts every call it sees; the
			    * uprobes count the others, and follow the frees of
			    * the blocks they sampled, until the sampler has
			    * taken them */
};

/* A process new in a watched cgroup whose allocator memtop can probe is
 * not injected at once: the uprobes count it first, from its attach. One
 * forked by a process with the sampler in, counting since its fork, is:
 * the sampler it carries has counted its every call. */
static int inject_or_hand_over(struct watch_set *ws, struct watched *w, char *err, size_t errlen)
{
	char so[PATH_MAX];

	if (w->hand_over && w->alloc &&
	    (sampler_file(so, sizeof(so), err, errlen) || !inject_counted_since_fork(w->pid, so))) {
		w->handover = HANDOVER_UPROBES;
		return 0;
	}
	return inject_into(ws, w, err, errlen);
}

/* How w is watched now, told to the model. */
static void say_how(struct watch_set *ws, struct watched *w)
{
	struct mt_target_facts f = { .pid = w->pid, .set = MT_FACT_HOW };

	snprintf(f.allocator, sizeof(f.allocator), "%s", w->alloc ? w->alloc->name : "");
	snprintf(f.mechanism, sizeof(f.mechanism), "%s", w->mech->name);
	if (w->mech == &mechanism_uprobes)
		snprintf(f.mechanism_why, sizeof(f.mechanism_why), "%s", w->uprobes_why);
	watch_report(ws, &f);
}

/* The injection refused or undone: w stays on the uprobes it has, as the
 * uprobes row's, with the reason. */
static void stay_on_uprobes(struct watch_set *ws, struct watched *w, const char *err)
{
	if (target_alive(w->pid)) /* else its end is said at the next refresh */
		watch_warn(ws, "%s: watching it with uprobes", err);
	if (w->uprobes) {
		w->probes = w->uprobes;
		w->uprobes = NULL;
	}
	bpf_loader_handover(ws->env.bpf, w->pid, 0, 0);
	w->handover = HANDOVER_NONE;
	w->mech = &mechanism_uprobes;
	slowdown_init(&w->cost, ws->env.trap_ns, false);
	say_how(ws, w);
}

/* Hand the sampler the blocks the uprobes sampled, the next round of at
 * most MT_INJECT_ADOPT_MAX (the rest come at later refreshes). */
static int adopt_round(struct watch_set *ws, struct watched *w, size_t *n)
{
	static __u64 addrs[MT_INJECT_ADOPT_MAX];

	*n = bpf_loader_live_addrs(ws->env.bpf, w->pid, w->adopted, addrs, MT_INJECT_ADOPT_MAX);
	return inject_adopt(w->inj, addrs, *n, &w->adopt_serial);
}

/* The sampler in: its text told to the BPF side first (from then on the
 * uprobes leave the sampler's calls alone), then its probes (it counts
 * every call it sees from then on), then the uprobes' blocks handed to
 * it. */
static void sampler_in(struct watch_set *ws, struct watched *w)
{
	char err[512], lib[PATH_MAX];
	__u64 lo, hi;
	size_t n;
	int e;

	snprintf(lib, sizeof(lib), "%s", w->lib); /* the uprobes' file */
	if (inject_into(ws, w, err, sizeof(err))) {
		stay_on_uprobes(ws, w, err);
		return;
	}
	if (w->inj->since_fork && inject_count_from_now(w->inj)) {
		/* the uprobes counted its calls until now: the sampler's
		 * count from here, or not at all */
		snprintf(err, sizeof(err), "PID %d: cannot read the sampler's counts", w->pid);
		inject_end(ws, w);
		snprintf(w->lib, sizeof(w->lib), "%s", lib);
		stay_on_uprobes(ws, w, err);
		return;
	}
	e = inject_text_range(w->inj, &lo, &hi);
	if (!e)
		e = bpf_loader_handover(ws->env.bpf, w->pid, lo, hi);
	w->uprobes = w->probes;
	w->probes = NULL;
	if (!e)
		e = mechanism_preloaded.attach(ws, w, err, sizeof(err));
	else
		snprintf(err, sizeof(err), "PID %d: cannot hand it over: %s", w->pid, strerror(-e));
	if (!e)
		probes_on(ws, w);
	if (e) {
		inject_end(ws, w);
		snprintf(w->lib, sizeof(w->lib), "%s", lib);
		stay_on_uprobes(ws, w, err);
		return;
	}
	/* the uprobes stay whole until the sampler has their blocks: a call
	 * that read the semaphores before they went up reaches them, late,
	 * and is theirs to count */
	w->adopted = 0;
	if (adopt_round(ws, w, &n)) {
		/* cannot write the round: the blocks stay with the uprobes' view */
		n = 0;
	}
	w->adopted = n;
	w->handover = HANDOVER_ADOPTING;
	say_how(ws, w);
}

/* The uprobes off once the sampler has every block they sampled. */
static void adopting(struct watch_set *ws, struct watched *w)
{
	struct mt_proc_counters c = { 0 };
	int done = inject_adopted(w->inj, w->adopt_serial);
	size_t n;

	if (!done)
		return;
	if (done > 0 && !(w->adopted % MT_INJECT_ADOPT_MAX) && w->adopted &&
	    !adopt_round(ws, w, &n) && n) {
		w->adopted += n; /* a full round: there may be more */
		return;
	}
	attach_detach(w->uprobes);
	w->uprobes = NULL;
	bpf_loader_handover(ws->env.bpf, w->pid, 0, 0);
	w->handover = HANDOVER_NONE;
	bpf_loader_read_counters(ws->env.bpf, w->pid, &c);
	watch_warn(ws,
		   "PID %d: handed over from %s uprobes to the sampler after %.0f ms: "
		   "%llu calls counted by the uprobes, %zu blocks they sampled taken over",
		   w->pid, w->alloc ? w->alloc->name : "allocator",
		   (clock_mono_ns() - w->handover_ns) / 1e6,
		   (unsigned long long)(c.alloc_calls + c.free_calls), w->adopted);
}

/* Let a handover go, wherever it stands (the process let go). */
static void handover_end(struct watch_set *ws, struct watched *w)
{
	attach_detach(w->uprobes);
	w->uprobes = NULL;
	if (w->handover)
		bpf_loader_handover(ws->env.bpf, w->pid, 0, 0);
	w->handover = HANDOVER_NONE;
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
	else if (!inject_or_hand_over(ws, w, why, sizeof(why)))
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

/* Its probes are a preloaded sampler's: the same USDT probes. A process
 * to be handed over gets its allocator's uprobes first. */
static int in_process_attach(struct watch_set *ws, struct watched *w, char *err, size_t errlen)
{
	int e;

	if (w->handover == HANDOVER_UPROBES) {
		w->handover_ns = clock_mono_ns();
		w->handover_shown = false;
		return mechanism_uprobes.attach(ws, w, err, errlen);
	}
	e = mechanism_preloaded.attach(ws, w, err, errlen);
	if (!e && w->inj)
		probes_on(ws, w);
	return e;
}

/* In-process, the allocator behind the sampler, where memtop knows it;
 * uprobes until the sampler is in. */
static void in_process_describe(struct watch_set *ws, struct watched *w, struct mt_target_facts *f)
{
	(void)ws;
	if (w->alloc)
		snprintf(f->allocator, sizeof(f->allocator), "%s", w->alloc->name);
	if (w->handover == HANDOVER_UPROBES) {
		snprintf(f->mechanism, sizeof(f->mechanism), "%s", mechanism_uprobes.name);
		snprintf(f->mechanism_why, sizeof(f->mechanism_why), "until the sampler is in");
	}
	if (w->inj && w->inj->since_fork && w->id.start_ticks)
		f->watched_ns = target_started_mono_ns(&w->id); /* counted from its fork */
}

/* The sampler's counts as its process ended, summed by the BPF side,
 * into w->inj_counts: 0, or -errno (then they stay as last read). */
static int final_counts(struct watch_set *ws, struct watched *w)
{
	struct mt_inject_final fin;
	struct mt_inject_counts raw;
	int e = bpf_loader_read_inject_final(ws->env.bpf, w->pid, &fin);

	if (e)
		return e;
	raw = (struct mt_inject_counts){ .alloc_calls = fin.alloc_calls,
					 .alloc_bytes = fin.alloc_bytes,
					 .free_calls = fin.free_calls,
					 .py_calls = fin.py_calls,
					 .py_allocs = fin.py_allocs,
					 .py_frees = fin.py_frees };
	inject_counts_since(w->inj, &raw, &w->inj_counts);
	return 0;
}

/* The calls the sampler counted added to the uprobes' (a handover's, in
 * f already) in f's exact counters (the USDT probes' hits and samples
 * stay the BPF side's). Once the process is gone its memory is too: its
 * last counts are the ones the BPF side summed as it ended (else the
 * last read). */
static void in_process_counts(struct watch_set *ws, struct watched *w, struct mt_target_facts *f)
{
	if (!w->inj)
		return; /* the uprobes count it, until the handover */
	if (inject_counts(w->inj, &w->inj_counts))
		final_counts(ws, w);
	f->counters.alloc_calls += w->inj_counts.alloc_calls;
	f->counters.alloc_bytes += w->inj_counts.alloc_bytes;
	f->counters.free_calls += w->inj_counts.free_calls;
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

/* The handover's next step; objects dlopen'ed since: their slots
 * rerouted too. */
static void in_process_tend(struct watch_set *ws, struct watched *w)
{
	char err[512];

	if (w->handover == HANDOVER_UPROBES && !w->handover_shown)
		w->handover_shown = true; /* in at the next refresh, not this one */
	else if (w->handover == HANDOVER_UPROBES)
		sampler_in(ws, w);
	else if (w->handover == HANDOVER_ADOPTING)
		adopting(ws, w);
	if (!w->inj)
		return;

	if (inject_rescan(w->inj, err, sizeof(err)) < 0)
		watch_warn(ws, "%s", err);
	python_report(ws, w);
}

/* What the sampler's own path cost the calls it counted. */
static __u64 in_process_self_ns(struct watch_set *ws, struct watched *w, __u64 samples)
{
	if (!w->inj || inject_counts(w->inj, &w->inj_counts))
		return 0;
	return (__u64)inject_cost_ns(&ws->inj_cost, &w->inj_counts, samples);
}

/* The GOT first (calls stop reaching the sampler), then its probes. */
static void in_process_release(struct watch_set *ws, struct watched *w)
{
	inject_end(ws, w);
	mechanism_release_probes(ws, w);
	handover_end(ws, w);
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

// SPDX-License-Identifier: GPL-2.0-only
/*
 * mech_preloaded.c - the row of the mechanism table (mechanism.h) for a
 * process that samples itself: it runs a sampler with otel_memory USDT
 * probes (memtop's preloaded one, or its own), and memtop watches those
 * probes at a fraction of the cost of trapping its allocator
 * (docs/sampler.md). The in-process row's probes are the same.
 */
#include "probe/mechanism.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>

#include "probe/attach.h"
#include "probe/inject_image.h"
#include "probe/usdt.h"
#include "probe/watch.h"
#include "readers/proc_maps.h"

/* Does pid run a sampler of its own (otel_memory probes, in usdt: its
 * file)? Not memtop's injected one: both asked of one read of its maps,
 * so a sampler another memtop maps meanwhile is either in both answers
 * or in neither. */
static bool samples_itself_now(pid_t pid, char *usdt, size_t len)
{
	struct mt_maps maps;
	bool own;

	if (proc_maps_read(pid, &maps))
		return false;
	own = inject_image_find_in(&maps, &(__u64){ 0 }) != 0 &&
	      !usdt_find_in_maps(pid, &maps, "otel_memory", usdt, len);
	proc_maps_free(&maps);
	return own;
}

/* Not when its sampler sees no call: in front of an allocator other than
 * glibc's the preloaded sampler passes every call through
 * (memtop_sampler.c), and memtop's injected copy, still mapped after an
 * injection that ended cleanly, has had its GOT slots put back: their
 * probes would never fire. The allocator malloc binds to must be one
 * memtop has a table for, as for every row but the in-process one. */
static int preloaded_choose(struct watch_set *ws, struct watched *w, struct mech_ask *ask,
			    char *err, size_t errlen)
{
	const struct mt_config *cfg = ws->env.cfg;
	char usdt[PATH_MAX];
	int e;

	if (cfg->inject_mode == MT_INJECT_ALWAYS)
		return 1; /* any allocator works behind memtop's sampler */
	e = mechanism_serving(w, ask, err, errlen);
	if (e == -ENOTSUP && cfg->inject_mode == MT_INJECT_AUTO && cfg->probe_mode == MT_PROBE_AUTO)
		return 1; /* no table for it: the in-process row may take it */
	if (e)
		return e;
	if (cfg->probe_mode != MT_PROBE_AUTO || w->alloc != allocators_glibc() ||
	    !samples_itself_now(w->pid, usdt, sizeof(usdt)))
		return 1;
	snprintf(w->lib, sizeof(w->lib), "%s", usdt);
	return 0;
}

/* A command in front of glibc's malloc gets memtop's sampler preloaded
 * (docs/sampler.md), unless --no-preload or a --probe-mode asks for
 * uprobes. */
static int preloaded_choose_command(struct watch_set *ws, struct watched *w, struct mech_launch *l,
				    char *err, size_t errlen)
{
	const struct mt_config *cfg = ws->env.cfg;

	(void)w, (void)err, (void)errlen;
	if (cfg->no_preload || cfg->probe_mode != MT_PROBE_AUTO)
		return 1;
	if (watch_find_lib(MECH_SAMPLER_SO, l->sampler, sizeof(l->sampler))) {
		watch_warn(ws, "%s not found: probing glibc's allocator instead", MECH_SAMPLER_SO);
		return 1;
	}
	mechanism_launch_allocator(ws, l);
	if (l->foreign[0] || l->extra.alloc)
		return 1;
	l->preload = l->sampler;
	return 0;
}

static void preloaded_launched(struct watch_set *ws, struct watched *w, const struct mech_launch *l)
{
	(void)ws;
	mechanism_launch_glibc(w, l);
	snprintf(w->lib, sizeof(w->lib), "%s", l->sampler);
}

static int preloaded_attach(struct watch_set *ws, struct watched *w, char *err, size_t errlen)
{
	w->probes = attach_usdt(ws->env.bpf, w->pid, w->lib, &ws->info, err, errlen);
	return w->probes ? 0 : errno ? -errno : -EINVAL;
}

const struct mechanism mechanism_preloaded = {
	.name = "preloaded",
	.said = "its own sampler",
	.samples_itself = true,
	.counts_exact = false,
	/* its sampler wraps CPython's object allocator while a tool is
	 * attached (docs/python.md): pymalloc's objects are seen */
	.sees_pymalloc = true,
	.choose = preloaded_choose,
	.choose_command = preloaded_choose_command,
	.launched = preloaded_launched,
	.attach = preloaded_attach,
	.release = mechanism_release_probes,
};

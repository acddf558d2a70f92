// SPDX-License-Identifier: GPL-2.0-only
/*
 * mech_uprobes.c - the uprobes row of the mechanism table (mechanism.h):
 * the allocator malloc binds to (glibc, jemalloc, tcmalloc: allocators.h)
 * trapped at each call (attach.h), the first-class fallback wherever the
 * in-process sampler is refused or not wanted (--no-inject), with the
 * reason said (w->uprobes_why). It changes nothing in the process.
 */
#include "probe/mechanism.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>

#include "probe/attach.h"
#include "probe/inject.h"
#include "probe/watch.h"
#include "readers/elf_file.h"

/* A sampler an earlier memtop injected and, killed, left rerouted (read
 * from the process's memory only): --inject takes it over and puts it
 * back at exit; without --inject memtop only observes and says so. */
static bool injected_before(pid_t pid)
{
	char so[PATH_MAX];

	return !watch_find_lib(MECH_INJECT_SO, so, sizeof(so)) && inject_orphaned(pid, so);
}

/* Every process the rows before did not take, whose allocator memtop
 * has a table for. */
static int uprobes_choose(struct watch_set *ws, struct watched *w, struct mech_ask *ask, char *err,
			  size_t errlen)
{
	int e = mechanism_serving(w, ask, err, errlen);

	if (e)
		return e;
	if (ws->env.cfg->inject_mode == MT_INJECT_NEVER && injected_before(w->pid))
		watch_warn(ws,
			   "PID %d: its allocator calls pass through a sampler a killed memtop "
			   "left in it; with --no-inject memtop changes nothing in a process and "
			   "watches it with uprobes",
			   w->pid);
	return 0;
}

/* Any other command: glibc's allocator, or the one it calls instead,
 * with the prefixed one beside it. */
static int uprobes_choose_command(struct watch_set *ws, struct watched *w, struct mech_launch *l,
				  char *err, size_t errlen)
{
	(void)w, (void)err, (void)errlen;
	mechanism_launch_allocator(ws, l);
	return 0;
}

/* The allocator at path probed, if memtop has a table for it. */
static void probe_foreign(struct watch_set *ws, struct watched *w, const char *path)
{
	struct elf_file *ef = elf_file_open(path);
	const struct allocator *a =
		ef ? allocators_identify(ef, path, w->alloc_prefix, sizeof(w->alloc_prefix)) : NULL;

	if (ef)
		elf_file_close(ef);
	if (!a) {
		watch_warn(ws,
			   "memtop has no probe table for the allocator in %s: "
			   "its allocations will not be seen",
			   path);
		return;
	}
	w->alloc = a;
	snprintf(w->lib, sizeof(w->lib), "%s", path);
}

/* lib is glibc's, as the launch found it, unless the command calls
 * another allocator. */
static void uprobes_launched(struct watch_set *ws, struct watched *w, const struct mech_launch *l)
{
	mechanism_launch_glibc(w, l);
	if (l->foreign[0])
		probe_foreign(ws, w, l->foreign);
}

static int uprobes_attach(struct watch_set *ws, struct watched *w, char *err, size_t errlen)
{
	w->probes = attach_target(ws->env.bpf, w->pid, w->lib, w->alloc, w->alloc_prefix,
				  ws->env.cfg->probe_mode != MT_PROBE_URETPROBE, &ws->info, err,
				  errlen);
	return w->probes ? 0 : errno ? -errno : -EINVAL;
}

/* A command attached before its exec: its thread-exit frees are found
 * once it runs. */
static void uprobes_tend(struct watch_set *ws, struct watched *w)
{
	(void)ws;
	attach_exit_frees(w->probes);
}

/* Why not in-process, where memtop could have done it. */
static void uprobes_describe(struct watch_set *ws, struct watched *w, struct mt_target_facts *f)
{
	(void)ws;
	snprintf(f->mechanism_why, sizeof(f->mechanism_why), "%s", w->uprobes_why);
}

const struct mechanism mechanism_uprobes = {
	.name = "uprobes",
	.samples_itself = false,
	.counts_exact = true,
	.choose = uprobes_choose,
	.choose_command = uprobes_choose_command,
	.launched = uprobes_launched,
	.attach = uprobes_attach,
	.tend = uprobes_tend,
	.describe = uprobes_describe,
	.release = mechanism_release_probes,
};

// SPDX-License-Identifier: GPL-2.0-only
/*
 * mech_launch.c - what the mechanism table's rows know of a command
 * before it runs (-- CMD; mechanism.h): the allocator its malloc will
 * bind to, read from its executable and the libraries it needs
 * (launch_alloc.h), and whether memtop's sampler would see its calls.
 */
#include "probe/mechanism.h"

#include <stdio.h>
#include <string.h>

#include "probe/launch_alloc.h"
#include "probe/watch.h"
#include "readers/elf_file.h"

/* The way a running process gets memtop's sampler (docs/inject.md),
 * after its exec once its loader has mapped its objects: unless it asked
 * for uprobes or a second, prefixed allocator would stay out of the
 * sampler's sight. */
bool mechanism_launch_injectable(const struct watch_set *ws, const struct mech_launch *l)
{
	const struct mt_config *cfg = ws->env.cfg;

	return !cfg->no_preload && cfg->probe_mode == MT_PROBE_AUTO && !l->extra.alloc;
}

void mechanism_launch_glibc(struct watched *w, const struct mech_launch *l)
{
	w->alloc = allocators_glibc();
	w->alloc_prefix[0] = '\0';
	w->extra = l->extra;
}

/* A command whose malloc is not glibc's: the preloaded sampler would
 * step aside in front of it. Its library goes to l->foreign, "" when the
 * command uses glibc's. A prefixed allocator in the executable (je_malloc
 * beside glibc's malloc) goes to l->extra: no sampler sees its calls. */
void mechanism_launch_allocator(struct watch_set *ws, struct mech_launch *l)
{
	struct elf_file *ef;
	bool glibc = true, dynamic;
	char *exe = l->exe;

	if (l->allocator_known)
		return;
	l->allocator_known = true;
	l->foreign[0] = '\0';
	l->extra = (struct alloc_target){ 0 };
	if (!exe[0])
		return;
	/* a static command has no allocator to choose: launching refuses it */
	ef = elf_file_open(exe);
	dynamic = ef && elf_file_is_dynamic(ef);
	if (dynamic)
		l->extra.alloc = allocators_identify_prefixed(ef, exe, l->extra.prefix,
							      sizeof(l->extra.prefix));
	if (ef)
		elf_file_close(ef);
	if (l->extra.alloc) {
		snprintf(l->extra.path, sizeof(l->extra.path), "%s", exe);
		watch_warn(ws,
			   "%s calls %s under the prefix %s besides its malloc: the in-process "
			   "sampler would not see those calls, probing both allocators with uprobes "
			   "instead",
			   basename(exe), l->extra.alloc->name, l->extra.prefix);
	}
	if (!dynamic || launch_alloc_find(exe, l->foreign, sizeof(l->foreign), &glibc) || glibc) {
		l->foreign[0] = '\0';
		return;
	}
	if (!mechanism_launch_injectable(ws, l))
		watch_warn(ws,
			   "%s calls the allocator of %s, not glibc's: the in-process sampler would "
			   "step aside, probing that allocator with uprobes instead",
			   basename(exe), l->foreign);
	else
		watch_warn(ws,
			   "%s calls the allocator of %s, not glibc's: memtop's sampler goes into it "
			   "once its loader is done, as --inject does (the preloaded one would step "
			   "aside)",
			   basename(exe), l->foreign);
}

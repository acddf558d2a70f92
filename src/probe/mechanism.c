// SPDX-License-Identifier: GPL-2.0-only
/*
 * mechanism.c - the table of ways a native heap is seen, and the choice
 * of one per process (mechanism.h).
 */
#include "probe/mechanism.h"

#include <errno.h>
#include <stdio.h>

#include "probe/alloc_resolve.h"
#include "probe/attach.h"
#include "probe/watch.h"

/* The order they are asked in, which is the order of preference: a Go
 * program's runtime samples itself whatever its C allocator; --inject puts
 * memtop's sampler in any other; a process that samples itself is
 * watched through its own sampler; by default memtop's sampler goes in
 * where it sees every call; the allocator's uprobes take the rest. */
static const struct mechanism *const rows[] = {
	&mechanism_go,
	&mechanism_preloaded,
	&mechanism_in_process,
	&mechanism_uprobes,
};

/* One choice: of a running process (ask) or of a command before it runs
 * (launch). */
struct choice {
	struct watch_set *ws;
	struct watched *w;
	struct mech_ask *ask;       /* NULL for a command */
	struct mech_launch *launch; /* NULL for a running process */
	char *err;
	size_t errlen;
};

/* The rows asked in order: the first that answers is w's. The uprobes
 * row answers for any process and command it gets to. */
static int choose(const struct choice *c)
{
	size_t i;
	int e = 1;

	for (i = 0; e == 1 && i < sizeof(rows) / sizeof(rows[0]); i++) {
		e = c->launch ? rows[i]->choose_command(c->ws, c->w, c->launch, c->err, c->errlen)
			      : rows[i]->choose(c->ws, c->w, c->ask, c->err, c->errlen);
		if (!e)
			c->w->mech = rows[i];
	}
	if (e == 1) {
		snprintf(c->err, c->errlen, "no way to watch its allocations");
		e = -ENOTSUP;
	}
	return e;
}

int mechanism_choose(struct watch_set *ws, struct watched *w, char *err, size_t errlen)
{
	struct mech_ask ask = { 0 };

	return choose(&(struct choice){ ws, w, &ask, NULL, err, errlen });
}

int mechanism_choose_command(struct watch_set *ws, struct watched *w, struct mech_launch *l,
			     char *err, size_t errlen)
{
	return choose(&(struct choice){ ws, w, NULL, l, err, errlen });
}

int mechanism_serving(struct watched *w, struct mech_ask *ask, char *err, size_t errlen)
{
	if (!ask->resolved) {
		ask->resolved = true;
		ask->resolve_e = alloc_resolve_pid(w->pid, &ask->serving, &w->extra,
						   ask->resolve_err, sizeof(ask->resolve_err));
		if (!ask->resolve_e) {
			w->alloc = ask->serving.alloc;
			snprintf(w->alloc_prefix, sizeof(w->alloc_prefix), "%s", ask->serving.prefix);
			snprintf(w->lib, sizeof(w->lib), "%s", ask->serving.path);
		}
	}
	if (ask->resolve_e)
		snprintf(err, errlen, "%s", ask->resolve_err);
	return ask->resolve_e;
}

void mechanism_release_probes(struct watch_set *ws, struct watched *w)
{
	(void)ws;
	attach_detach(w->probes);
	w->probes = NULL;
}

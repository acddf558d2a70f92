// SPDX-License-Identifier: GPL-2.0-only
/*
 * notices.c - the sentences about memtop's own bounds, said once
 * (notices.h). Owns their wording and when each is new; the bounds
 * themselves are the modules' that enforce them.
 */
#include "ui/notices.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "readers/proc_maps.h"
#include "stacks/proc_cache.h"
#include "util/sanitize.h"
#include "util/strpool.h"

bool notice_elf_limits(struct notices *n, unsigned long hit, char *line, size_t len)
{
	if (hit == n->elf_hit)
		return false;
	n->elf_hit = hit;
	snprintf(line, len,
		 "%lu mapped files over memtop's limits (2 GiB, 1M function symbols): only their "
		 "first 1M symbols are named",
		 hit);
	return true;
}

/* printf onto line[*at..len), *at kept within it. */
static void __attribute__((format(printf, 4, 5)))
add(char *line, size_t len, size_t *at, const char *fmt, ...)
{
	va_list ap;
	int k;

	if (*at + 1 >= len)
		return;
	va_start(ap, fmt);
	k = vsnprintf(line + *at, len - *at, fmt, ap);
	va_end(ap);
	if (k > 0)
		*at += (size_t)k < len - *at ? (size_t)k : len - *at - 1;
}

static unsigned int bounds_hit(const struct mt_target *t)
{
	return (t->limits.stacks_folded ? 1u : 0) | (t->limits.files_refused ? 2u : 0) |
	       (t->limits.maps_cut ? 4u : 0) | (t->limits.names_refused ? 8u : 0);
}

/* The bounds said for pid; NULL when it has no place (the table is full). */
static unsigned int *said_for(struct notices *n, pid_t pid)
{
	size_t i;

	for (i = 0; i < n->nsaid; i++)
		if (n->said[i].pid == pid)
			return &n->said[i].bounds;
	if (n->nsaid == NOTICES_MAX_TARGETS)
		return NULL;
	n->said[n->nsaid].pid = pid;
	n->said[n->nsaid].bounds = 0;
	return &n->said[n->nsaid++].bounds;
}

bool notice_target_limits(struct notices *n, const struct mt_model *m, unsigned int max_stacks,
			  char *line, size_t len)
{
	const struct mt_target *t = NULL;
	unsigned int *said = NULL;
	size_t i, at;
	char comm[64];
	int k;

	if (len < 2)
		return false;
	for (i = 0; i < model_target_count(m) && !t; i++) {
		const struct mt_target *c = model_target_at(m, i);
		unsigned int hit = bounds_hit(c);

		if (hit && (said = said_for(n, c->pid)) && (hit & ~*said)) {
			*said |= hit;
			t = c;
		}
	}
	if (!t)
		return false;
	k = snprintf(line, len, "PID %d (%s) reached memtop's per-target bounds:", (int)t->pid,
		     sanitize_text(comm, sizeof(comm), t->comm));
	at = k < 0 ? 0 : (size_t)k < len ? (size_t)k : len - 1;
	if (t->limits.stacks_folded)
		add(line, len, &at,
		    " %llu samples in stacks new past --max-stacks %u counted in " MT_STACKS_OVERFLOW
		    ";",
		    (unsigned long long)t->limits.stacks_folded, max_stacks);
	if (t->limits.files_refused)
		add(line, len, &at, " %llu mappings' files not opened (%u open at most);",
		    (unsigned long long)t->limits.files_refused, PROC_CACHE_MAX_FILE_MAPS);
	if (t->limits.maps_cut)
		add(line, len, &at, " %llu reads of its maps cut at %u MiB, %u mappings or %u ms;",
		    (unsigned long long)t->limits.maps_cut, PROC_MAPS_MAX_BYTES >> 20,
		    PROC_MAPS_MAX_ENTRIES, PROC_MAPS_MAX_MS);
	if (t->limits.names_refused)
		add(line, len, &at,
		    " %llu new paths and names past its %u MiB shown as " STRPOOL_OVERFLOW ";",
		    (unsigned long long)t->limits.names_refused, STRPOOL_OWNER_MAX_BYTES >> 20);
	if (at > 0 && line[at - 1] == ';')
		line[at - 1] = '\0'; /* the last ';' */
	return true;
}

bool notice_pool(struct notices *n, size_t refused, char *line, size_t len)
{
	if (!refused || n->pool_refused)
		return false;
	n->pool_refused = refused;
	snprintf(line, len,
		 "memtop keeps at most %u MiB of paths and names in all (%u MiB per target) and "
		 "targets keep making new ones: %zu shown as " STRPOOL_OVERFLOW,
		 STRPOOL_MAX_BYTES >> 20, STRPOOL_OWNER_MAX_BYTES >> 20, refused);
	return true;
}

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * notices.h - the sentences memtop says once about its own bounds: a
 * target that reached one of its per-target bounds (with that target's
 * counts), mapped files over the ELF limits, the string pool's bound in
 * all. Each call is given the counts as they are now and returns true,
 * with the line, only when there is something new to say since the last
 * line it returned; the caller says it (stderr, the status note that -b
 * prints and the TUI shows). Pure: no I/O, no clock.
 */
#ifndef MEMTOP_UI_NOTICES_H
#define MEMTOP_UI_NOTICES_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "model/model.h"

/* Targets whose bounds are remembered as said; a target past them is not
 * said (its counts stay in the JSON's limits). */
#define NOTICES_MAX_TARGETS 256

/* What was said so far; zero it to start. */
struct notices {
	unsigned long elf_hit; /* files over the ELF limits, as last said */
	size_t pool_refused;   /* names refused in all, once said */
	struct {
		pid_t pid;
		unsigned int bounds; /* the bounds said for it, one bit each */
	} said[NOTICES_MAX_TARGETS];
	size_t nsaid;
};

/* hit files over the ELF limits (readers/elf_file.h) so far: a line when
 * the count grew. */
bool notice_elf_limits(struct notices *n, unsigned long hit, char *line, size_t len);

/* A target of m hit a bound it had not hit before: a line naming that
 * target, with the counts of every bound it hit (one target a call: the
 * next has its line at the next call). max_stacks is --max-stacks. */
bool notice_target_limits(struct notices *n, const struct mt_model *m, unsigned int max_stacks,
			  char *line, size_t len);

/* refused names over the string pool's bound in all (util/strpool.h):
 * a line the first time it is not 0. */
bool notice_pool(struct notices *n, size_t refused, char *line, size_t len);

#endif /* MEMTOP_UI_NOTICES_H */

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * playback.h - show recorded data with the live front ends: a recording
 * (--replay FILE) or the stream of a running session (memtop attach).
 */
#ifndef MEMTOP_PLAYBACK_H
#define MEMTOP_PLAYBACK_H

#include <stdbool.h>

#include "config.h"

/* --replay cfg->replay: the TUI, -b or --json as the live run showed it,
 * then --output and --folded as they would have been written at its end.
 * Returns the exit code: 0, also for a recording cut short by a kill or a
 * full disk (one line says so); 1 when it cannot be read at all or has a
 * corrupt frame (one line says where). */
int playback_file(const struct mt_config *cfg);

/* memtop attach: the TUI on a session's stream read from fd (connected,
 * owned by the caller), following it live; name is the socket's path. */
int playback_stream(const struct mt_config *cfg, int fd, const char *name);

#endif /* MEMTOP_PLAYBACK_H */

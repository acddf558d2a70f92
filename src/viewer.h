/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * viewer.h - `memtop attach [ID|SOCKET]`: list the --daemon sessions, or
 * open the TUI on one (playback.h).
 */
#ifndef MEMTOP_VIEWER_H
#define MEMTOP_VIEWER_H

#include "config.h"

/* The exit code: 0, or 1 with one line on stderr. */
int viewer_run(const struct mt_config *cfg);

#endif /* MEMTOP_VIEWER_H */

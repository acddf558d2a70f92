/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * app.h - run memtop for a parsed configuration.
 */
#ifndef MEMTOP_APP_H
#define MEMTOP_APP_H

#include "config.h"

/* Everything from attach to teardown. Returns the process exit code:
 * 0 success, 1 a failure (one line already on stderr). */
int app_run(const struct mt_config *cfg);

#endif /* MEMTOP_APP_H */

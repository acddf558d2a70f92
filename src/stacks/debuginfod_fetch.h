/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * debuginfod_fetch.h - separate debug files fetched by build ID from the
 * debuginfod servers in $DEBUGINFOD_URLS (libdebuginfod), and nothing when
 * that is unset or empty.
 *
 * A fetch never runs on the caller's thread: debuginfod_fetch_get() hands
 * out a file already fetched, or queues the build ID for the one background
 * thread and returns at once (-EAGAIN), so the caller asks again later.
 * Each fetch is bounded (FETCH_TIMEOUT_S seconds, FETCH_MAX_BYTES bytes)
 * and each build ID is fetched at most once a run; at most FETCH_MAX_IDS
 * build IDs are asked for. libdebuginfod keeps what it fetched in its own
 * cache ($DEBUGINFOD_CACHE_PATH, else ~/.cache/debuginfod_client) and
 * prints nothing (memtop's terminal may be a TUI).
 */
#ifndef MEMTOP_DEBUGINFOD_FETCH_H
#define MEMTOP_DEBUGINFOD_FETCH_H

#include <stdbool.h>

/* Whether $DEBUGINFOD_URLS names a server (read once). */
bool debuginfod_fetch_enabled(void);

/* The fetched debug file of the lowercase hex build_id: a new descriptor
 * (the caller closes it) and *path, its name in the cache (owned by the
 * module, valid for the run). -EAGAIN while queued or in flight, -ENOENT
 * when the servers have none (or fetching is off, or failed), -EINVAL for
 * a build ID that is not hex. */
int debuginfod_fetch_get(const char *build_id, const char **path);

/* Cancel a fetch in flight and stop the thread (within about a second:
 * libdebuginfod checks for cancellation between waits). Fetched files stay
 * available; later gets of new build IDs answer -ENOENT. Idempotent. */
void debuginfod_fetch_stop(void);

#endif /* MEMTOP_DEBUGINFOD_FETCH_H */

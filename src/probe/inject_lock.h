/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * inject_lock.h - one injection at a time on this host: two memtops
 * injecting one process at the same moment would each map a sampler and
 * split its GOT slots between them. Each injection and each putting back
 * holds an exclusive lock on INJECT_LOCK_PATH (flock: released by the
 * kernel when the holder dies, SIGKILL included), waiting for it at most
 * INJECT_LOCK_WAIT_MS. The file is created by root in /run, where no one
 * else may create or replace it; it is never followed through a link.
 */
#ifndef MEMTOP_PROBE_INJECT_LOCK_H
#define MEMTOP_PROBE_INJECT_LOCK_H

#define INJECT_LOCK_PATH "/run/memtop-inject.lock"
#define INJECT_LOCK_WAIT_MS 5000

/* Take the lock. Its descriptor (>= 0), -1 when there is no such lock
 * to take here (no /run: go on without it), or -EBUSY when another
 * memtop held it for the whole wait. */
int inject_lock(void);
/* Release a lock inject_lock() returned (a negative value is fine). */
void inject_unlock(int fd);

#endif /* MEMTOP_PROBE_INJECT_LOCK_H */

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * link_release.h - releasing BPF links, many at once. The kernel waits for
 * a grace period inside each uprobe link's release (the unregister's
 * synchronize for RCU tasks trace and the uretprobes' SRCU): released one
 * after another, a teardown of N links waits N grace periods (20-50 ms
 * each on an idle 2-vCPU VM, more under load); released side by side,
 * they share one. Between link_batch_begin() and link_batch_end() the
 * links given to link_release*() are only queued; link_batch_end()
 * releases them all from threads side by side and returns once every one
 * is released (nothing is left attached after it). Outside a batch a link
 * is released at once. One thread at a time uses the batch.
 */
#ifndef MEMTOP_LINK_RELEASE_H
#define MEMTOP_LINK_RELEASE_H

struct bpf_link;

/* Queue links from now on (nested: only the outermost end releases). */
void link_batch_begin(void);
/* Release what was queued, side by side; returns when all are released. */
void link_batch_end(void);

/* Release a libbpf link (NULL: nothing) / a link descriptor (< 0: none). */
void link_release(struct bpf_link *link);
void link_release_fd(int fd);

#endif /* MEMTOP_LINK_RELEASE_H */

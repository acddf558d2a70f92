/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * bpf_loader.h - the BPF object: open, configure (rate, table, sizes),
 * load, and the map operations user space needs. The only module that
 * includes the generated skeleton.
 */
#ifndef MEMTOP_BPF_LOADER_H
#define MEMTOP_BPF_LOADER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <linux/types.h>

#include "memtop/abi.h"

struct mt_bpf;
struct bpf_program;
struct ring_buffer;

struct mt_bpf_opts {
	__u64 rate;       /* mean sampling interval, bytes */
	__u32 stack_copy; /* bytes of user stack copied per sample */
	__u32 live_max;   /* entries of the live map */
	bool session;     /* load the session program (kernel >= 6.13) */
};

/* Open and load. NULL with errno set and one line in err. */
struct mt_bpf *bpf_loader_open(const struct mt_bpf_opts *opts, char *err, size_t errlen);
void bpf_loader_close(struct mt_bpf *b);

/* The sampling phase of the allocation probes (struct mt_phase): samples
 * drawn at mean rate (0: the load-time rate) while the allocation probes
 * are on for a share duty of the time; allocs_on false while they are
 * switched off. A change of rate or duty starts a new epoch. */
void bpf_loader_set_phase(struct mt_bpf *b, __u64 rate, double duty, bool allocs_on);
/* Calls counted but never sampled while on (struct mt_phase.count_only):
 * the start-up cost measure, which switches free() off too, so that no
 * sampled block can lose its free. */
void bpf_loader_set_count_only(struct mt_bpf *b, bool on);

/* Whether the session program loaded. */
bool bpf_loader_has_session(const struct mt_bpf *b);
struct bpf_program *bpf_loader_prog_session(struct mt_bpf *b);
struct bpf_program *bpf_loader_prog_entry(struct mt_bpf *b);
struct bpf_program *bpf_loader_prog_return(struct mt_bpf *b);
struct bpf_program *bpf_loader_prog_usdt_alloc(struct mt_bpf *b);
struct bpf_program *bpf_loader_prog_usdt_free(struct mt_bpf *b);

/* Let the programs act for pid / stop and forget everything about it
 * (targets, counters, live samples). 0 or -errno. */
int bpf_loader_add_target(struct mt_bpf *b, pid_t pid);
void bpf_loader_remove_target(struct mt_bpf *b, pid_t pid);

/* pid is being handed over to memtop's sampler, whose text is [lo, hi)
 * in it (docs/inject.md, "The handover"): the allocator's uprobes leave
 * the calls made from there to the sampler and count the others. hi 0:
 * the handover is over (remove_target ends it too). 0 or -errno. */
int bpf_loader_handover(struct mt_bpf *b, pid_t pid, __u64 lo, __u64 hi);
/* [lo, hi) of the code that frees at a thread's exit in pid's allocator
 * (probe/tcache_exit.h), read by its free probes that carry
 * MT_PF_FREE_EXIT_RANGE; hi <= lo, or remove_target, drops it. 0 or
 * -errno. */
int bpf_loader_set_exit_frees(struct mt_bpf *b, pid_t pid, __u64 lo, __u64 hi);
/* pid runs memtop's injected sampler, its slots at slots: the BPF side
 * sums them as pid ends (abi.h, struct mt_inject_final). slots 0,
 * remove_target, or an exec of pid (its new program has no sampler)
 * forgets it. 0 or -errno. */
int bpf_loader_inject_final(struct mt_bpf *b, pid_t pid, __u64 slots);
/* Those sums, once pid has ended: 0, -EAGAIN when they are not (it has
 * not ended, or its slots could not be read then), or -ENOENT. */
int bpf_loader_read_inject_final(struct mt_bpf *b, pid_t pid, struct mt_inject_final *out);
/* The addresses of pid's live samples after the first skip, at most max
 * of them, into out: how many. */
size_t bpf_loader_live_addrs(struct mt_bpf *b, pid_t pid, size_t skip, __u64 *out, size_t max);

/* Tell the mmap source pid's current program break (target_brk), so that
 * its next brk growth is recorded from there. 0 or -errno. */
int bpf_loader_set_brk(struct mt_bpf *b, pid_t pid, __u64 brk);

/* Read pid's Python frames at every sample (MT_EV_PY records): its
 * interpreter's addresses and offsets (stacks/python.h). Forgotten with
 * the target. 0 or -errno. */
int bpf_loader_add_python(struct mt_bpf *b, pid_t pid, const struct mt_py_proc *py);

/* The programs of the Go runtime's sampled path (bpf/go.bpf.h), one per
 * probed function. */
enum mt_go_prog {
	MT_GO_PROG_MALLOC = 0, /* runtime.mProf_Malloc */
	MT_GO_PROG_FREE,       /* runtime.freeSpecial */
};
struct bpf_program *bpf_loader_prog_go(struct mt_bpf *b, enum mt_go_prog which);

/* The device source's programs (bpf/device.bpf.h): the entry uprobe, or
 * with ret the uretprobe, of every device API function (the attach
 * cookie is its enum mt_dev_fn). */
struct bpf_program *bpf_loader_prog_device(struct mt_bpf *b, bool ret);

/* Where pid's runtime.MemProfileRate is (struct mt_go_proc), read at
 * every Go sample for its weight; set again whenever it changes.
 * Forgotten with the target. 0 or -errno. */
int bpf_loader_set_go(struct mt_bpf *b, pid_t pid, const struct mt_go_proc *go);

/* Report forks and execs inside the cgroup v2 directory cgroup_fd
 * (MT_EV_PROC records). 0 or -errno. */
int bpf_loader_follow_cgroup(struct mt_bpf *b, int cgroup_fd);

/* Start the mmap source: a program at the raw sys_exit tracepoint that
 * records the anonymous mmaps and the munmaps of watched processes only.
 * Idempotent. 0 or -errno. */
int bpf_loader_follow_mmap(struct mt_bpf *b);
/* Hold what (enum mt_hold_what: the programs the followed processes exec
 * at their loader's end, the children of processes on uprobes before they
 * run; abi.h, struct mt_hold), or (0) stop holding new ones. 0, or
 * -errno. */
int bpf_loader_hold_newcomers(struct mt_bpf *b, __u32 what);
/* How many newcomers were not held for MT_HOLDS_PER_S. */
__u64 bpf_loader_holds_over_budget(const struct mt_bpf *b);
/* The held map (struct mt_hold by tgid), for hold.h. */
int bpf_loader_held_fd(const struct mt_bpf *b);

/* Report forks and execs of pid and of every process that descends from
 * it from now on (MT_EV_PROC records), except pid's first exec: pid is a
 * command held before the exec memtop releases it into, watched already.
 * 0 or -errno. */
int bpf_loader_follow_family(struct mt_bpf *b, pid_t pid);

/* Exact counters of pid summed over CPUs. 0 or -ENOENT (no call yet). */
int bpf_loader_read_counters(struct mt_bpf *b, pid_t pid, struct mt_proc_counters *out);
/* Global drop counters summed over CPUs. */
void bpf_loader_read_drops(struct mt_bpf *b, __u64 out[MT_DROP_COUNT]);

/* Ring buffer of events; cb gets each record's bytes. NULL + errno. */
struct ring_buffer *bpf_loader_ring(struct mt_bpf *b, int (*cb)(void *ctx, void *data, size_t size),
				    void *ctx);
/* The ring's epoll fd (readable when records are pending). */
int bpf_loader_ring_fd(struct ring_buffer *r);
/* Hand every pending record to the ring's callback. Records or -errno. */
int bpf_loader_ring_drain(struct ring_buffer *r);
void bpf_loader_ring_free(struct ring_buffer *r);

/* libbpf's own messages on stderr: none at 0, warnings at 1, debug at 2. */
void bpf_loader_set_verbosity(int verbose);

#endif /* MEMTOP_BPF_LOADER_H */

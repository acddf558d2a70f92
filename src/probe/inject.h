/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * inject.h - memtop -p PID --inject: load the in-process sampler
 * (libmemtop-inject.so) into a running process without a debugger and
 * route its allocator calls through it, then put everything back
 * (docs/inject.md). Once injected the process fires the otel_memory USDT
 * probes, consumed like those of a preloaded sampler.
 */
#ifndef MEMTOP_PROBE_INJECT_H
#define MEMTOP_PROBE_INJECT_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <linux/types.h>

#include "probe/inject_got.h"
#include "probe/inject_image.h"

#define INJECT_PY_RESTORE_MS 1000

/* What the sampler counted while a tool was attached (sampler_abi.h,
 * struct mt_inject_slot), summed over its slots. */
struct mt_inject_counts {
	__u64 alloc_calls, alloc_bytes, free_calls;
	__u64 py_calls;  /* through the wrapper of CPython's object allocator */
	__u64 py_allocs; /* of alloc_calls, the small objects it counted (its own
			  * slot, plain adds: inject_cost.h) */
	__u64 py_frees;  /* of free_calls, their frees */
};

struct inject_state {
	pid_t pid;
	struct inject_image im;
	__u64 base;                 /* the sampler's load address */
	__u64 first;                /* the link map's head */
	__u64 entry[MT_IFN_COUNT];  /* the sampler's entry points */
	__u64 target[MT_IFN_COUNT]; /* where the functions went before */
	char libc[PATH_MAX];        /* glibc's path in the process's maps */
	__u64 syscall_at;           /* a syscall instruction in it (the maps a detach
				     * reads are the mappings of this, the sampler
				     * and the slots: maps_for) */
	char path[PATH_MAX];        /* the mapped sampler, for the USDT attach */
	struct got_slot *slots;     /* rerouted, with their old values */
	size_t nslots;
	struct got_seen seen; /* objects scanned */
	__u64 skip_dyn;       /* an allocator whose own GOT is left alone, or 0 */
	bool reused;          /* the sampler was already mapped */
	bool attached;        /* slots rerouted, not yet restored */
	__u64 pause_ns;       /* how long the last stop held the thread */
	__u64 pause_max_ns;   /* the longest */
	__u64 reach_ns;       /* the last stop's wait for the thread to stop */
	unsigned int stops;   /* stops so far */
	__u64 py_api[MT_PY_API_COUNT]; /* CPython's C API to wrap its object allocator with; 0s: not CPython */
	bool python;                   /* py_api is set: the sampler wraps pymalloc */
	__u64 py_since_ns;             /* attach time, for the wrapping's deadline */
	int py_said;                   /* the wrapping's state last said (-1: nothing yet) */
	char py_note[256]; /* after a detach: why CPython's allocator was not given back, or "" */
	const char *why;   /* after a failed attach: the reason in a few words */
	struct mt_inject_counts counted_before; /* the sampler's counts at the attach */
	bool since_fork;   /* a copy forked with its counters zeroed and counting
			  * since (inject_counted_since_fork): counted_before
			  * is 0, its counts are all its own */
	bool mark_pending; /* such a copy, counting until it is marked
			    * (inject_mark_probed) */
};

/* Check pid may be injected (inject_check.h), map the sampler from
 * sampler_so unless a copy is already mapped, tell it where each function
 * went and at which rate to sample, and reroute every GOT slot. With
 * py_api (the C API python_detect found, NULL: not CPython) the sampler
 * also wraps CPython's object allocator, from a pending call the main
 * thread runs with the GIL (inject_python_state says when). With
 * count_children (a watch that follows the processes it forks), a child
 * it forks from then on until the detach starts with the sampler's
 * counters zeroed and counts every call from its fork
 * (inject_counted_since_fork); without, such a child counts nothing until
 * a tool attaches to it. 0, or -errno with one line in err and nothing
 * left changed in the process. */
int inject_attach(struct inject_state *st, pid_t pid, const char *sampler_so, __u64 rate,
		  const __u64 *py_api, bool count_children, char *err, size_t errlen);

/* Would the sampler miss allocations of pid (inject_got_blind_spot():
 * malloc defined in the executable, an allocator API it does not
 * reroute)? 1 with the reason in a few words in why, 0 when it would see
 * them all, or -errno. Reads only. */
int inject_blind_spot(pid_t pid, char *why, size_t len);

/* Does pid carry a copy of the sampler that its parent's forked with the
 * counters zeroed (the parent's marked MADV_WIPEONFORK by memtop) and
 * that has counted every call since (its semaphores up from the fork)?
 * Then an attach counts from its fork, not from the attach
 * (since_fork). Reads only. */
bool inject_counted_since_fork(pid_t pid, const char *sampler_so);

/* /proc/PID/mem of st's process opened with flags, only if the sampler
 * is still mapped where memtop put it (the process has not exec'd): a
 * descriptor, or -errno (-ESTALE: it is not). For writes after the
 * attach, out of a hold. */
int inject_mem_open_same(const struct inject_state *st, int flags);

/* memtop's probes are on a copy counting since its fork: from now on it
 * counts while they are (sampler_abi.h, struct mt_inject_slots). Once the
 * USDT probes are attached (before, calls would go uncounted); a no-op
 * for any other copy. 0 or -errno. */
int inject_mark_probed(struct inject_state *st);

/* Count from now on, whatever since_fork says: for a process whose calls
 * until now something else counted. 0 or -errno. */
int inject_count_from_now(struct inject_state *st);

/* Where the sampler's slots are in the process (struct mt_inject_slots). */
__u64 inject_slots_at(const struct inject_state *st);

/* raw, the sampler's counts summed over its slots (read by memtop, or by
 * the BPF side as the process ended), as counted since this attach (or
 * the fork) into out. */
void inject_counts_since(const struct inject_state *st, const struct mt_inject_counts *raw,
			 struct mt_inject_counts *out);

/* The calls the sampler counted since this attach, or since the fork
 * (since_fork; exact: every call while memtop's probes are attached).
 * 0 or -errno. */
int inject_counts(const struct inject_state *st, struct mt_inject_counts *c);

/* Where the wrapping of CPython's object allocator stands
 * (enum mt_py_hook_state), or -errno when it cannot be read. */
int inject_python_state(const struct inject_state *st);

/* Reroute the slots of objects loaded since the last call (dlopen). The
 * number of slots rerouted, or -errno with one line in err. */
int inject_rescan(struct inject_state *st, char *err, size_t errlen);

/* Put every rerouted slot back to its old value and mark the sampler
 * unattached. In CPython, CPython's object allocator is given back first,
 * by a pending call, waited for at most INJECT_PY_RESTORE_MS: a main
 * thread that does not run Python code meanwhile leaves the wrapper in
 * place, forwarding only (py_note says so; the call still succeeds). The sampler stays mapped (a thread may still be inside it;
 * a later memtop reuses it). 0 or -errno with one line in err; -ESTALE
 * when the process has exec'd since (nothing of the old image is left to
 * restore, and nothing is written). */
int inject_detach(struct inject_state *st, char *err, size_t errlen);

/* Does pid run a sampler whose GOT rerouting outlived its memtop (killed
 * with SIGKILL: the slots still point at it, nobody will restore them)?
 * Then a plain -p takes it over as with --inject. */
bool inject_orphaned(pid_t pid, const char *sampler_so);

void inject_free(struct inject_state *st);

#endif /* MEMTOP_PROBE_INJECT_H */

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * hold.h - newcomers held at their loader's end (docs/cgroup.md, "Held at
 * its start"). The BPF side stops a program that a followed process
 * execs at its loader's first relocation, before any allocator has run,
 * and puts it in the held map (abi.h, struct mt_hold); memtop lets it go
 * once its probes are on it (hold_release), so that it is counted from
 * its first allocation. A guard process lets go of every hold memtop has
 * not ended within HOLD_MAX_NS, and of all of them as soon as memtop ends,
 * however it ends (a SIGKILL included): no process stays stopped for
 * memtop.
 *
 * The map's protocol: an entry means that its process may be stopped for
 * memtop. memtop sends SIGCONT, then deletes the entry (if it dies in
 * between, the guard sends it again: a SIGCONT to a running process does
 * nothing); the guard deletes, then sends SIGCONT (the delete is its
 * claim, so that only a hold it ended is counted as cut short). Both check
 * that the PID is still the process that was held (its start time)
 * before they signal it, through a pidfd.
 */
#ifndef MEMTOP_PROBE_HOLD_H
#define MEMTOP_PROBE_HOLD_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <linux/types.h>

/* The guard's name (its comm), as ps shows it. */
#define HOLD_GUARD_NAME "memtop-guard"
/* The longest a newcomer stays held: the guard lets it go then. */
#define HOLD_MAX_NS (1000ULL * 1000 * 1000)

/* Is pid held, now, and stopped still? *held_ns: since when
 * (CLOCK_MONOTONIC). */
bool hold_check(int held_fd, pid_t pid, __u64 *held_ns);
/* Let pid go, if it is held. */
void hold_release(int held_fd, pid_t pid);
/* Let go of every hold older than before_ns (0: every hold); tick:
 * sysconf(_SC_CLK_TCK). Returns how many were let go. Async-signal-safe. */
int hold_release_older(int held_fd, __u64 before_ns, long tick);

struct hold_guard {
	pid_t pid;  /* 0: none */
	int pipe_w; /* memtop's end: its close (memtop's end) ends the guard */
};

/* Start the guard of held_fd's holds. 0, or -errno with one line in err. */
int hold_guard_start(struct hold_guard *g, int held_fd, char *err, size_t errlen);
/* Is the guard still running? */
bool hold_guard_alive(struct hold_guard *g);
/* End the guard (it lets go of every hold first); waits for it at most
 * a second. */
void hold_guard_stop(struct hold_guard *g);

#endif

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
 * before they signal it, through a pidfd. Both continue the parent of a
 * process they let go if the parent was not stopped when its child was
 * held and is now: the stop is a job-control stop its parent sees, and
 * some parents pass it on to themselves (su, runuser, sudo, script),
 * which nothing else would undo.
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
/* Does the held map list pid's process: stopped for memtop, or about to
 * stop (the BPF side's SIGSTOP may not have landed yet)? The map says so
 * before the hold's record in the ring buffer is read. */
bool hold_listed(int held_fd, pid_t pid);
/* A held process's parent, to look at once more a moment after its
 * child ran on (a parent slow to stop itself for its child's stop). */
struct hold_parent {
	pid_t pid;      /* 0: none */
	__u64 start_ns; /* its start; 0: it was stopped already when the child was held */
};

/* Let pid go, if it is held, and its parent if it stopped itself for
 * pid's stop (su, runuser, sudo, script pass a command's stop on to
 * themselves: see mt_hold). *parent (may be NULL): that parent, for
 * hold_parent_check(). */
void hold_release(int held_fd, pid_t pid, struct hold_parent *parent);
/* The parent of a process let go a moment ago: continued if it stopped
 * itself since. */
void hold_parent_check(struct hold_parent *parent);
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

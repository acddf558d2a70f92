// SPDX-License-Identifier: GPL-2.0-only
/*
 * hold.c - newcomers held at their loader's end: letting them go, and the
 * guard that lets them go whatever becomes of memtop (hold.h).
 *
 * The guard is a fork of memtop detached as a helper (helper_proc.h):
 * out of memtop's process group, every signal blocked, holding only the
 * held map and the read end of a pipe whose write end only memtop has.
 * It wakes every HOLD_GUARD_TICK_MS to let go of the holds past their
 * deadline; the pipe's end (memtop exited or was killed) makes it let go
 * of all of them and exit.
 */
#include "probe/hold.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <bpf/bpf.h>

#include "memtop/abi.h"
#include "util/clock.h"
#include "util/helper_proc.h"

#define HOLD_GUARD_TICK_MS 50
#define HOLD_PF_EXITING 0x4 /* /proc/PID/stat flags: the task is exiting */
#define HOLD_KEYS_MAX 1024  /* the held map's size (bpf/memtop.bpf.c) */

/* /proc/PID/stat's state and start time (clock ticks). Only
 * async-signal-safe calls: the guard, a fork of memtop, runs it too. 0, or
 * -1 when pid is gone. */
static int proc_stat(pid_t pid, char *state, __u64 *start_ticks, __u64 *flags)
{
	char path[32] = "/proc/", digits[12], buf[1024], *p;
	unsigned int v = (unsigned int)pid;
	int len = 0, fd, field;
	__u64 value = 0;
	ssize_t n;

	do
		digits[len++] = (char)('0' + v % 10);
	while ((v /= 10) && len < (int)sizeof(digits));
	for (p = path + 6; len > 0;)
		*p++ = digits[--len];
	memcpy(p, "/stat", 6);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	p = strrchr(buf, ')'); /* after the command's name, whatever it holds */
	if (!p || p[1] != ' ' || !p[2])
		return -1;
	p += 2;
	*state = *p;
	/* the state is field 3, the flags field 9, starttime field 22 */
	for (field = 3; *p; p++) {
		if (*p != ' ') {
			if (*p >= '0' && *p <= '9')
				value = value * 10 + (__u64)(*p - '0');
			continue;
		}
		if (field == 9 && flags)
			*flags = value;
		if (field == 22) {
			*start_ticks = value;
			return 0;
		}
		field++;
		value = 0;
	}
	return -1;
}

/* Is pid the process that started at start_ns (CLOCK_BOOTTIME, as the
 * BPF side takes it; tick: sysconf(_SC_CLK_TCK))? *state: its state.
 * Async-signal-safe. */
static bool same_process(pid_t pid, __u64 start_ns, long tick, char *state)
{
	__u64 start;

	return tick > 0 && !proc_stat(pid, state, &start, NULL) &&
	       start == start_ns / (1000000000ULL / (__u64)tick);
}

/* SIGCONT to pid if it is still the process that started at start_ns
 * and, when only_stopped, if it is stopped. */
static void cont_if_same(pid_t pid, __u64 start_ns, long tick, bool only_stopped)
{
	int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	char state;

	if (pidfd < 0)
		return; /* gone */
	/* opened first: if the PID still shows the held process's start, the
	 * pidfd is that process (it was alive when it was opened) */
	if (same_process(pid, start_ns, tick, &state) && (!only_stopped || state == 'T'))
		syscall(SYS_pidfd_send_signal, pidfd, SIGCONT, NULL, 0);
	close(pidfd);
}

/* After h's process runs on: a parent that was not stopped when it was
 * held and is now has stopped itself for its child's stop (su, runuser,
 * sudo and script do: they pass a command's job-control stop on to their
 * own shell), and nothing else would continue it. */
static void cont_parent(const struct mt_hold *h, long tick)
{
	if (h->parent > 1 && !h->parent_stopped)
		cont_if_same((pid_t)h->parent, h->parent_start_ns, tick, true);
}

bool hold_check(int held_fd, pid_t pid, __u64 *held_ns)
{
	struct mt_hold h;
	__u32 key = (__u32)pid;
	__u64 start;
	char state;

	/* held, and still stopped: nothing (another process of its cgroup)
	 * let it run on before its probes were on */
	if (held_fd < 0 || bpf_map_lookup_elem(held_fd, &key, &h) ||
	    proc_stat(pid, &state, &start, NULL) || (state != 'T' && state != 't'))
		return false;
	if (held_ns)
		*held_ns = h.held_ns;
	return true;
}

bool hold_listed(int held_fd, pid_t pid)
{
	struct mt_hold h;
	__u32 key = (__u32)pid;
	char state;

	/* the entry is this process's, not an earlier one's of its PID */
	return held_fd >= 0 && !bpf_map_lookup_elem(held_fd, &key, &h) &&
	       same_process(pid, h.start_ns, sysconf(_SC_CLK_TCK), &state);
}

void hold_release(int held_fd, pid_t pid, struct hold_parent *parent)
{
	long tick = sysconf(_SC_CLK_TCK);
	struct mt_hold h;
	__u32 key = (__u32)pid;

	if (parent)
		parent->pid = 0;
	if (held_fd < 0 || bpf_map_lookup_elem(held_fd, &key, &h))
		return;
	cont_if_same(pid, h.start_ns, tick, false);
	bpf_map_delete_elem(held_fd, &key);
	cont_parent(&h, tick);
	if (parent) {
		parent->pid = (pid_t)h.parent;
		parent->start_ns = h.parent_stopped ? 0 : h.parent_start_ns;
	}
}

void hold_parent_check(struct hold_parent *parent)
{
	if (parent->pid > 1 && parent->start_ns)
		cont_if_same(parent->pid, parent->start_ns, sysconf(_SC_CLK_TCK), true);
	parent->pid = 0;
}

int hold_release_older(int held_fd, __u64 before_ns, long tick)
{
	__u32 keys[HOLD_KEYS_MAX], key, *prev = NULL;
	int n = 0, i, let_go = 0;

	while (n < HOLD_KEYS_MAX && !bpf_map_get_next_key(held_fd, prev, &key)) {
		keys[n++] = key;
		prev = &keys[n - 1];
	}
	for (i = 0; i < n; i++) {
		struct mt_hold h;

		if (bpf_map_lookup_elem(held_fd, &keys[i], &h) ||
		    (before_ns && h.held_ns >= before_ns))
			continue;
		if (bpf_map_delete_elem(held_fd, &keys[i]))
			continue; /* memtop let it go meanwhile */
		cont_if_same((pid_t)keys[i], h.start_ns, tick, false);
		cont_parent(&h, tick);
		let_go++;
	}
	return let_go;
}

/* Is memtop (pid) exiting? A killed memtop closes its end of the pipe
 * only once the kernel has released the descriptors before it, each BPF
 * link a grace period (0.2-0.5 s here); its PF_EXITING flag is up from the
 * start of its exit. */
static bool exiting(pid_t pid)
{
	__u64 start, flags = 0;
	char state;

	return proc_stat(pid, &state, &start, &flags) || (flags & HOLD_PF_EXITING);
}

/* The guard: never returns. */
static void guard(int held_fd, int pipe_r, pid_t memtop, long tick)
{
	int keep[] = { held_fd, pipe_r };

	helper_proc_detach(keep, 2, 0);
	prctl(PR_SET_NAME, HOLD_GUARD_NAME);
	for (;;) {
		struct pollfd p = { .fd = pipe_r, .events = POLLIN };
		char c;

		if (poll(&p, 1, HOLD_GUARD_TICK_MS) > 0 && read(pipe_r, &c, 1) <= 0)
			break; /* memtop's end is closed: memtop ended */
		if (exiting(memtop))
			break;
		if (clock_mono_ns() > HOLD_MAX_NS)
			hold_release_older(held_fd, clock_mono_ns() - HOLD_MAX_NS, tick);
	}
	hold_release_older(held_fd, 0, tick);
	_exit(0);
}

int hold_guard_start(struct hold_guard *g, int held_fd, char *err, size_t errlen)
{
	long tick = sysconf(_SC_CLK_TCK); /* asked before the fork */
	pid_t memtop = getpid(), child;
	int end;

	g->pid = 0;
	g->pipe_w = -1;
	child = helper_proc_fork(true, &end, "the hold guard", err, errlen);
	if (child < 0)
		return child;
	if (!child)
		guard(held_fd, end, memtop, tick);
	g->pid = child;
	g->pipe_w = end;
	return 0;
}

bool hold_guard_alive(struct hold_guard *g)
{
	if (g->pid <= 0)
		return false;
	if (waitpid(g->pid, NULL, WNOHANG) == 0)
		return true;
	g->pid = 0; /* reaped, or not memtop's child any more */
	return false;
}

void hold_guard_stop(struct hold_guard *g)
{
	int pidfd = g->pid > 0 ? (int)syscall(SYS_pidfd_open, g->pid, 0) : -1;

	if (g->pipe_w >= 0)
		close(g->pipe_w); /* the guard lets go of every hold, then exits */
	g->pipe_w = -1;
	if (pidfd >= 0) {
		struct pollfd p = { .fd = pidfd, .events = POLLIN };

		poll(&p, 1, 1000);
		close(pidfd);
	}
	/* still running after a second: it ends on its own, reaped by init */
	if (g->pid > 0)
		waitpid(g->pid, NULL, WNOHANG);
	g->pid = 0;
}

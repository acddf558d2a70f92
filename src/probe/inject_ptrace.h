/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * inject_ptrace.h - one thread of a running process held briefly under
 * ptrace to make it execute system calls and a store stub on memtop's
 * behalf, then put back exactly as it was (docs/inject.md).
 *
 * Only the chosen thread stops; the others keep running. The thread runs
 * nothing but the instructions memtop points it at: a `syscall`
 * instruction found in libc's text (single-stepped) and the sampler's
 * store stub (ended by int3). It never calls into the loader or the
 * allocator, so it does not matter which locks it held when it stopped.
 * Every general register is restored; a system call the thread was
 * blocked in is restarted by the kernel as after any ptrace stop, and a
 * signal that arrived meanwhile is delivered on the way out.
 *
 * Every wait for the thread ends: a wait cut by a signal (the holder's
 * deadline, inject_hold.h, which runs all of this in a process of its
 * own) is -ETIMEDOUT, a thread that ended (its process exited, or another
 * thread exec'd) is -ESRCH, and inject_session_end() stops a thread cut
 * off in memtop's step again before putting its registers back.
 */
#ifndef MEMTOP_PROBE_INJECT_PTRACE_H
#define MEMTOP_PROBE_INJECT_PTRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <sys/user.h>
#include <linux/types.h>

#include "readers/proc_maps.h"

/* The page size of the x86-64 processes memtop injects into, and an
 * address rounded down or up to its page. */
#define INJECT_PAGE 4096ULL
#define INJECT_PAGE_DOWN(x) ((x) & ~(INJECT_PAGE - 1))
#define INJECT_PAGE_UP(x) (((x) + INJECT_PAGE - 1) & ~(INJECT_PAGE - 1))

struct inject_session {
	pid_t pid;          /* the process */
	pid_t tid;          /* the thread held */
	pid_t want_tid;     /* the thread inject_hold() is to hold; 0: it picks one */
	int mem_fd;         /* /proc/PID/mem, read-write */
	__u64 syscall_insn; /* address of a syscall instruction in the process */
	struct user_regs_struct saved;
	int pending_sig; /* a signal to deliver on the way out, or 0 */
	__u64 stop_ns;   /* when PTRACE_INTERRUPT was sent */
	__u64 held_ns;   /* when the thread was seen stopped */
	__u64 reach_ns;  /* how long it took to reach the stop (a thread
				 * waiting for a CPU or asleep was not running
				 * anyway: this is not part of the pause) */
	__u64 paused_ns; /* how long memtop held it, from the stop to the
				 * detach: set by inject_session_end() */
	int nice;        /* memtop's own, raised during the stop */
	bool nice_set;
	bool running; /* resumed by memtop and not seen stopped since */
	bool gone;    /* the thread ended (exit, or an exec by another thread) */
};

/* Open /proc/PID/mem and find a syscall instruction in the text mapping of
 * libc_path, as maps shows it (a snapshot the caller read: the maps of a
 * hostile process can be many MiB, read once per operation), or as
 * /proc/PID/maps shows it now when maps is NULL. No ptrace yet. 0 or
 * -errno with one line in err. */
int inject_session_prepare(struct inject_session *s, pid_t pid, const char *libc_path,
			   const struct mt_maps *maps, char *err, size_t errlen);

/* Seize and stop thread tid of the prepared process and save its
 * registers. -EPERM when ptrace is refused (Yama, another tracer, a user
 * namespace); -ESRCH when the thread ended (its death collected: never a
 * zombie left for an exec to wait on); -ESTALE when the process runs
 * another program than the prepared one (an exec), left untouched. 0 or
 * -errno with one line in err. */
int inject_session_begin(struct inject_session *s, pid_t tid, char *err, size_t errlen);

/* Run system call nr with up to six arguments in the held thread. Its
 * return value (a -errno on failure, as the kernel returns it) goes to
 * *ret. 0 or -errno when the thread could not be made to run it. */
int inject_session_syscall(struct inject_session *s, long nr, const __u64 args[6], long *ret);

/* Run the code at rip with rdi = arg until it executes int3; its
 * registers then go to *after (may be NULL). 0 or -errno; -EFAULT when the
 * code faulted, with the registers at the fault in *after (the signal is
 * never delivered). */
int inject_session_run(struct inject_session *s, __u64 rip, __u64 arg,
		       struct user_regs_struct *after);

/* Let the held thread run on until it enters one of the system calls
 * nrs[0..n) (or return at once if it was stopped inside one), but not
 * past until_ns (CLOCK_MONOTONIC): a safe point to make it run code is a
 * call its program makes at a known moment (epoll_wait in an event loop).
 * Signals it gets meanwhile are delivered at once. On return it is
 * stopped and its registers to put back are where it stands: 0 at that
 * call's entry (put back to make the call when let go), -EAGAIN where it
 * was when time ran out, -ESRCH (it ended) or -errno. */
int inject_session_until_syscall(struct inject_session *s, const long *nrs, int n, __u64 until_ns);

/* Restore the registers and let the thread go (PTRACE_DETACH), delivering
 * the pending signal if one arrived; records paused_ns. A thread still
 * running memtop's step (a wait that timed out) is stopped first. 0, or
 * -ESRCH (the thread is gone), -ETIMEDOUT (it could not be stopped again:
 * the caller must keep tracing it until it can), or -errno. */
int inject_session_end(struct inject_session *s);

/* Close /proc/PID/mem. */
void inject_session_close(struct inject_session *s);

/* Read or write len bytes of the process at addr through /proc/PID/mem
 * (writes reach read-only private pages too). 0 or -errno (-EFAULT short). */
int inject_mem_read(int mem_fd, __u64 addr, void *buf, size_t len);
int inject_mem_write(int mem_fd, __u64 addr, const void *buf, size_t len);

#endif /* MEMTOP_PROBE_INJECT_PTRACE_H */

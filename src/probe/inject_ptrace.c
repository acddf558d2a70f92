// SPDX-License-Identifier: GPL-2.0-only
/*
 * inject_ptrace.c - one thread held under ptrace to run system calls and a
 * store stub for memtop (inject_ptrace.h).
 *
 * The thread is seized (PTRACE_SEIZE, no options: memtop's death never
 * kills it) and stopped with PTRACE_INTERRUPT. For a system call its
 * registers are set to the call, with orig_rax = -1 so the kernel's
 * restart logic leaves them alone, and rip at a `syscall` instruction of
 * libc, and it is single-stepped over it. Stops that are not ours (the
 * interrupt itself, a signal arriving meanwhile) are resumed the same
 * way; a signal is remembered and handed back at detach. Restoring the
 * saved registers at the last stop puts a thread interrupted inside a
 * system call back into the kernel's restart path (rax = -ERESTART*,
 * orig_rax = the call), exactly as after any ptrace stop.
 */
#include "probe/inject_ptrace.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "readers/proc_maps.h"
#include "util/clock.h"

#define SCAN_CHUNK 65536

int inject_mem_read(int mem_fd, __u64 addr, void *buf, size_t len)
{
	ssize_t n = pread(mem_fd, buf, len, (off_t)addr);

	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EFAULT;
}

int inject_mem_write(int mem_fd, __u64 addr, const void *buf, size_t len)
{
	ssize_t n = pwrite(mem_fd, buf, len, (off_t)addr);

	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EFAULT;
}

/* The first `syscall` (0f 05) in the executable mapping of path. */
static int find_syscall_insn(struct inject_session *s, const char *path, const struct mt_maps *maps,
			     char *err, size_t errlen)
{
	unsigned char *buf;
	size_t i;
	int e;

	buf = malloc(SCAN_CHUNK + 1);
	e = buf ? -ENOENT : -ENOMEM;
	for (i = 0; buf && i < maps->n && e == -ENOENT; i++) {
		const struct mt_map *m = &maps->v[i];
		__u64 at;

		if (!m->path || strcmp(m->path, path) || m->perms[2] != 'x')
			continue;
		for (at = m->start; at < m->end && e == -ENOENT; at += SCAN_CHUNK) {
			size_t len = m->end - at < SCAN_CHUNK + 1 ? m->end - at : SCAN_CHUNK + 1;
			size_t k;

			if (inject_mem_read(s->mem_fd, at, buf, len))
				break;
			for (k = 0; k + 1 < len; k++) {
				if (buf[k] == 0x0f && buf[k + 1] == 0x05) {
					s->syscall_insn = at + k;
					e = 0;
					break;
				}
			}
		}
	}
	free(buf);
	if (e)
		snprintf(err, errlen, "PID %d: no syscall instruction found in %s", s->pid, path);
	return e;
}

int inject_session_prepare(struct inject_session *s, pid_t pid, const char *libc_path,
			   const struct mt_maps *maps, char *err, size_t errlen)
{
	struct mt_maps own;
	char path[64];
	int e;

	memset(s, 0, sizeof(*s));
	s->pid = pid;
	s->tid = -1;
	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	s->mem_fd = open(path, O_RDWR | O_CLOEXEC);
	if (s->mem_fd < 0) {
		e = -errno;
		snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
		return e;
	}
	if (!maps) {
		e = proc_maps_read(pid, &own);
		if (e) {
			snprintf(err, errlen, "cannot read the memory map of PID %d: %s", pid,
				 strerror(-e));
			close(s->mem_fd);
			s->mem_fd = -1;
			return e;
		}
	}
	e = find_syscall_insn(s, libc_path, maps ? maps : &own, err, errlen);
	if (!maps)
		proc_maps_free(&own);
	if (e) {
		close(s->mem_fd);
		s->mem_fd = -1;
	}
	return e;
}

/* Wait for the held thread's next stop. A wait cut by a signal (the
 * holder's deadline, inject_hold.c) is -ETIMEDOUT; a thread that ended
 * (its process exited, or another thread exec'd) is -ESRCH. */
static int wait_stop(struct inject_session *s, int *st)
{
	if (waitpid(s->tid, st, __WALL) < 0)
		return errno == EINTR ? -ETIMEDOUT : -errno;
	if (!WIFSTOPPED(*st)) {
		s->gone = true;
		return -ESRCH;
	}
	s->running = false;
	return 0;
}

/* Resume the held thread with req until it stops with SIGTRAP (the step or
 * the int3). 0, -ESRCH when it died, -ETIMEDOUT when the wait was cut
 * (the thread may still be running memtop's step: s->running). */
static int resume_until_trap(struct inject_session *s, enum __ptrace_request req)
{
	for (;;) {
		int st, sig, e;

		if (ptrace(req, s->tid, 0, 0) < 0)
			return -errno;
		s->running = true;
		e = wait_stop(s, &st);
		if (e)
			return e;
		sig = WSTOPSIG(st);
		if (st >> 16)
			continue; /* the interrupt or a group stop: not a signal */
		if (sig == SIGTRAP)
			return 0;
		if (sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE)
			return -EFAULT; /* our code faulted: never delivered */
		s->pending_sig = sig;   /* delivered at detach */
	}
}

/* PTRACE_INTERRUPT of the held thread failed (errno set) for a reason
 * other than its death. A thread that died meanwhile (an exec in another
 * thread kills it) fails it with ESRCH: its death is then collected by the
 * caller's wait_stop, as a dead thread left traced is a zombie only its
 * tracer can reap, and the exec waits for that, holding the lock a next
 * PTRACE_SEIZE of the process waits on: a deadlock that would wedge it. */
static bool interrupt_failed(struct inject_session *s)
{
	return ptrace(PTRACE_INTERRUPT, s->tid, 0, 0) < 0 && errno != ESRCH;
}

/* Let the stopped thread go with sig. A thread found dead meanwhile (the
 * detach fails with ESRCH: a thread memtop stopped leaves that stop only
 * when memtop resumes it or SIGKILL ends it) has its death collected: a
 * dead thread left traced is a zombie only its tracer can reap, and an
 * exec in another thread waits for that reap while it holds the lock a
 * next PTRACE_SEIZE of the process waits on, a deadlock. The wait is
 * bounded by the holder's alarm. */
static int let_go(struct inject_session *s, int sig)
{
	int st, e = 0;

	while (!s->gone && ptrace(PTRACE_DETACH, s->tid, 0, sig) < 0) {
		e = -errno;
		if (e != -ESRCH || waitpid(s->tid, &st, __WALL) < 0)
			break; /* cut by the alarm, or not ours any more */
		s->gone = !WIFSTOPPED(st);
	}
	return s->gone ? -ESRCH : e;
}

static void nice_restore(struct inject_session *s)
{
	if (s->nice_set)
		setpriority(PRIO_PROCESS, 0, s->nice);
	s->nice_set = false;
}

int inject_session_begin(struct inject_session *s, pid_t tid, char *err, size_t errlen)
{
	unsigned char insn[2];
	int st = 0, e;

	s->pending_sig = 0;
	/* memtop's own priority up while the thread waits on it: on a busy
	 * machine each of its turns is a scheduling delay in the stop */
	errno = 0;
	s->nice = getpriority(PRIO_PROCESS, 0);
	s->nice_set = !errno && !setpriority(PRIO_PROCESS, 0, -10);
	if (ptrace(PTRACE_SEIZE, tid, 0, 0) < 0) {
		e = -errno;
		if (errno == EPERM)
			snprintf(err, errlen,
				 "PID %d: ptrace refused (Yama ptrace_scope, a tracer already "
				 "attached, or another user namespace): not injecting",
				 s->pid);
		else
			snprintf(err, errlen, "PID %d: cannot ptrace thread %d: %s", s->pid, tid,
				 strerror(errno));
		nice_restore(s);
		return e;
	}
	s->tid = tid;
	s->gone = false;
	s->running = true;
	s->stop_ns = clock_mono_ns();
	e = interrupt_failed(s) ? -errno : wait_stop(s, &st);
	if (e) {
		if (e == -ESRCH)
			snprintf(err, errlen,
				 "PID %d: thread %d ended while being stopped (the process exited "
				 "or exec'd)",
				 s->pid, tid);
		else
			snprintf(err, errlen, "PID %d: cannot stop thread %d: %s", s->pid, tid,
				 e == -ETIMEDOUT ? "it did not stop in time" : strerror(-e));
		/* registers untouched: a detach, or the holder's exit, lets it go as
		 * it was */
		if (!s->gone)
			ptrace(PTRACE_DETACH, tid, 0, 0);
		s->tid = -1;
		nice_restore(s);
		return e;
	}
	if (!(st >> 16) && WSTOPSIG(st) != SIGTRAP)
		s->pending_sig = WSTOPSIG(st);
	s->held_ns = clock_mono_ns();
	s->reach_ns = s->held_ns - s->stop_ns;
	if (ptrace(PTRACE_GETREGS, tid, 0, &s->saved) < 0) {
		e = -errno;
		snprintf(err, errlen, "PID %d: cannot read thread %d's registers: %s", s->pid, tid,
			 strerror(errno));
		let_go(s, s->pending_sig);
		s->tid = -1;
		nice_restore(s);
		return e;
	}
	/* the program prepare() read is still the one running: a thread
	 * seized after an exec runs another one, where the syscall
	 * instruction's address means nothing (the old memory is gone) */
	if (inject_mem_read(s->mem_fd, s->syscall_insn, insn, sizeof(insn)) || insn[0] != 0x0f ||
	    insn[1] != 0x05) {
		snprintf(err, errlen, "PID %d: it runs another program (exec) since memtop looked",
			 s->pid);
		let_go(s, s->pending_sig);
		s->tid = -1;
		nice_restore(s);
		return -ESTALE; /* not a thread to pick again: the process is another */
	}
	return 0;
}

int inject_session_syscall(struct inject_session *s, long nr, const __u64 args[6], long *ret)
{
	struct user_regs_struct r = s->saved;
	int e;

	r.rip = s->syscall_insn;
	r.rax = (__u64)nr;
	r.orig_rax = (__u64)-1;
	r.rdi = args[0];
	r.rsi = args[1];
	r.rdx = args[2];
	r.r10 = args[3];
	r.r8 = args[4];
	r.r9 = args[5];
	if (ptrace(PTRACE_SETREGS, s->tid, 0, &r) < 0)
		return -errno;
	e = resume_until_trap(s, PTRACE_SINGLESTEP);
	if (e)
		return e;
	if (ptrace(PTRACE_GETREGS, s->tid, 0, &r) < 0)
		return -errno;
	if (r.rip != s->syscall_insn + 2)
		return -EFAULT;
	*ret = (long)r.rax;
	return 0;
}

int inject_session_run(struct inject_session *s, __u64 rip, __u64 arg, struct user_regs_struct *after)
{
	struct user_regs_struct r = s->saved;
	int e;

	r.rip = rip;
	r.rdi = arg;
	r.orig_rax = (__u64)-1;
	if (ptrace(PTRACE_SETREGS, s->tid, 0, &r) < 0)
		return -errno;
	e = resume_until_trap(s, PTRACE_CONT);
	if (e && e != -EFAULT)
		return e;
	/* stopped at the int3, or where the code faulted (the signal is never
	 * delivered): the registers say where */
	if (ptrace(PTRACE_GETREGS, s->tid, 0, &r) < 0)
		return -errno;
	if (after)
		*after = r;
	return e ? e : r.rip > rip ? 0 : -EFAULT;
}

/* The held thread's registers where it stands now become the ones put
 * back at the end. */
static int saved_refresh(struct inject_session *s)
{
	return ptrace(PTRACE_GETREGS, s->tid, 0, &s->saved) < 0 ? -errno : 0;
}

/* Stop a thread memtop let run, and take its registers as they are. */
static int stop_here(struct inject_session *s)
{
	int st, e;

	if (ptrace(PTRACE_INTERRUPT, s->tid, 0, 0) < 0)
		return -errno;
	e = wait_stop(s, &st);
	if (!e && !(st >> 16) && WSTOPSIG(st) != SIGTRAP)
		s->pending_sig = WSTOPSIG(st);
	return e ? e : saved_refresh(s);
}

static bool nr_in(long nr, const long *nrs, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (nrs[i] == nr)
			return true;
	return false;
}

/* At the entry stop of the call the caller waits for: the call is
 * skipped and the thread put back on its syscall instruction (2 bytes)
 * with its number, then let through the skip to its exit stop, so that it
 * is held where a plain stop would hold it, about to make the call; a
 * single step from an entry stop would end at the exit stop instead of
 * running the instruction. Its registers there are the ones put back. */
static int at_entry(struct inject_session *s)
{
	struct user_regs_struct r = s->saved;
	int st, e;

	r.rax = r.orig_rax;
	r.orig_rax = (__u64)-1;
	r.rip -= 2;
	if (ptrace(PTRACE_SETREGS, s->tid, 0, &r) < 0 || ptrace(PTRACE_SYSCALL, s->tid, 0, 0) < 0)
		return -errno;
	s->running = true;
	e = wait_stop(s, &st);
	if (e)
		return e;
	if (!(st >> 16) && WSTOPSIG(st) != (SIGTRAP | 0x80) && WSTOPSIG(st) != SIGTRAP)
		s->pending_sig = WSTOPSIG(st);
	e = saved_refresh(s);
	if (!e && (s->saved.rip != r.rip || s->saved.rax != r.rax))
		e = -EPROTO; /* not where it was put: never run code there */
	return e;
}

int inject_session_until_syscall(struct inject_session *s, const long *nrs, int n, __u64 until_ns)
{
	int sig = 0, st, e;

	if (nr_in((long)s->saved.orig_rax, nrs, n))
		return 0; /* stopped inside it already */
	/* system call stops then say so (SIGTRAP | 0x80), apart from a
	 * SIGTRAP of the thread's own, and carry their call's number */
	if (ptrace(PTRACE_SETOPTIONS, s->tid, 0, PTRACE_O_TRACESYSGOOD) < 0)
		return -errno;
	for (;;) {
		struct __ptrace_syscall_info info;
		pid_t r;

		if (ptrace(PTRACE_SYSCALL, s->tid, 0, sig) < 0)
			return -errno;
		sig = 0;
		s->running = true;
		/* bounded by memtop's own deadline: poll, never block */
		while (!(r = waitpid(s->tid, &st, __WALL | WNOHANG))) {
			struct timespec ts = { 0, 200000 };

			if (clock_mono_ns() > until_ns) {
				e = stop_here(s);
				return e ? e : -EAGAIN;
			}
			nanosleep(&ts, NULL);
		}
		if (r < 0)
			return errno == EINTR ? -ETIMEDOUT : -errno;
		if (!WIFSTOPPED(st)) {
			s->gone = true;
			return -ESRCH;
		}
		s->running = false;
		e = saved_refresh(s);
		if (e)
			return e;
		if (st >> 16)
			continue; /* a group stop or an interrupt */
		if (WSTOPSIG(st) != (SIGTRAP | 0x80)) {
			sig = WSTOPSIG(st); /* the thread's own signal: delivered at once */
			continue;
		}
		if (ptrace(PTRACE_GET_SYSCALL_INFO, s->tid, sizeof(info), &info) < 0)
			return -errno;
		if (info.op == PTRACE_SYSCALL_INFO_ENTRY && nr_in((long)info.entry.nr, nrs, n))
			return at_entry(s);
		if (clock_mono_ns() > until_ns)
			return -EAGAIN;
	}
}

int inject_session_end(struct inject_session *s)
{
	int st = 0, e = 0, d;

	if (s->tid <= 0)
		return 0;
	if (s->gone) {
		s->tid = -1;
		nice_restore(s);
		return -ESRCH;
	}
	/* a step cut by the deadline: stop the thread again before its
	 * registers are put back (the holder arms a grace period for this).
	 * A wait cut again leaves the thread still ours and running memtop's
	 * step: -ETIMEDOUT, and the caller waits once more before it lets go */
	if (s->running) {
		e = interrupt_failed(s) ? -errno : wait_stop(s, &st);
		if (e == -ETIMEDOUT)
			return e;
		if (e) {
			s->tid = -1;
			nice_restore(s);
			return s->gone ? -ESRCH : e;
		}
	}
	if (st && !(st >> 16) && WSTOPSIG(st) != SIGTRAP)
		s->pending_sig = WSTOPSIG(st);
	if (ptrace(PTRACE_SETREGS, s->tid, 0, &s->saved) < 0)
		e = -errno;
	d = let_go(s, s->pending_sig);
	if (d && !e)
		e = d;
	s->paused_ns = clock_mono_ns() - s->held_ns;
	s->tid = -1;
	nice_restore(s);
	return e;
}

void inject_session_close(struct inject_session *s)
{
	if (s->mem_fd >= 0)
		close(s->mem_fd);
	s->mem_fd = -1;
}

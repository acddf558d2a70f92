// SPDX-License-Identifier: GPL-2.0-only
/*
 * inject_hold.c - a hold done by a holder process (inject_hold.h).
 *
 * The holder is a fork of memtop: it sees memtop's memory as it was (the
 * work's context) and inherits the prepared session (/proc/PID/mem, the
 * syscall instruction). It blocks every signal but SIGALRM, which cuts
 * its waits at the deadlines (no SA_RESTART: waitpid() returns EINTR),
 * leaves memtop's process group (a terminal's ^C or a kill of the group
 * does not reach it), closes every descriptor but /proc/PID/mem and its
 * pipe (it holds none of memtop's BPF links), answers through the pipe
 * and exits. memtop waits for
 * the answer, then for the holder's exit through a pidfd, both bounded.
 */
#include "probe/inject_hold.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>

#include "util/clock.h"
#include "util/helper_proc.h"

/* How often a thread that vanished between the pick and the stop (thread
 * churn) is replaced by another pick. */
#define PICK_TRIES 4

/* The answer on the pipe, then nflags bytes. */
struct hold_answer {
	int err;
	__u64 base;
	__u64 ran_ns;
	__u64 paused_ns;
	__u64 reach_ns;
	__u64 nflags;
	char msg[512];
};

bool inject_hold_eintr_prone(long nr)
{
	static const long prone[] = {
		SYS_epoll_wait,      SYS_epoll_pwait, SYS_semop,  SYS_semtimedop,
		SYS_rt_sigtimedwait, SYS_msgrcv,      SYS_msgsnd, SYS_io_getevents,
#ifdef SYS_epoll_pwait2
		SYS_epoll_pwait2,
#endif
#ifdef SYS_io_pgetevents
		SYS_io_pgetevents,
#endif
	};
	size_t i;

	for (i = 0; i < sizeof(prone) / sizeof(prone[0]); i++)
		if (prone[i] == nr)
			return true;
	return false;
}

/* The first line of /proc/PID/task/TID/NAME into buf. 0 or -1. */
static int task_read(pid_t pid, const char *tid, const char *name, char *buf, size_t len)
{
	char path[128];
	FILE *f;
	int e;

	snprintf(path, sizeof(path), "/proc/%d/task/%s/%s", pid, tid, name);
	f = fopen(path, "re");
	if (!f)
		return -1;
	e = fgets(buf, (int)len, f) ? 0 : -1;
	fclose(f);
	return e;
}

pid_t inject_hold_pick_thread(pid_t pid)
{
	char path[64], buf[512];
	pid_t quiet = 0;
	struct dirent *d;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	dir = opendir(path);
	if (!dir)
		return pid;
	while ((d = readdir(dir))) {
		char *p;

		if (d->d_name[0] == '.' || task_read(pid, d->d_name, "stat", buf, sizeof(buf)))
			continue;
		p = strrchr(buf, ')');
		if (p && p[1] == ' ' && p[2] == 'R') {
			quiet = atoi(d->d_name);
			break; /* running: nothing to interrupt */
		}
		/* blocked: "NR args..." in .../syscall; one the kernel restarts */
		if (!quiet && !task_read(pid, d->d_name, "syscall", buf, sizeof(buf)) &&
		    buf[0] >= '0' && buf[0] <= '9' && !inject_hold_eintr_prone(atol(buf)))
			quiet = atoi(d->d_name);
	}
	closedir(dir);
	return quiet ? quiet : pid;
}

static void on_alarm(int sig)
{
	(void)sig; /* only to cut a wait: waitpid() returns EINTR */
}

static void alarm_in(unsigned int ms)
{
	struct itimerval t = { .it_value = { ms / 1000, (ms % 1000) * 1000 } };

	setitimer(ITIMER_REAL, &t, NULL);
}

static void write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return; /* memtop is gone: nobody to tell */
		p += n;
		len -= (size_t)n;
	}
}

/* SIGALRM cuts the holder's waits at its deadlines (no SA_RESTART:
 * waitpid() returns EINTR). */
static void holder_alarm(void)
{
	struct sigaction sa = { .sa_handler = on_alarm };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
}

/* The holder: never returns. */
static void holder(struct inject_session *s, inject_hold_fn work, void *ctx, int answer_fd)
{
	struct inject_hold_out out = { 0 };
	struct hold_answer a = { 0 };
	int keep[] = { s->mem_fd, answer_fd };
	int e = -ESRCH, tries, end;

	helper_proc_detach(keep, 2, SIGALRM);
	holder_alarm();
	alarm_in(INJECT_HOLD_WORK_MS);
	for (tries = 0; tries < PICK_TRIES && e == -ESRCH; tries++) {
		e = inject_session_begin(
			s, s->want_tid > 0 ? s->want_tid : inject_hold_pick_thread(s->pid), a.msg,
			sizeof(a.msg));
		if (e == -ESRCH && kill(s->pid, 0))
			break; /* the process, not one thread, is gone */
	}
	if (!e) {
		e = work(s, ctx, &out, a.msg, sizeof(a.msg));
		alarm_in(INJECT_HOLD_GRACE_MS);
		end = inject_session_end(s);
		if (end == -ESRCH || (!e && end)) {
			snprintf(a.msg, sizeof(a.msg),
				 "PID %d: the held thread %s during the injection", s->pid,
				 end == -ESRCH ? "ended (the process exited or exec'd)"
					       : "could not be stopped again in time");
			e = end;
		} else if (e == -ETIMEDOUT || e == -ESRCH) {
			snprintf(a.msg, sizeof(a.msg), "PID %d: %s during the injection", s->pid,
				 s->gone || e == -ESRCH
					 ? "the held thread ended (the process exited or exec'd)"
					 : "a step did not finish in time");
		}
	} else {
		end = 0;
	}
	a.err = e;
	a.base = out.base;
	a.ran_ns = out.ran_ns;
	a.paused_ns = s->paused_ns;
	a.reach_ns = s->reach_ns;
	a.nflags = out.flags ? out.nflags : 0;
	write_all(answer_fd, &a, sizeof(a));
	if (a.nflags)
		write_all(answer_fd, out.flags, a.nflags);
	close(answer_fd);
	/* a thread cut off in memtop's step that did not stop in the grace
	 * period: memtop has its answer; wait without a bound, then put it
	 * back (it stops as soon as it runs again) */
	if (end == -ETIMEDOUT) {
		alarm_in(0);
		while (inject_session_end(s) == -ETIMEDOUT)
			;
	}
	_exit(0);
}

/* Read exactly len bytes before deadline_ns. 0, -EPIPE at EOF, -ETIMEDOUT. */
static int read_by(int fd, void *buf, size_t len, __u64 deadline_ns)
{
	char *p = buf;

	while (len) {
		__u64 now = clock_mono_ns();
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		ssize_t n;
		int r;

		if (now >= deadline_ns)
			return -ETIMEDOUT;
		r = poll(&pfd, 1, (int)((deadline_ns - now) / 1000000 + 1));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r ? -errno : -ETIMEDOUT;
		n = read(fd, p, len);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0)
			return n ? -errno : -EPIPE;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Reap the holder if it ends before deadline_ns (it does, unless it is
 * still waiting to put back a thread that would not stop). */
static void reap_by(pid_t child, __u64 deadline_ns)
{
	int pidfd = (int)syscall(SYS_pidfd_open, child, 0);

	if (pidfd >= 0) {
		for (;;) {
			__u64 now = clock_mono_ns();
			struct pollfd pfd = { .fd = pidfd, .events = POLLIN };
			int r;

			if (now >= deadline_ns)
				break;
			r = poll(&pfd, 1, (int)((deadline_ns - now) / 1000000 + 1));
			if (r >= 0 || errno != EINTR)
				break;
		}
		close(pidfd);
	}
	waitpid(child, NULL, WNOHANG);
}

int inject_hold(struct inject_session *s, inject_hold_fn work, void *ctx,
		struct inject_hold_out *out, char *err, size_t errlen)
{
	__u64 deadline =
		clock_mono_ns() + (INJECT_HOLD_WORK_MS + INJECT_HOLD_GRACE_MS + 1000) * 1000000ULL;
	struct hold_answer a = { 0 };
	char why[256];
	int answers, e;
	pid_t child;

	memset(out, 0, sizeof(*out));
	child = helper_proc_fork(false, &answers, "the holder", why, sizeof(why));
	if (child < 0) {
		snprintf(err, errlen, "PID %d: %s", s->pid, why);
		return child;
	}
	if (!child)
		holder(s, work, ctx, answers);
	e = read_by(answers, &a, sizeof(a), deadline);
	if (!e && a.nflags) {
		if (a.nflags > INJECT_HOLD_MAX_FLAGS || !(out->flags = malloc(a.nflags)))
			e = -ENOMEM;
		else if (!(e = read_by(answers, out->flags, a.nflags, deadline)))
			out->nflags = a.nflags;
	}
	close(answers);
	reap_by(child, deadline);
	if (e) {
		free(out->flags);
		out->flags = NULL;
		out->nflags = 0;
		snprintf(err, errlen, "PID %d: the holder (PID %d) %s", s->pid, child,
			 e == -EPIPE ? "ended without an answer" : "did not answer in time");
		return e == -EPIPE ? -EIO : e;
	}
	s->paused_ns = a.paused_ns;
	s->reach_ns = a.reach_ns;
	out->base = a.base;
	out->ran_ns = a.ran_ns;
	if (a.err) {
		a.msg[sizeof(a.msg) - 1] = '\0';
		snprintf(err, errlen, "%s", a.msg);
	}
	return a.err;
}

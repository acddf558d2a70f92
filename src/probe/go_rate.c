// SPDX-License-Identifier: GPL-2.0-only
/*
 * go_rate.c - runtime.MemProfileRate of a Go process set from 0 to
 * memtop's rate, and put back (go_rate.h).
 *
 * Why one store is enough, read in the runtime sources of every Go memtop
 * knows (golang-1.19, 1.21, 1.22, 1.23; src/runtime/malloc.go, mcache.go,
 * proc.go): mallocgc samples when `rate := MemProfileRate; rate > 0` and
 * the allocation reaches its P's countdown (`size < c.nextSample` fails);
 * nextSample() is fastexprand(MemProfileRate), and fastexprand(0) returns
 * 0. The runtime's start computes every P's countdown while the rate is
 * already 0 (1.19: the rate is a package initializer, run after schedinit
 * has made the Ps; 1.21 - 1.23: schedinit sets it to 0 before procresize
 * makes them), except P 0's bootstrap mcache, made by mallocinit at the
 * default rate (one exponential draw, mean 512 KiB). While the rate is 0
 * mallocgc never touches the countdown. So once the rate is R, each P's
 * first allocation samples (its countdown is 0), P 0 samples within its
 * draw, and every later countdown is drawn at R by profilealloc. Nothing
 * but the rate is written. (Go 1.24 made nextSample() return maxInt64 for
 * rate 0 and re-draws at a rate change through mcache.memProfRate; memtop
 * refuses 1.24.)
 *
 * The store: Go aligns the int to 8 bytes (checked), and the kernel copies
 * 8 aligned bytes into the page with one 8-byte move, so a racing reader
 * sees the old value or the new one. The descriptor of /proc/PID/mem is
 * opened once and kept: it is bound to that process's memory, so the put
 * back after an exec or a PID reuse writes nowhere (the read comes back
 * short).
 *
 * The guard: a fork of memtop detached as a helper (helper_proc.h) that
 * keeps only three descriptors (the memory, its end of a pipe from
 * memtop, a pidfd of the target), so a ^C or a SIGKILL of memtop's group
 * does not reach it. It waits: the target's exit ends it;
 * a byte from memtop (memtop put the rate back itself) ends it; the pipe's
 * end-of-file (memtop died) makes it put the old value back, if the rate
 * is still memtop's, and end.
 */
#include "probe/go_rate.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "util/helper_proc.h"

struct go_rate_hold {
	pid_t pid;
	int mem_fd; /* /proc/PID/mem, read-write, of the process it was set in */
	__u64 addr;
	__s64 set; /* the rate memtop stored */
	__s64 old; /* what it was (0) */
	int guard_fd;
	pid_t guard;
};

static int read_s64(int fd, __u64 addr, __s64 *v)
{
	ssize_t n = pread(fd, v, sizeof(*v), (off_t)addr);

	return n == (ssize_t)sizeof(*v) ? 0 : n < 0 ? -errno : -ESRCH;
}

static int write_s64(int fd, __u64 addr, __s64 v)
{
	ssize_t n = pwrite(fd, &v, sizeof(v), (off_t)addr);

	return n == (ssize_t)sizeof(v) ? 0 : n < 0 ? -errno : -ESRCH;
}

/* The old value back where the rate is still `set`. */
static int put_back(int fd, __u64 addr, __s64 set, __s64 old)
{
	__s64 cur;
	int e = read_s64(fd, addr, &cur);

	if (e)
		return e;
	if (cur != set)
		return -EBUSY;
	return write_s64(fd, addr, old);
}

/* The guard: never returns. Only async-signal-safe calls (memtop may have
 * other threads). */
static void guard(int mem_fd, int pipe_fd, int pidfd, __u64 addr, __s64 set, __s64 old)
{
	int keep[] = { mem_fd, pipe_fd, pidfd };
	char byte;

	/* none of memtop's others (its probes' links, its maps, other
	 * guards' pipes) stays open here */
	helper_proc_detach(keep, 3, 0);
	prctl(PR_SET_NAME, "memtop-gorate", 0, 0, 0);
	for (;;) {
		struct pollfd p[2] = { { .fd = pipe_fd, .events = POLLIN },
				       { .fd = pidfd, .events = POLLIN } };

		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			_exit(1);
		}
		if (p[1].revents)
			_exit(0); /* the target ended */
		if (p[0].revents) {
			ssize_t n = read(pipe_fd, &byte, 1);

			if (n < 0 && errno == EINTR)
				continue;
			if (n == 0) /* memtop died without putting it back */
				put_back(mem_fd, addr, set, old);
			_exit(0);
		}
	}
}

static int start_guard(struct go_rate_hold *h, char *err, size_t errlen)
{
	int end, pidfd, e;
	pid_t child;

	pidfd = (int)syscall(SYS_pidfd_open, h->pid, 0);
	if (pidfd < 0) {
		e = -errno;
		snprintf(err, errlen, "PID %d: %s", h->pid, strerror(errno));
		return e;
	}
	child = helper_proc_fork(true, &end, "the guard that puts it back", err, errlen);
	if (child < 0) {
		close(pidfd);
		return child;
	}
	if (!child)
		guard(h->mem_fd, end, pidfd, h->addr, h->set, h->old);
	close(pidfd);
	h->guard = child;
	h->guard_fd = end;
	return 0;
}

/* memtop put the rate back itself (or found nothing to do): the guard
 * ends without touching anything. */
static void end_guard(struct go_rate_hold *h)
{
	char done = 'd';

	if (write(h->guard_fd, &done, 1) != 1) {
		/* the guard is gone already */
	}
	close(h->guard_fd);
	waitpid(h->guard, NULL, 0);
}

int go_rate_enable(pid_t pid, __u64 rate_addr, __u64 ready_addr, __s64 rate,
		   struct go_rate_hold **out, char *err, size_t errlen)
{
	struct go_rate_hold *h;
	char path[64];
	__s64 cur, ready = 1;
	int e;

	*out = NULL;
	if (!rate_addr || rate_addr % sizeof(__s64) || rate <= 0) {
		snprintf(err, errlen, "runtime.MemProfileRate's address is unknown or unaligned");
		return -EINVAL;
	}
	h = calloc(1, sizeof(*h));
	if (!h) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	h->pid = pid;
	h->addr = rate_addr;
	h->set = rate;
	h->guard_fd = -1;
	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	h->mem_fd = open(path, O_RDWR | O_CLOEXEC);
	if (h->mem_fd < 0) {
		e = -errno;
		snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
		free(h);
		return e;
	}
	/* the runtime has set its rate only once main_init_done is made */
	e = ready_addr ? read_s64(h->mem_fd, ready_addr, &ready) : 0;
	if (!e && ready)
		e = read_s64(h->mem_fd, rate_addr, &cur);
	if (!e && !ready)
		e = -EAGAIN;
	else if (!e && cur != 0)
		e = -EALREADY;
	if (e) {
		if (e != -EAGAIN && e != -EALREADY)
			snprintf(err, errlen, "cannot read its memory: %s", strerror(-e));
		close(h->mem_fd);
		free(h);
		return e;
	}
	h->old = cur;
	/* the guard first: a memtop killed before the store leaves a 0,
	 * which the guard then leaves alone */
	e = start_guard(h, err, errlen);
	if (!e) {
		e = write_s64(h->mem_fd, rate_addr, rate);
		if (e) {
			snprintf(err, errlen, "cannot write its memory: %s", strerror(-e));
			end_guard(h);
		}
	}
	if (e) {
		close(h->mem_fd);
		free(h);
		return e;
	}
	*out = h;
	return 0;
}

__s64 go_rate_set_to(const struct go_rate_hold *h)
{
	return h ? h->set : 0;
}

int go_rate_restore(struct go_rate_hold *h)
{
	int e;

	if (!h)
		return 0;
	e = put_back(h->mem_fd, h->addr, h->set, h->old);
	end_guard(h);
	close(h->mem_fd);
	free(h);
	return e;
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * inject_attacker.c - a target that attacks `memtop -p PID --inject`
 * while memtop holds one of its threads, for
 * tests/integration/test_inject_hostile.py, which builds it at test time
 * (cc -O2 -pthread ... -ldl) and runs it as nobody from a directory nobody
 * owns (this directory is not globbed by the Makefile's workload rule).
 *
 *   inject_attacker fdswap FILE path|fifo [THREADS]
 *     Opens FILE with O_PATH ("path": a root-only file, which O_PATH opens
 *     with search permission on its directories alone; or a FIFO, which
 *     O_PATH opens without a reader or a writer) or, for "fifo", O_RDWR |
 *     O_NONBLOCK and fills the pipe until it is full. Then THREADS
 *     (default 2) threads spin over the 16 descriptor numbers from the
 *     lowest free one up: any descriptor there that is not already FILE
 *     (memtop's memfd, created by the thread memtop holds) is replaced
 *     with FILE by dup2(), at once, and "SWAPPED fd=N" is printed. A
 *     memtop that then opens /proc/PID/fd/N to fill its memfd opens FILE.
 *   inject_attacker exec SELF [leader]
 *     Two threads spin, each reading /proc/self/task/<the other>/status;
 *     the first to see the other traced (TracerPid not 0) prints
 *     "EXECING tid=N held=M" and execve()s SELF in "sleep" mode, which
 *     prints "EXECED pid=N" and then waits for EOF on stdin. With
 *     "leader" the main thread is one of the two (the first running thread
 *     memtop finds, so the one it holds, and the exec comes from the other
 *     thread, which takes over the PID); else stdin is read by the main
 *     thread and the two spinning threads are others.
 *   inject_attacker dlopen
 *     One thread dlopen()s and dlclose()s libz.so.1 without pause, another
 *     allocates and frees (sizes 16 B to 64 KiB) without pause.
 *   inject_attacker libcmap COPY SECRET
 *     Maps COPY (a copy of libc.so.6 named libc.so.6, in nobody's
 *     directory) read-only at a low fixed address, so that it is the first
 *     mapping in /proc/PID/maps whose name starts with "libc.so", then
 *     unlinks it and plants symlinks to SECRET at its name and at
 *     "COPY (deleted)" (the name maps shows for it now). A host reader that
 *     opens /proc/PID/root + the maps path opens SECRET.
 *   inject_attacker idle
 *     Nothing but the stdin commands (a process to run chrooted).
 *   inject_attacker sleep
 *     Prints "EXECED pid=N" and waits for EOF on stdin.
 *
 * Every mode but sleep prints "READY ... pid=N" first, then answers 'p' on
 * stdin with "alive A B" (A: its loop's rounds, B: allocations) and exits
 * 0 at EOF on stdin. Output lines are written with write(2), never through
 * stdio's locks, from any thread.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define SWAP_RANGE 16
#define MAX_SPIN 8

static atomic_ulong rounds, allocs;

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void say(const char *fmt, ...)
{
	char buf[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(buf) - 1)
		n = sizeof(buf) - 1;
	if (write(1, buf, n) < 0)
		_exit(3);
}

/* Commands on stdin until EOF: 'p' says how far the loops got. */
static int serve(void)
{
	char c;
	ssize_t n;

	for (;;) {
		n = read(0, &c, 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			_exit(0);
		if (c == 'p')
			say("alive %lu %lu\n", atomic_load(&rounds), atomic_load(&allocs));
	}
}

/* ---- fdswap -------------------------------------------------------------- */

static int swap_src, swap_low;
static struct stat swap_st;

static void *swapper(void *arg)
{
	(void)arg;
	for (;;) {
		for (int fd = swap_low; fd < swap_low + SWAP_RANGE; fd++) {
			struct stat st;

			if (fd == swap_src || fstat(fd, &st))
				continue;
			if (st.st_dev == swap_st.st_dev && st.st_ino == swap_st.st_ino)
				continue;
			if (dup2(swap_src, fd) == fd)
				say("SWAPPED fd=%d\n", fd);
		}
		atomic_fetch_add_explicit(&rounds, 1, memory_order_relaxed);
	}
	return NULL;
}

static int run_fdswap(const char *file, const char *kind, int threads)
{
	pthread_t t;
	int i, probe;

	if (!strcmp(kind, "path")) {
		swap_src = open(file, O_PATH | O_CLOEXEC);
	} else if (!strcmp(kind, "fifo")) {
		static const char junk[4096];

		swap_src = open(file, O_RDWR | O_NONBLOCK | O_CLOEXEC);
		while (swap_src >= 0 && write(swap_src, junk, sizeof(junk)) > 0)
			; /* full: a blocking writer would wait for ever */
	} else {
		fprintf(stderr, "fdswap: kind path or fifo\n");
		return 2;
	}
	if (swap_src < 0 || fstat(swap_src, &swap_st)) {
		perror(file);
		return 2;
	}
	/* the number memfd_create would return next, and the ones above it */
	probe = dup(0);
	if (probe < 0)
		return 2;
	close(probe);
	swap_low = probe;
	if (swap_src >= swap_low && swap_src < swap_low + SWAP_RANGE) {
		/* keep our own descriptor out of the range */
		int hi = fcntl(swap_src, F_DUPFD_CLOEXEC, swap_low + SWAP_RANGE + 8);

		close(swap_src);
		swap_src = hi;
		probe = dup(0);
		close(probe);
		swap_low = probe;
	}
	if (threads < 1 || threads > MAX_SPIN)
		threads = 2;
	for (i = 0; i < threads; i++)
		if (pthread_create(&t, NULL, swapper, NULL))
			return 2;
	say("READY low=%d pid=%d\n", swap_low, getpid());
	return serve();
}

/* ---- exec ---------------------------------------------------------------- */

static _Atomic pid_t exec_tids[2];
static const char *exec_self;
static atomic_int exec_go;

static long tracer_of(pid_t tid)
{
	char path[64], buf[4096], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/task/%d/status", tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	p = strstr(buf, "\nTracerPid:");
	return p ? strtol(p + 11, NULL, 10) : -1;
}

static void *watcher(void *arg)
{
	long me = (long)arg;

	if (!exec_tids[me])
		exec_tids[me] = (pid_t)syscall(SYS_gettid);
	while (!atomic_load(&exec_go))
		;
	for (;;) {
		pid_t other = exec_tids[!me];
		long tracer = tracer_of(other);

		atomic_fetch_add_explicit(&rounds, 1, memory_order_relaxed);
		if (tracer > 0) {
			char *argv[] = { (char *)exec_self, "sleep", NULL };
			extern char **environ;

			say("EXECING tid=%d held=%d tracer=%ld\n", exec_tids[me], other, tracer);
			execve(exec_self, argv, environ);
			say("EXEC FAILED %s\n", strerror(errno));
			_exit(4);
		}
	}
	return NULL;
}

static void *serve_thread(void *arg)
{
	(void)arg;
	serve();
	return NULL;
}

/* With leader, the main thread is one of the two watchers (memtop holds
 * the first running thread it finds, the leader: the exec then comes from
 * the other thread, which takes over the leader's PID); else two threads
 * watch and the main thread reads stdin. */
static int run_exec(const char *self, int leader)
{
	pthread_t t;
	long i;

	exec_self = self;
	for (i = leader ? 1 : 0; i < 2; i++)
		if (pthread_create(&t, NULL, watcher, (void *)i))
			return 2;
	if (leader) {
		exec_tids[0] = getpid();
		if (pthread_create(&t, NULL, serve_thread, NULL))
			return 2;
	}
	while (!exec_tids[0] || !exec_tids[1])
		;
	say("READY tids=%d,%d pid=%d\n", exec_tids[0], exec_tids[1], getpid());
	atomic_store(&exec_go, 1);
	if (leader)
		watcher((void *)0);
	return serve();
}

/* ---- dlopen -------------------------------------------------------------- */

static void *dl_churn(void *arg)
{
	(void)arg;
	for (;;) {
		void *h = dlopen("libz.so.1", RTLD_NOW | RTLD_LOCAL);

		if (!h) {
			say("DLOPEN FAILED %s\n", dlerror());
			_exit(5);
		}
		dlclose(h);
		atomic_fetch_add_explicit(&rounds, 1, memory_order_relaxed);
	}
	return NULL;
}

static void *mem_churn(void *arg)
{
	uint64_t x = 88172645463325252ULL;
	void *keep[64] = { 0 };

	(void)arg;
	for (;;) {
		unsigned k;
		size_t size;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		k = x % 64;
		size = 16 + (x >> 8) % (64 * 1024);
		free(keep[k]);
		keep[k] = malloc(size);
		if (!keep[k]) {
			say("MALLOC FAILED\n");
			_exit(6);
		}
		memset(keep[k], (int)k, 16);
		atomic_fetch_add_explicit(&allocs, 1, memory_order_relaxed);
	}
	return NULL;
}

static int run_dlopen(void)
{
	pthread_t t;

	if (pthread_create(&t, NULL, dl_churn, NULL) || pthread_create(&t, NULL, mem_churn, NULL))
		return 2;
	say("READY pid=%d\n", getpid());
	return serve();
}

/* ---- libcmap ------------------------------------------------------------- */

static int run_libcmap(const char *copy, const char *secret)
{
	/* below the executable (0x55..., PIE) and every library (0x7f...) */
	void *hint = (void *)0x100000000ULL;
	char deleted[4096];
	struct stat st;
	void *at;
	int fd;

	fd = open(copy, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st)) {
		perror(copy);
		return 2;
	}
	at = mmap(hint, st.st_size, PROT_READ, MAP_PRIVATE | MAP_FIXED_NOREPLACE, fd, 0);
	if (at == MAP_FAILED) {
		perror("mmap");
		return 2;
	}
	close(fd);
	snprintf(deleted, sizeof(deleted), "%s (deleted)", copy);
	if (unlink(copy) || symlink(secret, copy) || symlink(secret, deleted)) {
		perror("plant");
		return 2;
	}
	say("READY at=%p pid=%d\n", at, getpid());
	return serve();
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";

	if (!strcmp(mode, "fdswap") && argc >= 4)
		return run_fdswap(argv[2], argv[3], argc > 4 ? atoi(argv[4]) : 2);
	if (!strcmp(mode, "exec") && argc >= 3)
		return run_exec(argv[2], argc > 3 && !strcmp(argv[3], "leader"));
	if (!strcmp(mode, "dlopen"))
		return run_dlopen();
	if (!strcmp(mode, "libcmap") && argc >= 4)
		return run_libcmap(argv[2], argv[3]);
	if (!strcmp(mode, "idle")) {
		say("READY pid=%d\n", getpid());
		return serve();
	}
	if (!strcmp(mode, "sleep")) {
		say("EXECED pid=%d\n", getpid());
		return serve();
	}
	fprintf(stderr, "usage: inject_attacker fdswap FILE path|fifo [THREADS] | exec SELF [leader] | "
			"dlopen | libcmap COPY SECRET | idle | sleep\n");
	return 2;
}

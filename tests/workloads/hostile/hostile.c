// SPDX-License-Identifier: GPL-2.0-only
/*
 * hostile.c - a target that attacks the root memtop watching it, for
 * tests/integration/test_hostile.py, which builds it at test time and runs
 * it as an unprivileged user (this directory is not globbed by the
 * Makefile's workload rule).
 *
 *   hostile [--lib PATH] [--tamper fifo|symlink:TARGET] [--comm NAME]
 *           [--churn N] [--exec PATH] [--leak yes] [--evil-sym yes]
 *
 * --lib dlopen()s PATH (libhostile.so) and allocates through its
 * hostile_lib_alloc(); else allocations come from hostile_main_alloc() in
 * this executable. --tamper then unlinks PATH while it stays mapped and
 * puts a FIFO, or a symlink to TARGET, at its name. --comm sets the
 * process name (prctl), e.g. to one with terminal escape sequences.
 * --churn keeps N anonymous mappings and a thread that unmaps and maps
 * them again without pause, so /proc/PID/maps changes under its readers.
 * --exec makes a byte 'x' on stdin exec PATH (with no arguments: this
 * program again, under another name) after the allocations so far.
 * --evil-sym allocates through a function whose symbol name carries
 * terminal escapes (an OSC title, BEL, clear screen).
 * --leak never frees every 8th block (in-use that grows, and that an exec
 * must make disappear).
 * Then it prints "READY pid=N" and allocates 64 KiB (freeing every other
 * block) every millisecond until stdin reaches EOF; then _exit(0).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define BLOCK (64 * 1024)

static void *(*lib_alloc)(size_t);

__attribute__((noipa)) void *hostile_main_alloc(size_t n)
{
	char *p = malloc(n);

	if (p)
		memset(p, 2, 64);
	return p;
}

/* The symbol name is "hostile_evil" ESC "]0;PWN" BEL ESC "[2J". */
__attribute__((noipa)) void *hostile_evil_alloc(size_t n)
	__asm__("\"hostile_evil\x1b]0;PWN\x07\x1b[2J\"");
void *hostile_evil_alloc(size_t n)
{
	char *p = malloc(n);

	if (p)
		memset(p, 3, 64);
	return p;
}

static void die(const char *what)
{
	fprintf(stderr, "hostile: %s: %s\n", what, strerror(errno));
	_exit(2);
}

static void tamper(const char *path, const char *how)
{
	if (unlink(path))
		die("unlink");
	if (!strcmp(how, "fifo")) {
		if (mkfifo(path, 0666))
			die("mkfifo");
	} else if (!strncmp(how, "symlink:", 8)) {
		if (symlink(how + 8, path))
			die("symlink");
	} else {
		errno = EINVAL;
		die(how);
	}
}

static int churn_n;
static char *churn_base;

static void *churn(void *arg)
{
	long page = sysconf(_SC_PAGESIZE);

	(void)arg;
	for (unsigned long i = 0;; i++) {
		char *at = churn_base + (i % churn_n) * 2 * page;

		munmap(at, page);
		if (mmap(at, page, (i & 1) ? PROT_READ : PROT_NONE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED)
			die("mmap");
		if (!(i % 64))
			sched_yield();
	}
	return NULL;
}

static void churn_start(int n)
{
	long page = sysconf(_SC_PAGESIZE);
	pthread_t t;

	churn_n = n;
	/* every other page mapped, alternating protections: no merging */
	churn_base = mmap(NULL, (size_t)n * 2 * page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
			  0);
	if (churn_base == MAP_FAILED)
		die("mmap");
	for (int i = 0; i < n; i++)
		munmap(churn_base + (2 * i + 1) * page, page);
	for (int i = 0; i < n; i++)
		mprotect(churn_base + 2 * i * page, page, (i & 1) ? PROT_READ : PROT_NONE);
	if (pthread_create(&t, NULL, churn, NULL))
		die("pthread_create");
}

int main(int argc, char **argv)
{
	const char *lib = NULL, *how = NULL, *comm = NULL, *exec_path = NULL;
	unsigned long n = 0;
	bool leak = false, evil = false;
	void *keep = NULL;
	char line[64];

	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--lib"))
			lib = argv[i + 1];
		else if (!strcmp(argv[i], "--tamper"))
			how = argv[i + 1];
		else if (!strcmp(argv[i], "--comm"))
			comm = argv[i + 1];
		else if (!strcmp(argv[i], "--churn"))
			churn_start(atoi(argv[i + 1]));
		else if (!strcmp(argv[i], "--exec"))
			exec_path = argv[i + 1];
		else if (!strcmp(argv[i], "--evil-sym"))
			evil = !strcmp(argv[i + 1], "yes");
		else if (!strcmp(argv[i], "--leak"))
			leak = !strcmp(argv[i + 1], "yes");
	}
	if (lib) {
		void *h = dlopen(lib, RTLD_NOW);

		if (!h) {
			fprintf(stderr, "hostile: %s\n", dlerror());
			return 2;
		}
		lib_alloc = (void *(*)(size_t))dlsym(h, "hostile_lib_alloc");
		if (!lib_alloc)
			die("dlsym");
		if (how)
			tamper(lib, how);
	}
	if (comm && prctl(PR_SET_NAME, comm, 0, 0, 0))
		die("prctl");
	snprintf(line, sizeof(line), "READY pid=%d\n", (int)getpid());
	if (write(1, line, strlen(line)) < 0)
		return 2;
	for (;;) {
		struct pollfd pfd = { .fd = 0, .events = POLLIN };
		char c;

		/* pace: 1 ms, and notice EOF on stdin */
		if (poll(&pfd, 1, 1) > 0) {
			if (read(0, &c, 1) <= 0)
				_exit(0);
			if (c == 'x' && exec_path) {
				char *const args[] = { (char *)exec_path, NULL };

				execv(exec_path, args);
				die("execv");
			}
		}
		void *p = lib_alloc ? lib_alloc(BLOCK) :
			  evil ? hostile_evil_alloc(BLOCK) : hostile_main_alloc(BLOCK);

		if (leak && !(n % 8)) {
			n++; /* never freed */
			continue;
		}
		if (n++ & 1) {
			free(p);
			free(keep);
			keep = NULL;
		} else {
			free(keep);
			keep = p;
		}
	}
}

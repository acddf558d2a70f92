// SPDX-License-Identifier: GPL-2.0-only
/*
 * hostile.c - a target that attacks the root memtop watching it, for
 * tests/integration/test_hostile.py, which builds it at test time and runs
 * it as an unprivileged user (this directory is not globbed by the
 * Makefile's workload rule).
 *
 *   hostile [--lib PATH] [--tamper fifo|symlink:TARGET] [--comm NAME]
 *
 * --lib dlopen()s PATH (libhostile.so) and allocates through its
 * hostile_lib_alloc(); else allocations come from hostile_main_alloc() in
 * this executable. --tamper then unlinks PATH while it stays mapped and
 * puts a FIFO, or a symlink to TARGET, at its name. --comm sets the
 * process name (prctl), e.g. to one with terminal escape sequences.
 * Then it prints "READY pid=N" and allocates 64 KiB (freeing every other
 * block) every millisecond until stdin reaches EOF; then _exit(0).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
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

int main(int argc, char **argv)
{
	const char *lib = NULL, *how = NULL, *comm = NULL;
	unsigned long n = 0;
	void *keep = NULL;
	char line[64];

	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--lib"))
			lib = argv[i + 1];
		else if (!strcmp(argv[i], "--tamper"))
			how = argv[i + 1];
		else if (!strcmp(argv[i], "--comm"))
			comm = argv[i + 1];
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
		if (poll(&pfd, 1, 1) > 0 && read(0, &c, 1) <= 0)
			_exit(0);
		void *p = lib_alloc ? lib_alloc(BLOCK) : hostile_main_alloc(BLOCK);

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

// SPDX-License-Identifier: GPL-2.0-only
/*
 * hostile.c - a target that attacks the root memtop watching it, for
 * tests/integration/test_hostile.py, which builds it at test time and runs
 * it as an unprivileged user (this directory is not globbed by the
 * Makefile's workload rule).
 *
 *   hostile [--lib PATH] [--tamper fifo|symlink:TARGET] [--comm NAME]
 *           [--churn N] [--exec PATH] [--leak yes] [--evil-sym yes]
 *           [--jit N] [--copies yes] [--flood yes] [--names N]
 *           [--lib-maps N] [--deep-maps N]
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
 * --jit writes N small functions into executable anonymous memory and
 * allocates through each in turn, 16 blocks a millisecond: every sample
 * has a call site (and a stack) memtop has not seen before.
 * --copies, with --lib, copies the library to a new file for every
 * allocation, dlopen()s the copy, allocates through it, dlclose()s and
 * deletes it: a new file (a new inode) behind every sample.
 * --flood allocates and frees without pause (stdin looked at every 4096
 * blocks): more samples than any reader can take.
 * --names maps N files from a directory 64 levels deep (16 KiB paths) and
 * renames the top directory before every allocation: every read of its
 * maps has N new paths (names memtop would intern without end); each
 * allocation goes through code in a new memory file (300 of them mapped),
 * so each sample has a frame in a mapping memtop has not read yet.
 * --lib-maps, with --lib, maps the library's file N more times (its bytes,
 * executable, at offset 0) and allocates through hostile_lib_stub in each
 * mapping in turn, 16 blocks a millisecond: frames in N mappings of one
 * ELF file.
 * --deep-maps maps one file from a directory 64 levels deep (16 KiB of
 * path) N times, above its libraries: a maps text of N * 16 KiB whose
 * lower part holds the executable and the libraries.
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
#include <stdint.h>
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
__attribute__((noipa)) void *hostile_evil_alloc(size_t n) __asm__(
	"\"hostile_evil\x1b]0;PWN\x07\x1b[2J\"");
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

/* A stub per call site: sub $8,%rsp; call *%rsi; add $8,%rsp; ret. */
static const unsigned char jit_stub[16] = { 0x48, 0x83, 0xec, 0x08, 0xff, 0xd6, 0x48, 0x83,
					    0xc4, 0x08, 0xc3, 0x90, 0x90, 0x90, 0x90, 0x90 };
static unsigned char *jit_base;
static void **stubs; /* --jit, --lib-maps: entry points allocated through in turn */
static unsigned long jit_n;

static void jit_start(unsigned long n)
{
	jit_base = mmap(NULL, n * sizeof(jit_stub), PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (jit_base == MAP_FAILED)
		die("mmap");
	for (unsigned long i = 0; i < n; i++)
		memcpy(jit_base + i * sizeof(jit_stub), jit_stub, sizeof(jit_stub));
	if (mprotect(jit_base, n * sizeof(jit_stub), PROT_READ | PROT_EXEC))
		die("mprotect");
	stubs = malloc(n * sizeof(*stubs));
	if (!stubs)
		die("malloc");
	for (unsigned long i = 0; i < n; i++)
		stubs[i] = jit_base + i * sizeof(jit_stub);
	jit_n = n;
}

static void *jit_alloc(unsigned long i, size_t n)
{
	void *(*stub)(size_t, void *(*)(size_t)) =
		(void *(*)(size_t, void *(*)(size_t)))stubs[i % jit_n];

	return stub(n, malloc);
}

/* The library at path mapped n times as a file (not loaded), the entry
 * points its hostile_lib_stub has in each mapping. */
static void lib_maps_start(const char *path, void *h, unsigned long n)
{
	const unsigned char *fn = dlsym(h, "hostile_lib_stub");
	struct stat st;
	Dl_info info;
	size_t off;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (!fn || !dladdr(fn, &info) || fd < 0 || fstat(fd, &st))
		die("lib-maps");
	/* its text's file offsets are its addresses (ld's layout); checked */
	off = (size_t)(fn - (const unsigned char *)info.dli_fbase);
	stubs = malloc(n * sizeof(*stubs));
	if (!stubs)
		die("malloc");
	for (unsigned long i = 0; i < n; i++) {
		unsigned char *at =
			mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);

		if (at == MAP_FAILED || off + 11 > (size_t)st.st_size || memcmp(at + off, fn, 11))
			die("lib-maps mmap");
		stubs[i] = at + off;
	}
	close(fd);
	jit_n = n;
}

/* Allocate through a fresh copy of the library at path; the last
 * COPIES_MAPPED copies stay mapped (so there is time to name them). */
#define COPIES_MAPPED 16
static void *copy_alloc(const char *path, unsigned long i, size_t n)
{
	static void *mapped[COPIES_MAPPED];
	char copy[4096];
	char buf[65536];
	ssize_t r;
	void *h, *p;
	int in, out;

	snprintf(copy, sizeof(copy), "%s.%lu", path, i);
	in = open(path, O_RDONLY | O_CLOEXEC);
	out = open(copy, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	if (in < 0 || out < 0)
		die("open");
	while ((r = read(in, buf, sizeof(buf))) > 0) {
		if (write(out, buf, (size_t)r) != r)
			die("write");
	}
	close(in);
	close(out);
	h = dlopen(copy, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "hostile: %s\n", dlerror());
		_exit(2);
	}
	p = ((void *(*)(size_t))dlsym(h, "hostile_lib_alloc"))(n);
	unlink(copy);
	if (mapped[i % COPIES_MAPPED])
		dlclose(mapped[i % COPIES_MAPPED]);
	mapped[i % COPIES_MAPPED] = h;
	return p;
}

/* --names: NAMES_DEPTH directories of 250 characters below the working
 * directory, the top one renamed at every allocation, and n files mapped
 * at the bottom: each of their paths (16 KiB) is new at every read. */
#define NAMES_DEPTH 64
#define NAMES_STUBS 300
static int names_dir = -1; /* the working directory, holding the top */
static unsigned long names_gen;

static void names_top(char *buf, size_t len, unsigned long gen)
{
	int k = snprintf(buf, len, "%lu-", gen);

	memset(buf + k, 'n', 250 - (size_t)k);
	buf[250] = '\0';
}

/* Make NAMES_DEPTH directories below the working directory, the top one
 * named after names_gen, and go down to the last. */
static void deep_dir_enter(void)
{
	char comp[251];

	for (int level = 0; level < NAMES_DEPTH; level++) {
		if (level) {
			memset(comp, 'x', 250);
			comp[250] = '\0';
		} else {
			names_top(comp, sizeof(comp), 0);
		}
		if (mkdir(comp, 0755) || chdir(comp))
			die("mkdir");
	}
}

static void names_start(unsigned long n)
{
	long page = sysconf(_SC_PAGESIZE);

	names_dir = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (names_dir < 0)
		die("open .");
	deep_dir_enter();
	for (unsigned long i = 0; i < n; i++) {
		char name[32];
		int fd;

		snprintf(name, sizeof(name), "f%lu", i);
		fd = open(name, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
		if (fd < 0 || ftruncate(fd, page) ||
		    mmap(NULL, (size_t)page, PROT_READ, MAP_PRIVATE, fd, 0) == MAP_FAILED)
			die("names file");
		close(fd);
	}
}

/* One page of a file 64 directories deep mapped n times, above every
 * mapping made so far (the libraries), every other page. */
static void deep_maps_start(unsigned long n)
{
	long page = sysconf(_SC_PAGESIZE);
	unsigned long long lo, hi, top = 0;
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");
	int fd;

	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx-%llx", &lo, &hi) == 2 && !strstr(line, "[stack]") &&
		    !strstr(line, "[vvar") && !strstr(line, "[vdso]") &&
		    !strstr(line, "[vsyscall]") && hi > top)
			top = hi;
	}
	if (!f || !top)
		die("/proc/self/maps");
	fclose(f);
	deep_dir_enter();
	fd = open("f", O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0 || ftruncate(fd, page))
		die("deep file");
	for (unsigned long i = 0; i < n; i++) {
		char *want = (char *)(uintptr_t)(top + (1UL << 24) + i * 2 * (unsigned long)page);

		if (mmap(want, (size_t)page, PROT_READ, MAP_PRIVATE | MAP_FIXED_NOREPLACE, fd, 0) !=
		    want)
			die("deep mmap");
	}
	close(fd);
}

/* Rename the top directory (every mapped path changes), then allocate
 * through a stub in a new memory file at a new address: a frame in a
 * mapping memtop has not read yet. The NAMES_STUBS latest stubs stay
 * mapped (files that are not ELF). */
static void *names_alloc(size_t n)
{
	static void *stubs[NAMES_STUBS];
	long page = sysconf(_SC_PAGESIZE);
	char from[251], to[251];
	void *(*stub)(size_t, void *(*)(size_t));
	void **slot = &stubs[names_gen % NAMES_STUBS];
	int fd;

	names_top(from, sizeof(from), names_gen);
	names_top(to, sizeof(to), ++names_gen);
	if (renameat(names_dir, from, names_dir, to))
		die("rename");
	fd = memfd_create("hostile-stub", MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, page) || pwrite(fd, jit_stub, sizeof(jit_stub), 0) < 0)
		die("memfd");
	if (*slot)
		munmap(*slot, (size_t)page);
	/* at an address never used before (a hint), so never one memtop read */
	*slot = mmap((char *)(16UL << 40) + names_gen * 2 * page, (size_t)page,
		     PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	if (*slot == MAP_FAILED)
		die("mmap");
	close(fd);
	stub = (void *(*)(size_t, void *(*)(size_t))) * slot;
	return stub(n, malloc);
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
	churn_base = mmap(NULL, (size_t)n * 2 * page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
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
	unsigned long n = 0, lib_maps = 0;
	bool leak = false, evil = false, copies = false, flood = false;
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
		else if (!strcmp(argv[i], "--jit"))
			jit_start(strtoul(argv[i + 1], NULL, 0));
		else if (!strcmp(argv[i], "--copies"))
			copies = !strcmp(argv[i + 1], "yes");
		else if (!strcmp(argv[i], "--flood"))
			flood = !strcmp(argv[i + 1], "yes");
		else if (!strcmp(argv[i], "--names"))
			names_start(strtoul(argv[i + 1], NULL, 0));
		else if (!strcmp(argv[i], "--lib-maps"))
			lib_maps = strtoul(argv[i + 1], NULL, 0);
		else if (!strcmp(argv[i], "--deep-maps"))
			deep_maps_start(strtoul(argv[i + 1], NULL, 0));
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
		if (lib_maps)
			lib_maps_start(lib, h, lib_maps);
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

		/* pace: 1 ms (none when flooding), and notice EOF on stdin */
		if (flood && n++ % 4096) {
			free(hostile_main_alloc(BLOCK));
			continue;
		}
		if (poll(&pfd, 1, flood ? 0 : 1) > 0) {
			if (read(0, &c, 1) <= 0)
				_exit(0);
			if (c == 'x' && exec_path) {
				char *const args[] = { (char *)exec_path, NULL };

				execv(exec_path, args);
				die("execv");
			}
		}
		if (jit_n) {
			for (int k = 0; k < 16; k++)
				free(jit_alloc(n++, BLOCK));
			continue;
		}
		void *p = names_dir >= 0  ? names_alloc(BLOCK)
			  : copies && lib ? copy_alloc(lib, n, BLOCK)
			  : lib_alloc     ? lib_alloc(BLOCK)
			  : evil          ? hostile_evil_alloc(BLOCK)
					  : hostile_main_alloc(BLOCK);

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

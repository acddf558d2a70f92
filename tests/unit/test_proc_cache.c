// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_proc_cache.c - mappings and files of real processes (this one and
 * forked children): one elf_file per file however many mappings and
 * processes map it, load bias checked against dlsym, libraries dlopen'ed
 * after the first read found after the re-read interval (at once when a
 * sample newer than the read says the mapping existed), deleted and
 * replaced files never confused with what now sits at their path.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "stacks/proc_cache.h"

__attribute__((noinline)) int cache_test_target(int x)
{
	__asm__ volatile("" ::: "memory");
	return x + 7;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static __u64 mono_ns(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (__u64)now.tv_sec * 1000000000ULL + (__u64)now.tv_nsec;
}

static void *new_text_page(void)
{
	/* PROT_EXEC, like the text of a library the loader maps */
	void *p = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	assert_true(p != MAP_FAILED);
	return p;
}

/* Look addr up in this process until found or until deadline (a wait on
 * the cache's pause after a read, not a fixed sleep); *called: when the
 * last lookup began. */
static const struct mt_map *find_by(struct proc_cache *pc, __u64 addr, __u64 deadline, __u64 *called)
{
	const struct mt_map *m;

	for (;;) {
		*called = mono_ns();
		m = proc_cache_find_map(pc, getpid(), addr);
		if (m || mono_ns() >= deadline)
			return m;
		sleep_ms(1);
	}
}

/* Runtime address of name = its link-time vaddr + the cache's load bias. */
static void check_bias(struct proc_cache *pc, void *fn, const char *name)
{
	__u64 addr = (__u64)(unsigned long)fn, off, size, vaddr, bias;
	const struct mt_map *m = proc_cache_find_map(pc, getpid(), addr);
	struct elf_file *ef;

	assert_non_null(m);
	ef = proc_cache_elf(pc, getpid(), m);
	assert_non_null(ef);
	assert_int_equal(elf_file_func_offset(ef, name, &off, &size), 0);
	assert_int_equal(elf_file_off_to_vaddr(ef, off, &vaddr), 0);
	assert_int_equal(proc_cache_load_bias(pc, getpid(), m, &bias), 0);
	assert_int_equal(vaddr + bias, addr);
}

static void test_self(void **state)
{
	struct proc_cache *pc = proc_cache_new();
	const struct mt_map *text, *first;
	__u64 malloc_addr = (__u64)(unsigned long)dlsym(RTLD_DEFAULT, "malloc");

	assert_non_null(pc);
	check_bias(pc, (void *)&cache_test_target, "cache_test_target");
	check_bias(pc, dlsym(RTLD_DEFAULT, "malloc"), "malloc");
	/* libc's first (r--p, offset 0) and text mappings share one elf_file. */
	text = proc_cache_find_map(pc, getpid(), malloc_addr);
	assert_non_null(text);
	first = text;
	while (first->offset != 0)
		first--;
	assert_ptr_equal(first->path, text->path);
	assert_ptr_equal(proc_cache_elf(pc, getpid(), first), proc_cache_elf(pc, getpid(), text));
	/* Anonymous and pseudo mappings have no file. */
	assert_null(proc_cache_elf(pc, getpid(),
				   proc_cache_find_map(pc, getpid(), (__u64)(unsigned long)&pc)));
	assert_null(proc_cache_find_map(pc, getpid(), 8));
	assert_null(proc_cache_elf(pc, getpid(), NULL));
	proc_cache_free(pc);
}

/* Within the cache's 100 ms pause after the read that began before
 * read_at: a miss then is the cache's choice, not the pause's. */
#define EARLY_NS (80 * 1000000ULL)

/* One round of test_dlopen_after_read: 1 passed, 0 if the machine was so
 * slow that the dlopen left the 100 ms pause after the read (a miss then
 * proves nothing: the round is run again), -1 without the library. */
static int dlopen_round(void)
{
	struct proc_cache *pc = proc_cache_new();
	__u64 read_at = mono_ns(), addr, called;
	const struct mt_map *m;
	void *h, *sym;

	assert_non_null(proc_cache_find_map(pc, getpid(), (__u64)(unsigned long)&cache_test_target));
	h = dlopen("libBrokenLocale.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		proc_cache_free(pc);
		return -1;
	}
	sym = dlsym(h, "__ctype_get_mb_cur_max");
	assert_non_null(sym);
	addr = (__u64)(unsigned long)sym;
	/* Inside the re-read interval the new library is not seen yet... */
	m = proc_cache_find_map(pc, getpid(), addr);
	if (mono_ns() - read_at > EARLY_NS) {
		proc_cache_free(pc);
		dlclose(h);
		return 0;
	}
	assert_null(m);
	/* ...after it (100 ms plus nine times what the last read took: more
	 * on a loaded machine), a miss re-reads and finds it */
	m = find_by(pc, addr, mono_ns() + 5000000000ULL, &called);
	assert_non_null(m);
	assert_non_null(strstr(m->path, "libBrokenLocale"));
	check_bias(pc, sym, "__ctype_get_mb_cur_max");
	proc_cache_free(pc);
	dlclose(h);
	return 1;
}

static void test_dlopen_after_read(void **state)
{
	int round, r = 0;

	for (round = 0; round < 10 && !r; round++)
		r = dlopen_round();
	if (r < 0)
		skip();
	assert_int_equal(r, 1); /* else 10 rounds too slow to tell */
}

/* One round of test_sample_newer_than_table; false if the machine was so
 * slow that a step left the 100 ms pause after the last read (a miss
 * then proves nothing): the round is run again. */
static bool sample_newer_round(void)
{
	struct proc_cache *pc = proc_cache_new();
	void *maps[PROC_CACHE_EARLY_REREADS + 2];
	__u64 before = mono_ns(), read_at, at, called;
	const struct mt_map *m;
	bool in_time;
	int i, n = 0;

	assert_non_null(pc);
	read_at = mono_ns();
	assert_non_null(proc_cache_find_map(pc, getpid(), (__u64)(unsigned long)&cache_test_target));
	/* A sample older than the table: the table stands, no re-read. */
	maps[n++] = new_text_page();
	proc_cache_note_sample(pc, getpid(), before);
	m = proc_cache_find_map(pc, getpid(), (__u64)(unsigned long)maps[0]);
	in_time = mono_ns() - read_at < EARLY_NS;
	if (in_time)
		assert_null(m);
	/* Samples taken after their mapping was made: each found within the
	 * pause, as often as the cache allows (an early re-read waits nine
	 * times what the last read took)... */
	for (i = 0; in_time && i < PROC_CACHE_EARLY_REREADS; i++) {
		maps[n++] = new_text_page();
		at = (__u64)(unsigned long)maps[n - 1];
		proc_cache_note_sample(pc, getpid(), mono_ns());
		m = find_by(pc, at, read_at + EARLY_NS, &called);
		in_time = m != NULL;
		if (m)
			assert_true(m->start <= at && at < m->end);
		read_at = called;
	}
	/* ...and then no more: the next miss waits for the pause, however new
	 * its sample (tried for 10 ms, well past nine reads' time). */
	if (in_time) {
		maps[n++] = new_text_page();
		at = (__u64)(unsigned long)maps[n - 1];
		proc_cache_note_sample(pc, getpid(), mono_ns());
		m = find_by(pc, at, mono_ns() + 10 * 1000000ULL, &called);
		in_time = called - read_at < EARLY_NS;
		if (in_time)
			assert_null(m);
	}
	/* A pid not read yet: noting it reads nothing, breaks nothing. */
	proc_cache_note_sample(pc, 0x7ffffff0, before);
	for (i = 0; i < n; i++)
		munmap(maps[i], 4096);
	proc_cache_free(pc);
	return in_time;
}

/* A mapping made after the table was read and before a sample (the
 * loader mapping libc after the first read of a starting process, seen
 * as an [unknown] mmap site of jemalloc's start-up) is found at once when
 * the sample's time is noted; a table read after the sample is trusted,
 * and a stream of such samples re-reads a bounded number of times. */
static void test_sample_newer_than_table(void **state)
{
	int round;

	for (round = 0; round < 10 && !sample_newer_round(); round++)
		;
	if (round == 10)
		fail_msg("in 10 rounds, a mapping made after the read and before a sample was "
			 "never found within the 100 ms pause: no early re-read (or every maps "
			 "read took over 9 ms)");
}

/* Earlier mapping pointers survive a re-read. */
static void test_pointer_survives_reread(void **state)
{
	struct proc_cache *pc = proc_cache_new();
	const struct mt_map *m =
		proc_cache_find_map(pc, getpid(), (__u64)(unsigned long)&cache_test_target);
	struct mt_map copy;
	__u64 called;
	void *p;

	assert_non_null(m);
	copy = *m;
	p = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(p != MAP_FAILED);
	assert_non_null(find_by(pc, (__u64)(unsigned long)p, mono_ns() + 5000000000ULL, &called));
	assert_memory_equal(m, &copy, sizeof(copy));
	assert_non_null(proc_cache_elf(pc, getpid(), m));
	munmap(p, 4096);
	proc_cache_free(pc);
}

static void copy_file(const char *from, const char *to)
{
	char buf[65536];
	int in = open(from, O_RDONLY), out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0755);
	ssize_t n;

	assert_true(in >= 0 && out >= 0);
	while ((n = read(in, buf, sizeof(buf))) > 0)
		assert_int_equal(write(out, buf, (size_t)n), n);
	close(in);
	close(out);
}

/* A binary replaced on disk while mapped: the cache must give the mapped
 * one (when it may use map_files) or nothing, never the new file. */
static void test_replaced_file(void **state)
{
	char dir[] = "/tmp/memtop-pc-XXXXXX", bin[64], repl[64], mf[96];
	struct proc_cache *pc = proc_cache_new();
	struct elf_file *self = elf_file_open("/proc/self/exe"), *ef;
	const struct mt_map *m;
	struct stat st;
	void *p;
	int fd, probe;

	assert_non_null(self);
	assert_non_null(mkdtemp(dir));
	snprintf(bin, sizeof(bin), "%s/server", dir);
	snprintf(repl, sizeof(repl), "%s/server.new", dir);
	copy_file("/proc/self/exe", bin);
	fd = open(bin, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	assert_true(p != MAP_FAILED);
	close(fd);
	/* Replace it with a different ELF file (a copy of libc). */
	{
		Dl_info info;

		assert_true(dladdr(dlsym(RTLD_DEFAULT, "malloc"), &info));
		copy_file(info.dli_fname, repl);
	}
	assert_int_equal(rename(repl, bin), 0);

	m = proc_cache_find_map(pc, getpid(), (__u64)(unsigned long)p);
	assert_non_null(m);
	assert_true(m->deleted);
	assert_string_equal(m->path, bin);
	snprintf(mf, sizeof(mf), "/proc/self/map_files/%lx-%lx", (unsigned long)m->start,
		 (unsigned long)m->end);
	probe = open(mf, O_RDONLY);
	ef = proc_cache_elf(pc, getpid(), m);
	if (probe >= 0) {
		close(probe);
		assert_non_null(ef);
		assert_string_equal(elf_file_build_id(ef), elf_file_build_id(self));
	} else {
		assert_null(ef); /* unprivileged: the path now names another file */
	}
	munmap(p, (size_t)st.st_size);
	unlink(bin);
	rmdir(dir);
	elf_file_close(self);
	proc_cache_free(pc);
}

static void test_other_processes(void **state)
{
	struct proc_cache *pc = proc_cache_new();
	__u64 addr = (__u64)(unsigned long)&cache_test_target;
	const struct mt_map *mp, *mc;
	struct elf_file *ef;
	pid_t child = fork(), gone;

	assert_true(child >= 0);
	if (!child) {
		pause();
		_exit(0);
	}
	mp = proc_cache_find_map(pc, getpid(), addr);
	mc = proc_cache_find_map(pc, child, addr);
	assert_non_null(mp);
	assert_non_null(mc);
	assert_ptr_not_equal(mp, mc);
	ef = proc_cache_elf(pc, getpid(), mp);
	assert_non_null(ef);
	/* One elf_file for the file, whichever process maps it. */
	assert_ptr_equal(proc_cache_elf(pc, child, mc), ef);
	proc_cache_forget(pc, getpid());
	assert_non_null(elf_file_build_id(proc_cache_elf(pc, child, mc)));
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);

	/* A process that is gone and was never read. */
	gone = fork();
	if (!gone)
		_exit(0);
	waitpid(gone, NULL, 0);
	assert_null(proc_cache_find_map(pc, gone, addr));
	assert_null(proc_cache_find_map(pc, -5, addr));
	proc_cache_free(pc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_self),
		cmocka_unit_test(test_dlopen_after_read),
		cmocka_unit_test(test_sample_newer_than_table),
		cmocka_unit_test(test_pointer_survives_reread),
		cmocka_unit_test(test_replaced_file),
		cmocka_unit_test(test_other_processes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

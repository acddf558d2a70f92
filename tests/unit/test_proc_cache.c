// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_proc_cache.c - mappings and files of real processes (this one and
 * forked children): one elf_file per file however many mappings and
 * processes map it, load bias checked against dlsym, libraries dlopen'ed
 * after the first read found after the re-read interval, deleted and
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

static void test_dlopen_after_read(void **state)
{
	struct proc_cache *pc = proc_cache_new();
	void *h, *sym;
	__u64 addr;

	assert_non_null(proc_cache_find_map(pc, getpid(), (__u64)(unsigned long)&cache_test_target));
	h = dlopen("libBrokenLocale.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		proc_cache_free(pc);
		skip();
	}
	sym = dlsym(h, "__ctype_get_mb_cur_max");
	assert_non_null(sym);
	addr = (__u64)(unsigned long)sym;
	/* Inside the re-read interval the new library is not seen yet... */
	assert_null(proc_cache_find_map(pc, getpid(), addr));
	/* ...after it (100 ms plus nine times what the last read took: more
	 * on a loaded machine), a miss re-reads and finds it */
	{
		const struct mt_map *m = NULL;
		int waited;

		for (waited = 0; !m && waited < 5000; waited += 20) {
			sleep_ms(20);
			m = proc_cache_find_map(pc, getpid(), addr);
		}
		assert_non_null(m);
		assert_non_null(strstr(m->path, "libBrokenLocale"));
		check_bias(pc, sym, "__ctype_get_mb_cur_max");
	}
	proc_cache_free(pc);
	dlclose(h);
}

/* Earlier mapping pointers survive a re-read. */
static void test_pointer_survives_reread(void **state)
{
	struct proc_cache *pc = proc_cache_new();
	const struct mt_map *m =
		proc_cache_find_map(pc, getpid(), (__u64)(unsigned long)&cache_test_target);
	struct mt_map copy;
	void *p;

	assert_non_null(m);
	copy = *m;
	p = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(p != MAP_FAILED);
	sleep_ms(120);
	assert_non_null(proc_cache_find_map(pc, getpid(), (__u64)(unsigned long)p));
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
		cmocka_unit_test(test_pointer_survives_reread),
		cmocka_unit_test(test_replaced_file),
		cmocka_unit_test(test_other_processes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

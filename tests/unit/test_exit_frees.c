// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_exit_frees.c - where glibc frees at a thread's exit, in a real
 * process (probe/exit_frees.c): /bin/sleep started by this test, whose libc
 * is found with its debug file (libc6-dbg, which make deps installs) at
 * the address the kernel mapped it; "not yet" for a forked copy of this
 * test (a command held before its exec maps memtop's libc, not its own);
 * nothing without a debug file or without names.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "probe/exit_frees.h"
#include "readers/elf_file.h"
#include "readers/proc_maps.h"
#include "stacks/debuginfo.h"

static const char *const names[] = { "tcache_thread_shutdown", "__malloc_arena_thread_freeres", NULL };

/* The executable mapping of libc.so.6 in pid, copied to *out. */
static bool libc_text(pid_t pid, struct mt_map *out, char *path, size_t len)
{
	struct mt_maps maps = { 0 };
	bool found = false;

	if (proc_maps_read(pid, &maps))
		return false;
	for (size_t i = 0; i < maps.n && !found; i++) {
		const struct mt_map *m = &maps.v[i];
		const char *base = m->path ? strrchr(m->path, '/') : NULL;

		if (base && !strcmp(base, "/libc.so.6") && m->perms[2] == 'x') {
			*out = *m;
			snprintf(path, len, "%s", m->path);
			found = true;
		}
	}
	proc_maps_free(&maps);
	return found;
}

/* /bin/sleep started, once its libc is mapped (polled, up to 10 s). */
static pid_t sleeper(void)
{
	struct timespec step = { 0, 5 * 1000 * 1000 };
	char path[4096];
	struct mt_map m;
	pid_t pid = fork();

	if (pid == 0) {
		execl("/bin/sleep", "sleep", "60", (char *)NULL);
		_exit(127);
	}
	assert_true(pid > 0);
	for (int i = 0; i < 2000; i++) {
		char exe[64], link[64] = "";

		snprintf(exe, sizeof(exe), "/proc/%d/exe", pid);
		if (readlink(exe, link, sizeof(link) - 1) > 0 && strstr(link, "sleep") &&
		    libc_text(pid, &m, path, sizeof(path)))
			return pid;
		nanosleep(&step, NULL);
	}
	fail_msg("/bin/sleep did not map its libc in 10 s");
	return -1;
}

static void end(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/* The size of the first of names the debug file of lib defines. */
static __u64 symbol_size(const char *lib)
{
	struct elf_file *ef = elf_file_open(lib), *dbg;
	__u64 vaddr, size = 0;

	assert_non_null(ef);
	dbg = debuginfo_find(ef, 0, NULL);
	if (!dbg)
		fail_msg("no debug file for %s: install libc6-dbg (make deps does)", lib);
	for (const char *const *n = names; *n; n++)
		if (!elf_file_func_symbol(dbg, *n, &vaddr, &size))
			break;
	elf_file_close(dbg);
	elf_file_close(ef);
	return size;
}

/* What attach does: the file's function located once, then looked for
 * among pid's mappings. */
static int exit_frees_find(pid_t pid, const char *lib, const char *const *n, __u64 *lo, __u64 *hi)
{
	struct exit_frees_loc loc;
	int e = exit_frees_locate(pid, lib, n, &loc);

	return e ? e : exit_frees_mapped(pid, &loc, lo, hi);
}

static void test_found_where_the_kernel_mapped_it(void **state)
{
	char lib[4096], map_file[128];
	struct mt_map m;
	__u64 lo = 0, hi = 0, size;
	pid_t pid = sleeper();

	(void)state;
	assert_true(libc_text(pid, &m, lib, sizeof(lib)));
	size = symbol_size(lib);
	assert_true(size > 0);
	/* through map_files, as memtop opens a target's libc */
	snprintf(map_file, sizeof(map_file), "/proc/%d/map_files/%llx-%llx", pid,
		 (unsigned long long)m.start, (unsigned long long)m.end);
	assert_int_equal(exit_frees_find(pid, map_file, names, &lo, &hi), 0);
	assert_true(lo >= m.start && hi <= m.end);
	assert_int_equal(hi - lo, size);
	end(pid);
}

static void test_not_yet_in_a_copy_of_memtop(void **state)
{
	char lib[4096];
	struct mt_map m;
	__u64 lo, hi;
	pid_t pid;

	(void)state;
	assert_true(libc_text(getpid(), &m, lib, sizeof(lib)));
	pid = fork();
	if (pid == 0) {
		pause();
		_exit(0);
	}
	assert_true(pid > 0);
	assert_int_equal(exit_frees_find(pid, lib, names, &lo, &hi), -EAGAIN);
	end(pid);
}

static void test_none_without_symbols_or_names(void **state)
{
	char lib[4096];
	struct mt_map m;
	__u64 lo, hi;
	pid_t pid = sleeper();

	(void)state;
	assert_true(libc_text(pid, &m, lib, sizeof(lib)));
	assert_int_equal(exit_frees_find(pid, lib, NULL, &lo, &hi), -ENOENT);
	assert_int_equal(debuginfo_set_debug_dir("/nonexistent"), 0);
	assert_int_equal(exit_frees_find(pid, lib, names, &lo, &hi), -ENOENT);
	debuginfo_set_debug_dir(NULL);
	assert_int_equal(exit_frees_find(pid, lib, names, &lo, &hi), 0);
	end(pid);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_found_where_the_kernel_mapped_it),
		cmocka_unit_test(test_not_yet_in_a_copy_of_memtop),
		cmocka_unit_test(test_none_without_symbols_or_names),
	};

	unsetenv("DEBUGINFOD_URLS"); /* the local debug file, never a fetch */
	return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_session.c - a session's files in its run directory (export/
 * session.c): the mark ID.pid names this process and its start time, a
 * session's end removes its files (its recording only when it was its
 * own), and a sweep removes the files of sessions whose process is gone
 * (no such process; a PID reused, its start time not the mark's) and
 * keeps those of one that runs, of files not a session's, and of self.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "record/session.h"

static char dir[] = "/tmp/test_session.XXXXXX";

static void put(const char *name, const char *text)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static bool there(const char *name)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return access(path, F_OK) == 0;
}

/* A PID no process has: a child's, once reaped. */
static pid_t gone_pid(void)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0)
		_exit(0);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	return pid;
}

static unsigned long long swept_bytes;
static int swept;

static void said(void *ctx, pid_t id, unsigned long long bytes)
{
	(void)ctx;
	(void)id;
	swept++;
	swept_bytes += bytes;
}

static void test_mark_end_and_sweep(void **state)
{
	char err[512], name[64], line[64], mark[64];
	pid_t me = getpid(), gone = gone_pid(), parent = getppid();
	FILE *f;

	/* the mark: this process and its start time, as /proc says */
	assert_int_equal(session_mark(dir, me, err, sizeof(err)), 0);
	snprintf(name, sizeof(name), "%s/%d.pid", dir, (int)me);
	f = fopen(name, "r");
	assert_non_null(f);
	assert_non_null(fgets(mark, sizeof(mark), f));
	fclose(f);
	snprintf(line, sizeof(line), "%d ", (int)me);
	assert_true(!strncmp(mark, line, strlen(line)) && strtoull(mark + strlen(line), NULL, 10) > 0);

	/* a gone session's files, a reused PID's (the parent's, another start
	 * time), one that runs (the parent's real mark would say so: here
	 * this process's files under its own mark), and files not a session's */
	snprintf(name, sizeof(name), "%d.rec", (int)gone);
	put(name, "0123456789");
	snprintf(name, sizeof(name), "%d.rec.1", (int)gone);
	put(name, "01234");
	snprintf(name, sizeof(name), "%d.rec.new", (int)gone); /* killed inside a rotation */
	put(name, "012");
	snprintf(name, sizeof(name), "%d.pid", (int)parent);
	snprintf(line, sizeof(line), "%d 987654321987\n", (int)parent);
	put(name, line);
	snprintf(name, sizeof(name), "%d.rec", (int)parent);
	put(name, "xx");
	snprintf(name, sizeof(name), "%d.rec", (int)me);
	put(name, "mine");
	put("notes.txt", "not a session's");
	put("12ab.rec", "not a session's");
	swept = 0;
	swept_bytes = 0;
	assert_int_equal(session_sweep(dir, 0, said, NULL), 2);
	assert_int_equal(swept, 2);
	assert_int_equal(swept_bytes, 10 + 5 + 3 + 2 + strlen(line));
	snprintf(name, sizeof(name), "%d.rec", (int)gone);
	assert_false(there(name));
	snprintf(name, sizeof(name), "%d.rec.new", (int)gone);
	assert_false(there(name));
	snprintf(name, sizeof(name), "%d.rec", (int)parent);
	assert_false(there(name));
	snprintf(name, sizeof(name), "%d.rec", (int)me);
	assert_true(there(name)); /* it runs: its mark's start time is its own */
	assert_true(there("notes.txt") && there("12ab.rec"));

	/* the end: the mark goes, the recording only when it was its own */
	session_remove_files(dir, me, false);
	snprintf(name, sizeof(name), "%d.pid", (int)me);
	assert_false(there(name));
	snprintf(name, sizeof(name), "%d.rec", (int)me);
	assert_true(there(name));
	session_remove_files(dir, me, true);
	assert_false(there(name));
}

static int setup(void **state)
{
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mark_end_and_sweep),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}

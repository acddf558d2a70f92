// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_cmd_log.c - where a launched command's output goes by default
 * (probe/cmd_log.c): $XDG_STATE_HOME/memtop before ~/.local/state/memtop,
 * never a relative directory; the directory made 0700 and refused when it
 * is a symlink; the oldest memtop-cmd-PID.log beyond CMD_LOG_KEEP removed
 * and nothing else; the default renamed after the command's PID.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/time.h>

#include "probe/cmd_log.h"

static char tmp[64]; /* a mkdtemp() name under /tmp */

static int setup(void **state)
{
	snprintf(tmp, sizeof(tmp), "/tmp/memtop-test-cmd-log-XXXXXX");
	return mkdtemp(tmp) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	return system(cmd) == 0 ? 0 : -1;
}

static void test_dir_precedence(void **state)
{
	char dir[PATH_MAX];

	setenv("XDG_STATE_HOME", "/x/state", 1);
	setenv("HOME", "/home/u", 1);
	assert_int_equal(cmd_log_dir(dir, sizeof(dir)), 0);
	assert_string_equal(dir, "/x/state/memtop");
	setenv("XDG_STATE_HOME", "relative", 1); /* the spec: ignored */
	assert_int_equal(cmd_log_dir(dir, sizeof(dir)), 0);
	assert_string_equal(dir, "/home/u/.local/state/memtop");
	unsetenv("XDG_STATE_HOME");
	assert_int_equal(cmd_log_dir(dir, sizeof(dir)), 0);
	assert_string_equal(dir, "/home/u/.local/state/memtop");
	unsetenv("HOME");
	if (geteuid() == 0) {
		assert_int_equal(cmd_log_dir(dir, sizeof(dir)), 0);
		assert_string_equal(dir, "/var/log/memtop");
	} else {
		assert_int_equal(cmd_log_dir(dir, sizeof(dir)), -ENOENT);
	}
}

static int count_logs(const char *dir, bool *has_oldest, bool *has_other)
{
	struct dirent *de;
	DIR *d = opendir(dir);
	int n = 0;

	assert_non_null(d);
	*has_oldest = *has_other = false;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, "memtop-cmd-1.log"))
			*has_oldest = true;
		if (!strcmp(de->d_name, "notes.txt"))
			*has_other = true;
		n += !strncmp(de->d_name, "memtop-cmd-", 11) && strstr(de->d_name, ".log") &&
		     strspn(de->d_name + 11, "0123456789") > 0;
	}
	closedir(d);
	return n;
}

static void touch(const char *path, time_t when)
{
	struct timeval tv[2] = { { when, 0 }, { when, 0 } };
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fclose(f);
	assert_int_equal(utimes(path, tv), 0);
}

static void test_open_makes_dir_and_keeps_the_newest(void **state)
{
	char state_home[128], dir[PATH_MAX], path[PATH_MAX + 64], err[256], to[PATH_MAX];
	bool created, oldest, other;
	struct stat st;
	int fd, i;

	snprintf(state_home, sizeof(state_home), "%s/st", tmp);
	setenv("XDG_STATE_HOME", state_home, 1);
	/* made, 0700, with its parent */
	fd = cmd_log_open(NULL, path, sizeof(path), &created, err, sizeof(err));
	assert_true(fd >= 0);
	assert_true(created);
	close(fd);
	snprintf(dir, sizeof(dir), "%s/memtop", state_home);
	assert_int_equal(stat(dir, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);
	assert_int_equal(strncmp(path, dir, strlen(dir)), 0);
	/* renamed after the command's PID */
	cmd_log_rename(path, sizeof(path), false, 99999);
	snprintf(to, sizeof(to), "%s/memtop-cmd-99999.log", dir);
	assert_string_equal(path, to);
	assert_int_equal(access(to, F_OK), 0);
	/* 25 older logs and a file of someone else's */
	for (i = 1; i <= 25; i++) {
		snprintf(path, sizeof(path), "%s/memtop-cmd-%d.log", dir, i);
		touch(path, 1000000 + i);
	}
	snprintf(path, sizeof(path), "%s/notes.txt", dir);
	touch(path, 1);
	fd = cmd_log_open(NULL, path, sizeof(path), &created, err, sizeof(err));
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(count_logs(dir, &oldest, &other), CMD_LOG_KEEP);
	assert_false(oldest);
	assert_true(other);
	/* a name the user gave is theirs: nothing pruned */
	snprintf(to, sizeof(to), "%s/mine.log", tmp);
	fd = cmd_log_open(to, path, sizeof(path), &created, err, sizeof(err));
	assert_true(fd >= 0);
	close(fd);
	assert_string_equal(path, to);
	assert_int_equal(count_logs(dir, &oldest, &other), CMD_LOG_KEEP);
}

static void test_symlinked_dir_refused(void **state)
{
	char state_home[128], link[160], path[PATH_MAX], err[256];
	bool created;

	snprintf(state_home, sizeof(state_home), "%s/evil", tmp);
	assert_int_equal(mkdir(state_home, 0700), 0);
	snprintf(link, sizeof(link), "%s/memtop", state_home);
	assert_int_equal(symlink("/etc", link), 0);
	setenv("XDG_STATE_HOME", state_home, 1);
	assert_int_equal(cmd_log_open(NULL, path, sizeof(path), &created, err, sizeof(err)),
			 -ENOTDIR);
	assert_non_null(strstr(err, "give --cmd-log FILE"));
	assert_false(created);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dir_precedence),
		cmocka_unit_test(test_open_makes_dir_and_keeps_the_newest),
		cmocka_unit_test(test_symlinked_dir_refused),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}

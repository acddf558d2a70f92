// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_out_file.c - the one writer of outputs: a new file is 0600 minus
 * the umask and never more open than the file it replaces (whose owner is
 * kept); /dev/null is written through and stays a character device; a
 * FIFO without a reader is refused at once (no hang), one with a reader
 * gets the bytes through the descriptor opened at check time and is never
 * replaced; a directory and a block device are refused; a symbolic link
 * is never replaced: one through a descriptor (/dev/stdout, /dev/fd/N) is
 * written through, a regular file behind it appended to; another link has
 * its target replaced; a link to nothing is refused.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "util/out_file.h"

static char dir[64];

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/test_out_file.XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static const char *at(const char *name)
{
	static char buf[256];

	snprintf(buf, sizeof(buf), "%s/%s", dir, name);
	return buf;
}

static mode_t mode_of(const char *path)
{
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	return st.st_mode & 07777;
}

static void test_modes(void **state)
{
	char err[256];
	mode_t old = umask(022);

	(void)state;
	assert_int_equal(out_file_write(at("new"), "x", 1, err, sizeof(err)), 0);
	assert_int_equal(mode_of(at("new")), 0600);
	/* an existing 0644 file becomes 0600, never the other way round */
	assert_int_equal(chmod(at("new"), 0644), 0);
	assert_int_equal(out_file_write(at("new"), "y", 1, err, sizeof(err)), 0);
	assert_int_equal(mode_of(at("new")), 0600);
	/* a stricter existing mode is kept */
	assert_int_equal(chmod(at("new"), 0400), 0);
	assert_int_equal(out_file_write(at("new"), "z", 1, err, sizeof(err)), 0);
	assert_int_equal(mode_of(at("new")), 0400);
	/* the umask is honoured */
	umask(0277);
	assert_int_equal(out_file_write(at("masked"), "x", 1, err, sizeof(err)), 0);
	assert_int_equal(mode_of(at("masked")), 0400);
	umask(old);
	if (geteuid() == 0) {
		struct stat st;

		assert_int_equal(chown(at("new"), 65534, 65534), 0);
		assert_int_equal(out_file_write(at("new"), "w", 1, err, sizeof(err)), 0);
		assert_int_equal(stat(at("new"), &st), 0);
		assert_int_equal(st.st_uid, 65534);
		assert_int_equal(st.st_gid, 65534);
	}
}

static void test_dev_null(void **state)
{
	char err[256];
	struct stat st;

	(void)state;
	assert_int_equal(out_file_check("/dev/null", err, sizeof(err)), 0);
	assert_int_equal(out_file_write("/dev/null", "data", 4, err, sizeof(err)), 0);
	assert_int_equal(stat("/dev/null", &st), 0);
	assert_true(S_ISCHR(st.st_mode));
	assert_int_equal(major(st.st_rdev), 1);
	assert_int_equal(minor(st.st_rdev), 3);
	assert_true(out_file_is_stream("/dev/null"));
	assert_false(out_file_is_stream(dir));
	/* a full device says so, and stays a device */
	assert_int_equal(out_file_write("/dev/full", "data", 4, err, sizeof(err)), -ENOSPC);
	assert_non_null(strstr(err, "cannot write /dev/full: "));
	assert_int_equal(stat("/dev/full", &st), 0);
	assert_true(S_ISCHR(st.st_mode));
}

static void test_fifo(void **state)
{
	char err[256], buf[16] = "";
	struct stat st;
	int rd;

	(void)state;
	assert_int_equal(mkfifo(at("fifo"), 0600), 0);
	assert_int_equal(out_file_check(at("fifo"), err, sizeof(err)), -ENXIO);
	assert_non_null(strstr(err, "a FIFO with no reader"));
	rd = open(at("fifo"), O_RDONLY | O_NONBLOCK);
	assert_true(rd >= 0);
	assert_int_equal(out_file_check(at("fifo"), err, sizeof(err)), 0);
	assert_int_equal(out_file_write(at("fifo"), "profile", 7, err, sizeof(err)), 0);
	assert_int_equal(read(rd, buf, sizeof(buf) - 1), 7);
	assert_string_equal(buf, "profile");
	close(rd);
	assert_int_equal(lstat(at("fifo"), &st), 0);
	assert_true(S_ISFIFO(st.st_mode));
}

static void test_refused(void **state)
{
	char err[256];

	(void)state;
	assert_int_equal(out_file_check(dir, err, sizeof(err)), -EISDIR);
	assert_int_equal(out_file_write(dir, "x", 1, err, sizeof(err)), -EISDIR);
	if (!access("/dev/loop0", F_OK)) {
		assert_int_equal(out_file_write("/dev/loop0", "x", 1, err, sizeof(err)), -ENOTBLK);
		assert_non_null(strstr(err, "block device"));
	}
	assert_int_equal(out_file_write("", "x", 1, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "cannot write file: empty path");
}

static char *slurp(const char *path)
{
	static char buf[256];
	int fd = open(path, O_RDONLY);
	ssize_t n;

	assert_true(fd >= 0);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	assert_true(n >= 0);
	buf[n] = '\0';
	return buf;
}

static void test_links(void **state)
{
	char err[256], fdlink[64], target[256];
	struct stat st;
	int fd;

	(void)state;
	/* a regular file behind a descriptor, as `memtop > out --folded
	 * /dev/stdout` has it: appended to, and the links stay links */
	fd = open(at("out"), O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "tables\n", 7), 7);
	snprintf(fdlink, sizeof(fdlink), "/dev/fd/%d", fd);
	assert_int_equal(symlink(fdlink, at("stdout")), 0);
	assert_true(out_file_is_stream(at("stdout")));
	assert_int_equal(out_file_check(at("stdout"), err, sizeof(err)), 0);
	assert_int_equal(out_file_write(at("stdout"), "folded\n", 7, err, sizeof(err)), 0);
	close(fd);
	assert_string_equal(slurp(at("out")), "tables\nfolded\n");
	assert_int_equal(lstat(at("stdout"), &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	/* another link: its target replaced, the link kept */
	snprintf(target, sizeof(target), "%s", at("out"));
	assert_int_equal(symlink(target, at("link")), 0);
	assert_false(out_file_is_stream(at("link")));
	assert_int_equal(out_file_check(at("link"), err, sizeof(err)), 0);
	assert_int_equal(out_file_write(at("link"), "new\n", 4, err, sizeof(err)), 0);
	assert_string_equal(slurp(at("out")), "new\n");
	assert_int_equal(lstat(at("link"), &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	/* a link to nothing: refused, nothing created */
	snprintf(target, sizeof(target), "%s", at("nowhere"));
	assert_int_equal(symlink(target, at("dangling")), 0);
	assert_int_equal(out_file_write(at("dangling"), "x", 1, err, sizeof(err)), -ELOOP);
	assert_non_null(strstr(err, "symbolic link to nothing"));
	assert_int_equal(out_file_check(at("dangling"), err, sizeof(err)), -ELOOP);
	assert_int_equal(lstat(at("nowhere"), &st), -1);
	assert_int_equal(lstat(at("dangling"), &st), 0);
	assert_true(S_ISLNK(st.st_mode));
}

/* One file under two names: by inode when both exist, by canonical name
 * when neither does; a character device may be shared. */
static void test_same(void **state)
{
	char a[256], canon[PATH_MAX], real[PATH_MAX];
	int fd;

	(void)state;
	fd = open(at("f"), O_CREAT | O_WRONLY, 0600);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(symlink("f", at("sym")), 0);
	snprintf(a, sizeof(a), "%s", at("f"));
	assert_int_equal(link(a, at("hard")), 0);
	assert_int_equal(mkfifo(at("fifo"), 0600), 0);
	assert_int_equal(mkdir(at("sub"), 0700), 0);
	snprintf(a, sizeof(a), "%s", at("f"));
	assert_int_equal(out_file_same(a, at("sym")), OUT_FILE_SAME);
	assert_int_equal(out_file_same(a, at("hard")), OUT_FILE_SAME);
	assert_int_equal(out_file_same(a, at("sub/../f")), OUT_FILE_SAME);
	assert_int_equal(out_file_same(a, at("new")), OUT_FILE_DIFFERENT);
	snprintf(a, sizeof(a), "%s", at("new"));
	assert_int_equal(out_file_same(a, at("sub/../new")), OUT_FILE_SAME);
	assert_int_equal(out_file_same(a, at("sub/new")), OUT_FILE_DIFFERENT);
	snprintf(a, sizeof(a), "%s", at("fifo"));
	assert_int_equal(out_file_same(a, at("./fifo")), OUT_FILE_SAME);
	assert_int_equal(out_file_same("/dev/null", "/dev/null"), OUT_FILE_SHARED);
	assert_int_equal(out_file_same("/dev/null", "/dev/zero"), OUT_FILE_DIFFERENT);

	assert_int_equal(out_file_canonical(at("sub/../new"), canon, sizeof(canon)), 0);
	assert_non_null(realpath(dir, real));
	assert_int_equal(strncmp(canon, real, strlen(real)), 0);
	assert_string_equal(canon + strlen(real), "/new");
	assert_int_equal(out_file_canonical(at("nodir/x"), canon, sizeof(canon)), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_modes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dev_null, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fifo, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_links, setup, teardown),
		cmocka_unit_test_setup_teardown(test_same, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_safe_open.c - files named by someone else: a FIFO (with no writer:
 * an ordinary open would wait forever), a device and a directory are
 * refused at once with SAFE_OPEN_ENOTREG; an absolute symlink and ".."
 * inside a root stay in that root; another inode than the expected one is
 * -ESTALE; a file the reader could not read is -EACCES, and a readable
 * one opens. safe_read_file() reads a whole small file, refuses a larger
 * one (-EFBIG) and, with no_symlink, a symlink (-ELOOP). Each case runs in
 * a fresh temporary directory.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/safe_open.h"

static char dir[64];

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/test_safe_open.XXXXXX");
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
	static char buf[4][256];
	static int k;

	k = (k + 1) % 4;
	snprintf(buf[k], sizeof(buf[k]), "%s/%s", dir, name);
	return buf[k];
}

static void put(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	assert_int_equal(chmod(path, mode), 0);
}

static void expect_text(int fd, const char *text)
{
	char buf[64] = "";

	assert_true(fd >= 0);
	assert_true(read(fd, buf, sizeof(buf) - 1) >= 0);
	assert_string_equal(buf, text);
	/* what a reader gets: no O_NONBLOCK surprises for a regular file,
	 * and never an fd that survives exec */
	assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	close(fd);
}

static void test_not_regular(void **state)
{
	(void)state;
	assert_int_equal(mkfifo(at("fifo"), 0600), 0);
	assert_int_equal(safe_open_read(at("fifo"), NULL), -SAFE_OPEN_ENOTREG);
	assert_int_equal(safe_open_read("/dev/null", NULL), -SAFE_OPEN_ENOTREG);
	assert_int_equal(safe_open_read(dir, NULL), -SAFE_OPEN_ENOTREG);
	assert_int_equal(symlink(at("fifo"), at("to-fifo")), 0);
	assert_int_equal(safe_open_read(at("to-fifo"), NULL), -SAFE_OPEN_ENOTREG);
	assert_string_equal(safe_open_strerror(-SAFE_OPEN_ENOTREG), "not a regular file");
	assert_int_equal(safe_open_read(at("missing"), NULL), -ENOENT);
	assert_int_equal(safe_open_read("", NULL), -ENOENT);
	put(at("plain"), "plain", 0644);
	expect_text(safe_open_read(at("plain"), NULL), "plain");
}

static void test_read_file(void **state)
{
	const struct safe_open_rules no_link = { .root_fd = -1, .no_symlink = true };
	char *text = (char *)"untouched";
	size_t len = 99;
	int root;

	(void)state;
	put(at("small"), "0123456789", 0644);
	assert_int_equal(safe_read_file(at("small"), NULL, 10, &text, &len), 0);
	assert_string_equal(text, "0123456789");
	assert_int_equal(len, 10);
	free(text);
	assert_int_equal(safe_read_file(at("small"), NULL, 9, &text, &len), -EFBIG);
	assert_null(text);
	put(at("empty"), "", 0644);
	assert_int_equal(safe_read_file(at("empty"), NULL, 10, &text, &len), 0);
	assert_string_equal(text, "");
	assert_int_equal(len, 0);
	free(text);
	assert_int_equal(mkfifo(at("fifo"), 0600), 0);
	assert_int_equal(safe_read_file(at("fifo"), NULL, 10, &text, &len), -SAFE_OPEN_ENOTREG);
	/* A symlink is followed unless no_symlink says otherwise, in a root too. */
	assert_int_equal(symlink("small", at("link")), 0);
	assert_int_equal(safe_read_file(at("link"), NULL, 10, &text, &len), 0);
	free(text);
	assert_int_equal(safe_read_file(at("link"), &no_link, 10, &text, &len), -ELOOP);
	assert_int_equal(safe_read_file(at("small"), &no_link, 10, &text, &len), 0);
	free(text);
	root = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	assert_true(root >= 0);
	{
		const struct safe_open_rules in_root = { .root_fd = root, .no_symlink = true };

		assert_int_equal(safe_read_file("/link", &in_root, 10, &text, &len), -ELOOP);
		assert_int_equal(safe_read_file("/small", &in_root, 10, &text, &len), 0);
		free(text);
	}
	close(root);
}

static void test_in_root(void **state)
{
	struct safe_open_rules r = { .root_fd = -1 };
	char outside[300];

	(void)state;
	/* root/etc/secret is the root's; dir/etc-secret stands for the host's */
	assert_int_equal(mkdir(at("root"), 0755), 0);
	assert_int_equal(mkdir(at("root/etc"), 0755), 0);
	assert_int_equal(mkdir(at("root/lib"), 0755), 0);
	put(at("root/etc/secret"), "inside", 0644);
	put(at("host-secret"), "outside", 0644);
	snprintf(outside, sizeof(outside), "%s", at("host-secret"));
	assert_int_equal(symlink(outside, at("root/lib/abs")), 0);
	assert_int_equal(symlink("/etc/secret", at("root/lib/abs-in")), 0);
	assert_int_equal(symlink("../../../../../../host-secret", at("root/lib/dotdot")), 0);
	r.root_fd = open(at("root"), O_PATH | O_DIRECTORY | O_CLOEXEC);
	assert_true(r.root_fd >= 0);
	expect_text(safe_open_read("/etc/secret", &r), "inside");
	expect_text(safe_open_read("/lib/abs-in", &r), "inside");
	/* the host path does not exist inside the root */
	assert_int_equal(safe_open_read("/lib/abs", &r), -ENOENT);
	assert_int_equal(safe_open_read("/lib/dotdot", &r), -ENOENT);
	assert_int_equal(safe_open_read("/../../host-secret", &r), -ENOENT);
	/* without a root the same link does reach it */
	expect_text(safe_open_read(at("root/lib/abs"), NULL), "outside");
	close(r.root_fd);
}

static void test_inode_and_reader(void **state)
{
	struct safe_reader nobody = { .uid = 65534, .gid = 65534 };
	struct safe_reader owner = { .uid = 65534, .gid = 65534 };
	struct safe_open_rules r = { .root_fd = -1 };
	struct stat st;

	(void)state;
	put(at("lib.so"), "lib", 0644);
	put(at("private"), "private", 0600);
	assert_int_equal(stat(at("lib.so"), &st), 0);
	r.want_ino = (__u64)st.st_ino;
	expect_text(safe_open_read(at("lib.so"), &r), "lib");
	/* the name now is another file: refused without reading it */
	assert_int_equal(rename(at("private"), at("lib.so")), 0);
	assert_int_equal(safe_open_read(at("lib.so"), &r), -ESTALE);
	r.want_ino = 0;
	r.reader = &nobody;
	if (geteuid() == 0) {
		assert_int_equal(chown(at("lib.so"), 0, 0), 0);
		assert_int_equal(safe_open_read(at("lib.so"), &r), -EACCES);
		assert_int_equal(chown(at("lib.so"), 65534, 0), 0);
		r.reader = &owner;
		expect_text(safe_open_read(at("lib.so"), &r), "private");
	} else {
		/* our own file, read on behalf of someone else */
		nobody.uid = geteuid() + 1;
		nobody.gid = getegid() + 1;
		assert_int_equal(safe_open_read(at("lib.so"), &r), -EACCES);
	}
	assert_int_equal(chmod(at("lib.so"), 0604), 0);
	r.reader = &nobody;
	expect_text(safe_open_read(at("lib.so"), &r), "private");
}

static void test_reader_of_pid(void **state)
{
	struct safe_reader r;

	(void)state;
	assert_int_equal(safe_reader_of_pid(getpid(), &r), 0);
	assert_int_equal(r.uid, geteuid());
	assert_int_equal(r.gid, getegid());
	assert_int_equal(r.any, geteuid() == 0);
	assert_true(safe_reader_of_pid(0x7ffffff0, &r) < 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_not_regular, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_in_root, setup, teardown),
		cmocka_unit_test_setup_teardown(test_inode_and_reader, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reader_of_pid, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

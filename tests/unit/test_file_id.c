// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_file_id.c - a file's identity follows its inode and contents: the
 * same file twice is one identity, a file rewritten or replaced in place is
 * another, and every field takes part in equality and the hash.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <cmocka.h>

#include "util/file_id.h"

static struct file_id id_of(const char *path)
{
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	return file_id_of_stat(&st);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_true(fputs(text, f) >= 0);
	assert_int_equal(fclose(f), 0);
}

static void test_same_file_same_identity(void **state)
{
	char path[] = "/tmp/test_file_id.XXXXXX";
	int fd = mkstemp(path);
	struct file_id a, b;

	assert_true(fd >= 0);
	close(fd);
	write_file(path, "one");
	a = id_of(path);
	b = id_of(path);
	assert_true(file_id_equal(&a, &b));
	assert_true(file_id_hash(&a) == file_id_hash(&b));
	assert_int_equal(a.size, 3);

	/* Rewritten: the size changes (and the mtime may). */
	write_file(path, "longer");
	b = id_of(path);
	assert_false(file_id_equal(&a, &b));

	/* Replaced by another inode with the same bytes. */
	{
		char other[] = "/tmp/test_file_id.XXXXXX";
		int ofd = mkstemp(other);
		struct file_id c;

		assert_true(ofd >= 0);
		close(ofd);
		write_file(other, "longer");
		assert_int_equal(rename(other, path), 0);
		c = id_of(path);
		assert_true(c.ino != b.ino);
		assert_false(file_id_equal(&b, &c));
	}
	unlink(path);
}

static void test_every_field_counts(void **state)
{
	const struct file_id base = { .dev = 8, .ino = 1234, .size = 4096, .mtime_ns = 99 };
	struct file_id v[4];
	int i;

	for (i = 0; i < 4; i++)
		v[i] = base;
	v[0].dev++;
	v[1].ino++;
	v[2].size++;
	v[3].mtime_ns++;
	for (i = 0; i < 4; i++) {
		assert_false(file_id_equal(&base, &v[i]));
		assert_true(file_id_hash(&base) != file_id_hash(&v[i]));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_file_same_identity),
		cmocka_unit_test(test_every_field_counts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_link_release.c - links given to link_release*() are released at
 * once outside a batch, only at the outermost link_batch_end() inside one,
 * and every one of them then (descriptors stand in for links: releasing a
 * bare link descriptor is closing it).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <unistd.h>

#include "probe/link_release.h"

static bool is_open(int fd)
{
	return fcntl(fd, F_GETFD) != -1 || errno != EBADF;
}

static void test_outside_a_batch(void **state)
{
	int p[2];

	(void)state;
	assert_int_equal(pipe(p), 0);
	link_release_fd(p[0]);
	assert_false(is_open(p[0]));
	link_release_fd(-1); /* none */
	link_release(NULL);  /* none */
	assert_true(is_open(p[1]));
	close(p[1]);
}

static void test_batched(void **state)
{
	enum { N = 200 };
	int fds[N];

	(void)state;
	link_batch_begin();
	for (int i = 0; i < N; i += 2) {
		assert_int_equal(pipe(&fds[i]), 0);
		link_release_fd(fds[i]);
		link_release_fd(fds[i + 1]);
	}
	link_batch_begin(); /* nested: only the outer end releases */
	link_batch_end();
	for (int i = 0; i < N; i++)
		assert_true(is_open(fds[i]));
	link_batch_end();
	for (int i = 0; i < N; i++)
		assert_false(is_open(fds[i]));
	link_batch_end(); /* no batch: nothing */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_outside_a_batch),
		cmocka_unit_test(test_batched),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_proc_maps.c - maps parsing on committed snapshots
 * (tests/fixtures/maps/): a normal process, deleted and odd paths,
 * anonymous and pseudo mappings, and malformed texts that must be
 * rejected whole. Also reads this process's own maps.
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
#include <sys/mman.h>

#include "readers/proc_maps.h"
#include "util/strpool.h"

/* Fixtures are found from the working directory (make runs tests from the
 * top of the tree) or relative to build/tests/<binary>. */
static char *fixture_read(const char *name, size_t *len)
{
	char exe[PATH_MAX], path[PATH_MAX + 64];
	FILE *f;
	char *buf;
	long n;

	snprintf(path, sizeof(path), "tests/fixtures/maps/%s", name);
	f = fopen(path, "r");
	if (!f) {
		ssize_t r = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

		assert_true(r > 0);
		exe[r] = '\0';
		*strrchr(exe, '/') = '\0';
		snprintf(path, sizeof(path), "%s/../../tests/fixtures/maps/%s", exe, name);
		f = fopen(path, "r");
	}
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*len = (size_t)n;
	return buf;
}

static void test_normal(void **state)
{
	struct mt_maps m;
	const struct mt_map *x;
	size_t len;
	char *text = fixture_read("normal.maps", &len);

	assert_int_equal(proc_maps_parse(text, len, &m), 0);
	assert_int_equal(m.n, 26);
	for (size_t i = 1; i < m.n; i++)
		assert_true(m.v[i - 1].end <= m.v[i].start);

	x = proc_maps_find(&m, 0x7f5b2b622000 + 0x76130);
	assert_non_null(x);
	assert_int_equal(x->start, 0x7f5b2b622000);
	assert_int_equal(x->end, 0x7f5b2b778000);
	assert_int_equal(x->offset, 0x26000);
	assert_int_equal(x->dev_major, 0xfe);
	assert_int_equal(x->dev_minor, 0);
	assert_int_equal(x->inode, 332835);
	assert_string_equal(x->perms, "r-xp");
	assert_false(x->deleted);
	assert_string_equal(x->path, "/usr/lib/x86_64-linux-gnu/libc.so.6");
	/* Paths are interned: the five libc mappings share one pointer. */
	assert_ptr_equal(x->path, strpool_intern("/usr/lib/x86_64-linux-gnu/libc.so.6"));
	assert_ptr_equal(proc_maps_find(&m, 0x7f5b2b5fc000)->path, x->path);

	/* Boundaries: start is inside, end is not; gaps find nothing. */
	assert_ptr_equal(proc_maps_find(&m, 0x7f5b2b778000 - 1), x);
	assert_ptr_not_equal(proc_maps_find(&m, 0x7f5b2b778000), x);
	assert_null(proc_maps_find(&m, 0x7f5b2b5f2000));
	assert_null(proc_maps_find(&m, 0));
	assert_null(proc_maps_find(&m, 0xffffffffffffffffULL));

	/* Anonymous: no path. */
	x = proc_maps_find(&m, 0x55987d1a5000);
	assert_non_null(x);
	assert_null(x->path);
	assert_int_equal(x->inode, 0);
	/* Pseudo mappings keep their bracketed names. */
	x = proc_maps_find(&m, 0x7f5b2b824100);
	assert_string_equal(x->path, "[vdso]");
	assert_string_equal(x->perms, "r-xp");
	x = proc_maps_find(&m, 0xffffffffff600000ULL);
	assert_string_equal(x->path, "[vsyscall]");
	assert_string_equal(x->perms, "--xp");
	assert_string_equal(proc_maps_find(&m, 0x7f5b2b814000)->perms, "r--s");
	proc_maps_free(&m);
	assert_null(m.v);
	free(text);
}

static void test_deleted_and_odd_paths(void **state)
{
	struct mt_maps m;
	size_t len;
	char *text = fixture_read("deleted.maps", &len);

	assert_int_equal(proc_maps_parse(text, len, &m), 0);
	assert_int_equal(m.n, 7);
	assert_true(m.v[0].deleted);
	assert_string_equal(m.v[0].path, "/opt/app/bin/server");
	assert_ptr_equal(m.v[0].path, m.v[1].path);
	assert_int_equal(m.v[1].offset, 0x1000);
	assert_null(m.v[2].path); /* anonymous executable (JIT) */
	assert_string_equal(m.v[2].perms, "r-xp");
	assert_string_equal(m.v[3].perms, "rwxp");
	assert_true(m.v[4].deleted);
	assert_string_equal(m.v[4].path, "/memfd:jit-code");
	assert_false(m.v[5].deleted);
	assert_string_equal(m.v[5].path, "/home/user/My Libs/libspace.so");
	assert_string_equal(m.v[6].path, "[anon:glibc malloc arena]");
	proc_maps_free(&m);
	free(text);
}

static void expect_einval(const char *fixture)
{
	struct mt_maps m = { (struct mt_map *)&m, 99 };
	size_t len;
	char *text = fixture_read(fixture, &len);

	assert_int_equal(proc_maps_parse(text, len, &m), -EINVAL);
	assert_null(m.v);
	assert_int_equal(m.n, 0);
	free(text);
}

static void test_malformed(void **state)
{
	static const char *const inline_bad[] = {
		"1000-2000 r--p 0 fe:00 1 /a\n\n1000-2000 r--p 0 fe:00 1 /b\n", /* blank line */
		"1000 r--p 0 fe:00 1 /a\n",                                     /* no end */
		"1000-2000 r--p 0 fe00 1 /a\n",                                 /* no colon */
		"1000-2000 r--p 0 fe:00 x /a\n",                       /* inode not decimal */
		"1000-2000 r--p 0 fe:00 99999999999999999999999 /a\n", /* inode overflow */
		"1000-2000 r--p0 fe:00 1 /a\n",                        /* no space after perms */
		"1000-2000 r--p 0 fe:00 1/a\n",                        /* no space before path */
		"g000-2000 r--p 0 fe:00 1 /a\n",                       /* bad hex */
		"-\n",
		"1000-1000 r--p 0 fe:00 1 /a\n", /* empty range */
	};
	const char nul_in_path[] = "1000-2000 r--p 0 fe:00 1 /a\0b\n";
	struct mt_maps m;

	expect_einval("bad_garbage.maps");
	expect_einval("bad_reversed.maps");
	expect_einval("bad_perms.maps");
	expect_einval("bad_truncated.maps");
	expect_einval("bad_overlap.maps");
	expect_einval("bad_overflow.maps");
	for (size_t i = 0; i < sizeof(inline_bad) / sizeof(inline_bad[0]); i++) {
		assert_int_equal(proc_maps_parse(inline_bad[i], strlen(inline_bad[i]), &m), -EINVAL);
		assert_null(m.v);
	}
	assert_int_equal(proc_maps_parse(nul_in_path, sizeof(nul_in_path) - 1, &m), -EINVAL);
	/* Empty text is a valid, empty table. */
	assert_int_equal(proc_maps_parse("", 0, &m), 0);
	assert_int_equal(m.n, 0);
	assert_null(proc_maps_find(&m, 0x1000));
	proc_maps_free(&m);
}

/* Every prefix of a valid text either parses or is rejected cleanly. */
static void test_every_prefix(void **state)
{
	size_t len;
	char *text = fixture_read("normal.maps", &len);

	for (size_t n = 0; n <= len; n++) {
		struct mt_maps m;
		int err = proc_maps_parse(text, n, &m);

		assert_true(err == 0 || err == -EINVAL);
		if (!err)
			assert_true(m.n <= 26);
		proc_maps_free(&m);
	}
	free(text);
}

static void test_self(void **state)
{
	struct mt_maps m;
	const struct mt_map *x;
	char exe[PATH_MAX];
	ssize_t r = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	assert_true(r > 0);
	exe[r] = '\0';
	assert_int_equal(proc_maps_read(getpid(), &m), 0);
	x = proc_maps_find(&m, (__u64)(unsigned long)&test_self);
	assert_non_null(x);
	assert_string_equal(x->path, exe);
	assert_true(strchr(x->perms, 'x'));
	x = proc_maps_find(&m, (__u64)(unsigned long)&x);
	assert_non_null(x);
	assert_string_equal(x->path, "[stack]");
	proc_maps_free(&m);
	/* A pid that cannot exist. */
	assert_int_equal(proc_maps_read(0x3fffffff, &m), -ESRCH);
	assert_int_equal(proc_maps_read(-1, &m), -EINVAL);
}

/* Only the mappings asked for, each once, equal to the text's lines for
 * them: a deleted memfd's name, the stack, this code, an address in no
 * mapping left out. A kernel without PROCMAP_QUERY says -ENOTTY. */
static void test_read_at(void **state)
{
	struct mt_maps all, some;
	int fd = memfd_create("mt-test", MFD_CLOEXEC);
	void *mem;
	__u64 at[5];
	size_t i;
	int e;

	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, 8192), 0);
	mem = mmap(NULL, 8192, PROT_READ, MAP_SHARED, fd, 0);
	assert_true(mem != MAP_FAILED);
	at[0] = (__u64)(unsigned long)&test_read_at;
	at[1] = (__u64)(unsigned long)&all;
	at[2] = (__u64)(unsigned long)mem + 4096;
	at[3] = (__u64)(unsigned long)&test_read_at + 1; /* the same mapping again */
	at[4] = 4096;                                    /* nothing is mapped at 4 KiB */
	e = proc_maps_read_at(getpid(), at, 5, &some);
	if (e == -ENOTTY) {
		munmap(mem, 8192);
		close(fd);
		skip();
	}
	assert_int_equal(e, 0);
	assert_int_equal(proc_maps_read(getpid(), &all), 0);
	assert_int_equal(some.n, 3);
	for (i = 0; i < some.n; i++) {
		const struct mt_map *x = &some.v[i], *y = proc_maps_find(&all, x->start);

		assert_non_null(y);
		assert_true(i == 0 || some.v[i - 1].start < x->start);
		assert_true(x->start == y->start && x->end == y->end && x->offset == y->offset);
		assert_true(x->inode == y->inode && x->dev_major == y->dev_major &&
			    x->dev_minor == y->dev_minor && x->deleted == y->deleted);
		assert_memory_equal(x->perms, y->perms, 4);
		assert_string_equal(x->path, y->path);
	}
	assert_string_equal(proc_maps_find(&some, at[2])->path, "/memfd:mt-test");
	assert_true(proc_maps_find(&some, at[2])->deleted);
	assert_null(proc_maps_find(&some, at[4]));
	proc_maps_free(&some);
	proc_maps_free(&all);
	assert_int_equal(proc_maps_read_at(0x3fffffff, at, 1, &some), -ESRCH);
	munmap(mem, 8192);
	close(fd);
}

/* More lines than PROC_MAPS_MAX_ENTRIES: the first ones kept, in order,
 * and the table said to be cut. */
static void test_entries_bounded(void **state)
{
	size_t n = PROC_MAPS_MAX_ENTRIES + 10, len = 0;
	char *text = malloc(n * 48);
	struct mt_maps m;

	assert_non_null(text);
	for (size_t i = 0; i < n; i++)
		len += (size_t)sprintf(text + len, "%zx-%zx r--p 00000000 00:00 0\n",
				       (i * 2 + 1) * 4096, (i * 2 + 2) * 4096);
	assert_int_equal(proc_maps_parse(text, len, &m), 0);
	assert_int_equal(m.n, PROC_MAPS_MAX_ENTRIES);
	assert_true(m.cut);
	assert_int_equal(m.v[m.n - 1].start, (PROC_MAPS_MAX_ENTRIES * 2 - 1) * 4096ULL);
	proc_maps_free(&m);
	/* the first three lines alone: not cut */
	len = (size_t)(strchr(strchr(strchr(text, '\n') + 1, '\n') + 1, '\n') + 1 - text);
	assert_int_equal(proc_maps_parse(text, len, &m), 0);
	assert_int_equal(m.n, 3);
	assert_false(m.cut);
	proc_maps_free(&m);
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_normal),    cmocka_unit_test(test_deleted_and_odd_paths),
		cmocka_unit_test(test_malformed), cmocka_unit_test(test_every_prefix),
		cmocka_unit_test(test_self),      cmocka_unit_test(test_entries_bounded),
		cmocka_unit_test(test_read_at),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

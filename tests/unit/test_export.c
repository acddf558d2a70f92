// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_export.c - file exports: numbered names for --output-every, the
 * atomic write (a failure, including a file-size limit hit half way,
 * leaves neither a partial file nor a temporary one, and a clear
 * message), and folded stacks of a real model.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "export/export.h"
#include "export/pprof.h"
#include "util/strpool.h"
#include "target_fixture.h"
#include "pbdec.h"

static char dir[] = "/tmp/memtop-test-export-XXXXXX";

static int setup(void **state)
{
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static int count_entries(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = '\0';
	fclose(f);
	*len = (size_t)n;
	return buf;
}

static void test_numbered_path(void **state)
{
	static const struct {
		const char *base;
		unsigned int n;
		const char *want;
	} cases[] = {
		{ "heap.pb.gz", 1, "heap.0001.pb.gz" },
		{ "/var/tmp/heap.pb.gz", 12, "/var/tmp/heap.0012.pb.gz" },
		{ "my.app.pb.gz", 3, "my.app.0003.pb.gz" },
		{ "out.folded", 7, "out.0007.folded" },
		{ "/tmp/a.b/prof", 2, "/tmp/a.b/prof.0002" },
		{ "/tmp/.prof", 2, "/tmp/.prof.0002" },
		{ "x.pb.gz", 123456, "x.123456.pb.gz" },
		{ ".pb.gz", 1, ".pb.0001.gz" }, /* a dot file with extension .gz */
	};
	char buf[64];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(export_numbered_path(cases[i].base, cases[i].n, buf, sizeof(buf)),
				 0);
		assert_string_equal(buf, cases[i].want);
	}
	assert_int_equal(export_numbered_path("heap.pb.gz", 1, buf, 15), -ENAMETOOLONG);
	assert_int_equal(export_numbered_path("heap.pb.gz", 1, buf, 16), 0);

	/* the names a series may take, for refusing another output there */
	assert_true(export_is_numbered("heap.pb.gz", "heap.0001.pb.gz"));
	assert_true(export_is_numbered("/t/out.folded", "/t/out.123456.folded"));
	assert_true(export_is_numbered("/t/prof", "/t/prof.0002"));
	assert_false(export_is_numbered("heap.pb.gz", "heap.001.pb.gz"));
	assert_false(export_is_numbered("heap.pb.gz", "heap.00a1.pb.gz"));
	assert_false(export_is_numbered("heap.pb.gz", "heap.0001.pb"));
	assert_false(export_is_numbered("heap.pb.gz", "heap.pb.gz"));
	assert_false(export_is_numbered("/t/prof", "/u/prof.0002"));
}

static mode_t current_umask(void)
{
	mode_t m = umask(0);

	umask(m);
	return m;
}

static void test_write_file(void **state)
{
	char path[256], err[256] = "";
	struct stat st;
	size_t len;
	char *back;

	snprintf(path, sizeof(path), "%s/out.txt", dir);
	assert_int_equal(export_write_file(path, "first", 5, err, sizeof(err)), 0);
	assert_int_equal(export_write_file(path, "second version", 14, err, sizeof(err)), 0);
	back = slurp(path, &len);
	assert_string_equal(back, "second version");
	free(back);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600 & ~current_umask()); /* util/out_file.h */
	assert_int_equal(count_entries(dir), 1);                      /* no temporary left */
	unlink(path);
}

static void test_write_errors(void **state)
{
	char path[256], err[256];

	/* a missing directory */
	snprintf(path, sizeof(path), "%s/no/such/dir/out.pb.gz", dir);
	assert_int_equal(export_write_file(path, "x", 1, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "cannot write "));
	assert_non_null(strstr(err, path));
	assert_non_null(strstr(err, strerror(ENOENT)));

	/* a directory where the file should go: the rename fails, the
	 * temporary file is removed */
	snprintf(path, sizeof(path), "%s/adir", dir);
	assert_int_equal(mkdir(path, 0755), 0);
	assert_int_equal(export_write_file(path, "x", 1, err, sizeof(err)), -EISDIR);
	assert_non_null(strstr(err, strerror(EISDIR)));
	assert_int_equal(count_entries(dir), 1);
	rmdir(path);

	assert_int_equal(export_write_file("", "x", 1, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "cannot write file: empty path");
}

static void test_check_path(void **state)
{
	char path[256], err[256] = "";

	snprintf(path, sizeof(path), "%s/checked.pb.gz", dir);
	assert_int_equal(export_check_path(path, err, sizeof(err)), 0);
	assert_int_equal(count_entries(dir), 0); /* checked, nothing created */
	snprintf(path, sizeof(path), "%s/none/checked.pb.gz", dir);
	assert_int_equal(export_check_path(path, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, path));
	assert_int_equal(export_check_path(dir, err, sizeof(err)), -EISDIR);
	assert_int_equal(export_check_path(NULL, err, sizeof(err)), -EINVAL);
}

/* A write that fails half way (a file-size limit stands in for a full
 * disk: both fail write(2) after some bytes went out) leaves the old file
 * untouched and no temporary file. */
static void test_write_fails_midway(void **state)
{
	char path[256], err[256];
	size_t big = 1 << 20, len;
	char *data = malloc(big), *back;
	pid_t pid;
	int status;

	assert_non_null(data);
	memset(data, 'z', big);
	snprintf(path, sizeof(path), "%s/keep.pb.gz", dir);
	assert_int_equal(export_write_file(path, "old", 3, err, sizeof(err)), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		struct rlimit rl = { 64 * 1024, 64 * 1024 };
		int rc;

		signal(SIGXFSZ, SIG_IGN);
		setrlimit(RLIMIT_FSIZE, &rl);
		rc = export_write_file(path, data, big, err, sizeof(err));
		_exit(rc == -EFBIG && strstr(err, strerror(EFBIG)) ? 0 : 1);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	back = slurp(path, &len);
	assert_string_equal(back, "old");
	assert_int_equal(count_entries(dir), 1);
	free(back);
	free(data);
	unlink(path);
}

/* ==== folded stacks and pprof files of a model ======================== */

static struct mt_frame frame(const char *fn, const char *module, __u64 addr, __u32 flags)
{
	struct mt_frame f = {
		.addr = addr,
		.rel_addr = addr & 0xffff,
		.function = strpool_intern(fn),
		.module = strpool_intern(module),
		.module_path = strpool_intern(module),
		.flags = flags,
	};

	return f;
}

static void alloc(struct mt_model *m, pid_t pid, __u64 addr, __u64 size, const struct mt_frame *f,
		  __u32 n, bool truncated)
{
	struct mt_sample_in in = {
		.pid = pid,
		.ts_ns = 1,
		.addr = addr,
		.size = size,
		.frames = f,
		.nframes = n,
		.truncated = truncated,
	};

	assert_int_equal(model_apply(m, MT_INPUT_ALLOC(&in)), 0);
}

static struct mt_model *folded_model(bool two_targets)
{
	struct mt_model_opts o = { .rate = 1, .group = MT_GROUP_STACK };
	struct mt_model *m = model_new(&o);
	const struct mt_frame a[] = {
		frame("malloc", "libc.so.6", 0x7f0000001000, 0),
		frame("inl;ined", "app", 0x401000, MT_FRAME_INLINED),
		frame("leak_site", "app", 0x401000, 0),
		frame("main", "app", 0x402000, 0),
	};
	/* the same functions at other addresses fold into the same line */
	const struct mt_frame b[] = {
		frame("malloc", "libc.so.6", 0x7f0000001000, 0),
		frame("inl;ined", "app", 0x401010, MT_FRAME_INLINED),
		frame("leak_site", "app", 0x401010, 0),
		frame("main", "app", 0x402010, 0),
	};
	const struct mt_frame c[] = {
		frame("malloc", "libc.so.6", 0x7f0000001000, 0),
		frame(NULL, "libfoo.so", 0x7f0000101234, MT_FRAME_NOSYM),
	};
	struct mt_target *t;

	assert_non_null(m);
	t = test_target(m, 10);
	snprintf(t->comm, sizeof(t->comm), "app");
	alloc(m, 10, 0x1000, 1000, a, 4, false);
	alloc(m, 10, 0x2000, 24, b, 4, false);
	alloc(m, 10, 0x3000, 500, c, 2, true);
	alloc(m, 10, 0x4000, 77, a + 2, 2, false); /* freed below: no line */
	model_apply(m, MT_INPUT_FREE(10, 0x4000, 2));
	if (two_targets) {
		t = test_target(m, 20);
		snprintf(t->comm, sizeof(t->comm), "two");
		alloc(m, 20, 0x1000, 5, a, 4, false);
	}
	model_apply(m, MT_INPUT_TICK(1000000000ULL));
	return m;
}

static void test_folded(void **state)
{
	struct mt_model *m = folded_model(false);
	char *out;
	size_t len;

	assert_int_equal(export_folded_buf(m, &out, &len), 0);
	assert_int_equal(len, strlen(out));
	assert_string_equal(out, "[truncated];libfoo.so+0x1234 500\n"
				 "main;leak_site;inl_ined 1024\n");
	free(out);
	model_free(m);

	m = folded_model(true);
	assert_int_equal(export_folded_buf(m, &out, &len), 0);
	assert_string_equal(out, "app-10;[truncated];libfoo.so+0x1234 500\n"
				 "app-10;main;leak_site;inl_ined 1024\n"
				 "two-20;main;leak_site;inl_ined 5\n");
	free(out);
	model_free(m);
}

/* Folded stacks are text for a terminal as much as for flamegraph.pl: a
 * target's escape sequences, newlines and invalid bytes in its comm or
 * function names come out as '?', ';' as '_'. */
static void test_folded_sanitized(void **state)
{
	struct mt_model_opts o = { .rate = 1, .group = MT_GROUP_STACK };
	struct mt_model *m = model_new(&o);
	const struct mt_frame a[] = {
		frame("malloc", "libc.so.6", 0x7f0000001000, 0),
		frame("evil\x1b]0;PWN\a\x1b[2J", "app", 0x401000, 0),
		frame("new\nline\r\t\x7f\xc2\x9b\xff caf\xc3\xa9", "app", 0x402000, 0),
	};
	struct mt_target *t;
	char *out;
	size_t len;

	(void)state;
	assert_non_null(m);
	t = test_target(m, 10);
	snprintf(t->comm, sizeof(t->comm), "ev\x1b[31m");
	alloc(m, 10, 0x1000, 64, a, 3, false);
	t = test_target(m, 20);
	snprintf(t->comm, sizeof(t->comm), "ok");
	alloc(m, 20, 0x1000, 8, a, 3, false);
	model_apply(m, MT_INPUT_TICK(1000000000ULL));
	assert_int_equal(export_folded_buf(m, &out, &len), 0);
	assert_string_equal(out, "ev?[31m-10;new?line????? caf\xc3\xa9;evil?]0_PWN??[2J 64\n"
				 "ok-20;new?line????? caf\xc3\xa9;evil?]0_PWN??[2J 8\n");
	for (size_t i = 0; i < len; i++)
		assert_true((unsigned char)out[i] >= 0x20 || out[i] == '\n');
	free(out);
	model_free(m);
}

static void test_folded_empty(void **state)
{
	struct mt_model_opts o = { .rate = 1 };
	struct mt_model *m = model_new(&o);
	char path[256], err[256], *out;
	size_t len;

	assert_non_null(m);
	assert_int_equal(export_folded_buf(m, &out, &len), 0);
	assert_int_equal(len, 0);
	assert_string_equal(out, "");
	free(out);
	snprintf(path, sizeof(path), "%s/empty.folded", dir);
	assert_int_equal(export_folded_file(m, path, err, sizeof(err)), 0);
	out = slurp(path, &len);
	assert_int_equal(len, 0);
	free(out);
	unlink(path);
	model_free(m);
}

static void test_pprof_file(void **state)
{
	struct mt_model *m = folded_model(true);
	char path[256], err[256];
	uint8_t *raw = NULL;
	size_t len, rawlen = 0;
	__u8 *buf = NULL;
	char *gz;

	snprintf(path, sizeof(path), "%s/heap.pb.gz", dir);
	assert_int_equal(export_pprof_file(m, path, err, sizeof(err)), 0);
	gz = slurp(path, &len);
	assert_int_equal(pbdec_gunzip(gz, len, &raw, &rawlen), 0);
	assert_true(rawlen > 100);
	free(raw);
	/* the file holds exactly what export_pprof_buf() encodes, apart
	 * from time_nanos: compare the decoded sizes */
	assert_int_equal(export_pprof_buf(m, &buf, &len), 0);
	assert_int_equal(pbdec_gunzip(buf, len, &raw, &len), 0);
	assert_int_equal(len, rawlen);
	free(raw);
	free(buf);
	free(gz);
	unlink(path);

	snprintf(path, sizeof(path), "%s/missing/heap.pb.gz", dir);
	assert_int_equal(export_pprof_file(m, path, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, path));
	assert_int_equal(export_folded_file(m, path, err, sizeof(err)), -ENOENT);
	assert_int_equal(count_entries(dir), 0);
	model_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_numbered_path),    cmocka_unit_test(test_write_file),
		cmocka_unit_test(test_write_errors),     cmocka_unit_test(test_write_fails_midway),
		cmocka_unit_test(test_folded),           cmocka_unit_test(test_folded_empty),
		cmocka_unit_test(test_folded_sanitized), cmocka_unit_test(test_pprof_file),
		cmocka_unit_test(test_check_path),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_cgroup.c - resolving --cgroup identifiers in a cgroup-like tree the
 * test builds in a temporary directory: pod UIDs under the systemd and the
 * cgroupfs drivers' layouts, container IDs of three runtimes, cgroup ids
 * (inode numbers), ambiguity, unknown names; and listing the processes of
 * a subtree from cgroup.procs files.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "probe/cgroup.h"

static char root[256]; /* a mkdtemp path: short, so every path below fits */

#define SYSTEMD_POD \
	"kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1234abcd_5678_90ef_1234_567890abcdef.slice"
#define CONTAINERD SYSTEMD_POD "/cri-containerd-0123456789abcdef0123456789abcdef.scope"
#define CGROUPFS_POD "kubepods/besteffort/pod1111aaaa-2222-3333-4444-555566667777"
#define CGROUPFS_CTR CGROUPFS_POD "/fedcba9876543210fedcba9876543210"
#define DOCKER "system.slice/docker-abcdefabcdef0000111122223333.scope"
#define CRIO "machine.slice/crio-abcdefabcdef9999888877776666.scope"

static void mkdirs(const char *rel)
{
	char path[2 * PATH_MAX], *p;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (p = path + strlen(root) + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		mkdir(path, 0755);
		*p = '/';
	}
	mkdir(path, 0755);
}

static void write_procs(const char *rel, const char *text)
{
	char path[2 * PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s/cgroup.procs", root, rel);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static int setup(void **state)
{
	snprintf(root, sizeof(root), "/tmp/memtop-cgroup-test-XXXXXX");
	if (!mkdtemp(root))
		return -1;
	mkdirs(CONTAINERD);
	mkdirs(CGROUPFS_CTR);
	mkdirs(DOCKER);
	mkdirs(CRIO);
	write_procs("", "1\n");
	write_procs(SYSTEMD_POD, "");
	write_procs(CONTAINERD, "42\n17\n42\n");
	write_procs(CGROUPFS_POD, "5\n");
	write_procs(CGROUPFS_CTR, "9\n3\n");
	return 0;
}

static int teardown(void **state)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd) == 0 ? 0 : -1;
}

static void expect(const char *spec, const char *rel)
{
	char out[PATH_MAX], err[512] = "", want[PATH_MAX];

	snprintf(want, sizeof(want), "%s/%s", root, rel);
	assert_int_equal(cgroup_resolve(root, spec, out, sizeof(out), err, sizeof(err)), 0);
	assert_string_equal(out, want);
}

static void test_pod_uid_systemd_driver(void **state)
{
	/* users paste the UID with dashes; the slice name has underscores */
	expect("1234abcd-5678-90ef-1234-567890abcdef", SYSTEMD_POD);
	expect("1234ABCD-5678-90EF-1234-567890ABCDEF", SYSTEMD_POD);
}

static void test_pod_uid_cgroupfs_driver(void **state)
{
	expect("1111aaaa-2222-3333-4444-555566667777", CGROUPFS_POD);
}

static void test_container_ids(void **state)
{
	expect("0123456789abcdef0123456789abcdef", CONTAINERD);
	expect("0123456789ab", CONTAINERD); /* a 12-character short id */
	expect("fedcba9876543210fedcba9876543210", CGROUPFS_CTR);
	expect("abcdefabcdef0000", DOCKER);
	expect("abcdefabcdef9999", CRIO);
}

static void test_plain_name_and_cgroup_id(void **state)
{
	char path[2 * PATH_MAX], spec[32];
	struct stat st;

	expect("system.slice", "system.slice");
	snprintf(path, sizeof(path), "%s/%s", root, CGROUPFS_CTR);
	assert_int_equal(stat(path, &st), 0);
	snprintf(spec, sizeof(spec), "%llu", (unsigned long long)st.st_ino);
	expect(spec, CGROUPFS_CTR);
}

static void test_ambiguous_and_unknown(void **state)
{
	char out[PATH_MAX], err[512];

	assert_int_equal(cgroup_resolve(root, "abcdefabcdef", out, sizeof(out), err, sizeof(err)),
			 -EEXIST);
	assert_non_null(strstr(err, "ambiguous"));
	assert_non_null(strstr(err, "docker-abcdefabcdef"));
	assert_non_null(strstr(err, "crio-abcdefabcdef"));

	assert_int_equal(cgroup_resolve(root, "99999999-0000-0000-0000-000000000000", out,
					sizeof(out), err, sizeof(err)),
			 -ENOENT);
	assert_non_null(strstr(err, "no cgroup matches"));
	assert_int_equal(cgroup_resolve(root, "", out, sizeof(out), err, sizeof(err)), -EINVAL);
}

static void test_pids_of_subtree(void **state)
{
	char dir[PATH_MAX];
	pid_t *pids;
	int n;

	snprintf(dir, sizeof(dir), "%s/%s", root, CGROUPFS_POD);
	n = cgroup_pids(dir, &pids);
	assert_int_equal(n, 3);
	assert_int_equal(pids[0], 3);
	assert_int_equal(pids[1], 5);
	assert_int_equal(pids[2], 9);
	free(pids);
	snprintf(dir, sizeof(dir), "%s/%s", root, SYSTEMD_POD);
	n = cgroup_pids(dir, &pids);
	assert_int_equal(n, 2); /* 17 and 42, once each */
	assert_int_equal(pids[0], 17);
	assert_int_equal(pids[1], 42);
	free(pids);
	snprintf(dir, sizeof(dir), "%s/no-such", root);
	assert_true(cgroup_pids(dir, &pids) < 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pod_uid_systemd_driver),
		cmocka_unit_test(test_pod_uid_cgroupfs_driver),
		cmocka_unit_test(test_container_ids),
		cmocka_unit_test(test_plain_name_and_cgroup_id),
		cmocka_unit_test(test_ambiguous_and_unknown),
		cmocka_unit_test(test_pids_of_subtree),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_host_caps.c - what the host lets memtop do (probe/host_caps.h):
 * kernel releases compared as major.minor, whatever follows; a release
 * that does not start with two numbers is not "at least"; and this
 * process's privileges read as root has them (the unit tests run as root
 * in CI; as another user, the answer must match CapEff).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <unistd.h>
#include <cmocka.h>

#include "probe/host_caps.h"

static void test_release(void **state)
{
	(void)state;
	assert_true(host_release_at_least("6.13.0", 6, 13));
	assert_true(host_release_at_least("6.18.0-1-amd64", 6, 13));
	assert_true(host_release_at_least("7.0", 6, 13));
	assert_false(host_release_at_least("6.12.48+deb13-amd64", 6, 13));
	assert_false(host_release_at_least("5.19", 6, 13));
	assert_false(host_release_at_least("6", 6, 0));
	assert_false(host_release_at_least("linux", 6, 0));
	assert_false(host_release_at_least("", 6, 0));
}

static void test_privileges(void **state)
{
	char line[256];
	unsigned long long eff = 0;
	FILE *f = fopen("/proc/self/status", "re");

	(void)state;
	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &eff) == 1)
			break;
	fclose(f);
	assert_int_equal(host_has_bpf_privileges(),
			 (eff >> 21 & 1) || ((eff >> 39 & 1) && (eff >> 38 & 1)));
	if (geteuid() == 0)
		assert_true(host_has_bpf_privileges());
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_release),
		cmocka_unit_test(test_privileges),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * host_caps.c - what this host lets memtop do (host_caps.h): the kernel's
 * release from uname(2), the effective capabilities from
 * /proc/self/status.
 */
#include "probe/host_caps.h"

#include <stdio.h>
#include <unistd.h>
#include <sys/utsname.h>

#define CAP_SYS_ADMIN_BIT 21
#define CAP_PERFMON_BIT 38
#define CAP_BPF_BIT 39

bool host_release_at_least(const char *release, int major, int minor)
{
	int ma = 0, mi = 0;

	if (sscanf(release, "%d.%d", &ma, &mi) != 2)
		return false;
	return ma > major || (ma == major && mi >= minor);
}

bool host_has_uprobe_session(void)
{
	struct utsname u;

	return !uname(&u) && host_release_at_least(u.release, 6, 13);
}

bool host_has_bpf_privileges(void)
{
	char line[256];
	unsigned long long eff = 0;
	bool found = false;
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return geteuid() == 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &eff) == 1) {
			found = true;
			break;
		}
	fclose(f);
	if (!found)
		return geteuid() == 0;
	return (eff >> CAP_SYS_ADMIN_BIT & 1) ||
	       ((eff >> CAP_BPF_BIT & 1) && (eff >> CAP_PERFMON_BIT & 1));
}

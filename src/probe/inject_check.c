// SPDX-License-Identifier: GPL-2.0-only
/*
 * inject_check.c - the refusals of --inject (inject_check.h), each one
 * line, all read from /proc and from the process's files before memtop
 * touches the process.
 *
 * - State T/t in /proc/PID/status: a stopped process would be resumed by
 *   the ptrace stop memtop needs (or never answer it).
 * - TracerPid not 0: a debugger (or another tool) holds it; ptrace allows
 *   one tracer.
 * - Seccomp not 0: a filter may kill the process for the system calls
 *   memtop makes it run (memfd_create, mmap, mprotect).
 * - /proc/sys/kernel/yama/ptrace_scope = 3: no process may be traced.
 * - The executable has no PT_INTERP, or no ld-linux mapping: no glibc
 *   dynamic loader, so no link map and no GOTs to reroute.
 * - The C library mapped is not glibc's libc.so.6 exporting
 *   gnu_get_libc_version and __libc_malloc (read from the mapped file
 *   itself, target_file.h, never from its path, which the process may
 *   have pointed anywhere since), or the executable is not
 *   x86-64: the GOT layout and the register conventions memtop relies on
 *   are those of glibc on x86-64.
 */
#include "probe/inject_check.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "readers/elf_file.h"
#include "readers/proc_maps.h"
#include "readers/target_file.h"

static int read_file(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return errno ? -errno : -EIO;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return errno ? -errno : -EIO;
	buf[n] = '\0';
	return 0;
}

/* The value after "Key:" in /proc/PID/status, or NULL. */
static const char *status_field(const char *status, const char *key)
{
	size_t k = strlen(key);
	const char *p = status;

	while (p && *p) {
		if (!strncmp(p, key, k) && p[k] == ':') {
			p += k + 1;
			while (*p == ' ' || *p == '\t')
				p++;
			return p;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return NULL;
}

static int check_status(pid_t pid, char *err, size_t errlen, const char **why)
{
	char path[64], status[4096] = "";
	const char *v;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	if (read_file(path, status, sizeof(status))) {
		snprintf(err, errlen, "no process with PID %d", pid);
		*why = "it exited";
		return -ESRCH;
	}
	v = status_field(status, "State");
	if (v && (*v == 'T' || *v == 't')) {
		snprintf(err, errlen,
			 "PID %d is stopped (State %c): not injecting into a stopped process", pid,
			 *v);
		*why = "process stopped";
		return -EBUSY;
	}
	v = status_field(status, "TracerPid");
	if (v && atoi(v)) {
		snprintf(err, errlen, "PID %d is already traced by PID %d: not injecting", pid,
			 atoi(v));
		*why = "already traced";
		return -EBUSY;
	}
	v = status_field(status, "Seccomp");
	if (v && atoi(v)) {
		snprintf(err, errlen,
			 "PID %d runs under a seccomp %s: the system calls injection needs could kill it",
			 pid, atoi(v) == 1 ? "strict mode" : "filter");
		*why = "seccomp";
		return -EPERM;
	}
	return 0;
}

static int check_yama(pid_t pid, char *err, size_t errlen, const char **why)
{
	char buf[16];

	if (read_file("/proc/sys/kernel/yama/ptrace_scope", buf, sizeof(buf)))
		return 0; /* no Yama */
	if (atoi(buf) >= 3) {
		snprintf(err, errlen,
			 "PID %d: Yama ptrace_scope is 3 (no process may be traced): cannot inject",
			 pid);
		*why = "ptrace refused: yama scope 3";
		return -EPERM;
	}
	return 0;
}

static int check_exe(pid_t pid, char *err, size_t errlen, const char **why)
{
	char path[64];
	Elf64_Ehdr eh;
	struct elf_file *ef;
	bool dynamic;

	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	ef = elf_file_open(path);
	if (!ef) {
		snprintf(err, errlen, "PID %d: cannot read its executable: %s", pid, strerror(errno));
		*why = "executable unreadable";
		return -errno;
	}
	dynamic = elf_file_is_dynamic(ef);
	if (elf_file_read(ef, 0, &eh, sizeof(eh)) || eh.e_machine != EM_X86_64) {
		elf_file_close(ef);
		snprintf(err, errlen,
			 "PID %d is not an x86-64 program: --inject supports x86-64 only", pid);
		*why = "not x86-64";
		return -ENOTSUP;
	}
	elf_file_close(ef);
	if (!dynamic) {
		snprintf(err, errlen,
			 "PID %d is a static executable: no dynamic loader, no GOT to reroute", pid);
		*why = "static binary";
		return -ENOTSUP;
	}
	return 0;
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

static bool is_glibc_name(const char *path)
{
	const char *b = base_name(path);

	return !strncmp(b, "libc.so", 7) || (!strncmp(b, "libc-", 5) && strstr(b, ".so"));
}

static int check_libc(pid_t pid, char *libc, size_t libclen, char *err, size_t errlen,
		      const char **why)
{
	struct mt_maps maps;
	const struct mt_map *cm = NULL;
	const char *c = NULL, *ld = NULL, *musl = NULL;
	struct elf_file *ef;
	__u64 off, size;
	size_t i;
	int e = proc_maps_read(pid, &maps);

	if (e) {
		snprintf(err, errlen, "cannot read the memory map of PID %d: %s", pid, strerror(-e));
		*why = "maps unreadable";
		return e;
	}
	for (i = 0; i < maps.n; i++) {
		const char *p = maps.v[i].path;

		if (!p || p[0] != '/')
			continue;
		if (!c && is_glibc_name(p)) {
			c = p;
			cm = &maps.v[i];
		}
		if (!ld && !strncmp(base_name(p), "ld-linux", 8))
			ld = p;
		if (!musl && strstr(base_name(p), "musl"))
			musl = p;
	}
	e = 0;
	if (!ld || !c) {
		snprintf(err, errlen, "PID %d has no glibc dynamic loader mapped%s%s: cannot inject",
			 pid, musl ? " (it uses " : "", musl ? "musl)" : "");
		*why = musl ? "musl" : "no glibc loader";
		e = -ENOTSUP;
	} else {
		/* the mapped file itself, never its name resolved again: the
		 * process may have put a symlink to any host file there */
		int fd = target_file_open_map(pid, cm);

		ef = fd >= 0 ? elf_file_open_fd(fd, c) : NULL;
		if (!ef || elf_file_func_offset(ef, "gnu_get_libc_version", &off, &size) ||
		    elf_file_func_offset(ef, "__libc_malloc", &off, &size)) {
			snprintf(err, errlen,
				 "PID %d: %s is not a glibc memtop knows: cannot inject", pid, c);
			*why = "unknown C library";
			e = -ENOTSUP;
		} else {
			snprintf(libc, libclen, "%s", c);
		}
		if (ef)
			elf_file_close(ef);
	}
	proc_maps_free(&maps);
	return e;
}

int inject_check(pid_t pid, char *libc, size_t libclen, char *err, size_t errlen, const char **why)
{
	int e = check_status(pid, err, errlen, why);

	if (!e)
		e = check_yama(pid, err, errlen, why);
	if (!e)
		e = check_exe(pid, err, errlen, why);
	if (!e)
		e = check_libc(pid, libc, libclen, err, errlen, why);
	return e;
}

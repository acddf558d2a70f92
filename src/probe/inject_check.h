/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * inject_check.h - whether memtop may inject its sampler into a process:
 * every reason to refuse, checked from /proc before anything is done to
 * the process (docs/inject.md lists them).
 */
#ifndef MEMTOP_PROBE_INJECT_CHECK_H
#define MEMTOP_PROBE_INJECT_CHECK_H

#include <stddef.h>
#include <sys/types.h>

/* 0 when pid can be injected, with the path of its glibc (as in its maps)
 * in libc; else -errno, one line in err saying why not, and *why the
 * reason in a few words ("static binary"): a stopped process, a tracer
 * already attached, a seccomp filter, Yama ptrace_scope 3, a static
 * executable, no glibc dynamic loader, a C library that is not a known
 * glibc, not x86-64. */
int inject_check(pid_t pid, char *libc, size_t libclen, char *err, size_t errlen, const char **why);

#endif /* MEMTOP_PROBE_INJECT_CHECK_H */

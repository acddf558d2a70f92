/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * host_caps.h - what this host lets memtop do, asked before anything is
 * loaded: whether its kernel has uprobe sessions (Linux 6.13), and
 * whether memtop runs with the privileges BPF and uprobes need.
 */
#ifndef MEMTOP_HOST_CAPS_H
#define MEMTOP_HOST_CAPS_H

#include <stdbool.h>

/* A kernel release string ("6.18.0-1-amd64") is major.minor or later;
 * false when it does not start with two numbers. */
bool host_release_at_least(const char *release, int major, int minor);

/* This kernel has uprobe sessions (Linux 6.13; uname(2)). */
bool host_has_uprobe_session(void);

/* Root, or CAP_BPF with CAP_PERFMON (or CAP_SYS_ADMIN), from CapEff in
 * /proc/self/status (without it: the effective uid is 0). */
bool host_has_bpf_privileges(void);

#endif /* MEMTOP_HOST_CAPS_H */

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * go_attach.h - the entry uprobes of one Go process's sampled allocation
 * path (go_runtime.h says where; bpf/go.bpf.h what they do). Per PID,
 * never system-wide; no return probes (Go moves goroutine stacks).
 */
#ifndef MEMTOP_PROBE_GO_ATTACH_H
#define MEMTOP_PROBE_GO_ATTACH_H

#include <stddef.h>
#include <sys/types.h>

#include "probe/attach.h"
#include "probe/bpf_loader.h"
#include "probe/go_runtime.h"

struct go_probes;

/* Attach the three probes of gt to pid's executable exe_path (a path the
 * kernel can open, e.g. /proc/PID/exe; for a command held before its
 * exec, the file it will exec). info describes them. The BPF side learns
 * where pid's MemProfileRate is from bpf_loader_set_go(). NULL with errno
 * set and one line in err; nothing stays attached then. */
struct go_probes *go_attach(struct mt_bpf *b, pid_t pid, const char *exe_path,
			    const struct go_target *gt, struct attach_info *info, char *err,
			    size_t errlen);
void go_detach(struct go_probes *gp);

#endif /* MEMTOP_PROBE_GO_ATTACH_H */

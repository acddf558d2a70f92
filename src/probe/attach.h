/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * attach.h - the probe table turned into per-process links: which
 * allocator functions are probed, where in each function, and in which
 * mode (uprobe session, or entry uprobe + uretprobe). Never system-wide:
 * every link names one pid.
 */
#ifndef MEMTOP_ATTACH_H
#define MEMTOP_ATTACH_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "probe/bpf_loader.h"

struct mt_probe_set;
struct allocator;

enum mt_attach_mode {
	MT_ATTACH_SESSION = 0, /* uprobe_multi session: return trap only when sampled */
	MT_ATTACH_URETPROBE,   /* entry uprobe + uretprobe on every call */
	MT_ATTACH_USDT,        /* the process samples itself: otel_memory USDT probes */
	MT_ATTACH_GO,          /* the Go runtime samples itself: probes on its
				 * sampled path (probe/go_attach.h) */
};

struct attach_info {
	enum mt_attach_mode mode;
	int nprobes;        /* functions probed */
	int nslow;          /* of those, probes the kernel single-steps */
	char detail[512];   /* "malloc@entry free@+3 ..." */
	char allocator[16]; /* "glibc", "jemalloc", "tcmalloc", "usdt", "go"; "glibc+jemalloc"
			     * with a prefixed allocator beside (attach_info_merge) */
};

/* Attach alloc's probe table (allocators.h; C names with prefix) to
 * pid's allocator library lib_path (a path memtop can open, e.g. under
 * /proc/PID/root). Tries a session link when want_session and the session
 * program is loaded, else uretprobes. NULL with errno set and one line in
 * err; nothing stays attached then. */
struct mt_probe_set *attach_target(struct mt_bpf *b, pid_t pid, const char *lib_path,
				   const struct allocator *alloc, const char *prefix,
				   bool want_session, struct attach_info *info, char *err,
				   size_t errlen);
void attach_detach(struct mt_probe_set *ps);
/* Once a refresh: for a command attached before its exec, look again for
 * where its allocator frees at a thread's exit (probe/exit_frees.h),
 * which its free probes leave out once found; a few refreshes at most.
 * Nothing for any other set. */
void attach_exit_frees(struct mt_probe_set *ps);

/* Attach to the otel_memory:alloc/free USDT probes of sampler_path (an
 * ELF file pid maps, or will map, e.g. the in-process sampler). NULL with
 * errno set and one line in err. */
struct mt_probe_set *attach_usdt(struct mt_bpf *b, pid_t pid, const char *sampler_path,
				 struct attach_info *info, char *err, size_t errlen);

/* Switch the allocation probes off or back on (free() stays probed), for
 * the overhead budget, in ps and every set chained to it. 0 or -errno. */
int attach_set_allocs(struct mt_probe_set *ps, bool on);
/* Switch free() and realloc() off or back on, likewise: only for the
 * start-up cost measure, while nothing is sampled (bpf_loader.h
 * count_only). 0 or -errno. */
int attach_set_frees(struct mt_probe_set *ps, bool on);

/* Chain next (another allocator of the same process, e.g. a je_-prefixed
 * jemalloc beside glibc's malloc) to ps: attach_set_allocs() and
 * attach_detach() of ps then act on both. */
void attach_chain(struct mt_probe_set *ps, struct mt_probe_set *next);

/* Add what more says (another allocator of the process, with its C-name
 * prefix) to info: probe counts summed, "glibc+jemalloc", details
 * appended. */
void attach_info_merge(struct attach_info *info, const struct attach_info *more, const char *prefix);

const char *attach_mode_name(enum mt_attach_mode mode);

/* Attach the entry program, with cookie fn, to the function at runtime
 * address addr in memtop's own executable (for calibration). NULL with
 * errno set. Detach with attach_detach(). */
struct mt_probe_set *attach_self(struct mt_bpf *b, const void *addr, __u32 fn);

#endif /* MEMTOP_ATTACH_H */

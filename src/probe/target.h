/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * target.h - the processes memtop watches: checking a PID is a user
 * process, finding the allocator library it uses, launching a command
 * held at the starting line until its probes are attached, and reading
 * /proc for comm, RSS and liveness.
 */
#ifndef MEMTOP_TARGET_H
#define MEMTOP_TARGET_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <linux/types.h>

/* Validate pid (exists, not a kernel thread, not memtop itself) and read
 * its comm. 0, or -errno with one line in err. */
int target_check(pid_t pid, char comm[16], char *err, size_t errlen);

/* Resolve argv0 like execvp would, into out. 0 or -errno. */
int target_find_exe(const char *argv0, char *out, size_t len);

/* A command started by memtop, stopped before exec until target_release. */
struct launched {
	pid_t pid;
	int go_fd;               /* write a byte to let it exec */
	int err_fd;              /* exec failure: errno arrives here; EOF means exec worked */
	char log_path[PATH_MAX]; /* where its stdout and stderr go (cmd_log.h) */
	bool log_created;        /* ... a file memtop made: removed if the exec fails */
};

/* Fork argv[0] (searched in PATH) held before exec. The allocator path is
 * the glibc memtop itself uses: the command will map the same file. With
 * preload, the command runs with that library added to LD_PRELOAD (last) and
 * MEMTOP_SAMPLE_RATE set to sample_rate. It leads a session and process
 * group of its own (numbered with its pid). Its stdout and stderr are out_fd
 * (-1: memtop's), its stdin /dev/null when null_stdin (the TUI reads the
 * terminal). A static executable is refused unless static_ok (a Go
 * program, watched through its runtime). 0, or -errno with one line in
 * err (not found, not executable, static). */
int target_launch(char **argv, const char *preload, __u64 sample_rate, int out_fd, bool null_stdin,
		  bool static_ok, struct launched *l, char *alloc_path, size_t pathlen, char *err,
		  size_t errlen);
/* Let the command exec. 0, or -errno with one line in err if exec failed
 * (the child is reaped then). */
int target_release(struct launched *l, char *err, size_t errlen);

/* Resident set size in bytes; 0 when unknown. */
__u64 target_rss(pid_t pid);

/* The program break of pid, as near as /proc tells it: the end of its
 * [heap] mapping (the break rounded up to a page), or the heap's start
 * (/proc/PID/stat's start_brk) while it has none. 0 or -errno. */
int target_brk(pid_t pid, __u64 *brk);
/* CPU time (user + system, all threads) the process has used, in
 * nanoseconds, from its CPU clock (clock_getcpuclockid), else from
 * /proc/PID/stat in clock ticks; 0 when unknown. Probe traps run in the
 * process's context and are charged to it. */
__u64 target_cpu_ns(pid_t pid);
/* Whether pid still exists (a zombie counts as gone). */
bool target_alive(pid_t pid);

/* The value of name in the environment pid started with
 * (/proc/PID/environ, its first 64 KiB) into out; false when it has none
 * or it does not fit. */
bool target_env_get(pid_t pid, const char *name, char *out, size_t len);
/* Did pid start with name=value in its environment? */
bool target_env_is(pid_t pid, const char *name, const char *value);
/* The process group of a live pid (not a zombie). 0, or -ESRCH. */
int target_group(pid_t pid, pid_t *pgrp);

/* Which process, and which program in it: a PID alone is reused once its
 * process is gone, and stays the same across an exec. */
struct target_id {
	__u64 start_ticks;      /* /proc/PID/stat starttime: boot-relative, never reused */
	__u64 start_stack;      /* startstack: new (ASLR) at every exec */
	__u64 exe_dev, exe_ino; /* the executable */
};

enum target_change { TARGET_SAME, TARGET_GONE, TARGET_EXECED };

/* When the process of id started, on CLOCK_MONOTONIC (to the kernel's
 * clock tick, 10 ms; a host that slept since reads it later than it was). */
__u64 target_started_mono_ns(const struct target_id *id);

/* pid's identity now. 0 or -errno (-ESRCH when gone). */
int target_identity(pid_t pid, struct target_id *id);
/* Is pid still the process, and the program, of was? TARGET_GONE when it
 * exited or its PID now belongs to another process (another start time);
 * TARGET_EXECED when it runs another program (executable or stack moved),
 * with *was updated to the new program. */
enum target_change target_compare(pid_t pid, struct target_id *was);

/* memtop inside a PID namespace sees PIDs the kernel's probes do not
 * (they report host tgids): refused with one line in err. 0 or -ENOTSUP. */
int target_check_pid_namespace(char *err, size_t errlen);

#endif /* MEMTOP_TARGET_H */

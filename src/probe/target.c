// SPDX-License-Identifier: GPL-2.0-only
/*
 * target.c - what memtop needs to know about a process before and while
 * probing it, all read from /proc.
 */
#include "probe/target.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "readers/elf_file.h"
#include "readers/proc_maps.h"
#include "util/clock.h"

#define PF_KTHREAD 0x00200000

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

static bool is_glibc_name(const char *path)
{
	const char *b = base_name(path);

	return !strncmp(b, "libc.so", 7) || (!strncmp(b, "libc-", 5) && strstr(b, ".so"));
}

/* Read a small /proc file into buf (NUL-terminated). Bytes read or -errno. */
static ssize_t read_proc(pid_t pid, const char *what, char *buf, size_t len)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/%s", pid, what);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return n;
}

/* Field 9 (flags) of /proc/PID/stat, after the parenthesised comm. */
static int stat_flags(pid_t pid, unsigned long *flags, char *state)
{
	char buf[1024], *p;
	ssize_t n = read_proc(pid, "stat", buf, sizeof(buf));

	if (n < 0)
		return (int)n;
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 2, "%c %*d %*d %*d %*d %*d %lu", state, flags) != 2)
		return -EINVAL;
	return 0;
}

/* The thread group (process) pid belongs to: the Tgid: of
 * /proc/PID/status, pid itself for a process, its leader's for one of its
 * other threads (whose /proc/TID reads like a process's). 0 when unknown. */
static pid_t thread_group(pid_t pid)
{
	char buf[1024];
	const char *t;
	int tgid;

	if (read_proc(pid, "status", buf, sizeof(buf)) <= 0)
		return 0;
	t = strstr(buf, "\nTgid:");
	return t && sscanf(t + 6, "%d", &tgid) == 1 ? tgid : 0;
}

/* comm of pid into comm[16]: "?" when it cannot be read. */
static void read_comm(pid_t pid, char comm[16])
{
	ssize_t n = read_proc(pid, "comm", comm, 16);

	if (n <= 0)
		strcpy(comm, "?");
	else if (comm[n - 1] == '\n')
		comm[n - 1] = '\0';
}

int target_check(pid_t pid, char comm[16], char *err, size_t errlen)
{
	unsigned long flags = 0;
	char state = 0;
	pid_t tgid;
	int e;

	if (pid <= 0) {
		snprintf(err, errlen, "invalid PID %d", pid);
		return -EINVAL;
	}
	if (pid == getpid()) {
		snprintf(err, errlen, "PID %d is memtop itself", pid);
		return -EINVAL;
	}
	e = stat_flags(pid, &flags, &state);
	if (e) {
		snprintf(err, errlen, "no process with PID %d", pid);
		return -ESRCH;
	}
	read_comm(pid, comm);
	if (flags & PF_KTHREAD) {
		snprintf(err, errlen,
			 "PID %d (%s) is a kernel thread: it has no user-space allocator", pid, comm);
		return -EINVAL;
	}
	tgid = thread_group(pid);
	if (tgid > 0 && tgid != pid) {
		/* a thread's probes would be its process's: watch that */
		read_comm(tgid, comm);
		snprintf(err, errlen, "%d is a thread of PID %d (%s), not a process: use -p %d",
			 pid, tgid, comm, tgid);
		return -EINVAL;
	}
	if (state == 'Z' || state == 'X') {
		snprintf(err, errlen, "PID %d (%s) has exited", pid, comm);
		return -ESRCH;
	}
	return 0;
}

int target_find_exe(const char *argv0, char *out, size_t len)
{
	const char *path = getenv("PATH");
	char *dirs, *dir, *save = NULL;
	int e = -ENOENT;

	if (strchr(argv0, '/')) {
		snprintf(out, len, "%s", argv0);
		return access(out, X_OK) ? -errno : 0;
	}
	dirs = strdup(path && *path ? path : "/usr/local/bin:/usr/bin:/bin");
	if (!dirs)
		return -ENOMEM;
	for (dir = strtok_r(dirs, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
		snprintf(out, len, "%s/%s", *dir ? dir : ".", argv0);
		if (!access(out, X_OK)) {
			e = 0;
			break;
		}
		if (errno == EACCES)
			e = -EACCES;
	}
	free(dirs);
	return e;
}

/* The glibc memtop runs on, from its own maps. */
static int own_allocator(char *path, size_t len)
{
	struct mt_maps maps;
	size_t i;
	int e = proc_maps_read(getpid(), &maps);

	if (e)
		return e;
	e = -ENOENT;
	for (i = 0; i < maps.n; i++) {
		if (maps.v[i].path && is_glibc_name(maps.v[i].path)) {
			snprintf(path, len, "%s", maps.v[i].path);
			e = 0;
			break;
		}
	}
	proc_maps_free(&maps);
	return e;
}

/* In the child: add preload to LD_PRELOAD and set the rate. It goes last,
 * so a library the user preloads keeps its place. */
static void set_preload_env(const char *preload, __u64 sample_rate)
{
	const char *old = getenv("LD_PRELOAD");
	char buf[8192], rate[32];

	if (old && *old)
		snprintf(buf, sizeof(buf), "%s:%s", old, preload);
	else
		snprintf(buf, sizeof(buf), "%s", preload);
	setenv("LD_PRELOAD", buf, 1);
	snprintf(rate, sizeof(rate), "%llu", (unsigned long long)sample_rate);
	setenv("MEMTOP_SAMPLE_RATE", rate, 1);
}

/* In the child: stdout and stderr to out_fd, stdin from /dev/null. */
static void redirect_io(int out_fd, bool null_stdin)
{
	int fd;

	if (out_fd >= 0 && (dup2(out_fd, STDOUT_FILENO) < 0 || dup2(out_fd, STDERR_FILENO) < 0))
		_exit(127);
	if (!null_stdin)
		return;
	fd = open("/dev/null", O_RDONLY);
	if (fd < 0 || dup2(fd, STDIN_FILENO) < 0)
		_exit(127);
	if (fd != STDIN_FILENO)
		close(fd);
}

int target_launch(char **argv, const char *preload, __u64 sample_rate, int out_fd, bool null_stdin,
		  bool static_ok, struct launched *l, char *alloc_path, size_t pathlen, char *err,
		  size_t errlen)
{
	char exe[PATH_MAX];
	int go[2], ex[2], e;
	struct elf_file *ef;

	e = target_find_exe(argv[0], exe, sizeof(exe));
	if (e) {
		snprintf(err, errlen, "cannot execute %s: %s", argv[0], strerror(-e));
		return e;
	}
	ef = elf_file_open(exe);
	if (ef) {
		bool dynamic = elf_file_is_dynamic(ef);

		elf_file_close(ef);
		if (!dynamic && !static_ok) {
			snprintf(err, errlen,
				 "%s is a static executable: no shared glibc allocator to probe",
				 exe);
			return -ENOTSUP;
		}
	}
	e = own_allocator(alloc_path, pathlen);
	if (e) {
		snprintf(err, errlen, "cannot find memtop's own glibc to probe: %s", strerror(-e));
		return e;
	}
	if (pipe2(go, O_CLOEXEC))
		goto sys_fail;
	if (pipe2(ex, O_CLOEXEC)) {
		close(go[0]);
		close(go[1]);
		goto sys_fail;
	}
	l->pid = fork();
	if (l->pid < 0) {
		close(go[0]);
		close(go[1]);
		close(ex[0]);
		/* A session and process group of its own: memtop ends the
		 * command's family with one signal to the group (cmd_end.h); it
		 * outlives memtop's terminal (d) without its hangup; with no
		 * controlling terminal, a stdin left on memtop's terminal (-b)
		 * reads without SIGTTIN stopping it. */
		setsid();
		close(ex[1]);
		goto sys_fail;
	}
	if (l->pid == 0) {
		char c;

		sigset_t none;

		close(go[1]);
		close(ex[0]);
		/* A session and process group of its own: memtop ends the
		 * command's family with one signal to the group (cmd_end.h); it
		 * outlives memtop's terminal (d) without its hangup; with no
		 * controlling terminal, a stdin left on memtop's terminal (-b)
		 * reads without SIGTTIN stopping it. */
		setsid();
		/* memtop blocks the signals it takes through a signalfd */
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		signal(SIGPIPE, SIG_DFL); /* memtop ignores it; the command must not */
		if (read(go[0], &c, 1) != 1)
			_exit(127);
		redirect_io(out_fd, null_stdin);
		if (preload)
			set_preload_env(preload, sample_rate);
		execvp(argv[0], argv);
		e = errno;
		if (write(ex[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(ex[1]);
	l->go_fd = go[1];
	l->err_fd = ex[0];
	return 0;
sys_fail:
	e = -errno;
	snprintf(err, errlen, "cannot start %s: %s", argv[0], strerror(errno));
	return e;
}

int target_release(struct launched *l, char *err, size_t errlen)
{
	char go = 1;
	int child_errno = 0;
	ssize_t n;

	if (write(l->go_fd, &go, 1) != 1) {
		snprintf(err, errlen, "cannot start the command: %s", strerror(errno));
		return -errno;
	}
	close(l->go_fd);
	l->go_fd = -1;
	do
		n = read(l->err_fd, &child_errno, sizeof(child_errno));
	while (n < 0 && errno == EINTR);
	close(l->err_fd);
	l->err_fd = -1;
	if (n == (ssize_t)sizeof(child_errno)) {
		waitpid(l->pid, NULL, 0);
		snprintf(err, errlen, "cannot execute the command: %s", strerror(child_errno));
		return -child_errno;
	}
	return 0;
}

__u64 target_rss(pid_t pid)
{
	char buf[256];
	unsigned long size, resident;

	if (read_proc(pid, "statm", buf, sizeof(buf)) <= 0)
		return 0;
	if (sscanf(buf, "%lu %lu", &size, &resident) != 2)
		return 0;
	return (__u64)resident * sysconf(_SC_PAGESIZE);
}

int target_brk(pid_t pid, __u64 *brk)
{
	unsigned long long start_brk;
	struct mt_maps maps;
	char buf[1024], *p;
	size_t i;
	int e;

	e = proc_maps_read(pid, &maps);
	if (e)
		return e;
	for (i = 0; i < maps.n; i++) {
		if (maps.v[i].path && !strcmp(maps.v[i].path, "[heap]")) {
			*brk = maps.v[i].end;
			proc_maps_free(&maps);
			return 0;
		}
	}
	proc_maps_free(&maps);
	if (read_proc(pid, "stat", buf, sizeof(buf)) <= 0)
		return -ESRCH;
	p = strrchr(buf, ')');
	/* field 47, start_brk (proc(5)): the 45th after the state (3) */
	if (!p || sscanf(p + 2,
			 "%*c"
			 "%*d %*d %*d %*d %*d %*u %*u %*u %*u %*u"
			 "%*u %*u %*d %*d %*d %*d %*d %*d %*u %*u"
			 "%*d %*u %*u %*u %*u %*u %*u %*u %*u %*u"
			 "%*u %*u %*u %*u %*u %*d %*d %*u %*u %*u"
			 "%*u %*d %*u %*u %llu",
			 &start_brk) != 1)
		return -EINVAL;
	*brk = start_brk;
	return 0;
}

__u64 target_cpu_ns(pid_t pid)
{
	char buf[1024], *p;
	unsigned long long utime, stime;
	struct timespec ts;
	clockid_t clk;

	/* the process's CPU clock: every thread, to the nanosecond */
	if (!clock_getcpuclockid(pid, &clk) && !clock_gettime(clk, &ts))
		return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;

	if (read_proc(pid, "stat", buf, sizeof(buf)) <= 0)
		return 0;
	p = strrchr(buf, ')');
	/* fields 14 and 15, after state (3) */
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &utime,
			 &stime) != 2)
		return 0;
	return (utime + stime) * (1000000000ULL / sysconf(_SC_CLK_TCK));
}

int target_identity(pid_t pid, struct target_id *id)
{
	char buf[1024], path[64], *p;
	unsigned long long start = 0, stack = 0;
	struct stat st;
	ssize_t n = read_proc(pid, "stat", buf, sizeof(buf));

	if (n < 0)
		return n == -ENOENT ? -ESRCH : (int)n;
	p = strrchr(buf, ')');
	/* after the comm: state is field 3, starttime 22, startstack 28 */
	if (!p || sscanf(p + 2,
			 "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d "
			 "%*d %*d %*d %*d %llu %*u %*d %*u %*u %*u %llu",
			 &start, &stack) != 2)
		return -EINVAL;
	memset(id, 0, sizeof(*id));
	id->start_ticks = start;
	id->start_stack = stack;
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	if (!stat(path, &st)) {
		id->exe_dev = (__u64)st.st_dev;
		id->exe_ino = (__u64)st.st_ino;
	}
	return 0;
}

#define PROC_PID_INIT_INO 0xEFFFFFFCUL

__u64 target_started_mono_ns(const struct target_id *id)
{
	__u64 tick = 1000000000ULL / (__u64)sysconf(_SC_CLK_TCK);
	__u64 started = id->start_ticks * tick, now_boot, now_mono = clock_mono_ns();
	struct timespec ts;

	if (clock_gettime(CLOCK_BOOTTIME, &ts))
		return now_mono;
	now_boot = (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
	if (started > now_boot || now_boot - started > now_mono)
		return now_mono;
	return now_mono - (now_boot - started);
}

enum target_change target_compare(pid_t pid, struct target_id *was)
{
	struct target_id now;

	if (target_identity(pid, &now) || !target_alive(pid) || now.start_ticks != was->start_ticks)
		return TARGET_GONE;
	if ((was->exe_ino && now.exe_ino &&
	     (now.exe_ino != was->exe_ino || now.exe_dev != was->exe_dev)) ||
	    (was->start_stack && now.start_stack && now.start_stack != was->start_stack)) {
		*was = now;
		return TARGET_EXECED;
	}
	return TARGET_SAME;
}

int target_check_pid_namespace(char *err, size_t errlen)
{
	char link[64];
	ssize_t n = readlink("/proc/self/ns/pid", link, sizeof(link) - 1);
	unsigned long ino;

	/* The initial PID namespace has a fixed inode, PROC_PID_INIT_INO
	 * (include/linux/proc_ns.h). NSpid cannot tell: a container's own
	 * /proc shows only its levels. */
	if (n <= 0)
		return 0; /* no /proc/self: found out at attach */
	link[n] = '\0';
	if (sscanf(link, "pid:[%lu]", &ino) != 1 || ino == PROC_PID_INIT_INO)
		return 0;
	snprintf(err, errlen,
		 "memtop runs in a PID namespace (%s): its PIDs are not the kernel's, which its "
		 "probes report; run it in the host's PID namespace (e.g. nsenter -t 1 -p)",
		 link);
	return -ENOTSUP;
}

int target_group(pid_t pid, pid_t *pgrp)
{
	char buf[1024], *p, state;
	int g;
	ssize_t n = read_proc(pid, "stat", buf, sizeof(buf));

	if (n < 0)
		return n == -ENOENT ? -ESRCH : (int)n;
	p = strrchr(buf, ')');
	/* state is field 3, the process group 5 */
	if (!p || sscanf(p + 2, "%c %*d %d", &state, &g) != 2)
		return -EINVAL;
	if (state == 'Z' || state == 'X')
		return -ESRCH;
	*pgrp = (pid_t)g;
	return 0;
}

bool target_alive(pid_t pid)
{
	unsigned long flags;
	char state = 0;

	if (stat_flags(pid, &flags, &state))
		return false;
	return state != 'Z' && state != 'X';
}

bool target_env_get(pid_t pid, const char *name, char *out, size_t len)
{
	char path[64], buf[65536];
	size_t k = strlen(name), off;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	for (off = 0; off < (size_t)n; off += strlen(buf + off) + 1)
		if (!strncmp(buf + off, name, k) && buf[off + k] == '=')
			return (size_t)snprintf(out, len, "%s", buf + off + k + 1) < len;
	return false;
}

bool target_env_is(pid_t pid, const char *name, const char *value)
{
	char got[256];

	return target_env_get(pid, name, got, sizeof(got)) && !strcmp(got, value);
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * jvm_attach.c - memtop's agent into a running JVM (jvm_attach.h).
 *
 * Detecting: libjvm.so among the process's mappings; its Java version from
 * the `release` file of its Java home (three directories above libjvm.so),
 * read inside the target's root with its rights (util/safe_open); its
 * command line and its JAVA_TOOL_OPTIONS, JDK_JAVA_OPTIONS and
 * _JAVA_OPTIONS (from /proc, which the target does not control) for
 * -XX:+DisableAttachMechanism, -Xrs and -XX:+ReduceSignalUsage, which make
 * the JVM refuse the attach or die of the SIGQUIT that starts it.
 *
 * Attaching, all of it as the target (as_target.h: its mount namespace,
 * root and ids), in HotSpot's protocol (the one `jcmd` speaks):
 *  1. memtop's agent already listens on MT_JW_SOCKET_PREFIX<nspid>: reuse
 *     it (an earlier memtop loaded it; JVMTI cannot unload an agent).
 *  2. Else, unless the JVM's attach listener already listens on
 *     /tmp/.java_pid<nspid>, create /tmp/.attach_pid<nspid> and send the
 *     JVM SIGQUIT (through a pidfd taken when it was checked), then wait
 *     for the listener's socket, at most ATTACH_LISTENER_MS; the trigger
 *     file is removed either way.
 *  3. Copy the agent to a fresh O_EXCL file in the JVM's /tmp (so the JVM
 *     can read it whatever its mount namespace), connect to the listener
 *     (its peer must be the JVM), send "1\0load\0PATH\0true\0\0" (load
 *     the library at an absolute path, no options), read the answer
 *     ("0\nreturn code: 0\n" in JDK 11-21), remove the copy.
 *  4. Connect to the agent's socket and hand the descriptor back.
 * The parent checks the connection's peer (SO_PEERCRED) is the JVM.
 */
#include "probe/jvm_attach.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>

#include "memtop/jvm_wire.h"
#include "probe/as_target.h"
#include "readers/proc_maps.h"
#include "util/clock.h"
#include "util/safe_open.h"

#define ATTACH_LISTENER_MS 5000
#define LOAD_ANSWER_MS 5000
#define AGENT_MAX (16 << 20)
#define PROC_TEXT_MAX (1 << 20)

/* ---- detecting ----------------------------------------------------------- */

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

/* The path libjvm.so is mapped from, or -ENOENT; *launcher says whether
 * the JDK's launcher library (libjli.so, which every `java` links) is
 * mapped: a launcher without libjvm.so yet is about to load its VM. */
static int libjvm_path(pid_t pid, char *out, size_t len, bool *launcher)
{
	struct mt_maps maps;
	size_t i;
	int e = proc_maps_read(pid, &maps);

	*launcher = false;
	if (e)
		return e;
	e = -ENOENT;
	for (i = 0; i < maps.n && e; i++) {
		const char *name;

		if (!maps.v[i].path || maps.v[i].path[0] != '/')
			continue;
		name = base_name(maps.v[i].path);
		if (!strcmp(name, "libjli.so"))
			*launcher = true;
		if (!strcmp(name, "libjvm.so")) {
			snprintf(out, len, "%s", maps.v[i].path);
			e = 0;
		}
	}
	proc_maps_free(&maps);
	return e;
}

/* JAVA_VERSION="17.0.15" -> 17, "1.8.0_392" -> 8; 0: not found. */
static int release_feature(const char *text)
{
	const char *v = strstr(text, "JAVA_VERSION=\"");
	int major;

	if (!v)
		return 0;
	major = atoi(v + 14);
	if (major == 1)
		major = atoi(v + 16);
	return major > 0 && major < 1000 ? major : 0;
}

/* The Java feature version of the JVM whose libjvm.so is at lib (its home
 * is three levels up: HOME/lib/server/libjvm.so, Java 9 and later;
 * HOME/jre/lib/amd64/server/libjvm.so is Java 8). 0: unknown. */
static int java_feature(pid_t pid, const char *lib)
{
	struct safe_reader reader;
	struct safe_open_rules rules = { .reader = &reader, .no_symlink = false };
	char home[PATH_MAX], root[64], *text = NULL, *s;
	size_t len;
	int i, feature = 0;

	if (strstr(lib, "/jre/lib/"))
		return 8;
	snprintf(home, sizeof(home), "%s", lib);
	for (i = 0; i < 3; i++) {
		s = strrchr(home, '/');
		if (!s || s == home)
			return 0;
		*s = '\0';
	}
	if (strlen(home) + sizeof("/release") > sizeof(home))
		return 0;
	strcat(home, "/release");
	snprintf(root, sizeof(root), "/proc/%d/root", (int)pid);
	rules.root_fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rules.root_fd < 0 || safe_reader_of_pid(pid, &reader)) {
		if (rules.root_fd >= 0)
			close(rules.root_fd);
		return 0;
	}
	if (!safe_read_file(home, &rules, 64 * 1024, &text, &len)) {
		feature = release_feature(text);
		free(text);
	}
	close(rules.root_fd);
	return feature;
}

/* The NUL-separated strings of /proc/PID/<what>, bounded. */
static char *proc_text(pid_t pid, const char *what, size_t *len)
{
	char path[64], *buf = malloc(PROC_TEXT_MAX);
	ssize_t n;
	size_t got = 0;
	int fd;

	*len = 0;
	if (!buf)
		return NULL;
	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, what);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		free(buf);
		return NULL;
	}
	while (got < PROC_TEXT_MAX - 1 && (n = read(fd, buf + got, PROC_TEXT_MAX - 1 - got)) > 0)
		got += (size_t)n;
	close(fd);
	buf[got] = '\0';
	*len = got;
	return buf;
}

enum { FLAG_ATTACH_OFF = 1, FLAG_NO_SIGNALS = 2 };

/* The flags of one option word; later words override earlier ones. */
static void option_word(const char *w, size_t n, int *flags)
{
	if (n == 27 && !strncmp(w, "-XX:+DisableAttachMechanism", n))
		*flags |= FLAG_ATTACH_OFF;
	else if (n == 27 && !strncmp(w, "-XX:-DisableAttachMechanism", n))
		*flags &= ~FLAG_ATTACH_OFF;
	else if ((n == 4 && !strncmp(w, "-Xrs", n)) ||
		 (n == 24 && !strncmp(w, "-XX:+ReduceSignalUsage", n)))
		*flags |= FLAG_NO_SIGNALS;
}

/* Words of s (n bytes) split at any of seps. */
static void option_words(const char *s, size_t n, const char *seps, int *flags)
{
	size_t i = 0;

	while (i < n) {
		size_t j = i;

		while (j < n && !strchr(seps, s[j]))
			j++;
		option_word(s + i, j - i, flags);
		i = j + 1;
	}
}

/* What the JVM's options say, as HotSpot reads them: the environment's
 * option variables first, then the command line. */
static int jvm_flags(pid_t pid)
{
	static const char *const vars[] = { "JAVA_TOOL_OPTIONS=", "_JAVA_OPTIONS=",
					    "JDK_JAVA_OPTIONS=" };
	size_t len, i, k;
	int flags = 0;
	char *env = proc_text(pid, "environ", &len), *cmd;

	for (i = 0; env && i < len; i += strlen(env + i) + 1)
		for (k = 0; k < sizeof(vars) / sizeof(vars[0]); k++)
			if (!strncmp(env + i, vars[k], strlen(vars[k])))
				option_words(env + i + strlen(vars[k]),
					     strlen(env + i + strlen(vars[k])), " \t\n", &flags);
	free(env);
	cmd = proc_text(pid, "cmdline", &len);
	if (cmd)
		option_words(cmd, len, "", &flags); /* NUL-separated: "" matches only NUL */
	free(cmd);
	return flags;
}

/* From /proc/PID/status: the pid the process has in its own pid
 * namespace (NSpid's last) and whether it catches SIGQUIT (SigCgt): a
 * JVM installs its handler while it starts; before, SIGQUIT kills it. */
static pid_t ns_pid(pid_t pid, bool *quit_caught, bool *stopped)
{
	char path[64], line[256];
	pid_t ns = -1;
	FILE *f;

	*quit_caught = false;
	*stopped = false;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "NSpid:", 6)) {
			char *s = line + 6, *end;

			for (;;) {
				long v = strtol(s, &end, 10);

				if (end == s)
					break;
				ns = (pid_t)v;
				s = end;
			}
		} else if (!strncmp(line, "State:", 6)) {
			const char *c = line + 6 + strspn(line + 6, " \t");

			*stopped = *c == 'T' || *c == 't';
		} else if (!strncmp(line, "SigCgt:", 7)) {
			unsigned long long mask = strtoull(line + 7, NULL, 16);

			*quit_caught = mask & (1ULL << (SIGQUIT - 1));
		}
	}
	fclose(f);
	return ns;
}

int jvm_detect(pid_t pid, struct jvm_info *info, char *why, size_t len)
{
	char lib[PATH_MAX];
	bool quit_caught, stopped, launcher;
	int flags;

	memset(info, 0, sizeof(*info));
	if (libjvm_path(pid, lib, sizeof(lib), &launcher)) {
		if (!launcher)
			return 0;
		snprintf(why, len, "its launcher has not loaded the VM yet");
		return -EAGAIN;
	}
	info->pid = pid;
	info->nspid = ns_pid(pid, &quit_caught, &stopped);
	info->feature = java_feature(pid, lib);
	if (info->nspid <= 0) {
		snprintf(why, len, "its pid in its namespace is unknown");
		return -ESRCH;
	}
	if (info->feature && info->feature < 11) {
		snprintf(why, len, "Java %d: heap sampling (JVMTI) needs Java 11 or later",
			 info->feature);
		return -ENOTSUP;
	}
	flags = jvm_flags(pid);
	if (flags & FLAG_ATTACH_OFF) {
		snprintf(why, len, "it runs with -XX:+DisableAttachMechanism");
		return -EPERM;
	}
	if (flags & FLAG_NO_SIGNALS) {
		snprintf(why, len, "it runs with -Xrs (SIGQUIT would not start its attach listener)");
		return -EPERM;
	}
	if (stopped) {
		snprintf(why, len, "it is stopped (a signal would wait for it)");
		return -EBUSY;
	}
	if (!quit_caught) {
		snprintf(why, len, "its VM has not started yet (it does not handle SIGQUIT)");
		return -EAGAIN;
	}
	return 1;
}

/* ---- attaching, as the target ------------------------------------------- */

struct attach_job {
	const struct jvm_info *ji;
	int pidfd;
	const unsigned char *agent;
	size_t agent_len;
};

static int connect_unix(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timeval tv = { LOAD_ANSWER_MS / 1000, 0 };
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		int e = -errno;

		close(fd);
		return e;
	}
	return fd;
}

/* A socket at path owned by this (the target's) user. */
static bool own_socket(const char *path)
{
	struct stat st;

	return !lstat(path, &st) && S_ISSOCK(st.st_mode) && st.st_uid == geteuid();
}

/* Start the JVM's attach listener: the trigger file, SIGQUIT, and a
 * bounded wait for its socket. */
static int start_listener(const struct attach_job *j, const char *sock, char *msg, size_t len)
{
	char trigger[64];
	__u64 until;
	int fd;

	snprintf(trigger, sizeof(trigger), "/tmp/.attach_pid%d", (int)j->ji->nspid);
	fd = open(trigger, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 && errno != EEXIST) {
		snprintf(msg, len, "cannot create %s in its namespace: %s", trigger, strerror(errno));
		return -errno;
	}
	if (fd >= 0)
		close(fd);
	if (syscall(SYS_pidfd_send_signal, j->pidfd, SIGQUIT, NULL, 0)) {
		snprintf(msg, len, "cannot signal it: %s", strerror(errno));
		unlink(trigger);
		return -ESRCH;
	}
	until = clock_mono_ns() + ATTACH_LISTENER_MS * 1000000ULL;
	while (!own_socket(sock) && clock_mono_ns() < until) {
		struct timespec ts = { 0, 10 * 1000000 };

		nanosleep(&ts, NULL); /* the listener's socket file is the signal */
	}
	unlink(trigger);
	if (!own_socket(sock)) {
		snprintf(msg, len, "its attach listener did not start within %d s",
			 ATTACH_LISTENER_MS / 1000);
		return -ETIMEDOUT;
	}
	return 0;
}

/* The peer of fd is process pid (as this pid namespace sees it). */
static bool peer_is(int fd, pid_t pid)
{
	struct ucred cr;
	socklen_t l = sizeof(cr);

	return !getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &l) && cr.pid == pid;
}

/* The copy of the agent the JVM loads, in its /tmp. */
static int write_copy(const struct attach_job *j, char *path, size_t len, char *msg, size_t msglen)
{
	size_t done = 0;
	int fd;

	snprintf(path, len, "/tmp/.memtop-jvmti-%d-%llx.so", (int)j->ji->nspid,
		 (unsigned long long)clock_mono_ns());
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		snprintf(msg, msglen, "cannot create the agent's copy in its /tmp: %s",
			 strerror(errno));
		return -errno;
	}
	while (done < j->agent_len) {
		ssize_t w = write(fd, j->agent + done, j->agent_len - done);

		if (w <= 0) {
			snprintf(msg, msglen, "cannot write the agent's copy: %s", strerror(errno));
			close(fd);
			unlink(path);
			return -EIO;
		}
		done += (size_t)w;
	}
	close(fd);
	return 0;
}

/* HotSpot's answer to load: "0\n" then "return code: N\n" (N the agent's
 * Agent_OnAttach result). 0 or -errno with the JVM's words in msg:
 * -EAGAIN when the agent said JNI_EVERSION (-3), which GetEnv gives for
 * JVMTI before the VM is live: a JVM still starting (its SIGQUIT handler
 * and its attach listener are up before that). */
#define JVM_AGENT_EVERSION -3 /* JNI_EVERSION, from Agent_OnAttach */

static int load_answer(int fd, char *msg, size_t len)
{
	char ans[512];
	size_t got = 0;
	ssize_t n;
	const char *rc;

	while (got < sizeof(ans) - 1 && (n = read(fd, ans + got, sizeof(ans) - 1 - got)) > 0)
		got += (size_t)n;
	ans[got] = '\0';
	if (!got) {
		snprintf(msg, len, "its attach listener did not answer within %d s",
			 LOAD_ANSWER_MS / 1000);
		return -ETIMEDOUT;
	}
	rc = strstr(ans, "return code: ");
	if (atoi(ans) == 0 && rc && atoi(rc + 13) == JVM_AGENT_EVERSION) {
		snprintf(msg, len, "its VM is still starting (JVMTI not available yet)");
		return -EAGAIN;
	}
	if (atoi(ans) != 0 || (rc && atoi(rc + 13) != 0)) {
		char *nl;

		while ((nl = strchr(ans, '\n')))
			*nl = ' ';
		snprintf(msg, len, "the JVM refused the agent: %.200s", ans);
		return -EPERM;
	}
	return 0;
}

static int load_agent(const struct attach_job *j, char *msg, size_t len)
{
	char sock[64], copy[128], req[256];
	int fd, e, n;

	snprintf(sock, sizeof(sock), "/tmp/.java_pid%d", (int)j->ji->nspid);
	if (!own_socket(sock) && (e = start_listener(j, sock, msg, len)))
		return e;
	fd = connect_unix(sock);
	if (fd < 0 || !peer_is(fd, j->ji->pid)) {
		snprintf(msg, len, "cannot reach its attach listener: %s",
			 fd < 0 ? strerror(-fd) : "another process listens there");
		if (fd >= 0)
			close(fd);
		return -ECONNREFUSED;
	}
	e = write_copy(j, copy, sizeof(copy), msg, len);
	if (e) {
		close(fd);
		return e;
	}
	n = snprintf(req, sizeof(req), "1%cload%c%s%ctrue%c%c", 0, 0, copy, 0, 0, 0);
	if (send(fd, req, (size_t)n, MSG_NOSIGNAL) != n) {
		snprintf(msg, len, "cannot send the load request: %s", strerror(errno));
		e = -EIO;
	} else {
		e = load_answer(fd, msg, len);
	}
	close(fd);
	unlink(copy); /* loaded (mapped) or refused: the file is not needed */
	return e;
}

/* In the child, as the target: 1 reused, 0 loaded, -errno. */
static int attach_as_target(void *ctx, int *fd_out, char *msg, size_t len)
{
	const struct attach_job *j = ctx;
	char sock[108];
	int fd, e;

	snprintf(sock, sizeof(sock), "%s%d", MT_JW_SOCKET_PREFIX, (int)j->ji->nspid);
	fd = own_socket(sock) ? connect_unix(sock) : -ENOENT;
	if (fd >= 0 && peer_is(fd, j->ji->pid)) {
		*fd_out = fd;
		return 1;
	}
	if (fd >= 0)
		close(fd);
	e = load_agent(j, msg, len);
	if (e)
		return e;
	fd = connect_unix(sock);
	if (fd < 0) {
		snprintf(msg, len, "the agent was loaded but does not listen: %s", strerror(-fd));
		return fd;
	}
	*fd_out = fd;
	return 0;
}

static unsigned char *read_agent(const char *path, size_t *len, char *err, size_t errlen)
{
	struct safe_open_rules rules = { .root_fd = -1 };
	char *text = NULL;
	int e = safe_read_file(path, &rules, AGENT_MAX, &text, len);

	if (e) {
		snprintf(err, errlen, "cannot read %s: %s", path, safe_open_strerror(-e));
		return NULL;
	}
	return (unsigned char *)text;
}

int jvm_attach(const struct jvm_info *ji, const char *agent_path, bool *reused, char *err, size_t len)
{
	struct attach_job j = { .ji = ji };
	char msg[256];
	int fd = -1, e;

	*reused = false;
	j.agent = read_agent(agent_path, &j.agent_len, err, len);
	if (!j.agent)
		return -ENOENT;
	j.pidfd = (int)syscall(SYS_pidfd_open, ji->pid, 0);
	if (j.pidfd < 0) {
		e = -errno;
		snprintf(err, len, "PID %d: %s", (int)ji->pid, strerror(errno));
		free((void *)j.agent);
		return e;
	}
	e = as_target_run(ji->pid, attach_as_target, &j, JVM_ATTACH_TIMEOUT_MS, &fd, msg,
			  sizeof(msg));
	close(j.pidfd);
	free((void *)j.agent);
	if (e >= 0 && (fd < 0 || !peer_is(fd, ji->pid))) {
		snprintf(msg, sizeof(msg), "the agent's socket is not the JVM's");
		e = -EPERM;
	}
	if (e < 0) {
		if (fd >= 0)
			close(fd);
		snprintf(err, len, "%s", msg);
		return e;
	}
	*reused = e == 1;
	return fd;
}

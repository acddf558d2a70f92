// SPDX-License-Identifier: GPL-2.0-only
/*
 * as_target.c - run a function as the target process (as_target.h).
 *
 * The parent opens the target's mount namespace and root (/proc/PID/ns/mnt,
 * /proc/PID/root: kernel objects, not paths the target controls) and reads
 * its credentials (safe_reader_of_pid: the file-system ids, which are the
 * effective ones unless it called setfsuid) before it forks. The child
 * dies with its parent, enters the namespace, makes the root its own,
 * drops every privilege to the target's ids (groups, gid, uid, in that
 * order, then no new privileges), runs the function and sends back one
 * message with the function's value, its line and at most one descriptor
 * (SCM_RIGHTS) over a socket pair. The parent waits for that message at
 * most timeout_ms, then kills the child and reaps it whatever happened.
 */
#include "probe/as_target.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "util/clock.h"
#include "util/safe_open.h"

struct reply {
	int rc;
	char msg[256];
};

static int become(pid_t pid, int mnt_fd, int root_fd, const struct safe_reader *cred)
{
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() == 1)
		return -1;
	if (setns(mnt_fd, CLONE_NEWNS) || fchdir(root_fd) || chroot(".") || chdir("/"))
		return -1;
	if (setgroups(cred->ngroups, cred->groups) || setresgid(cred->gid, cred->gid, cred->gid) ||
	    setresuid(cred->uid, cred->uid, cred->uid))
		return -1;
	/* a change of credentials clears the parent-death signal: set again,
	 * so that a killed memtop's helper, which holds memtop's descriptors
	 * (its BPF links among them), never outlives it */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() == 1)
		return -1;
	return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ? -1 : 0;
}

static void child(int sock, pid_t pid, int mnt_fd, int root_fd, const struct safe_reader *cred,
		  as_target_fn fn, void *ctx)
{
	struct reply r = { 0 };
	int fd = -1;
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { &r, sizeof(r) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };

	if (become(pid, mnt_fd, root_fd, cred)) {
		r.rc = -errno;
		snprintf(r.msg, sizeof(r.msg), "cannot enter PID %d's namespace as its user: %s",
			 (int)pid, strerror(errno));
	} else {
		r.rc = fn(ctx, &fd, r.msg, sizeof(r.msg));
	}
	if (fd >= 0) {
		struct cmsghdr *c;

		memset(cbuf, 0, sizeof(cbuf));
		mh.msg_control = cbuf;
		mh.msg_controllen = sizeof(cbuf);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	_exit(sendmsg(sock, &mh, MSG_NOSIGNAL) == (ssize_t)sizeof(r) ? 0 : 1);
}

/* The child's reply within the time left to deadline_ns. */
static int await_reply(int sock, __u64 deadline_ns, struct reply *r, int *fd_out)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { r, sizeof(*r) };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf)
	};
	struct pollfd p = { sock, POLLIN, 0 };
	struct cmsghdr *c;
	ssize_t n;

	for (;;) {
		__u64 now = clock_mono_ns();
		int ms = now >= deadline_ns ? 0 : (int)((deadline_ns - now) / 1000000) + 1;
		int k = poll(&p, 1, ms);

		if (k > 0)
			break;
		if (k == 0 || (k < 0 && errno != EINTR))
			return -ETIMEDOUT;
	}
	n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
	if (n != (ssize_t)sizeof(*r))
		return -EPIPE;
	r->msg[sizeof(r->msg) - 1] = '\0';
	for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
		    c->cmsg_len == CMSG_LEN(sizeof(int)))
			memcpy(fd_out, CMSG_DATA(c), sizeof(int));
	return 0;
}

int as_target_run(pid_t pid, as_target_fn fn, void *ctx, int timeout_ms, int *fd_out, char *msg,
		  size_t msglen)
{
	struct safe_reader cred;
	struct reply r = { 0 };
	char path[64];
	int mnt_fd, root_fd, sv[2], e;
	pid_t kid;

	*fd_out = -1;
	e = safe_reader_of_pid(pid, &cred);
	if (e) {
		snprintf(msg, msglen, "cannot read PID %d's credentials: %s", (int)pid, strerror(-e));
		return e;
	}
	snprintf(path, sizeof(path), "/proc/%d/ns/mnt", (int)pid);
	mnt_fd = open(path, O_RDONLY | O_CLOEXEC);
	snprintf(path, sizeof(path), "/proc/%d/root", (int)pid);
	root_fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (mnt_fd < 0 || root_fd < 0 || socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv)) {
		e = -errno;
		snprintf(msg, msglen, "cannot open PID %d's namespace: %s", (int)pid,
			 strerror(errno));
		goto out;
	}
	kid = fork();
	if (kid == 0) {
		close(sv[0]);
		child(sv[1], pid, mnt_fd, root_fd, &cred, fn, ctx);
	}
	close(sv[1]);
	if (kid < 0) {
		e = -errno;
		snprintf(msg, msglen, "cannot fork: %s", strerror(errno));
		close(sv[0]);
		goto out;
	}
	e = await_reply(sv[0], clock_mono_ns() + (__u64)timeout_ms * 1000000ULL, &r, fd_out);
	kill(kid, SIGKILL); /* done, or out of time: never left behind */
	while (waitpid(kid, NULL, 0) < 0 && errno == EINTR)
		;
	close(sv[0]);
	if (e == -ETIMEDOUT)
		snprintf(msg, msglen, "no answer within %.1f s", timeout_ms / 1000.0);
	else if (e)
		snprintf(msg, msglen, "the helper process for PID %d failed", (int)pid);
	else {
		e = r.rc;
		snprintf(msg, msglen, "%s", r.msg);
	}
out:
	if (mnt_fd >= 0)
		close(mnt_fd);
	if (root_fd >= 0)
		close(root_fd);
	return e;
}

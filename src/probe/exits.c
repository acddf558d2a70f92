// SPDX-License-Identifier: GPL-2.0-only
/*
 * exits.c - learning how a process ended (exits.h): the process-events
 * connector for any process, a zombie's /proc/PID/stat as a fallback.
 * Owns nothing but the socket it hands out; no state between calls.
 */
#include "probe/exits.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/netlink.h>

/* A netlink message carrying a connector message carrying one op, and
 * from Linux 6.6 on the kinds of event wanted (struct proc_input in
 * <linux/cn_proc.h>; Debian 12's headers predate it): laid out by hand in
 * a buffer, as struct cn_msg ends in a flexible array. */
#define LISTEN_PAYLOAD (2 * sizeof(__u32)) /* op, event_type */
#define LISTEN_SIZE NLMSG_SPACE(sizeof(struct cn_msg) + LISTEN_PAYLOAD)

/* Linux 6.6 filters events per socket: only exits then wake memtop. */
static bool kernel_filters_events(void)
{
	struct utsname u;
	int major = 0, minor = 0;

	if (uname(&u) || sscanf(u.release, "%d.%d", &major, &minor) != 2)
		return false;
	return major > 6 || (major == 6 && minor >= 6);
}

int exits_open(void)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK, .nl_groups = CN_IDX_PROC };
	union {
		struct nlmsghdr nl; /* aligns the buffer */
		char bytes[LISTEN_SIZE];
	} msg;
	int fd = socket(PF_NETLINK, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, NETLINK_CONNECTOR);
	struct cn_msg *cn = NLMSG_DATA(&msg.nl);
	__u32 payload[2] = { PROC_CN_MCAST_LISTEN, PROC_EVENT_EXIT };
	int e;

	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)))
		goto fail;
	memset(&msg, 0, sizeof(msg));
	msg.nl.nlmsg_type = NLMSG_DONE;
	cn->id.idx = CN_IDX_PROC;
	cn->id.val = CN_VAL_PROC;
	/* an older kernel ignores a request of any other length than the op's */
	cn->len = kernel_filters_events() ? sizeof(payload) : sizeof(payload[0]);
	memcpy(cn->data, payload, cn->len);
	msg.nl.nlmsg_len = NLMSG_LENGTH(sizeof(*cn) + cn->len);
	if (send(fd, &msg, msg.nl.nlmsg_len, 0) != (ssize_t)msg.nl.nlmsg_len)
		goto fail;
	return fd;
fail:
	e = errno ? -errno : -EIO;
	close(fd);
	return e;
}

/* One connector message: an exit of a thread-group leader is the
 * process's exit (other threads' exits are not). */
static void take_event(const struct cn_msg *cn, size_t len, exits_fn *fn, void *ctx)
{
	struct proc_event ev; /* copied out: cn->data is only 4-byte aligned */

	if (len < sizeof(*cn) || cn->id.idx != CN_IDX_PROC || cn->id.val != CN_VAL_PROC ||
	    cn->len < sizeof(ev) || len - sizeof(*cn) < sizeof(ev))
		return;
	memcpy(&ev, cn->data, sizeof(ev));
	if (ev.what != PROC_EVENT_EXIT)
		return;
	if (ev.event_data.exit.process_pid != ev.event_data.exit.process_tgid)
		return;
	fn(ctx, ev.event_data.exit.process_tgid, (int)ev.event_data.exit.exit_code, ev.timestamp_ns);
}

int exits_read(int fd, exits_fn *fn, void *ctx)
{
	char buf[8192] __attribute__((aligned(NLMSG_ALIGNTO)));
	int lost = 0;

	for (;;) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);
		struct nlmsghdr *nh;

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == ENOBUFS) {
				lost = -ENOBUFS; /* overrun: go on with what is left */
				continue;
			}
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return lost;
			return -errno;
		}
		for (nh = (struct nlmsghdr *)buf; NLMSG_OK(nh, (size_t)n); nh = NLMSG_NEXT(nh, n)) {
			if (nh->nlmsg_type == NLMSG_ERROR || nh->nlmsg_type == NLMSG_NOOP)
				continue;
			take_event(NLMSG_DATA(nh), nh->nlmsg_len - NLMSG_HDRLEN, fn, ctx);
		}
	}
}

int exits_zombie_status(pid_t pid, int *wstatus)
{
	char path[64], buf[2048], *p, *tok, *save;
	ssize_t n;
	int fd, field;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -ESRCH;
	buf[n] = '\0';
	/* after "pid (comm)": the comm may hold spaces and parentheses */
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ' || p[2] != 'Z')
		return -ESRCH;
	/* field 3 is the state; exit_code is field 52 (proc(5)) */
	for (field = 3, tok = strtok_r(p + 2, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		if (field++ == 52) {
			*wstatus = (int)strtol(tok, NULL, 10);
			return 0;
		}
	}
	return -ENODATA;
}

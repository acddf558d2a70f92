// SPDX-License-Identifier: GPL-2.0-only
/*
 * viewer.c - `memtop attach`: which sessions run (their sockets in the
 * run directory, record/session.h), and connecting to one. A socket is
 * used only when it is a socket (not a symlink to one), owned by this
 * user or root, and the process listening on it runs as one of them: a
 * stream from anyone else is not shown.
 */
#include "viewer.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "record/session.h"
#include "record/rec_codec.h"
#include "record/recording.h"
#include "playback.h"
#include "util/sanitize.h"

#define LIST_WAIT_MS 1000

static bool trusted_uid(uid_t uid)
{
	return uid == 0 || uid == geteuid();
}

/* A connected socket to the session at path, or -1 with err. */
static int connect_session(const char *path, char *err, size_t errlen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct ucred cred;
	socklen_t len = sizeof(cred);
	struct stat st;
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		snprintf(err, errlen, "%.300s: too long a path for a socket", path);
		return -1;
	}
	if (lstat(path, &st)) {
		snprintf(err, errlen, "%.300s: %s", path,
			 errno == ENOENT ? "no such session (memtop attach lists them)"
					 : strerror(errno));
		return -1;
	}
	if (!S_ISSOCK(st.st_mode) || !trusted_uid(st.st_uid)) {
		snprintf(err, errlen, "%.300s: not a session socket (%s): refused", path,
			 S_ISSOCK(st.st_mode) ? "owned by another user" : "not a socket");
		return -1;
	}
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		snprintf(err, errlen, "%.300s: %s", path,
			 errno == ECONNREFUSED ? "the session is not running any more"
			 : errno == EACCES     ? "permission denied (sessions are root's)"
					       : strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) || !trusted_uid(cred.uid)) {
		snprintf(err, errlen, "%.300s: served by another user's process: refused", path);
		close(fd);
		return -1;
	}
	return fd;
}

/* The session's header: the first bytes of its stream. */
static bool read_session_header(int fd, struct rec_header *h)
{
	unsigned char buf[8192];
	size_t got = 0;
	struct rec_frame f;
	struct rec_cur c;

	while (got < sizeof(buf)) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t n;

		if (poll(&p, 1, LIST_WAIT_MS) <= 0)
			return false;
		n = read(fd, buf + got, sizeof(buf) - got);
		if (n <= 0)
			return false;
		got += (size_t)n;
		if (rec_scan(buf, got, &f) == REC_SCAN_SEGMENT &&
		    rec_scan(buf + REC_MAGIC_LEN, got - REC_MAGIC_LEN, &f) == REC_SCAN_FRAME)
			break;
	}
	if (f.type != REC_HEADER)
		return false;
	rec_cur_init(&c, &f);
	return rec_get_header(&c, h) && rec_version_known(h->version);
}

static bool session_name(const char *name, long *id)
{
	char *end;

	errno = 0;
	*id = strtol(name, &end, 10);
	return end != name && !errno && *id > 0 && !strcmp(end, ".sock");
}

/* A session whose process is gone, and whose files session_sweep()
 * removed. */
static void said_swept(void *ctx, pid_t id, unsigned long long bytes)
{
	(void)ctx;
	fprintf(stderr,
		"memtop: removed the files of session %d (%llu KiB), whose process is gone: it "
		"ended without cleaning up (killed?)\n",
		(int)id, (bytes + 1023) >> 10);
}

static int list_sessions(void)
{
	const char *dir = session_run_dir();
	struct dirent *de;
	struct stat st;
	int found = 0;
	DIR *d;

	/* only memtop's user may: in a directory it owns, where no one
	 * else writes (a run directory that is not is left alone) */
	if (!lstat(dir, &st) && S_ISDIR(st.st_mode) && st.st_uid == geteuid() && !(st.st_mode & 022))
		session_sweep(dir, 0, said_swept, NULL);
	d = opendir(dir);

	if (!d) {
		fprintf(stderr, "memtop: no sessions (%s: %s)\n", dir, strerror(errno));
		return 1;
	}
	while ((de = readdir(d))) {
		char path[PATH_MAX], err[512], when[32] = "?", targets[300];
		struct rec_header h;
		long id;
		int fd;

		if (!session_name(de->d_name, &id))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		fd = connect_session(path, err, sizeof(err));
		if (fd < 0) {
			printf("%8ld  %s\n", id, sanitize_inplace(err));
			continue;
		}
		if (!found++)
			printf("%8s  %-19s  %s\n", "SESSION", "STARTED", "WATCHING");
		if (read_session_header(fd, &h)) {
			time_t t = (time_t)h.start_wall_s;
			struct tm tm;

			if (localtime_r(&t, &tm))
				strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
			snprintf(targets, sizeof(targets), "%s", h.targets ? h.targets : "");
		} else {
			snprintf(targets, sizeof(targets), "(no answer)");
		}
		printf("%8ld  %-19s  %s\n", id, when, sanitize_inplace(targets));
		close(fd);
	}
	closedir(d);
	if (!found) {
		fprintf(stderr, "memtop: no running session in %s\n", dir);
		return 1;
	}
	printf("memtop attach SESSION opens one\n");
	return 0;
}

int viewer_run(const struct mt_config *cfg)
{
	char path[PATH_MAX], err[512];
	long id;
	int fd, code;

	if (!cfg->attach_to)
		return list_sessions();
	if (!strchr(cfg->attach_to, '/')) {
		char name[64];

		snprintf(name, sizeof(name), "%.40s.sock", cfg->attach_to);
		if (!session_name(name, &id)) {
			fprintf(stderr,
				"memtop: attach: '%s' is not a session ID (a PID) or a socket path\n",
				sanitize_inplace(name));
			return 1;
		}
		snprintf(path, sizeof(path), "%s/%ld.sock", session_run_dir(), id);
	} else {
		snprintf(path, sizeof(path), "%s", cfg->attach_to);
	}
	fd = connect_session(path, err, sizeof(err));
	if (fd < 0) {
		fprintf(stderr, "memtop: attach: %s\n", sanitize_inplace(err));
		return 1;
	}
	code = playback_stream(cfg, fd, path);
	close(fd);
	return code;
}

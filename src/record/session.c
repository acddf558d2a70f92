// SPDX-License-Identifier: GPL-2.0-only
/*
 * session.c - a --daemon session's socket and its viewers (session.h).
 *
 * The recording's files are the viewers' queue: each viewer is a position
 * (segment, offset) in them, and the thread sends from there with pread()
 * and non-blocking sends whenever the viewer's socket takes more. So a
 * viewer costs one 64 KiB buffer whatever its lag, the session's loop
 * never waits on it, and a viewer that falls behind by a whole segment is
 * dropped. The main thread hands the thread new descriptors of the
 * segments and their flushed sizes (session_publish); the thread alone
 * reads and closes them.
 *
 * A session's files are removed when it ends (session_remove_files), and
 * those of a session that could not (SIGKILL) by the next run that looks
 * in the run directory (session_sweep): a daemon starting, `memtop
 * attach` listing.
 */
#include "record/session.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#define VIEWER_BUF (64u << 10)

struct segment {
	int fd; /* -1: none */
	__u32 number;
	__u64 size; /* flushed bytes */
};

struct viewer {
	int sock;
	__u32 segment;
	__u64 off;
	unsigned char buf[VIEWER_BUF];
	size_t len, pos;
};

struct session {
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	int listen_fd, wake_fd;
	struct recorder *rec;
	pthread_t thread;
	bool running;

	pthread_mutex_t lock; /* guards the fields below */
	bool stop;
	struct segment next_cur, next_prev; /* handed over, not taken yet (fd -1: none) */
	__u64 cur_size;
	__u32 published_segment;
	unsigned nviewers;
	unsigned long dropped;

	/* the thread's own */
	struct segment cur, prev;
	struct viewer *viewers[SESSION_MAX_VIEWERS];
};

const char *session_run_dir(void)
{
	const char *d = getenv("MEMTOP_RUN_DIR");

	return d && d[0] ? d : SESSION_RUN_DIR;
}

int session_check_dir(const char *dir, char *err, size_t errlen)
{
	struct stat st;
	int fd, e = 0;

	if (mkdir(dir, 0700) && errno != EEXIST) {
		e = -errno;
		snprintf(err, errlen, "cannot create %.300s: %s", dir, strerror(errno));
		return e;
	}
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		e = -errno;
		snprintf(err, errlen, "%.300s: %s", dir,
			 errno == ELOOP || errno == ENOTDIR
				 ? "not a directory (a symbolic link?): refused"
				 : strerror(errno));
		return e;
	}
	if (fstat(fd, &st)) {
		e = -errno;
		snprintf(err, errlen, "%.300s: %s", dir, strerror(errno));
	} else if (st.st_uid != geteuid() || (st.st_mode & 022)) {
		e = -EPERM;
		snprintf(err, errlen,
			 "%.300s is owned by uid %u with mode %04o: a session directory must be "
			 "memtop's user's (uid %u) and writable by no one else",
			 dir, (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777),
			 (unsigned)geteuid());
	}
	close(fd);
	return e;
}

/* ---- a session's files ------------------------------------------------------- */

static const char *const file_suffix[] = { ".sock", ".rec", ".rec.1", ".rec.new", ".pid" };

/* The start time of process pid (clock ticks after boot), or 0 when it
 * does not run (a zombie: it has ended, only not been reaped). */
static unsigned long long proc_start(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long long start = 0;
	ssize_t n;
	int fd, i;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	/* the command name may hold spaces and parentheses: fields count
	 * from the last ')' (state is field 3, starttime field 22) */
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ' || p[2] == 'Z' || p[2] == 'X')
		return 0;
	for (i = 3; p && i <= 22; i++) {
		p = strchr(p + 1, ' ');
		if (p && i == 22)
			start = strtoull(p + 1, NULL, 10);
	}
	return start;
}

int session_mark(const char *dir, pid_t id, char *err, size_t errlen)
{
	char path[PATH_MAX], line[64];
	int fd, n, e = 0;

	snprintf(path, sizeof(path), "%s/%d.pid", dir, (int)id);
	n = snprintf(line, sizeof(line), "%d %llu\n", (int)id, proc_start(id));
	unlink(path); /* a gone session's of the same PID */
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, line, (size_t)n) != n)
		e = -errno;
	if (fd >= 0)
		close(fd);
	if (e) {
		snprintf(err, errlen, "cannot write %.300s: %s", path, strerror(-e));
		unlink(path);
	}
	return e;
}

void session_remove_files(const char *dir, pid_t id, bool with_recording)
{
	char path[PATH_MAX];
	size_t i;

	for (i = 1; i < sizeof(file_suffix) / sizeof(*file_suffix); i++) {
		if (!with_recording && strncmp(file_suffix[i], ".rec", 4) == 0)
			continue;
		snprintf(path, sizeof(path), "%s/%d%s", dir, (int)id, file_suffix[i]);
		unlink(path);
	}
}

/* Whether a socket at path answers. */
static bool socket_answers(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	bool busy;
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path))
		return true; /* cannot tell: keep it */
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	busy = fd < 0 || !connect(fd, (struct sockaddr *)&sa, sizeof(sa)) || errno != ECONNREFUSED;
	if (fd >= 0)
		close(fd);
	return busy;
}

/* Whether session id, of whose files one is in dirfd, still runs. */
static bool session_runs(int dirfd, const char *dir, pid_t id)
{
	char name[64], path[PATH_MAX], line[64] = "";
	unsigned long long start;
	int fd, pid;
	ssize_t n = -1;

	snprintf(name, sizeof(name), "%d.pid", (int)id);
	fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, line, sizeof(line) - 1);
		close(fd);
	}
	if (n > 0 && sscanf(line, "%d %llu", &pid, &start) == 2 && pid == id && start)
		return proc_start(id) == start;
	/* no mark: one setting up, or of an older memtop */
	if (!proc_start(id))
		return false;
	snprintf(path, sizeof(path), "%s/%d.sock", dir, (int)id);
	return access(path, F_OK) || socket_answers(path);
}

/* ID of a session's file name, or 0. */
static pid_t session_file_id(const char *name)
{
	char *end;
	long id;
	size_t i;

	errno = 0;
	id = strtol(name, &end, 10);
	if (end == name || errno || id <= 0 || id > INT32_MAX || name[0] == '+' || name[0] == '-')
		return 0;
	for (i = 0; i < sizeof(file_suffix) / sizeof(*file_suffix); i++)
		if (!strcmp(end, file_suffix[i]))
			return (pid_t)id;
	return 0;
}

int session_sweep(const char *dir, pid_t self,
		  void (*said)(void *ctx, pid_t id, unsigned long long bytes), void *ctx)
{
	pid_t ids[256];
	size_t nids = 0, i, k;
	int dirfd, removed = 0;
	struct dirent *de;
	DIR *d;

	dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dirfd < 0)
		return 0;
	d = fdopendir(dup(dirfd));
	if (!d) {
		close(dirfd);
		return 0;
	}
	while ((de = readdir(d)) && nids < sizeof(ids) / sizeof(*ids)) {
		pid_t id = session_file_id(de->d_name);

		for (i = 0; id && i < nids && ids[i] != id; i++)
			;
		if (id && id != self && i == nids)
			ids[nids++] = id;
	}
	closedir(d);
	for (i = 0; i < nids; i++) {
		unsigned long long bytes = 0;

		if (session_runs(dirfd, dir, ids[i]))
			continue;
		for (k = 0; k < sizeof(file_suffix) / sizeof(*file_suffix); k++) {
			char name[64];
			struct stat st;

			snprintf(name, sizeof(name), "%d%s", (int)ids[i], file_suffix[k]);
			/* only what a session makes: a socket or a regular file */
			if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) ||
			    !(S_ISREG(st.st_mode) || S_ISSOCK(st.st_mode)))
				continue;
			if (!unlinkat(dirfd, name, 0) && S_ISREG(st.st_mode))
				bytes += (unsigned long long)st.st_size;
		}
		removed++;
		if (said)
			said(ctx, ids[i], bytes);
	}
	close(dirfd);
	return removed;
}

/* ---- the thread ------------------------------------------------------------ */

static void segment_close(struct segment *s)
{
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
}

static void viewer_drop(struct session *s, int i, bool too_slow)
{
	close(s->viewers[i]->sock);
	free(s->viewers[i]);
	s->viewers[i] = NULL;
	pthread_mutex_lock(&s->lock);
	s->nviewers--;
	s->dropped += too_slow;
	pthread_mutex_unlock(&s->lock);
}

/* Take what the main thread handed over. */
static bool take_published(struct session *s)
{
	bool stop;

	pthread_mutex_lock(&s->lock);
	if (s->next_prev.fd >= 0) {
		segment_close(&s->prev);
		s->prev = s->next_prev;
		s->next_prev.fd = -1;
	}
	if (s->next_cur.fd >= 0) {
		segment_close(&s->cur);
		s->cur = s->next_cur;
		s->next_cur.fd = -1;
	}
	if (s->cur.fd >= 0 && s->published_segment == s->cur.number)
		s->cur.size = s->cur_size;
	stop = s->stop;
	pthread_mutex_unlock(&s->lock);
	return stop;
}

/* Only memtop's user (root) may watch: the socket's mode says so, the
 * peer's credentials check it. */
static bool peer_allowed(int fd)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);

	return !getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) &&
	       (cred.uid == 0 || cred.uid == geteuid());
}

static void accept_viewers(struct session *s)
{
	int fd;

	while ((fd = accept4(s->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
		struct viewer *v = NULL;
		int i;

		for (i = 0; i < SESSION_MAX_VIEWERS && s->viewers[i]; i++)
			;
		if (i < SESSION_MAX_VIEWERS && peer_allowed(fd))
			v = calloc(1, sizeof(*v));
		if (!v) {
			close(fd); /* the viewer sees an empty stream, and says so */
			continue;
		}
		v->sock = fd;
		/* what a viewer has not read yet: VIEWER_BUF here, as much in the kernel */
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &(int){ VIEWER_BUF }, sizeof(int));
		/* from the oldest segment kept: it opens with the whole state */
		v->segment = s->prev.fd >= 0 ? s->prev.number : s->cur.number;
		s->viewers[i] = v;
		pthread_mutex_lock(&s->lock);
		s->nviewers++;
		pthread_mutex_unlock(&s->lock);
	}
}

/* Fill v's buffer from where it stands. false: it fell behind what the
 * files keep. */
static bool viewer_fill(struct session *s, struct viewer *v)
{
	for (;;) {
		const struct segment *seg = v->segment == s->cur.number ? &s->cur
					    : v->segment == s->prev.number && s->prev.fd >= 0
						    ? &s->prev
						    : NULL;
		ssize_t n;

		if (!seg || seg->fd < 0)
			return false;
		if (v->off < seg->size) {
			size_t want =
				seg->size - v->off < VIEWER_BUF ? seg->size - v->off : VIEWER_BUF;

			n = pread(seg->fd, v->buf, want, (off_t)v->off);
			if (n <= 0)
				return false;
			v->len = (size_t)n;
			v->pos = 0;
			v->off += (__u64)n;
			return true;
		}
		if (seg == &s->cur)
			return true;        /* caught up: nothing to send */
		v->segment = s->cur.number; /* the older segment is done */
		v->off = 0;
	}
}

/* Send what v's socket takes. false: drop it (gone, or too slow). */
static bool viewer_send(struct session *s, struct viewer *v, bool *too_slow)
{
	for (;;) {
		ssize_t n;

		if (v->pos == v->len) {
			v->len = v->pos = 0;
			if (!viewer_fill(s, v)) {
				*too_slow = true;
				return false;
			}
			if (!v->len)
				return true;
		}
		n = send(v->sock, v->buf + v->pos, v->len - v->pos, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return true;
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		v->pos += (size_t)n;
	}
}

/* Does v have bytes to send (so its socket's POLLOUT matters)? */
static bool viewer_pending(const struct session *s, const struct viewer *v)
{
	return v->pos < v->len || v->segment != s->cur.number || v->off < s->cur.size;
}

static void *session_main(void *arg)
{
	struct session *s = arg;

	while (!take_published(s)) {
		struct pollfd pfd[2 + SESSION_MAX_VIEWERS];
		int map[SESSION_MAX_VIEWERS], n = 2, i;

		pfd[0] = (struct pollfd){ .fd = s->listen_fd, .events = POLLIN };
		pfd[1] = (struct pollfd){ .fd = s->wake_fd, .events = POLLIN };
		for (i = 0; i < SESSION_MAX_VIEWERS; i++) {
			struct viewer *v = s->viewers[i];

			if (!v)
				continue;
			/* POLLIN: a viewer that hangs up is seen as readable */
			pfd[n] = (struct pollfd){ .fd = v->sock,
						  .events = POLLIN |
							    (viewer_pending(s, v) ? POLLOUT : 0) };
			map[n - 2] = i;
			n++;
		}
		if (poll(pfd, (nfds_t)n, 1000) < 0 && errno != EINTR)
			break;
		if (pfd[1].revents) {
			__u64 x;

			if (read(s->wake_fd, &x, sizeof(x)) < 0)
				(void)0; /* nonblocking: nothing was pending */
		}
		if (pfd[0].revents)
			accept_viewers(s);
		for (i = 2; i < n; i++) {
			int k = map[i - 2];
			bool too_slow = false;
			char junk[256];

			if (!s->viewers[k] || !pfd[i].revents)
				continue;
			if ((pfd[i].revents & (POLLHUP | POLLERR)) ||
			    ((pfd[i].revents & POLLIN) &&
			     recv(s->viewers[k]->sock, junk, sizeof(junk), MSG_DONTWAIT) == 0)) {
				viewer_drop(s, k, false);
				continue;
			}
			if (!viewer_send(s, s->viewers[k], &too_slow))
				viewer_drop(s, k, too_slow);
		}
		/* new viewers and new bytes: start sending without waiting */
		for (i = 0; i < SESSION_MAX_VIEWERS; i++) {
			bool too_slow = false;

			if (s->viewers[i] && viewer_pending(s, s->viewers[i]) &&
			    !viewer_send(s, s->viewers[i], &too_slow))
				viewer_drop(s, i, too_slow);
		}
	}
	return NULL;
}

/* ---- the main thread's side -------------------------------------------------------- */

/* A file already at path: a socket of ours nobody listens on (a previous
 * run with this ID) is removed; anything else stays and is refused. */
static int clear_stale(const char *path, char *err, size_t errlen)
{
	struct stat st;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd, busy;

	if (lstat(path, &st))
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISSOCK(st.st_mode) || st.st_uid != geteuid()) {
		snprintf(err, errlen, "%.300s exists and is not a socket of memtop's: refused", path);
		return -EEXIST;
	}
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	busy = fd >= 0 && !connect(fd, (struct sockaddr *)&sa, sizeof(sa));
	if (fd >= 0)
		close(fd);
	if (busy) {
		snprintf(err, errlen, "%.300s: another session listens there", path);
		return -EADDRINUSE;
	}
	return unlink(path) ? -errno : 0;
}

static void handover(struct session *s)
{
	__u64 size;
	__u32 number = recorder_segment(s->rec, &size);

	/* under the lock */
	if (number != s->published_segment || (s->next_cur.fd < 0 && s->cur.fd < 0)) {
		struct segment cur = { .fd = -1 }, prev = { .fd = -1 };

		cur.fd = recorder_dup_segment(s->rec, 0, &cur.number, &cur.size);
		prev.fd = recorder_dup_segment(s->rec, 1, &prev.number, &prev.size);
		segment_close(&s->next_cur);
		segment_close(&s->next_prev);
		s->next_cur = cur;
		s->next_prev = prev;
		s->published_segment = number;
	}
	s->cur_size = size;
}

struct session *session_open(const char *dir, pid_t id, struct recorder *rec, char *err, size_t errlen)
{
	struct session *s = calloc(1, sizeof(*s));
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	mode_t old;
	int e;

	if (!s) {
		snprintf(err, errlen, "cannot open the session socket: %s", strerror(errno));
		return NULL;
	}
	s->listen_fd = s->wake_fd = -1;
	s->cur.fd = s->prev.fd = s->next_cur.fd = s->next_prev.fd = -1;
	s->rec = rec;
	pthread_mutex_init(&s->lock, NULL);
	if ((size_t)snprintf(s->path, sizeof(s->path), "%s/%d.sock", dir, (int)id) >=
	    sizeof(s->path)) {
		snprintf(err, errlen, "%.200s: too long a path for a socket", dir);
		goto fail;
	}
	if (session_check_dir(dir, err, errlen) || clear_stale(s->path, err, errlen))
		goto fail_quiet;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", s->path);
	s->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	old = umask(0177); /* the socket is born 0600 */
	e = s->listen_fd < 0 ? -1 : bind(s->listen_fd, (struct sockaddr *)&sa, sizeof(sa));
	umask(old);
	if (e || listen(s->listen_fd, SESSION_MAX_VIEWERS)) {
		snprintf(err, errlen, "cannot listen on %.300s: %s", s->path, strerror(errno));
		goto fail;
	}
	s->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (s->wake_fd < 0) {
		snprintf(err, errlen, "cannot open the session socket: %s", strerror(errno));
		goto fail;
	}
	s->published_segment = (__u32)-1;
	handover(s);
	take_published(s);
	e = pthread_create(&s->thread, NULL, session_main, s);
	if (e) {
		snprintf(err, errlen, "cannot start the session thread: %s", strerror(e));
		goto fail;
	}
	s->running = true;
	return s;
fail:
	if (s->listen_fd >= 0)
		unlink(s->path);
fail_quiet:
	if (s->listen_fd >= 0)
		close(s->listen_fd);
	if (s->wake_fd >= 0)
		close(s->wake_fd);
	segment_close(&s->cur);
	segment_close(&s->prev);
	pthread_mutex_destroy(&s->lock);
	free(s);
	return NULL;
}

void session_publish(struct session *s)
{
	__u64 one = 1;

	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	handover(s);
	pthread_mutex_unlock(&s->lock);
	if (write(s->wake_fd, &one, sizeof(one)) < 0)
		(void)0; /* the counter is full: the thread is being woken anyway */
}

void session_counts(struct session *s, unsigned *viewers, unsigned long *dropped)
{
	pthread_mutex_lock(&s->lock);
	*viewers = s->nviewers;
	*dropped = s->dropped;
	pthread_mutex_unlock(&s->lock);
}

void session_close(struct session *s)
{
	__u64 one = 1;
	int i;

	if (!s)
		return;
	if (s->running) {
		pthread_mutex_lock(&s->lock);
		s->stop = true;
		pthread_mutex_unlock(&s->lock);
		if (write(s->wake_fd, &one, sizeof(one)) < 0)
			(void)0;
		pthread_join(s->thread, NULL);
	}
	for (i = 0; i < SESSION_MAX_VIEWERS; i++)
		if (s->viewers[i]) {
			close(s->viewers[i]->sock);
			free(s->viewers[i]);
		}
	unlink(s->path);
	close(s->listen_fd);
	close(s->wake_fd);
	segment_close(&s->cur);
	segment_close(&s->prev);
	segment_close(&s->next_cur);
	segment_close(&s->next_prev);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

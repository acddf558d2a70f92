// SPDX-License-Identifier: GPL-2.0-only
/*
 * debuginfod_fetch.c - see debuginfod_fetch.h. Owns one table of build IDs
 * asked for (util/hmap), a FIFO of those still to fetch, and the thread
 * that fetches them one at a time through one libdebuginfod client. The
 * thread starts with the first request, with every signal blocked (they
 * belong to the main loop's signalfd). libdebuginfod calls the progress
 * function below between its waits, at least about once a second; it
 * cancels the transfer past the deadline, past the size bound, or when
 * the module is stopping.
 */
#include "stacks/debuginfod_fetch.h"

#include <elfutils/debuginfod.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util/clock.h"
#include "util/hmap.h"

#define FETCH_TIMEOUT_S 30
#define FETCH_MAX_BYTES (2LL << 30) /* elf_file.c's bound on an ELF file */
#define FETCH_MAX_IDS 1024
#define FETCH_ID_MAX 128 /* hex digits; GNU build IDs are 40 */
#define STOP_WAIT_S 3

enum fetch_state { FETCH_QUEUED, FETCH_RUNNING, FETCH_DONE, FETCH_NONE };

struct fetch {
	char *build_id;
	enum fetch_state state;
	int fd; /* FETCH_DONE: the file in libdebuginfod's cache */
	char *path;
	struct fetch *next; /* FETCH_QUEUED: the FIFO */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER;
static struct hmap fetches; /* struct fetch, by build ID */
static struct fetch *queue_head, *queue_tail;
static bool started, stopping;
static pthread_t worker;
static int enabled = -1; /* unknown until first asked */

/* The fetch in flight, for progress() (the worker thread's own). */
static __u64 deadline_ns;

bool debuginfod_fetch_enabled(void)
{
	pthread_mutex_lock(&lock);
	if (enabled < 0) {
		const char *urls = getenv(DEBUGINFOD_URLS_ENV_VAR);

		enabled = urls && urls[strspn(urls, " \t")];
	}
	pthread_mutex_unlock(&lock);
	return enabled;
}

static int progress(debuginfod_client *c, long done, long total)
{
	if (__atomic_load_n(&stopping, __ATOMIC_RELAXED) || clock_mono_ns() > deadline_ns)
		return 1;
	return done > FETCH_MAX_BYTES || total > FETCH_MAX_BYTES;
}

static void *worker_main(void *arg)
{
	debuginfod_client *c = debuginfod_begin();

	if (c) {
		debuginfod_set_progressfn(c, progress);
		debuginfod_set_verbose_fd(c, -1);
	}
	pthread_mutex_lock(&lock);
	for (;;) {
		struct fetch *f;
		char *path = NULL;
		int fd;

		while (!stopping && !queue_head)
			pthread_cond_wait(&wake, &lock);
		if (stopping)
			break;
		f = queue_head;
		queue_head = f->next;
		if (!queue_head)
			queue_tail = NULL;
		f->state = FETCH_RUNNING;
		pthread_mutex_unlock(&lock);

		deadline_ns = clock_mono_ns() + FETCH_TIMEOUT_S * 1000000000ULL;
		fd = c ? debuginfod_find_debuginfo(c, (const unsigned char *)f->build_id, 0, &path)
		       : -ENOENT;

		pthread_mutex_lock(&lock);
		if (fd >= 0) {
			f->fd = fd;
			f->path = path;
			f->state = FETCH_DONE;
		} else {
			free(path);
			f->state = FETCH_NONE;
		}
	}
	for (struct fetch *f = queue_head; f; f = f->next)
		f->state = FETCH_NONE;
	queue_head = queue_tail = NULL;
	pthread_mutex_unlock(&lock);
	if (c)
		debuginfod_end(c);
	return NULL;
}

/* With lock held. */
static int start_worker(void)
{
	sigset_t all, old;
	int err;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&worker, NULL, worker_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err)
		return -err;
	started = true;
	return 0;
}

static __u64 id_hash(const char *id)
{
	__u64 h = 0;

	for (; *id; id++)
		h = hmap_mix(h, (unsigned char)*id);
	return h;
}

static bool fetch_eq(const void *val, const void *key)
{
	return !strcmp(((const struct fetch *)val)->build_id, key);
}

/* The entry for build_id, created and queued when new; NULL when no more
 * can be asked for. With lock held. */
static struct fetch *fetch_lookup(const char *build_id)
{
	__u64 h = id_hash(build_id);
	struct fetch *f = hmap_get(&fetches, h, fetch_eq, build_id);

	if (f || stopping || fetches.len >= FETCH_MAX_IDS)
		return f;
	f = calloc(1, sizeof(*f));
	if (!f || !(f->build_id = strdup(build_id)) || hmap_put(&fetches, h, f)) {
		if (f)
			free(f->build_id);
		free(f);
		return NULL;
	}
	f->fd = -1;
	f->state = FETCH_QUEUED;
	if (!started && start_worker()) {
		f->state = FETCH_NONE;
		return f;
	}
	if (queue_tail)
		queue_tail->next = f;
	else
		queue_head = f;
	queue_tail = f;
	pthread_cond_signal(&wake);
	return f;
}

int debuginfod_fetch_get(const char *build_id, const char **path)
{
	size_t n = build_id ? strlen(build_id) : 0;
	struct fetch *f;
	int ret;

	/* Only hex reaches the servers' URLs and the cache's paths. */
	if (n < 2 || n > FETCH_ID_MAX || strspn(build_id, "0123456789abcdef") != n)
		return -EINVAL;
	if (!debuginfod_fetch_enabled())
		return -ENOENT;
	pthread_mutex_lock(&lock);
	f = fetch_lookup(build_id);
	if (!f || f->state == FETCH_NONE) {
		ret = -ENOENT;
	} else if (f->state != FETCH_DONE) {
		ret = -EAGAIN;
	} else {
		ret = fcntl(f->fd, F_DUPFD_CLOEXEC, 0);
		if (ret < 0)
			ret = -errno;
		else
			*path = f->path;
	}
	pthread_mutex_unlock(&lock);
	return ret;
}

void debuginfod_fetch_stop(void)
{
	struct timespec until;

	pthread_mutex_lock(&lock);
	__atomic_store_n(&stopping, true, __ATOMIC_RELAXED);
	pthread_cond_broadcast(&wake);
	if (!started) {
		pthread_mutex_unlock(&lock);
		return;
	}
	started = false;
	pthread_mutex_unlock(&lock);
	/* A resolver or connect that libdebuginfod cannot interrupt is left
	 * to end with the process. */
	until = clock_wall_deadline(STOP_WAIT_S * 1000000000ULL);
	if (pthread_timedjoin_np(worker, NULL, &until))
		pthread_detach(worker);
}

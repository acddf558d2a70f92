// SPDX-License-Identifier: GPL-2.0-only
/*
 * link_release.c - BPF links released side by side (link_release.h).
 *
 * Owns the queue of one batch: libbpf links and bare link descriptors
 * (uprobe_multi session links, which libbpf 1.1 cannot make). At the end
 * of a batch up to MAX_THREADS threads take links from the queue in turn;
 * each release blocks in the kernel for a grace period, and concurrent
 * releases wait for the same one. A link whose thread cannot be started
 * is released by the caller. The queue grows as needed; if it cannot, the
 * link is released at once (slower, never left attached).
 */
#include "probe/link_release.h"

#include <bpf/libbpf.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "util/grow.h"

#define MAX_THREADS 32

struct queued {
	struct bpf_link *link; /* or NULL, then fd */
	int fd;
};

static struct queued *queue;
static size_t queued, queue_cap, next_to_release;
static int depth;
static pthread_mutex_t queue_lock = PTHREAD_MUTEX_INITIALIZER;

static void release_now(const struct queued *q)
{
	if (q->link)
		bpf_link__destroy(q->link);
	else if (q->fd >= 0)
		close(q->fd);
}

static void enqueue(struct bpf_link *link, int fd)
{
	struct queued q = { link, fd };

	if (!depth || grow_array(&queue, &queue_cap, queued + 1, sizeof(*queue))) {
		release_now(&q);
		return;
	}
	queue[queued++] = q;
}

void link_release(struct bpf_link *link)
{
	if (link)
		enqueue(link, -1);
}

void link_release_fd(int fd)
{
	if (fd >= 0)
		enqueue(NULL, fd);
}

void link_batch_begin(void)
{
	depth++;
}

/* A worker: release queued links until none is left. */
static void *release_some(void *arg)
{
	(void)arg;
	for (;;) {
		struct queued q;

		pthread_mutex_lock(&queue_lock);
		if (next_to_release == queued) {
			pthread_mutex_unlock(&queue_lock);
			return NULL;
		}
		q = queue[next_to_release++];
		pthread_mutex_unlock(&queue_lock);
		release_now(&q);
	}
}

void link_batch_end(void)
{
	pthread_t threads[MAX_THREADS];
	size_t started = 0;

	if (!depth || --depth)
		return;
	next_to_release = 0;
	/* one thread per link, up to MAX_THREADS; the caller is one more */
	while (started + 1 < queued && started < MAX_THREADS &&
	       !pthread_create(&threads[started], NULL, release_some, NULL))
		started++;
	release_some(NULL);
	for (size_t i = 0; i < started; i++)
		pthread_join(threads[i], NULL);
	free(queue);
	queue = NULL;
	queued = queue_cap = next_to_release = 0;
}

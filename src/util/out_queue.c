// SPDX-License-Identifier: GPL-2.0-only
/*
 * out_queue.c - a bounded queue of output chunks and the thread that
 * writes them (out_queue.h). Owns the chunks, the writer thread and the
 * drop count; what the chunks say is the caller's.
 *
 * The writer blocks in write(2) on the caller's descriptor, unchanged (no
 * O_NONBLOCK on a descriptor it may share with a shell); the caller only
 * ever takes the lock to append or drop, so it never waits for the reader.
 * At the end the writer gets wait_ms to flush; a writer still blocked
 * then is detached, and the process exit ends it.
 */
#include "util/out_queue.h"

#include "util/clock.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct chunk {
	char *data;
	size_t len;
	struct chunk *next;
};

struct out_queue {
	int fd;
	size_t max_bytes;
	unsigned int max_chunks, nchunks;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t more; /* to the writer: a chunk, or stop */
	pthread_cond_t idle; /* from the writer: queue empty */
	struct chunk *head, **tail;
	size_t queued; /* bytes in the queue and being written */
	bool stop, closed, dropping, writing;
	unsigned long dropped;
	char *cur; /* the open memory stream's buffer */
	size_t cur_len;
};

static int write_all(int fd, const char *p, size_t len)
{
	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static void *writer(void *arg)
{
	struct out_queue *q = arg;

	pthread_mutex_lock(&q->lock);
	for (;;) {
		struct chunk *c;
		int e;

		while (!q->head && !q->stop) {
			pthread_cond_broadcast(&q->idle);
			pthread_cond_wait(&q->more, &q->lock);
		}
		if (!q->head)
			break;
		c = q->head;
		q->head = c->next;
		if (!q->head)
			q->tail = &q->head;
		q->writing = true;
		pthread_mutex_unlock(&q->lock);
		e = q->closed ? -EPIPE : write_all(q->fd, c->data, c->len);
		pthread_mutex_lock(&q->lock);
		q->writing = false;
		q->queued -= c->len;
		q->nchunks--;
		if (e)
			q->closed = true;
		free(c->data);
		free(c);
	}
	pthread_cond_broadcast(&q->idle);
	pthread_mutex_unlock(&q->lock);
	return NULL;
}

struct out_queue *out_queue_new(int fd, size_t max_bytes, unsigned int max_chunks)
{
	struct out_queue *q = calloc(1, sizeof(*q));
	int e;

	if (!q) {
		errno = ENOMEM;
		return NULL;
	}
	q->fd = fd;
	q->max_bytes = max_bytes;
	q->max_chunks = max_chunks;
	q->tail = &q->head;
	pthread_mutex_init(&q->lock, NULL);
	pthread_cond_init(&q->more, NULL);
	pthread_cond_init(&q->idle, NULL);
	e = pthread_create(&q->thread, NULL, writer, q);
	if (e) {
		free(q);
		errno = e;
		return NULL;
	}
	return q;
}

FILE *out_queue_begin(struct out_queue *q)
{
	q->cur = NULL;
	q->cur_len = 0;
	return open_memstream(&q->cur, &q->cur_len);
}

void out_queue_end(struct out_queue *q, FILE *f)
{
	struct chunk *c;

	if (!f)
		return;
	fclose(f);
	c = q->cur && q->cur_len ? malloc(sizeof(*c)) : NULL;
	pthread_mutex_lock(&q->lock);
	if (!c || q->closed || q->queued + q->cur_len > q->max_bytes || q->nchunks >= q->max_chunks) {
		if (q->cur_len && !q->closed) {
			q->dropped++;
			q->dropping = true;
		}
		pthread_mutex_unlock(&q->lock);
		free(c);
		free(q->cur);
		q->cur = NULL;
		return;
	}
	c->data = q->cur;
	c->len = q->cur_len;
	c->next = NULL;
	*q->tail = c;
	q->tail = &c->next;
	q->queued += c->len;
	q->nchunks++;
	q->dropping = false;
	pthread_cond_signal(&q->more);
	pthread_mutex_unlock(&q->lock);
	q->cur = NULL;
}

bool out_queue_closed(struct out_queue *q)
{
	bool closed;

	pthread_mutex_lock(&q->lock);
	closed = q->closed;
	pthread_mutex_unlock(&q->lock);
	return closed;
}

unsigned long out_queue_dropped(struct out_queue *q, bool *dropping)
{
	unsigned long n;

	pthread_mutex_lock(&q->lock);
	n = q->dropped;
	if (dropping)
		*dropping = q->dropping;
	pthread_mutex_unlock(&q->lock);
	return n;
}

void out_queue_free(struct out_queue *q, int wait_ms)
{
	struct timespec until;
	bool done;

	if (!q)
		return;
	until = clock_wall_deadline((__u64)wait_ms * 1000000ULL);
	pthread_mutex_lock(&q->lock);
	q->stop = true;
	pthread_cond_signal(&q->more);
	while ((q->head || q->writing) &&
	       pthread_cond_timedwait(&q->idle, &q->lock, &until) != ETIMEDOUT)
		;
	done = !q->head && !q->writing;
	pthread_mutex_unlock(&q->lock);
	if (!done) {
		/* blocked on a reader that reads nothing: leave it to exit */
		pthread_detach(q->thread);
		return;
	}
	pthread_join(q->thread, NULL);
	pthread_mutex_destroy(&q->lock);
	pthread_cond_destroy(&q->more);
	pthread_cond_destroy(&q->idle);
	free(q);
}

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * out_queue.h - batch output (-b, --json) that a slow or stalled reader
 * cannot use to stop memtop. Each interval's text is written into memory
 * and handed to a writer thread that owns the real descriptor; when more
 * than max_bytes or max_chunks intervals are waiting (the reader stopped
 * reading), whole intervals are dropped and counted instead of blocking the loop that
 * drains the ring buffer. A reader that went away (EPIPE) is reported,
 * so memtop can end cleanly and still write its exports.
 */
#ifndef MEMTOP_UTIL_OUT_QUEUE_H
#define MEMTOP_UTIL_OUT_QUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct out_queue;

/* Start a writer thread for fd (not closed by the queue), which queues at
 * most max_bytes in at most max_chunks intervals. NULL with errno set. */
struct out_queue *out_queue_new(int fd, size_t max_bytes, unsigned int max_chunks);

/* A memory stream to write one interval's output into. */
FILE *out_queue_begin(struct out_queue *q);
/* Queue what was written to f (closing f), or drop it when the queue is
 * full. */
void out_queue_end(struct out_queue *q, FILE *f);

/* The reader is gone (EPIPE, or another write error): nothing more will
 * be written. */
bool out_queue_closed(struct out_queue *q);
/* Intervals dropped so far, and whether the last one was dropped. */
unsigned long out_queue_dropped(struct out_queue *q, bool *dropping);

/* Write what is queued, waiting at most wait_ms for a slow reader, then
 * stop the thread and free q. */
void out_queue_free(struct out_queue *q, int wait_ms);

#endif /* MEMTOP_UTIL_OUT_QUEUE_H */

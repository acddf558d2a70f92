/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * queue.h - the agent's bounded queue between the JVM's allocating threads
 * (many producers) and its one sender thread (the consumer): a ring of
 * fixed-size cells, each with a sequence number (Dmitry Vyukov's bounded
 * MPMC design). A producer never waits: when the ring is full its push
 * fails and the caller counts a drop. Header-only, C11 atomics, used only
 * by src/jvmti/memtop_jvmti.c.
 */
#ifndef MEMTOP_JVMTI_QUEUE_H
#define MEMTOP_JVMTI_QUEUE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct jq {
	size_t mask;      /* cells - 1; cells is a power of two */
	size_t cell_size; /* bytes of a cell, the sequence number first */
	unsigned char *cells;
	_Alignas(64) _Atomic size_t head; /* next cell a producer claims */
	_Alignas(64) size_t tail;         /* next cell the consumer reads */
};

struct jq_cell {
	_Atomic size_t seq;
	unsigned char data[];
};

static inline struct jq_cell *jq_at(struct jq *q, size_t pos)
{
	return (struct jq_cell *)(q->cells + (pos & q->mask) * q->cell_size);
}

/* cells: a power of two; data_size: the bytes each cell carries. */
static inline int jq_init(struct jq *q, size_t cells, size_t data_size)
{
	size_t i;

	q->mask = cells - 1;
	q->cell_size = (sizeof(struct jq_cell) + data_size + 15) & ~(size_t)15;
	q->cells = calloc(cells, q->cell_size);
	if (!q->cells)
		return -1;
	for (i = 0; i < cells; i++)
		atomic_store_explicit(&jq_at(q, i)->seq, i, memory_order_relaxed);
	atomic_store(&q->head, 0);
	q->tail = 0;
	return 0;
}

/* Copy len bytes (at most the cell's data size) into a free cell. False
 * when the queue is full: nothing waits. */
static inline bool jq_push(struct jq *q, const void *data, size_t len)
{
	size_t pos = atomic_load_explicit(&q->head, memory_order_relaxed);
	struct jq_cell *c;

	for (;;) {
		size_t seq;
		intptr_t dif;

		c = jq_at(q, pos);
		seq = atomic_load_explicit(&c->seq, memory_order_acquire);
		dif = (intptr_t)seq - (intptr_t)pos;
		if (dif == 0) {
			if (atomic_compare_exchange_weak_explicit(&q->head, &pos, pos + 1,
								  memory_order_relaxed,
								  memory_order_relaxed))
				break;
		} else if (dif < 0) {
			return false; /* full */
		} else {
			pos = atomic_load_explicit(&q->head, memory_order_relaxed);
		}
	}
	memcpy(c->data, data, len);
	atomic_store_explicit(&c->seq, pos + 1, memory_order_release);
	return true;
}

/* The oldest filled cell's data, or NULL when none is ready; the consumer
 * calls jq_pop() when done with it. One consumer only. */
static inline const void *jq_peek(struct jq *q)
{
	struct jq_cell *c = jq_at(q, q->tail);
	size_t seq = atomic_load_explicit(&c->seq, memory_order_acquire);

	return seq == q->tail + 1 ? c->data : NULL;
}

static inline void jq_pop(struct jq *q)
{
	struct jq_cell *c = jq_at(q, q->tail);

	atomic_store_explicit(&c->seq, q->tail + q->mask + 1, memory_order_release);
	q->tail++;
}

#endif /* MEMTOP_JVMTI_QUEUE_H */

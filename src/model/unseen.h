/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * unseen.h - never a silent empty table: saying, in words, when a
 * process's memory does not come from the allocator memtop probes. Two
 * cases: its RSS grows steadily while the heap memtop samples explains
 * little of that growth, and it runs a managed runtime whose heap is its
 * own (struct mt_target's runtime fields, set when it is attached).
 */
#ifndef MEMTOP_MODEL_UNSEEN_H
#define MEMTOP_MODEL_UNSEEN_H

#include <stdbool.h>
#include <stddef.h>

#include "model/model.h"

/* Below this share of RSS growth, the heap memtop sees does not explain
 * it. */
#define UNSEEN_EXPLAINS_MAX 0.5
/* ... over at least this much history: the first seconds' fits are too
 * noisy to accuse anything. */
#define UNSEEN_MIN_WINDOW_S 5.0

/* The words for t into buf: the unexplained growth if there is one, else
 * for a Go target watched through its runtime (go_version set) how its
 * heap is seen, or that MemProfileRate 0 means no samples; else the
 * runtime note; false (buf empty) when there is nothing to say. */
bool unseen_describe(const struct mt_target *t, char *buf, size_t len);

/* Whether t's RSS grows while its sampled heap does not explain it. */
bool unseen_growth(const struct mt_target *t);

#endif /* MEMTOP_MODEL_UNSEEN_H */

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ingest_named.h - MT_EV_NAMED records (abi.h): samples whose frames the
 * process's runtime named itself, validated and fed to the model
 * (ingest_record() calls it for that kind).
 */
#ifndef MEMTOP_INGEST_NAMED_H
#define MEMTOP_INGEST_NAMED_H

#include <stddef.h>

#include "model/ingest.h"

/* One MT_EV_NAMED record of size bytes. 0, or -EINVAL for a malformed one
 * (nothing taken from it). */
int ingest_named(struct ingest *in, const void *data, size_t size);

#endif /* MEMTOP_INGEST_NAMED_H */

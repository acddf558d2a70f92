// SPDX-License-Identifier: GPL-2.0-only
/*
 * source.c - the rows of the source table (source.h).
 */
#include "probe/source.h"

extern const struct source_ops source_jvm;

const struct source_ops *const sources[SOURCE_ROWS] = {
	&source_jvm, /* a JVM's Java heap (source_jvm.c, docs/java.md) */
};

// SPDX-License-Identifier: GPL-2.0-only
/*
 * source.c - the rows of the source table (source.h).
 */
#include "probe/source.h"

#include <stdarg.h>
#include <stdio.h>

extern const struct source_ops source_cpython, source_jvm, source_v8, source_device;

const struct source_ops *const sources[SOURCE_ROWS] = {
	&source_cpython, /* CPython's interpreter frames (source_cpython.c, docs/python.md) */
	&source_jvm,     /* a JVM's Java heap (source_jvm.c, docs/java.md) */
	&source_v8,      /* a Node.js process's V8 heap (source_v8.c, docs/node.md) */
	&source_device,  /* device memory (source_device.c, docs/device-memory.md) */
};

void source_say(const struct source_env *env, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (!env->warn)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	env->warn(env->warn_ctx, msg);
}

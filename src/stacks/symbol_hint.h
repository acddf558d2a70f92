/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * symbol_hint.h - what to do about a frame without a symbol: the file is
 * stripped, so say which debug symbols would name it (the Debian package
 * that ships the file, whose -dbgsym package carries them) and where
 * memtop looks for them (the build-ID path under the debug directory).
 */
#ifndef MEMTOP_STACKS_SYMBOL_HINT_H
#define MEMTOP_STACKS_SYMBOL_HINT_H

#include <stdbool.h>
#include <stddef.h>

#include "stacks/frame.h"

/* A one-line hint for f into buf when f has a file but no symbol
 * (MT_FRAME_NOSYM); false, buf empty, for any other frame. The package
 * lookup reads dpkg's file lists once per module and is cached. */
bool symbol_hint(const struct mt_frame *f, char *buf, size_t len);

/* The same, from its parts (for tests): pkg may be NULL (unknown). */
void symbol_hint_format(const char *module, const char *pkg, const char *build_id,
			const char *debug_dir, char *buf, size_t len);

#endif /* MEMTOP_STACKS_SYMBOL_HINT_H */

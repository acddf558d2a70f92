/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * frame_fixture.h - the named frame the model's unit tests build their
 * stacks from: function fn of /usr/bin/app ("app", file app.c) at offset
 * off from 0x400000, its line the offset too, so each frame of a test
 * stack is distinct and readable. Include after util/strpool.h.
 */
#ifndef MEMTOP_TEST_FRAME_FIXTURE_H
#define MEMTOP_TEST_FRAME_FIXTURE_H

#include "model/model.h"
#include "util/strpool.h"

static inline struct mt_frame frame(const char *fn, __u32 off)
{
	struct mt_frame f = { 0 };

	f.addr = 0x400000 + off;
	f.rel_addr = off;
	f.function = strpool_intern(fn);
	f.module = strpool_intern("app");
	f.module_path = strpool_intern("/usr/bin/app");
	f.file = strpool_intern("app.c");
	f.line = off;
	return f;
}

#endif /* MEMTOP_TEST_FRAME_FIXTURE_H */

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * target_fixture.h - a target for a unit test's setup: watched from now
 * through the model's one door (MT_INPUT_WATCHED), and handed back
 * writable so that the test can set what a data source would have
 * reported (comm, counters, ...) without building a report. Tests only:
 * memtop itself reads targets and reports facts.
 */
#ifndef MEMTOP_TEST_TARGET_FIXTURE_H
#define MEMTOP_TEST_TARGET_FIXTURE_H

#include <stdlib.h>

#include "model/model.h"

/* Never NULL: a setup that cannot make its target ends the test. */
static inline struct mt_target *test_target(struct mt_model *m, pid_t pid)
{
	const struct mt_target *t =
		model_apply(m, MT_INPUT_WATCHED(pid)) ? NULL : model_target(m, pid);

	if (!t)
		abort();
	return (struct mt_target *)t;
}

#endif /* MEMTOP_TEST_TARGET_FIXTURE_H */

// SPDX-License-Identifier: GPL-2.0-only
/*
 * fuzz_recording.c - libFuzzer harness for the recording reader
 * (src/record/recording.c, rec_codec.c, replay.c): the bytes of a --replay
 * FILE or of a session's stream (memtop attach), which anyone who can
 * write the file, or who plants a socket, controls.
 *
 * The input is appended in two pieces (as a stream arrives), replayed to
 * its end into the model, trimmed to its last segment as a viewer keeps a
 * stream (replay_trim), then rewound to its middle interval and played
 * to the end again, and the views' queries run on the model it left.
 * Checks the reader's contract: it stops at an error or at the end of the
 * bytes, never stands past the intervals its scan counted nor before the
 * oldest one kept, and a rewind lands where it was asked. Then the same
 * bytes are read as --replay reads a file (replay_set_source) through a
 * window of 1 to 97 bytes, which the frames straddle: it must end where the
 * appended bytes ended, with the same error and count.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "record/replay.h"

static void use_model(struct mt_model *m)
{
	struct mt_site *top[16];
	size_t n, i;
	double absorbed;

	if (!m)
		return;
	n = model_sites_sorted(m, MT_SORT_LEAK, top, 16);
	for (i = 0; i < n; i++)
		model_site_inline_capacity(top[i], 0.9, &absorbed);
	for (i = 0; i < model_target_count(m); i++) {
		char how[160];

		model_end_describe(&model_target_at(m, i)->end, how, sizeof(how));
	}
}

struct mem {
	const uint8_t *d;
	size_t n;
};

static long mem_read_at(void *ctx, void *buf, size_t n, __u64 off)
{
	const struct mem *m = ctx;

	if (off >= m->n)
		return 0;
	if (n > m->n - off)
		n = m->n - off;
	memcpy(buf, m->d + off, n);
	return (long)n;
}

/* The bytes through a source: the same end as appended (at, e, err). */
static void through_source(const uint8_t *data, size_t size, long at, int e, const char *err)
{
	struct mem m = { data, size };
	struct replay_source src = {
		.read_at = mem_read_at, .ctx = &m, .size = size, .window = 1 + size % 97
	};
	struct replay *rp = replay_new();
	char err2[256];
	int e2;

	if (!rp)
		return;
	if (replay_set_source(rp, &src))
		abort();
	while ((e2 = replay_step(rp, err2, sizeof(err2))) == 1)
		;
	if (e2 != e || replay_at(rp) != at || (e < 0 && strcmp(err, err2)))
		abort();
	if (replay_at(rp) > replay_count(rp) - 1)
		abort();
	replay_free(rp);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct replay *rp = replay_new();
	char err[256];
	long mid;
	int e;

	if (!rp)
		return 0;
	replay_append(rp, data, size / 2);
	while ((e = replay_step(rp, err, sizeof(err))) == 1)
		;
	replay_append(rp, data + size / 2, size - size / 2);
	while ((e = replay_step(rp, err, sizeof(err))) == 1)
		;
	if (replay_at(rp) > replay_count(rp) - 1)
		abort();
	if (e < 0 && !memchr(err, '\0', sizeof(err)))
		abort();
	through_source(data, size, replay_at(rp), e, err);
	use_model(replay_model(rp));
	replay_trim(rp, 1, err, sizeof(err));
	if (replay_at(rp) > replay_count(rp) - 1 ||
	    (replay_at(rp) >= 0 && replay_at(rp) < replay_first(rp)))
		abort();
	use_model(replay_model(rp));
	mid = replay_at(rp) / 2;
	if (mid < replay_first(rp))
		mid = replay_first(rp);
	if (replay_at(rp) >= 0) {
		e = replay_rewind(rp, mid, err, sizeof(err));
		if (!e && replay_at(rp) != mid)
			abort();
		while (replay_step(rp, err, sizeof(err)) == 1)
			;
		use_model(replay_model(rp));
	}
	replay_free(rp);
	return 0;
}

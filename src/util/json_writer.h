/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * json_writer.h - streaming JSON writer for memtop's --json lines.
 *
 * Writes one compact JSON value (no spaces, no newline: the caller ends
 * the line) to a FILE * or to a growable memory buffer. The writer puts
 * commas and colons itself and checks the call sequence: a value inside an
 * object needs a key first, keys only go into objects, ends must match
 * begins, nesting stops at JW_MAX_DEPTH. Misuse and I/O failures never
 * abort: they set a sticky error (see jw_error()), after which every call
 * is a no-op, so a caller may write a whole object and check once.
 *
 * Strings: '"' and '\' are escaped, \b \f \n \r \t use their short forms,
 * other bytes below 0x20, DEL and C1 (U+0080-U+009F, so that no control
 * character reaches a terminal showing the line) become \u00XX, other
 * valid UTF-8 is copied through and
 * every byte that is not part of a valid UTF-8 sequence (stray
 * continuation bytes, overlong forms, surrogates, > U+10FFFF, truncated
 * sequences) becomes \ufffd, one per byte. Doubles that are NaN or
 * infinite are written as null; output never depends on the locale.
 *
 * Example:
 *	struct json_writer w;
 *	jw_init(&w, stdout);
 *	jw_object_begin(&w);
 *	jw_key(&w, "pid"); jw_int(&w, 4242);
 *	jw_key(&w, "sites"); jw_array_begin(&w); jw_array_end(&w);
 *	jw_object_end(&w);
 *	if (jw_finish(&w) == 0) putchar('\n');   -> {"pid":4242,"sites":[]}
 */
#ifndef MEMTOP_JSON_WRITER_H
#define MEMTOP_JSON_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>

#include "util/bytebuf.h"

#define JW_MAX_DEPTH 32

/* Embed or put on the stack; the fields are private to json_writer.c. */
struct json_writer {
	FILE *f;            /* sink, or NULL for the memory buffer below */
	struct bytebuf buf; /* memory sink (NUL-terminated) */
	int err;            /* 0 or -errno, sticky */
	int depth;          /* open containers */
	bool key_pending;   /* a key was written, its value is due */
	bool done;          /* a complete top-level value has been written */
	bool is_object[JW_MAX_DEPTH];
	bool nonempty[JW_MAX_DEPTH];
};

/* Write to f (not owned; never closed or flushed by the writer). A NULL f
 * leaves the writer in the -EINVAL error state. */
void jw_init(struct json_writer *w, FILE *f);

/* Write to a memory buffer owned by w; read it with jw_buf(), release it
 * with jw_fini(). */
void jw_init_buf(struct json_writer *w);

/* Release the memory buffer, if any. w may be re-initialised afterwards. */
void jw_fini(struct json_writer *w);

/* Forget the state and error so a new top-level value can be written to
 * the same sink: the next line of JSON lines output. A memory buffer is
 * emptied but keeps its allocation. */
void jw_reset(struct json_writer *w);

/* The memory buffer's text (always NUL-terminated, "" before any output)
 * and, when len is not NULL, its length. NULL for a FILE writer. */
const char *jw_buf(const struct json_writer *w, size_t *len);

/* 0, or the first error: -EINVAL misuse (value without key in an object,
 * key outside an object or twice, mismatched end, a second top-level
 * value, a NULL FILE), -E2BIG nesting deeper than JW_MAX_DEPTH, -ENOMEM,
 * or -EIO when fwrite() failed (what stdio reports only at fflush() or
 * fclose() is the caller's to check). */
int jw_error(const struct json_writer *w);

/* jw_error(), and -EINVAL if the top-level value is not complete yet
 * (open containers, a dangling key, or nothing written). */
int jw_finish(const struct json_writer *w);

void jw_object_begin(struct json_writer *w);
void jw_object_end(struct json_writer *w);
void jw_array_begin(struct json_writer *w);
void jw_array_end(struct json_writer *w);

/* The next member's name; escaped like jw_string(). NULL is misuse. */
void jw_key(struct json_writer *w, const char *key);

/* A NUL-terminated string; NULL writes null. */
void jw_string(struct json_writer *w, const char *s);
/* len bytes of s, which may contain NUL bytes (written as \u0000). */
void jw_stringn(struct json_writer *w, const char *s, size_t len);

void jw_int(struct json_writer *w, __s64 v);
void jw_uint(struct json_writer *w, __u64 v);
/* The first of %.15g, %.16g, %.17g that reads back as exactly v, so
 * "0.1", "3", "1e+300" rather than 0.10000000000000001; NaN and infinities
 * as null; -0 as 0. */
void jw_double(struct json_writer *w, double v);
/* v rounded to decimals (0..17) places, trailing zeros dropped: 2.5 with 2
 * gives "2.5", 2.71828 with 2 gives "2.72", 3.0 with 2 gives "3"; values
 * of 1e15 or more as jw_double(); NaN and infinities as null; -EINVAL for
 * decimals outside 0..17. */
void jw_double_fixed(struct json_writer *w, double v, int decimals);
void jw_bool(struct json_writer *w, bool v);
void jw_null(struct json_writer *w);

#endif /* MEMTOP_JSON_WRITER_H */

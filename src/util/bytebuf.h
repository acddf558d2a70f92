/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * bytebuf.h - the growable byte buffer: bytes appended at the end, the
 * allocation doubled as needed. Errors are sticky: the first failed
 * allocation sets b->err (-ENOMEM) and every later append does nothing, so
 * a writer appends a whole document and checks b->err once at the end.
 *
 * Appends through bytebuf_add() keep a NUL after the bytes (not counted in
 * len), so a buffer of text is a C string (bytebuf_text()). Writers that
 * fill the reserved room themselves (an encoder, read()) advance len.
 */
#ifndef MEMTOP_BYTEBUF_H
#define MEMTOP_BYTEBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

struct bytebuf {
	__u8 *data; /* malloc'ed, or NULL before the first append */
	size_t len;
	size_t cap;
	int err; /* 0 or the first -errno */
};

/* An empty buffer (no allocation until the first append). */
void bytebuf_init(struct bytebuf *b);
/* Free the memory; b is empty and reusable afterwards. */
void bytebuf_fini(struct bytebuf *b);
/* Empty b and forget its error, keeping the allocation. */
void bytebuf_clear(struct bytebuf *b);

/* Room for n more bytes and a NUL after them: true, or false with b->err
 * set (also when it was already set). */
bool bytebuf_reserve(struct bytebuf *b, size_t n);
/* Append p[0..n) and keep a NUL after it. */
void bytebuf_add(struct bytebuf *b, const void *p, size_t n);
void bytebuf_puts(struct bytebuf *b, const char *s);

/* The bytes appended by bytebuf_add() as a C string; "" while empty. */
const char *bytebuf_text(const struct bytebuf *b);

/* Hand the bytes to the caller (who frees them; NULL when nothing was
 * written) and leave b empty. -errno, with nothing handed over and b
 * emptied, if an earlier append failed. */
int bytebuf_take(struct bytebuf *b, __u8 **out, size_t *outlen);

#endif /* MEMTOP_BYTEBUF_H */

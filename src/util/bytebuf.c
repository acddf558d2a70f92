// SPDX-License-Identifier: GPL-2.0-only
/*
 * bytebuf.c - see bytebuf.h. The first allocation holds 256 bytes.
 */
#include "util/bytebuf.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define BYTEBUF_MIN 256

void bytebuf_init(struct bytebuf *b)
{
	b->data = NULL;
	b->len = 0;
	b->cap = 0;
	b->err = 0;
}

void bytebuf_fini(struct bytebuf *b)
{
	free(b->data);
	bytebuf_init(b);
}

void bytebuf_clear(struct bytebuf *b)
{
	b->len = 0;
	b->err = 0;
	if (b->data)
		b->data[0] = '\0';
}

bool bytebuf_reserve(struct bytebuf *b, size_t n)
{
	size_t cap;
	__u8 *data;

	if (b->err)
		return false;
	if (n > SIZE_MAX - b->len - 1) {
		b->err = -ENOMEM;
		return false;
	}
	if (b->len + n + 1 <= b->cap)
		return true;
	cap = b->cap ? b->cap : BYTEBUF_MIN;
	while (cap < b->len + n + 1) {
		if (cap > SIZE_MAX / 2) {
			b->err = -ENOMEM;
			return false;
		}
		cap *= 2;
	}
	data = realloc(b->data, cap);
	if (!data) {
		b->err = -ENOMEM;
		return false;
	}
	b->data = data;
	b->cap = cap;
	return true;
}

void bytebuf_add(struct bytebuf *b, const void *p, size_t n)
{
	if (!bytebuf_reserve(b, n))
		return;
	if (n)
		memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = '\0';
}

void bytebuf_puts(struct bytebuf *b, const char *s)
{
	bytebuf_add(b, s, strlen(s));
}

const char *bytebuf_text(const struct bytebuf *b)
{
	return b->data ? (const char *)b->data : "";
}

int bytebuf_take(struct bytebuf *b, __u8 **out, size_t *outlen)
{
	int err = b->err;

	if (err) {
		bytebuf_fini(b);
		return err;
	}
	*out = b->data;
	*outlen = b->len;
	bytebuf_init(b);
	return 0;
}

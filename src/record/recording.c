// SPDX-License-Identifier: GPL-2.0-only
/*
 * recording.c - the recording format's frames (recording.h): building them
 * into a buffer, and finding and checking them in bytes that may be
 * anything (a file cut by SIGKILL or a full disk, or crafted). Every read
 * is bounded by the bytes given; nothing here trusts a length it has not
 * checked against them.
 */
#include "record/recording.h"

#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define STR_NULL 0xffffffffu

void rec_put_bytes(struct bytebuf *b, const void *d, size_t n)
{
	if (n)
		bytebuf_add(b, d, n);
}

static void put_le(struct bytebuf *b, __u64 v, int bytes)
{
	unsigned char le[8];
	int i;

	for (i = 0; i < bytes; i++)
		le[i] = (unsigned char)(v >> (8 * i));
	rec_put_bytes(b, le, bytes);
}

void rec_put_u8(struct bytebuf *b, __u8 v)
{
	put_le(b, v, 1);
}

void rec_put_u16(struct bytebuf *b, __u16 v)
{
	put_le(b, v, 2);
}

void rec_put_u32(struct bytebuf *b, __u32 v)
{
	put_le(b, v, 4);
}

void rec_put_u64(struct bytebuf *b, __u64 v)
{
	put_le(b, v, 8);
}

void rec_put_f64(struct bytebuf *b, double v)
{
	__u64 u;

	memcpy(&u, &v, sizeof(u));
	put_le(b, u, 8);
}

void rec_put_str(struct bytebuf *b, const char *s)
{
	size_t n;

	if (!s) {
		rec_put_u32(b, STR_NULL);
		return;
	}
	n = strnlen(s, REC_MAX_STRING);
	rec_put_u32(b, (__u32)n);
	rec_put_bytes(b, s, n);
}

size_t rec_frame_begin(struct bytebuf *b, enum rec_type type, __u16 flags)
{
	size_t start = b->len;

	rec_put_u32(b, 0); /* the length, once known */
	rec_put_u16(b, (__u16)type);
	rec_put_u16(b, flags);
	return start;
}

static __u32 get_le(const unsigned char *p, int bytes)
{
	__u32 v = 0;
	int i;

	for (i = 0; i < bytes; i++)
		v |= (__u32)p[i] << (8 * i);
	return v;
}

static __u32 frame_crc(const unsigned char *type_flags_payload, size_t n)
{
	return (__u32)crc32(0L, type_flags_payload, (uInt)n);
}

void rec_frame_end(struct bytebuf *b, size_t start)
{
	size_t payload;
	__u32 crc;
	int i;

	if (b->err || b->len < start + 8)
		return;
	payload = b->len - start - 8;
	if (payload > REC_MAX_PAYLOAD) {
		/* never written: a reader would refuse it */
		b->len = start;
		return;
	}
	for (i = 0; i < 4; i++)
		b->data[start + i] = (unsigned char)(payload >> (8 * i));
	crc = frame_crc(b->data + start + 4, payload + 4);
	rec_put_u32(b, crc);
}

enum rec_scan rec_scan(const unsigned char *d, size_t n, struct rec_frame *f)
{
	__u32 len, type;

	memset(f, 0, sizeof(*f));
	if (n < 8)
		return REC_SCAN_MORE;
	/* no frame starts with the magic: its length would exceed the bound */
	if (!memcmp(d, REC_MAGIC, REC_MAGIC_LEN)) {
		f->size = REC_MAGIC_LEN;
		return REC_SCAN_SEGMENT;
	}
	len = get_le(d, 4);
	type = get_le(d + 4, 2);
	if (len > REC_MAX_PAYLOAD || type < REC_HEADER || type > REC_TYPE_MAX)
		return REC_SCAN_BAD;
	if (n - 8 < (size_t)len + 4)
		return REC_SCAN_MORE;
	if (get_le(d + 8 + len, 4) != frame_crc(d + 4, (size_t)len + 4))
		return REC_SCAN_BAD;
	f->type = (enum rec_type)type;
	f->flags = (__u16)get_le(d + 6, 2);
	f->payload = d + 8;
	f->len = len;
	f->size = (size_t)len + REC_FRAME_OVERHEAD;
	return REC_SCAN_FRAME;
}

void rec_cur_init(struct rec_cur *c, const struct rec_frame *f)
{
	c->p = f->payload;
	c->n = f->len;
	c->bad = false;
}

static const unsigned char *take(struct rec_cur *c, size_t n)
{
	const unsigned char *p = c->p;

	if (c->bad || c->n < n) {
		c->bad = true;
		return NULL;
	}
	c->p += n;
	c->n -= n;
	return p;
}

static __u64 get_n(struct rec_cur *c, int bytes)
{
	const unsigned char *p = take(c, bytes);
	__u64 v = 0;
	int i;

	if (!p)
		return 0;
	for (i = 0; i < bytes; i++)
		v |= (__u64)p[i] << (8 * i);
	return v;
}

__u8 rec_get_u8(struct rec_cur *c)
{
	return (__u8)get_n(c, 1);
}

__u16 rec_get_u16(struct rec_cur *c)
{
	return (__u16)get_n(c, 2);
}

__u32 rec_get_u32(struct rec_cur *c)
{
	return (__u32)get_n(c, 4);
}

__u64 rec_get_u64(struct rec_cur *c)
{
	return get_n(c, 8);
}

double rec_get_f64(struct rec_cur *c)
{
	__u64 u = get_n(c, 8);
	double v;

	memcpy(&v, &u, sizeof(v));
	return v;
}

const char *rec_get_str(struct rec_cur *c, size_t *len)
{
	__u32 n = rec_get_u32(c);
	const char *s;

	*len = 0;
	if (c->bad || n == STR_NULL)
		return NULL;
	if (n > REC_MAX_STRING) {
		c->bad = true;
		return NULL;
	}
	s = (const char *)take(c, n);
	if (!s)
		return NULL;
	if (memchr(s, '\0', n)) {
		c->bad = true;
		return NULL;
	}
	*len = n;
	return s;
}

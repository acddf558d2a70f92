// SPDX-License-Identifier: GPL-2.0-only
/*
 * pbuf.c - protobuf wire encoding into a util/bytebuf (see pbuf.h) and
 * gzip through zlib. Owns no protocol knowledge: field numbers and message
 * layout belong to the caller (pprof.c).
 *
 * Nested messages are written in place and their length prefix inserted
 * afterwards with one memmove of the message body. profile.proto nests at
 * most two levels under the top-level Profile, whose own fields are never
 * length-prefixed, so every byte moves at most twice.
 */
#include "util/pbuf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

size_t pbuf_varint_size(__u64 v)
{
	size_t n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

/* Encode v at p (which has room for 10 bytes); returns the bytes used. */
static size_t put_varint(__u8 *p, __u64 v)
{
	size_t n = 0;

	while (v >= 0x80) {
		p[n++] = (__u8)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (__u8)v;
	return n;
}

void pbuf_varint(struct bytebuf *b, __u64 v)
{
	if (bytebuf_reserve(b, 10))
		b->len += put_varint(b->data + b->len, v);
}

void pbuf_key(struct bytebuf *b, __u32 field, enum pbuf_wire wire)
{
	pbuf_varint(b, ((__u64)field << 3) | wire);
}

void pbuf_uint(struct bytebuf *b, __u32 field, __u64 v)
{
	pbuf_key(b, field, PBUF_VARINT);
	pbuf_varint(b, v);
}

void pbuf_int(struct bytebuf *b, __u32 field, __s64 v)
{
	pbuf_uint(b, field, (__u64)v);
}

void pbuf_bool(struct bytebuf *b, __u32 field, bool v)
{
	pbuf_uint(b, field, v ? 1 : 0);
}

void pbuf_fixed64(struct bytebuf *b, __u32 field, __u64 v)
{
	int i;

	pbuf_key(b, field, PBUF_I64);
	if (!bytebuf_reserve(b, 8))
		return;
	for (i = 0; i < 8; i++)
		b->data[b->len++] = (__u8)(v >> (8 * i));
}

void pbuf_bytes(struct bytebuf *b, __u32 field, const void *p, size_t n)
{
	pbuf_key(b, field, PBUF_LEN);
	pbuf_varint(b, n);
	if (n && bytebuf_reserve(b, n)) {
		memcpy(b->data + b->len, p, n);
		b->len += n;
	}
}

void pbuf_string(struct bytebuf *b, __u32 field, const char *s)
{
	pbuf_bytes(b, field, s ? s : "", s ? strlen(s) : 0);
}

void pbuf_packed_uint(struct bytebuf *b, __u32 field, const __u64 *v, size_t n)
{
	size_t i, size = 0;

	if (!n)
		return;
	for (i = 0; i < n; i++)
		size += pbuf_varint_size(v[i]);
	pbuf_key(b, field, PBUF_LEN);
	pbuf_varint(b, size);
	if (!bytebuf_reserve(b, size))
		return;
	for (i = 0; i < n; i++)
		b->len += put_varint(b->data + b->len, v[i]);
}

void pbuf_packed_int(struct bytebuf *b, __u32 field, const __s64 *v, size_t n)
{
	/* int64 is the two's complement bit pattern as a uint64 varint */
	pbuf_packed_uint(b, field, (const __u64 *)v, n);
}

size_t pbuf_msg_begin(struct bytebuf *b, __u32 field)
{
	pbuf_key(b, field, PBUF_LEN);
	return b->len;
}

void pbuf_msg_end(struct bytebuf *b, size_t mark)
{
	size_t body, k;

	if (b->err)
		return;
	body = b->len - mark;
	k = pbuf_varint_size(body);
	if (!bytebuf_reserve(b, k))
		return;
	memmove(b->data + mark + k, b->data + mark, body);
	put_varint(b->data + mark, body);
	b->len += k;
}

int pbuf_gzip(const void *in, size_t len, __u8 **out, size_t *outlen)
{
	z_stream zs;
	size_t cap;
	__u8 *buf;
	int rc;

	memset(&zs, 0, sizeof(zs));
	/* windowBits 15 + 16: a gzip header and trailer instead of zlib's */
	if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) !=
	    Z_OK)
		return -ENOMEM;
	cap = deflateBound(&zs, len);
	buf = malloc(cap ? cap : 1);
	if (!buf) {
		deflateEnd(&zs);
		return -ENOMEM;
	}
	/* deflateBound() is an upper bound for one Z_FINISH call, but avail_in
	 * and avail_out are 32-bit: feed the input in slices. */
	zs.next_in = (Bytef *)in;
	zs.next_out = buf;
	do {
		size_t in_left = len - (size_t)((const __u8 *)zs.next_in - (const __u8 *)in);
		size_t out_left = cap - (size_t)(zs.next_out - buf);

		zs.avail_in = in_left > 0x40000000 ? 0x40000000 : (uInt)in_left;
		zs.avail_out = out_left > 0x40000000 ? 0x40000000 : (uInt)out_left;
		rc = deflate(&zs, zs.avail_in == in_left ? Z_FINISH : Z_NO_FLUSH);
	} while (rc == Z_OK);
	if (rc != Z_STREAM_END) {
		deflateEnd(&zs);
		free(buf);
		return -EIO;
	}
	*outlen = (size_t)(zs.next_out - buf);
	*out = buf;
	deflateEnd(&zs);
	return 0;
}

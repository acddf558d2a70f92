/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * pbdec.h - a minimal protobuf wire reader for the unit tests, written
 * from the protobuf encoding spec and sharing no code with src/pbuf.c, so
 * round-trip tests check the encoder against an independent reading.
 * Header-only (static functions): include it from one test file each.
 */
#ifndef MEMTOP_TEST_PBDEC_H
#define MEMTOP_TEST_PBDEC_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <zlib.h>

struct pbdec {
	const uint8_t *p;
	const uint8_t *end;
};

/* One field as read: its number, wire type and either the scalar (varint,
 * fixed64, fixed32) or the payload span (length-delimited). */
struct pbfield {
	uint32_t num;
	int wire;
	uint64_t v;
	const uint8_t *data;
	size_t len;
};

static inline struct pbdec pbdec_of(const void *p, size_t len)
{
	struct pbdec d = { (const uint8_t *)p, (const uint8_t *)p + len };

	return d;
}

/* 0 on success, -1 on truncated or over-long input. */
static inline int pbdec_varint(struct pbdec *d, uint64_t *out)
{
	uint64_t v = 0;
	int shift;

	for (shift = 0; shift < 70; shift += 7) {
		uint8_t byte;

		if (d->p >= d->end)
			return -1;
		byte = *d->p++;
		v |= (uint64_t)(byte & 0x7f) << shift;
		if (!(byte & 0x80)) {
			*out = v;
			return 0;
		}
	}
	return -1;
}

/* 1: a field was read into f; 0: end of input; -1: malformed. */
static inline int pbdec_next(struct pbdec *d, struct pbfield *f)
{
	uint64_t key, n;
	int i;

	if (d->p == d->end)
		return 0;
	if (pbdec_varint(d, &key))
		return -1;
	f->num = (uint32_t)(key >> 3);
	f->wire = (int)(key & 7);
	f->data = NULL;
	f->len = 0;
	f->v = 0;
	switch (f->wire) {
	case 0:
		return pbdec_varint(d, &f->v) ? -1 : 1;
	case 1:
	case 5:
		n = f->wire == 1 ? 8 : 4;
		if ((size_t)(d->end - d->p) < n)
			return -1;
		for (i = 0; i < (int)n; i++)
			f->v |= (uint64_t)d->p[i] << (8 * i);
		d->p += n;
		return 1;
	case 2:
		if (pbdec_varint(d, &n) || n > (uint64_t)(d->end - d->p))
			return -1;
		f->data = d->p;
		f->len = (size_t)n;
		d->p += n;
		return 1;
	default:
		return -1;
	}
}

/* Values of a repeated integer field, packed (wire 2) or not (wire 0):
 * appends to out[*n] (at most max). 0 or -1. */
static inline int pbdec_ints(const struct pbfield *f, uint64_t *out, size_t *n, size_t max)
{
	struct pbdec d;

	if (f->wire == 0) {
		if (*n >= max)
			return -1;
		out[(*n)++] = f->v;
		return 0;
	}
	if (f->wire != 2)
		return -1;
	d = pbdec_of(f->data, f->len);
	while (d.p < d.end) {
		if (*n >= max || pbdec_varint(&d, &out[*n]))
			return -1;
		(*n)++;
	}
	return 0;
}

/* gunzip in[0..len) into a malloc'ed buffer. 0 or -1. */
static inline int pbdec_gunzip(const void *in, size_t len, uint8_t **out, size_t *outlen)
{
	z_stream zs = { 0 };
	size_t cap = len * 4 + 64;
	uint8_t *buf = malloc(cap);
	int rc;

	if (!buf || inflateInit2(&zs, 15 + 16) != Z_OK) {
		free(buf);
		return -1;
	}
	zs.next_in = (Bytef *)in;
	zs.avail_in = (uInt)len;
	for (;;) {
		zs.next_out = buf + zs.total_out;
		zs.avail_out = (uInt)(cap - zs.total_out);
		rc = inflate(&zs, Z_NO_FLUSH);
		if (rc == Z_STREAM_END)
			break;
		if (rc != Z_OK && rc != Z_BUF_ERROR) {
			inflateEnd(&zs);
			free(buf);
			return -1;
		}
		if (zs.avail_out == 0) {
			uint8_t *nb = realloc(buf, cap * 2);

			if (!nb) {
				inflateEnd(&zs);
				free(buf);
				return -1;
			}
			buf = nb;
			cap *= 2;
		} else if (zs.avail_in == 0) {
			inflateEnd(&zs); /* truncated stream */
			free(buf);
			return -1;
		}
	}
	*outlen = zs.total_out;
	*out = buf;
	inflateEnd(&zs);
	return 0;
}

#endif /* MEMTOP_TEST_PBDEC_H */

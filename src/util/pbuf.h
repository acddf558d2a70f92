/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * pbuf.h - protocol buffers wire encoder into a growable byte buffer
 * (util/bytebuf.h), and gzip of a finished buffer. Enough for
 * profile.proto: varint, 64-bit integers, strings/bytes, packed repeated
 * integers and nested messages.
 *
 * The buffer's errors are sticky: the first failed allocation sets b->err
 * (-ENOMEM) and every following call does nothing, so an encoder writes a
 * whole message and checks b->err once at the end.
 */
#ifndef MEMTOP_PBUF_H
#define MEMTOP_PBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "util/bytebuf.h"

enum pbuf_wire {
	PBUF_VARINT = 0,
	PBUF_I64 = 1,
	PBUF_LEN = 2,
	PBUF_I32 = 5,
};

/* Number of bytes the varint encoding of v takes (1..10). */
size_t pbuf_varint_size(__u64 v);
void pbuf_varint(struct bytebuf *b, __u64 v);
/* Field key: (field << 3) | wire type. */
void pbuf_key(struct bytebuf *b, __u32 field, enum pbuf_wire wire);

/* Scalar fields. They are always written, zero included: proto3 readers
 * treat a present zero like an absent field; skip zeros in the caller to
 * save bytes. Negative int64 values take ten bytes, as protobuf says. */
void pbuf_uint(struct bytebuf *b, __u32 field, __u64 v);
void pbuf_int(struct bytebuf *b, __u32 field, __s64 v);
void pbuf_bool(struct bytebuf *b, __u32 field, bool v);
void pbuf_fixed64(struct bytebuf *b, __u32 field, __u64 v);
void pbuf_bytes(struct bytebuf *b, __u32 field, const void *p, size_t n);
/* s may be NULL: written as "". */
void pbuf_string(struct bytebuf *b, __u32 field, const char *s);

/* Packed repeated fields; nothing is written when n == 0. */
void pbuf_packed_uint(struct bytebuf *b, __u32 field, const __u64 *v, size_t n);
void pbuf_packed_int(struct bytebuf *b, __u32 field, const __s64 *v, size_t n);

/* Nested message: pbuf_msg_begin() writes the key and returns a mark,
 * the caller writes the fields, pbuf_msg_end(mark) inserts the length.
 * Marks nest (end inner messages before outer ones). */
size_t pbuf_msg_begin(struct bytebuf *b, __u32 field);
void pbuf_msg_end(struct bytebuf *b, size_t mark);

/* gzip (RFC 1952) in[0..len) into a malloc'ed *out. 0 or -errno. */
int pbuf_gzip(const void *in, size_t len, __u8 **out, size_t *outlen);

#endif /* MEMTOP_PBUF_H */

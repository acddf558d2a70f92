/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * pbuf.h - protocol buffers wire encoder into a growable byte buffer, and
 * gzip of a finished buffer. Enough for profile.proto: varint, 64-bit
 * integers, strings/bytes, packed repeated integers and nested messages.
 *
 * Errors are sticky: the first failed allocation sets b->err (-ENOMEM) and
 * every following call does nothing, so an encoder writes a whole message and
 * checks b->err once at the end.
 */
#ifndef MEMTOP_PBUF_H
#define MEMTOP_PBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

enum pbuf_wire {
	PBUF_VARINT = 0,
	PBUF_I64 = 1,
	PBUF_LEN = 2,
	PBUF_I32 = 5,
};

struct pbuf {
	__u8 *data;
	size_t len;
	size_t cap;
	int err; /* 0 or the first -errno */
};

/* An empty buffer (no allocation until the first write). */
void pbuf_init(struct pbuf *b);
/* Free the memory; b is empty and reusable afterwards. */
void pbuf_fini(struct pbuf *b);
/* Hand the bytes to the caller (who frees them) and leave b empty.
 * -errno (and nothing handed over) if an earlier call failed. */
int pbuf_take(struct pbuf *b, __u8 **out, size_t *outlen);

/* Number of bytes the varint encoding of v takes (1..10). */
size_t pbuf_varint_size(__u64 v);
void pbuf_varint(struct pbuf *b, __u64 v);
/* Field key: (field << 3) | wire type. */
void pbuf_key(struct pbuf *b, __u32 field, enum pbuf_wire wire);

/* Scalar fields. They are always written, zero included: proto3 readers
 * treat a present zero like an absent field; skip zeros in the caller to
 * save bytes. Negative int64 values take ten bytes, as protobuf says. */
void pbuf_uint(struct pbuf *b, __u32 field, __u64 v);
void pbuf_int(struct pbuf *b, __u32 field, __s64 v);
void pbuf_bool(struct pbuf *b, __u32 field, bool v);
void pbuf_fixed64(struct pbuf *b, __u32 field, __u64 v);
void pbuf_bytes(struct pbuf *b, __u32 field, const void *p, size_t n);
/* s may be NULL: written as "". */
void pbuf_string(struct pbuf *b, __u32 field, const char *s);

/* Packed repeated fields; nothing is written when n == 0. */
void pbuf_packed_uint(struct pbuf *b, __u32 field, const __u64 *v, size_t n);
void pbuf_packed_int(struct pbuf *b, __u32 field, const __s64 *v, size_t n);

/* Nested message: pbuf_msg_begin() writes the key and returns a mark,
 * the caller writes the fields, pbuf_msg_end(mark) inserts the length.
 * Marks nest (end inner messages before outer ones). */
size_t pbuf_msg_begin(struct pbuf *b, __u32 field);
void pbuf_msg_end(struct pbuf *b, size_t mark);

/* gzip (RFC 1952) in[0..len) into a malloc'ed *out. 0 or -errno. */
int pbuf_gzip(const void *in, size_t len, __u8 **out, size_t *outlen);

#endif /* MEMTOP_PBUF_H */

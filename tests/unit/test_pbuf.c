// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_pbuf.c - the protobuf encoder against the byte examples of the
 * protobuf encoding guide and against an independent reader (pbdec.h):
 * encode, decode, compare. gzip output is inflated by zlib and compared.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/pbuf.h"
#include "pbdec.h"

static void test_spec_examples(void **state)
{
	/* "A simple message": field 1 = 150 is 08 96 01 */
	static const __u8 varint150[] = { 0x08, 0x96, 0x01 };
	/* field 2 = "testing" is 12 07 74 65 73 74 69 6e 67 */
	static const __u8 testing[] = { 0x12, 0x07, 't', 'e', 's', 't', 'i', 'n', 'g' };
	/* field 3 = message { field 1 = 150 } is 1a 03 08 96 01 */
	static const __u8 nested[] = { 0x1a, 0x03, 0x08, 0x96, 0x01 };
	/* packed field 4 = [3, 270, 86942] is 22 06 03 8e 02 9e a7 05 */
	static const __u8 packed[] = { 0x22, 0x06, 0x03, 0x8e, 0x02, 0x9e, 0xa7, 0x05 };
	static const __u64 packed_v[] = { 3, 270, 86942 };
	struct bytebuf b;
	size_t m;

	bytebuf_init(&b);
	pbuf_uint(&b, 1, 150);
	assert_int_equal(b.len, sizeof(varint150));
	assert_memory_equal(b.data, varint150, sizeof(varint150));

	b.len = 0;
	pbuf_string(&b, 2, "testing");
	assert_int_equal(b.len, sizeof(testing));
	assert_memory_equal(b.data, testing, sizeof(testing));

	b.len = 0;
	m = pbuf_msg_begin(&b, 3);
	pbuf_uint(&b, 1, 150);
	pbuf_msg_end(&b, m);
	assert_int_equal(b.len, sizeof(nested));
	assert_memory_equal(b.data, nested, sizeof(nested));

	b.len = 0;
	pbuf_packed_uint(&b, 4, packed_v, 3);
	assert_int_equal(b.len, sizeof(packed));
	assert_memory_equal(b.data, packed, sizeof(packed));
	assert_int_equal(b.err, 0);
	bytebuf_fini(&b);
}

static void test_varint_sizes(void **state)
{
	static const struct {
		__u64 v;
		size_t size;
	} cases[] = {
		{ 0, 1 },          { 127, 1 },         { 128, 2 },
		{ 16383, 2 },      { 16384, 3 },       { (1ULL << 35) - 1, 5 },
		{ 1ULL << 35, 6 }, { 1ULL << 63, 10 }, { UINT64_MAX, 10 },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct bytebuf b;
		struct pbdec d;
		uint64_t got;

		assert_int_equal(pbuf_varint_size(cases[i].v), cases[i].size);
		bytebuf_init(&b);
		pbuf_varint(&b, cases[i].v);
		assert_int_equal(b.len, cases[i].size);
		d = pbdec_of(b.data, b.len);
		assert_int_equal(pbdec_varint(&d, &got), 0);
		assert_true(got == cases[i].v);
		assert_ptr_equal(d.p, d.end);
		bytebuf_fini(&b);
	}
}

/* Every field kind, nested two levels deep with a body longer than 127
 * bytes (a two-byte length prefix), read back field by field. */
static void test_round_trip(void **state)
{
	static const __s64 ints[] = { 0, 1, -1, INT64_MIN, INT64_MAX, 300 };
	char big[300];
	struct bytebuf b;
	struct pbdec d, inner, innermost;
	struct pbfield f;
	uint64_t vals[16];
	size_t n = 0, m1, m2;
	__u8 *out;
	size_t outlen;

	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	bytebuf_init(&b);
	pbuf_uint(&b, 1, 0);
	pbuf_int(&b, 2, -2);
	pbuf_bool(&b, 3, true);
	pbuf_fixed64(&b, 4, 0x0102030405060708ULL);
	pbuf_string(&b, 5, NULL);
	m1 = pbuf_msg_begin(&b, 6);
	pbuf_string(&b, 1, big);
	m2 = pbuf_msg_begin(&b, 2);
	pbuf_packed_int(&b, 1, ints, 6);
	pbuf_msg_end(&b, m2);
	pbuf_uint(&b, 3, 536870911); /* field after a nested message */
	pbuf_msg_end(&b, m1);
	pbuf_uint(&b, 536870911, 7);      /* the largest field number */
	pbuf_packed_uint(&b, 8, NULL, 0); /* writes nothing */
	assert_int_equal(bytebuf_take(&b, &out, &outlen), 0);
	assert_null(b.data);

	d = pbdec_of(out, outlen);
	assert_int_equal(pbdec_next(&d, &f), 1);
	assert_true(f.num == 1 && f.wire == 0 && f.v == 0);
	assert_int_equal(pbdec_next(&d, &f), 1);
	assert_true(f.num == 2 && f.wire == 0 && (int64_t)f.v == -2);
	assert_int_equal(pbdec_next(&d, &f), 1);
	assert_true(f.num == 3 && f.v == 1);
	assert_int_equal(pbdec_next(&d, &f), 1);
	assert_true(f.num == 4 && f.wire == 1 && f.v == 0x0102030405060708ULL);
	assert_int_equal(pbdec_next(&d, &f), 1);
	assert_true(f.num == 5 && f.wire == 2 && f.len == 0);

	assert_int_equal(pbdec_next(&d, &f), 1);
	assert_true(f.num == 6 && f.wire == 2);
	inner = pbdec_of(f.data, f.len);
	assert_int_equal(pbdec_next(&inner, &f), 1);
	assert_true(f.num == 1 && f.len == strlen(big));
	assert_memory_equal(f.data, big, f.len);
	assert_int_equal(pbdec_next(&inner, &f), 1);
	assert_true(f.num == 2 && f.wire == 2);
	innermost = pbdec_of(f.data, f.len);
	assert_int_equal(pbdec_next(&innermost, &f), 1);
	assert_int_equal(pbdec_ints(&f, vals, &n, 16), 0);
	assert_int_equal(n, 6);
	for (n = 0; n < 6; n++)
		assert_true((int64_t)vals[n] == ints[n]);
	assert_int_equal(pbdec_next(&innermost, &f), 0);
	assert_int_equal(pbdec_next(&inner, &f), 1);
	assert_true(f.num == 3 && f.v == 536870911);
	assert_int_equal(pbdec_next(&inner, &f), 0);

	assert_int_equal(pbdec_next(&d, &f), 1);
	assert_true(f.num == 536870911 && f.v == 7);
	assert_int_equal(pbdec_next(&d, &f), 0);
	free(out);
}

/* Many nested messages: each one's length prefix is right wherever the
 * buffer had to grow. */
static void test_many_messages(void **state)
{
	struct bytebuf b;
	struct pbdec d;
	struct pbfield f;
	int i, count = 0;

	bytebuf_init(&b);
	for (i = 0; i < 5000; i++) {
		size_t m = pbuf_msg_begin(&b, 2);

		pbuf_uint(&b, 1, (__u64)i * 1000003);
		pbuf_string(&b, 2, i % 2 ? "odd" : "even, and longer");
		pbuf_msg_end(&b, m);
	}
	assert_int_equal(b.err, 0);
	d = pbdec_of(b.data, b.len);
	while (pbdec_next(&d, &f) == 1) {
		struct pbdec in = pbdec_of(f.data, f.len);
		struct pbfield g;

		assert_int_equal(f.num, 2);
		assert_int_equal(pbdec_next(&in, &g), 1);
		assert_true(g.v == (uint64_t)count * 1000003);
		assert_int_equal(pbdec_next(&in, &g), 1);
		assert_int_equal(g.len, count % 2 ? 3 : 16);
		assert_int_equal(pbdec_next(&in, &g), 0);
		count++;
	}
	assert_ptr_equal(d.p, d.end);
	assert_int_equal(count, 5000);
	bytebuf_fini(&b);
}

static void test_sticky_error(void **state)
{
	struct bytebuf b;
	__u8 *out = (__u8 *)"unchanged";
	size_t len = 99;

	bytebuf_init(&b);
	b.err = -ENOMEM; /* as after a failed realloc */
	pbuf_uint(&b, 1, 5);
	pbuf_string(&b, 2, "x");
	pbuf_msg_end(&b, pbuf_msg_begin(&b, 3));
	assert_int_equal(b.len, 0);
	assert_int_equal(bytebuf_take(&b, &out, &len), -ENOMEM);
	assert_string_equal((const char *)out, "unchanged");
	assert_int_equal(len, 99);
	assert_int_equal(b.err, 0); /* reset by take */
}

static void test_gzip(void **state)
{
	size_t n = 200000, i, len, plain_len;
	__u8 *in = malloc(n), *gz = NULL, *plain = NULL;

	assert_non_null(in);
	for (i = 0; i < n; i++)
		in[i] = (__u8)((i * 2654435761u) >> 13); /* poorly compressible */
	assert_int_equal(pbuf_gzip(in, n, &gz, &len), 0);
	assert_true(len > 18);
	assert_int_equal(gz[0], 0x1f); /* gzip magic, RFC 1952 */
	assert_int_equal(gz[1], 0x8b);
	assert_int_equal(gz[2], 8); /* deflate */
	assert_int_equal(pbdec_gunzip(gz, len, &plain, &plain_len), 0);
	assert_int_equal(plain_len, n);
	assert_memory_equal(plain, in, n);
	free(plain);
	free(gz);

	/* empty input is still a valid gzip stream */
	assert_int_equal(pbuf_gzip("", 0, &gz, &len), 0);
	assert_int_equal(pbdec_gunzip(gz, len, &plain, &plain_len), 0);
	assert_int_equal(plain_len, 0);
	free(plain);
	free(gz);
	free(in);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_spec_examples), cmocka_unit_test(test_varint_sizes),
		cmocka_unit_test(test_round_trip),    cmocka_unit_test(test_many_messages),
		cmocka_unit_test(test_sticky_error),  cmocka_unit_test(test_gzip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * fuzz_probe_place.c - libFuzzer harness for the probe-placement decoder
 * (src/probe/probe_place.c): the bytes of a function as an ELF file a
 * target maps gives them. Input: one flag byte (bit 0: need_return, bits
 * 1-3: nargs, 7 meaning an invalid count), the symbol size as 16 bits
 * little-endian (0: the code's length), then the code. Checks the
 * contract: the length decoder at every byte offset yields 1..15 bytes
 * inside the buffer; the chosen offset is an instruction boundary inside
 * the function; with need_return it is in entry state, where the return
 * address is at [rsp]; why is a string.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "probe/probe_place.h"

#define HDR 3

/* Whether off is reached by length-decoding from 0. */
static bool on_boundary(const __u8 *code, size_t limit, __u32 off)
{
	struct probe_insn in;
	size_t at = 0;

	while (at < off && at < limit && !probe_insn_decode(code + at, limit - at, &in))
		at += in.len;
	return at == off;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct probe_place out;
	struct probe_insn in;
	const __u8 *code;
	unsigned int nargs;
	bool need_return;
	size_t len, limit;
	__u32 func_size;
	int r;

	if (size < HDR)
		return 0;
	need_return = data[0] & 1;
	nargs = (data[0] >> 1) & 7;
	func_size = (__u32)data[1] | (__u32)data[2] << 8;
	code = data + HDR;
	len = size - HDR;
	if (!func_size)
		func_size = (__u32)len;
	limit = len < func_size ? len : func_size;

	for (size_t at = 0; at < len; at++) {
		r = probe_insn_decode(code + at, len - at, &in);
		if (!r && (in.len < 1 || in.len > PROBE_INSN_MAX || in.len > len - at))
			abort();
	}

	memset(&out, 0xa5, sizeof(out));
	r = probe_place_choose_nargs(code, len, func_size, need_return, nargs, &out);
	if (nargs > PROBE_MAX_ARGS) {
		if (r != -EINVAL)
			abort();
		return 0;
	}
	if (r || out.reason > PLACE_LEAVES_ENTRY)
		abort();
	if (out.reason == PLACE_FOUND ? !out.emulated : out.offset != 0)
		abort();
	if (out.offset && (out.offset >= limit || !on_boundary(code, limit, out.offset)))
		abort();
	if (need_return && !out.entry_state)
		abort();
	if (out.entry_state && out.ra_off != 0)
		abort(); /* entry state: the return address is at [rsp] */
	probe_place_choose(code, len, func_size, need_return, nargs != 0, &out);
	return 0;
}

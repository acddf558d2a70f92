// SPDX-License-Identifier: GPL-2.0-only
/*
 * fuzz_gopclntab.c - libFuzzer harness for the Go symbol table parser
 * (src/stacks/go_pclntab.c): the bytes of a .gopclntab section, from a
 * target's file, in a buffer of exactly their size. Every lookup the
 * symbolizer and the probe placement make: by address across the text
 * (entries of the table's first functions, and a sweep), by name. Checks
 * that a function found contains the address, with a name inside the
 * buffer, and that a function found by name is found again by address.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "stacks/go_pclntab.h"

static void check_in(const uint8_t *buf, size_t len, const char *s)
{
	if (s && (s < (const char *)buf || s >= (const char *)buf + len ||
		  !memchr(s, '\0', len - (size_t)(s - (const char *)buf))))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct go_pclntab t;
	struct go_pc_info pi;
	__u64 entry, end;
	uint8_t *buf = malloc(size ? size : 1);

	if (!buf)
		abort();
	memcpy(buf, data, size);
	if (go_pclntab_init(&t, buf, size, 0x401000)) {
		free(buf);
		return 0;
	}
	for (__u64 k = 0; k < 64; k++) {
		__u64 pc = t.text_start + k * k * 7;

		if (go_pclntab_lookup(&t, pc, &pi))
			continue;
		if (!pi.function || pc < pi.entry || pc >= pi.end)
			abort();
		check_in(buf, size, pi.function);
		check_in(buf, size, pi.file);
	}
	if (!go_pclntab_lookup(&t, t.text_start, &pi) &&
	    !go_pclntab_find(&t, pi.function, &entry, &end)) {
		struct go_pc_info again;

		if (go_pclntab_lookup(&t, entry, &again) || again.entry != entry)
			abort();
	}
	go_pclntab_find(&t, "main.main", &entry, &end);
	free(buf);
	return 0;
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * fuzz_demangle.c - libFuzzer harness for symbol demangling
 * (src/stacks/demangle.c over libiberty's cplus_demangle): every name in
 * a target's symbol tables goes through it. The input is one name (up to
 * its first NUL). Checks the contract: a string back, the same one for
 * the same name (interned), the name itself when it is not mangled (or,
 * once the string pool is full, its overflow marker).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "stacks/demangle.h"
#include "util/strpool.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *name = malloc(size + 1);
	const char *d;

	if (!name)
		abort();
	memcpy(name, data, size);
	name[size] = '\0';
	d = demangle_name(name);
	/* past the string pool's bound every new name is STRPOOL_OVERFLOW */
	if (!d || d != demangle_name(name) ||
	    (name[0] != '_' && strcmp(d, name) && strcmp(d, STRPOOL_OVERFLOW)))
		abort();
	free(name);
	return 0;
}

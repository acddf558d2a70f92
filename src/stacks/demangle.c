// SPDX-License-Identifier: GPL-2.0-only
/*
 * demangle.c - symbol name demangling. Owns nothing: every result is
 * interned. libiberty's cplus_demangle is the demangler binutils (nm -C,
 * addr2line -C) and gdb use; in its default "auto" style it handles the
 * Itanium C++ ABI (_Z, including clone suffixes such as ".isra.0"), Rust
 * (legacy _ZN...17h<hash>E and v0 _R) and D (_D), where __cxa_demangle
 * knows C++ only and would pull libstdc++ into a C program.
 */
#include "stacks/demangle.h"

#include <libiberty/demangle.h>
#include <stdlib.h>

#include "util/strpool.h"

const char *demangle_name(const char *name)
{
	const char *ret;
	char *d;

	if (!name)
		return NULL;
	/* Every mangling scheme demangled here starts with '_'. */
	if (name[0] != '_')
		return strpool_intern(name);
	d = cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI);
	if (!d)
		return strpool_intern(name);
	ret = strpool_intern(d);
	free(d);
	return ret;
}

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * demangle.h - C++ (Itanium ABI), Rust and D symbol names made readable,
 * with libiberty's cplus_demangle (DMGL_PARAMS | DMGL_ANSI).
 */
#ifndef MEMTOP_DEMANGLE_H
#define MEMTOP_DEMANGLE_H

/* The demangled form of name, interned ("ns::f(int)" for "_ZN2ns1fEi");
 * name itself, interned, when it is not a mangled name (C) or cannot be
 * demangled. NULL for NULL or when out of memory. */
const char *demangle_name(const char *name);

#endif /* MEMTOP_DEMANGLE_H */

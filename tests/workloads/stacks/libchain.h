/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * libchain.h - the shared-library half of the chain workload: lib_level3
 * calls lib_level4_leak, which mallocs `size` bytes, fills them and keeps
 * them forever.
 */
#ifndef MEMTOP_LIBCHAIN_H
#define MEMTOP_LIBCHAIN_H

void *lib_level3(unsigned long size);
void *lib_level4_leak(unsigned long size);

#endif /* MEMTOP_LIBCHAIN_H */

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * busy_lib.h - the shared-library half of the busy_leak workload:
 * busy_lib_store() keeps `size` bytes forever, three frames down.
 */
#ifndef MEMTOP_BUSY_LIB_H
#define MEMTOP_BUSY_LIB_H

void *busy_lib_store(unsigned long size);

#endif /* MEMTOP_BUSY_LIB_H */

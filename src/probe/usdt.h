/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * usdt.h - finding USDT probes (SystemTap .note.stapsdt notes) of a given
 * provider in ELF files and in the files a process maps.
 */
#ifndef MEMTOP_USDT_H
#define MEMTOP_USDT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "readers/elf_file.h"
#include "readers/proc_maps.h"

/* Does ef carry a probe provider:name? */
bool usdt_has_probe(struct elf_file *ef, const char *provider, const char *name);

/* The first file of maps (pid's, as read once by the caller, so that
 * what else it asks of them is of the same moment) that carries
 * provider:alloc and provider:free, as a path memtop can open (through
 * /proc/PID/root). 0, or -ENOENT when no mapped file has them. */
int usdt_find_in_maps(pid_t pid, const struct mt_maps *maps, const char *provider, char *path,
		      size_t len);

#endif /* MEMTOP_USDT_H */

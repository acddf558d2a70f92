// SPDX-License-Identifier: GPL-2.0-only
/*
 * fuzz_inject_got.c - libFuzzer harness for the link-map and GOT walker of
 * --inject (src/probe/inject_got.c): the loader's link map, dynamic
 * sections, hash tables, symbols and relocations it follows are all in
 * the target's memory, which the target writes. Input: the address of the
 * first link_map entry (64-bit little-endian), then an image of memory
 * from address 0; it is read through a memfd standing in for
 * /proc/PID/mem, extended with zeros to 64 MiB as a process's memory is
 * large and mostly zero. Runs what --inject runs: the functions' targets,
 * a scan of the slots (twice, as a rescan after a dlopen does), and the
 * "still loaded" check; a slot found must hold one of the functions.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "probe/inject_got.h"

#define MEM_SIZE (64 << 20)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	__u64 first, target[MT_IFN_COUNT], owner[MT_IFN_COUNT], entry[MT_IFN_COUNT];
	struct got_seen seen = { 0 };
	struct got_slot *slots = NULL;
	size_t nslots = 0;
	int fd;

	if (size < 8 || size - 8 > MEM_SIZE)
		return 0;
	memcpy(&first, data, 8);
	fd = memfd_create("fuzz_inject_got", MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, MEM_SIZE) ||
	    (size > 8 && pwrite(fd, data + 8, size - 8, 0) != (ssize_t)(size - 8)))
		abort();
	for (int i = 0; i < MT_IFN_COUNT; i++)
		entry[i] = 0x7f0000000000ULL + 16 * i; /* the sampler's entry points */

	if (!inject_got_targets(fd, first, target, owner)) {
		for (int pass = 0; pass < 2; pass++)
			if (inject_got_scan(fd, first, &seen, 0, entry, target, &slots, &nslots))
				break;
		for (size_t i = 0; i < nslots; i++)
			if (slots[i].fn < 0 || slots[i].fn >= MT_IFN_COUNT)
				abort();
		inject_got_loaded(fd, first, owner[MT_IFN_MALLOC]);
	}
	free(slots);
	inject_got_seen_free(&seen);
	close(fd);
	return 0;
}

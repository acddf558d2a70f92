/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * proc_maps.h - /proc/PID/maps as a sorted array of mappings.
 *
 * proc_maps_parse() is pure (fixtures in tests/fixtures/maps/); malformed
 * lines give -EINVAL and leave *out empty. Paths are interned (strpool.h).
 */
#ifndef MEMTOP_PROC_MAPS_H
#define MEMTOP_PROC_MAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <linux/types.h>

struct mt_map {
	__u64 start; /* [start, end) runtime addresses */
	__u64 end;
	__u64 offset; /* file offset mapped at start */
	__u64 inode;
	__u32 dev_major;
	__u32 dev_minor;
	char perms[5];    /* "r-xp" */
	bool deleted;     /* the path ended in " (deleted)" (suffix stripped) */
	const char *path; /* interned; NULL for anonymous mappings; "[heap]" etc. kept */
};

struct mt_maps {
	struct mt_map *v; /* sorted by start */
	size_t n;
	bool cut; /* the text had more than the bounds below: the
			   * mappings past them (the highest addresses) are
			   * not in v */
};

/* What one read of a process's maps keeps, whatever the process does:
 * the first PROC_MAPS_MAX_BYTES of text (ordinary processes have well
 * under 1 MiB, but a path can be longer than PATH_MAX), the first
 * PROC_MAPS_MAX_ENTRIES mappings (the kernel's default vm.max_map_count
 * is 65530); and a read that a loop waits on (proc_maps_read_within),
 * what the kernel wrote in PROC_MAPS_MAX_MS (an ordinary text takes well
 * under 10 ms; deep paths, each built anew per line, can take seconds). */
#define PROC_MAPS_MAX_BYTES (16U << 20)
#define PROC_MAPS_MAX_ENTRIES (1U << 17)
#define PROC_MAPS_MAX_MS 250

/* Parse the text of a maps file, at most PROC_MAPS_MAX_ENTRIES lines
 * (then out->cut). 0 or -EINVAL / -ENOMEM. */
int proc_maps_parse(const char *text, size_t len, struct mt_maps *out);
/* Read and parse /proc/PID/maps, at most PROC_MAPS_MAX_BYTES of it (then
 * out->cut; the last whole line is the end). 0 or -errno (-ESRCH when
 * gone). */
int proc_maps_read(pid_t pid, struct mt_maps *out);
/* The same, reading for at most max_ms (then out->cut too; 0: no bound).
 * A cut table lacks the highest mappings, the libraries: for a reader that
 * can do without some (naming frames), not for one looking for a library
 * (the allocator). */
int proc_maps_read_within(pid_t pid, struct mt_maps *out, unsigned int max_ms);
/* Only the mappings containing addrs[0..n) (each once; an address in no
 * mapping is left out), asked of the kernel one by one with the
 * PROCMAP_QUERY ioctl (Linux 6.11) rather than read from the text of all
 * of them, which a hostile process can make many MiB long. 0, -ENOTTY
 * where the kernel lacks the ioctl (read the text then), or -errno. */
int proc_maps_read_at(pid_t pid, const __u64 *addrs, size_t n, struct mt_maps *out);
/* The mapping containing addr, or NULL. */
const struct mt_map *proc_maps_find(const struct mt_maps *m, __u64 addr);
void proc_maps_free(struct mt_maps *m);

#endif /* MEMTOP_PROC_MAPS_H */

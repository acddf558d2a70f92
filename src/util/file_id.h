/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * file_id.h - the identity of an opened file, from fstat(): device, inode,
 * size and modification time. It is the one cache key for anything derived
 * from a file's contents (parsed ELF, symbols, DWARF, unwind tables): a file
 * replaced in place (new inode) or rewritten (new size or mtime) gets a new
 * identity, so nothing cached from its old bytes is used for the new ones.
 */
#ifndef MEMTOP_FILE_ID_H
#define MEMTOP_FILE_ID_H

#include <stdbool.h>
#include <linux/types.h>
#include <sys/stat.h>

struct file_id {
	__u64 dev;
	__u64 ino;
	__u64 size;
	__u64 mtime_ns;
};

/* The identity of the file st describes. */
struct file_id file_id_of_stat(const struct stat *st);

bool file_id_equal(const struct file_id *a, const struct file_id *b);

/* A 64-bit hash of every field, for util/hmap (well mixed in all bits). */
__u64 file_id_hash(const struct file_id *id);

#endif /* MEMTOP_FILE_ID_H */

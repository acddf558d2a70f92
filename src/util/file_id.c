// SPDX-License-Identifier: GPL-2.0-only
/*
 * file_id.c - see file_id.h.
 */
#include "util/file_id.h"

#include "util/hmap.h"

struct file_id file_id_of_stat(const struct stat *st)
{
	return (struct file_id){
		.dev = (__u64)st->st_dev,
		.ino = (__u64)st->st_ino,
		.size = (__u64)st->st_size,
		.mtime_ns = (__u64)st->st_mtim.tv_sec * 1000000000ULL + (__u64)st->st_mtim.tv_nsec,
	};
}

bool file_id_equal(const struct file_id *a, const struct file_id *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
	       a->mtime_ns == b->mtime_ns;
}

__u64 file_id_hash(const struct file_id *id)
{
	__u64 h = hmap_mix(0, id->dev);

	h = hmap_mix(h, id->ino);
	h = hmap_mix(h, id->size);
	return hmap_mix(h, id->mtime_ns);
}

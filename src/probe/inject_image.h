/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * inject_image.h - libmemtop-inject.so as memtop maps it into a process
 * without the dynamic loader: its load segments and the addresses of the
 * symbols memtop uses, and the mapping itself, made by system calls the
 * held thread runs (memfd_create, mmap, close) with the file's bytes
 * written by memtop through /proc/PID/fd.
 */
#ifndef MEMTOP_PROBE_INJECT_IMAGE_H
#define MEMTOP_PROBE_INJECT_IMAGE_H

#include <stddef.h>
#include <sys/types.h>
#include <linux/types.h>

#include "memtop/sampler_abi.h"
#include "readers/proc_maps.h"

struct inject_session;

#define INJECT_MAX_LOADS 8

struct inject_image {
	unsigned char *data; /* the whole file */
	size_t size;
	struct {
		__u64 vaddr, memsz, offset, filesz;
		int prot;
	} load[INJECT_MAX_LOADS];
	int nload;
	__u64 span;             /* address space the segments need */
	const char *memfd_name; /* the memfd it is mapped from (/memfd:NAME) */
	/* link-time addresses */
	__u64 ctl, poke, scratch, table, filter, slots;
	__u64 sem_alloc, sem_free; /* the USDT semaphores (inject_cost.c raises them) */
	__u64 entry[MT_IFN_COUNT];
};

/* Read and check the sampler file: no relocations, every symbol present.
 * 0 or -errno with one line in err. */
int inject_image_open(struct inject_image *im, const char *path, char *err, size_t errlen);
void inject_image_close(struct inject_image *im);

/* Read and check any such image (no relocations, x86-64, its segments),
 * to be mapped from a memfd named memfd_name (a string that outlives im);
 * its symbols are looked up with inject_image_symbol(). 0 or -errno with
 * one line in err. */
int inject_image_load(struct inject_image *im, const char *path, const char *memfd_name, char *err,
		      size_t errlen);

/* The link-time address of symbol name in the image's .symtab, or 0. */
__u64 inject_image_symbol(const struct inject_image *im, const char *name);

/* Where an image of memfd name is mapped in pid: its load address in
 * *base. 0 or -ENOENT. */
int inject_image_find_named(pid_t pid, const char *name, __u64 *base);
/* How many samplers (memfds named MT_INJECT_MEMFD_NAME) are mapped in
 * pid: more than one when two memtops injected it at the same moment.
 * The count, or -errno. */
int inject_image_count(pid_t pid);

/* Where a sampler is already mapped in pid (a memfd named
 * MT_INJECT_MEMFD_NAME): its load address in *base. 0 or -ENOENT. */
int inject_image_find(pid_t pid, __u64 *base);

/* inject_image_find() in a snapshot of the maps already read: 0 and the
 * base of memtop's sampler image, or -ENOENT. */
int inject_image_find_in(const struct mt_maps *maps, __u64 *base);

/* Map the image into the process s holds. Its load address in *base.
 * 0 or -errno with one line in err. */
int inject_image_map(const struct inject_image *im, struct inject_session *s, __u64 *base,
		     char *err, size_t errlen);

/* A path to the mapped file that libbpf and the kernel can open
 * (/proc/PID/map_files/START-END of its executable mapping). 0 or -ENOENT. */
int inject_image_path(pid_t pid, __u64 base, char *path, size_t len);

/* Mark the pages of the sampler's slots at base MADV_WIPEONFORK, from
 * the held thread of s (sampler_abi.h, struct mt_inject_slots). 0, or
 * -errno (-EINVAL: they are not pages of their own, anonymous). */
int inject_image_wipe_on_fork(const struct inject_image *im, struct inject_session *s, __u64 base);

#endif /* MEMTOP_PROBE_INJECT_IMAGE_H */

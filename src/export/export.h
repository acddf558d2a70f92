/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * export.h - snapshots of the model in formats other tools read: gzipped
 * pprof (profile.proto), folded stacks. Files are written by
 * util/out_file.h, so a failure never leaves a partial file behind and a
 * device or FIFO is never replaced.
 */
#ifndef MEMTOP_EXPORT_H
#define MEMTOP_EXPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "model/model.h"

/* Write a gzipped pprof heap profile of m to path. On failure returns
 * -errno and puts one line (no newline) naming the cause into err. */
int export_pprof_file(struct mt_model *m, const char *path, char *err, size_t errlen);

/* Encode m as a gzipped pprof into a malloc'ed buffer (*out, *outlen).
 * 0 or -errno. */
int export_pprof_buf(struct mt_model *m, __u8 **out, size_t *outlen);

/* Folded stacks ("root;...;leaf value" lines) of estimated in-use bytes.
 * Same error contract as export_pprof_file(). */
int export_folded_file(struct mt_model *m, const char *path, char *err, size_t errlen);

/* Folded stacks of m into a malloc'ed, NUL-terminated buffer: one
 * "outermost;...;innermost BYTES" line per distinct stack with at least
 * one estimated in-use byte, sorted, from the call-site frame outwards.
 * With several targets each line starts with a "comm-pid" frame; a
 * truncated stack starts with "[truncated]". 0 or -errno. */
int export_folded_buf(struct mt_model *m, char **out, size_t *outlen);

/* Write data[0..len) to path through util/out_file.h: a regular file (or
 * none) is replaced atomically, mode 0600 & ~umask and never more open
 * than the file it replaces; a FIFO, character device or socket is
 * written through, never replaced; a directory or block device is
 * refused. On failure path is unchanged, nothing is left behind, and err
 * gets "cannot write PATH: CAUSE". 0 or -errno. */
int export_write_file(const char *path, const void *data, size_t len, char *err, size_t errlen);

/* export_write_file(), its directories (e.g. ~/.config/memtop) created
 * first, mode 0700, where missing: "cannot create DIR: CAUSE". */
int export_write_file_in_dir(const char *path, const void *data, size_t len, char *err,
			     size_t errlen);

/* Can export_write_file() write path? For checking --output/--folded at
 * startup, before anything is attached (out_file_check(): a FIFO without
 * a reader is refused here). 0, or -errno with the same message as
 * export_write_file(). */
int export_check_path(const char *path, char *err, size_t errlen);

/* The n-th file name of a series based on base, for --output-every:
 * ".NNNN" (at least four digits) goes before a ".pb.gz" suffix, else
 * before the last extension, else at the end: heap.pb.gz -> heap.0001.pb.gz,
 * out.folded -> out.0001.folded, /tmp/prof -> /tmp/prof.0001.
 * 0 or -ENAMETOOLONG (buf too small). */
int export_numbered_path(const char *base, unsigned int n, char *buf, size_t len);

/* Where export_numbered_path() puts ".NNNN" in base: the length of the
 * part before it (heap.pb.gz -> 4, /tmp/prof -> 9). */
size_t export_numbered_stem(const char *base);

/* Is name one of the files export_numbered_path() makes of base (the same
 * directory spelling, any n)? */
bool export_is_numbered(const char *base, const char *name);

#endif /* MEMTOP_EXPORT_H */

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * out_file.h - the one way memtop writes an output file (--output,
 * --folded, --output-every, the TUI's e export). Whatever the path names,
 * memtop never replaces anything but a regular file, and never leaves a
 * partial one.
 *
 *   nothing, or a regular file  a new file beside it, written, fsync'ed and
 *                               renamed over it. Mode 0600 & ~umask (a
 *                               profile carries paths and names), and no
 *                               more than an existing file's mode, whose
 *                               owner and group are kept.
 *   a FIFO, character device,   written through: opened O_WRONLY|O_NONBLOCK,
 *   socket (/dev/null,          never created, truncated or renamed. A FIFO
 *   /dev/stdout, a pipe)        needs a reader when checked (-ENXIO: "a FIFO
 *                               with no reader"); the descriptor opened then
 *                               is kept for the write, so the reader sees one
 *                               stream and no early EOF. A reader that takes
 *                               nothing for OUT_FILE_STALL_MS fails the write.
 *   a directory, block device   refused (-EISDIR, -ENOTBLK... see out_file.c).
 *   a symbolic link             never replaced: through a descriptor
 *                               (/dev/stdout, /dev/fd/N, /proc/PID/fd/N)
 *                               written through what it reaches, a regular
 *                               file appended to; else its target replaced
 *                               as above; a link to nothing refused (-ELOOP).
 */
#ifndef MEMTOP_UTIL_OUT_FILE_H
#define MEMTOP_UTIL_OUT_FILE_H

#include <stdbool.h>
#include <stddef.h>

#define OUT_FILE_MODE 0600
#define OUT_FILE_STALL_MS 5000

/* Write data[0..len) to path as above. On failure path is unchanged,
 * nothing is left behind, and err gets "cannot write PATH: CAUSE".
 * 0 or -errno. */
int out_file_write(const char *path, const void *data, size_t len, char *err, size_t errlen);

/* Could out_file_write() write path? For checking at startup, before
 * anything is attached: a regular path by creating and removing a
 * temporary file beside it (finds a read-only or missing directory even
 * for root); a FIFO or device by opening it (and keeping it open). Same
 * errors as out_file_write(). */
int out_file_check(const char *path, char *err, size_t errlen);

/* Is path, once out_file_check() opened it, a terminal (/dev/stdout or
 * /dev/tty on one)? For the outputs that are not text: a gzipped profile
 * on a terminal would be bytes the terminal interprets. */
bool out_file_is_terminal(const char *path);

/* Does path name something that is written through (not a regular file
 * or nothing)? */
bool out_file_is_stream(const char *path);

/* ==== one file under two names ==========================================
 * Two outputs given one file would overwrite each other (or mix their
 * streams), so the command line refuses them. Whether two paths name one
 * file is decided on what they lead to, not on their spelling: when both
 * exist, by device and inode (so ./F, F, a symbolic link to F and a hard
 * link of F are all F); when neither does, by canonical name (directory
 * resolved, links and all, then the last component as given). One that
 * exists and one that does not are two files. */
enum out_file_same {
	OUT_FILE_DIFFERENT, /* two files */
	OUT_FILE_SAME,      /* one file: refuse */
	OUT_FILE_SHARED,    /* one character device (a terminal, /dev/null):
			     * written through in turn, nothing replaced or
			     * lost, so two outputs may share it */
};
enum out_file_same out_file_same(const char *a, const char *b);

/* mkdir -p dir, the directories it makes 0700; dir itself must end up a
 * directory, not a symlink. 0 or -errno. */
int out_file_make_dirs(const char *dir);

/* path's canonical name into buf (as above: resolved when it exists, else
 * its directory resolved and its last component appended). 0, or -errno
 * (buf then holds path as given). */
int out_file_canonical(const char *path, char *buf, size_t len);

#endif /* MEMTOP_UTIL_OUT_FILE_H */

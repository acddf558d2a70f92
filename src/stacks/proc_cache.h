/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * proc_cache.h - what the symbolizer and the unwinder share about target
 * processes: each process's mappings (re-read when an address falls outside
 * them, so libraries dlopen'ed after attach are found) and the ELF files
 * behind them, opened once per file identity (device+inode, or build ID)
 * however many processes map them.
 *
 * Files are opened through /proc/PID/map_files/START-END first (works for
 * deleted binaries and for other mount namespaces), then /proc/PID/root/PATH.
 */
#ifndef MEMTOP_PROC_CACHE_H
#define MEMTOP_PROC_CACHE_H

#include <sys/types.h>
#include <linux/types.h>

#include "readers/elf_file.h"
#include "readers/proc_maps.h"

struct proc_cache;

struct proc_cache *proc_cache_new(void);
void proc_cache_free(struct proc_cache *pc);

/* The mapping of pid containing addr, re-reading /proc/PID/maps once if
 * the cached copy has none. NULL if there is none (or the process is gone
 * and was never read). Re-reads of one pid happen at most every 100 ms
 * plus nine times what the last read took (a slow maps text costs at most
 * a tenth of the time; sooner after a sample newer than the copy:
 * proc_cache_note_sample), so an address in no mapping costs a binary
 * search, not a read; a copy
 * older than 5 s is re-read on its next use, hit or miss (a mapping
 * replaced at the same address is noticed).
 * The pointer stays valid until proc_cache_forget(pid) or the 7th re-read
 * of pid's maps after it was returned (so at least 0.7 s); not
 * thread-safe: use a proc_cache from one thread at a time. */
const struct mt_map *proc_cache_find_map(struct proc_cache *pc, pid_t pid, __u64 addr);

/* A sample of pid was taken at ts_ns (CLOCK_MONOTONIC, the clock of the
 * BPF records): the code it ran was mapped then. Until a table newer than
 * ts_ns is read, a lookup of pid that misses re-reads its maps at once
 * instead of after the pause: a table read before the sample (a process
 * still mapping its libraries when it was read, a dlopen just before the
 * sample) cannot hold the mapping, while one read after it truly has
 * none. At most PROC_CACHE_EARLY_REREADS such re-reads a second per
 * process, none sooner than nine times what the last read took, so a
 * stream of samples with unmapped addresses (a frame-pointer walk through
 * code without frame pointers) costs a bounded number of reads. No-op for a pid not read yet (its
 * first lookup reads it). */
void proc_cache_note_sample(struct proc_cache *pc, pid_t pid, __u64 ts_ns);

#define PROC_CACHE_EARLY_REREADS 4

/* The ELF file behind map (a mapping of pid); NULL if it cannot be opened.
 * Owned by the cache. */
struct elf_file *proc_cache_elf(struct proc_cache *pc, pid_t pid, const struct mt_map *map);

/* Runtime load bias of the ELF object containing map: runtime address =
 * link-time vaddr + bias. 0 or -ENOENT. */
int proc_cache_load_bias(struct proc_cache *pc, pid_t pid, const struct mt_map *map, __u64 *bias);

/* The most mappings of one process whose files the cache holds open at
 * once (a library has four or five); a mapping past it is not opened (its
 * frames are module+offset) and is counted, and tried again once the
 * process has dropped others. */
#define PROC_CACHE_MAX_FILE_MAPS 4096

/* What the cache declined for pid since the last call: mappings whose file
 * was not opened (PROC_CACHE_MAX_FILE_MAPS), reads of its maps cut short
 * (proc_maps.h). Added to *files_refused and *maps_cut, then reset. */
void proc_cache_take_limits(struct proc_cache *pc, pid_t pid, __u64 *files_refused, __u64 *maps_cut);

/* Some watched process maps the file of this identity now (its file is
 * open in the cache). */
bool proc_cache_has_file(const struct proc_cache *pc, const struct file_id *id);

/* Drop what is cached for pid (exit, exec). Files stay cached while any
 * other process maps them. */
void proc_cache_forget(struct proc_cache *pc, pid_t pid);

#endif /* MEMTOP_PROC_CACHE_H */

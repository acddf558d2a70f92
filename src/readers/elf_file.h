/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * elf_file.h - one ELF file opened read-only with libelf: symbols, build ID,
 * segments, raw bytes. Malformed or truncated files give NULL/-errno from
 * every call, never a crash.
 */
#ifndef MEMTOP_ELF_FILE_H
#define MEMTOP_ELF_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <gelf.h>
#include <linux/types.h>

#include "util/file_id.h"

struct elf_file;

/* NULL with errno set (ENOENT, EACCES, ENOEXEC for a non-ELF/malformed
 * file, SAFE_OPEN_ENOTREG for a FIFO, device or directory, which is never
 * opened for reading: util/safe_open.h). */
struct elf_file *elf_file_open(const char *path);
void elf_file_close(struct elf_file *ef);

/* File offset and size of the function symbol `name` (.dynsym, then .symtab;
 * STT_FUNC or STT_GNU_IFUNC, defined). 0, or -ENOENT. */
int elf_file_func_offset(struct elf_file *ef, const char *name, __u64 *file_off, __u64 *size);

/* Link-time address and size of the function symbol `name`, as
 * elf_file_func_offset finds it: for a separate debug file, whose
 * segments hold no bytes, convert it through the object's own file.
 * 0, or -ENOENT. */
int elf_file_func_symbol(struct elf_file *ef, const char *name, __u64 *vaddr, __u64 *size);

/* Link-time address and size of the data symbol `name` (STT_OBJECT,
 * defined; .dynsym, then .symtab). 0, or -ENOENT. */
int elf_file_object_symbol(struct elf_file *ef, const char *name, __u64 *vaddr, __u64 *size);

/* Copy len bytes at file offset off. 0 or -EINVAL (out of range). */
int elf_file_read(struct elf_file *ef, __u64 off, void *buf, size_t len);

/* Read len bytes at virtual address vaddr (as linked, before load bias),
 * through the PT_LOAD segments. 0 or -EFAULT. */
int elf_file_read_vaddr(struct elf_file *ef, __u64 vaddr, void *buf, size_t len);

/* Convert a file offset inside a PT_LOAD segment to its link-time vaddr
 * and back. 0 or -ENOENT. */
int elf_file_off_to_vaddr(struct elf_file *ef, __u64 off, __u64 *vaddr);
int elf_file_vaddr_to_off(struct elf_file *ef, __u64 vaddr, __u64 *off);

/* Lowercase hex of NT_GNU_BUILD_ID, or NULL. Owned by ef. */
const char *elf_file_build_id(struct elf_file *ef);

/* ET_DYN (PIE or shared object) vs ET_EXEC. */
bool elf_file_is_dyn(struct elf_file *ef);
/* Has a PT_INTERP or PT_DYNAMIC: false for a static executable. */
bool elf_file_is_dynamic(struct elf_file *ef);

/* Link-time vaddr and size of .eh_frame_hdr (PT_GNU_EH_FRAME). 0 or -ENOENT. */
int elf_file_eh_frame_hdr(struct elf_file *ef, __u64 *vaddr, __u64 *size);

/* ---- additions for the symbolizer and the proc cache ---------------- */

struct Elf;

/* Like elf_file_open() on an already open descriptor, which the elf_file
 * takes over (closed by elf_file_close, also on failure). path is only
 * recorded for messages. NULL with errno set. */
struct elf_file *elf_file_open_fd(int fd, const char *path);

/* Take one more reference; elf_file_close() drops one and closes the file
 * with the last. Returns ef. */
struct elf_file *elf_file_ref(struct elf_file *ef);

/* The path given at open. Owned by ef. */
const char *elf_file_path(struct elf_file *ef);
/* Identity of the opened file (util/file_id.h): the cache key for anything
 * derived from its contents. */
const struct file_id *elf_file_id(struct elf_file *ef);

/* The function symbol (.symtab and .dynsym, STT_FUNC/STT_GNU_IFUNC)
 * containing link-time address vaddr: its name (owned by ef, as in the
 * file, not demangled) and start vaddr. Of aliases at one address the
 * public one is chosen ("malloc", not "__libc_malloc"); an unsized symbol
 * extends to the next symbol within its section. The table is built on
 * the first call. 0 or -ENOENT. */
int elf_file_symbol_at(struct elf_file *ef, __u64 vaddr, const char **name, __u64 *start);

/* Files refused for their size (over 2 GiB) or whose function symbols
 * were cut at 1M (the first million kept), since start. */
unsigned long elf_file_limits_hit(void);

/* Has a .symtab section (false once stripped). */
bool elf_file_has_symtab(struct elf_file *ef);
/* Has DWARF line information (.debug_info and .debug_line with data). */
bool elf_file_has_dwarf(struct elf_file *ef);

/* File name and CRC32 from .gnu_debuglink. 0 or -ENOENT. */
int elf_file_debuglink(struct elf_file *ef, const char **name, __u32 *crc);
/* CRC32 (the .gnu_debuglink one, zlib's) of the whole file. */
__u32 elf_file_crc32(struct elf_file *ef);

/* The libelf handle, for libdw (dwarf_begin_elf). Owned by ef. */
struct Elf *elf_file_libelf(struct elf_file *ef);

/* The first section called name, its header into *sh; NULL if none. */
Elf_Scn *elf_file_section(struct elf_file *ef, const char *name, GElf_Shdr *sh);
/* The name of the section whose file bytes hold offset off, or NULL. */
const char *elf_file_section_at(struct elf_file *ef, __u64 off);

/* Load bias of the object when the mapping [map_start, ...) maps file
 * offset map_offset (both from /proc/PID/maps): runtime address = link-time
 * vaddr + bias. Uses the PT_LOAD segment whose page-rounded file range
 * starts at, or else contains, map_offset. 0 or -ENOENT. */
int elf_file_load_bias(struct elf_file *ef, __u64 map_start, __u64 map_offset, __u64 *bias);

#endif /* MEMTOP_ELF_FILE_H */

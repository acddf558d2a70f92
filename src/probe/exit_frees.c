// SPDX-License-Identifier: GPL-2.0-only
/* exit_frees.c - the allocator's thread-exit frees, located (exit_frees.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/stat.h>

#include "probe/exit_frees.h"
#include "readers/elf_file.h"
#include "readers/proc_maps.h"
#include "stacks/debuginfo.h"

/* Link-time address and size of the first of names that ef's own symbols
 * or, failing them, its debug file define. 0 or -ENOENT. */
static int find_symbol(struct elf_file *ef, pid_t pid, const char *const *names, __u64 *vaddr,
		       __u64 *size)
{
	struct elf_file *dbg = NULL;
	int e = -ENOENT;

	for (const char *const *n = names; *n && e; n++)
		e = elf_file_func_symbol(ef, *n, vaddr, size);
	if (e)
		dbg = debuginfo_find(ef, pid, NULL);
	for (const char *const *n = names; dbg && *n && e; n++)
		e = elf_file_func_symbol(dbg, *n, vaddr, size);
	elf_file_close(dbg);
	return e || !*size ? -ENOENT : 0;
}

/* The runtime address of file offset off of the file whose inode is ino,
 * in an executable mapping of it among maps; 0 when none maps it. */
static __u64 mapped_at(const struct mt_maps *maps, __u64 ino, __u64 off)
{
	for (size_t i = 0; i < maps->n; i++) {
		const struct mt_map *m = &maps->v[i];

		if (m->inode == ino && m->path && m->perms[2] == 'x' && off >= m->offset &&
		    off - m->offset < m->end - m->start)
			return m->start + (off - m->offset);
	}
	return 0;
}

/* Is pid a copy of memtop (a command held before its exec), whose
 * mappings are memtop's, not its program's? */
static bool is_memtop_copy(pid_t pid)
{
	char path[64];
	struct stat mine, its;

	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	return !stat("/proc/self/exe", &mine) && !stat(path, &its) && mine.st_dev == its.st_dev &&
	       mine.st_ino == its.st_ino;
}

int exit_frees_locate(pid_t pid, const char *lib_path, const char *const *names,
		      struct exit_frees_loc *loc)
{
	struct elf_file *ef;
	struct stat st;
	__u64 vaddr;
	int e;

	if (!names || stat(lib_path, &st))
		return -ENOENT;
	ef = elf_file_open(lib_path);
	if (!ef)
		return -ENOENT;
	e = find_symbol(ef, pid, names, &vaddr, &loc->size);
	if (!e)
		e = elf_file_vaddr_to_off(ef, vaddr, &loc->off);
	elf_file_close(ef);
	loc->ino = st.st_ino;
	return e ? -ENOENT : 0;
}

int exit_frees_mapped(pid_t pid, const struct exit_frees_loc *loc, __u64 *lo, __u64 *hi)
{
	struct mt_maps maps = { 0 };
	__u64 at;
	int e;

	if (is_memtop_copy(pid))
		return -EAGAIN;
	e = proc_maps_read(pid, &maps);
	if (e)
		return e;
	at = mapped_at(&maps, loc->ino, loc->off);
	proc_maps_free(&maps);
	if (!at)
		return -ESRCH; /* not mapped (yet: a program just exec'd) */
	*lo = at;
	*hi = at + loc->size;
	return 0;
}

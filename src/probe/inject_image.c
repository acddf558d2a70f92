// SPDX-License-Identifier: GPL-2.0-only
/*
 * inject_image.c - maps libmemtop-inject.so into a process the way the
 * dynamic loader would map a shared object, minus everything the file
 * does not need: no relocations (the build refuses to make one with any),
 * no dependencies, no TLS, no constructors (inject_image.h).
 *
 * The held thread creates a memfd named MT_INJECT_MEMFD_NAME (so the
 * mapping shows in /proc/PID/maps as /memfd:memtop-sampler, which is how a
 * later memtop finds it), memtop takes that descriptor over with
 * pidfd_getfd() (never a reopen through /proc/PID/fd/N, which another
 * thread could have pointed at any file by then), checks it is that
 * memfd, writes the file into it and seals it; the thread reserves the
 * whole span with one anonymous
 * PROT_NONE mapping and maps each PT_LOAD over it (MAP_FIXED, private,
 * from the memfd), with .bss as anonymous memory and the tail of the last
 * file page zeroed; memtop checks that what is mapped there is the memfd
 * it filled, and the thread closes the descriptor. The memfd lives on as
 * long as the mapping.
 */
#include "probe/inject_image.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>

#include "probe/inject_ptrace.h"
#include "readers/proc_maps.h"

static const char *const fn_names[MT_IFN_COUNT] = MT_INJECT_FN_NAMES;

/* The build refuses a file with relocations; a file that has some anyway
 * (built by hand) is refused here: nothing would apply them. */
static int relocations_none(const struct inject_image *im, const char *path, char *err, size_t errlen)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)im->data;
	const Elf64_Shdr *sh = (const Elf64_Shdr *)(im->data + eh->e_shoff);
	int i;

	if (eh->e_shoff + (__u64)eh->e_shnum * sizeof(*sh) > im->size)
		return -ENOEXEC;
	for (i = 0; i < eh->e_shnum; i++) {
		if ((sh[i].sh_type == SHT_RELA || sh[i].sh_type == SHT_REL) && sh[i].sh_size) {
			snprintf(err, errlen, "%s has relocations: rebuild it", path);
			return -ENOEXEC;
		}
	}
	return 0;
}

static int image_symbols(struct inject_image *im, char *err, size_t errlen)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)im->data;
	const Elf64_Shdr *sh = (const Elf64_Shdr *)(im->data + eh->e_shoff);
	int i, k;

	if (eh->e_shoff + (__u64)eh->e_shnum * sizeof(*sh) > im->size)
		return -ENOEXEC;
	for (i = 0; i < eh->e_shnum; i++) {
		const Elf64_Sym *sym;
		const char *str;
		size_t n, j;

		if (sh[i].sh_type != SHT_SYMTAB || sh[i].sh_link >= eh->e_shnum ||
		    sh[i].sh_offset + sh[i].sh_size > im->size ||
		    sh[sh[i].sh_link].sh_offset + sh[sh[i].sh_link].sh_size > im->size)
			continue;
		sym = (const Elf64_Sym *)(im->data + sh[i].sh_offset);
		str = (const char *)im->data + sh[sh[i].sh_link].sh_offset;
		n = sh[i].sh_size / sizeof(*sym);
		for (j = 0; j < n; j++) {
			const char *name = str + sym[j].st_name;

			if (sym[j].st_name >= sh[sh[i].sh_link].sh_size || !sym[j].st_value)
				continue;
			if (!strcmp(name, MT_INJECT_CTL_SYMBOL))
				im->ctl = sym[j].st_value;
			else if (!strcmp(name, MT_INJECT_POKE_SYMBOL))
				im->poke = sym[j].st_value;
			else if (!strcmp(name, MT_INJECT_SCRATCH_SYMBOL))
				im->scratch = sym[j].st_value;
			else if (!strcmp(name, MT_INJECT_TABLE_SYMBOL))
				im->table = sym[j].st_value;
			else if (!strcmp(name, MT_INJECT_FILTER_SYMBOL))
				im->filter = sym[j].st_value;
			else if (!strcmp(name, MT_INJECT_SLOTS_SYMBOL))
				im->slots = sym[j].st_value;
			else if (!strcmp(name, "otel_memory_alloc_semaphore"))
				im->sem_alloc = sym[j].st_value;
			else if (!strcmp(name, "otel_memory_free_semaphore"))
				im->sem_free = sym[j].st_value;
			else if (!strncmp(name, MT_INJECT_ENTRY_PREFIX,
					  strlen(MT_INJECT_ENTRY_PREFIX)))
				for (k = 0; k < MT_IFN_COUNT; k++)
					if (!strcmp(name + strlen(MT_INJECT_ENTRY_PREFIX),
						    fn_names[k]))
						im->entry[k] = sym[j].st_value;
		}
	}
	if (!im->ctl || !im->poke || !im->scratch || !im->table || !im->filter || !im->slots) {
		snprintf(err, errlen, "the injected sampler lacks its symbols (stripped?)");
		return -ENOEXEC;
	}
	for (k = 0; k < MT_IFN_COUNT; k++) {
		if (!im->entry[k]) {
			snprintf(err, errlen, "the injected sampler has no entry point for %s",
				 fn_names[k]);
			return -ENOEXEC;
		}
	}
	return 0;
}

int inject_image_load(struct inject_image *im, const char *path, const char *memfd_name, char *err,
		      size_t errlen)
{
	const Elf64_Ehdr *eh;
	const Elf64_Phdr *ph;
	struct stat st;
	int fd, i, e;

	memset(im, 0, sizeof(*im));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) || st.st_size < (off_t)sizeof(*eh)) {
		e = fd < 0 ? -errno : -ENOEXEC;
		snprintf(err, errlen, "cannot read the injected sampler %s: %s", path, strerror(-e));
		if (fd >= 0)
			close(fd);
		return e;
	}
	im->size = st.st_size;
	im->data = malloc(im->size);
	if (!im->data || read(fd, im->data, im->size) != (ssize_t)im->size) {
		close(fd);
		inject_image_close(im);
		snprintf(err, errlen, "cannot read the injected sampler %s", path);
		return -EIO;
	}
	close(fd);
	eh = (const Elf64_Ehdr *)im->data;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_type != ET_DYN || eh->e_machine != EM_X86_64 ||
	    eh->e_phoff + (__u64)eh->e_phnum * sizeof(*ph) > im->size) {
		inject_image_close(im);
		snprintf(err, errlen, "%s is not an x86-64 shared object", path);
		return -ENOEXEC;
	}
	ph = (const Elf64_Phdr *)(im->data + eh->e_phoff);
	for (i = 0; i < eh->e_phnum; i++) {
		if (ph[i].p_type != PT_LOAD)
			continue;
		if (im->nload == INJECT_MAX_LOADS || ph[i].p_offset + ph[i].p_filesz > im->size ||
		    (ph[i].p_vaddr - ph[i].p_offset) % INJECT_PAGE) {
			inject_image_close(im);
			snprintf(err, errlen, "%s: unexpected segment layout", path);
			return -ENOEXEC;
		}
		im->load[im->nload].vaddr = ph[i].p_vaddr;
		im->load[im->nload].memsz = ph[i].p_memsz;
		im->load[im->nload].offset = ph[i].p_offset;
		im->load[im->nload].filesz = ph[i].p_filesz;
		im->load[im->nload].prot = (ph[i].p_flags & PF_R ? PROT_READ : 0) |
					   (ph[i].p_flags & PF_W ? PROT_WRITE : 0) |
					   (ph[i].p_flags & PF_X ? PROT_EXEC : 0);
		if (INJECT_PAGE_UP(ph[i].p_vaddr + ph[i].p_memsz) > im->span)
			im->span = INJECT_PAGE_UP(ph[i].p_vaddr + ph[i].p_memsz);
		im->nload++;
	}
	im->memfd_name = memfd_name;
	e = relocations_none(im, path, err, errlen);
	if (e)
		inject_image_close(im);
	return e;
}

int inject_image_open(struct inject_image *im, const char *path, char *err, size_t errlen)
{
	int e = inject_image_load(im, path, MT_INJECT_MEMFD_NAME, err, errlen);

	if (!e && (e = image_symbols(im, err, errlen)))
		inject_image_close(im);
	return e;
}

__u64 inject_image_symbol(const struct inject_image *im, const char *name)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)im->data;
	const Elf64_Shdr *sh = (const Elf64_Shdr *)(im->data + eh->e_shoff);
	int i;

	if (eh->e_shoff + (__u64)eh->e_shnum * sizeof(*sh) > im->size)
		return 0;
	for (i = 0; i < eh->e_shnum; i++) {
		const Elf64_Sym *sym;
		const Elf64_Shdr *strs;
		size_t n, j;

		if (sh[i].sh_type != SHT_SYMTAB || sh[i].sh_link >= eh->e_shnum ||
		    sh[i].sh_offset + sh[i].sh_size > im->size)
			continue;
		strs = &sh[sh[i].sh_link];
		if (strs->sh_offset + strs->sh_size > im->size)
			continue;
		sym = (const Elf64_Sym *)(im->data + sh[i].sh_offset);
		n = sh[i].sh_size / sizeof(*sym);
		for (j = 0; j < n; j++)
			if (sym[j].st_name < strs->sh_size && sym[j].st_value &&
			    !strncmp((const char *)im->data + strs->sh_offset + sym[j].st_name,
				     name, strs->sh_size - sym[j].st_name))
				return sym[j].st_value;
	}
	return 0;
}

void inject_image_close(struct inject_image *im)
{
	free(im->data);
	im->data = NULL;
}

/* Is m a mapping of the memfd named name (/memfd:NAME in the maps)? */
static bool is_image_map(const struct mt_map *m, const char *name)
{
	return m->path && !strncmp(m->path, "/memfd:", 7) && !strcmp(m->path + 7, name);
}

int inject_image_find(pid_t pid, __u64 *base)
{
	return inject_image_find_named(pid, MT_INJECT_MEMFD_NAME, base);
}

/* The images named name in maps (their first segment's start, the first
 * one's in *first): how many. */
static int bases_in(const struct mt_maps *maps, const char *name, __u64 *first)
{
	size_t i;
	int n = 0;

	for (i = 0; i < maps->n; i++) {
		if (!is_image_map(&maps->v[i], name) || maps->v[i].offset != 0)
			continue;
		if (!n++ && first)
			*first = maps->v[i].start;
	}
	return n;
}

/* bases_in() pid's maps, read once for both questions asked of them: how
 * many, or -errno. */
static int image_bases(pid_t pid, const char *name, __u64 *first)
{
	struct mt_maps maps;
	int n, e = proc_maps_read(pid, &maps);

	if (e)
		return e;
	n = bases_in(&maps, name, first);
	proc_maps_free(&maps);
	return n;
}

int inject_image_find_in(const struct mt_maps *maps, __u64 *base)
{
	return bases_in(maps, MT_INJECT_MEMFD_NAME, base) ? 0 : -ENOENT;
}

int inject_image_find_named(pid_t pid, const char *name, __u64 *base)
{
	int n = image_bases(pid, name, base);

	return n < 0 ? n : n ? 0 : -ENOENT;
}

int inject_image_count(pid_t pid)
{
	return image_bases(pid, MT_INJECT_MEMFD_NAME, NULL);
}

int inject_image_path(pid_t pid, __u64 base, char *path, size_t len)
{
	struct mt_maps maps;
	size_t i;
	int e = proc_maps_read(pid, &maps);

	if (e)
		return e;
	e = -ENOENT;
	for (i = 0; i < maps.n; i++) {
		const struct mt_map *m = &maps.v[i];

		if (is_image_map(m, MT_INJECT_MEMFD_NAME) && m->start >= base && m->perms[2] == 'x') {
			snprintf(path, len, "/proc/%d/map_files/%llx-%llx", pid,
				 (unsigned long long)m->start, (unsigned long long)m->end);
			e = 0;
			break;
		}
	}
	proc_maps_free(&maps);
	return e;
}

/* Run a system call in the held thread; its result or a -errno. */
static long rcall(struct inject_session *s, long nr, __u64 a0, __u64 a1, __u64 a2, __u64 a3,
		  __u64 a4, __u64 a5)
{
	__u64 args[6] = { a0, a1, a2, a3, a4, a5 };
	long ret;
	int e = inject_session_syscall(s, nr, args, &ret);

	return e ? e : ret;
}

static bool rfailed(long r)
{
	return r < 0 && r > -4096;
}

/* The process's descriptor fd, taken over by memtop (pidfd_getfd): the
 * open file itself, with the access it was opened with, never a reopen
 * of whatever /proc/PID/fd/N names by the time memtop gets there (a thread
 * of the process can dup2() any descriptor onto N, an O_PATH one of a
 * root-only file or a FIFO included). It must be the memfd the held
 * thread just made: a sealable, empty, unlinked regular file of that
 * name, opened for writing. Descriptor or -errno (-EBADF: something else). */
static int memfd_take(pid_t pid, long fd, const char *memfd_name, struct stat *st)
{
	char self[64], name[128], want[128];
	int pidfd, mine, e = 0;
	ssize_t n;

	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pidfd < 0)
		return -errno;
	mine = (int)syscall(SYS_pidfd_getfd, pidfd, (int)fd, 0);
	e = mine < 0 ? -errno : 0;
	close(pidfd);
	if (e)
		return e;
	snprintf(self, sizeof(self), "/proc/self/fd/%d", mine);
	n = readlink(self, name, sizeof(name) - 1);
	name[n > 0 ? n : 0] = '\0';
	if (fstat(mine, st) || !S_ISREG(st->st_mode) || st->st_size || st->st_nlink ||
	    fcntl(mine, F_GET_SEALS) != 0 || (fcntl(mine, F_GETFL) & O_ACCMODE) != O_RDWR ||
	    (snprintf(want, sizeof(want), "/memfd:%s (deleted)", memfd_name), strcmp(name, want))) {
		close(mine);
		return -EBADF;
	}
	return mine;
}

/* Write the file into the memfd, then seal it: nobody changes or resizes
 * it after memtop checked what it holds. */
static int fill_memfd(const struct inject_image *im, int mine)
{
	if (pwrite(mine, im->data, im->size, 0) != (ssize_t)im->size)
		return -EIO;
	if (fcntl(mine, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL))
		return -errno;
	return 0;
}

/* Every file mapping in [base, base + span) is the memfd memtop filled
 * (its device and inode): what the held thread mapped from descriptor fd
 * is what memtop checked, even if fd was swapped in between. */
static int mapped_is(pid_t pid, const char *memfd_name, __u64 base, __u64 span, const struct stat *st)
{
	struct mt_maps maps;
	size_t i, files = 0;
	int e = proc_maps_read(pid, &maps);

	if (e)
		return e;
	for (i = 0; i < maps.n && !e; i++) {
		const struct mt_map *m = &maps.v[i];

		if (m->end <= base || m->start >= base + span || !m->inode)
			continue;
		files++;
		if (m->inode != st->st_ino || m->dev_major != major(st->st_dev) ||
		    m->dev_minor != minor(st->st_dev) || !is_image_map(m, memfd_name))
			e = -EBADF;
	}
	proc_maps_free(&maps);
	return e ? e : files ? 0 : -EBADF;
}

/* The segments over the reserved span at base. */
static int map_segments(const struct inject_image *im, struct inject_session *s, long fd, __u64 base)
{
	static const unsigned char zeros[INJECT_PAGE];
	int i;

	for (i = 0; i < im->nload; i++) {
		__u64 start = INJECT_PAGE_DOWN(im->load[i].vaddr);
		__u64 file_end = im->load[i].vaddr + im->load[i].filesz;
		__u64 mem_end = INJECT_PAGE_UP(im->load[i].vaddr + im->load[i].memsz);
		int prot = im->load[i].prot;
		long r;

		r = rcall(s, SYS_mmap, base + start, INJECT_PAGE_UP(file_end) - start, prot,
			  MAP_PRIVATE | MAP_FIXED, (__u64)fd, INJECT_PAGE_DOWN(im->load[i].offset));
		if (rfailed(r) || (__u64)r != base + start)
			return rfailed(r) ? (int)r : -EFAULT;
		if (im->load[i].memsz > im->load[i].filesz) {
			/* .bss: the rest of the last file page, then anonymous pages */
			if (INJECT_PAGE_UP(file_end) > file_end &&
			    inject_mem_write(s->mem_fd, base + file_end, zeros,
					     INJECT_PAGE_UP(file_end) - file_end))
				return -EFAULT;
			if (mem_end > INJECT_PAGE_UP(file_end)) {
				r = rcall(s, SYS_mmap, base + INJECT_PAGE_UP(file_end),
					  mem_end - INJECT_PAGE_UP(file_end), prot,
					  MAP_PRIVATE | MAP_FIXED | MAP_ANONYMOUS, (__u64)-1, 0);
				if (rfailed(r))
					return (int)r;
			}
		}
	}
	return 0;
}

int inject_image_map(const struct inject_image *im, struct inject_session *s, __u64 *base,
		     char *err, size_t errlen)
{
	const char *name = im->memfd_name ? im->memfd_name : MT_INJECT_MEMFD_NAME;
	long scratch, fd, at = 0;
	struct stat st = { 0 };
	int e, mine = -1;

	scratch = rcall(s, SYS_mmap, 0, INJECT_PAGE, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, (__u64)-1, 0);
	if (rfailed(scratch)) {
		snprintf(err, errlen, "PID %d: mmap in the process failed: %s", s->pid,
			 strerror((int)-scratch));
		return (int)scratch;
	}
	e = inject_mem_write(s->mem_fd, (__u64)scratch, name, strlen(name) + 1);
	fd = e ? e
	       : rcall(s, SYS_memfd_create, (__u64)scratch, MFD_CLOEXEC | MFD_ALLOW_SEALING, 0, 0,
		       0, 0);
	rcall(s, SYS_munmap, (__u64)scratch, INJECT_PAGE, 0, 0, 0, 0);
	if (rfailed(fd)) {
		snprintf(err, errlen, "PID %d: memfd_create in the process failed: %s", s->pid,
			 strerror((int)-fd));
		return (int)fd;
	}
	mine = memfd_take(s->pid, fd, name, &st);
	e = mine < 0 ? mine : fill_memfd(im, mine);
	if (mine >= 0)
		close(mine);
	if (e == -EBADF) {
		rcall(s, SYS_close, (__u64)fd, 0, 0, 0, 0, 0);
		snprintf(err, errlen,
			 "PID %d: its descriptor %ld is not the memfd its thread just made (replaced "
			 "by another thread?): not injecting",
			 s->pid, fd);
		return e;
	}
	if (!e) {
		at = rcall(s, SYS_mmap, 0, im->span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
			   (__u64)-1, 0);
		if (rfailed(at))
			e = (int)at;
	}
	if (!e) {
		e = map_segments(im, s, fd, (__u64)at);
		if (!e)
			e = mapped_is(s->pid, name, (__u64)at, im->span, &st);
		if (e)
			rcall(s, SYS_munmap, (__u64)at, im->span, 0, 0, 0, 0);
	}
	rcall(s, SYS_close, (__u64)fd, 0, 0, 0, 0, 0);
	if (e) {
		snprintf(err, errlen, "PID %d: cannot map %s: %s", s->pid, name,
			 e == -EBADF ? "what was mapped is not the memfd memtop filled"
				     : strerror(-e));
		return e;
	}
	*base = (__u64)at;
	return 0;
}

int inject_image_wipe_on_fork(const struct inject_image *im, struct inject_session *s, __u64 base)
{
	long r;

	if (im->slots % INJECT_PAGE)
		return -EINVAL;
	r = rcall(s, SYS_madvise, base + im->slots, sizeof(struct mt_inject_slots), MADV_WIPEONFORK,
		  0, 0, 0);
	return rfailed(r) ? (int)r : 0;
}

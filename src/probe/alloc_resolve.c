// SPDX-License-Identifier: GPL-2.0-only
/*
 * alloc_resolve.c - the serving allocator of a process (alloc_resolve.h).
 *
 * Rebuilds the dynamic linker's global search order from the files the
 * process maps: the executable, its preloads (LD_PRELOAD from
 * /proc/PID/environ, then /etc/ld.so.preload in the target's root), then
 * DT_NEEDED breadth-first, each name matched to a mapped object by
 * DT_SONAME or file name. The first object of that order whose .dynsym
 * exports malloc is the one every relocation of malloc binds to; a
 * prefixed allocator elsewhere in that order (je_malloc) is reported
 * beside it, since its callers name it directly. Files
 * are read through /proc/PID/map_files, so a deleted or replaced library
 * is still the one mapped.
 */
#include "probe/alloc_resolve.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "readers/elf_file.h"
#include "readers/target_file.h"
#include "util/safe_open.h"

#define MAX_OBJS 256
#define MAX_NEEDED 64
#define ENV_MAX (256 * 1024)

struct obj {
	const struct mt_map *map; /* its first mapping */
	struct elf_file *ef;      /* NULL: unreadable */
	const char *soname;       /* owned by ef */
	const char *needed[MAX_NEEDED];
	int nneeded;
	bool queued;
};

struct objs {
	struct obj v[MAX_OBJS];
	int n;
};

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* DT_SONAME and DT_NEEDED of an object, from its SHT_DYNAMIC section. */
static void read_dynamic(struct obj *o)
{
	Elf *elf = elf_file_libelf(o->ef);
	Elf_Scn *scn = NULL;

	while (elf && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;
		size_t i, n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC || !sh.sh_entsize)
			continue;
		data = elf_getdata(scn, NULL);
		n = data ? data->d_size / sh.sh_entsize : 0;
		for (i = 0; i < n; i++) {
			GElf_Dyn d;
			const char *s;

			if (!gelf_getdyn(data, (int)i, &d) || d.d_tag == DT_NULL)
				break;
			if (d.d_tag != DT_NEEDED && d.d_tag != DT_SONAME)
				continue;
			s = elf_strptr(elf, sh.sh_link, d.d_un.d_val);
			if (!s)
				continue;
			if (d.d_tag == DT_SONAME)
				o->soname = s;
			else if (o->nneeded < MAX_NEEDED)
				o->needed[o->nneeded++] = s;
		}
		return;
	}
}

/* Whether the object's .dynsym exports name (defined, global or weak). */
static bool exports(struct obj *o, const char *name)
{
	Elf *elf = o->ef ? elf_file_libelf(o->ef) : NULL;
	Elf_Scn *scn = NULL;

	while (elf && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;
		size_t i, n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM || !sh.sh_entsize)
			continue;
		data = elf_getdata(scn, NULL);
		n = data ? data->d_size / sh.sh_entsize : 0;
		for (i = 1; i < n; i++) {
			GElf_Sym sym;
			const char *s;
			int bind;

			if (!gelf_getsym(data, (int)i, &sym) || sym.st_shndx == SHN_UNDEF)
				continue;
			bind = GELF_ST_BIND(sym.st_info);
			if (bind != STB_GLOBAL && bind != STB_WEAK)
				continue;
			s = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (s && !strcmp(s, name))
				return true;
		}
		return false;
	}
	return false;
}

/* One object per mapped ELF file, opened through map_files. A mapped
 * file that is not ELF (data, a memory file) takes no slot: a target
 * mapping hundreds of them below its libraries must not push its
 * allocator out of the table. */
static void collect(pid_t pid, const struct mt_maps *maps, struct objs *os)
{
	size_t i;
	int k;

	for (i = 0; i < maps->n && os->n < MAX_OBJS; i++) {
		const struct mt_map *m = &maps->v[i];
		char path[96];
		bool seen = false;

		if (!m->path || m->path[0] != '/')
			continue;
		for (k = 0; k < os->n && !seen; k++)
			seen = os->v[k].map->path == m->path || !strcmp(os->v[k].map->path, m->path);
		if (seen)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/map_files/%llx-%llx", pid,
			 (unsigned long long)m->start, (unsigned long long)m->end);
		memset(&os->v[os->n], 0, sizeof(os->v[0]));
		os->v[os->n].map = m;
		os->v[os->n].ef = elf_file_open(path);
		if (!os->v[os->n].ef)
			continue;
		read_dynamic(&os->v[os->n]);
		os->n++;
	}
}

/* The mapped object a DT_NEEDED or preload name refers to, or NULL. */
static struct obj *find_obj(struct objs *os, const char *name)
{
	bool has_slash = strchr(name, '/') != NULL;
	int k;

	for (k = 0; k < os->n; k++) {
		struct obj *o = &os->v[k];

		if (has_slash ? !strcmp(o->map->path, name) : false)
			return o;
		if (o->soname && !strcmp(o->soname, base_name(name)))
			return o;
		if (!strcmp(base_name(o->map->path), base_name(name)))
			return o;
	}
	return NULL;
}

/* The executable: the object mapped from the file /proc/PID/exe names. */
static struct obj *find_exe(pid_t pid, struct objs *os)
{
	char link[64], target[4096];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/%d/exe", pid);
	n = readlink(link, target, sizeof(target) - 1);
	if (n <= 0)
		return NULL;
	target[n] = '\0';
	if (n > 10 && !strcmp(target + n - 10, " (deleted)"))
		target[n - 10] = '\0';
	for (int k = 0; k < os->n; k++)
		if (!strcmp(os->v[k].map->path, target))
			return &os->v[k];
	return NULL;
}

/* Read a whole small file into a NUL-terminated heap buffer. */
/* Up to ENV_MAX bytes of fd (closed), NUL-terminated; NULL on failure. */
static char *slurp_fd(int fd, size_t *len)
{
	char *buf = fd >= 0 ? malloc(ENV_MAX + 1) : NULL;
	ssize_t n, got = 0;

	if (!buf) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	while (got < ENV_MAX && (n = read(fd, buf + got, ENV_MAX - got)) > 0)
		got += n;
	close(fd);
	buf[got] = '\0';
	*len = got;
	return buf;
}

static char *slurp(const char *path, size_t *len)
{
	return slurp_fd(open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK), len);
}

static void queue_names(struct objs *os, struct obj **order, int *n, char *list)
{
	char *save = NULL, *tok;

	for (tok = strtok_r(list, ": \t\n", &save); tok; tok = strtok_r(NULL, ": \t\n", &save)) {
		struct obj *o = find_obj(os, tok);

		if (o && !o->queued && *n < MAX_OBJS) {
			o->queued = true;
			order[(*n)++] = o;
		}
	}
}

/* LD_PRELOAD from the environment the process started with, then
 * /etc/ld.so.preload as the process sees it. */
static void queue_preloads(pid_t pid, struct objs *os, struct obj **order, int *n)
{
	char path[64];
	size_t len, off;
	char *env;

	snprintf(path, sizeof(path), "/proc/%d/environ", pid);
	env = slurp(path, &len);
	for (off = 0; env && off < len; off += strlen(env + off) + 1) {
		if (!strncmp(env + off, "LD_PRELOAD=", 11)) {
			queue_names(os, order, n, env + off + 11);
			break;
		}
	}
	free(env);
	/* the target's file, in its root: a chroot's own symlink or FIFO
	 * there is never followed out of it nor waited on */
	env = slurp_fd(target_file_open_named(pid, true, "/etc/ld.so.preload"), &len);
	if (env)
		queue_names(os, order, n, env);
	free(env);
}

/* The global search order; returns its length. */
static int search_order(pid_t pid, struct objs *os, struct obj *exe, struct obj **order)
{
	int n = 0, head;

	exe->queued = true;
	order[n++] = exe;
	queue_preloads(pid, os, order, &n);
	for (head = 0; head < n; head++) {
		struct obj *o = order[head];

		for (int i = 0; i < o->nneeded && n < MAX_OBJS; i++) {
			struct obj *d = find_obj(os, o->needed[i]);

			if (d && !d->queued) {
				d->queued = true;
				order[n++] = d;
			}
		}
	}
	return n;
}

#define MEMTOP_SAMPLER_SO "libmemtop-sampler.so"

/* The first object of the search order but the serving one that holds a
 * prefixed allocator (alloc_choice.extra). */
static void find_extra(struct obj **order, int n, const struct obj *serving, struct alloc_found *extra)
{
	int i;

	memset(extra, 0, sizeof(*extra));
	for (i = 0; i < n; i++) {
		struct obj *o = order[i];

		if (o == serving || !o->ef || !strcmp(base_name(o->map->path), MEMTOP_SAMPLER_SO))
			continue;
		extra->alloc = allocators_identify_prefixed(o->ef, o->map->path, extra->prefix,
							    sizeof(extra->prefix));
		if (extra->alloc) {
			extra->map = o->map;
			return;
		}
	}
}

static int choose(pid_t pid, struct objs *os, struct alloc_choice *out, char *err, size_t errlen)
{
	struct obj *order[MAX_OBJS];
	struct obj *exe = find_exe(pid, os);
	int n, i;

	if (!exe || !exe->ef) {
		snprintf(err, errlen, "cannot read the executable of PID %d", pid);
		return -ENOENT;
	}
	if (!elf_file_is_dynamic(exe->ef)) {
		snprintf(err, errlen, "PID %d is a static executable: no shared allocator to probe",
			 pid);
		return -ENOEXEC;
	}
	n = search_order(pid, os, exe, order);
	for (i = 0; i < n; i++) {
		struct obj *o = order[i];

		if (!o->ef || !exports(o, "malloc"))
			continue;
		/* memtop's sampler, preloaded by -- CMD and inherited by the
		 * command's children, forwards every call to the next
		 * definition in lookup order (sampler.md): that one is probed */
		if (!strcmp(base_name(o->map->path), MEMTOP_SAMPLER_SO))
			continue;
		out->serving.alloc = allocators_identify(o->ef, o->map->path, out->serving.prefix,
							 sizeof(out->serving.prefix));
		out->serving.map = o->map;
		out->order = i;
		if (out->serving.alloc) {
			find_extra(order, n, o, &out->extra);
			return 0;
		}
		if (o == exe)
			snprintf(err, errlen,
				 "PID %d's executable defines its own malloc: memtop has no probe table for it",
				 pid);
		else
			snprintf(err, errlen,
				 "PID %d's malloc is %s's, an allocator memtop has no probe table for (it knows glibc, jemalloc, tcmalloc)",
				 pid, base_name(o->map->path));
		return -ENOTSUP;
	}
	snprintf(err, errlen, "PID %d maps no object that exports malloc: nothing to probe", pid);
	return -ENOENT;
}

int alloc_resolve(pid_t pid, const struct mt_maps *maps, struct alloc_choice *out, char *err,
		  size_t errlen)
{
	struct objs *os = calloc(1, sizeof(*os));
	int e, k;

	if (!os) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	collect(pid, maps, os);
	e = choose(pid, os, out, err, errlen);
	for (k = 0; k < os->n; k++)
		elf_file_close(os->v[k].ef);
	free(os);
	return e;
}

/* *t for a found allocator: the mapped file itself, not whatever its
 * name resolves to now. 0 or -errno with one line in err. */
static int target_of(pid_t pid, const struct alloc_found *f, struct alloc_target *t, char *err,
		     size_t errlen)
{
	int e;

	t->alloc = f->alloc;
	snprintf(t->prefix, sizeof(t->prefix), "%s", f->prefix);
	e = target_file_map_path(pid, f->map, t->path, sizeof(t->path));
	if (e)
		snprintf(err, errlen, "cannot open PID %d's %s: %s", pid, f->map->path,
			 e == -ESRCH || (kill(pid, 0) && errno == ESRCH) ? "the process exited"
									 : safe_open_strerror(e));
	return e;
}

int alloc_resolve_pid(pid_t pid, struct alloc_target *serving, struct alloc_target *extra,
		      char *err, size_t errlen)
{
	struct alloc_choice c;
	struct mt_maps maps;
	int e = proc_maps_read(pid, &maps);

	extra->alloc = NULL;
	if (e) {
		snprintf(err, errlen, "cannot read the memory map of PID %d: %s", pid,
			 e == -ESRCH ? "the process exited" : strerror(-e));
		return e;
	}
	e = alloc_resolve(pid, &maps, &c, err, errlen);
	if (!e)
		e = target_of(pid, &c.serving, serving, err, errlen);
	if (!e && c.extra.alloc)
		e = target_of(pid, &c.extra, extra, err, errlen);
	proc_maps_free(&maps);
	return e;
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * symbolize.c - runtime addresses to named frames.
 *
 * An address becomes a frame in four steps: proc_cache gives the mapping
 * that contains it (file offset = mapping offset + distance into the
 * mapping) and the elf_file behind it; the file's PT_LOAD segments turn
 * the offset into a link-time address; the per-file object (below) names
 * it; and the per-mapping parts (module, module_path, addr, rel_addr) are
 * filled in. Anonymous memory becomes "[jit]" (executable) or "[anon]",
 * a file with no symbol there module+offset, an address in no mapping
 * "[unknown]".
 *
 * Owns two caches (util/hmap). Objects, keyed by file identity (device, inode, size,
 * mtime), hold a reference on the file, its separate debug file
 * (debuginfo.c) and its DWARF (dwarf_lines.c), or for a Go executable its
 * Go symbol table (go_binary.c: names and file:line, stripped or not,
 * preferred to DWARF for Go code), set up on first use and
 * kept while some watched process maps the file (proc_cache_has_file):
 * when their number doubles past SWEEP_MIN, those of files no longer
 * mapped are closed (with the result cache, which points at them), so a
 * target that maps one new file after another costs memtop no descriptor
 * and no memory for the files it dropped. Results, keyed by (object, link-time
 * address), hold the named frames (function, file, line, inline chain),
 * so an address seen before - in any process mapping the same file -
 * costs a map search and a hash lookup. The result table is cleared when
 * it reaches MAX_RESULTS entries, and when a debug file fetched from
 * debuginfod arrives for an object (its addresses were named without
 * it). A name the string pool refused (STRPOOL_OVERFLOW: the caller's
 * target is over its share) is shown but never cached, since the caches
 * serve every target: another target asks again and gets the real name.
 * Not thread-safe.
 */
#include "stacks/symbolize.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "stacks/debuginfo.h"
#include "stacks/debuginfod_fetch.h"
#include "stacks/demangle.h"
#include "stacks/dwarf_lines.h"
#include "stacks/go_binary.h"
#include "util/file_id.h"
#include "util/hmap.h"
#include "util/strpool.h"

#define MODULE_SLOTS 256
#define MAX_RESULTS (1u << 20)
#define MAX_INLINE 16
#define SWEEP_MIN 64

struct sym_obj {
	struct file_id id;
	struct elf_file *ef;    /* the mapped file (reference) */
	struct elf_file *debug; /* separate debug file, or NULL */
	struct dwarf_lines *dl; /* from debug or ef, or NULL */
	struct go_binary *go;   /* a Go executable's table, or NULL */
	const char *build_id;   /* interned */
	bool debug_pending;     /* a debuginfod fetch of debug is in flight */
};

/* What does not depend on the process or the mapping. */
struct res_frame {
	const char *function;
	const char *file;
	__u32 line;
	__u32 flags;
};

struct result {
	const struct sym_obj *obj;
	__u64 vaddr;
	int n;
	struct res_frame frames[];
};

struct symbolizer {
	struct proc_cache *pc;
	struct hmap objs; /* struct sym_obj, by file_id */
	size_t sweep_at;  /* sweep when objs.len reaches it */
	struct hmap res;  /* struct result, by (obj, vaddr) */
	struct {          /* interned path -> interned basename */
		const char *path;
		const char *base;
	} modules[MODULE_SLOTS];
	const char *s_anon, *s_jit, *s_unknown;
};

struct symbolizer *symbolizer_new(struct proc_cache *pc)
{
	struct symbolizer *s;

	if (!pc) {
		errno = EINVAL;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		errno = ENOMEM;
		return NULL;
	}
	s->pc = pc;
	s->sweep_at = SWEEP_MIN;
	hmap_init(&s->objs);
	hmap_init(&s->res);
	s->s_anon = strpool_intern("[anon]");
	s->s_jit = strpool_intern("[jit]");
	s->s_unknown = strpool_intern("[unknown]");
	if (!s->s_anon || !s->s_jit || !s->s_unknown) {
		free(s);
		errno = ENOMEM;
		return NULL;
	}
	return s;
}

static void results_clear(struct symbolizer *s)
{
	struct result *r;
	size_t pos = 0;

	while ((r = hmap_next(&s->res, &pos)))
		free(r);
	hmap_fini(&s->res);
}

static void obj_free(struct sym_obj *o)
{
	dwarf_lines_close(o->dl);
	go_binary_close(o->go);
	free(o->go);
	elf_file_close(o->debug);
	elf_file_close(o->ef);
	free(o);
}

void symbolizer_free(struct symbolizer *s)
{
	struct sym_obj *o;
	size_t pos = 0;

	if (!s)
		return;
	debuginfod_fetch_stop(); /* the run's only symbolizer is going */
	results_clear(s);
	while ((o = hmap_next(&s->objs, &pos)))
		obj_free(o);
	hmap_fini(&s->objs);
	free(s);
}

/* ==== Objects ==== */

static bool obj_eq(const void *val, const void *key)
{
	return file_id_equal(&((const struct sym_obj *)val)->id, key);
}

/* Close the objects of files no watched process maps any more, and the
 * result cache with them (its entries point at objects). */
static void obj_sweep(struct symbolizer *s)
{
	struct sym_obj *o;
	bool any = false;
	size_t pos = 0;

	while ((o = hmap_next(&s->objs, &pos))) {
		if (proc_cache_has_file(s->pc, &o->id))
			continue;
		if (!any)
			results_clear(s);
		any = true;
		hmap_del(&s->objs, file_id_hash(&o->id), obj_eq, &o->id);
		obj_free(o);
		pos--; /* the deletion may have moved a later value here */
	}
	s->sweep_at = s->objs.len * 2 > SWEEP_MIN ? s->objs.len * 2 : SWEEP_MIN;
}

/* A debuginfod fetch for o has ended: take the file if one came. */
static void obj_debug_arrived(struct symbolizer *s, struct sym_obj *o, pid_t pid)
{
	struct elf_file *debug = debuginfo_fetched(o->ef);

	if (!debug && errno == EAGAIN)
		return;
	o->debug_pending = false;
	if (!debug)
		return;
	o->debug = debug;
	if (elf_file_has_dwarf(debug)) {
		struct dwarf_lines *dl = dwarf_lines_open(debug, pid);

		if (dl) {
			dwarf_lines_close(o->dl);
			o->dl = dl;
		}
	}
	results_clear(s);
}

static struct sym_obj *obj_get(struct symbolizer *s, struct elf_file *ef, pid_t pid,
			       const char *map_path)
{
	const struct file_id *id = elf_file_id(ef);
	__u64 h = file_id_hash(id);
	struct sym_obj *o;

	o = hmap_get(&s->objs, h, obj_eq, id);
	if (o) {
		if (o->debug_pending)
			obj_debug_arrived(s, o, pid);
		return o;
	}
	if (s->objs.len >= s->sweep_at)
		obj_sweep(s);
	o = calloc(1, sizeof(*o));
	if (!o)
		return NULL;
	o->id = *id;
	o->ef = elf_file_ref(ef);
	o->build_id = strpool_intern(elf_file_build_id(ef));
	if (go_binary_is_go(ef) && (o->go = calloc(1, sizeof(*o->go))) &&
	    (go_binary_open(ef, o->go) || !o->go->has_table)) {
		go_binary_close(o->go);
		free(o->go);
		o->go = NULL;
	}
	/* A separate debug file is needed when ef lacks DWARF or .symtab. */
	if (!elf_file_has_dwarf(ef) || !elf_file_has_symtab(ef)) {
		o->debug = debuginfo_find(ef, pid, map_path);
		o->debug_pending = !o->debug && errno == EAGAIN;
	}
	if (o->debug && elf_file_has_dwarf(o->debug))
		o->dl = dwarf_lines_open(o->debug, pid);
	if (!o->dl && elf_file_has_dwarf(ef))
		o->dl = dwarf_lines_open(ef, pid);
	if (hmap_put(&s->objs, h, o)) {
		obj_free(o);
		return NULL;
	}
	return o;
}

/* The function symbol at vaddr, as in the file (mangled): the debug
 * file's full .symtab first, then the file's own tables. */
static const char *obj_symbol(const struct sym_obj *o, __u64 vaddr)
{
	const char *name;
	__u64 start;

	if (o->debug && !elf_file_symbol_at(o->debug, vaddr, &name, &start))
		return name;
	if (!elf_file_symbol_at(o->ef, vaddr, &name, &start))
		return name;
	return NULL;
}

/* Name vaddr of o: frames innermost first into out[0..MAX_INLINE). The
 * outermost frame, the function really executing, takes the symbol
 * table's name (the public alias: "malloc", not glibc's internal
 * "__libc_malloc") unless that is a compiler clone ("f.isra.0",
 * "main.cold"), for which DWARF has the source name. */
static int obj_name(const struct sym_obj *o, __u64 vaddr, struct res_frame *out)
{
	struct dwarf_frame df[MAX_INLINE];
	struct go_pc_info gi;
	const char *raw, *sym;
	int n;

	if (o->go && !go_pclntab_lookup(&o->go->tab, vaddr, &gi)) {
		out[0] = (struct res_frame){ .function = strpool_intern(gi.function),
					     .file = gi.file ? strpool_intern(gi.file) : NULL,
					     .line = gi.line };
		if (!out[0].function)
			out[0].flags = MT_FRAME_NOSYM;
		return 1;
	}
	raw = obj_symbol(o, vaddr);
	sym = demangle_name(raw);
	n = o->dl ? dwarf_lines_lookup(o->dl, vaddr, df, MAX_INLINE) : 0;

	if (!n) {
		out[0] = (struct res_frame){ .function = sym, .flags = sym ? 0 : MT_FRAME_NOSYM };
		return 1;
	}
	for (int i = 0; i < n; i++) {
		out[i] = (struct res_frame){
			.function = df[i].function,
			.file = df[i].file,
			.line = df[i].line,
			.flags = i < n - 1 ? MT_FRAME_INLINED : 0,
		};
	}
	if (sym && (!out[n - 1].function || !strchr(raw, '.')))
		out[n - 1].function = sym;
	if (!out[n - 1].function)
		out[n - 1].flags |= MT_FRAME_NOSYM;
	return n;
}

/* ==== Result cache ==== */

struct res_key {
	const struct sym_obj *obj;
	__u64 vaddr;
};

static __u64 res_hash(const struct sym_obj *o, __u64 vaddr)
{
	return hmap_mix(hmap_mix(0, (__u64)(uintptr_t)o), vaddr);
}

static bool res_eq(const void *val, const void *key)
{
	const struct result *r = val;
	const struct res_key *k = key;

	return r->obj == k->obj && r->vaddr == k->vaddr;
}

static struct result *res_find(struct symbolizer *s, const struct sym_obj *o, __u64 vaddr)
{
	struct res_key k = { o, vaddr };

	return hmap_get(&s->res, res_hash(o, vaddr), res_eq, &k);
}

/* Store frames for (o, vaddr); failure only loses the caching. */
static void res_store(struct symbolizer *s, const struct sym_obj *o, __u64 vaddr,
		      const struct res_frame *f, int n)
{
	struct result *r;

	for (int i = 0; i < n; i++)
		if (strpool_is_overflow(f[i].function) || strpool_is_overflow(f[i].file))
			return;
	if (s->res.len + 1 > MAX_RESULTS)
		results_clear(s);
	r = malloc(sizeof(*r) + (size_t)n * sizeof(*f));
	if (!r)
		return;
	memcpy(r->frames, f, (size_t)n * sizeof(*f));
	r->obj = o;
	r->vaddr = vaddr;
	r->n = n;
	if (hmap_put(&s->res, res_hash(o, vaddr), r))
		free(r);
}

/* ==== Resolving ==== */

static const char *module_of(struct symbolizer *s, const char *path)
{
	size_t slot = ((uintptr_t)path >> 4) % MODULE_SLOTS;
	const char *slash, *base;

	if (s->modules[slot].path == path)
		return s->modules[slot].base;
	slash = strrchr(path, '/');
	base = slash && slash[1] ? strpool_intern(slash + 1) : path;
	if (strpool_is_overflow(base))
		return base;
	s->modules[slot].path = path;
	s->modules[slot].base = base;
	return base;
}

int symbolizer_resolve(struct symbolizer *s, pid_t pid, __u64 addr, bool is_return_addr,
		       struct mt_frame *out, int max)
{
	__u64 look = is_return_addr && addr ? addr - 1 : addr, off, vaddr;
	struct res_frame tmp[MAX_INLINE];
	const struct res_frame *f = tmp;
	const struct mt_map *map;
	struct mt_frame base;
	struct elf_file *ef;
	struct sym_obj *o;
	struct result *r;
	int n;

	if (max < 1)
		return 0;
	base = (struct mt_frame){ .addr = addr, .module = s->s_unknown, .flags = MT_FRAME_UNMAPPED };
	map = proc_cache_find_map(s->pc, pid, look);
	if (!map) {
		out[0] = base;
		return 1;
	}
	base.flags = 0;
	base.rel_addr = map->offset + (addr - map->start);
	if (!map->path || !strncmp(map->path, "[anon", 5) || !strcmp(map->path, "[heap]") ||
	    !strcmp(map->path, "[stack]")) {
		base.module = strchr(map->perms, 'x') ? s->s_jit : s->s_anon;
		base.rel_addr = addr - map->start;
		base.flags = MT_FRAME_ANON;
		out[0] = base;
		return 1;
	}
	base.module = module_of(s, map->path);
	base.module_path = map->path;
	ef = proc_cache_elf(s->pc, pid, map);
	off = map->offset + (look - map->start);
	if (!ef || elf_file_off_to_vaddr(ef, off, &vaddr) || !(o = obj_get(s, ef, pid, map->path))) {
		base.flags = MT_FRAME_NOSYM;
		if (ef)
			base.build_id = strpool_intern(elf_file_build_id(ef));
		out[0] = base;
		return 1;
	}
	if (strpool_is_overflow(o->build_id)) /* interned for a target over its share */
		o->build_id = strpool_intern(elf_file_build_id(ef));
	base.build_id = o->build_id;
	r = res_find(s, o, vaddr);
	if (r) {
		f = r->frames;
		n = r->n;
	} else {
		n = obj_name(o, vaddr, tmp);
		res_store(s, o, vaddr, tmp, n);
	}
	/* Past max, keep the innermost max - 1 and the real (outermost) one. */
	for (int i = 0; i < n && i < max; i++) {
		const struct res_frame *src = &f[i == max - 1 ? n - 1 : i];

		out[i] = base;
		out[i].function = src->function;
		out[i].file = src->file;
		out[i].line = src->line;
		out[i].flags = src->flags;
	}
	return n < max ? n : max;
}

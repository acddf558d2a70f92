// SPDX-License-Identifier: GPL-2.0-only
/*
 * next_alloc.c - finds, for each allocation function the preloaded sampler
 * interposes, the definition the process would have called without it
 * (next_alloc.h).
 *
 * The dynamic loader searches a symbol in the global scope in load order:
 * the executable, LD_PRELOAD objects, then their dependencies breadth
 * first, the order dl_iterate_phdr() reports them in. The next definition
 * after the sampler is what dlsym(RTLD_NEXT, name) returns, found here
 * without dlsym (which may allocate, and so recurse into malloc) by reading
 * each later object's dynamic symbol table through its GNU or SysV hash
 * table. Symbols hidden behind a non-default version (malloc@GLIBC_x that
 * is not @@) are skipped, as the loader skips them for an unversioned
 * reference.
 */
#include "sampler/next_alloc.h"
#include "util/elf_dynhash.h"

#include <elf.h>
#include <link.h>
#include <stdint.h>
#include <string.h>

/* A chain of the process's own loader tables is a few symbols long; the
 * bound only guards against a corrupted one. */
#define DYNHASH_MAX_CHAIN (1u << 20)

enum {
	FN_MALLOC,
	FN_FREE,
	FN_CALLOC,
	FN_REALLOC,
	FN_MEMALIGN,
	FN_ALIGNED_ALLOC,
	FN_POSIX_MEMALIGN,
	FN_VALLOC,
	FN_PVALLOC,
	FN_USABLE,
	FN_COUNT
};

static const char *const fn_names[FN_COUNT] = {
	"malloc",        "free",           "calloc", "realloc", "memalign",
	"aligned_alloc", "posix_memalign", "valloc", "pvalloc", "malloc_usable_size",
};

/* glibc's own names for the functions it defines as aliases of them. */
static const char *const glibc_names[] = {
	[FN_MALLOC] = "__libc_malloc",     [FN_FREE] = "__libc_free",
	[FN_CALLOC] = "__libc_calloc",     [FN_REALLOC] = "__libc_realloc",
	[FN_MEMALIGN] = "__libc_memalign",
};

struct dynsyms {
	uintptr_t base;
	const ElfW(Sym) * sym;
	const char *str;
	const uint32_t *gnu_hash;
	const uint32_t *sysv_hash;
	const ElfW(Half) * versym;
};

struct walk {
	const void *self;
	bool past_self;
	void *fn[FN_COUNT];
	uintptr_t owner[FN_COUNT]; /* load address of the defining object */
	bool glibc_owner;          /* malloc's owner is glibc */
};

static bool same_str(const char *a, const char *b)
{
	while (*a && *a == *b)
		a++, b++;
	return *a == *b;
}

/* The loader rewrites the address entries of .dynamic to run-time
 * addresses for the objects it loads, but not for the vDSO. */
static const void *dyn_ptr(uintptr_t base, ElfW(Addr) v)
{
	return (const void *)(v < base ? v + base : v);
}

static bool dynsyms_init(struct dynsyms *d, const struct dl_phdr_info *info)
{
	const ElfW(Dyn) *dyn = NULL;
	int i;

	memset(d, 0, sizeof(*d));
	d->base = info->dlpi_addr;
	for (i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
			dyn = (const ElfW(Dyn) *)(d->base + info->dlpi_phdr[i].p_vaddr);
	if (!dyn)
		return false;
	for (; dyn->d_tag != DT_NULL; dyn++) {
		switch (dyn->d_tag) {
		case DT_SYMTAB:
			d->sym = dyn_ptr(d->base, dyn->d_un.d_ptr);
			break;
		case DT_STRTAB:
			d->str = dyn_ptr(d->base, dyn->d_un.d_ptr);
			break;
		case DT_GNU_HASH:
			d->gnu_hash = dyn_ptr(d->base, dyn->d_un.d_ptr);
			break;
		case DT_HASH:
			d->sysv_hash = dyn_ptr(d->base, dyn->d_un.d_ptr);
			break;
		case DT_VERSYM:
			d->versym = dyn_ptr(d->base, dyn->d_un.d_ptr);
			break;
		}
	}
	return d->sym && d->str && (d->gnu_hash || d->sysv_hash);
}

/* The run-time address of symbol idx if it is a definition name binds to. */
static void *sym_match(const struct dynsyms *d, uint32_t idx, const char *name)
{
	const ElfW(Sym) *s = &d->sym[idx];
	int type = ELF64_ST_TYPE(s->st_info), bind = ELF64_ST_BIND(s->st_info);
	uintptr_t addr;

	if (s->st_shndx == SHN_UNDEF || !s->st_value || !same_str(name, d->str + s->st_name))
		return NULL;
	if (type != STT_FUNC && type != STT_GNU_IFUNC)
		return NULL;
	if (bind != STB_GLOBAL && bind != STB_WEAK)
		return NULL;
	if (d->versym && ((d->versym[idx] & 0x8000) || d->versym[idx] == 0))
		return NULL;
	addr = d->base + s->st_value;
	if (type == STT_GNU_IFUNC)
		return ((void *(*)(void))addr)();
	return (void *)addr;
}

/* The process's own memory, read in place. */
static int local_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	memcpy(buf, (const void *)(uintptr_t)addr, len);
	return 0;
}

static uint64_t local_match(void *ctx, uint32_t idx, const char *name)
{
	return (uint64_t)(uintptr_t)sym_match(ctx, idx, name);
}

static void *dynsyms_lookup(const struct dynsyms *d, const char *name)
{
	const struct elf_dynhash t = {
		.gnu_hash = (uintptr_t)d->gnu_hash,
		.sysv_hash = (uintptr_t)d->sysv_hash,
		.read = local_read,
		.match = local_match,
		.ctx = (void *)d,
	};
	uint32_t steps = 0;

	return (void *)(uintptr_t)elf_dynhash_lookup(&t, name, DYNHASH_MAX_CHAIN, UINT32_MAX, &steps);
}

static bool contains(const struct dl_phdr_info *info, const void *p)
{
	uintptr_t a = (uintptr_t)p;
	int i;

	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t start = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && a >= start && a - start < ph->p_memsz)
			return true;
	}
	return false;
}

static int walk_object(struct dl_phdr_info *info, size_t size, void *data)
{
	struct walk *w = data;
	struct dynsyms d;
	int i;

	if (!w->past_self) {
		w->past_self = contains(info, w->self);
		return 0;
	}
	if (!dynsyms_init(&d, info))
		return 0;
	for (i = 0; i < FN_COUNT; i++) {
		if (w->fn[i] || !(w->fn[i] = dynsyms_lookup(&d, fn_names[i])))
			continue;
		w->owner[i] = d.base;
		if (i == FN_MALLOC)
			w->glibc_owner = dynsyms_lookup(&d, "gnu_get_libc_version") != NULL;
	}
	/* glibc defines its public names as aliases of __libc_*: a
	 * replacement sharing an object with them would not */
	if (w->fn[FN_MALLOC] && w->owner[FN_MALLOC] == d.base)
		for (i = 0; i < (int)(sizeof(glibc_names) / sizeof(glibc_names[0])); i++)
			if (w->owner[i] != d.base || dynsyms_lookup(&d, glibc_names[i]) != w->fn[i])
				w->glibc_owner = false;
	for (i = 0; i < FN_COUNT; i++)
		if (!w->fn[i])
			return 0;
	return 1;
}

void next_alloc_resolve(struct next_alloc *next, const void *self)
{
	struct walk w;
	int i;

	memset(&w, 0, sizeof(w));
	w.self = self;
	dl_iterate_phdr(walk_object, &w);
	next->malloc = w.fn[FN_MALLOC];
	next->free = w.fn[FN_FREE];
	next->calloc = w.fn[FN_CALLOC];
	next->realloc = w.fn[FN_REALLOC];
	next->memalign = w.fn[FN_MEMALIGN];
	next->aligned_alloc = w.fn[FN_ALIGNED_ALLOC];
	next->posix_memalign = w.fn[FN_POSIX_MEMALIGN];
	next->valloc = w.fn[FN_VALLOC];
	next->pvalloc = w.fn[FN_PVALLOC];
	next->usable = w.fn[FN_USABLE];
	next->glibc = w.glibc_owner;
	for (i = 0; i < FN_COUNT; i++)
		if (!w.fn[i] || w.owner[i] != w.owner[FN_MALLOC])
			next->glibc = false;
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * allocators.c - the probe tables of the allocators memtop knows (glibc,
 * jemalloc, tcmalloc) and how to recognise each in an ELF file.
 *
 * A table lists every exported entry point that allocates or frees by
 * itself. An entry point that only forwards to another one of the table
 * is left out (or, when it forwards with a tail jump as its first
 * instruction, attach.c skips it on its own): probing both would count
 * the call twice. The rows and the measurements behind them are in
 * docs/allocators.md; tests/workloads/mt_alloc_*.c check the counts.
 */
#include "probe/allocators.h"

#include <ctype.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memtop/abi.h"
#include "readers/elf_file.h"
#include "util/grow.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/*
 * glibc 2.36. reallocarray is absent on purpose: glibc's tail-calls
 * realloc through the PLT, so realloc's probe sees every call.
 * realloc(NULL, n) and realloc(p, 0) reach the probed malloc and free.
 */
static const struct alloc_entry glibc_entries[] = {
	{ "malloc", MT_FN_MALLOC, 1, true, true },
	{ "calloc", MT_FN_CALLOC, 2, true, true },
	{ "realloc", MT_FN_REALLOC, 2, true, true },
	{ "posix_memalign", MT_FN_POSIX_MEMALIGN, 3, true, false },
	{ "aligned_alloc", MT_FN_ALIGNED_ALLOC, 2, true, false },
	{ "memalign", MT_FN_MEMALIGN, 2, true, false },
	{ "valloc", MT_FN_VALLOC, 1, true, false },
	{ "pvalloc", MT_FN_PVALLOC, 1, true, false },
	{ "free", MT_FN_FREE, 1, false, true },
};

/*
 * jemalloc 5.3 (libjemalloc.so.2; je_-prefixed builds name the C entry
 * points je_malloc...). It has no pvalloc. Not probed, because they call a
 * probed function on every path: the aligned operator new variants (call
 * aligned_alloc through the PLT). Skipped by attach.c as tail-jump
 * forwarders: _Znam (jmp _Znwm), the unsized operator delete variants (jmp
 * free@plt). The aligned sized operator delete tail-calls sdallocx through
 * the PLT (MT_PF_FREE_FORWARDS). xallocx resizes in place and returns no
 * new block; nallocx, sallocx and malloc_usable_size allocate nothing.
 */
static const struct alloc_entry jemalloc_entries[] = {
	{ "malloc", MT_FN_MALLOC, 1, true, true },
	{ "calloc", MT_FN_CALLOC, 2, true, true },
	{ "realloc", MT_FN_REALLOC, 2, true, true },
	{ "posix_memalign", MT_FN_POSIX_MEMALIGN, 3, true, false },
	{ "aligned_alloc", MT_FN_ALIGNED_ALLOC, 2, true, false },
	{ "memalign", MT_FN_MEMALIGN, 2, true, false },
	{ "valloc", MT_FN_VALLOC, 1, true, false },
	{ "mallocx", MT_FN_MALLOC, 1, true, false },
	{ "rallocx", MT_FN_REALLOC, 2, true, false },
	{ "_Znwm", MT_FN_MALLOC, 1, true, false },
	{ "_Znam", MT_FN_MALLOC, 1, true, false },
	{ "_ZnwmRKSt9nothrow_t", MT_FN_MALLOC, 1, true, false },
	{ "_ZnamRKSt9nothrow_t", MT_FN_MALLOC, 1, true, false },
	{ "free", MT_FN_FREE, 1, false, true },
	{ "sdallocx", MT_FN_FREE, 1, false, false },
	{ "dallocx", MT_FN_FREE, 1, false, false },
	{ "_ZdlPv", MT_FN_FREE, 1, false, false },
	{ "_ZdaPv", MT_FN_FREE, 1, false, false },
	{ "_ZdlPvm", MT_FN_FREE, 1, false, false },
	{ "_ZdaPvm", MT_FN_FREE, 1, false, false },
	{ "_ZdlPvRKSt9nothrow_t", MT_FN_FREE, 1, false, false },
	{ "_ZdaPvRKSt9nothrow_t", MT_FN_FREE, 1, false, false },
	{ "_ZdlPvSt11align_val_t", MT_FN_FREE, 1, false, false },
	{ "_ZdaPvSt11align_val_t", MT_FN_FREE, 1, false, false },
	{ "_ZdlPvmSt11align_val_t", MT_FN_FREE, 1, false, false, MT_PF_FREE_FORWARDS },
	{ "_ZdaPvmSt11align_val_t", MT_FN_FREE, 1, false, false, MT_PF_FREE_FORWARDS },
};

/*
 * gperftools 2.10 (libtcmalloc.so.4, libtcmalloc_minimal.so.4). Its C
 * names are aliases of the tc_* ones (one address, probed once). Not
 * probed, because they call tc_memalign through the PLT on every path:
 * posix_memalign, valloc, pvalloc (counted at memalign, with the size
 * memalign is given). Sized delete forwards page-aligned blocks to
 * tc_free (MT_PF_FREE_FORWARDS, counted once by MT_PF_FREE_DEDUPE).
 */
static const struct alloc_entry tcmalloc_entries[] = {
	{ "malloc", MT_FN_MALLOC, 1, true, true },
	{ "calloc", MT_FN_CALLOC, 2, true, true },
	{ "realloc", MT_FN_REALLOC, 2, true, true },
	{ "memalign", MT_FN_MEMALIGN, 2, true, false },
	{ "_Znwm", MT_FN_MALLOC, 1, true, false },
	{ "_ZnwmRKSt9nothrow_t", MT_FN_MALLOC, 1, true, false },
	{ "_ZnwmSt11align_val_t", MT_FN_MALLOC, 1, true, false },
	{ "_ZnwmSt11align_val_tRKSt9nothrow_t", MT_FN_MALLOC, 1, true, false },
	{ "free", MT_FN_FREE, 1, false, true },
	{ "_ZdlPvm", MT_FN_FREE, 1, false, false, MT_PF_FREE_FORWARDS },
	{ "_ZdlPvRKSt9nothrow_t", MT_FN_FREE, 1, false, false },
	{ "_ZdlPvSt11align_val_t", MT_FN_FREE, 1, false, false },
	{ "_ZdlPvmSt11align_val_t", MT_FN_FREE, 1, false, false },
	{ "_ZdlPvSt11align_val_tRKSt9nothrow_t", MT_FN_FREE, 1, false, false },
};

/* What a prefixed build of each defines besides its marker, all with the
 * same prefix (jemalloc's --with-jemalloc-prefix, e.g. je_ or Rust's
 * _rjem_): enough names that a program's own my_mallocx and my_malloc
 * never look like an allocator. */
static const char *const jemalloc_signature[] = { "malloc",  "free",     "calloc",  "realloc",
						  "rallocx", "sdallocx", "dallocx", NULL };
static const char *const tcmalloc_signature[] = { "malloc", "free", "tc_free", "tc_realloc", NULL };

/* glibc 2.26 and later empty an exiting thread's tcache with free():
 * tcache_thread_shutdown, a static function that Debian's 2.36 inlines
 * into __malloc_arena_thread_freeres, which frees nothing else. */
static const char *const glibc_exit_frees[] = { "tcache_thread_shutdown",
						"__malloc_arena_thread_freeres", NULL };

static const struct allocator glibc = {
	.name = "glibc",
	.exit_frees = glibc_exit_frees,
	.entries = glibc_entries,
	.nentries = N(glibc_entries),
};

static const struct allocator jemalloc = {
	.name = "jemalloc",
	.marker = "mallocx",
	.signature = jemalloc_signature,
	.flags = MT_PF_REALLOC_SELF | MT_PF_FREE_DEDUPE,
	.entries = jemalloc_entries,
	.nentries = N(jemalloc_entries),
};

static const struct allocator tcmalloc = {
	.name = "tcmalloc",
	.marker = "tc_malloc",
	.signature = tcmalloc_signature,
	.flags = MT_PF_REALLOC_SELF | MT_PF_FREE_DEDUPE,
	.entries = tcmalloc_entries,
	.nentries = N(tcmalloc_entries),
};

static const struct allocator *const all[] = { &glibc, &jemalloc, &tcmalloc };

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

bool allocators_is_glibc_name(const char *path)
{
	const char *b = base_name(path);

	return !strncmp(b, "libc.so", 7) || (!strncmp(b, "libc-", 5) && strstr(b, ".so"));
}

/* Whether names[0..n) holds "prefix" "name". */
static bool has_name(const char *const *names, size_t n, const char *prefix, size_t plen,
		     const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strncmp(names[i], prefix, plen) && !strcmp(names[i] + plen, name))
			return true;
	return false;
}

/* A C-name prefix as build systems make them: letters, digits, '_'. */
static bool prefix_chars(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '_')
			return false;
	return true;
}

bool allocators_find_prefix(const char *const *names, size_t n, const struct allocator *a,
			    bool prefixed, char *prefix, size_t len)
{
	size_t mlen, i, k;

	if (!a->marker)
		return false;
	if (!prefixed) {
		if (!has_name(names, n, "", 0, a->marker) || !has_name(names, n, "", 0, "malloc"))
			return false;
		snprintf(prefix, len, "%s", "");
		return true;
	}
	mlen = strlen(a->marker);
	for (i = 0; i < n; i++) {
		size_t nl = strlen(names[i]), plen = nl - mlen;

		if (nl <= mlen || strcmp(names[i] + plen, a->marker) || plen >= len ||
		    plen >= MT_ALLOC_PREFIX_MAX || !prefix_chars(names[i], plen))
			continue;
		for (k = 0; a->signature[k]; k++)
			if (!has_name(names, n, names[i], plen, a->signature[k]))
				break;
		if (a->signature[k])
			continue;
		memcpy(prefix, names[i], plen);
		prefix[plen] = '\0';
		return true;
	}
	return false;
}

/* The defined function names of ef's .dynsym and .symtab, as pointers
 * into ef's string tables; *n of them. NULL when there are none or memory
 * ran out. */
static const char **candidate_names(struct elf_file *ef, size_t *n)
{
	Elf *elf = elf_file_libelf(ef);
	Elf_Scn *scn = NULL;
	const char **v = NULL;
	size_t cap = 0;

	*n = 0;
	while (elf && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;
		size_t i, count;

		if (!gelf_getshdr(scn, &sh) ||
		    (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) || !sh.sh_entsize)
			continue;
		data = elf_getdata(scn, NULL);
		count = data ? data->d_size / sh.sh_entsize : 0;
		for (i = 1; i < count; i++) {
			GElf_Sym sym;
			const char *s;

			if (!gelf_getsym(data, (int)i, &sym) || sym.st_shndx == SHN_UNDEF ||
			    GELF_ST_TYPE(sym.st_info) != STT_FUNC)
				continue;
			s = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (!s || !*s)
				continue;
			if (grow_array(&v, &cap, *n + 1, sizeof(*v))) {
				free(v);
				*n = 0;
				return NULL;
			}
			v[(*n)++] = s;
		}
	}
	return v;
}

/* The allocator with a marker whose names ef defines, with the prefix
 * asked for (prefixed or not). */
static const struct allocator *identify_names(struct elf_file *ef, bool prefixed, char *prefix,
					      size_t len)
{
	size_t n, i;
	const char **names = candidate_names(ef, &n);
	const struct allocator *found = NULL;

	for (i = 0; names && i < N(all) && !found; i++)
		if (allocators_find_prefix(names, n, all[i], prefixed, prefix, len))
			found = all[i];
	free(names);
	return found;
}

const struct allocator *allocators_identify(struct elf_file *ef, const char *path, char *prefix,
					    size_t len)
{
	const struct allocator *a;

	if (path && allocators_is_glibc_name(path)) {
		snprintf(prefix, len, "%s", "");
		return &glibc;
	}
	a = identify_names(ef, false, prefix, len);
	return a ? a : identify_names(ef, true, prefix, len);
}

const struct allocator *allocators_identify_prefixed(struct elf_file *ef, const char *path,
						     char *prefix, size_t len)
{
	if (path && allocators_is_glibc_name(path))
		return NULL;
	return identify_names(ef, true, prefix, len);
}

const struct allocator *allocators_glibc(void)
{
	return &glibc;
}

size_t allocators_all(const struct allocator *const **v)
{
	*v = all;
	return N(all);
}

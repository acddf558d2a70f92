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

#include <stdio.h>
#include <string.h>

#include "memtop/abi.h"
#include "stacks/elf_file.h"

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

static const char *const jemalloc_prefixes[] = { "", "je_", NULL };

static const struct allocator glibc = {
	.name = "glibc",
	.entries = glibc_entries,
	.nentries = N(glibc_entries),
};

static const struct allocator jemalloc = {
	.name = "jemalloc",
	.marker = "mallocx",
	.prefixes = jemalloc_prefixes,
	.flags = MT_PF_REALLOC_SELF | MT_PF_FREE_DEDUPE,
	.entries = jemalloc_entries,
	.nentries = N(jemalloc_entries),
};

static const struct allocator tcmalloc = {
	.name = "tcmalloc",
	.marker = "tc_malloc",
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

static bool defines(struct elf_file *ef, const char *prefix, const char *name)
{
	char sym[128];
	__u64 off, size;

	snprintf(sym, sizeof(sym), "%s%s", prefix, name);
	return elf_file_func_offset(ef, sym, &off, &size) == 0;
}

const struct allocator *allocators_identify(struct elf_file *ef, const char *path,
					    const char **prefix)
{
	static const char *const none[] = { "", NULL };
	size_t i, k;

	if (path && allocators_is_glibc_name(path)) {
		*prefix = "";
		return &glibc;
	}
	for (i = 0; i < N(all); i++) {
		const char *const *pre = all[i]->prefixes ? all[i]->prefixes : none;

		if (!all[i]->marker)
			continue;
		for (k = 0; pre[k]; k++) {
			if (defines(ef, pre[k], all[i]->marker) && defines(ef, pre[k], "malloc")) {
				*prefix = pre[k];
				return all[i];
			}
		}
	}
	return NULL;
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

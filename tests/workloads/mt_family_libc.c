// cflags: -O2 -fno-omit-frame-pointer
/*
 * mt_family_libc - the C allocator API only, linked with nothing but
 * glibc, so that whatever serves malloc serves every call: glibc, or
 * jemalloc or tcmalloc when preloaded (LD_PRELOAD). The truth is the same
 * for all three: realloc(NULL, n) is one allocation call, realloc(p, 0)
 * one free call. See alloc_family.h for the modes.
 */
#include <malloc.h>
#include <stdlib.h>

#include "alloc_family.h"
#include "alloc_family_libc.h"

static struct wl_site s_free_null = { .function = "api_free_null" };

WL_SITE static void api_free_null(unsigned i)
{
	(void)i;
	free(fam_null);
}

WL_SITE static void leak_site(unsigned long size)
{
	char *p = malloc(size);

	scn_fill(p, size);
	wl_sink = p;
	wl_site_alloc(&fam_leak, size);
}

WL_SITE static void cache_site(void **slot, unsigned long size)
{
	char *p;

	if (*slot) {
		free(*slot);
		wl_site_free(&fam_cache, &fam_cache, size);
	}
	p = malloc(size);
	scn_fill(p, size);
	*slot = p;
	wl_site_alloc(&fam_cache, size);
}

WL_SITE static void churn_site(unsigned long size)
{
	char *p = malloc(size);

	scn_fill(p, size);
	wl_sink = (void *)scn_work(p, size);
	free(p);
	wl_site_alloc(&fam_churn, size);
	wl_site_free(&fam_churn, &fam_churn, size);
}

int main(int argc, char **argv)
{
	static struct wl_site *const sites[] = {
		&seed,    &s_malloc,  &s_calloc,   &s_grow,   &s_null,      &s_zero,
		&s_posix, &s_aligned, &s_memalign, &s_valloc, &s_free_null,
	};
	static void (*const apis[])(unsigned) = {
		api_malloc,       api_calloc,         api_realloc_grow,  api_realloc_null,
		api_realloc_zero, api_posix_memalign, api_aligned_alloc, api_memalign,
		api_valloc,       api_free_null,
	};
	static const struct fam_def def = {
		.name = "mt_family_libc",
		.api_sites = sites,
		.napi_sites = sizeof(sites) / sizeof(sites[0]),
		.apis = apis,
		.napis = sizeof(apis) / sizeof(apis[0]),
		.leak = leak_site,
		.cache = cache_site,
		.churn = churn_site,
	};

	return fam_main(argc, argv, &def);
}

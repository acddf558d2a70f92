// cflags: -O2 -fno-omit-frame-pointer
// ldflags: -ljemalloc
/*
 * mt_jemalloc - a program linked with jemalloc 5.3: every entry point memtop
 * probes in it, each from its own site (--mode=apis), and a leak, a cache
 * and churn through mallocx, operator new/sized delete and malloc/free
 * (--mode=scenario); see alloc_family.h. Counting rules (docs/allocators.md):
 * realloc(NULL, n), rallocx and the aligned operator new (which calls
 * aligned_alloc) are one allocation call each; realloc(p, 0), sdallocx,
 * dallocx and every operator delete are one free call.
 */
#include <malloc.h>
#include <stdlib.h>
#include <jemalloc/jemalloc.h>

#include "alloc_family.h"
#include "alloc_family_libc.h"

static struct wl_site s_mallocx = { .function = "api_mallocx" };
static struct wl_site s_rallocx = { .function = "api_rallocx" };
static struct wl_site s_new = { .function = "api_new" };
static struct wl_site s_new_array = { .function = "api_new_array" };
static struct wl_site s_new_sized = { .function = "api_new_sized" };
static struct wl_site s_new_aligned = { .function = "api_new_aligned" };
static struct wl_site s_new_nothrow = { .function = "api_new_nothrow" };
static struct wl_site s_free_null = { .function = "api_free_null" };

WL_SITE static void api_mallocx(unsigned i)
{
	size_t n = 600 + (i % 4) * 200;

	wl_site_alloc(&s_mallocx, n);
	FAM_KEEP_OR_FREE(&s_mallocx, fam_checked(mallocx(n, MALLOCX_ZERO), "mallocx"), n, i,
			 dallocx(wl_sink, 0));
}

/* mallocx 256 (seed: this site) -> rallocx 4096, released with sdallocx */
WL_SITE static void api_rallocx(unsigned i)
{
	void *p = fam_checked(mallocx(256, 0), "mallocx");

	wl_site_alloc(&s_rallocx, 256);
	p = fam_checked(rallocx(p, 4096, 0), "rallocx");
	wl_site_release(&s_rallocx, 256);
	wl_site_alloc(&s_rallocx, 4096);
	FAM_KEEP_OR_FREE(&s_rallocx, p, 4096, i, sdallocx(wl_sink, 4096, 0));
}

WL_SITE static void api_new(unsigned i)
{
	wl_site_alloc(&s_new, 2048);
	FAM_KEEP_OR_FREE(&s_new, _Znwm(2048), 2048, i, _ZdlPv(wl_sink));
}

WL_SITE static void api_new_array(unsigned i)
{
	wl_site_alloc(&s_new_array, 800);
	FAM_KEEP_OR_FREE(&s_new_array, _Znam(800), 800, i, _ZdaPvm(wl_sink, 800));
}

WL_SITE static void api_new_sized(unsigned i)
{
	size_t n = (i % 3) ? 1200 : 64 * KiB;

	wl_site_alloc(&s_new_sized, n);
	FAM_KEEP_OR_FREE(&s_new_sized, _Znwm(n), n, i, _ZdlPvm(wl_sink, n));
}

WL_SITE static void api_new_aligned(unsigned i)
{
	wl_site_alloc(&s_new_aligned, 1280);
	FAM_KEEP_OR_FREE(&s_new_aligned, _ZnwmSt11align_val_t(1280, 128), 1280, i,
			 _ZdlPvmSt11align_val_t(wl_sink, 1280, 128));
}

WL_SITE static void api_new_nothrow(unsigned i)
{
	static const char nothrow;

	wl_site_alloc(&s_new_nothrow, 1500);
	FAM_KEEP_OR_FREE(&s_new_nothrow,
			 fam_checked(_ZnwmRKSt9nothrow_t(1500, &nothrow), "new(nothrow)"), 1500, i,
			 _ZdlPvRKSt9nothrow_t(wl_sink, &nothrow));
}

WL_SITE static void api_free_null(unsigned i)
{
	(void)i;
	free(fam_null);
	_ZdlPv(fam_null);
}

WL_SITE static void leak_site(unsigned long size)
{
	char *p = mallocx(size, 0);

	scn_fill(p, size);
	wl_sink = p;
	wl_site_alloc(&fam_leak, size);
}

WL_SITE static void cache_site(void **slot, unsigned long size)
{
	char *p;

	if (*slot) {
		_ZdlPvm(*slot, size);
		wl_site_free(&fam_cache, &fam_cache, size);
	}
	p = _Znwm(size);
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
		&seed,    &s_malloc,    &s_calloc,    &s_grow,        &s_null,        &s_zero,
		&s_posix, &s_aligned,   &s_memalign,  &s_valloc,      &s_mallocx,     &s_rallocx,
		&s_new,   &s_new_array, &s_new_sized, &s_new_aligned, &s_new_nothrow, &s_free_null,
	};
	static void (*const apis[])(unsigned) = {
		api_malloc,       api_calloc,         api_realloc_grow,  api_realloc_null,
		api_realloc_zero, api_posix_memalign, api_aligned_alloc, api_memalign,
		api_valloc,       api_mallocx,        api_rallocx,       api_new,
		api_new_array,    api_new_sized,      api_new_aligned,   api_new_nothrow,
		api_free_null,
	};
	static const struct fam_def def = {
		.name = "mt_jemalloc",
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

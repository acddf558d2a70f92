/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * alloc_family_libc.h - the C allocator API sites every allocator-family
 * workload shares (mt_family_libc, mt_jemalloc, mt_tcmalloc): one site per
 * entry point, each its own function so memtop names it, and the seed
 * block the realloc sites start from. Include after alloc_family.h.
 */
#ifndef MT_ALLOC_FAMILY_LIBC_H
#define MT_ALLOC_FAMILY_LIBC_H

static struct wl_site seed = { .function = "seed_block" };
static struct wl_site s_malloc = { .function = "api_malloc" };
static struct wl_site s_calloc = { .function = "api_calloc" };
static struct wl_site s_grow = { .function = "api_realloc_grow" };
static struct wl_site s_null = { .function = "api_realloc_null" };
static struct wl_site s_zero = { .function = "api_realloc_zero" };
static struct wl_site s_posix = { .function = "api_posix_memalign" };
static struct wl_site s_aligned = { .function = "api_aligned_alloc" };
static struct wl_site s_memalign = { .function = "api_memalign" };
static struct wl_site s_valloc = { .function = "api_valloc" };

WL_SITE static void *seed_block(size_t size)
{
	void *p = fam_checked(malloc(size), "malloc");

	wl_sink = p;
	wl_site_alloc(&seed, size);
	return p;
}

WL_SITE static void api_malloc(unsigned i)
{
	size_t n = 100 + (i % 7) * 300;

	wl_site_alloc(&s_malloc, n);
	FAM_KEEP_OR_FREE(&s_malloc, fam_checked(malloc(n), "malloc"), n, i, free(wl_sink));
}

WL_SITE static void api_calloc(unsigned i)
{
	size_t nmemb = 1 + i % 8;

	wl_site_alloc(&s_calloc, nmemb * 256);
	FAM_KEEP_OR_FREE(&s_calloc, fam_checked(calloc(nmemb, 256), "calloc"), nmemb * 256, i,
			 free(wl_sink));
}

/* 64 (seed) -> 128 -> ... -> 8192 */
WL_SITE static void api_realloc_grow(unsigned i)
{
	void *p = seed_block(64);
	struct wl_site *owner = &seed;
	size_t old = 64;

	for (size_t n = 128; n <= 8192; n *= 2) {
		p = fam_checked(realloc(p, n), "realloc");
		wl_sink = p;
		wl_site_release(owner, old);
		wl_site_alloc(&s_grow, n);
		owner = &s_grow;
		old = n;
	}
	FAM_KEEP_OR_FREE(&s_grow, p, old, i, free(wl_sink));
}

WL_SITE static void api_realloc_null(unsigned i)
{
	size_t n = 1000 + (i % 5) * 100;

	wl_site_alloc(&s_null, n);
	FAM_KEEP_OR_FREE(&s_null, fam_checked(realloc(fam_null, n), "realloc(NULL)"), n, i,
			 free(wl_sink));
}

WL_SITE static void api_realloc_zero(unsigned i)
{
	void *p = seed_block(512);

	(void)i;
	wl_sink = realloc(p, 0);
	if (wl_sink)
		wl_die("realloc(p, 0) did not free", NULL);
	wl_site_free(&s_zero, &seed, 512);
}

WL_SITE static void api_posix_memalign(unsigned i)
{
	size_t n = 700 + (i % 3) * 100;
	void *p = NULL;

	if (posix_memalign(&p, (size_t)64 << (i % 4), n))
		wl_die("posix_memalign failed", NULL);
	wl_site_alloc(&s_posix, n);
	FAM_KEEP_OR_FREE(&s_posix, p, n, i, free(wl_sink));
}

WL_SITE static void api_aligned_alloc(unsigned i)
{
	wl_site_alloc(&s_aligned, 2048);
	FAM_KEEP_OR_FREE(&s_aligned, fam_checked(aligned_alloc(256, 2048), "aligned_alloc"), 2048,
			 i, free(wl_sink));
}

WL_SITE static void api_memalign(unsigned i)
{
	wl_site_alloc(&s_memalign, 1500);
	FAM_KEEP_OR_FREE(&s_memalign, fam_checked(memalign(128, 1500), "memalign"), 1500, i,
			 free(wl_sink));
}

WL_SITE static void api_valloc(unsigned i)
{
	wl_site_alloc(&s_valloc, 3000);
	FAM_KEEP_OR_FREE(&s_valloc, fam_checked(valloc(3000), "valloc"), 3000, i, free(wl_sink));
}

#endif /* MT_ALLOC_FAMILY_LIBC_H */

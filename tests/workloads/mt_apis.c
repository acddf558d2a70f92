// cflags: -O2 -fno-omit-frame-pointer
/*
 * mt_apis - every allocator entry point memtop probes, each called from its
 * own function, with the exact truth the counting rules give (see
 * mt_workload.h): realloc to a new size is one allocation call (the old block
 * leaves the heap without a free call), realloc(NULL, n) is the malloc it is,
 * realloc(p, 0) is the free it is, free(NULL) counts nothing. reallocarray
 * follows realloc. Blocks that realloc moves belong to seed_block until then,
 * so seed_block's in-use must end at zero.
 *
 * --iterations=N calls per function (default 200), spread over --duration.
 * Every second block is freed right away by the function that allocated it;
 * the others stay live until the process exits.
 */
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#include "mt_workload.h"

static struct wl_site seed = { .function = "seed_block" };
static struct wl_site s_calloc = { .function = "api_calloc" };
static struct wl_site s_grow = { .function = "api_realloc_grow" };
static struct wl_site s_shrink = { .function = "api_realloc_shrink" };
static struct wl_site s_null = { .function = "api_realloc_null" };
static struct wl_site s_zero = { .function = "api_realloc_zero" };
static struct wl_site s_rarray = { .function = "api_reallocarray" };
static struct wl_site s_posix = { .function = "api_posix_memalign" };
static struct wl_site s_aligned = { .function = "api_aligned_alloc" };
static struct wl_site s_memalign = { .function = "api_memalign" };
static struct wl_site s_valloc = { .function = "api_valloc" };
static struct wl_site s_pvalloc = { .function = "api_pvalloc" };
static struct wl_site s_freenull = { .function = "api_free_null" };

/* A NULL the compiler cannot see: GCC turns a literal realloc(NULL, n)
 * into malloc(n). */
static void *volatile null_ptr;

static void *checked(void *p, const char *what)
{
	if (!p)
		wl_die("allocation failed", what);
	return p;
}

/* Keep every second block; free the others from the allocating site. */
static void keep_or_free(struct wl_site *s, void *p, size_t size, unsigned i)
{
	wl_sink = p;
	if (i & 1) {
		free(wl_sink);
		wl_site_free(s, s, size);
	}
}

WL_SITE static void *seed_block(size_t size)
{
	void *p = checked(malloc(size), "malloc");

	wl_sink = p;
	wl_site_alloc(&seed, size);
	return p;
}

WL_SITE static void api_calloc(unsigned i)
{
	size_t nmemb = 1 + i % 8, size = 256;
	void *p = checked(calloc(nmemb, size), "calloc");

	wl_site_alloc(&s_calloc, nmemb * size);
	keep_or_free(&s_calloc, p, nmemb * size, i);
}

/* 64 (seed) -> 128 -> ... -> 16384, one chain per call. */
WL_SITE static void api_realloc_grow(unsigned i)
{
	void *p = seed_block(64);
	struct wl_site *owner = &seed;
	size_t old = 64;

	for (size_t n = 128; n <= 16384; n *= 2) {
		p = checked(realloc(p, n), "realloc grow");
		wl_sink = p;
		wl_site_release(owner, old);
		wl_site_alloc(&s_grow, n);
		owner = &s_grow;
		old = n;
	}
	keep_or_free(&s_grow, p, old, i);
}

/* 8192 (seed) -> 4096 -> 100: glibc may shrink in place. */
WL_SITE static void api_realloc_shrink(unsigned i)
{
	void *p = seed_block(8192);

	p = checked(realloc(p, 4096), "realloc shrink");
	wl_sink = p;
	wl_site_release(&seed, 8192);
	wl_site_alloc(&s_shrink, 4096);
	p = checked(realloc(p, 100), "realloc shrink");
	wl_site_release(&s_shrink, 4096);
	wl_site_alloc(&s_shrink, 100);
	keep_or_free(&s_shrink, p, 100, i);
}

WL_SITE static void api_realloc_null(unsigned i)
{
	size_t n = 1000 + (i % 5) * 100;
	void *p = checked(realloc(null_ptr, n), "realloc(NULL)");

	wl_site_alloc(&s_null, n);
	keep_or_free(&s_null, p, n, i);
}

WL_SITE static void api_realloc_zero(unsigned i)
{
	void *p = seed_block(512);

	(void)i;
	wl_sink = realloc(p, 0);
	if (wl_sink) /* glibc frees and returns NULL: the truth relies on it */
		wl_die("realloc(p, 0) did not free", NULL);
	wl_site_free(&s_zero, &seed, 512);
}

/* NULL -> 10 x 48 -> 40 x 48. */
WL_SITE static void api_reallocarray(unsigned i)
{
	void *p = checked(reallocarray(null_ptr, 10, 48), "reallocarray");

	wl_sink = p;
	wl_site_alloc(&s_rarray, 480);
	p = checked(reallocarray(p, 40, 48), "reallocarray");
	wl_site_release(&s_rarray, 480);
	wl_site_alloc(&s_rarray, 1920);
	keep_or_free(&s_rarray, p, 1920, i);
}

WL_SITE static void api_posix_memalign(unsigned i)
{
	size_t align = (size_t)64 << (i % 4), n = 700 + (i % 3) * 100;
	void *p = NULL;

	if (posix_memalign(&p, align, n))
		wl_die("posix_memalign failed", NULL);
	wl_site_alloc(&s_posix, n);
	keep_or_free(&s_posix, p, n, i);
}

WL_SITE static void api_aligned_alloc(unsigned i)
{
	void *p = checked(aligned_alloc(256, 2048), "aligned_alloc");

	wl_site_alloc(&s_aligned, 2048);
	keep_or_free(&s_aligned, p, 2048, i);
}

WL_SITE static void api_memalign(unsigned i)
{
	void *p = checked(memalign(128, 1500), "memalign");

	wl_site_alloc(&s_memalign, 1500);
	keep_or_free(&s_memalign, p, 1500, i);
}

WL_SITE static void api_valloc(unsigned i)
{
	void *p = checked(valloc(3000), "valloc");

	wl_site_alloc(&s_valloc, 3000);
	keep_or_free(&s_valloc, p, 3000, i);
}

/* pvalloc rounds up to whole pages; the requested size is what counts. */
WL_SITE static void api_pvalloc(unsigned i)
{
	void *p = checked(pvalloc(5000), "pvalloc");

	wl_site_alloc(&s_pvalloc, 5000);
	keep_or_free(&s_pvalloc, p, 5000, i);
}

WL_SITE static void api_free_null(unsigned i)
{
	(void)i;
	free(null_ptr);
}

int main(int argc, char **argv)
{
	static const char *const known[] = { "iterations", "duration", NULL };
	static struct wl_site *const sites[] = { &seed,      &s_calloc,   &s_grow,   &s_shrink,
						 &s_null,    &s_zero,     &s_rarray, &s_posix,
						 &s_aligned, &s_memalign, &s_valloc, &s_pvalloc,
						 &s_freenull };
	static void (*const apis[])(unsigned) = {
		api_calloc,       api_realloc_grow, api_realloc_shrink, api_realloc_null,
		api_realloc_zero, api_reallocarray, api_posix_memalign, api_aligned_alloc,
		api_memalign,     api_valloc,       api_pvalloc,        api_free_null,
	};
	struct wl_opts o;
	uint64_t iterations;
	double duration, t0;

	wl_init(argc, argv, known, &o);
	iterations = wl_arg_u64(argc, argv, "iterations", 200);
	duration = wl_arg_double(argc, argv, "duration", 1.0);

	wl_ready();
	wl_wait_start(&o);
	t0 = wl_now();
	for (uint64_t i = 0; i < iterations; i++) {
		for (size_t k = 0; k < sizeof(apis) / sizeof(apis[0]); k++)
			apis[k]((unsigned)i);
		wl_pace(t0, i + 1, iterations, duration);
	}
	wl_truth_print("mt_apis", sites, sizeof(sites) / sizeof(sites[0]));
	wl_hold_exit(&o);
}

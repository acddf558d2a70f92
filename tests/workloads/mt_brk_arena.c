// cflags: -O2 -fno-omit-frame-pointer
/*
 * mt_brk_arena - a program with its own allocator that grows through brk
 * and mremap, never through malloc, for the mmap source's brk and mremap
 * records (docs/allocators.md). For --duration=SECS (default 16) after
 * the start (mt_workload.h):
 *
 *   heap_grow      the leak: moves the program break up with sbrk() by
 *                  64 KiB at 2 MiB/s and touches what it got; never gives
 *                  it back;
 *   spike_heap     twice a second, sbrk(+1 MiB), touch, sbrk(-1 MiB): a
 *                  growth the next brk takes back (nothing in use after);
 *   cache_resize   a cache in one mapping that mremap() grows by 1 MiB
 *                  every 250 ms (MREMAP_MAYMOVE: it may move) to 16 MiB,
 *                  then only rewrites; made by cache_create (mmap of
 *                  1 MiB), whose record the first mremap takes over;
 *   scratch_map    churn: mmap 1 MiB, touch, munmap, 8 times a second.
 *
 * No malloc is called in the phase (the truth goes out with write()), so
 * glibc's heap never moves the break under heap_grow. The truth
 * (wl_truth_print) has each site's bytes in use at the end: heap_grow's
 * growth, cache_resize's mapping (cache_create's is 0), spike_heap and
 * scratch_map 0.
 */
#define _GNU_SOURCE
#include <sys/mman.h>
#include <unistd.h>

#include "scenario_common.h"

#define GROW_STEP (64 * KiB)
#define SPIKE (1 * MiB)
#define CACHE_STEP (1 * MiB)
#define CACHE_MAX (16 * MiB)
#define SCRATCH (1 * MiB)

static struct wl_site s_grow = { .function = "heap_grow" };
static struct wl_site s_spike = { .function = "spike_heap" };
static struct wl_site s_create = { .function = "cache_create" };
static struct wl_site s_cache = { .function = "cache_resize" };
static struct wl_site s_scratch = { .function = "scratch_map" };

static char *cache;
static size_t cache_len;

static void touch(char *p, size_t n)
{
	for (size_t i = 0; i < n; i += 4096)
		p[i] = (char)i;
	wl_sink = p;
}

WL_SITE static void heap_grow(void)
{
	char *p = sbrk(GROW_STEP);

	if (p == (void *)-1)
		wl_die("sbrk failed", NULL);
	touch(p, GROW_STEP);
	wl_site_alloc(&s_grow, GROW_STEP);
}

WL_SITE static void spike_heap(void)
{
	char *p = sbrk(SPIKE);

	if (p == (void *)-1)
		wl_die("sbrk failed", NULL);
	touch(p, SPIKE);
	wl_site_alloc(&s_spike, SPIKE);
	if (sbrk(-(intptr_t)SPIKE) == (void *)-1)
		wl_die("sbrk(-) failed", NULL);
	wl_site_free(&s_spike, &s_spike, SPIKE);
}

WL_SITE static void cache_create(void)
{
	cache = mmap(NULL, CACHE_STEP, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (cache == MAP_FAILED)
		wl_die("mmap failed", NULL);
	cache_len = CACHE_STEP;
	touch(cache, cache_len);
	wl_site_alloc(&s_create, cache_len);
}

WL_SITE static void cache_resize(void)
{
	char *p;

	if (cache_len >= CACHE_MAX) {
		touch(cache, cache_len); /* the plateau: rewritten, not grown */
		return;
	}
	p = mremap(cache, cache_len, cache_len + CACHE_STEP, MREMAP_MAYMOVE);
	if (p == MAP_FAILED)
		wl_die("mremap failed", NULL);
	/* the mapping, whole, is the resizer's from now on */
	if (cache_len == CACHE_STEP)
		wl_site_release(&s_create, cache_len);
	else
		wl_site_release(&s_cache, cache_len);
	cache = p;
	cache_len += CACHE_STEP;
	touch(cache, cache_len);
	wl_site_alloc(&s_cache, cache_len);
}

WL_SITE static void scratch_map(void)
{
	char *p = mmap(NULL, SCRATCH, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		wl_die("mmap failed", NULL);
	touch(p, SCRATCH);
	wl_site_alloc(&s_scratch, SCRATCH);
	munmap(p, SCRATCH);
	wl_site_free(&s_scratch, &s_scratch, SCRATCH);
}

static void step(void *arg, double t, double dt)
{
	static double c_grow, c_spike, c_cache, c_scratch;
	unsigned long n;

	(void)arg;
	for (n = scn_quota(&c_grow, 2 * MiB, dt, GROW_STEP); n; n--)
		heap_grow();
	for (n = scn_quota(&c_spike, 2.0 * SPIKE, dt, SPIKE); n; n--)
		spike_heap();
	for (n = scn_quota(&c_cache, 4.0 * CACHE_STEP, dt, CACHE_STEP); n; n--)
		cache_resize();
	for (n = scn_quota(&c_scratch, 8.0 * SCRATCH, dt, SCRATCH); n; n--)
		scratch_map();
	(void)t;
}

int main(int argc, char **argv)
{
	static const char *const known[] = { "duration", NULL };
	static struct wl_site *const sites[] = { &s_grow, &s_spike, &s_create, &s_cache, &s_scratch };
	struct wl_opts o;
	double duration, t0;

	wl_init(argc, argv, known, &o);
	duration = wl_arg_double(argc, argv, "duration", 16);
	wl_ready();
	wl_wait_start(&o);
	t0 = wl_now();
	cache_create();
	scn_loop(t0, duration, 0.02, step, NULL);
	wl_truth_print("mt_brk_arena", sites, sizeof(sites) / sizeof(sites[0]));
	wl_hold_exit(&o);
}

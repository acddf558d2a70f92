// cflags: -O2 -fno-omit-frame-pointer
/*
 * mt_sites - four call sites with four memory behaviours, each in its own
 * function, and their ground truth (see mt_workload.h for the protocol).
 *
 *   leak_site   allocates --leak-size bytes per round and never frees it
 *   cache_site  a ring of --cache-entries blocks of --cache-size bytes;
 *               --cache-per-round inserts per round, each replacing (freeing)
 *               the oldest entry once the ring is full: in-use plateaus
 *   churn_site  --churn-per-round malloc/free pairs of --churn-size bytes
 *   big_site    every --big-every rounds one 1..8 MiB block, freed at once
 *
 * --iterations rounds are spread evenly over --duration seconds, so memtop
 * sees the leak grow across several intervals.
 */
#include <stdlib.h>
#include <string.h>

#include "mt_workload.h"

#define MAX_CACHE 4096

static struct wl_site leak = { .function = "leak_site" };
static struct wl_site cache = { .function = "cache_site" };
static struct wl_site churn = { .function = "churn_site" };
static struct wl_site big = { .function = "big_site" };

static void *ring[MAX_CACHE];
static size_t ring_size[MAX_CACHE];
static unsigned ring_pos;

WL_SITE static void leak_site(size_t size)
{
	char *p = malloc(size);

	memset(p, 0x5a, size);
	wl_sink = p;
	wl_site_alloc(&leak, size);
}

WL_SITE static void cache_site(size_t size, unsigned entries)
{
	char *p;

	if (ring[ring_pos]) {
		free(ring[ring_pos]);
		wl_site_free(&cache, &cache, ring_size[ring_pos]);
	}
	p = malloc(size);
	p[0] = 1;
	wl_sink = p;
	ring[ring_pos] = p;
	ring_size[ring_pos] = size;
	wl_site_alloc(&cache, size);
	ring_pos = (ring_pos + 1) % entries;
}

WL_SITE static void churn_site(size_t size, unsigned count)
{
	for (unsigned i = 0; i < count; i++) {
		char *p = malloc(size);

		p[size - 1] = 0;
		wl_sink = p;
		wl_site_alloc(&churn, size);
		free(wl_sink);
		wl_site_free(&churn, &churn, size);
	}
}

WL_SITE static void big_site(size_t size)
{
	char *p = malloc(size);

	memset(p, 0, 4096);
	wl_sink = p;
	wl_site_alloc(&big, size);
	free(wl_sink);
	wl_site_free(&big, &big, size);
}

int main(int argc, char **argv)
{
	static const char *const known[] = {
		"iterations",      "duration",   "leak-size",       "cache-entries", "cache-size",
		"cache-per-round", "churn-size", "churn-per-round", "big-every",     NULL
	};
	static struct wl_site *const sites[] = { &leak, &cache, &churn, &big };
	struct wl_opts o;
	uint64_t iterations, leak_size, entries, cache_size, cache_per_round, churn_size;
	uint64_t churn_per_round, big_every, nbig = 0;
	double duration, t0;

	wl_init(argc, argv, known, &o);
	iterations = wl_arg_u64(argc, argv, "iterations", 2000);
	duration = wl_arg_double(argc, argv, "duration", 2.0);
	leak_size = wl_arg_u64(argc, argv, "leak-size", 512);
	entries = wl_arg_u64(argc, argv, "cache-entries", 128);
	cache_size = wl_arg_u64(argc, argv, "cache-size", 1024);
	cache_per_round = wl_arg_u64(argc, argv, "cache-per-round", 2);
	churn_size = wl_arg_u64(argc, argv, "churn-size", 128);
	churn_per_round = wl_arg_u64(argc, argv, "churn-per-round", 10);
	big_every = wl_arg_u64(argc, argv, "big-every", 200);
	if (!entries || entries > MAX_CACHE || !leak_size || !cache_size || !churn_size || !big_every)
		wl_die("sizes, --cache-entries (1..4096) and --big-every must be > 0", NULL);

	wl_ready();
	wl_wait_start(&o);
	t0 = wl_now();
	for (uint64_t i = 0; i < iterations; i++) {
		leak_site(leak_size);
		for (uint64_t k = 0; k < cache_per_round; k++)
			cache_site(cache_size, (unsigned)entries);
		churn_site(churn_size, (unsigned)churn_per_round);
		if (i % big_every == 0) {
			big_site((nbig % 8 + 1) * 1024 * 1024 + 4096 * (nbig % 5));
			nbig++;
		}
		wl_pace(t0, i + 1, iterations, duration);
	}
	wl_truth_print("mt_sites", sites, 4);
	wl_hold_exit(&o);
}

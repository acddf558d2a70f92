// cflags: -static -O2 -fno-omit-frame-pointer
/*
 * mt_static - a statically linked program: its malloc lives in the
 * executable, there is no libc.so to probe, so memtop must refuse it with
 * one clear line ("no glibc allocator" / static). Same protocol as the other
 * workloads (mt_workload.h), with a small phase in static_site so a memtop
 * that wrongly attaches has something to count.
 */
#include <stdlib.h>
#include <string.h>

#include "mt_workload.h"

static struct wl_site site = { .function = "static_site" };

WL_SITE static void static_site(size_t size)
{
	char *p = malloc(size);

	memset(p, 1, size);
	wl_sink = p;
	wl_site_alloc(&site, size);
}

int main(int argc, char **argv)
{
	static const char *const known[] = { "iterations", NULL };
	static struct wl_site *const sites[] = { &site };
	struct wl_opts o;
	uint64_t iterations;

	wl_init(argc, argv, known, &o);
	iterations = wl_arg_u64(argc, argv, "iterations", 100);
	wl_ready();
	wl_wait_start(&o);
	for (uint64_t i = 0; i < iterations; i++)
		static_site(1024);
	wl_truth_print("mt_static", sites, 1);
	wl_hold_exit(&o);
}

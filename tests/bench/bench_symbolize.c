// SPDX-License-Identifier: GPL-2.0-only
/*
 * bench_symbolize.c - cost of symbolizer_resolve() on this process:
 * the first resolve in a file (opening it, its debug file and DWARF
 * index), cold resolves of distinct addresses (symbol + DWARF lookups),
 * and warm resolves (result cache hits). Addresses are spread over the
 * text of libc and of this binary; run with libc6-dbg installed to
 * include DWARF work for libc.
 *
 * Build (from the top of the tree, after `make build/libmemtop.a`):
 *   gcc -O2 -g -Iinclude -std=gnu11 -D_GNU_SOURCE -o build/bench_symbolize \
 *       tests/bench/bench_symbolize.c build/libmemtop.a -lelf -ldw -lz -liberty
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "stacks/symbolize.h"

#define N 4000
#define WARM_ROUNDS 50

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* N addresses spread over the executable mapping that holds anchor. */
static void spread(__u64 anchor, __u64 *out)
{
	struct mt_maps maps;
	const struct mt_map *m;

	if (proc_maps_read(getpid(), &maps) || !(m = proc_maps_find(&maps, anchor))) {
		fprintf(stderr, "cannot find mapping\n");
		exit(1);
	}
	for (int i = 0; i < N; i++)
		out[i] = m->start + (m->end - m->start) / N * (__u64)i + 1;
	proc_maps_free(&maps);
}

static void run(const char *what, __u64 anchor)
{
	struct proc_cache *pc = proc_cache_new();
	struct symbolizer *s = symbolizer_new(pc);
	static __u64 addrs[N];
	struct mt_frame f[8];
	pid_t pid = getpid();
	int named = 0, lines = 0, frames = 0;
	double t0, t1, t2, t3;

	spread(anchor, addrs);
	t0 = now_s();
	symbolizer_resolve(s, pid, anchor, true, f, 8);
	t1 = now_s();
	for (int i = 0; i < N; i++) {
		int n = symbolizer_resolve(s, pid, addrs[i], true, f, 8);

		frames += n;
		named += f[n - 1].function != NULL;
		lines += f[0].line != 0;
	}
	t2 = now_s();
	for (int r = 0; r < WARM_ROUNDS; r++) {
		for (int i = 0; i < N; i++)
			symbolizer_resolve(s, pid, addrs[i], true, f, 8);
	}
	t3 = now_s();
	printf("%-10s first resolve (open file, debug file, DWARF index): %8.0f us\n", what,
	       (t1 - t0) * 1e6);
	printf("%-10s cold, distinct addresses: %8.2f us/resolve  (%d named, %d with line, %.2f frames avg)\n",
	       what, (t2 - t1) * 1e6 / N, named, lines, (double)frames / N);
	printf("%-10s warm (cache hit):         %8.0f ns/resolve\n", what,
	       (t3 - t2) * 1e9 / ((double)N * WARM_ROUNDS));
	symbolizer_free(s);
	proc_cache_free(pc);
}

int main(void)
{
	void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);

	run("libc", (__u64)(unsigned long)dlsym(libc, "malloc"));
	run("self", (__u64)(unsigned long)&run);
	return 0;
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * bench_unwind.c - what one unwinder_unwind() costs: a snapshot of this
 * program's own stack taken at the bottom of an 8-function chain built
 * without frame pointers (as test_unwind.c takes it), with an 8 KiB copy
 * (perf's default), unwound over and over.
 *
 *   warm   the steady state: libunwind's per-process frame cache and the
 *          proc_cache already hold everything; 8 frames (max = 8), then
 *          the whole stack up to _start.
 *   cold   unwinder_forget() before each walk: every frame's FDE is looked
 *          up in .eh_frame_hdr and parsed again (proc_cache stays warm).
 *
 * Build and run (from the top of the tree, after `make`):
 *   gcc -O2 -g -std=gnu11 -D_GNU_SOURCE -Iinclude -Isrc -Ibuild \
 *       -o build/bench_unwind tests/bench/bench_unwind.c build/libmemtop.a \
 *       $(make -s -p -n | grep -m1 '^LDLIBS' | cut -d= -f2-)
 *   build/bench_unwind [iterations]
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "stacks/proc_cache.h"
#include "stacks/unwind.h"

#include "../fixtures/unwind/capture.h"

#define COPY_SIZE 8192
#define MAX_IPS 64

CAPTURE_REGS_CHECK_LAYOUT(struct mt_regs);
asm(CAPTURE_REGS_ASM("capture_regs"));
void capture_regs(struct mt_regs *r);

static struct mt_regs regs;
static __u8 stack[COPY_SIZE];
static __u32 stack_len;
static __u64 stack_top;

static __attribute__((noinline)) void snap_copy(void)
{
	__u64 avail = stack_top - regs.sp;

	stack_len = avail < COPY_SIZE ? (__u32)avail : COPY_SIZE;
	memcpy(stack, (const void *)regs.sp, stack_len);
}

#define LEVEL(name, next)                                                                         \
	static __attribute__((noinline, noclone, optimize("omit-frame-pointer"))) int name(int x) \
	{                                                                                         \
		volatile char pad[32 + 16 * (x & 7)];                                             \
		pad[0] = (char)x;                                                                 \
		return next(x + 1) + pad[0];                                                      \
	}

static __attribute__((noinline, noclone, optimize("omit-frame-pointer"))) int bottom(int x)
{
	volatile char pad[64];

	pad[0] = (char)x;
	capture_regs(&regs);
	snap_copy();
	return pad[0];
}

LEVEL(l7, bottom)
LEVEL(l6, l7)
LEVEL(l5, l6)
LEVEL(l4, l5)
LEVEL(l3, l4)
LEVEL(l2, l3)
LEVEL(l1, l2)

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* Mean ns per walk over iters walks; *frames gets the frame count. */
static double run(struct unwinder *u, int iters, int max, bool cold, int *frames, bool *trunc)
{
	__u64 ips[MAX_IPS];
	double t0, total = 0;
	int n = 0;

	for (int i = 0; i < iters; i++) {
		if (cold)
			unwinder_forget(u, getpid());
		t0 = now_ns();
		n = unwinder_unwind(u, getpid(), &regs, stack, stack_len, ips, max, trunc);
		total += now_ns() - t0;
		if (n < 1) {
			fprintf(stderr, "unwind failed: %s\n", strerror(-n));
			exit(1);
		}
	}
	*frames = n;
	return total / iters;
}

int main(int argc, char **argv)
{
	int iters = argc > 1 ? atoi(argv[1]) : 200000, frames;
	struct unwind_stats st;
	struct proc_cache *pc;
	struct unwinder *u;
	pthread_attr_t attr;
	size_t size;
	void *addr;
	bool trunc;
	double ns;

	if (iters < 1 || pthread_getattr_np(pthread_self(), &attr) ||
	    pthread_attr_getstack(&attr, &addr, &size))
		return 2;
	pthread_attr_destroy(&attr);
	stack_top = (__u64)addr + size;
	if (l1(0) < 0)
		return 2;

	pc = proc_cache_new();
	u = pc ? unwinder_new(pc) : NULL;
	if (!u) {
		perror("unwinder_new");
		return 1;
	}
	run(u, 100, MAX_IPS, false, &frames, &trunc); /* warm up */

	ns = run(u, iters, 8, false, &frames, &trunc);
	printf("warm, %d frames (max 8):     %8.0f ns/unwind  %6.0f ns/frame\n", frames, ns,
	       ns / frames);
	ns = run(u, iters, MAX_IPS, false, &frames, &trunc);
	printf("warm, whole stack (%2d frames%s): %8.0f ns/unwind  %6.0f ns/frame\n", frames,
	       trunc ? ", truncated" : "", ns, ns / frames);
	ns = run(u, iters / 20 + 1, 8, true, &frames, &trunc);
	printf("cold, %d frames (max 8):     %8.0f ns/unwind  %6.0f ns/frame\n", frames, ns,
	       ns / frames);
	unwinder_stats(u, &st);
	printf("stack copy %u bytes; %llu walks, %llu table lookups\n", stack_len,
	       (unsigned long long)st.walks, (unsigned long long)st.table_lookups);
	unwinder_free(u);
	proc_cache_free(pc);
	return 0;
}

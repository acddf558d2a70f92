// SPDX-License-Identifier: GPL-2.0-only
/*
 * inject_cost.c - the injected sampler's cost per call, measured on
 * memtop itself (inject_cost.h), and the cost of counted calls.
 *
 * The sampler has no relocations, imports or constructor (inject_image.h
 * checks), so memtop maps its load segments into its own memory as it
 * would into a process, points the control block's malloc and free at
 * two stubs, raises the USDT semaphores itself (no probe is attached, so
 * a probe site is the nop it is compiled to) and times calls through the
 * entry points against the stubs called directly: unsampled (an enormous
 * rate), every call sampled (rate 1), and CPython's wrapper, which it
 * gets by handing the sampler four fake C API functions that run the
 * pending call at once. Best of a few rounds: the machine is noisy, the
 * floor is the truth. Everything is unmapped afterwards.
 */
#include "probe/inject_cost.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "probe/inject_image.h"
#include "probe/inject_ptrace.h"
#include "util/clock.h"

#define COST_CALLS 20000
#define COST_ROUNDS 5
#define COST_ADDRS 64 /* distinct addresses the stub hands out */

typedef void *malloc_fn(size_t size);
typedef void free_fn(void *ptr);

/* What the py wrapper forwards to: PyMemAllocatorEx (py_hook.h). */
struct fake_py_allocator {
	void *ctx;
	void *(*malloc)(void *ctx, size_t size);
	void *(*calloc)(void *ctx, size_t nelem, size_t elsize);
	void *(*realloc)(void *ctx, void *ptr, size_t new_size);
	void (*free)(void *ctx, void *ptr);
};

static char stub_arena[COST_ADDRS * 256] __attribute__((aligned(64)));
static unsigned int stub_next;
static struct fake_py_allocator wrapper; /* what the sampler set */

static __attribute__((noinline)) void *stub_malloc(size_t size)
{
	(void)size;
	return &stub_arena[(stub_next++ % COST_ADDRS) * 256];
}

static __attribute__((noinline)) void stub_free(void *ptr)
{
	__asm__ volatile("" : : "r"(ptr) : "memory");
}

static __attribute__((noinline)) void *stub_py_malloc(void *ctx, size_t size)
{
	(void)ctx;
	return stub_malloc(size);
}

static __attribute__((noinline)) void *stub_py_calloc(void *ctx, size_t n, size_t size)
{
	(void)ctx;
	return stub_malloc(n * size);
}

static __attribute__((noinline)) void *stub_py_realloc(void *ctx, void *ptr, size_t size)
{
	(void)ctx;
	(void)ptr;
	return stub_malloc(size);
}

static __attribute__((noinline)) void stub_py_free(void *ctx, void *ptr)
{
	(void)ctx;
	stub_free(ptr);
}

/* The interpreter's C API, as the wrapper calls it (py_hook.h). */
static void fake_get_allocator(int domain, struct fake_py_allocator *a)
{
	(void)domain;
	*a = (struct fake_py_allocator){ NULL, stub_py_malloc, stub_py_calloc, stub_py_realloc,
					 stub_py_free };
}

static void fake_set_allocator(int domain, struct fake_py_allocator *a)
{
	(void)domain;
	wrapper = *a;
}

static int fake_add_pending_call(int (*fn)(void *), void *arg)
{
	return fn(arg); /* memtop is the interpreter's main thread here */
}

static int fake_is_initialized(void)
{
	return 1;
}

/* ns per iteration of one of the loops below, best of COST_ROUNDS. */
enum loop { PAIRS, ALLOCS, PY_PAIRS };

static double time_loop(enum loop what, malloc_fn *volatile m, free_fn *volatile f)
{
	void *(*volatile pm)(void *, size_t) = wrapper.malloc;
	void (*volatile pf)(void *, void *) = wrapper.free;
	double best = 1e30;
	int r, i;

	for (r = 0; r < COST_ROUNDS; r++) {
		__u64 t0 = clock_thread_cpu_ns();
		double dt;

		for (i = 0; i < COST_CALLS; i++) {
			size_t size = 16u << (i & 7);

			if (what == PAIRS)
				f(m(size));
			else if (what == ALLOCS)
				m(size);
			else
				pf(wrapper.ctx, pm(wrapper.ctx, size & 511 ? size & 511 : 8));
		}
		dt = (double)(clock_thread_cpu_ns() - t0) / COST_CALLS;
		if (dt < best)
			best = dt;
	}
	return best;
}

static double at_least_0(double x)
{
	return x > 0 ? x : 0;
}

/* The image mapped at a fresh address of memtop's: 0 or -errno. */
static int map_here(const struct inject_image *im, unsigned char **base)
{
	unsigned char *b = mmap(NULL, im->span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int i;

	if (b == MAP_FAILED)
		return -errno;
	if (mprotect(b, im->span, PROT_READ | PROT_WRITE)) {
		munmap(b, im->span);
		return -errno;
	}
	for (i = 0; i < im->nload; i++)
		memcpy(b + im->load[i].vaddr, im->data + im->load[i].offset, im->load[i].filesz);
	for (i = 0; i < im->nload; i++) {
		__u64 lo = INJECT_PAGE_DOWN(im->load[i].vaddr);
		__u64 hi = INJECT_PAGE_UP(im->load[i].vaddr + im->load[i].memsz);

		if (mprotect(b + lo, hi - lo, im->load[i].prot)) {
			munmap(b, im->span);
			return -errno;
		}
	}
	*base = b;
	return 0;
}

static void measure(const struct inject_image *im, unsigned char *b, struct inject_cost *c)
{
	volatile struct mt_inject_ctl *ctl = (volatile struct mt_inject_ctl *)(b + im->ctl);
	malloc_fn *in_malloc = (malloc_fn *)(void *)(b + im->entry[MT_IFN_MALLOC]);
	free_fn *in_free = (free_fn *)(void *)(b + im->entry[MT_IFN_FREE]);
	double bare, through, allocs_bare, allocs_through, sampled, py_bare, py_through;

	if (!b)
		return; /* not mapped: nothing measured (the caller's figures stay 0) */
	ctl->orig[MT_IFN_MALLOC] = (__u64)(unsigned long)stub_malloc;
	ctl->orig[MT_IFN_FREE] = (__u64)(unsigned long)stub_free;
	ctl->seed = 1;
	ctl->rate = 1ULL << 60; /* nothing sampled */
	*(volatile unsigned short *)(b + im->sem_alloc) = 1;
	*(volatile unsigned short *)(b + im->sem_free) = 1;

	bare = time_loop(PAIRS, stub_malloc, stub_free);
	through = time_loop(PAIRS, in_malloc, in_free);
	allocs_bare = time_loop(ALLOCS, stub_malloc, stub_free);
	allocs_through = time_loop(ALLOCS, in_malloc, in_free);
	c->alloc_ns = at_least_0(allocs_through - allocs_bare);
	c->free_ns = at_least_0(through - bare - c->alloc_ns);

	ctl->rate = 1; /* every allocation sampled */
	sampled = time_loop(PAIRS, in_malloc, in_free);
	c->sample_ns = at_least_0(sampled - through);

	/* CPython's wrapper: installed by the first sampled allocation once
	 * py_want asks for it (py_hook.h), through the fake C API */
	ctl->py_api[MT_PY_GET_ALLOCATOR] = (__u64)(unsigned long)fake_get_allocator;
	ctl->py_api[MT_PY_SET_ALLOCATOR] = (__u64)(unsigned long)fake_set_allocator;
	ctl->py_api[MT_PY_ADD_PENDING_CALL] = (__u64)(unsigned long)fake_add_pending_call;
	ctl->py_api[MT_PY_IS_INITIALIZED] = (__u64)(unsigned long)fake_is_initialized;
	ctl->py_want = 1;
	in_free(in_malloc(64));
	ctl->rate = 1ULL << 60;
	if (ctl->py_state != MT_PY_HOOK_ON || !wrapper.malloc || !wrapper.free)
		return; /* py_ns stays 0: the wrapper was not installed */
	py_through = time_loop(PY_PAIRS, NULL, NULL);
	fake_get_allocator(0, &wrapper); /* the same loop on the stubs themselves */
	py_bare = time_loop(PY_PAIRS, NULL, NULL);
	/* two wrapper calls, the small object's count in them: with plain
	 * adds it is not what an allocation through the sampler costs
	 * (on one VM 2.6 ns a call with it, against 12.9 ns an allocation) */
	c->py_ns = at_least_0((py_through - py_bare) / 2);
}

int inject_cost_calibrate(const char *sampler_so, struct inject_cost *c, char *err, size_t errlen)
{
	struct inject_image im;
	unsigned char *b = NULL;
	int e;

	memset(c, 0, sizeof(*c));
	e = inject_image_open(&im, sampler_so, err, errlen);
	if (e)
		return e;
	if (!im.sem_alloc || !im.sem_free) {
		snprintf(err, errlen, "the injected sampler %s has no USDT semaphores", sampler_so);
		inject_image_close(&im);
		return -ENOEXEC;
	}
	e = map_here(&im, &b);
	if (e) {
		snprintf(err, errlen, "cannot map the injected sampler to time it: %s", strerror(-e));
		inject_image_close(&im);
		return e;
	}
	measure(&im, b, c);
	c->measured = true;
	munmap(b, im.span);
	inject_image_close(&im);
	memset(&wrapper, 0, sizeof(wrapper));
	return 0;
}

double inject_cost_ns(const struct inject_cost *c, const struct mt_inject_counts *n, __u64 samples)
{
	double allocs = n->alloc_calls > n->py_allocs ? (double)(n->alloc_calls - n->py_allocs) : 0;
	double frees = n->free_calls > n->py_frees ? (double)(n->free_calls - n->py_frees) : 0;

	return allocs * c->alloc_ns + frees * c->free_ns + (double)n->py_calls * c->py_ns +
	       (double)samples * c->sample_ns;
}

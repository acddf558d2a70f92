/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * py_hook.h - for the samplers: CPython's object allocator wrapped, as
 * tracemalloc wraps it, so that the objects pymalloc serves from its own
 * arenas (which never reach malloc) are sampled too (docs/python.md).
 *
 * The wrapping is CPython's documented hook: PyMem_GetAllocator and
 * PyMem_SetAllocator on PYMEM_DOMAIN_OBJ, which must be called with the
 * GIL held. A sampler never takes the GIL: once the interpreter is
 * initialised it asks for a pending call (Py_AddPendingCall needs no GIL,
 * takes only its own short lock and allocates nothing), and CPython's main
 * thread runs it between two bytecodes, holding the GIL. Restoring goes
 * the same way. A process whose main thread never gets back to bytecode
 * (a C call holding the GIL, a wait in C) runs neither: the caller waits
 * for py_state with a deadline and says so. Blocks stay the wrapped
 * allocator's (the wrapper only forwards), so restoring is always safe;
 * when another hook wrapped ours since, restoring would drop it, so the
 * wrapper stays in the chain, forwarding only (MT_PY_HOOK_LEFT).
 *
 * Only requests pymalloc serves itself are sampled here: 1 to
 * MT_PY_SMALL_REQUEST bytes. Larger ones (and 0) fall through to
 * PyMem_RawMalloc, that is malloc, which the sampler samples already. A
 * realloc to a small size of a block that is not pymalloc's also falls
 * through (to realloc): the sampler's realloc calls py_hook_note_libc(),
 * and the wrapper then leaves the block to it. OBJ-domain calls hold the
 * GIL, so one thread at a time is inside the wrapper.
 *
 * The including sampler defines, before the #include:
 *   PY_HOOK_API            __u64 array of enum mt_py_api addresses (0: not CPython)
 *   PY_HOOK_WANT, PY_HOOK_STATE   the __u32 lvalues of sampler_abi.h's py_want, py_state
 *   PY_HOOK_ALLOC_ON()     a tool is attached: sample
 *   py_hook_sample(p, n)   maybe sample the new block p of n bytes (no header)
 *   py_hook_forget(p)      p is about to be freed: forget it if sampled; true if it was
 *   py_hook_thread()       a __u64 that identifies the calling thread
 *   py_hook_count()        one call of the wrapper while a tool is attached
 *                          (the injected sampler counts them for its cost)
 *   py_hook_count_free()   a free of an object pymalloc served itself (the
 *                          sampler's free() was not reached meanwhile: the
 *                          injected sampler counts it as a free, as it
 *                          counts those objects' allocations)
 * It has no libc behind it (the injected sampler): no memcpy, no
 * relocations (function addresses are stored one by one at run time).
 */
#ifndef MEMTOP_SAMPLER_PY_HOOK_H
#define MEMTOP_SAMPLER_PY_HOOK_H

#include <stdbool.h>
#include <stddef.h>

#include "memtop/sampler_abi.h"

#define PY_HOOK_DOMAIN_OBJ 2 /* PYMEM_DOMAIN_OBJ */

/* PyMemAllocatorEx (Include/cpython/pymem.h, the same since 3.5). */
struct py_allocator {
	void *ctx;
	void *(*malloc)(void *ctx, size_t size);
	void *(*calloc)(void *ctx, size_t nelem, size_t elsize);
	void *(*realloc)(void *ctx, void *ptr, size_t new_size);
	void (*free)(void *ctx, void *ptr);
};

typedef void py_allocator_fn(int domain, struct py_allocator *allocator);
typedef int py_pending_fn(int (*func)(void *), void *arg);
typedef int py_initialized_fn(void);

static struct {
	struct py_allocator orig; /* what the wrapper forwards to */
	__u64 inside;             /* the thread inside a wrapped realloc or free, or 0 */
	bool fell;                /* that call reached the C library */
} py_hook;

#define PY_HOOK_FN(k, type) ((type *)(PY_HOOK_API)[k])

static bool py_small(size_t n)
{
	return n - 1 < MT_PY_SMALL_REQUEST;
}

static void py_hook_poll(void);

/* The sampler's test on its sampled path: is the wrapping not where it
 * should be? One load of each field. */
#define PY_HOOK_PENDING() \
	__builtin_expect( \
		PY_HOOK_WANT ? PY_HOOK_STATE == MT_PY_HOOK_OFF : PY_HOOK_STATE == MT_PY_HOOK_ON, 0)

static void *py_hook_malloc(void *ctx, size_t n)
{
	void *p = py_hook.orig.malloc(py_hook.orig.ctx, n);

	if (PY_HOOK_ALLOC_ON()) {
		py_hook_count();
		if (py_small(n))
			py_hook_sample(p, n);
	}
	if (PY_HOOK_PENDING()) /* memtop asks for the allocator back */
		py_hook_poll();
	return p;
}

static void *py_hook_calloc(void *ctx, size_t nelem, size_t elsize)
{
	void *p = py_hook.orig.calloc(py_hook.orig.ctx, nelem, elsize);

	if (PY_HOOK_ALLOC_ON())
		py_hook_count();
	/* nelem * elsize cannot overflow when the call succeeded */
	if (p && PY_HOOK_ALLOC_ON() && py_small(nelem * elsize))
		py_hook_sample(p, nelem * elsize);
	return p;
}

/* Around a forwarded realloc or free: did it reach the C library (the
 * sampler's realloc or free calls py_hook_note_libc)? watch_begin returns
 * what watch_end puts back. */
static inline __u64 py_hook_watch_begin(void)
{
	__u64 outer = py_hook.inside;

	py_hook.inside = py_hook_thread();
	py_hook.fell = false;
	return outer;
}

static inline bool py_hook_watch_end(__u64 outer)
{
	py_hook.inside = outer;
	return py_hook.fell;
}

static void *py_hook_realloc(void *ctx, void *old, size_t n)
{
	bool was = old && py_hook_forget(old), fell;
	__u64 outer;
	void *p;

	if (PY_HOOK_ALLOC_ON())
		py_hook_count();
	outer = py_hook_watch_begin();
	p = py_hook.orig.realloc(py_hook.orig.ctx, old, n);
	fell = py_hook_watch_end(outer);
	if (!p) {
		/* failed (out of memory): the old block is still there, but
		 * forgotten, so the in-use estimate misses it from now on */
		(void)was;
		return p;
	}
	if (!fell && py_small(n) && PY_HOOK_ALLOC_ON())
		py_hook_sample(p, n);
	return p;
}

static void py_hook_free(void *ctx, void *p)
{
	__u64 outer;

	if (PY_HOOK_ALLOC_ON())
		py_hook_count();
	if (p)
		py_hook_forget(p);
	outer = py_hook_watch_begin();
	py_hook.orig.free(py_hook.orig.ctx, p);
	/* not given to free(): pymalloc's own object, whose free() the
	 * sampler's did not count */
	if (!py_hook_watch_end(outer) && p)
		py_hook_count_free();
	if (PY_HOOK_PENDING())
		py_hook_poll();
}

/* Called by the sampler's realloc and its counted frees: a wrapped
 * realloc or free fell through to it. */
static inline void py_hook_note_libc(void)
{
	if (__builtin_expect(py_hook.inside != 0, 0) && py_hook.inside == py_hook_thread())
		py_hook.fell = true;
}

static bool py_hook_ours(const struct py_allocator *a)
{
	return a->malloc == py_hook_malloc && a->ctx == (void *)&py_hook;
}

/* The pending call: CPython's main thread, the GIL held. */
static int py_hook_pending(void *arg)
{
	struct py_allocator cur, mine;

	if (__atomic_load_n(&PY_HOOK_STATE, __ATOMIC_ACQUIRE) != MT_PY_HOOK_SCHEDULED)
		return 0;
	PY_HOOK_FN(MT_PY_GET_ALLOCATOR, py_allocator_fn)(PY_HOOK_DOMAIN_OBJ, &cur);
	if (PY_HOOK_WANT) {
		if (!py_hook_ours(&cur)) {
			py_hook.orig.ctx = cur.ctx;
			py_hook.orig.malloc = cur.malloc;
			py_hook.orig.calloc = cur.calloc;
			py_hook.orig.realloc = cur.realloc;
			py_hook.orig.free = cur.free;
			mine.ctx = (void *)&py_hook;
			mine.malloc = py_hook_malloc;
			mine.calloc = py_hook_calloc;
			mine.realloc = py_hook_realloc;
			mine.free = py_hook_free;
			PY_HOOK_FN(MT_PY_SET_ALLOCATOR, py_allocator_fn)(PY_HOOK_DOMAIN_OBJ, &mine);
		}
		__atomic_store_n(&PY_HOOK_STATE, MT_PY_HOOK_ON, __ATOMIC_RELEASE);
	} else if (py_hook_ours(&cur)) {
		PY_HOOK_FN(MT_PY_SET_ALLOCATOR, py_allocator_fn)(PY_HOOK_DOMAIN_OBJ, &py_hook.orig);
		__atomic_store_n(&PY_HOOK_STATE, MT_PY_HOOK_OFF, __ATOMIC_RELEASE);
	} else {
		__atomic_store_n(&PY_HOOK_STATE, MT_PY_HOOK_LEFT, __ATOMIC_RELEASE);
	}
	return 0;
}

/* Ask for the pending call that brings the wrapping where PY_HOOK_WANT
 * says, once the interpreter runs; cheap to call again and again (the
 * sampler calls it on its sampled path, the wrapper while restoring). */
static __attribute__((noinline)) void py_hook_poll(void)
{
	__u32 want = PY_HOOK_WANT, st = __atomic_load_n(&PY_HOOK_STATE, __ATOMIC_ACQUIRE);
	__u32 from;

	if (!PY_HOOK_API[MT_PY_ADD_PENDING_CALL] || !PY_HOOK_API[MT_PY_IS_INITIALIZED] ||
	    !PY_HOOK_API[MT_PY_GET_ALLOCATOR] || !PY_HOOK_API[MT_PY_SET_ALLOCATOR])
		return;
	if (want && st == MT_PY_HOOK_OFF)
		from = MT_PY_HOOK_OFF;
	else if (!want && st == MT_PY_HOOK_ON)
		from = MT_PY_HOOK_ON;
	else
		return;
	if (!PY_HOOK_FN(MT_PY_IS_INITIALIZED, py_initialized_fn)())
		return;
	if (!__atomic_compare_exchange_n(&PY_HOOK_STATE, &from, MT_PY_HOOK_SCHEDULED, false,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return;
	if (PY_HOOK_FN(MT_PY_ADD_PENDING_CALL, py_pending_fn)(py_hook_pending, NULL))
		/* the queue is full: another time */
		__atomic_store_n(&PY_HOOK_STATE, from, __ATOMIC_RELEASE);
}


#endif /* MEMTOP_SAMPLER_PY_HOOK_H */

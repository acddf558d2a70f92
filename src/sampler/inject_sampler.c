// SPDX-License-Identifier: GPL-2.0-only
/*
 * inject_sampler.c - libmemtop-inject.so, the sampler memtop maps into a
 * running process (memtop -p PID --inject, docs/inject.md). It fires the
 * same otel_memory:alloc/free USDT probes as libmemtop-sampler.so
 * (include/memtop/sampler_abi.h), but is loaded without the dynamic loader:
 * memtop maps its segments itself, so the file has no relocations, no
 * imports, no TLS and no constructor, and calls nothing outside itself.
 *
 * memtop points the allocator GOT slots of every loaded object at the
 * mt_inject_<fn> entry points and writes, into the control block
 * mt_inject_ctl, where each function went before; every call is forwarded
 * there unchanged, whatever allocator that is. A call is sampled only
 * while a tool holds the alloc semaphore (the kernel drops it when the
 * tool's uprobes go, memtop killed included): with no tool, an entry point
 * costs one load and a branch on top of the forwarded call.
 *
 * Blocks carry no header: a sampled address goes into a fixed-size
 * lock-free table with a counting filter in front (addr_table.h), and a
 * full table drops the sample (counted). So a pointer is always the
 * allocator's own, whoever allocated or frees it.
 *
 * Sampling: a byte countdown per thread slot (64 slots picked by the
 * thread's TCB address, %fs:0, since there is no TLS here), exponential
 * gaps of mean ctl.rate (sample_math.h).
 *
 * In a CPython process (ctl.py_api set) it also wraps the interpreter's
 * object allocator while ctl.py_want asks for it (py_hook.h), so objects
 * pymalloc serves from its own arenas are sampled too, into the same table
 * and probes.
 */
#define _SDT_HAS_SEMAPHORES 1
#define STAP_SDT_ARG_CONSTRAINT r
#include <sys/sdt.h>

#include <stdbool.h>
#include <stddef.h>

#include "memtop/sampler_abi.h"
#include "sampler/addr_table.h"
#include "sampler/sample_math.h"
#include "sampler/one_site.h"

/* Entry points are exported; the data memtop reads and writes is hidden
 * (an exported object would be reached through a GOT entry, a relocation)
 * and found by memtop in .symtab, like the poke stub. */
#define EXPORT __attribute__((visibility("default"), used))
#define SHARED __attribute__((visibility("hidden"), used))
#define unlikely(x) __builtin_expect(!!(x), 0)
#define likely(x) __builtin_expect(!!(x), 1)

#define PAGE 4096

volatile unsigned short otel_memory_alloc_semaphore __attribute__((section(".probes")));
volatile unsigned short otel_memory_free_semaphore __attribute__((section(".probes")));

SHARED struct mt_inject_ctl mt_inject_ctl = {
	.magic = MT_INJECT_MAGIC,
	.version = MT_INJECT_VERSION,
};

SHARED __u64 mt_inject_table[MT_INJECT_TABLE_SLOTS];

/* How many live sampled addresses hash to each counter: a free whose
 * counter is 0 was certainly not sampled, found with one load from 16 KiB
 * (the table is 512 KiB) before the table is searched. */
SHARED unsigned short mt_inject_filter[MT_INJECT_FILTER_SLOTS];

/* The program mt_inject_poke runs (sampler_abi.h), ended by MT_POKE_END. */
SHARED struct mt_poke_record mt_inject_scratch[MT_INJECT_SCRATCH_RECORDS + 1];

/* Countdowns and exact call counts, per group of threads, on pages of
 * their own that a forked child gets zeroed (sampler_abi.h). */
SHARED struct mt_inject_slots mt_inject_slots __attribute__((aligned(PAGE)));
_Static_assert(sizeof(struct mt_inject_slots) == MT_INJECT_SLOT_PAGES * PAGE,
	       "the slots fill whole pages");

/* The stub memtop runs in a stopped thread to rewrite GOT slots and change
 * page protections around the stores, in one go (sampler_abi.h): one
 * aligned 8-byte compare-and-swap per slot, so a thread reading a slot
 * concurrently sees the old or the new target, never a mix, and a slot
 * that no longer holds what memtop read (its object dlclose'd, something
 * else mapped there) is not written. %rdi = the program. */
__asm__(".text\n"
	".globl " MT_INJECT_POKE_SYMBOL "\n"
	".hidden " MT_INJECT_POKE_SYMBOL "\n"
	".type " MT_INJECT_POKE_SYMBOL ", @function\n" MT_INJECT_POKE_SYMBOL ":\n"
	"	movq %rdi, %r15\n"
	"1:	movq (%r15), %rax\n"
	"	cmpq $1, %rax\n" /* MT_POKE_STORE */
	"	jne 2f\n"
	"	movq 8(%r15), %rcx\n"
	"	movq 16(%r15), %rdx\n"
	"	movq 24(%r15), %rax\n"
	"	lock cmpxchgq %rdx, (%rcx)\n"
	"	movq %rax, 32(%r15)\n"
	"	addq $40, %r15\n"
	"	jmp 1b\n"
	"2:	cmpq $2, %rax\n" /* MT_POKE_SYSCALL */
	"	jne 3f\n"
	"	movq 8(%r15), %rax\n"
	"	movq 16(%r15), %rdi\n"
	"	movq 24(%r15), %rsi\n"
	"	movq 32(%r15), %rdx\n"
	"	syscall\n"
	"	cmpq $-4095, %rax\n"
	"	jae 3f\n" /* failed: stop at this record */
	"	addq $40, %r15\n"
	"	jmp 1b\n"
	"3:	int3\n"
	".size " MT_INJECT_POKE_SYMBOL ", .-" MT_INJECT_POKE_SYMBOL "\n");

#define ORIG(fn, type) ((type)__atomic_load_n(&mt_inject_ctl.orig[MT_IFN_##fn], __ATOMIC_RELAXED))

/* ==== Choosing the calls to sample ==== */

/* The calling thread: its TCB address, %fs:0. */
static __u64 thread_id(void)
{
	unsigned long tcb;

	__asm__("movq %%fs:0, %0" : "=r"(tcb));
	return tcb;
}

static struct mt_inject_slot *slot_mine(void)
{
	return &mt_inject_slots.slot[(thread_id() * 0x9E3779B97F4A7C15ULL) >> 58]; /* 64 slots */
}

static __s64 countdown_draw(struct mt_inject_slot *c)
{
	double rate = (double)mt_inject_ctl.rate;

	if (!c->rng)
		c->rng = sm_mix64(mt_inject_ctl.seed ^ sm_mix64((__u64)(c - mt_inject_slots.slot))) |
			 1;
	return sm_gap(sm_next(&c->rng), rate);
}

/* Does an allocation of size bytes get sampled? The countdown is updated
 * with a plain load and store, not a locked instruction (which would cost
 * more than the rest of the call): two threads that share a slot (64 slots
 * hashed from their TCB addresses) may lose an update of each other's,
 * which shifts that slot's next sample by one allocation's size, and never
 * anything worse. */
static bool sample_take(struct mt_inject_slot *c, size_t size)
{
	__s64 left;

	if (!size)
		return false;
	if (mt_inject_ctl.rate <= 1)
		return true;
	left = __atomic_load_n(&c->left, __ATOMIC_RELAXED);
	if (likely(left > (__s64)size)) {
		__atomic_store_n(&c->left, left - (__s64)size, __ATOMIC_RELAXED);
		return false;
	}
	__atomic_store_n(&c->left, countdown_draw(c), __ATOMIC_RELAXED);
	return left > 0; /* 0: not drawn yet */
}

/* ==== The table of sampled addresses (addr_table.h) ==== */

static bool table_insert(__u64 key)
{
	return addr_table_insert(mt_inject_table, mt_inject_filter, &mt_inject_ctl.live,
				 &mt_inject_ctl.dropped, key);
}

static bool table_remove(__u64 key)
{
	return addr_table_remove(mt_inject_table, mt_inject_filter, &mt_inject_ctl.live, key);
}

/* ==== The probes ==== */

static ONE_SITE void fire_alloc(void *ptr, size_t size)
{
	__u64 weight = mt_inject_ctl.rate <= 1 ? size : sm_weight(size, (double)mt_inject_ctl.rate);

	STAP_PROBE3(otel_memory, alloc, ptr, size, weight);
}

static ONE_SITE void fire_free(void *ptr)
{
	STAP_PROBE1(otel_memory, free, ptr);
}

static void py_poll_if_pending(void);

/* ==== Adopting the blocks memtop's uprobes sampled (mt_inject_ctl.adopt) ==== */

static __attribute__((noinline)) void adopt_take(void)
{
	__u32 idle = 0, serial, n, i;

	if (!__atomic_compare_exchange_n(&mt_inject_ctl.adopt_busy, &idle, 1, false,
					 __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		return; /* another thread is at it */
	serial = __atomic_load_n(&mt_inject_ctl.adopt_serial, __ATOMIC_ACQUIRE);
	if (serial != mt_inject_ctl.adopt_taken) {
		n = mt_inject_ctl.adopt_n < MT_INJECT_ADOPT_MAX ? mt_inject_ctl.adopt_n
								: MT_INJECT_ADOPT_MAX;
		for (i = 0; i < n; i++) {
			__u64 key = mt_inject_ctl.adopt[i];

			if (key > ADDR_SLOT_GONE &&
			    !addr_table_contains(mt_inject_table, mt_inject_filter, key))
				table_insert(key);
		}
		__atomic_store_n(&mt_inject_ctl.adopt_taken, serial, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&mt_inject_ctl.adopt_busy, 0, __ATOMIC_RELEASE);
}

/* One load on the counted paths: memtop handed blocks over. */
static inline void adopt_poll(void)
{
	if (unlikely(__atomic_load_n(&mt_inject_ctl.adopt_serial, __ATOMIC_RELAXED) !=
		     __atomic_load_n(&mt_inject_ctl.adopt_taken, __ATOMIC_RELAXED)))
		adopt_take();
}

/* After an allocation of size bytes returned ptr: counted, maybe sampled. */
static __attribute__((noinline)) void sample_new(void *ptr, size_t size)
{
	struct mt_inject_slot *c = slot_mine();

	__atomic_fetch_add(&c->alloc_calls, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&c->alloc_bytes, size, __ATOMIC_RELAXED);
	adopt_poll();
	py_poll_if_pending();
	if (ptr && sample_take(c, size) && table_insert((__u64)ptr))
		fire_alloc(ptr, size);
}

/* A free of ptr while a tool is attached: counted, and told if sampled. */
static __attribute__((noinline)) void free_seen(void *ptr)
{
	if (!ptr)
		return;
	__atomic_fetch_add(&slot_mine()->free_calls, 1, __ATOMIC_RELAXED);
	adopt_poll();
	if (addr_table_maybe(mt_inject_filter, (__u64)ptr) && table_remove((__u64)ptr))
		fire_free(ptr);
}

/* A child forked with the slots zeroed (sampler_abi.h, struct
 * mt_inject_slots) counts every call from its fork until memtop, its
 * probes on it, marks it: the semaphores it inherited are its parent's
 * tool's, and the kernel drops them at its first probe hit, which no tool
 * watches there yet. */
#define FORKED_COUNTING()                                             \
	(!__atomic_load_n(&mt_inject_slots.mark, __ATOMIC_RELAXED) && \
	 __atomic_load_n(&mt_inject_ctl.wipe_on_fork, __ATOMIC_RELAXED))
/* A tool is attached to the alloc probe (or a forked child counts). */
#define ALLOC_ON() unlikely(otel_memory_alloc_semaphore || FORKED_COUNTING())
/* A tool is attached to the free probe (or a forked child counts): every
 * free is counted. */
#define FREE_COUNTED() unlikely(otel_memory_free_semaphore || FORKED_COUNTING())
/* ptr may be sampled: a tool is attached and ptr's filter counter is not
 * zero (one load more than the no-tool path). */
#define FREE_ON(ptr) \
	unlikely(otel_memory_free_semaphore &&addr_table_maybe(mt_inject_filter, (__u64)(ptr)))

/* ==== CPython's object allocator (py_hook.h) ==== */

/* Its calls hold the GIL: one thread at a time counts and draws in the
 * last slot, with plain loads and stores (sampler_abi.h). */
#define PY_SLOT (&mt_inject_slots.slot[MT_INJECT_THREAD_SLOTS])

static inline void plain_add(__u64 *v, __u64 n)
{
	__atomic_store_n(v, __atomic_load_n(v, __ATOMIC_RELAXED) + n, __ATOMIC_RELAXED);
}

/* A small object of size bytes pymalloc returned at ptr: counted, maybe
 * sampled. */
static __attribute__((noinline)) void py_sample_new(void *ptr, size_t size)
{
	struct mt_inject_slot *c = PY_SLOT;

	plain_add(&c->alloc_calls, 1);
	plain_add(&c->alloc_bytes, size);
	if (ptr && sample_take(c, size) && table_insert((__u64)ptr))
		fire_alloc(ptr, size);
}

static bool forget_sampled(void *ptr)
{
	if (!FREE_ON(ptr) || !table_remove((__u64)ptr))
		return false;
	fire_free(ptr);
	return true;
}

#define PY_HOOK_API mt_inject_ctl.py_api
#define PY_HOOK_WANT mt_inject_ctl.py_want
#define PY_HOOK_STATE mt_inject_ctl.py_state
#define PY_HOOK_ALLOC_ON() ALLOC_ON()
#define py_hook_sample(p, n) py_sample_new(p, n)
#define py_hook_forget(p) forget_sampled(p)
#define py_hook_thread() thread_id()
#define py_hook_count() plain_add(&PY_SLOT->py_calls, 1)
#define py_hook_count_free()                                \
	do {                                                \
		if (FREE_COUNTED())                         \
			plain_add(&PY_SLOT->free_calls, 1); \
	} while (0)
#include "sampler/py_hook.h"

/* memtop set py_want (attach, detach): the wrapping follows it, asked for
 * from whichever thread samples first. */
static void py_poll_if_pending(void)
{
	if (PY_HOOK_PENDING())
		py_hook_poll();
}

/* ==== Entry points ==== */

typedef void *size_fn(size_t size);
typedef void *pair_fn(size_t a, size_t b);
typedef void free_fn(void *ptr);
typedef void *realloc_fn(void *ptr, size_t size);
typedef int posix_memalign_fn(void **memptr, size_t align, size_t size);

/* Where a call the sampler counts goes on to the allocator it is always a
 * real call, and where it does not count it a tail call: the allocator's
 * uprobes, on while memtop hands a process over to the sampler, tell the
 * two apart by the return address (in this file's text: counted here;
 * docs/inject.md, "The handover"). An empty asm after the call keeps the
 * compiler from making it a tail call. */
#define NOT_A_TAIL_CALL() __asm__ volatile("" ::: "memory")

/* Forward the call (a tail call while no tool is attached); sample what it
 * returned, of size bytes, while one is. */
#define FORWARD_SAMPLED(fn, type, size, ...)                  \
	do {                                                  \
		void *p_;                                     \
                                                              \
		if (!ALLOC_ON())                              \
			return ORIG(fn, type *)(__VA_ARGS__); \
		p_ = ORIG(fn, type *)(__VA_ARGS__);           \
		sample_new(p_, size);                         \
		return p_;                                    \
	} while (0)

/* Forward a call that frees ptr; while a tool is attached it is counted,
 * and told if ptr was sampled. */
#define FORWARD_FREE(fn, type, ...)                    \
	do {                                           \
		if (!FREE_COUNTED()) {                 \
			ORIG(fn, type *)(__VA_ARGS__); \
			return;                        \
		}                                      \
		free_seen(ptr);                        \
		py_hook_note_libc();                   \
		ORIG(fn, type *)(__VA_ARGS__);         \
		NOT_A_TAIL_CALL();                     \
	} while (0)

EXPORT void *mt_inject_malloc(size_t size)
{
	FORWARD_SAMPLED(MALLOC, size_fn, size, size);
}

EXPORT void mt_inject_free(void *ptr)
{
	FORWARD_FREE(FREE, free_fn, ptr);
}

EXPORT void *mt_inject_calloc(size_t nmemb, size_t size)
{
	/* nmemb * size cannot overflow when the call succeeded */
	FORWARD_SAMPLED(CALLOC, pair_fn, nmemb * size, nmemb, size);
}

EXPORT void *mt_inject_realloc(void *old, size_t size)
{
	bool was = false;
	void *p;

	py_hook_note_libc();
	if (!ALLOC_ON() && !FREE_COUNTED())
		return ORIG(REALLOC, realloc_fn *)(old, size); /* counted nowhere here */
	if (old && FREE_ON(old) && table_remove((__u64)old)) {
		was = true;
		fire_free(old);
	}
	p = ORIG(REALLOC, realloc_fn *)(old, size);
	if (!p && old && size && was) {
		/* failed: the old block is still there, and still sampled */
		if (table_insert((__u64)old))
			fire_alloc(old, size);
		return p;
	}
	if (old && !size && FREE_COUNTED())
		__atomic_fetch_add(&slot_mine()->free_calls, 1, __ATOMIC_RELAXED); /* a free */
	else if (ALLOC_ON())
		sample_new(p, size);
	return p;
}

EXPORT void *mt_inject_memalign(size_t align, size_t size)
{
	FORWARD_SAMPLED(MEMALIGN, pair_fn, size, align, size);
}

EXPORT void *mt_inject_aligned_alloc(size_t align, size_t size)
{
	FORWARD_SAMPLED(ALIGNED_ALLOC, pair_fn, size, align, size);
}

EXPORT int mt_inject_posix_memalign(void **memptr, size_t align, size_t size)
{
	int r;

	if (!ALLOC_ON())
		return ORIG(POSIX_MEMALIGN, posix_memalign_fn *)(memptr, align, size);
	r = ORIG(POSIX_MEMALIGN, posix_memalign_fn *)(memptr, align, size);
	sample_new(r ? NULL : *memptr, size); /* a failed call is a call, as for malloc */
	return r;
}

EXPORT void *mt_inject_valloc(size_t size)
{
	FORWARD_SAMPLED(VALLOC, size_fn, size, size);
}

/* pvalloc hands out whole pages; the size asked for is what counts, as
 * for the uprobes. */
EXPORT void *mt_inject_pvalloc(size_t size)
{
	FORWARD_SAMPLED(PVALLOC, size_fn, size, size);
}

/* ==== C++ operator new and delete of an allocator that defines them ====
 *
 * Rerouted only for jemalloc and tcmalloc (sampler_abi.h). A throwing
 * operator new that throws while its call is being sampled would unwind
 * through this frame, which no unwinder knows about (the loader never saw
 * this file): that needs an allocation failure while a tool is attached. */

typedef void *new_nothrow_fn(size_t size, const void *tag);
typedef void delete_sized_fn(void *ptr, size_t size);

EXPORT void *mt_inject__Znwm(size_t size)
{
	FORWARD_SAMPLED(NEW, size_fn, size, size);
}

EXPORT void *mt_inject__Znam(size_t size)
{
	FORWARD_SAMPLED(NEW_ARRAY, size_fn, size, size);
}

EXPORT void *mt_inject__ZnwmRKSt9nothrow_t(size_t size, const void *tag)
{
	FORWARD_SAMPLED(NEW_NOTHROW, new_nothrow_fn, size, size, tag);
}

EXPORT void *mt_inject__ZnamRKSt9nothrow_t(size_t size, const void *tag)
{
	FORWARD_SAMPLED(NEW_ARRAY_NOTHROW, new_nothrow_fn, size, size, tag);
}

EXPORT void mt_inject__ZdlPv(void *ptr)
{
	FORWARD_FREE(DELETE, free_fn, ptr);
}

EXPORT void mt_inject__ZdaPv(void *ptr)
{
	FORWARD_FREE(DELETE_ARRAY, free_fn, ptr);
}

EXPORT void mt_inject__ZdlPvm(void *ptr, size_t size)
{
	FORWARD_FREE(DELETE_SIZED, delete_sized_fn, ptr, size);
}

EXPORT void mt_inject__ZdaPvm(void *ptr, size_t size)
{
	FORWARD_FREE(DELETE_ARRAY_SIZED, delete_sized_fn, ptr, size);
}

/* ==== jemalloc's own API, where the allocator defines it ====
 *
 * mallocx/rallocx/dallocx/sdallocx (jemalloc(3)): redis-server frees with
 * sdallocx. The flags (alignment, zeroing, arenas, tcaches) pass through
 * unchanged; xallocx, which resizes in place, is not rerouted (memtop
 * watches such a process with uprobes, inject.h). */

typedef void *mallocx_fn(size_t size, int flags);
typedef void *rallocx_fn(void *ptr, size_t size, int flags);
typedef void dallocx_fn(void *ptr, int flags);
typedef void sdallocx_fn(void *ptr, size_t size, int flags);

EXPORT void *mt_inject_mallocx(size_t size, int flags)
{
	FORWARD_SAMPLED(MALLOCX, mallocx_fn, size, size, flags);
}

EXPORT void *mt_inject_rallocx(void *old, size_t size, int flags)
{
	bool was = false;
	void *p;

	if (!ALLOC_ON())
		return ORIG(RALLOCX, rallocx_fn *)(old, size, flags); /* counted nowhere here */
	if (old && FREE_ON(old) && table_remove((__u64)old)) {
		was = true;
		fire_free(old);
	}
	p = ORIG(RALLOCX, rallocx_fn *)(old, size, flags);
	if (!p && was) {
		/* failed: the old block is still there, and still sampled */
		if (table_insert((__u64)old))
			fire_alloc(old, size);
		return p;
	}
	if (ALLOC_ON())
		sample_new(p, size);
	return p;
}

EXPORT void mt_inject_dallocx(void *ptr, int flags)
{
	FORWARD_FREE(DALLOCX, dallocx_fn, ptr, flags);
}

EXPORT void mt_inject_sdallocx(void *ptr, size_t size, int flags)
{
	FORWARD_FREE(SDALLOCX, sdallocx_fn, ptr, size, flags);
}

/* ==== C++17's aligned operator new and delete, where the allocator
 * defines them (jemalloc, tcmalloc) ==== */

typedef void *new_aligned_fn(size_t size, size_t align);
typedef void *new_aligned_nothrow_fn(size_t size, size_t align, const void *tag);
typedef void delete_aligned_fn(void *ptr, size_t align);
typedef void delete_sized_aligned_fn(void *ptr, size_t size, size_t align);

EXPORT void *mt_inject__ZnwmSt11align_val_t(size_t size, size_t align)
{
	FORWARD_SAMPLED(NEW_ALIGNED, new_aligned_fn, size, size, align);
}

EXPORT void *mt_inject__ZnamSt11align_val_t(size_t size, size_t align)
{
	FORWARD_SAMPLED(NEW_ARRAY_ALIGNED, new_aligned_fn, size, size, align);
}

EXPORT void *mt_inject__ZnwmSt11align_val_tRKSt9nothrow_t(size_t size, size_t align, const void *tag)
{
	FORWARD_SAMPLED(NEW_ALIGNED_NOTHROW, new_aligned_nothrow_fn, size, size, align, tag);
}

EXPORT void *mt_inject__ZnamSt11align_val_tRKSt9nothrow_t(size_t size, size_t align, const void *tag)
{
	FORWARD_SAMPLED(NEW_ARRAY_ALIGNED_NOTHROW, new_aligned_nothrow_fn, size, size, align, tag);
}

EXPORT void mt_inject__ZdlPvSt11align_val_t(void *ptr, size_t align)
{
	FORWARD_FREE(DELETE_ALIGNED, delete_aligned_fn, ptr, align);
}

EXPORT void mt_inject__ZdaPvSt11align_val_t(void *ptr, size_t align)
{
	FORWARD_FREE(DELETE_ARRAY_ALIGNED, delete_aligned_fn, ptr, align);
}

EXPORT void mt_inject__ZdlPvmSt11align_val_t(void *ptr, size_t size, size_t align)
{
	FORWARD_FREE(DELETE_SIZED_ALIGNED, delete_sized_aligned_fn, ptr, size, align);
}

EXPORT void mt_inject__ZdaPvmSt11align_val_t(void *ptr, size_t size, size_t align)
{
	FORWARD_FREE(DELETE_ARRAY_SIZED_ALIGNED, delete_sized_aligned_fn, ptr, size, align);
}

/* The nothrow deletes take the tag after the pointer (and alignment). */
typedef void delete_nothrow_fn(void *ptr, const void *tag);
typedef void delete_aligned_nothrow_fn(void *ptr, size_t align, const void *tag);

EXPORT void mt_inject__ZdlPvRKSt9nothrow_t(void *ptr, const void *tag)
{
	FORWARD_FREE(DELETE_NOTHROW, delete_nothrow_fn, ptr, tag);
}

EXPORT void mt_inject__ZdaPvRKSt9nothrow_t(void *ptr, const void *tag)
{
	FORWARD_FREE(DELETE_ARRAY_NOTHROW, delete_nothrow_fn, ptr, tag);
}

EXPORT void mt_inject__ZdlPvSt11align_val_tRKSt9nothrow_t(void *ptr, size_t align, const void *tag)
{
	FORWARD_FREE(DELETE_ALIGNED_NOTHROW, delete_aligned_nothrow_fn, ptr, align, tag);
}

EXPORT void mt_inject__ZdaPvSt11align_val_tRKSt9nothrow_t(void *ptr, size_t align, const void *tag)
{
	FORWARD_FREE(DELETE_ARRAY_ALIGNED_NOTHROW, delete_aligned_nothrow_fn, ptr, align, tag);
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * memtop_sampler.c - libmemtop-sampler.so, an LD_PRELOAD interposer of the
 * glibc allocation functions that samples allocations in-process and fires
 * the OpenTelemetry memory-profiling USDT probes otel_memory:alloc and
 * otel_memory:free (contract: include/memtop/sampler_abi.h, docs/sampler.md).
 *
 * Every call is forwarded to the allocator the process would have called
 * without the sampler: for each function its next definition in symbol
 * lookup order (next_alloc.h), resolved on the first call, so all of them
 * reach one allocator. Only when that allocator is glibc's does the sampler
 * sample (its blocks carry a header glibc's chunk layout makes safe to
 * probe for); in front of any other allocator (jemalloc, tcmalloc) it is a
 * pure pass-through that never samples and never fires a probe.
 *
 * Every entry point first loads the alloc semaphore the kernel raises when
 * a tool attaches to otel_memory:alloc. While it is zero the call goes
 * straight to the next definition: one load and a branch, and nothing is
 * sampled. While it is set, a per-thread
 * countdown of bytes (exponential draws of mean MEMTOP_SAMPLE_RATE, as Go
 * and tcmalloc) picks the allocations to sample; a sampled block is
 * allocated 16 bytes (or its alignment) larger and carries a header
 * [magic | offset] right before the pointer the application gets.
 *
 * free(), realloc() and malloc_usable_size() must recognise sampled blocks
 * even after the tool detached, but only while some exist: a process-wide
 * count of live sampled blocks is the one load of their fast path. When it
 * is non-zero, a pointer is sampled if the 8 bytes at ptr-16 (glibc's
 * prev_size field for an ordinary block, always mapped) equal the magic and
 * the pointer is in the set of sampled pointers, sharded hash tables under
 * mutexes held only on sampled calls and kept consistent across fork().
 *
 * In a CPython process it also wraps the interpreter's object allocator
 * while a tool is attached (py_hook.h), so the objects pymalloc serves
 * from its own arenas are sampled too, without headers (addr_table.h).
 *
 * Nothing here calls dlsym() or allocates through the interposed functions
 * on the allocation paths, so allocation during the loader's or this
 * library's own initialisation is safe. The set's tables come from mmap.
 * Allocations that reach the sampled path before the constructor has run
 * are served unsampled.
 */
#define _SDT_HAS_SEMAPHORES 1
/* Arguments always in registers (8@%reg): the simplest form for consumers. */
#define STAP_SDT_ARG_CONSTRAINT r
#include <sys/sdt.h>

#include "memtop/sampler_abi.h"
#include "sampler/addr_table.h"
#include "sampler/next_alloc.h"
#include "sampler/sample_math.h"
#include "sampler/one_site.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))
#define NOINLINE __attribute__((noinline))
#define unlikely(x) __builtin_expect(!!(x), 0)

/* ==== USDT semaphores ==== */

/* Raised by the kernel (uprobe ref_ctr_offset) or a tracer while a tool is
 * attached to the probe; read on every call. */
volatile unsigned short otel_memory_alloc_semaphore __attribute__((section(".probes")));
volatile unsigned short otel_memory_free_semaphore __attribute__((section(".probes")));

#define alloc_enabled() unlikely(otel_memory_alloc_semaphore)
#define free_enabled() unlikely(otel_memory_free_semaphore)

/* ==== The next allocator, resolved on the first call ==== */

static void *first_malloc(size_t size);
static void first_free(void *ptr);
static void *first_calloc(size_t nmemb, size_t size);
static void *first_realloc(void *ptr, size_t size);
static void *first_memalign(size_t align, size_t size);
static void *first_aligned_alloc(size_t align, size_t size);
static int first_posix_memalign(void **memptr, size_t align, size_t size);
static void *first_valloc(size_t size);
static void *first_pvalloc(size_t size);
static size_t first_usable(void *ptr);

/* ==== State ==== */

static struct {
	/* Sampled blocks not freed yet: the only load of free()'s fast path. */
	long live;
	__u64 magic;
	double rate; /* mean bytes between samples */
	bool all;    /* rate <= 1: sample every allocation */
	bool ready;  /* constructor done: sampling allowed */
	__u64 seed;
	__u64 threads;          /* seeds handed out */
	bool resolved;          /* next holds the next definitions */
	struct next_alloc next; /* where every call goes; first_* until resolved */
} g __attribute__((aligned(64))) = {
	.next = {
		.malloc = first_malloc, .free = first_free, .calloc = first_calloc,
		.realloc = first_realloc, .memalign = first_memalign,
		.aligned_alloc = first_aligned_alloc, .posix_memalign = first_posix_memalign,
		.valloc = first_valloc, .pvalloc = first_pvalloc, .usable = first_usable,
	},
};

/* Stand-ins for a function no later object defines (the loader would
 * have failed to bind it): the call fails as an allocation failure. */
static void *none_1(size_t a)
{
	errno = ENOMEM;
	return NULL;
}

static void *none_2(size_t a, size_t b)
{
	errno = ENOMEM;
	return NULL;
}

static void none_free(void *ptr)
{
}

static void *none_realloc(void *ptr, size_t size)
{
	errno = ENOMEM;
	return NULL;
}

static int none_posix_memalign(void **memptr, size_t align, size_t size)
{
	return ENOMEM;
}

static size_t none_usable(void *ptr)
{
	return 0;
}

/* Find the next definitions. Two threads may race here on their first
 * calls: both find the same answer, and each pointer is one aligned store,
 * so a reader sees either the first_* stand-in or the final target. */
static void next_ensure(void)
{
	struct next_alloc n;

	if (__atomic_load_n(&g.resolved, __ATOMIC_ACQUIRE))
		return;
	next_alloc_resolve(&n, (const void *)next_ensure);
	if (!n.malloc)
		n.malloc = none_1;
	if (!n.free)
		n.free = none_free;
	if (!n.calloc)
		n.calloc = none_2;
	if (!n.realloc)
		n.realloc = none_realloc;
	if (!n.memalign)
		n.memalign = none_2;
	if (!n.aligned_alloc)
		n.aligned_alloc = none_2;
	if (!n.posix_memalign)
		n.posix_memalign = none_posix_memalign;
	if (!n.valloc)
		n.valloc = none_1;
	if (!n.pvalloc)
		n.pvalloc = none_1;
	if (!n.usable)
		n.usable = none_usable;
	__atomic_store_n(&g.next.malloc, n.malloc, __ATOMIC_RELAXED);
	__atomic_store_n(&g.next.free, n.free, __ATOMIC_RELAXED);
	__atomic_store_n(&g.next.calloc, n.calloc, __ATOMIC_RELAXED);
	__atomic_store_n(&g.next.realloc, n.realloc, __ATOMIC_RELAXED);
	__atomic_store_n(&g.next.memalign, n.memalign, __ATOMIC_RELAXED);
	__atomic_store_n(&g.next.aligned_alloc, n.aligned_alloc, __ATOMIC_RELAXED);
	__atomic_store_n(&g.next.posix_memalign, n.posix_memalign, __ATOMIC_RELAXED);
	__atomic_store_n(&g.next.valloc, n.valloc, __ATOMIC_RELAXED);
	__atomic_store_n(&g.next.pvalloc, n.pvalloc, __ATOMIC_RELAXED);
	__atomic_store_n(&g.next.usable, n.usable, __ATOMIC_RELAXED);
	g.next.glibc = n.glibc;
	__atomic_store_n(&g.resolved, true, __ATOMIC_RELEASE);
}

static void *first_malloc(size_t size)
{
	next_ensure();
	return g.next.malloc(size);
}

static void first_free(void *ptr)
{
	next_ensure();
	g.next.free(ptr);
}

static void *first_calloc(size_t nmemb, size_t size)
{
	next_ensure();
	return g.next.calloc(nmemb, size);
}

static void *first_realloc(void *ptr, size_t size)
{
	next_ensure();
	return g.next.realloc(ptr, size);
}

static void *first_memalign(size_t align, size_t size)
{
	next_ensure();
	return g.next.memalign(align, size);
}

static void *first_aligned_alloc(size_t align, size_t size)
{
	next_ensure();
	return g.next.aligned_alloc(align, size);
}

static int first_posix_memalign(void **memptr, size_t align, size_t size)
{
	next_ensure();
	return g.next.posix_memalign(memptr, align, size);
}

static void *first_valloc(size_t size)
{
	next_ensure();
	return g.next.valloc(size);
}

static void *first_pvalloc(size_t size)
{
	next_ensure();
	return g.next.pvalloc(size);
}

static size_t first_usable(void *ptr)
{
	next_ensure();
	return g.next.usable(ptr);
}

static inline long live_blocks(void)
{
	return __atomic_load_n(&g.live, __ATOMIC_RELAXED);
}

/* Per thread: bytes left to the next sample (0 = not drawn yet) and the
 * generator state (0 = not seeded yet). Zero-initialised static TLS, so a
 * new thread needs no set-up and touching it never allocates. */
struct thread_sampler {
	__s64 left;
	__u64 rng;
};
static __thread struct thread_sampler tls __attribute__((tls_model("initial-exec")));

/* ==== Random draws and the countdown ==== */

static __u64 rng_next(void)
{
	__u64 x = tls.rng;

	if (!x) {
		/* A counter, not the TLS address: a thread that reuses a dead
		 * thread's stack must not replay its draws. */
		__u64 n = __atomic_fetch_add(&g.threads, 1, __ATOMIC_RELAXED);

		x = sm_mix64(g.seed ^ sm_mix64(n)) | 1;
	}
	tls.rng = x;
	return sm_next(&tls.rng);
}

/* Bytes to the next sample: 1 + floor(Exp(rate)), so an allocation of s
 * bytes is sampled with probability 1 - exp(-s/rate). */
static __s64 sampler_draw(void)
{
	return sm_gap(rng_next(), g.rate);
}

/* Does this allocation of size bytes get sampled? Advances the calling
 * thread's countdown; zero-byte allocations are never sampled. Inlined:
 * it is most of the cost of a call while a tool is attached. */
static inline __attribute__((always_inline)) bool sampler_take(size_t size)
{
	__s64 left;

	if (!__atomic_load_n(&g.ready, __ATOMIC_ACQUIRE) || size == 0)
		return false;
	if (g.all)
		return true;
	left = tls.left;
	if (!left)
		left = sampler_draw();
	if ((__u64)left > size) {
		tls.left = left - (__s64)size;
		return false;
	}
	tls.left = sampler_draw();
	return true;
}

/* Bytes one sample of size bytes stands for. */
static __u64 sampler_weight(size_t size)
{
	return g.all ? size : sm_weight(size, g.rate);
}

/* ==== The set of sampled pointers ==== */

#define SET_SHARDS 16
#define SET_MIN_SLOTS 512

/* Open addressing with linear probing; 0 marks an empty slot; at most half
 * full. */
struct ptr_shard {
	pthread_mutex_t lock;
	uintptr_t *slot;
	size_t mask; /* slots - 1, or 0 before the first insert */
	size_t count;
} __attribute__((aligned(64)));

static struct ptr_shard shards[SET_SHARDS] = {
	[0 ... SET_SHARDS - 1] = { .lock = PTHREAD_MUTEX_INITIALIZER },
};

static struct ptr_shard *ptrset_shard(uintptr_t key)
{
	return &shards[sm_mix64(key) % SET_SHARDS];
}

static size_t ptrset_home(const struct ptr_shard *s, uintptr_t key)
{
	return (sm_mix64(key) / SET_SHARDS) & s->mask;
}

/* Index of key in s, or -1. Caller holds s->lock. */
static long ptrset_find(const struct ptr_shard *s, uintptr_t key)
{
	size_t i;

	if (!s->slot)
		return -1;
	for (i = ptrset_home(s, key); s->slot[i]; i = (i + 1) & s->mask)
		if (s->slot[i] == key)
			return (long)i;
	return -1;
}

static void ptrset_place(struct ptr_shard *s, uintptr_t key)
{
	size_t i = ptrset_home(s, key);

	while (s->slot[i])
		i = (i + 1) & s->mask;
	s->slot[i] = key;
}

/* Double the table (or create it). 0 or -ENOMEM. Caller holds s->lock. */
static int ptrset_grow(struct ptr_shard *s)
{
	size_t old_slots = s->slot ? s->mask + 1 : 0;
	size_t slots = old_slots ? old_slots * 2 : SET_MIN_SLOTS;
	uintptr_t *old = s->slot;
	void *mem;
	size_t i;

	mem = mmap(NULL, slots * sizeof(*old), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		   -1, 0);
	if (mem == MAP_FAILED)
		return -ENOMEM;
	s->slot = mem;
	s->mask = slots - 1;
	for (i = 0; i < old_slots; i++)
		if (old[i])
			ptrset_place(s, old[i]);
	if (old)
		munmap(old, old_slots * sizeof(*old));
	return 0;
}

/* Add ptr. 0, or -ENOMEM when the table cannot grow. errno is preserved. */
static int ptrset_insert(const void *ptr)
{
	uintptr_t key = (uintptr_t)ptr;
	struct ptr_shard *s = ptrset_shard(key);
	int err = 0, saved = errno;

	pthread_mutex_lock(&s->lock);
	if (ptrset_find(s, key) < 0) {
		if (!s->slot || (s->count + 1) * 2 > s->mask + 1)
			err = ptrset_grow(s);
		if (!err) {
			ptrset_place(s, key);
			s->count++;
			__atomic_fetch_add(&g.live, 1, __ATOMIC_RELAXED);
		}
	}
	pthread_mutex_unlock(&s->lock);
	errno = saved;
	return err;
}

/* Is ptr in the set? With remove, also take it out (backward-shift
 * deletion, so no tombstones). */
static bool ptrset_lookup(const void *ptr, bool remove)
{
	uintptr_t key = (uintptr_t)ptr;
	struct ptr_shard *s = ptrset_shard(key);
	long at;

	pthread_mutex_lock(&s->lock);
	at = ptrset_find(s, key);
	if (at >= 0 && remove) {
		size_t hole = (size_t)at, j = hole;

		for (;;) {
			size_t home;

			j = (j + 1) & s->mask;
			if (!s->slot[j])
				break;
			home = ptrset_home(s, s->slot[j]);
			/* The entry at j stays if its home lies cyclically in
			 * (hole, j]; otherwise it moves into the hole. */
			if (hole <= j ? (hole < home && home <= j) : (hole < home || home <= j))
				continue;
			s->slot[hole] = s->slot[j];
			hole = j;
		}
		s->slot[hole] = 0;
		s->count--;
		__atomic_fetch_sub(&g.live, 1, __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&s->lock);
	return at >= 0;
}

static void ptrset_lock_all(void)
{
	int i;

	for (i = 0; i < SET_SHARDS; i++)
		pthread_mutex_lock(&shards[i].lock);
}

static void ptrset_unlock_all(void)
{
	int i;

	for (i = SET_SHARDS - 1; i >= 0; i--)
		pthread_mutex_unlock(&shards[i].lock);
}

/* ==== The probes: one site each ==== */

static ONE_SITE void fire_alloc(void *user, size_t size)
{
	__u64 weight = sampler_weight(size);

	STAP_PROBE3(otel_memory, alloc, user, size, weight);
}

static ONE_SITE void fire_free(void *user)
{
	STAP_PROBE1(otel_memory, free, user);
}

/* ==== CPython's object allocator (py_hook.h) ====
 *
 * In a CPython process the interpreter's C API is bound here by the
 * loader (weak: NULL in any other process), and the objects pymalloc
 * serves carry no header: their sampled addresses go into an addr_table. */

extern void PyMem_GetAllocator(int domain, void *allocator) __attribute__((weak));
extern void PyMem_SetAllocator(int domain, void *allocator) __attribute__((weak));
extern int Py_AddPendingCall(int (*func)(void *), void *arg) __attribute__((weak));
extern int Py_IsInitialized(void) __attribute__((weak));

static struct {
	__u64 api[MT_PY_API_COUNT]; /* enum mt_py_api; 0s: not CPython */
	__u32 state;                /* enum mt_py_hook_state */
	__u64 live, dropped;
	__u64 table[MT_INJECT_TABLE_SLOTS];
	unsigned short filter[MT_INJECT_FILTER_SLOTS];
} py;

static void py_bind(void)
{
	py.api[MT_PY_GET_ALLOCATOR] = (uintptr_t)PyMem_GetAllocator;
	py.api[MT_PY_SET_ALLOCATOR] = (uintptr_t)PyMem_SetAllocator;
	py.api[MT_PY_ADD_PENDING_CALL] = (uintptr_t)Py_AddPendingCall;
	py.api[MT_PY_IS_INITIALIZED] = (uintptr_t)Py_IsInitialized;
}

static void py_sample(void *ptr, size_t size)
{
	if (ptr && sampler_take(size) &&
	    addr_table_insert(py.table, py.filter, &py.live, &py.dropped, (uintptr_t)ptr))
		fire_alloc(ptr, size);
}

static bool py_forget(void *ptr)
{
	if (!__atomic_load_n(&py.live, __ATOMIC_RELAXED) ||
	    !addr_table_remove(py.table, py.filter, &py.live, (uintptr_t)ptr))
		return false;
	if (free_enabled())
		fire_free(ptr);
	return true;
}

/* The allocator is wrapped while a tool is attached, given back when it
 * goes. */
#define PY_HOOK_API py.api
#define PY_HOOK_WANT (otel_memory_alloc_semaphore != 0)
#define PY_HOOK_STATE py.state
#define PY_HOOK_ALLOC_ON() alloc_enabled()
#define py_hook_sample(p, n) py_sample(p, n)
#define py_hook_forget(p) py_forget(p)
#define py_hook_thread() ((__u64)(uintptr_t)&tls)
#define py_hook_count() ((void)0) /* memtop reads no counts from a preloaded sampler */
#define py_hook_count_free() ((void)0)
#include "sampler/py_hook.h"

/* ==== Sampled blocks ==== */

static struct mt_sampler_header *block_header(void *user)
{
	return (struct mt_sampler_header *)user - 1;
}

/* Was ptr (non-NULL, from this allocator) handed out as a sampled block? */
static bool block_is_sampled(void *ptr)
{
	return block_header(ptr)->magic == g.magic && ptrset_lookup(ptr, false);
}

static size_t usable_plain(void *ptr)
{
	return g.next.usable(ptr);
}

/* Bytes the application may use in the sampled block at user. */
static size_t block_usable(void *user)
{
	size_t off = block_header(user)->offset;

	return usable_plain((char *)user - off) - off;
}

/* Turn the glibc block base into a sampled block whose user pointer lies
 * off bytes in, register it and fire otel_memory:alloc. NULL (base freed,
 * errno preserved) when the set cannot take it. */
static void *block_commit(char *base, size_t off, size_t size)
{
	char *user = base + off;
	struct mt_sampler_header *h = block_header(user);

	if (ptrset_insert(user) < 0) {
		int saved = errno;

		g.next.free(base);
		errno = saved;
		return NULL;
	}
	h->magic = g.magic;
	h->offset = off;
	if (alloc_enabled())
		fire_alloc(user, size);
	return user;
}

/* A sampled block of size bytes aligned to align (a power of two, or 0),
 * zeroed when zero is set (only with align <= 16). NULL with errno
 * preserved when it cannot be made: the caller then serves the call
 * unsampled, exactly as glibc would. */
static void *block_new(size_t align, size_t size, bool zero)
{
	size_t off = align > MT_SAMPLER_HEADER_SIZE ? align : MT_SAMPLER_HEADER_SIZE;
	int saved = errno;
	size_t total;
	char *base;

	if ((align & (align - 1)) || __builtin_add_overflow(size, off, &total))
		return NULL;
	if (off > MT_SAMPLER_HEADER_SIZE)
		base = g.next.memalign(off, total);
	else if (zero)
		base = g.next.calloc(1, total);
	else
		base = g.next.malloc(total);
	if (!base) {
		errno = saved;
		return NULL;
	}
	return block_commit(base, off, size);
}

/* Take the sampled block at user out of the set and fire otel_memory:free;
 * the memory stays allocated. false if user is not a sampled block. */
static bool block_forget(void *user)
{
	if (block_header(user)->magic != g.magic || !ptrset_lookup(user, true))
		return false;
	if (free_enabled())
		fire_free(user);
	return true;
}

/* free() of a pointer that may be sampled: the slow half of free(). */
static NOINLINE void block_free(void *ptr)
{
	if (ptr && block_forget(ptr)) {
		struct mt_sampler_header *h = block_header(ptr);
		char *base = (char *)ptr - h->offset;

		h->magic = 0;
		g.next.free(base);
		return;
	}
	g.next.free(ptr);
}

/* realloc of a sampled, malloc-aligned block whose new size is sampled
 * too: resize it in place with glibc's realloc (mremap for big blocks)
 * instead of copying. NULL, with the block intact and sampled, on failure. */
static void *block_resize(void *user, size_t size)
{
	char *base = (char *)user - MT_SAMPLER_HEADER_SIZE;
	size_t total, old_size;
	char *moved;

	if (__builtin_add_overflow(size, MT_SAMPLER_HEADER_SIZE, &total)) {
		errno = ENOMEM;
		return NULL;
	}
	old_size = block_usable(user);
	block_forget(user);
	moved = g.next.realloc(base, total);
	if (!moved) {
		int saved = errno;

		/* Still allocated: announce it again. Putting back the key
		 * just removed never grows the table, so this cannot fail. */
		block_commit(base, MT_SAMPLER_HEADER_SIZE, old_size);
		errno = saved;
		return NULL;
	}
	return block_commit(moved, MT_SAMPLER_HEADER_SIZE, size);
}

/* ==== Slow halves of the entry points ==== */

static NOINLINE void *malloc_slow(size_t size)
{
	void *p;

	if (PY_HOOK_PENDING())
		py_hook_poll();
	if (sampler_take(size) && (p = block_new(0, size, false)))
		return p;
	return g.next.malloc(size);
}

static NOINLINE void *calloc_slow(size_t nmemb, size_t size)
{
	size_t total;
	void *p;

	if (!__builtin_mul_overflow(nmemb, size, &total) && sampler_take(total) &&
	    (p = block_new(0, total, true)))
		return p;
	return g.next.calloc(nmemb, size);
}

/* memalign-like calls: plain() serves the call when it is not sampled. */
static NOINLINE void *memalign_slow(size_t align, size_t size,
				    void *(*plain)(size_t align, size_t size))
{
	void *p;

	if (sampler_take(size) && (p = block_new(align, size, false)))
		return p;
	return plain(align, size);
}

static NOINLINE void *realloc_slow(void *old, size_t size)
{
	bool was_sampled;
	size_t keep;
	void *p = NULL;

	/* not sampling (not started, or in front of another allocator):
	 * exactly the next realloc, realloc(p, 0) semantics included */
	if (!__atomic_load_n(&g.ready, __ATOMIC_ACQUIRE) && !live_blocks())
		return g.next.realloc(old, size);
	if (!old)
		return alloc_enabled() ? malloc_slow(size) : g.next.malloc(size);
	was_sampled = live_blocks() && block_is_sampled(old);
	if (!size) {
		/* glibc: realloc(p, 0) frees p and returns NULL. */
		block_free(old);
		return NULL;
	}
	if (alloc_enabled() && sampler_take(size)) {
		if (was_sampled && block_header(old)->offset == MT_SAMPLER_HEADER_SIZE)
			return block_resize(old, size);
		p = block_new(0, size, false);
	}
	if (!p) {
		if (!was_sampled)
			return g.next.realloc(old, size);
		p = g.next.malloc(size);
		if (!p)
			return NULL;
	}
	keep = was_sampled ? block_usable(old) : usable_plain(old);
	memcpy(p, old, keep < size ? keep : size);
	block_free(old);
	return p;
}

static void *memalign_plain(size_t align, size_t size)
{
	return g.next.memalign(align, size);
}

static void *aligned_alloc_plain(size_t align, size_t size)
{
	return g.next.aligned_alloc(align, size);
}

static void *valloc_plain(size_t align, size_t size)
{
	return g.next.valloc(size);
}

static NOINLINE void *pvalloc_slow(size_t size)
{
	size_t page = (size_t)getpagesize(), rounded;
	void *p;

	if (!__builtin_add_overflow(size, page - 1, &rounded)) {
		rounded &= ~(page - 1);
		if (sampler_take(rounded) && (p = block_new(page, rounded, false)))
			return p;
	}
	return g.next.pvalloc(size);
}

/* ==== Interposed entry points ==== */

EXPORT void *malloc(size_t size)
{
	if (alloc_enabled())
		return malloc_slow(size);
	return g.next.malloc(size);
}

EXPORT void free(void *ptr)
{
	if (unlikely(live_blocks())) {
		block_free(ptr);
		return;
	}
	g.next.free(ptr);
}

EXPORT void *calloc(size_t nmemb, size_t size)
{
	if (alloc_enabled())
		return calloc_slow(nmemb, size);
	return g.next.calloc(nmemb, size);
}

EXPORT void *realloc(void *ptr, size_t size)
{
	py_hook_note_libc();
	if (alloc_enabled() || unlikely(live_blocks()))
		return realloc_slow(ptr, size);
	return g.next.realloc(ptr, size);
}

EXPORT void *reallocarray(void *ptr, size_t nmemb, size_t size)
{
	size_t total;

	if (__builtin_mul_overflow(nmemb, size, &total)) {
		errno = ENOMEM;
		return NULL;
	}
	return realloc(ptr, total);
}

EXPORT void *memalign(size_t align, size_t size)
{
	if (alloc_enabled())
		return memalign_slow(align, size, memalign_plain);
	return g.next.memalign(align, size);
}

EXPORT void *aligned_alloc(size_t align, size_t size)
{
	if (alloc_enabled())
		return memalign_slow(align, size, aligned_alloc_plain);
	return aligned_alloc_plain(align, size);
}

EXPORT int posix_memalign(void **memptr, size_t align, size_t size)
{
	void *p;

	if (!alloc_enabled() || !__atomic_load_n(&g.ready, __ATOMIC_ACQUIRE))
		return g.next.posix_memalign(memptr, align, size);
	/* glibc's checks, in glibc's order. */
	if (align % sizeof(void *) || ((align / sizeof(void *)) & (align / sizeof(void *) - 1)) ||
	    !align)
		return EINVAL;
	p = memalign_slow(align, size, memalign_plain);
	if (!p)
		return ENOMEM;
	*memptr = p;
	return 0;
}

EXPORT void *valloc(size_t size)
{
	if (alloc_enabled())
		return memalign_slow((size_t)getpagesize(), size, valloc_plain);
	return g.next.valloc(size);
}

EXPORT void *pvalloc(size_t size)
{
	if (alloc_enabled())
		return pvalloc_slow(size);
	return g.next.pvalloc(size);
}

EXPORT size_t malloc_usable_size(void *ptr)
{
	if (unlikely(live_blocks()) && ptr && block_is_sampled(ptr))
		return block_usable(ptr);
	return usable_plain(ptr);
}

/* ==== Initialisation and fork ==== */

/* "524288", "512K", "4M", "1G" (powers of 1024). 0 or -EINVAL. */
static int rate_parse(const char *s, __u64 *rate)
{
	unsigned long long v;
	unsigned int shift = 0;
	char *end;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -EINVAL;
	switch (*end) {
	case 'k':
	case 'K':
		shift = 10;
		break;
	case 'm':
	case 'M':
		shift = 20;
		break;
	case 'g':
	case 'G':
		shift = 30;
		break;
	}
	if (shift)
		end++;
	if (*end || v > (UINT64_MAX >> shift))
		return -EINVAL;
	*rate = (__u64)v << shift;
	return 0;
}

static void say(const char *a, const char *b)
{
	static const char tag[] = "libmemtop-sampler: ";

	if (write(STDERR_FILENO, tag, sizeof(tag) - 1) < 0 || write(STDERR_FILENO, a, strlen(a)) < 0 ||
	    write(STDERR_FILENO, b, strlen(b)) < 0 || write(STDERR_FILENO, "\n", 1) < 0)
		return;
}

/* From the kernel (the raw system call: getrandom() needs glibc 2.25),
 * else from the time, the pid and an ASLR'd address. */
static __u64 random_u64(void)
{
	__u64 x;

	if (syscall(SYS_getrandom, &x, sizeof(x), 1 /* GRND_NONBLOCK */) == sizeof(x))
		return x;
	return sm_mix64((__u64)time(NULL) ^ ((__u64)getpid() << 32) ^ (uintptr_t)&x);
}

static void fork_parent(void)
{
	ptrset_unlock_all();
}

/* The child inherits the heap and so every sampled block: keep the set,
 * renew the locks, and draw differently from the parent. */
static void fork_child(void)
{
	int i;

	for (i = 0; i < SET_SHARDS; i++)
		pthread_mutex_init(&shards[i].lock, NULL);
	g.seed = sm_mix64(g.seed ^ (__u64)getpid());
	tls.rng = 0;
}

__attribute__((constructor)) static void sampler_start(void)
{
	const char *env = getenv(MT_SAMPLER_ENV_RATE);
	__u64 rate = MT_SAMPLER_DEFAULT_RATE;
	int saved = errno;

	if (env && *env && rate_parse(env, &rate) < 0) {
		say("ignoring bad " MT_SAMPLER_ENV_RATE "=", env);
		rate = MT_SAMPLER_DEFAULT_RATE;
	}
	g.rate = (double)rate;
	g.all = rate <= 1;
	do
		g.magic = random_u64();
	while (!g.magic);
	g.seed = random_u64();
	next_ensure();
	if (!g.next.glibc) {
		/* In front of another allocator: pass everything through and
		 * never sample (memtop probes that allocator instead). */
		errno = saved;
		return;
	}
	pthread_atfork(ptrset_lock_all, fork_parent, fork_child);
	py_bind();
	env = getenv(MT_SAMPLER_ENV_FORCE);
	if (env && !strcmp(env, "1")) {
		__atomic_fetch_add(&otel_memory_alloc_semaphore, 1, __ATOMIC_RELAXED);
		__atomic_fetch_add(&otel_memory_free_semaphore, 1, __ATOMIC_RELAXED);
	}
	__atomic_store_n(&g.ready, true, __ATOMIC_RELEASE);
	errno = saved;
}

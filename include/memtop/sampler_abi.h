/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * sampler_abi.h - what libmemtop-sampler.so promises to the outside: the
 * OpenTelemetry memory-profiling USDT contract it fires, the environment it
 * reads, and the layout of the header in front of a sampled block (which
 * only the .so and its tests look at; consumers never need it).
 *
 * USDT contract (see docs/sampler.md):
 *   otel_memory:alloc(void *ptr, size_t size, uint64_t weight)
 *     fires for sampled allocations only, after the block exists, with the
 *     pointer the application receives; weight is the number of bytes the
 *     sample stands for, round(size / (1 - exp(-size / rate))), so
 *     weight / size estimates the number of allocations.
 *   otel_memory:free(void *ptr)
 *     fires for frees (and realloc moves) of sampled pointers only, before
 *     the block is released.
 *   Both carry a semaphore; nothing is sampled while the alloc semaphore is
 *   zero.
 */
#ifndef MEMTOP_SAMPLER_ABI_H
#define MEMTOP_SAMPLER_ABI_H

#include <linux/types.h>

#define MT_SAMPLER_PROVIDER "otel_memory"
#define MT_SAMPLER_PROBE_ALLOC "alloc"
#define MT_SAMPLER_PROBE_FREE "free"

/* Mean sampling interval in bytes; K, M and G suffixes (powers of 1024);
 * 0 or 1 samples every allocation. */
#define MT_SAMPLER_ENV_RATE "MEMTOP_SAMPLE_RATE"
#define MT_SAMPLER_DEFAULT_RATE 524288
/* "1": behave as if a tool were attached from the start (the semaphores
 * are raised once at load). For tests and for measuring the sampling cost
 * without the cost of probe hits. */
#define MT_SAMPLER_ENV_FORCE "MEMTOP_SAMPLER_FORCE"

/* Sits in the 16 bytes right before the pointer the application gets.
 * magic is random per process and never 0; offset is how far that pointer
 * lies past the address glibc returned (16, or the alignment for aligned
 * allocations of alignment > 16). */
struct mt_sampler_header {
	__u64 magic;
	__u64 offset;
};

#define MT_SAMPLER_HEADER_SIZE 16

_Static_assert(sizeof(struct mt_sampler_header) == MT_SAMPLER_HEADER_SIZE,
	       "sampled-block header must keep 16-byte alignment");

/* ---- libmemtop-inject.so: the sampler memtop maps into a running process
 * (memtop -p PID --inject, docs/inject.md) ----
 *
 * memtop loads the file itself (no loader, no relocations), points the
 * allocator GOT slots of every loaded object at the mt_inject_<fn> entry
 * points, and tells the sampler through the control block below, an
 * exported object named MT_INJECT_CTL_SYMBOL, where each function went
 * before. Blocks carry no header in this mode: sampled addresses are kept
 * in a fixed table in the sampler's own memory, so every pointer the
 * application sees is the allocator's own. */
#define MT_INJECT_MEMFD_NAME "memtop-sampler"
#define MT_INJECT_CTL_SYMBOL "mt_inject_ctl"
#define MT_INJECT_POKE_SYMBOL "mt_inject_poke"
#define MT_INJECT_SCRATCH_SYMBOL "mt_inject_scratch"
#define MT_INJECT_TABLE_SYMBOL "mt_inject_table"   /* MT_INJECT_TABLE_SLOTS x 8 bytes */
#define MT_INJECT_FILTER_SYMBOL "mt_inject_filter" /* MT_INJECT_FILTER_SLOTS x 2 bytes */
#define MT_INJECT_FILTER_SLOTS 8192 /* live sampled addresses per hash, for free()'s test */
#define MT_INJECT_ENTRY_PREFIX "mt_inject_"
#define MT_INJECT_MAGIC 0x6a6974706f746d6dULL /* "mmtoptij" */
#define MT_INJECT_VERSION 10
/* Addresses one adoption round hands the sampler (mt_inject_ctl.adopt). */
#define MT_INJECT_ADOPT_MAX 512
#define MT_INJECT_TABLE_SLOTS 65536              /* sampled addresses tracked at once */
#define MT_INJECT_SLOTS_SYMBOL "mt_inject_slots" /* MT_INJECT_SLOTS x struct mt_inject_slot */
#define MT_INJECT_THREAD_SLOTS 64
#define MT_INJECT_SLOTS (MT_INJECT_THREAD_SLOTS + 1)

/* One per group of threads (hashed from the thread's TCB address), a
 * cache line each: the sampling countdown, and the calls counted while a
 * tool is attached (the alloc semaphore up for allocations, the free one
 * for frees), each added with one uncontended atomic add, so memtop's
 * sums over the slots are exact. The last slot is CPython's object
 * allocator's: its calls hold the GIL, one thread at a time, so there a
 * plain add is exact and costs a locked instruction less. */
struct mt_inject_slot {
	__s64 left; /* bytes to the next sample; 0: not drawn yet */
	__u64 rng;  /* 0: not seeded yet */
	__u64 alloc_calls;
	__u64 alloc_bytes;
	__u64 free_calls; /* of a non-NULL pointer */
	/* calls of CPython's object allocator through the sampler's wrapper
	 * (all four functions), for what the wrapper costs (inject_cost.h) */
	__u64 py_calls;
	__u64 pad[2];
};

/* The slots on whole pages of their own, which memtop marks
 * MADV_WIPEONFORK (Linux 4.14, madvise(2)) in a process it puts the
 * sampler in: a child that process forks starts with them zeroed, so it
 * counts its own calls from its first instruction, not its parent's
 * (docs/inject.md, "A worker forked by a process memtop changed"). mark
 * is set by memtop in the process it marked (after the madvise), and so
 * reads 0 in such a child, which counts every call whatever its
 * semaphores say (mt_inject_ctl.wipe_on_fork) until memtop, its probes on
 * the child, sets its mark. */
#define MT_INJECT_SLOT_PAGES 2
struct mt_inject_slots {
	struct mt_inject_slot slot[MT_INJECT_SLOTS];
	__u64 mark;
	__u8 pad[MT_INJECT_SLOT_PAGES * 4096 - MT_INJECT_SLOTS * sizeof(struct mt_inject_slot) -
		 sizeof(__u64)];
};

/* The poke stub runs a program of records in the scratch area, one after
 * the other, until MT_POKE_END (then int3, with %r15 at that record) or a
 * system call that fails (int3 with %r15 at its record, %rax = -errno):
 *   MT_POKE_STORE    compare-and-swap of the aligned 8 bytes at a: b is
 *                    stored only if they hold c; d gets what they held
 *                    (== c: stored). A slot that changed since memtop read
 *                    it (a dlclose, a lazy binding, another tool) is left
 *                    as it is, whatever now lies at that address.
 *   MT_POKE_SYSCALL  syscall a (b, c, d)
 */
enum { MT_POKE_END, MT_POKE_STORE, MT_POKE_SYSCALL };
struct mt_poke_record {
	__u64 op, a, b, c, d;
};
#define MT_INJECT_SCRATCH_RECORDS 256 /* records per run of the poke stub */

/* The functions rerouted, in control-block order; the names are both the
 * symbols looked up in the process and, after MT_INJECT_ENTRY_PREFIX, the
 * sampler's entry points. */
enum mt_inject_fn {
	MT_IFN_MALLOC,
	MT_IFN_FREE,
	MT_IFN_CALLOC,
	MT_IFN_REALLOC,
	MT_IFN_MEMALIGN,
	MT_IFN_ALIGNED_ALLOC,
	MT_IFN_POSIX_MEMALIGN,
	MT_IFN_VALLOC,
	MT_IFN_PVALLOC,
	/* C++ operator new and delete: rerouted only when the allocator
	 * behind malloc defines them itself (jemalloc, tcmalloc); libstdc++'s
	 * call malloc and free, which are rerouted already. */
	MT_IFN_NEW,
	MT_IFN_NEW_ARRAY,
	MT_IFN_NEW_NOTHROW,
	MT_IFN_NEW_ARRAY_NOTHROW,
	MT_IFN_DELETE,
	MT_IFN_DELETE_ARRAY,
	MT_IFN_DELETE_SIZED,
	MT_IFN_DELETE_ARRAY_SIZED,
	/* jemalloc's own API (redis frees with sdallocx): rerouted only
	 * when the allocator behind malloc defines it, like the above */
	MT_IFN_MALLOCX,
	MT_IFN_RALLOCX,
	MT_IFN_DALLOCX,
	MT_IFN_SDALLOCX,
	/* C++17's aligned operator new and delete, likewise */
	MT_IFN_NEW_ALIGNED,
	MT_IFN_NEW_ARRAY_ALIGNED,
	MT_IFN_NEW_ALIGNED_NOTHROW,
	MT_IFN_NEW_ARRAY_ALIGNED_NOTHROW,
	MT_IFN_DELETE_ALIGNED,
	MT_IFN_DELETE_ARRAY_ALIGNED,
	MT_IFN_DELETE_SIZED_ALIGNED,
	MT_IFN_DELETE_ARRAY_SIZED_ALIGNED,
	/* the nothrow deletes (what a nothrow new's failed constructor calls) */
	MT_IFN_DELETE_NOTHROW,
	MT_IFN_DELETE_ARRAY_NOTHROW,
	MT_IFN_DELETE_ALIGNED_NOTHROW,
	MT_IFN_DELETE_ARRAY_ALIGNED_NOTHROW,
	MT_IFN_COUNT
};

#define MT_IFN_FIRST_CXX MT_IFN_NEW

#define MT_INJECT_FN_NAMES                                                                           \
	{                                                                                            \
		"malloc", "free", "calloc", "realloc", "memalign", "aligned_alloc",                  \
			"posix_memalign", "valloc", "pvalloc", "_Znwm", "_Znam",                     \
			"_ZnwmRKSt9nothrow_t", "_ZnamRKSt9nothrow_t", "_ZdlPv", "_ZdaPv",            \
			"_ZdlPvm", "_ZdaPvm", "mallocx", "rallocx", "dallocx", "sdallocx",           \
			"_ZnwmSt11align_val_t", "_ZnamSt11align_val_t",                              \
			"_ZnwmSt11align_val_tRKSt9nothrow_t", "_ZnamSt11align_val_tRKSt9nothrow_t",  \
			"_ZdlPvSt11align_val_t", "_ZdaPvSt11align_val_t", "_ZdlPvmSt11align_val_t",  \
			"_ZdaPvmSt11align_val_t", "_ZdlPvRKSt9nothrow_t", "_ZdaPvRKSt9nothrow_t",    \
			"_ZdlPvSt11align_val_tRKSt9nothrow_t", "_ZdaPvSt11align_val_tRKSt9nothrow_t" \
	}

/* CPython's object allocator (docs/python.md). In a CPython 3.11 process
 * the sampler wraps the PYMEM_DOMAIN_OBJ allocator, as tracemalloc does,
 * with these C API functions of the interpreter; the wrapping and the
 * restoring happen in a pending call (Py_AddPendingCall), which the main
 * thread runs with the GIL held. Objects pymalloc serves itself (requests
 * of 1 to MT_PY_SMALL_REQUEST bytes) are sampled there; larger ones fall
 * through to malloc and are sampled there, once. */
enum mt_py_api {
	MT_PY_GET_ALLOCATOR,
	MT_PY_SET_ALLOCATOR,
	MT_PY_ADD_PENDING_CALL,
	MT_PY_IS_INITIALIZED,
	MT_PY_API_COUNT
};

#define MT_PY_API_NAMES                                                                             \
	{                                                                                           \
		"PyMem_GetAllocator", "PyMem_SetAllocator", "Py_AddPendingCall", "Py_IsInitialized" \
	}

#define MT_PY_SMALL_REQUEST 512 /* pymalloc's SMALL_REQUEST_THRESHOLD in 3.11 */

/* Where the wrapping stands (mt_inject_ctl.py_state). */
enum mt_py_hook_state {
	MT_PY_HOOK_OFF,       /* not wrapped (or restored) */
	MT_PY_HOOK_SCHEDULED, /* a pending call will wrap or restore */
	MT_PY_HOOK_ON,        /* objects go through the sampler */
	MT_PY_HOOK_LEFT,      /* another hook (tracemalloc) wrapped the sampler's
				 * since: restoring would drop it, so the sampler
				 * stays in the chain, forwarding only */
};

struct mt_inject_ctl {
	__u64 magic;              /* MT_INJECT_MAGIC from the start: identifies a loaded copy */
	__u64 version;            /* MT_INJECT_VERSION */
	__u64 orig[MT_IFN_COUNT]; /* where each entry point forwards (set before any GOT points here) */
	__u64 rate;               /* mean bytes between samples; <= 1: every allocation */
	__u64 seed;               /* for the per-thread-slot generators */
	__u32 attached_pid;       /* the memtop that has the GOTs rerouted, 0 when none */
	__u32 wipe_on_fork;       /* 1: the slots' pages are MADV_WIPEONFORK and marked
				   * (struct mt_inject_slots), inherited by a child */
	/* Kept by the sampler: */
	__u64 live;    /* sampled addresses in the table */
	__u64 dropped; /* samples not taken because the table was full */
	/* CPython: set by memtop before any slot points here, all 0 in any
	 * other process; py_want may change at any time */
	__u64 py_api[MT_PY_API_COUNT]; /* run-time addresses, enum mt_py_api */
	__u32 py_want;                 /* 1: wrap CPython's object allocator; 0: restore it */
	__u32 py_state;                /* kept by the sampler: enum mt_py_hook_state */
	/* Blocks memtop's uprobes sampled before the sampler counted every
	 * call (a process handed over to it, docs/inject.md): memtop writes
	 * adopt_n addresses into adopt[], then a new adopt_serial; the first
	 * thread to count a call after that puts them into the table (those
	 * not there already) and sets adopt_taken to that serial, from then
	 * on their frees are the sampler's to tell. */
	__u64 adopt[MT_INJECT_ADOPT_MAX];
	__u32 adopt_n;
	__u32 adopt_serial;
	__u32 adopt_taken; /* kept by the sampler */
	__u32 adopt_busy;  /* kept by the sampler: a thread is adopting */
};

#endif /* MEMTOP_SAMPLER_ABI_H */

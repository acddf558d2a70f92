/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * abi.h - the only header shared by bpf/memtop.bpf.c and user space.
 *
 * Everything here crosses the kernel/user boundary as plain bytes: fixed-size
 * fields, largest first, explicit padding, no pointers, no bool, no enum-typed
 * fields (enums are stored in __u32). Changing a layout means bumping
 * MT_ABI_VERSION; the _Static_asserts at the end catch accidental holes.
 *
 * User space must include <linux/types.h> before this file; the BPF side gets
 * the __u* types from vmlinux.h.
 */
#ifndef MEMTOP_ABI_H
#define MEMTOP_ABI_H

#define MT_ABI_VERSION 6

/* Frame-pointer stack depth recorded per sample (bpf_get_stack). */
#define MT_MAX_FRAMES 64
/* Upper bound of the raw user-stack copy per sample; the run-time size
 * (--stack-copy) is smaller by at least a chunk. Copied in MT_STACK_CHUNK
 * pieces aligned to the chunk size, so a fault at the top of the stack
 * loses only the part above it. */
#define MT_STACK_COPY_MAX 16384
#define MT_STACK_CHUNK 512
/* Entries of the exponential quantile table used to draw sampling
 * intervals; a power of two. */
#define MT_EXP_TABLE_SIZE 4096
/* Fixed-point scale of that table: entry = -ln(u) * MT_EXP_SCALE. */
#define MT_EXP_SCALE 65536

/* Allocator entry points. The value is the BPF attach cookie, so one
 * program serves every function. Stored in mt_event_alloc.fn. */
enum mt_alloc_fn {
	MT_FN_MALLOC = 0,
	MT_FN_CALLOC,
	MT_FN_REALLOC,
	MT_FN_REALLOCARRAY,
	MT_FN_POSIX_MEMALIGN,
	MT_FN_ALIGNED_ALLOC,
	MT_FN_MEMALIGN,
	MT_FN_VALLOC,
	MT_FN_PVALLOC,
	MT_FN_FREE,
	MT_FN_USDT,   /* an otel_memory:alloc USDT probe (in-process sampler) */
	MT_FN_MMAP,   /* an anonymous mmap (the mmap source); addr has MT_ADDR_MMAP */
	MT_FN_GO,     /* a sample the Go runtime took (runtime.mProf_Malloc) */
	MT_FN_DEVICE, /* a device-memory allocation (the device source, bpf/device.bpf.h):
		       * addr is MT_DEVICE_KEY(), dev_info and dev say which */
	MT_FN_COUNT,
};

/* Set in the address of an mmap-source record (and of its munmap's free):
 * user addresses never have it, so a mapping never meets a heap block's
 * address in the live map or the model. */
#define MT_ADDR_MMAP (1ULL << 63)

/*
 * The device-memory source (docs/device-memory.md). A device allocation's
 * handle (VkDeviceMemory, cl_mem, an SVM pointer, a CUdeviceptr, a
 * CUmemGenericAllocationHandle) is its address in the live map and the
 * model, tagged MT_ADDR_DEVICE with the API's handle space in bits 56-61,
 * so it never meets a heap block, a mapping or another API's handle. The
 * handle keeps its low 56 bits (user addresses and the drivers' handles
 * fit).
 */
#define MT_ADDR_DEVICE (1ULL << 62)
#define MT_DEVICE_KEY(space, handle) \
	(MT_ADDR_DEVICE | ((__u64)((space)&0x3f) << 56) | ((__u64)(handle) & ((1ULL << 56) - 1)))
#define MT_ADDR_IS_DEVICE(a) (((a) & (MT_ADDR_MMAP | MT_ADDR_DEVICE)) == MT_ADDR_DEVICE)

/* The device APIs (mt_event_alloc.dev_info, bits 0-7); also the handle
 * spaces of MT_DEVICE_KEY (MT_DEV_CUDA_VMM: cuMemCreate's handles, apart
 * from device pointers). */
enum mt_dev_api {
	MT_DEV_NONE = 0, /* not a device allocation: the host tier */
	MT_DEV_VULKAN = 1,
	MT_DEV_OPENCL = 2,
	MT_DEV_CUDA = 3,
	MT_DEV_CUDA_VMM = 4, /* a handle space only; reported as MT_DEV_CUDA */
	MT_DEV_API_COUNT,
};

/* The kind of device memory (dev_info bits 8-15), a set: Vulkan's memory
 * type may be device-local and host-visible at once. */
enum mt_dev_kind {
	MT_DK_DEVICE_LOCAL = 1 << 0, /* on the device (VK_MEMORY_PROPERTY_DEVICE_LOCAL,
				      * a plain clCreateBuffer, cuMemAlloc) */
	MT_DK_HOST_VISIBLE = 1 << 1, /* mappable by the host (VK_..._HOST_VISIBLE,
				      * CL_MEM_ALLOC_HOST_PTR) */
	MT_DK_MANAGED = 1 << 2,      /* migrates between host and device
				      * (cuMemAllocManaged, clSVMAlloc) */
	MT_DK_PINNED_HOST = 1 << 3,  /* page-locked host memory (cuMemHostAlloc,
				      * cuMemAllocHost) */
	MT_DK_HOST_PTR = 1 << 4,     /* the application's own host memory
				      * (CL_MEM_USE_HOST_PTR): not the device's */
	MT_DK_UNKNOWN = 1 << 7,      /* not known (a Vulkan memory type whose
				      * properties memtop did not see) */
};

/* dev_info bit 16: mt_event_alloc.dev is the device's ordinal already
 * (cuMemCreate's location), not a handle for user space to number. */
#define MT_DEV_ORDINAL (1U << 16)
/* dev_info bit 17: bits 24-31 hold the Vulkan memory type index the
 * allocation asked for (VkMemoryAllocateInfo.memoryTypeIndex). */
#define MT_DEV_TYPE_INDEX (1U << 17)
#define MT_DEV_INFO(api, kind, flags) ((__u32)(api) | ((__u32)(kind) << 8) | (__u32)(flags))
#define MT_DEV_INFO_API(i) ((i)&0xff)
#define MT_DEV_INFO_KIND(i) (((i) >> 8) & 0xff)
#define MT_DEV_INFO_TYPE(i) (((i) >> 24) & 0xff)

/* The device source's entry points: the attach cookie of bpf/device.bpf.h's
 * programs (src/probe/device_source.c's table names the functions). */
enum mt_dev_fn {
	MT_DEVFN_VK_ALLOC = 1,    /* vkAllocateMemory(dev, info, alloc, *mem) */
	MT_DEVFN_VK_FREE,         /* vkFreeMemory(dev, mem, alloc) */
	MT_DEVFN_VK_PROPS,        /* vkGetPhysicalDeviceMemoryProperties(phys, *props) */
	MT_DEVFN_VK_PROPS2,       /* ...2 and ...2KHR(phys, *props2) */
	MT_DEVFN_CL_BUFFER,       /* clCreateBuffer(ctx, flags, size, host, *err) */
	MT_DEVFN_CL_BUFFER_PROPS, /* clCreateBufferWithProperties(ctx, props, flags, size, ...) */
	MT_DEVFN_CL_SVM_ALLOC,    /* clSVMAlloc(ctx, flags, size, align) */
	MT_DEVFN_CL_SVM_FREE,     /* clSVMFree(ctx, ptr) */
	MT_DEVFN_CL_RETAIN,       /* clRetainMemObject(mem) */
	MT_DEVFN_CL_RELEASE,      /* clReleaseMemObject(mem) */
	MT_DEVFN_CU_ALLOC,   /* cuMemAlloc_v2(*dptr, size), cuMemAllocAsync(*dptr, size, stream) */
	MT_DEVFN_CU_MANAGED, /* cuMemAllocManaged(*dptr, size, flags) */
	MT_DEVFN_CU_PITCH,   /* cuMemAllocPitch_v2(*dptr, *pitch, width, height, elem) */
	MT_DEVFN_CU_CREATE,  /* cuMemCreate(*handle, size, *prop, flags) */
	MT_DEVFN_CU_HOST,    /* cuMemHostAlloc(**p, size, flags), cuMemAllocHost_v2(**p, size) */
	MT_DEVFN_CU_FREE, /* cuMemFree_v2(dptr), cuMemFreeAsync(dptr, stream), cuMemFreeHost(p) */
	MT_DEVFN_CU_RELEASE, /* cuMemRelease(handle) */
	MT_DEVFN_COUNT,
};

/* The attach cookie of an allocator probe: the enum mt_alloc_fn in the low
 * 16 bits, enum mt_probe_flags in the next 16 (src/probe/allocators.c sets
 * them per allocator), and in bits 32-39 where the return address is at
 * the probed instruction: 1 + its offset from rsp in words, 0 when not
 * known (probe_place.h). */
#define MT_COOKIE(fn, flags) ((__u64)(fn) | ((__u64)(flags) << 16))
#define MT_COOKIE_FN(c) ((__u32)(c)&0xffff)
#define MT_COOKIE_FLAGS(c) (((__u32)(c) >> 16) & 0xffff)
#define MT_COOKIE_RA(ra_off) \
	((ra_off) < 0 || (ra_off) % 8 || (ra_off) / 8 > 254 ? 0ULL : (__u64)((ra_off) / 8 + 1) << 32)
#define MT_COOKIE_RA_AT(c) ((__u32)((c) >> 32) & 0xff) /* 0: unknown, else words + 1 */

enum mt_probe_flags {
	/* realloc(NULL, n) allocates and realloc(p, 0) frees inside realloc
	 * itself (jemalloc, tcmalloc), not through the probed malloc and free
	 * as glibc's does: count them at realloc. */
	MT_PF_REALLOC_SELF = 1 << 0,
	/* Some free-family functions of this allocator tail-call another
	 * probed one with the same pointer (tcmalloc's sized delete forwards
	 * page-aligned blocks to tc_free): a free whose (pointer, stack
	 * pointer) equals the one the thread's last MT_PF_FREE_FORWARDS probe
	 * noted, with no allocation in between, is that forwarded half and is
	 * not counted again. Set only where every free-family probe sits in
	 * entry state (rsp as at the call). */
	MT_PF_FREE_DEDUPE = 1 << 1,
	/* This free-family function may forward its pointer to another one:
	 * note (pointer, sp) for MT_PF_FREE_DEDUPE. */
	MT_PF_FREE_FORWARDS = 1 << 2,
	/* The allocator frees blocks the program freed already when a thread
	 * exits (glibc empties the thread's tcache), from code whose range in
	 * this process is in the exit_frees map: a free called from there is
	 * not counted. Set only where the free probe knows its return
	 * address (MT_COOKIE_RA_AT). */
	MT_PF_FREE_EXIT_RANGE = 1 << 3,
};

/* Event kinds, the first __u32 of every ring-buffer record. */
enum mt_event_kind {
	MT_EV_ALLOC = 1, /* a sampled allocation: struct mt_event_alloc */
	MT_EV_FREE = 2,  /* a free of a tracked sampled address: mt_event_free */
	MT_EV_PROC = 3,  /* a process appeared in the watched cgroup: mt_event_proc */
	MT_EV_PY = 4,    /* the Python frames of the next sample of the same thread:
			  * mt_event_py, submitted just before its mt_event_alloc */
	MT_EV_NAMED = 5, /* a sample whose frames the process named itself (a
			  * JVM's agent, docs/java.md; V8's sampling heap
			  * profiler, docs/node.md): mt_event_named, built in
			  * user space, never by the BPF side */
};

/* mt_event_proc.what */
enum mt_proc_what {
	MT_PROC_FORK = 1, /* a new process (not a thread) */
	MT_PROC_EXEC = 2, /* a process replaced its program */
	MT_PROC_HELD = 3, /* a newcomer stopped at its loader's end, in the held
			   * map until memtop lets it go (struct mt_hold) */
};

/* Values of the family map (-- CMD and its descendants). */
enum mt_family {
	MT_FAMILY_MEMBER = 1, /* forks and execs are reported */
	MT_FAMILY_SEED = 2,   /* the command, held before the exec memtop
			       * releases it into: that exec is not reported
			       * (it is watched already), later ones are */
};

/* mt_event_alloc.flags */
enum mt_event_flags {
	MT_EVF_UNTRACKED = 1 << 0,  /* live map full: counted, never freed */
	MT_EVF_FP_FULL = 1 << 1,    /* bpf_get_stack filled every slot */
	MT_EVF_STACK_FAULT = 1 << 2 /* stack copy ended on a fault */
};

/* User registers at the moment of the sample, in the caller's frame (the
 * allocator has returned). Named after x86-64 pt_regs. */
struct mt_regs {
	__u64 ip;
	__u64 sp;
	__u64 bp;
	__u64 bx;
	__u64 r12;
	__u64 r13;
	__u64 r14;
	__u64 r15;
	__u64 ax;
	__u64 cx;
	__u64 dx;
	__u64 si;
	__u64 di;
	__u64 r8;
	__u64 r9;
	__u64 r10;
	__u64 r11;
};

struct mt_event_free {
	__u32 kind; /* MT_EV_FREE */
	__u32 pid;  /* tgid */
	__u32 tid;
	__u32 _pad;
	__u64 ts_ns; /* CLOCK_MONOTONIC */
	__u64 addr;
};

struct mt_event_proc {
	__u32 kind; /* MT_EV_PROC */
	__u32 pid;  /* the new or exec'ing process (tgid) */
	__u32 ppid; /* its parent, for forks */
	__u32 what; /* enum mt_proc_what */
	__u64 ts_ns;
};

/* A sampled allocation. Variable length: the record ends after
 * stack[stack_len]; MT_ALLOC_EVENT_HDR_SIZE is the fixed part. */
struct mt_event_alloc {
	__u32 kind; /* MT_EV_ALLOC */
	__u32 pid;
	__u32 tid;
	__u32 fn;           /* enum mt_alloc_fn */
	__u64 ts_ns;        /* CLOCK_MONOTONIC */
	__u64 addr;         /* returned address (0: the allocation failed) */
	__u64 size;         /* requested bytes */
	__u64 weight_bytes; /* bytes this sample stands for when the process
			     * sampled it (USDT); 0: memtop sampled it */
	__u64 rate;         /* memtop sampled it: the mean bytes between samples it was
		      * drawn at (struct mt_phase); 0 with weight_bytes */
	__u32 flags;        /* enum mt_event_flags */
	__u32 nr_frames;
	__u32 stack_len;  /* bytes of stack[] that are valid */
	__u32 stack_skew; /* stack[0] is at regs.sp - stack_skew */
	__u32 duty_ppm;   /* share of time the allocation probes were on when it
			   * was drawn, parts per million (struct mt_phase) */
	__u32 dev_info;   /* MT_FN_DEVICE: MT_DEV_INFO(api, kind, flags); 0 otherwise */
	__u64 dev;        /* MT_FN_DEVICE: the device the memory is on, as the call named
			   * it (VkDevice, cl_context, 0 for CUDA's current context) or its
			   * ordinal (MT_DEV_ORDINAL); 0 otherwise */
	struct mt_regs regs;
	__u64 frames[MT_MAX_FRAMES];   /* frame-pointer walk, innermost first */
	__u8 stack[MT_STACK_COPY_MAX]; /* copy of [sp - skew, sp - skew + stack_len) */
};

#define MT_ALLOC_EVENT_HDR_SIZE (sizeof(struct mt_event_alloc) - MT_STACK_COPY_MAX)

/* Exact per-process counters, one per CPU, summed by user space. */
struct mt_proc_counters {
	__u64 alloc_calls;  /* calls that allocate (see docs/architecture.md) */
	__u64 free_calls;   /* free() of a non-NULL pointer */
	__u64 alloc_bytes;  /* bytes requested by those calls */
	__u64 probe_hits;   /* every probe run (entry and return) */
	__u64 samples;      /* sampled allocations */
	__u64 phased_calls; /* the alloc_calls the overhead budget's phases
			     * switch (all but realloc, which stays probed) */
	__u64 sample_ns;    /* time the returns of sampled calls spent in the
			     * BPF program (stack copy, walk, ring) */
};

/* Global fault counters, index of the per-CPU drop array. */
enum mt_drop {
	MT_DROP_RINGBUF = 0,  /* event lost: ring buffer full */
	MT_DROP_LIVE_FULL,    /* sample not tracked: live map full */
	MT_DROP_PENDING_FULL, /* sample lost: pending map full */
	MT_DROP_COUNT,
};

/*
 * The allocation probes' sampling phase: a BPF global that user space (the
 * overhead budget, docs/probes.md section 6) rewrites before it switches
 * the allocation probes on and whenever the duty changes. While the probes
 * are on for a share d of the time, samples are drawn at mean rate R*d, so
 * as many are taken per second as at full duty; each sample carries the
 * rate and the duty it was drawn at, so its weight never depends on when
 * user space reads it. A thread whose countdown was drawn in an earlier
 * epoch draws a fresh one (the exponential is memoryless, so this biases
 * nothing).
 */
struct mt_phase {
	__u64 rate;       /* mean bytes between samples now; 0: the load-time rate */
	__u32 duty_ppm;   /* share of time the allocation probes are on, ppm */
	__u32 epoch;      /* changes whenever rate or duty do */
	__u32 allocs_on;  /* 0: allocation probes switched off (realloc, which
			  * stays probed for its free, then only frees) */
	__u32 count_only; /* 1: calls are counted, never sampled (the start-up
			   * cost measure, whose phases switch free() off too) */
};

/* Interpreter frames read at sample time (CPython, docs/python.md). */
#define MT_PY_MAX_FRAMES 32

/* Where one CPython process keeps its frame chain: runtime addresses and
 * structure offsets of its exact version (user space derives them from
 * CPython's headers, stacks/python.c). Value of the pyprocs map, by tgid. */
struct mt_py_proc {
	__u64 tstate_current;       /* address of _PyRuntime.gilstate.tstate_current */
	__u32 tstate_thread_id;     /* PyThreadState.thread_id (pthread_self, = fs base) */
	__u32 tstate_cframe;        /* PyThreadState.cframe */
	__u32 cframe_current_frame; /* _PyCFrame.current_frame */
	__u32 frame_code;           /* _PyInterpreterFrame.f_code */
	__u32 frame_previous;       /* _PyInterpreterFrame.previous */
	__u32 frame_prev_instr;     /* _PyInterpreterFrame.prev_instr */
	__u32 frame_is_entry;       /* _PyInterpreterFrame.is_entry (a bool) */
	__u32 _pad;
};

/* mt_py_frame.flags */
enum mt_py_frame_flags {
	MT_PYF_ENTRY = 1 << 0, /* the frame _PyEval_EvalFrameDefault was entered
				* with: the last Python frame of one native
				* interpreter activation */
};

struct mt_py_frame {
	__u64 code;  /* PyCodeObject * in the target */
	__u64 instr; /* prev_instr: the code unit before the next to run */
	__u32 flags; /* enum mt_py_frame_flags */
	__u32 _pad;
};

/* mt_event_py.flags */
enum mt_py_event_flags {
	MT_PYE_TRUNCATED = 1 << 0, /* more than MT_PY_MAX_FRAMES frames, or a
				    * read failed before the chain ended */
};

struct mt_event_py {
	__u32 kind; /* MT_EV_PY */
	__u32 pid;
	__u32 tid;
	__u32 nframes; /* valid entries of frames[], innermost first */
	__u64 ts_ns;   /* equal to the ts_ns of the sample it belongs to */
	__u32 flags;   /* enum mt_py_event_flags */
	__u32 _pad;
	struct mt_py_frame frames[MT_PY_MAX_FRAMES];
};

/* The mmap source's view of a process's program break (the brk_state
 * map, by tgid): user space writes it at attach from /proc, the brk exit
 * program keeps it. */
struct mt_brk_state {
	__u64 top;   /* the break after the last brk */
	__u64 depth; /* growth records on the process's brk stack */
};

/* Go (bpf/go.bpf.h). The attach cookie of the runtime.mProf_Malloc probe:
 * which argument registers hold the object and its size (Go's register
 * ABI on amd64: RAX, RBX, RCX, ...). */
enum mt_go_malloc_args {
	MT_GO_MALLOC_AX_BX = 0, /* mProf_Malloc(p, size): Go 1.19 - 1.22 */
	MT_GO_MALLOC_BX_CX = 1, /* mProf_Malloc(mp, p, size): Go 1.23 */
};

/* A watched Go process: value of the goprocs map, by tgid. */
struct mt_go_proc {
	__u64 rate_addr; /* runtime address of runtime.MemProfileRate; 0: unknown */
	__u64 rate;      /* the rate to weigh samples by when rate_addr is 0 or
			  * unreadable */
};

/* Samples whose frames the process names itself (MT_EV_NAMED). The
 * address of such a sample, and of its free (MT_EV_FREE), is the
 * process's own id for the object with MT_ADDR_NAMED set: never a heap
 * address nor a mapping's (MT_ADDR_MMAP). */
#define MT_ADDR_NAMED (1ULL << 62)
#define MT_NAMED_MAX_FRAMES 64
/* Bytes of one function or file name of a named frame. */
#define MT_NAMED_NAME_MAX 400
/* Bytes of all the names of one record. */
#define MT_NAMED_TEXT_MAX 16384

/* mt_event_named.runtime: who named the frames (the frames' module) */
enum mt_named_runtime {
	MT_NAMED_JAVA = 1, /* a JVM, through memtop's JVMTI agent */
	MT_NAMED_V8 = 2,   /* V8 (Node.js), through its sampling heap profiler */
};

/* mt_event_named.flags */
enum mt_named_flags {
	MT_NEF_TRUNCATED = 1 << 0, /* the stack was deeper than the frames given */
};

struct mt_named_frame {
	__u32 line;         /* source line; 0: unknown */
	__u16 function_len; /* bytes of its function name, 1..MT_NAMED_NAME_MAX */
	__u16 file_len;     /* bytes of its file name, 0..MT_NAMED_NAME_MAX */
};

/* A sample with its frames as text, innermost first. Variable length:
 * nframes struct mt_named_frame, then text_len bytes holding, frame after
 * frame, its function then its file (no terminators). */
struct mt_event_named {
	__u32 kind; /* MT_EV_NAMED */
	__u32 pid;
	__u32 tid;
	__u32 nframes; /* 0..MT_NAMED_MAX_FRAMES */
	__u64 ts_ns;   /* CLOCK_MONOTONIC */
	__u64 addr;    /* the object's id | MT_ADDR_NAMED */
	__u64 size;    /* bytes */
	__u64 rate;    /* mean bytes between samples it was drawn at (> 0) */
	__u32 runtime; /* enum mt_named_runtime */
	__u32 flags;   /* enum mt_named_flags */
	__u32 text_len;
	__u32 _pad;
	/* struct mt_named_frame frames[nframes]; char text[text_len]; */
};

/* [lo, hi) of some code in a process, value of the maps that tell a call
 * by its return address: handover (the sampler's text in a process handed
 * over from its allocator's uprobes to memtop's sampler) and exit_frees
 * (the allocator's code that frees at a thread's exit). */
struct mt_text_range {
	__u64 lo;
	__u64 hi;
};

/* An injected sampler's last counts, summed by the BPF side as its
 * process ends (inject_final map): the sched_process_exit tracepoint
 * runs in the exiting task before the kernel takes its memory (Linux
 * 6.x, kernel/exit.c do_exit), the sampler's counters are still there to
 * read, and after it they are gone. User space writes slots; the BPF
 * side the sums (struct mt_inject_slot's, over its MT_INJECT_SLOTS) and
 * then done = 1; a read that faults leaves done 0. */
#define MT_INJECT_FINAL_SLOTS 65   /* sampler_abi.h: MT_INJECT_SLOTS */
#define MT_INJECT_FINAL_PY_SLOT 64 /* MT_INJECT_THREAD_SLOTS: CPython's */
#define MT_INJECT_FINAL_STRIDE 64  /* sizeof(struct mt_inject_slot) */
#define MT_INJECT_FINAL_COUNTS \
	16 /* offsetof(struct mt_inject_slot, alloc_calls),
				    * then alloc_bytes, free_calls, py_calls */
struct mt_inject_final {
	__u64 slots; /* the sampler's slots in the process (struct mt_inject_slots) */
	__u64 alloc_calls, alloc_bytes, free_calls, py_calls;
	__u64 py_allocs, py_frees; /* its last slot's (CPython's object allocator) */
	__u32 done;
	__u32 pad;
};

/* A newcomer held at the end of its loader (docs/cgroup.md, "Held at its
 * start"), in the held map keyed by its tgid: stopped (SIGSTOP) from the
 * first mprotect(PROT_READ) of its program, the loader's first relocation,
 * until memtop's probes are on it. Whoever deletes the entry owes it the
 * SIGCONT (src/probe/hold.h). */
/* The most newcomers held in a second: each costs memtop an attach while
 * it waits (5-10 ms here), so a burst of process starts (a shell script)
 * pays it for the first ones only; the others are counted from when memtop
 * finds them (docs/cgroup.md). */
#define MT_HOLDS_PER_S 10

/* What is held (the BPF side's hold_newcomers). */
enum mt_hold_what {
	MT_HOLD_EXEC = 1, /* a program a followed process execs, at its loader's end */
	MT_HOLD_FORK = 2, /* a child forked by a process on uprobes, before it runs */
};

struct mt_hold {
	__u64 start_ns;        /* its start (task start_boottime): the same process */
	__u64 held_ns;         /* when it was stopped (CLOCK_MONOTONIC) */
	__u64 parent_start_ns; /* its parent's start, ... */
	__u32 parent;          /* ... tgid, ... */
	__u32 parent_stopped;  /* ... and whether it was stopped then: a parent that
				* stops itself when its child stops (su, sudo,
				* script) is continued with it (hold.h) */
};

/* Key of the live map: a sampled allocation still in use. */
struct mt_live_key {
	__u32 pid;
	__u32 _pad;
	__u64 addr;
};

#ifndef __bpf__
_Static_assert(sizeof(struct mt_regs) == 17 * 8, "mt_regs layout");
_Static_assert(sizeof(struct mt_event_free) == 32, "mt_event_free layout");
_Static_assert(sizeof(struct mt_event_proc) == 24, "mt_event_proc layout");
_Static_assert(sizeof(struct mt_event_alloc) == 88 + 136 + 8 * MT_MAX_FRAMES + MT_STACK_COPY_MAX,
	       "mt_event_alloc layout");
_Static_assert(sizeof(struct mt_proc_counters) == 56, "mt_proc_counters layout");
_Static_assert(sizeof(struct mt_live_key) == 16, "mt_live_key layout");
_Static_assert(sizeof(struct mt_text_range) == 16, "mt_text_range layout");
_Static_assert(sizeof(struct mt_inject_final) == 64, "mt_inject_final layout");
_Static_assert(sizeof(struct mt_brk_state) == 16, "mt_brk_state layout");
_Static_assert(sizeof(struct mt_hold) == 32, "mt_hold layout");
_Static_assert(sizeof(struct mt_phase) == 24, "mt_phase layout");
_Static_assert(sizeof(struct mt_py_proc) == 40, "mt_py_proc layout");
_Static_assert(sizeof(struct mt_py_frame) == 24, "mt_py_frame layout");
_Static_assert(sizeof(struct mt_event_py) == 32 + 24 * MT_PY_MAX_FRAMES, "mt_event_py layout");
_Static_assert(sizeof(struct mt_go_proc) == 16, "mt_go_proc layout");
_Static_assert(sizeof(struct mt_named_frame) == 8, "mt_named_frame layout");
_Static_assert(sizeof(struct mt_event_named) == 64, "mt_event_named layout");
#endif

#endif /* MEMTOP_ABI_H */

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * v8_abi.h - libmemtop-v8.so, the agent memtop maps into a Node.js process
 * (docs/node.md): its control block, the functions of the process it is
 * told about, and the snapshot of V8's sampling heap profile it writes.
 *
 * Like libmemtop-inject.so, the agent is mapped by memtop itself from a
 * sealed memfd (no loader, no relocations, no imports): it learns every
 * address it calls from the control block, an exported object named
 * MT_V8_CTL_SYMBOL. memtop starts it once, on the process's JavaScript
 * thread, at a moment that thread waits in its event loop (epoll_wait),
 * by running MT_V8_START_SYMBOL there; from then on the agent runs only
 * from a libuv timer on that thread. memtop reads the snapshot through
 * /proc/PID/mem under a sequence lock (seq odd while it is written).
 *
 * Everything here is plain bytes: fixed-size fields, explicit padding.
 */
#ifndef MEMTOP_V8_ABI_H
#define MEMTOP_V8_ABI_H

#include <linux/types.h>

#define MT_V8_MEMFD_NAME "memtop-v8"
#define MT_V8_CTL_SYMBOL "mt_v8_ctl"
#define MT_V8_START_SYMBOL "mt_v8_start"
#define MT_V8_BUF_SYMBOL "mt_v8_buf"
#define MT_V8_BUF_SIZE (4u << 20)
#define MT_V8_MAGIC 0x38567074706f746dULL /* "mtoptpV8" */
#define MT_V8_VERSION 1

/* Bounds the agent keeps: a name or file is cut at MT_V8_TEXT_MAX bytes,
 * the profile's call tree is walked at most MT_V8_MAX_DEPTH deep. */
#define MT_V8_TEXT_MAX 200
#define MT_V8_MAX_DEPTH 64
/* Frames V8 records per sample (StartSamplingHeapProfiler's depth). */
#define MT_V8_STACK_DEPTH 24
/* How often the agent's timer runs on the JavaScript thread. */
#define MT_V8_TICK_MS 100

/* The functions the agent calls, by their exported (mangled) names; memtop
 * finds each in the process's link map. V8's C++ members take the object
 * as their first argument (the Itanium C++ ABI). */
enum mt_v8_fn {
	MT_V8_GET_VERSION = 0,   /* const char *v8::V8::GetVersion() */
	MT_V8_TRY_GET_CURRENT,   /* v8::Isolate *v8::Isolate::TryGetCurrent() */
	MT_V8_GET_HEAP_PROFILER, /* v8::HeapProfiler *v8::Isolate::GetHeapProfiler() */
	MT_V8_START_SAMPLING,    /* bool HeapProfiler::StartSamplingHeapProfiler(u64, int, flags) */
	MT_V8_STOP_SAMPLING,     /* void HeapProfiler::StopSamplingHeapProfiler() */
	MT_V8_GET_PROFILE,       /* AllocationProfile *HeapProfiler::GetAllocationProfile() */
	MT_V8_SCOPE_OPEN,        /* v8::HandleScope::HandleScope(v8::Isolate *) */
	MT_V8_SCOPE_CLOSE,       /* v8::HandleScope::~HandleScope() */
	MT_V8_WRITE_UTF8,        /* int v8::String::WriteUtf8(Isolate *, char *, int, int *, int) */
	MT_UV_DEFAULT_LOOP,      /* uv_loop_t *uv_default_loop(void) */
	MT_UV_TIMER_INIT,        /* int uv_timer_init(uv_loop_t *, uv_timer_t *) */
	MT_UV_TIMER_START,       /* int uv_timer_start(uv_timer_t *, cb, u64, u64) */
	MT_UV_TIMER_STOP,        /* int uv_timer_stop(uv_timer_t *) */
	MT_UV_UNREF,             /* void uv_unref(uv_handle_t *) */
	MT_UV_CLOSE,             /* void uv_close(uv_handle_t *, uv_close_cb) */
	MT_V8_FN_COUNT,
};

#define MT_V8_FN_NAMES                                                                             \
	{                                                                                          \
		"_ZN2v82V810GetVersionEv", "_ZN2v87Isolate13TryGetCurrentEv",                      \
			"_ZN2v87Isolate15GetHeapProfilerEv",                                       \
			"_ZN2v812HeapProfiler25StartSamplingHeapProfilerEmiNS0_13SamplingFlagsE",  \
			"_ZN2v812HeapProfiler24StopSamplingHeapProfilerEv",                        \
			"_ZN2v812HeapProfiler20GetAllocationProfileEv",                            \
			"_ZN2v811HandleScopeC1EPNS_7IsolateE", "_ZN2v811HandleScopeD1Ev",          \
			"_ZNK2v86String9WriteUtf8EPNS_7IsolateEPciPii", "uv_default_loop",         \
			"uv_timer_init", "uv_timer_start", "uv_timer_stop", "uv_unref", "uv_close" \
	}

/* mt_v8_ctl.state */
enum mt_v8_state {
	MT_V8_IDLE = 0,    /* mapped, never started */
	MT_V8_ON = 1,      /* V8's sampling heap profiler runs; the timer collects */
	MT_V8_STOPPED = 2, /* stopped (memtop asked, or its lease ran out) */
	MT_V8_REFUSED = 3, /* the start refused: why[] says why; nothing was changed */
};

struct mt_v8_ctl {
	__u64 magic;   /* MT_V8_MAGIC */
	__u32 version; /* MT_V8_VERSION */
	__u32 state;   /* enum mt_v8_state, written by the agent */
	/* written by memtop */
	__u32 want;       /* 1: keep sampling; 0: stop at the next timer run */
	__u32 memtop_pid; /* the memtop that holds the lease */
	__u64 interval;   /* mean bytes between samples (--rate) */
	__u64 lease_ns;   /* CLOCK_MONOTONIC: past it, the agent stops by itself */
	__u64 request;    /* bumped by memtop: write a fresh snapshot */
	__u64 fn[MT_V8_FN_COUNT];
	char want_version[16]; /* the V8 version prefixes memtop knows the layouts of,
				* separated by '|' ("11.3.|10.2.") */
	/* written by the agent */
	__u64 seq;      /* the snapshot's sequence lock: odd while it is written */
	__u64 served;   /* the request the snapshot answers */
	__u64 snap_len; /* bytes of mt_v8_buf the snapshot uses */
	__u64 isolate;  /* the isolate it samples */
	__u64 collections;
	__u64 collect_ns;     /* time spent writing snapshots, in all */
	__u64 collect_ns_max; /* the longest */
	__u32 generation;     /* starts so far (a restart uses the other timer) */
	__u32 _pad;
	char v8_version[32]; /* V8's version, as the agent read it */
	char why[64];        /* MT_V8_REFUSED: the reason */
};

/* The snapshot in mt_v8_buf: a header, nnodes nodes (the profile's call
 * tree, parents before children, root first with parent 0), nsamples live
 * samples, then text_len bytes of text the nodes point into. */
enum mt_v8_snap_flags {
	MT_V8_SNAP_CUT = 1 << 0, /* the buffer filled: nodes or samples left out */
};

struct mt_v8_snap {
	__u32 nnodes;
	__u32 nsamples;
	__u32 text_len;
	__u32 flags; /* enum mt_v8_snap_flags */
	__u64 interval;
	__u64 ts_ns; /* CLOCK_MONOTONIC when it was taken */
};

struct mt_v8_node {
	__u32 id;     /* V8's node_id */
	__u32 parent; /* its parent's id; 0 for the root */
	__u32 line;   /* 1-based line where the function starts; 0: unknown */
	__u32 name_off;
	__u32 file_off;
	__u16 name_len;
	__u16 file_len;
};

struct mt_v8_sample {
	__u64 sample_id; /* unique while the object lives */
	__u64 size;      /* the object's bytes */
	__u32 node_id;
	__u32 count; /* V8's scaled count (objects this sample stands for) */
};

_Static_assert(sizeof(struct mt_v8_node) == 24, "mt_v8_node layout");
_Static_assert(sizeof(struct mt_v8_sample) == 24, "mt_v8_sample layout");
_Static_assert(sizeof(struct mt_v8_snap) == 32, "mt_v8_snap layout");

#endif /* MEMTOP_V8_ABI_H */

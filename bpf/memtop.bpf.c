// SPDX-License-Identifier: GPL-2.0-only
/*
 * memtop.bpf.c - the kernel side of memtop: uprobes on the allocator entry
 * points of the watched processes.
 *
 * Every probed call is counted exactly in per-process counters. Allocations
 * are sampled in the kernel, pprof-style: each thread keeps a countdown of
 * bytes drawn from an exponential distribution of mean sample_rate (or the
 * smaller mean of the current budget phase, struct mt_phase); the
 * allocation that takes it to zero or below is sampled and a fresh
 * countdown is drawn. Only sampled calls need their return value, so:
 *
 *  - session mode (kernel >= 6.13): one uprobe_multi session link per
 *    process; the entry returns 1 for an unsampled call and the kernel
 *    installs no return hook for it;
 *  - uretprobe mode: an entry uprobe plus a uretprobe on every call.
 *
 * At the return of a sampled call the caller's registers, a frame-pointer
 * walk and a copy of the top of the user stack go to user space through
 * the ring buffer, and the (pid, address) enters the live map. A free()
 * of an address in the live map removes it and reports the free. Nothing
 * here attaches: user space attaches per PID, never system-wide, and the
 * counters map (an entry per watched process) is a second filter.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <bpf/usdt.bpf.h>

#include "memtop/abi.h"

char LICENSE[] SEC("license") = "GPL";

/* Set by user space before load. */
const volatile __u64 sample_rate = 512 * 1024; /* mean bytes between samples; <= 1: all */
const volatile __u32 stack_copy = 8192;        /* bytes of user stack copied per sample */
/* Chunks reserved per sample record: enough for stack_copy from any skew.
 * A constant to the verifier (frozen rodata), so records are only as large
 * as the configured copy. */
const volatile __u32 stack_chunks = 8192 / MT_STACK_CHUNK + 1;
const volatile __u32 exp_table[MT_EXP_TABLE_SIZE]; /* -ln(u) * MT_EXP_SCALE */

/* Written by user space while running (abi.h): the sampling phase of the
 * allocation probes under the overhead budget. */
struct mt_phase phase = { .duty_ppm = 1000000, .allocs_on = 1 };

/* uprobe session kfunc (kernel >= 6.13); weak so older kernels still load
 * the uretprobe-mode programs. */
extern bool bpf_session_is_return(void) __ksym __weak;

/* The watched processes: user space creates a process's entry when it
 * starts watching it, so a lookup is both the filter and the counters. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32); /* tgid */
	__type(value, struct mt_proc_counters);
} counters SEC(".maps");

/* Bytes until the thread's next sample, drawn in phase epoch `epoch`;
 * left == 0 until the first draw. */
struct countdown {
	__s64 left;
	__u32 epoch;
	__u32 _pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct countdown);
} countdown SEC(".maps");

/* The last MT_PF_FREE_FORWARDS free of a thread: the free it forwards to
 * has the same pointer and stack pointer, with no allocation in between.
 * (Not the return address: another process's session link on the same
 * library makes the kernel hijack it for a return probe at the first hit.) */
struct last_free {
	__u64 ptr;
	__u64 sp;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct last_free);
} last_free SEC(".maps");

/* A sampled call between its entry and its return, with the phase it was
 * drawn in (the return may come after the phase changed). */
struct pending {
	__u64 size;
	__u64 memptr; /* posix_memalign's out pointer */
	__u64 rate;
	__u32 duty_ppm;
	__u32 fn;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32); /* tid */
	__type(value, struct pending);
} pending SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536); /* resized by user space (--live-max) */
	__type(key, struct mt_live_key);
	__type(value, __u64); /* size */
} live SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, MT_DROP_COUNT);
	__type(key, __u32);
	__type(value, __u64);
} drops SEC(".maps");

/* Processes being handed over from their allocator's uprobes to memtop's
 * injected sampler (docs/inject.md, "The handover"). A probed call made
 * from the sampler's text is one the sampler counts and samples itself
 * (it reaches the allocator by a real call only then), so the uprobes
 * neither count nor sample it, and only follow the frees of the blocks
 * they sampled; any other call is theirs, a call that went through the
 * sampler before it counted included, however late it arrives.
 * handovers: how many entries, so that every other hit costs one load. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 256);
	__type(key, __u32); /* tgid */
	__type(value, struct mt_text_range);
} handover SEC(".maps");

__u32 handovers;

/* The injected samplers' last counts, per process (abi.h, struct
 * mt_inject_final; mt_process_exit). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32); /* tgid */
	__type(value, struct mt_inject_final);
} inject_final SEC(".maps");

/* Where the allocator frees at a thread's exit, per process whose free
 * probe carries MT_PF_FREE_EXIT_RANGE: glibc's tcache_thread_shutdown
 * frees the blocks the exiting thread's cache still holds, which the
 * program freed already (counted then), and the cache itself, which no
 * probed call allocated. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32); /* tgid */
	__type(value, struct mt_text_range);
} exit_frees SEC(".maps");

/* --cgroup: the cgroup v2 directory whose new processes are reported. */
struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} watch_cgroup SEC(".maps");

/* -- CMD: the command and its descendants, followed as they fork (the
 * kernel side adds each child, so a grandchild forked before user space
 * attached to its parent is still seen). LRU: entries of dead processes
 * age out. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u8);
} family SEC(".maps");

/* Newcomers held at their start (abi.h, struct mt_hold; docs/cgroup.md,
 * "Held at its start"), so that their uprobes are on before their first
 * allocation. A program exec'd in the watched cgroup or family, without a
 * controlling terminal, is in fresh_exec until its first
 * mprotect(PROT_READ): the loader then has every object it starts with
 * mapped (it relocates only once all are loaded, and write-protects an
 * object's RELRO as it relocates it) and no allocator has run yet. A child
 * forked by a process on uprobes is held before its first instruction
 * (mt_fork). Either is stopped and put in held; user space lets it go once
 * its probes are on, or its guard does. hold_newcomers: what is held, set
 * by user space while its guard runs (src/probe/hold.h). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32); /* tgid */
	__type(value, __u8);
} fresh_exec SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32); /* tgid */
	__type(value, struct mt_hold);
} held SEC(".maps");

__u32 hold_newcomers; /* enum mt_hold_what */
/* At most MT_HOLDS_PER_S holds a second (abi.h): a second's window, the
 * holds in it, and the newcomers not held for it (read by user space).
 * Updated without a lock: two CPUs at a window's edge may hold one more. */
__u64 hold_window_ns;
__u32 holds_in_window;
__u64 holds_over_budget;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 32 << 20);
} events SEC(".maps");

/* Records never wake the reader (but a held newcomer's, which waits for
 * it: mt_loader_done): user space drains the ring every 50 ms
 * (DRAIN_NS in src/app.c), and 32 MiB holds about 4,000 records of an 8 KiB
 * stack copy, so a wakeup buys nothing but cost. Asking the ring how full it
 * is before each submit (bpf_ringbuf_query) cost 180 ns a record here: the
 * session program went from 2.44 to 2.62 us a call, medians of four
 * alternating runs of tests/bench/sample_storm with every call sampled. */
static __always_inline __u64 submit_flags(void)
{
	return BPF_RB_NO_WAKEUP;
}

static __always_inline void count_drop(__u32 what)
{
	__u64 *v = bpf_map_lookup_elem(&drops, &what);

	if (v)
		__sync_fetch_and_add(v, 1);
}

/* A ring-buffer record of size bytes, or NULL (counted as a drop). */
static __always_inline void *reserve(__u64 size)
{
	void *rec = bpf_ringbuf_reserve(&events, size, 0);

	if (!rec)
		count_drop(MT_DROP_RINGBUF);
	return rec;
}

/* The counters of a watched process with this probe run counted, or
 * NULL: the process is not watched. */
#include "python.bpf.h"

static __always_inline struct mt_proc_counters *count_hit(__u32 pid)
{
	struct mt_proc_counters *c = bpf_map_lookup_elem(&counters, &pid);

	if (c)
		__sync_fetch_and_add(&c->probe_hits, 1);
	return c;
}

/* The mean bytes between samples in the current phase. */
static __always_inline __u64 phase_rate(void)
{
	__u64 r = phase.rate;

	return r ? r : sample_rate;
}

/* Bytes to the next sample: an exponential draw of mean rate. */
static __always_inline __s64 draw_interval(__u64 rate)
{
	__u32 i = bpf_get_prandom_u32() & (MT_EXP_TABLE_SIZE - 1);

	return (__s64)((rate * exp_table[i]) / MT_EXP_SCALE) + 1;
}

/* Advance this thread's countdown by size at rate; true when the call is
 * sampled. A countdown drawn in another phase is drawn again first. */
static __always_inline bool take_sample(__u64 size, __u64 rate, __u32 epoch)
{
	struct countdown *cd;

	if (rate <= 1)
		return true;
	cd = bpf_task_storage_get(&countdown, bpf_get_current_task_btf(), 0,
				  BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!cd)
		return false;
	if (!cd->left || cd->epoch != epoch) {
		cd->left = draw_interval(rate);
		cd->epoch = epoch;
	}
	cd->left -= (__s64)size;
	if (cd->left > 0)
		return false;
	cd->left = draw_interval(rate);
	return true;
}

/* What a realloc of size bytes takes off the countdown while the phase
 * samples at rate (below the load-time sample_rate: the budget has the
 * allocation probes on for a share of the time only). realloc stays probed
 * in every phase, so it is sampled at sample_rate, as at full duty: its
 * bytes count rate / sample_rate each against a countdown drawn at rate
 * (the draw is memoryless, so the two kinds of call share it), and its
 * sample weighs 1/p without 1/duty. A block that realloc after realloc
 * moves (a growing array) is then not worth 1/duty times its size in one
 * sample and nothing in the next. */
static __always_inline __u64 realloc_counted(__u64 size, __u64 rate)
{
	return size / sample_rate * rate + size % sample_rate * rate / sample_rate;
}

/* A free (or the old block of a realloc) of ptr: report it if sampled. */
static __always_inline void track_free(__u32 pid, __u32 tid, __u64 ptr)
{
	struct mt_live_key key = { .pid = pid, .addr = ptr };
	struct mt_event_free *ev;

	if (bpf_map_delete_elem(&live, &key))
		return; /* not a live sampled allocation */
	ev = reserve(sizeof(*ev));
	if (!ev)
		return;
	ev->kind = MT_EV_FREE;
	ev->pid = pid;
	ev->tid = tid;
	ev->_pad = 0;
	ev->ts_ns = bpf_ktime_get_ns();
	ev->addr = ptr;
	bpf_ringbuf_submit(ev, submit_flags());
}

/* MT_PF_FREE_FORWARDS: this free may forward ptr to another probed free
 * with a tail call; note what that call will look like. */
static __always_inline void note_forward(struct pt_regs *ctx, __u64 ptr)
{
	struct last_free *l = bpf_task_storage_get(&last_free, bpf_get_current_task_btf(), 0,
						   BPF_LOCAL_STORAGE_GET_F_CREATE);

	if (!l)
		return;
	l->ptr = ptr;
	l->sp = ctx->sp;
}

/* MT_PF_FREE_DEDUPE: an allocation ends the window in which a free can be
 * the forwarded half of the last noted one (the block may come back at the
 * same address). */
static __always_inline void forget_forward(void)
{
	struct last_free *l = bpf_task_storage_get(&last_free, bpf_get_current_task_btf(), 0, 0);

	if (l)
		l->ptr = 0;
}

/* MT_PF_FREE_DEDUPE: true when this free is the forwarded half of the one
 * the thread's last note_forward() saw (same pointer and stack pointer, no
 * allocation since). */
static __always_inline bool forwarded_free(struct pt_regs *ctx, __u64 ptr)
{
	struct last_free *l = bpf_task_storage_get(&last_free, bpf_get_current_task_btf(), 0, 0);

	if (!l || l->ptr != ptr || l->sp != ctx->sp)
		return false;
	l->ptr = 0;
	return true;
}

/* Was this call made from pid's code in ranges? The cookie says where
 * the return address is on the stack at the probed instruction (on top
 * at the entry, a word in after a push); where that is not known, or the
 * process has no range there, false. */
static __always_inline bool called_from(struct pt_regs *ctx, void *ranges, __u32 pid, __u64 cookie)
{
	__u32 ra = MT_COOKIE_RA_AT(cookie);
	struct mt_text_range *r;
	__u64 ret;

	r = bpf_map_lookup_elem(ranges, &pid);
	if (!r || !ra || bpf_probe_read_user(&ret, sizeof(ret), (void *)(ctx->sp + (ra - 1) * 8)))
		return false;
	return ret >= r->lo && ret < r->hi;
}

/* Is this call the sampler's to count, pid being handed over to it? A
 * call whose return address is not known is the uprobes'. */
static __always_inline bool sampler_counts(struct pt_regs *ctx, __u32 pid, __u64 cookie)
{
	return handovers && called_from(ctx, &handover, pid, cookie);
}

/*
 * Entry of a probed function (fn and flags from the attach cookie). Returns 0 when
 * the return must be seen (a sampled allocation), 1 otherwise: exactly the
 * session contract.
 */
static __always_inline int on_entry(struct pt_regs *ctx, __u64 cookie)
{
	__u32 fn = MT_COOKIE_FN(cookie), flags = MT_COOKIE_FLAGS(cookie);
	__u64 id = bpf_get_current_pid_tgid();
	__u32 pid = id >> 32, tid = (__u32)id;
	struct mt_proc_counters *c;
	struct pending p = {};
	__u64 ptr, size, counted;

	c = count_hit(pid);
	if (!c)
		return 1;
	if (sampler_counts(ctx, pid, cookie)) {
		/* counted and sampled by the sampler; a block sampled here
		 * before is still followed to its free */
		ptr = PT_REGS_PARM1(ctx);
		if (ptr && (fn == MT_FN_FREE || fn == MT_FN_REALLOC || fn == MT_FN_REALLOCARRAY))
			track_free(pid, tid, ptr);
		return 1;
	}

	switch (fn) {
	case MT_FN_FREE:
		ptr = PT_REGS_PARM1(ctx);
		if (!ptr)
			return 1;
		if ((flags & MT_PF_FREE_EXIT_RANGE) && called_from(ctx, &exit_frees, pid, cookie))
			return 1; /* freed once already, or never allocated by a probed call */
		if (flags & MT_PF_FREE_FORWARDS)
			note_forward(ctx, ptr);
		else if ((flags & MT_PF_FREE_DEDUPE) && forwarded_free(ctx, ptr))
			return 1;
		__sync_fetch_and_add(&c->free_calls, 1);
		track_free(pid, tid, ptr);
		return 1;
	case MT_FN_MALLOC:
	case MT_FN_VALLOC:
	case MT_FN_PVALLOC:
		size = PT_REGS_PARM1(ctx);
		break;
	case MT_FN_CALLOC:
		size = PT_REGS_PARM1(ctx) * PT_REGS_PARM2(ctx);
		break;
	case MT_FN_REALLOC:
	case MT_FN_REALLOCARRAY:
		ptr = PT_REGS_PARM1(ctx);
		size = PT_REGS_PARM2(ctx);
		if (fn == MT_FN_REALLOCARRAY)
			size *= PT_REGS_PARM3(ctx);
		/* glibc: realloc(NULL, n) is malloc(n) and realloc(p, 0) is
		 * free(p), both through the probed entry points: they count
		 * there, not here. Other allocators do both inside realloc. */
		if (!(flags & MT_PF_REALLOC_SELF)) {
			if (!ptr || !size)
				return 1;
		} else if (ptr && !size) {
			__sync_fetch_and_add(&c->free_calls, 1);
			track_free(pid, tid, ptr);
			return 1;
		}
		if (ptr)
			track_free(pid, tid, ptr);
		/* realloc stays probed for its free while the other
		 * allocation probes are off, so it samples in every phase
		 * (realloc_counted); reallocarray is switched off with the
		 * others */
		if (fn == MT_FN_REALLOCARRAY && !phase.allocs_on)
			return 1;
		break;
	case MT_FN_POSIX_MEMALIGN:
		p.memptr = PT_REGS_PARM1(ctx);
		size = PT_REGS_PARM3(ctx);
		break;
	case MT_FN_ALIGNED_ALLOC:
	case MT_FN_MEMALIGN:
		size = PT_REGS_PARM2(ctx);
		break;
	default:
		return 1;
	}

	if (flags & MT_PF_FREE_DEDUPE)
		forget_forward();
	__sync_fetch_and_add(&c->alloc_calls, 1);
	__sync_fetch_and_add(&c->alloc_bytes, size);
	if (fn != MT_FN_REALLOC)
		__sync_fetch_and_add(&c->phased_calls, 1);
	if (phase.count_only)
		return 1;
	p.rate = phase_rate();
	p.duty_ppm = phase.duty_ppm;
	counted = size;
	if (fn == MT_FN_REALLOC && p.rate < sample_rate) {
		counted = realloc_counted(size, p.rate);
		p.rate = sample_rate;
		p.duty_ppm = 1000000;
	}
	if (!take_sample(counted, phase_rate(), phase.epoch))
		return 1;
	__sync_fetch_and_add(&c->samples, 1);
	p.size = size;
	p.fn = fn;
	if (bpf_map_update_elem(&pending, &tid, &p, BPF_ANY)) {
		count_drop(MT_DROP_PENDING_FULL);
		return 1;
	}
	return 0;
}

/* Copy the user stack from sp up: at least stack_copy bytes, in whole
 * MT_STACK_CHUNK chunks aligned to the chunk size, so that a fault at the
 * end of the stack mapping (always page aligned) loses nothing below it.
 * stack[] starts at sp rounded down; stack_skew says by how much. Returns
 * the bytes copied, counted from that rounded-down start. */
static __always_inline __u32 copy_stack(struct mt_event_alloc *ev, __u64 sp)
{
	__u64 base = sp & ~(__u64)(MT_STACK_CHUNK - 1);
	__u32 want = stack_copy + (__u32)(sp - base);
	int i;

	ev->stack_skew = sp - base;
	if (!stack_copy)
		return 0;
	for (i = 0; i < MT_STACK_COPY_MAX / MT_STACK_CHUNK; i++) {
		if (i >= stack_chunks || (__u32)i * MT_STACK_CHUNK >= want)
			break;
		if (bpf_probe_read_user(&ev->stack[i * MT_STACK_CHUNK], MT_STACK_CHUNK,
					(void *)(base + i * MT_STACK_CHUNK))) {
			ev->flags |= MT_EVF_STACK_FAULT;
			break;
		}
	}
	return i * MT_STACK_CHUNK;
}

/* Report a sampled allocation at addr: live map, the user registers regs
 * (ctx's own at a uprobe), frame-pointer walk and stack copy; dev_info and
 * dev say which device a device allocation is on (0 for the host's). */
static __always_inline void emit_sample_dev(void *ctx, struct pt_regs *regs, __u32 pid, __u32 tid,
					    __u32 fn, __u64 addr, __u64 size, __u64 weight_bytes,
					    __u64 rate, __u32 duty_ppm, __u32 dev_info, __u64 dev)
{
	struct mt_live_key key = { .pid = pid, .addr = addr };
	struct mt_event_alloc *ev;
	__u64 ts = bpf_ktime_get_ns();
	long n;

	emit_python_stack(pid, tid, ts);
	ev = reserve(MT_ALLOC_EVENT_HDR_SIZE + stack_chunks * MT_STACK_CHUNK);
	if (!ev)
		return;
	ev->kind = MT_EV_ALLOC;
	ev->pid = pid;
	ev->tid = tid;
	ev->fn = fn;
	ev->ts_ns = ts;
	ev->addr = addr;
	ev->size = size;
	ev->weight_bytes = weight_bytes;
	ev->rate = rate;
	ev->duty_ppm = duty_ppm;
	ev->dev_info = dev_info;
	ev->dev = dev;
	ev->flags = 0;
	if (bpf_map_update_elem(&live, &key, &size, BPF_ANY)) {
		ev->flags |= MT_EVF_UNTRACKED;
		count_drop(MT_DROP_LIVE_FULL);
	}

	ev->regs.ip = regs->ip;
	ev->regs.sp = regs->sp;
	ev->regs.bp = regs->bp;
	ev->regs.bx = regs->bx;
	ev->regs.r12 = regs->r12;
	ev->regs.r13 = regs->r13;
	ev->regs.r14 = regs->r14;
	ev->regs.r15 = regs->r15;
	ev->regs.ax = regs->ax;
	ev->regs.cx = regs->cx;
	ev->regs.dx = regs->dx;
	ev->regs.si = regs->si;
	ev->regs.di = regs->di;
	ev->regs.r8 = regs->r8;
	ev->regs.r9 = regs->r9;
	ev->regs.r10 = regs->r10;
	ev->regs.r11 = regs->r11;

	n = bpf_get_stack(ctx, ev->frames, sizeof(ev->frames), BPF_F_USER_STACK);
	ev->nr_frames = n > 0 ? (__u32)n / 8 : 0;
	if (n >= (long)sizeof(ev->frames))
		ev->flags |= MT_EVF_FP_FULL;
	ev->stack_len = copy_stack(ev, regs->sp);
	bpf_ringbuf_submit(ev, submit_flags());
}

static __always_inline void emit_sample_regs(void *ctx, struct pt_regs *regs, __u32 pid, __u32 tid,
					     __u32 fn, __u64 addr, __u64 size, __u64 weight_bytes,
					     __u64 rate, __u32 duty_ppm)
{
	emit_sample_dev(ctx, regs, pid, tid, fn, addr, size, weight_bytes, rate, duty_ppm, 0, 0);
}

/* A sample at a uprobe: the registers are the context's. */
#define emit_sample(ctx, ...) emit_sample_regs(ctx, ctx, __VA_ARGS__)

/* Return of a probed function: emit the sample if the entry took one. */
static __always_inline void on_return(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 pid = id >> 32, tid = (__u32)id;
	struct mt_proc_counters *c = count_hit(pid);
	struct pending *pp, p;
	__u64 addr, t0;

	if (!c)
		return;
	pp = bpf_map_lookup_elem(&pending, &tid);
	if (!pp)
		return; /* unsampled (a uretprobe sees every return): nothing timed */
	t0 = bpf_ktime_get_ns();
	p = *pp;
	bpf_map_delete_elem(&pending, &tid);

	if (p.fn == MT_FN_POSIX_MEMALIGN) {
		if (PT_REGS_RC(ctx) != 0 || bpf_probe_read_user(&addr, 8, (void *)p.memptr))
			addr = 0;
	} else {
		addr = PT_REGS_RC(ctx);
	}
	if (addr)
		emit_sample(ctx, pid, tid, p.fn, addr, p.size, 0, p.rate, p.duty_ppm);
	/* what a sample costs beyond its hits, which the cost measure
	 * takes out of the target's CPU time (slowdown.h) */
	__sync_fetch_and_add(&c->sample_ns, bpf_ktime_get_ns() - t0);
}

/* Session mode: one program for entry and return. */
SEC("uprobe")
int mt_session(struct pt_regs *ctx)
{
	if (bpf_session_is_return()) {
		on_return(ctx);
		return 0;
	}
	return on_entry(ctx, bpf_get_attach_cookie(ctx));
}

/* uretprobe mode: entry and return are separate programs. */
SEC("uprobe")
int mt_entry(struct pt_regs *ctx)
{
	on_entry(ctx, bpf_get_attach_cookie(ctx));
	return 0;
}

SEC("uretprobe")
int mt_return(struct pt_regs *ctx)
{
	on_return(ctx);
	return 0;
}

/*
 * The in-process sampler's contract (docs/sampler.md): the process fires
 * otel_memory:alloc(ptr, size, weight) for sampled allocations only and
 * otel_memory:free(ptr) for frees of sampled pointers only. No allocator
 * call traps unless it was sampled.
 */
SEC("usdt")
int BPF_USDT(mt_usdt_alloc, void *ptr, __u64 size, __u64 weight)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 pid = id >> 32;
	struct mt_proc_counters *c;
	__u64 t0;

	c = count_hit(pid);
	if (!c)
		return 0;
	t0 = bpf_ktime_get_ns();
	__sync_fetch_and_add(&c->samples, 1);
	if (ptr)
		emit_sample(ctx, pid, (__u32)id, MT_FN_USDT, (__u64)ptr, size,
			    weight ? weight : size, 0, 1000000);
	/* the sample's work beyond its hit: the cost measure counts it */
	__sync_fetch_and_add(&c->sample_ns, bpf_ktime_get_ns() - t0);
	return 0;
}

SEC("usdt")
int BPF_USDT(mt_usdt_free, void *ptr)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 pid = id >> 32;
	if (!count_hit(pid))
		return 0;
	if (ptr)
		track_free(pid, (__u32)id, (__u64)ptr);
	return 0;
}

/* The device-memory source: Vulkan, OpenCL and CUDA allocations, each
 * one recorded (docs/device-memory.md). */
#include "device.bpf.h"

/* The mmap source's brk bookkeeping (see mt_sys_exit below). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);                 /* tgid */
	__type(value, struct mt_brk_state); /* from user space at attach, or the first brk */
} brk_state SEC(".maps");

/* The brk stack: the start of each recorded growth, by (tgid, depth). */
struct brk_key {
	__u32 pid;
	__u32 idx;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, struct brk_key);
	__type(value, __u64);
} brk_stack SEC(".maps");

/* The Go runtime's sampled path: runtime.mProf_Malloc and freeSpecial
 * (docs/go.md). */
#include "go.bpf.h"

/* --cgroup: report processes that appear in the watched cgroup; -- CMD:
 * those that descend from the command (family). User space attaches to
 * them, per PID, as to every target. */
static __always_inline void submit_proc(__u32 pid, __u32 ppid, __u32 what, __u64 ts_ns, __u64 flags)
{
	struct mt_event_proc *ev = reserve(sizeof(*ev));

	if (!ev)
		return;
	ev->kind = MT_EV_PROC;
	ev->pid = pid;
	ev->ppid = ppid;
	ev->what = what;
	ev->ts_ns = ts_ns;
	bpf_ringbuf_submit(ev, flags);
}

#define MT_SIGSTOP 19
#define MT_SIGNAL_STOP_STOPPED 0x1 /* signal_struct.flags: a job-control stop in effect */

extern int bpf_send_signal_task(struct task_struct *task, int sig, enum pid_type type,
				__u64 value) __ksym __weak;
extern struct task_struct *bpf_task_from_pid(s32 pid) __ksym __weak;
extern void bpf_task_release(struct task_struct *p) __ksym __weak;

/* Stop task (the current one when self, else a child not yet run), put it
 * in held and report it at once (the ring wakes user space for it). The
 * stop is taken on its way to user space. A stop the ring cannot report is
 * let go by the guard at its deadline. */
static __always_inline void hold(struct task_struct *task, __u32 pid, bool self)
{
	struct task_struct *parent = BPF_CORE_READ(task, real_parent);
	struct mt_hold h = {};
	int e = -1;

	h.held_ns = bpf_ktime_get_ns();
	if (h.held_ns - hold_window_ns >= 1000000000ULL) {
		hold_window_ns = h.held_ns;
		holds_in_window = 0;
	}
	if (holds_in_window >= MT_HOLDS_PER_S) {
		__sync_fetch_and_add(&holds_over_budget, 1);
		return;
	}
	__sync_fetch_and_add(&holds_in_window, 1);
	h.start_ns = BPF_CORE_READ(task, group_leader, start_boottime);
	h.parent = BPF_CORE_READ(parent, tgid);
	h.parent_start_ns = BPF_CORE_READ(parent, group_leader, start_boottime);
	h.parent_stopped = BPF_CORE_READ(parent, signal, flags) & MT_SIGNAL_STOP_STOPPED;
	if (bpf_map_update_elem(&held, &pid, &h, BPF_NOEXIST))
		return;
	if (self) {
		e = bpf_send_signal(MT_SIGSTOP);
	} else if (bpf_send_signal_task && bpf_task_from_pid) { /* kernel 6.13 */
		struct task_struct *t = bpf_task_from_pid(pid);

		if (t) {
			e = bpf_send_signal_task(t, MT_SIGSTOP, PIDTYPE_TGID, 0);
			bpf_task_release(t);
		}
	}
	if (e) {
		bpf_map_delete_elem(&held, &pid);
		return;
	}
	submit_proc(pid, 0, MT_PROC_HELD, h.held_ns, BPF_RB_FORCE_WAKEUP);
}

/* Returns whether pid is followed (reported, unless the ring was full). */
static __always_inline bool emit_proc(__u32 pid, __u32 ppid, __u32 what)
{
	__u8 member = MT_FAMILY_MEMBER, *fam;

	if (ppid && bpf_map_lookup_elem(&family, &ppid))
		bpf_map_update_elem(&family, &pid, &member, BPF_ANY);
	fam = bpf_map_lookup_elem(&family, &pid);
	if (fam && *fam == MT_FAMILY_SEED) {
		*fam = MT_FAMILY_MEMBER; /* the command's own first exec */
		if (what == MT_PROC_EXEC)
			return false;
	}
	if (!fam && bpf_current_task_under_cgroup(&watch_cgroup, 0) != 1)
		return false;
	submit_proc(pid, ppid, what, bpf_ktime_get_ns(), submit_flags());
	return true;
}

/* The command of -- CMD while memtop holds it before its exec: still
 * memtop's own forked image, whose mappings (its setenv's, say) are not
 * the command's, and which the exec discards without an munmap: recorded,
 * they would stay in use with a stack of code no longer mapped. */
static __always_inline bool held_before_exec(__u32 pid)
{
	__u8 *fam = bpf_map_lookup_elem(&family, &pid);

	return fam && *fam == MT_FAMILY_SEED;
}

/* A child forked by a process on uprobes (watched, and not in-process:
 * one with memtop's sampler in, inject_final, hands its child a sampler
 * that counts from the fork) is held before its first instruction, so
 * that its uprobes are on before its first allocation: not a child that
 * shares its parent's memory (vfork, posix_spawn: it only execs), nor
 * one with a terminal. */
static __always_inline void hold_forked(struct task_struct *parent, struct task_struct *child)
{
	__u32 ppid = parent->tgid;

	if (!(hold_newcomers & MT_HOLD_FORK) || child->mm == parent->mm ||
	    BPF_CORE_READ(child, signal, tty))
		return;
	if (!bpf_map_lookup_elem(&counters, &ppid) || bpf_map_lookup_elem(&inject_final, &ppid))
		return;
	hold(child, child->tgid, false);
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(mt_fork, struct task_struct *parent, struct task_struct *child)
{
	if (child->pid != child->tgid)
		return 0; /* a new thread */
	if (emit_proc(child->tgid, parent->tgid, MT_PROC_FORK))
		hold_forked(parent, child);
	return 0;
}

/* The last thread of a process with memtop's sampler in it is exiting,
 * its memory not yet taken (abi.h, struct mt_inject_final): the
 * sampler's counts summed over its slots, the counts of its last moments
 * included, which no read of /proc/PID/mem can get once it is gone. */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(mt_process_exit, struct task_struct *p)
{
	__u32 tgid = p->tgid;
	struct mt_inject_final *f = bpf_map_lookup_elem(&inject_final, &tgid);
	struct mt_inject_final sum = {};
	__u64 v[4]; /* alloc_calls, alloc_bytes, free_calls, py_calls */
	int i;

	if (!f || f->done || BPF_CORE_READ(p, signal, live.counter) != 0)
		return 0; /* not watched in-process, or not its last thread */
	for (i = 0; i < MT_INJECT_FINAL_SLOTS; i++) {
		__u64 at = f->slots + i * MT_INJECT_FINAL_STRIDE + MT_INJECT_FINAL_COUNTS;

		if (bpf_probe_read_user(v, sizeof(v), (const void *)at))
			return 0; /* a page gone: its last read stands */
		sum.alloc_calls += v[0];
		sum.alloc_bytes += v[1];
		sum.free_calls += v[2];
		sum.py_calls += v[3];
		if (i == MT_INJECT_FINAL_PY_SLOT) {
			sum.py_allocs = v[0];
			sum.py_frees = v[2];
		}
	}
	sum.slots = f->slots;
	sum.done = 1; /* read once the process is gone */
	*f = sum;
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(mt_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	__u32 tgid = p->tgid;

	/* a new program, a new break: the mmap source relearns it; and no
	 * sampler of memtop's in it any more, whose slots to sum at its end */
	bpf_map_delete_elem(&brk_state, &tgid);
	bpf_map_delete_elem(&inject_final, &tgid);
	/* held at its loader's end (fresh_exec): not with a terminal, whose
	 * job-control shell would take the stop for its user's ^Z */
	if (emit_proc(tgid, 0, MT_PROC_EXEC) && (hold_newcomers & MT_HOLD_EXEC) &&
	    !BPF_CORE_READ(p, signal, tty)) {
		__u8 fresh = 1;

		bpf_map_update_elem(&fresh_exec, &tgid, &fresh, BPF_ANY);
	} else {
		bpf_map_delete_elem(&fresh_exec, &tgid);
	}
	return 0;
}

/*
 * The mmap source (docs/allocators.md): anonymous memory of the watched
 * processes, whoever gets it (a runtime's heap, a custom allocator),
 * recorded whole (the system calls are rare) with the stack that asked
 * for it, and given back:
 *  - mmap: an anonymous mapping is a record at its start; munmap of that
 *    start gives it back (a partial munmap of another address does not);
 *  - mremap: the record of the old start (if any) is given back, and the
 *    mapping at its new address becomes one record of the caller of
 *    mremap: all of it when the old one was recorded, else only what it
 *    grew by (a mapping from before memtop attached);
 *  - brk: each growth of the break is a record [old break, new break),
 *    pushed on the process's brk stack; a shrink gives back, from the
 *    top, every record that starts at or above the new break (a record
 *    cut in two by it stays whole).
 * One program at the raw sys_exit tracepoint (BTF-typed, no tracefs
 * needed): the syscall's saved registers are the user's, with its number
 * in orig_ax and its arguments still in place. Addresses carry
 * MT_ADDR_MMAP in the live map and the records, so a mapping never meets
 * a heap block.
 */
#define MT_NR_MMAP 9
#define MT_NR_MPROTECT 10
#define MT_NR_MUNMAP 11
#define MT_NR_BRK 12
#define MT_NR_MREMAP 25
#define MT_MAP_ANONYMOUS 0x20
/* Records a brk shrink gives back at most (the rest waits for the next). */
#define MT_BRK_POP_MAX 64

static __always_inline bool syscall_failed(long ret)
{
	return ret < 0 && ret > -4096;
}

/* brk returned the break `ret` (the old one when it failed). Returns the
 * size of the growth to record at *start, 0 for none. */
static __always_inline __u64 on_brk(__u32 pid, __u32 tid, __u64 ret, __u64 *start)
{
	struct mt_brk_state *st = bpf_map_lookup_elem(&brk_state, &pid);
	struct brk_key key = { .pid = pid };
	int i;

	if (!st) {
		/* the first brk seen after an exec (brk(0), the query): from
		 * now on growths are known */
		struct mt_brk_state fresh = { .top = ret };

		bpf_map_update_elem(&brk_state, &pid, &fresh, BPF_NOEXIST);
		return 0;
	}
	if (ret > st->top) {
		*start = st->top;
		key.idx = (__u32)st->depth;
		if (!bpf_map_update_elem(&brk_stack, &key, start, BPF_ANY))
			st->depth++;
		st->top = ret;
		return ret - *start;
	}
	for (i = 0; i < MT_BRK_POP_MAX && st->depth > 0; i++) {
		__u64 *rec;

		key.idx = (__u32)st->depth - 1;
		rec = bpf_map_lookup_elem(&brk_stack, &key);
		if (rec && *rec < ret)
			break;
		if (rec)
			track_free(pid, tid, *rec | MT_ADDR_MMAP);
		bpf_map_delete_elem(&brk_stack, &key);
		st->depth--;
	}
	st->top = ret;
	return 0;
}

/* mremap(old, old_len, new_len, ...) moved or resized a mapping to ret.
 * Returns the size to record at ret, 0 for none. */
static __always_inline __u64 on_mremap(struct pt_regs *regs, __u32 pid, __u32 tid)
{
	struct mt_live_key key = { .pid = pid, .addr = regs->di | MT_ADDR_MMAP };
	__u64 old_len = regs->si, new_len = regs->dx, had = 0, *size;

	size = bpf_map_lookup_elem(&live, &key);
	if (size) {
		had = *size;
		track_free(pid, tid, key.addr);
	}
	/* shrunk, or an unrecorded mapping that did not grow: nothing */
	return had + new_len > old_len ? had + new_len - old_len : 0;
}

#define MT_PROT_READ 1

/* A fresh program's first mprotect(PROT_READ) returned (mt_sys_exit): its
 * loader is relocating, every object it starts with mapped, no allocator
 * called yet: held there. */
static __always_inline void hold_at_loader_end(struct pt_regs *regs, long ret)
{
	__u32 pid = bpf_get_current_pid_tgid() >> 32;

	if (!bpf_map_lookup_elem(&fresh_exec, &pid))
		return;
	if (ret || regs->dx != MT_PROT_READ)
		return; /* a loader's PROT_NONE of a hole between segments */
	bpf_map_delete_elem(&fresh_exec, &pid);
	if (hold_newcomers & MT_HOLD_EXEC)
		hold(bpf_get_current_task_btf(), pid, true);
}

SEC("tp_btf/sys_exit")
int BPF_PROG(mt_sys_exit, struct pt_regs *regs, long ret)
{
	__u64 id, nr = regs->orig_ax, addr = (__u64)ret, len = 0;
	__u32 pid, tid;

	if (nr == MT_NR_MPROTECT) {
		hold_at_loader_end(regs, ret);
		return 0;
	}
	if (nr != MT_NR_MMAP && nr != MT_NR_MUNMAP && nr != MT_NR_BRK && nr != MT_NR_MREMAP)
		return 0;
	id = bpf_get_current_pid_tgid();
	pid = id >> 32;
	tid = (__u32)id;
	/* a Go process's heap is seen through its runtime (go.bpf.h): its
	 * arena mappings would only repeat it */
	if (!bpf_map_lookup_elem(&counters, &pid) || bpf_map_lookup_elem(&goprocs, &pid))
		return 0;
	if (held_before_exec(pid))
		return 0;
	if (nr == MT_NR_BRK) {
		len = on_brk(pid, tid, (__u64)ret, &addr);
	} else if (syscall_failed(ret)) {
		return 0;
	} else if (nr == MT_NR_MREMAP) {
		len = on_mremap(regs, pid, tid);
	} else if (nr == MT_NR_MUNMAP) {
		if (!ret)
			track_free(pid, tid, regs->di | MT_ADDR_MMAP);
		return 0;
	} else if (regs->r10 & MT_MAP_ANONYMOUS) {
		len = regs->si;
	}
	if (!len)
		return 0;
	emit_sample_regs(ctx, regs, pid, tid, MT_FN_MMAP, addr | MT_ADDR_MMAP, len, len, 0, 1000000);
	return 0;
}

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * go.bpf.h - the Go runtime's own sampled allocation path (docs/go.md).
 *
 * The Go runtime samples its heap itself (runtime.MemProfileRate bytes on
 * average between samples) and calls runtime.mProf_Malloc only for
 * sampled objects; a sampled object carries a "special" record, which the
 * GC's sweep frees through runtime.freeSpecial. User space puts an entry
 * uprobe (never a return probe: Go moves goroutine stacks) on each, on an
 * instruction the kernel emulates (one trap) in the stack-growth check of
 * the prologue, or just past it:
 *
 *  - runtime.mProf_Malloc(p, size), or (mp, p, size) from Go 1.23 (the
 *    attach cookie, enum mt_go_malloc_args, says which): an MT_EV_ALLOC
 *    record (fn MT_FN_GO) with the frame-pointer stack, which Go keeps on
 *    amd64, and the rate the runtime sampled at, read from the target's
 *    runtime.MemProfileRate;
 *  - runtime.freeSpecial(s, p, size): when s->kind is the profile kind of
 *    that Go version (the cookie), the free of p (MT_EV_FREE).
 *
 * A probe on the stack check's branch runs again when the stack had to
 * grow (the function restarts from its entry): a second hit of the same
 * probe by the same goroutine (R14 holds g) for the same object is that
 * restart, and is ignored. Arguments are in Go's register ABI (amd64, Go
 * >= 1.17): RAX, RBX, RCX. Nothing here traps an allocation that the
 * runtime did not sample.
 */
#ifndef MEMTOP_GO_BPF_H
#define MEMTOP_GO_BPF_H

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32); /* tgid */
	__type(value, struct mt_go_proc);
} goprocs SEC(".maps");

/* The runtime's MemProfileRate now, or the rate user space last gave. */
static __always_inline __u64 go_rate(__u32 pid)
{
	struct mt_go_proc *gp = bpf_map_lookup_elem(&goprocs, &pid);
	__s64 rate = 0;

	if (!gp)
		return 0;
	if (gp->rate_addr && !bpf_probe_read_user(&rate, sizeof(rate), (void *)gp->rate_addr) &&
	    rate > 0)
		return (__u64)rate;
	return gp->rate;
}

/* special.kind: after next (8 bytes) and offset (2), all versions known */
#define GO_SPECIAL_KIND_OFF 10

enum go_probe { GO_PROBE_MALLOC = 0, GO_PROBE_FREE = 1 };

/* The last object each probe saw on this CPU, and its goroutine. A
 * restart after the stack grew runs on the same CPU unless the goroutine
 * was preempted in between (then it is counted twice: rare). A per-CPU
 * slot, not a hash map: this runs at every sample. */
struct go_once {
	__u64 g;
	__u64 obj;
	__u64 ts_ns;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2); /* enum go_probe */
	__type(key, __u32);
	__type(value, struct go_once);
} goonce SEC(".maps");

/* A restart comes within microseconds (the stack is copied, the function
 * entered again); the same object seen again later is a new event (its
 * address reused by a later sampled object). */
#define GO_RESTART_NS 1000000

/* False when this probe just saw obj on this goroutine: the restart of
 * the function after its stack grew. */
static __always_inline bool go_first(__u32 probe, __u64 g, __u64 obj, __u64 now)
{
	struct go_once *last = bpf_map_lookup_elem(&goonce, &probe);

	if (!last)
		return true;
	if (last->g == g && last->obj == obj && now - last->ts_ns < GO_RESTART_NS)
		return false;
	last->g = g;
	last->obj = obj;
	last->ts_ns = now;
	return true;
}

/* The return addresses up the frame-pointer chain from fp, into frames[]
 * (Go keeps frame pointers on amd64: [fp] is the caller's fp, [fp + 8]
 * the return address). A walk by hand: bpf_get_stack measured 3.5 us a
 * call here against well under a microsecond for this. Returns the
 * count; *full when every slot was used. */
static __always_inline __u32 go_walk(__u64 fp, __u64 *frames, bool *full)
{
	__u32 n = 0;

	*full = false;
	for (int i = 0; i < MT_MAX_FRAMES; i++) {
		__u64 rec[2]; /* saved fp, return address */

		if (!fp || bpf_probe_read_user(rec, sizeof(rec), (void *)fp) || !rec[1])
			return n;
		frames[n & (MT_MAX_FRAMES - 1)] = rec[1];
		n++;
		/* frames of one stack sit at rising addresses: anything else
		 * ends the walk (the top of the goroutine's stack, or garbage) */
		if (rec[0] <= fp)
			return n;
		fp = rec[0];
	}
	*full = true;
	return n;
}

SEC("uprobe")
int mt_go_malloc(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid(), cookie = bpf_get_attach_cookie(ctx);
	__u32 pid = id >> 32;
	struct mt_proc_counters *c = count_hit(pid);
	struct mt_event_alloc *ev;
	/* all three read as they are (the verifier refuses a context
	 * access through a computed offset) */
	__u64 ax = *(volatile __u64 *)&ctx->ax, bx = *(volatile __u64 *)&ctx->bx,
	      cx = *(volatile __u64 *)&ctx->cx;
	__u64 addr = cookie == MT_GO_MALLOC_BX_CX ? bx : ax;
	__u64 size = cookie == MT_GO_MALLOC_BX_CX ? cx : bx;
	__u64 now = bpf_ktime_get_ns();
	bool full;

	if (!c || !go_first(GO_PROBE_MALLOC, ctx->r14, addr, now))
		return 0;
	__sync_fetch_and_add(&c->samples, 1);
	ev = reserve(MT_ALLOC_EVENT_HDR_SIZE);
	if (!ev)
		return 0;
	/* every field but frames[] past nr_frames (ignored by readers) */
	__builtin_memset(ev, 0, offsetof(struct mt_event_alloc, frames));
	ev->kind = MT_EV_ALLOC;
	ev->pid = pid;
	ev->tid = (__u32)id;
	ev->fn = MT_FN_GO;
	ev->ts_ns = now;
	ev->addr = addr;
	ev->size = size;
	ev->rate = go_rate(pid);
	ev->duty_ppm = 1000000;
	ev->regs.ip = ctx->ip;
	ev->regs.sp = ctx->sp;
	ev->regs.bp = ctx->bp;
	/* from the caller's frame (rbp is still profilealloc's here): the
	 * first return address is into mallocgc */
	ev->nr_frames = go_walk(ctx->bp, ev->frames, &full);
	if (full)
		ev->flags |= MT_EVF_FP_FULL;
	bpf_ringbuf_submit(ev, submit_flags());
	return 0;
}

SEC("uprobe")
int mt_go_free(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid(), kind_profile = bpf_get_attach_cookie(ctx);
	__u32 pid = id >> 32;
	struct mt_proc_counters *c = count_hit(pid);
	__u64 special = ctx->ax, addr = ctx->bx;
	__u64 now = bpf_ktime_get_ns();
	struct mt_event_free *ev;
	__u8 kind;

	if (!c || bpf_probe_read_user(&kind, 1, (void *)(special + GO_SPECIAL_KIND_OFF)) ||
	    kind != kind_profile || !go_first(GO_PROBE_FREE, ctx->r14, addr, now))
		return 0;
	__sync_fetch_and_add(&c->free_calls, 1);
	ev = reserve(sizeof(*ev));
	if (!ev)
		return 0;
	ev->kind = MT_EV_FREE;
	ev->pid = pid;
	ev->tid = (__u32)id;
	ev->_pad = 0;
	ev->ts_ns = now;
	ev->addr = addr;
	bpf_ringbuf_submit(ev, submit_flags());
	return 0;
}

#endif /* MEMTOP_GO_BPF_H */

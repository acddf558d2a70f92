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

/* The last object each probe saw, by goroutine. */
struct go_once_key {
	__u32 pid;
	__u32 probe; /* enum go_probe */
	__u64 g;
};

struct go_once {
	__u64 obj;
	__u64 ts_ns;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 8192);
	__type(key, struct go_once_key);
	__type(value, struct go_once);
} goonce SEC(".maps");

/* A restart comes within microseconds (the stack is copied, the function
 * entered again); the same object seen again later is a new event (its
 * address reused by a later sampled object). */
#define GO_RESTART_NS 1000000

/* False when this probe just saw obj on this goroutine: the restart of
 * the function after its stack grew. */
static __always_inline bool go_first(__u32 pid, __u32 probe, __u64 g, __u64 obj, __u64 now)
{
	struct go_once_key key = { .pid = pid, .probe = probe, .g = g };
	struct go_once *last = bpf_map_lookup_elem(&goonce, &key), cur = { obj, now };

	if (last && last->obj == obj && now - last->ts_ns < GO_RESTART_NS)
		return false;
	bpf_map_update_elem(&goonce, &key, &cur, BPF_ANY);
	return true;
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
	long n;

	__u64 now = bpf_ktime_get_ns();

	if (!c || !go_first(pid, GO_PROBE_MALLOC, ctx->r14, addr, now))
		return 0;
	__sync_fetch_and_add(&c->samples, 1);
	ev = reserve(MT_ALLOC_EVENT_HDR_SIZE);
	if (!ev)
		return 0;
	__builtin_memset(ev, 0, MT_ALLOC_EVENT_HDR_SIZE);
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
	/* the probe's own address is not a return address: skipped (the
	 * walk then starts in mProf_Malloc's caller's caller, mallocgc) */
	n = bpf_get_stack(ctx, ev->frames, sizeof(ev->frames), BPF_F_USER_STACK | 1);
	ev->nr_frames = n > 0 ? (__u32)n / 8 : 0;
	if (n >= (long)sizeof(ev->frames))
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
	    kind != kind_profile || !go_first(pid, GO_PROBE_FREE, ctx->r14, addr, now))
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

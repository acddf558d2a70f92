/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * device.bpf.h - the device-memory source (docs/device-memory.md): entry
 * and return uprobes on the device APIs' allocate and free calls of the
 * watched processes (Vulkan's loader, OpenCL's ICD loader, CUDA's driver
 * library), attached per PID by src/probe/device_source.c.
 *
 * These calls are rare (a frame's buffers, a model's tensors), so every
 * one is recorded, with weight 1: no sampling. The handle the call returns
 * is the allocation's address (MT_DEVICE_KEY), the key its free is matched
 * by. cl_mem objects are reference counted: clRetainMemObject adds a
 * reference, and only the clReleaseMemObject that drops the last one
 * frees. A Vulkan allocation's kind comes from the memory type it names,
 * whose property flags the process's last vkGetPhysicalDeviceMemoryProperties
 * call returned (seen at that call's return).
 */
#ifndef MEMTOP_DEVICE_BPF_H
#define MEMTOP_DEVICE_BPF_H

#define MT_VK_MAX_TYPES 32
#define MT_VK_DEVICE_LOCAL 0x1
#define MT_VK_HOST_VISIBLE 0x2
#define MT_CL_USE_HOST_PTR (1 << 3)
#define MT_CL_ALLOC_HOST_PTR (1 << 4)
#define MT_CU_LOCATION_HOST 2 /* CU_MEM_LOCATION_TYPE_HOST */

/* A device call between its entry and its return. */
struct dev_pending {
	__u64 sp;    /* rsp at the entry: the return comes with sp + 8 */
	__u64 size;  /* bytes (cuMemAllocPitch: the height) */
	__u64 out;   /* where the call writes the handle; 0: it returns it */
	__u64 pitch; /* cuMemAllocPitch: where it writes the pitch */
	__u64 dev;
	__u32 fn; /* enum mt_dev_fn */
	__u32 dev_info;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32); /* tid */
	__type(value, struct dev_pending);
} dev_pending SEC(".maps");

/* VkPhysicalDeviceMemoryProperties as the process last read it: the type
 * count, then (propertyFlags, heapIndex) per type. */
struct vk_types {
	__u32 count;
	__u32 types[2 * MT_VK_MAX_TYPES];
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32); /* tgid */
	__type(value, struct vk_types);
} vk_types SEC(".maps");

/* References a live cl_mem holds beyond its first (clRetainMemObject). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct mt_live_key);
	__type(value, __u32);
} dev_refs SEC(".maps");

static __always_inline void dev_free(__u32 pid, __u32 tid, __u32 space, __u64 handle)
{
	struct mt_live_key key = { .pid = pid, .addr = MT_DEVICE_KEY(space, handle) };

	if (!handle)
		return;
	bpf_map_delete_elem(&dev_refs, &key);
	track_free(pid, tid, key.addr);
}

/* clRetainMemObject of a cl_mem memtop recorded: one more reference. */
static __always_inline void cl_retain(__u32 pid, __u64 mem)
{
	struct mt_live_key key = { .pid = pid, .addr = MT_DEVICE_KEY(MT_DEV_OPENCL, mem) };
	__u32 one = 1, *refs;

	if (!mem || !bpf_map_lookup_elem(&live, &key))
		return;
	refs = bpf_map_lookup_elem(&dev_refs, &key);
	if (refs)
		__sync_fetch_and_add(refs, 1);
	else
		bpf_map_update_elem(&dev_refs, &key, &one, BPF_NOEXIST);
}

/* clReleaseMemObject: the last reference frees. */
static __always_inline void cl_release(__u32 pid, __u32 tid, __u64 mem)
{
	struct mt_live_key key = { .pid = pid, .addr = MT_DEVICE_KEY(MT_DEV_OPENCL, mem) };
	__u32 *refs;

	if (!mem)
		return;
	refs = bpf_map_lookup_elem(&dev_refs, &key);
	if (refs && *refs > 0) {
		/* not atomic with a retain on another thread of the same object:
		 * the target races there itself */
		if (*refs == 1)
			bpf_map_delete_elem(&dev_refs, &key);
		else
			__sync_fetch_and_add(refs, -1);
		return;
	}
	dev_free(pid, tid, MT_DEV_OPENCL, mem);
}

/* The kind of Vulkan memory type idx in pid, as its properties said. */
static __always_inline __u32 vk_kind(__u32 pid, __u32 idx)
{
	struct vk_types *t = bpf_map_lookup_elem(&vk_types, &pid);
	__u32 flags, kind = 0;

	if (!t || idx >= t->count || idx >= MT_VK_MAX_TYPES)
		return MT_DK_UNKNOWN;
	flags = t->types[(idx * 2) & (2 * MT_VK_MAX_TYPES - 1)];
	if (flags & MT_VK_DEVICE_LOCAL)
		kind |= MT_DK_DEVICE_LOCAL;
	if (flags & MT_VK_HOST_VISIBLE)
		kind |= MT_DK_HOST_VISIBLE;
	return kind ? kind : MT_DK_UNKNOWN;
}

static __always_inline __u32 cl_kind(__u64 flags)
{
	if (flags & MT_CL_USE_HOST_PTR)
		return MT_DK_HOST_PTR;
	if (flags & MT_CL_ALLOC_HOST_PTR)
		return MT_DK_HOST_VISIBLE;
	return MT_DK_DEVICE_LOCAL;
}

static __always_inline __u32 read_u32_at(__u64 addr)
{
	__u32 v = 0;

	bpf_probe_read_user(&v, sizeof(v), (const void *)addr);
	return v;
}

SEC("uprobe")
int mt_dev_entry(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 pid = id >> 32, tid = (__u32)id, fn = (__u32)bpf_get_attach_cookie(ctx), loc;
	struct dev_pending p = { .sp = ctx->sp, .fn = fn }, *outer;

	if (!count_hit(pid))
		return 0;
	switch (fn) {
	case MT_DEVFN_VK_FREE:
		dev_free(pid, tid, MT_DEV_VULKAN, PT_REGS_PARM2(ctx));
		return 0;
	case MT_DEVFN_CL_SVM_FREE:
		dev_free(pid, tid, MT_DEV_OPENCL, PT_REGS_PARM2(ctx));
		return 0;
	case MT_DEVFN_CL_RETAIN:
		cl_retain(pid, PT_REGS_PARM1(ctx));
		return 0;
	case MT_DEVFN_CL_RELEASE:
		cl_release(pid, tid, PT_REGS_PARM1(ctx));
		return 0;
	case MT_DEVFN_CU_FREE:
		dev_free(pid, tid, MT_DEV_CUDA, PT_REGS_PARM1(ctx));
		return 0;
	case MT_DEVFN_CU_RELEASE:
		dev_free(pid, tid, MT_DEV_CUDA_VMM, PT_REGS_PARM1(ctx));
		return 0;
	case MT_DEVFN_VK_ALLOC: {
		__u64 info = PT_REGS_PARM2(ctx);
		__u32 idx = read_u32_at(info + 24); /* memoryTypeIndex */

		bpf_probe_read_user(&p.size, 8, (const void *)(info + 16)); /* allocationSize */
		p.out = PT_REGS_PARM4(ctx);
		p.dev = PT_REGS_PARM1(ctx);
		p.dev_info = MT_DEV_INFO(MT_DEV_VULKAN, vk_kind(pid, idx), MT_DEV_TYPE_INDEX) |
			     ((idx & 0xff) << 24);
		break;
	}
	case MT_DEVFN_VK_PROPS:
		p.out = PT_REGS_PARM2(ctx);
		break;
	case MT_DEVFN_VK_PROPS2: /* VkPhysicalDeviceMemoryProperties2: sType, pNext, then it */
		p.out = PT_REGS_PARM2(ctx) + 16;
		break;
	case MT_DEVFN_CL_BUFFER:
		p.size = PT_REGS_PARM3(ctx);
		p.dev = PT_REGS_PARM1(ctx);
		p.dev_info = MT_DEV_INFO(MT_DEV_OPENCL, cl_kind(PT_REGS_PARM2(ctx)), 0);
		break;
	case MT_DEVFN_CL_BUFFER_PROPS:
		p.size = PT_REGS_PARM4(ctx);
		p.dev = PT_REGS_PARM1(ctx);
		p.dev_info = MT_DEV_INFO(MT_DEV_OPENCL, cl_kind(PT_REGS_PARM3(ctx)), 0);
		break;
	case MT_DEVFN_CL_SVM_ALLOC:
		p.size = PT_REGS_PARM3(ctx);
		p.dev = PT_REGS_PARM1(ctx);
		p.dev_info = MT_DEV_INFO(MT_DEV_OPENCL, MT_DK_MANAGED, 0);
		break;
	case MT_DEVFN_CU_ALLOC:
	case MT_DEVFN_CU_MANAGED:
	case MT_DEVFN_CU_HOST:
		p.out = PT_REGS_PARM1(ctx);
		p.size = PT_REGS_PARM2(ctx);
		p.dev_info = MT_DEV_INFO(MT_DEV_CUDA,
					 fn == MT_DEVFN_CU_ALLOC     ? MT_DK_DEVICE_LOCAL
					 : fn == MT_DEVFN_CU_MANAGED ? MT_DK_MANAGED
								     : MT_DK_PINNED_HOST,
					 0);
		break;
	case MT_DEVFN_CU_PITCH:
		p.out = PT_REGS_PARM1(ctx);
		p.pitch = PT_REGS_PARM2(ctx);
		p.size = PT_REGS_PARM4(ctx); /* the height: times the pitch at the return */
		p.dev_info = MT_DEV_INFO(MT_DEV_CUDA, MT_DK_DEVICE_LOCAL, 0);
		break;
	case MT_DEVFN_CU_CREATE:
		/* CUmemAllocationProp: type, handle types, location {type, id} */
		p.out = PT_REGS_PARM1(ctx);
		p.size = PT_REGS_PARM2(ctx);
		loc = read_u32_at(PT_REGS_PARM3(ctx) + 8);
		p.dev = read_u32_at(PT_REGS_PARM3(ctx) + 12);
		p.dev_info = MT_DEV_INFO(MT_DEV_CUDA,
					 loc == MT_CU_LOCATION_HOST ? MT_DK_PINNED_HOST
								    : MT_DK_DEVICE_LOCAL,
					 MT_DEV_ORDINAL);
		break;
	default:
		return 0;
	}
	/* a device call made inside another one of this thread (a driver
	 * whose cuMemAllocPitch calls cuMemAlloc): the outer one counts */
	outer = bpf_map_lookup_elem(&dev_pending, &tid);
	if (outer && outer->sp > ctx->sp && outer->sp - ctx->sp < (1 << 20))
		return 0;
	bpf_map_update_elem(&dev_pending, &tid, &p, BPF_ANY);
	return 0;
}

SEC("uretprobe")
int mt_dev_return(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid(), rc = PT_REGS_RC(ctx), handle = 0, size, pitch;
	__u32 pid = id >> 32, tid = (__u32)id, space;
	struct dev_pending *pp, p;
	struct vk_types *t;

	if (!count_hit(pid))
		return 0;
	pp = bpf_map_lookup_elem(&dev_pending, &tid);
	if (!pp || pp->sp + 8 != ctx->sp)
		return 0; /* not the call the pending entry is of (a nested one's return) */
	p = *pp;
	bpf_map_delete_elem(&dev_pending, &tid);
	size = p.size;
	space = MT_DEV_INFO_API(p.dev_info);
	switch (p.fn) {
	case MT_DEVFN_VK_PROPS:
	case MT_DEVFN_VK_PROPS2: {
		struct vk_types fresh = {};

		bpf_map_update_elem(&vk_types, &pid, &fresh, BPF_NOEXIST);
		t = bpf_map_lookup_elem(&vk_types, &pid);
		if (t && bpf_probe_read_user(t, sizeof(*t), (const void *)p.out))
			t->count = 0;
		return 0;
	}
	case MT_DEVFN_CL_BUFFER:
	case MT_DEVFN_CL_BUFFER_PROPS:
	case MT_DEVFN_CL_SVM_ALLOC:
		handle = rc; /* NULL when it failed */
		break;
	case MT_DEVFN_VK_ALLOC: /* VK_SUCCESS is 0 */
	default:                /* CUDA_SUCCESS is 0 */
		if ((__u32)rc || bpf_probe_read_user(&handle, 8, (const void *)p.out))
			return 0;
		break;
	}
	if (p.fn == MT_DEVFN_CU_PITCH) {
		if (bpf_probe_read_user(&pitch, 8, (const void *)p.pitch))
			return 0;
		size *= pitch;
	}
	if (p.fn == MT_DEVFN_CU_CREATE)
		space = MT_DEV_CUDA_VMM;
	if (!handle)
		return 0;
	emit_sample_dev(ctx, ctx, pid, tid, MT_FN_DEVICE, MT_DEVICE_KEY(space, handle), size, size,
			0, 1000000, p.dev_info, p.dev);
	return 0;
}

#endif /* MEMTOP_DEVICE_BPF_H */

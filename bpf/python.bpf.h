/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * python.bpf.h - CPython frames at sample time (docs/python.md).
 *
 * For a process user space registered in pyprocs (its runtime addresses
 * and structure offsets, struct mt_py_proc), a sampled allocation is
 * preceded by an MT_EV_PY record with the thread's Python frame chain:
 * tstate_current -> cframe -> current_frame, then `previous` links, at
 * most MT_PY_MAX_FRAMES. Only the code object and instruction pointer of
 * each frame are read here (the chain changes within microseconds); names
 * and lines are resolved in user space. A thread that does not hold the
 * GIL (its fs base differs from tstate_current->thread_id) has no Python
 * frames running, and gets none.
 */
#ifndef MEMTOP_PYTHON_BPF_H
#define MEMTOP_PYTHON_BPF_H

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32); /* tgid */
	__type(value, struct mt_py_proc);
} pyprocs SEC(".maps");

static __always_inline __u64 read_user_u64(__u64 addr)
{
	__u64 v = 0;

	if (bpf_probe_read_user(&v, sizeof(v), (const void *)addr))
		return 0;
	return v;
}

/* Emit the Python frames of the current thread of pid, stamped ts, when
 * pid is a registered interpreter and this thread runs Python code. */
static __always_inline void emit_python_stack(__u32 pid, __u32 tid, __u64 ts)
{
	struct mt_py_proc *py = bpf_map_lookup_elem(&pyprocs, &pid);
	struct task_struct *task;
	struct mt_event_py *ev;
	__u64 tstate, frame;
	__u32 i;

	if (!py)
		return;
	tstate = read_user_u64(py->tstate_current);
	if (!tstate)
		return;
	task = bpf_get_current_task_btf();
	if (read_user_u64(tstate + py->tstate_thread_id) != BPF_CORE_READ(task, thread.fsbase))
		return;
	frame = read_user_u64(read_user_u64(tstate + py->tstate_cframe) + py->cframe_current_frame);
	if (!frame)
		return;
	ev = reserve(sizeof(*ev));
	if (!ev)
		return;
	ev->kind = MT_EV_PY;
	ev->pid = pid;
	ev->tid = tid;
	ev->ts_ns = ts;
	ev->flags = 0;
	ev->_pad = 0;
	for (i = 0; i < MT_PY_MAX_FRAMES && frame; i++) {
		__u8 entry = 0;

		ev->frames[i].code = read_user_u64(frame + py->frame_code);
		ev->frames[i].instr = read_user_u64(frame + py->frame_prev_instr);
		bpf_probe_read_user(&entry, 1, (const void *)(frame + py->frame_is_entry));
		ev->frames[i].flags = entry ? MT_PYF_ENTRY : 0;
		ev->frames[i]._pad = 0;
		frame = read_user_u64(frame + py->frame_previous);
	}
	ev->nframes = i;
	if (frame)
		ev->flags |= MT_PYE_TRUNCATED;
	bpf_ringbuf_submit(ev, submit_flags());
}

#endif /* MEMTOP_PYTHON_BPF_H */

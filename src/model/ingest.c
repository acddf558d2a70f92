// SPDX-License-Identifier: GPL-2.0-only
/*
 * ingest.c - decodes ring-buffer records (abi.h) into the model.
 *
 * A sampled allocation's stack comes from unwinding the stack copy with
 * CFI (unwind.h) when there is one, or from the kernel's frame-pointer
 * walk; the longer complete walk wins, so binaries with frame pointers
 * keep working when unwind tables are missing. Every program counter is a
 * return address (the sample is taken after the allocator returned), and
 * each one is symbolized into one frame or several (inlining). The sample's
 * time goes to the process cache first: its code was mapped then, so a
 * table of the process read earlier is re-read if it lacks an address.
 *
 * A sample of a CPython process comes with an MT_EV_PY record just before
 * it (same thread, same timestamp): its interpreter frames, named by
 * stacks/python.c, replace each native _PyEval_EvalFrameDefault frame,
 * one interpreter activation (the frames up to its entry frame) each, so
 * the stack reads Python and native code in the order they called.
 *
 * A sample whose frames the process named itself (MT_EV_NAMED: a JVM's
 * agent, docs/java.md) carries them as text: each name is checked (its
 * length, no NUL byte) before it is interned, and the frames become
 * MT_FRAME_NAMED frames of the runtime's module ("[java]"), with no
 * address to unwind or symbolize.
 *
 * The paths and names interned while a sample is named are charged to its
 * target (util/strpool.h budgets): one target that keeps making new ones
 * runs out of its own share, never the others'.
 */
#include "model/ingest.h"
#include "model/ingest_named.h"

#include <errno.h>
#include <string.h>

#include "memtop/abi.h"
#include "memtop/sampler_abi.h"
#include "stacks/python.h"
#include "util/strpool.h"

#define MT_STACK_MAX_IPS 128
#define MT_STACK_MAX_FRAMES 192

/* Functions where a walk properly ends: the stack is complete there
 * (C programs and threads; Go's goroutines start in runtime.goexit's frame,
 * its threads' own stacks in runtime.mstart and the first in rt0_go). */
static bool is_outermost(const char *fn)
{
	static const char *const roots[] = { "_start",
					     "__libc_start_main",
					     "__libc_start_call_main",
					     "start_thread",
					     "clone",
					     "clone3",
					     "__clone",
					     "__clone3",
					     "runtime.goexit",
					     "runtime.mstart",
					     "runtime.rt0_go" };
	size_t i;

	if (!fn)
		return false;
	for (i = 0; i < sizeof(roots) / sizeof(roots[0]); i++)
		if (!strcmp(fn, roots[i]))
			return true;
	return false;
}

/* Program counters of a sample, innermost first. Returns the count. */
static int sample_ips(struct ingest *in, const struct mt_event_alloc *ev, __u64 *ips, bool *truncated)
{
	int n = 0, nfp = ev->nr_frames < MT_MAX_FRAMES ? ev->nr_frames : MT_MAX_FRAMES;
	bool cfi_trunc = true;

	if (in->unw && ev->stack_len > ev->stack_skew) {
		n = unwinder_unwind(in->unw, ev->pid, &ev->regs, ev->stack + ev->stack_skew,
				    ev->stack_len - ev->stack_skew, ips, MT_STACK_MAX_IPS,
				    &cfi_trunc);
		if (n < 0)
			n = 0;
	}
	if (n > 0 && (!cfi_trunc || n >= nfp)) {
		in->unwound++;
		*truncated = cfi_trunc;
		return n;
	}
	if (nfp == 0) {
		ips[0] = ev->regs.ip;
		nfp = 1;
	} else {
		memcpy(ips, ev->frames, nfp * sizeof(ips[0]));
	}
	in->fp_stacks++;
	/* A frame-pointer walk says nothing of its own completeness: judged
	 * by its last frame once symbolized. */
	*truncated = (ev->flags & MT_EVF_FP_FULL) != 0;
	return nfp;
}

/* The Python frames recorded for this sample, or NULL. */
static const struct mt_event_py *python_of(struct ingest *in, const struct mt_event_alloc *ev)
{
	const struct mt_event_py *py = &in->py_pending[ev->tid % INGEST_PY_SLOTS];

	return py->kind == MT_EV_PY && py->tid == ev->tid && py->pid == ev->pid &&
			       py->ts_ns == ev->ts_ns
		       ? py
		       : NULL;
}

/* Put the Python frames of py into frames[0, *nf): each native
 * interpreter loop frame becomes the Python frames it was running. */
static void merge_python(struct ingest *in, const struct mt_event_py *py, struct mt_frame *frames,
			 int *nf, bool *truncated)
{
	struct mt_frame out[MT_STACK_MAX_FRAMES];
	__u32 next = 0, npy = py->nframes < MT_PY_MAX_FRAMES ? py->nframes : MT_PY_MAX_FRAMES;
	int i, n = 0;

	for (i = 0; i < *nf && n < MT_STACK_MAX_FRAMES; i++) {
		const char *fn = frames[i].function;

		if (!fn || strcmp(fn, "_PyEval_EvalFrameDefault") || next >= npy) {
			out[n++] = frames[i];
			continue;
		}
		while (next < npy && n < MT_STACK_MAX_FRAMES) {
			bool entry = py->frames[next].flags & MT_PYF_ENTRY;

			python_names_resolve(in->py, py->pid, &py->frames[next++], &out[n++]);
			if (entry)
				break;
		}
	}
	/* frames the native walk did not reach (it ended early) go outermost */
	while (next < npy && n < MT_STACK_MAX_FRAMES)
		python_names_resolve(in->py, py->pid, &py->frames[next++], &out[n++]);
	if (py->flags & MT_PYE_TRUNCATED || i < *nf)
		*truncated = true;
	memcpy(frames, out, n * sizeof(out[0]));
	*nf = n;
	in->python_stacks++;
}

/* Is f a frame of memtop's own sampler (preloaded or loaded into the
 * process), where a USDT sample's stack starts? */
static bool sampler_frame(const struct mt_frame *f)
{
	const char *m = f->module;

	return m && (!strcmp(m, "memfd:" MT_INJECT_MEMFD_NAME) || !strcmp(m, "libmemtop-sampler.so"));
}

/* A stack without the sampler's frames on top: it starts at the call of
 * the allocator, as a uprobe's sample (taken at the return) does. */
static int drop_sampler_frames(struct mt_frame *frames, int nf)
{
	int k = 0;

	while (k < nf - 1 && sampler_frame(&frames[k]))
		k++;
	if (k)
		memmove(frames, frames + k, (size_t)(nf - k) * sizeof(*frames));
	return nf - k;
}

/* The number of the device handle names in pid's use of api: 0, 1, ...
 * in the order the process first used them. */
static __u8 device_index(struct ingest *in, pid_t pid, __u32 api, __u64 handle)
{
	__u32 next = 0;
	size_t i, k;

	for (i = 0; i < in->ndevs; i++) {
		const struct ingest_dev *d = &in->devs[i];

		if (d->pid != pid || d->api != api)
			continue;
		if (d->handle == handle)
			return (__u8)d->index;
		if (d->index >= next)
			next = d->index + 1;
	}
	if (in->ndevs == INGEST_DEV_SLOTS) {
		/* the slots of processes that ended are free again */
		for (i = k = 0; i < in->ndevs; i++) {
			const struct mt_target *t = model_target(in->model, in->devs[i].pid);

			if (!t || t->alive)
				in->devs[k++] = in->devs[i];
		}
		in->ndevs = k;
	}
	if (next > 254 || in->ndevs == INGEST_DEV_SLOTS)
		return 255;
	in->devs[in->ndevs++] = (struct ingest_dev){ pid, api, handle, next };
	return (__u8)next;
}

/* The tier, device and kind of a sample (all zero on the host tier). */
static struct mt_dev_tag device_tag(struct ingest *in, const struct mt_event_alloc *ev)
{
	struct mt_dev_tag tag = { 0 };
	__u32 api = MT_DEV_INFO_API(ev->dev_info);

	if (ev->fn != MT_FN_DEVICE)
		return tag;
	tag.type = -1;
	if (api == MT_DEV_CUDA_VMM)
		api = MT_DEV_CUDA;
	tag.tier = MT_TIER_DEVICE;
	tag.api = (__u8)api;
	tag.kind = (__u8)MT_DEV_INFO_KIND(ev->dev_info);
	if (ev->dev_info & MT_DEV_TYPE_INDEX)
		tag.type = (__s16)MT_DEV_INFO_TYPE(ev->dev_info);
	/* CUDA's allocations name no device but cuMemCreate's location:
	 * the others are on the current context's, device 0 unless the
	 * process says otherwise, which memtop does not read */
	if (ev->dev_info & MT_DEV_ORDINAL)
		tag.index = ev->dev < 255 ? (__u8)ev->dev : 255;
	else if (api != MT_DEV_CUDA)
		tag.index = device_index(in, (pid_t)ev->pid, api, ev->dev);
	return tag;
}

static int ingest_alloc(struct ingest *in, const struct mt_event_alloc *ev)
{
	const struct mt_event_py *py = in->py ? python_of(in, ev) : NULL;
	__u64 ips[MT_STACK_MAX_IPS];
	struct mt_frame frames[MT_STACK_MAX_FRAMES];
	struct mt_sample_in s = { 0 };
	bool truncated = false, cfi;
	int nips, nf = 0, i;
	__u64 unwound_before = in->unwound;
	const struct mt_target *t = model_target(in->model, ev->pid);
	struct strpool_budget *was = strpool_charge(model_target_names(in->model, ev->pid));

	if (in->pc)
		proc_cache_note_sample(in->pc, ev->pid, ev->ts_ns);
	nips = sample_ips(in, ev, ips, &truncated);
	cfi = in->unwound != unwound_before;
	for (i = 0; i < nips && nf < MT_STACK_MAX_FRAMES; i++)
		nf += symbolizer_resolve(in->sym, ev->pid, ips[i], true, &frames[nf],
					 MT_STACK_MAX_FRAMES - nf);
	if (i < nips)
		truncated = true;
	nf = drop_sampler_frames(frames, nf);
	if (!cfi && !truncated && nf > 0)
		truncated = !is_outermost(frames[nf - 1].function);
	if (py)
		merge_python(in, py, frames, &nf, &truncated);
	strpool_charge(was);
	if (ev->fn == MT_FN_MMAP && t && ingest_named_page(t, frames, nf)) {
		/* the runtime's heap pages: their objects are named */
		ingest_set_aside(in, t, true);
		return 0;
	}
	ingest_set_aside(in, t, false);
	s.pid = ev->pid;
	s.ts_ns = ev->ts_ns;
	s.addr = ev->addr;
	s.size = ev->size;
	s.weight_bytes = ev->weight_bytes;
	s.rate = ev->rate;
	/* the share of time the probes were on: what the model weighs by and
	 * a recording keeps. The share of the process's work they saw
	 * (mt_target.phase_seen) is not in the weight: it is right only for
	 * a stream paced by that work, and a weight that follows a measure
	 * still settling makes a plateau climb (docs/probes.md 6.5); the
	 * model shows it as the other end of in-use's range. */
	s.duty = ev->duty_ppm / 1e6;
	s.untracked = ev->flags & MT_EVF_UNTRACKED;
	s.truncated = truncated;
	s.mmap = ev->fn == MT_FN_MMAP;
	s.dev = device_tag(in, ev);
	s.frames = frames;
	s.nframes = nf;
	return model_apply(in->model, MT_INPUT_ALLOC(&s));
}

void ingest_set_aside(struct ingest *in, const struct mt_target *t, bool page_named)
{
	struct mt_target_facts f;

	if (!t || (t->names.refused == t->limits.names_refused && !page_named))
		return;
	f = (struct mt_target_facts){ .pid = t->pid,
				      .set = MT_FACT_INGEST,
				      .names_refused = t->names.refused,
				      .pages_named = t->pages_named + page_named };
	model_apply(in->model, MT_INPUT_FACTS(&f));
}

int ingest_record(struct ingest *in, const void *data, size_t size)
{
	const struct mt_event_alloc *ev = data;
	const struct mt_event_free *fr = data;
	const struct mt_event_proc *pr = data;
	__u32 kind;

	if (size < sizeof(kind))
		goto bad;
	memcpy(&kind, data, sizeof(kind));
	switch (kind) {
	case MT_EV_FREE:
		if (size < sizeof(*fr))
			goto bad;
		model_apply(in->model, MT_INPUT_FREE(fr->pid, fr->addr, fr->ts_ns));
		break;
	case MT_EV_PY:
		if (size < sizeof(struct mt_event_py))
			goto bad;
		memcpy(&in->py_pending[((const struct mt_event_py *)data)->tid % INGEST_PY_SLOTS],
		       data, sizeof(struct mt_event_py));
		break;
	case MT_EV_PROC:
		if (size < sizeof(*pr))
			goto bad;
		if (in->on_proc)
			in->on_proc(in->proc_ctx, pr->pid, pr->what);
		break;
	case MT_EV_NAMED:
		if (ingest_named(in, data, size) == -EINVAL)
			goto bad;
		break;
	case MT_EV_ALLOC:
		if (size < MT_ALLOC_EVENT_HDR_SIZE || ev->stack_len > MT_STACK_COPY_MAX ||
		    ev->stack_skew >= MT_STACK_CHUNK ||
		    size < MT_ALLOC_EVENT_HDR_SIZE + ev->stack_len)
			goto bad;
		ingest_alloc(in, ev);
		break;
	default:
		goto bad;
	}
	in->records++;
	return 0;
bad:
	in->bad_records++;
	return -EINVAL;
}

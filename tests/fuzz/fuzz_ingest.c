// SPDX-License-Identifier: GPL-2.0-only
/*
 * fuzz_ingest.c - libFuzzer harness for the ring-buffer record decoder
 * (src/model/ingest.c) and what it drives: the unwinder over a stack copy,
 * the symbolizer, the model and the exports made of it. Records are what the BPF program, and
 * through USDT the in-process sampler, hand memtop (include/memtop/abi.h);
 * a target controls its stack bytes and registers, and the USDT
 * arguments.
 *
 * Input: records one after the other, each a 16-bit little-endian length
 * then that many bytes (the last one takes what is left), replayed into a
 * fresh model, then one MT_IN_TICK input. Each record is copied into a buffer
 * of exactly its length, as the ring buffer delivers it. The model is then
 * exported as --output and --folded would write it (in memory). The pid of an
 * alloc record decides whose memory it describes: odd pids become this
 * process (real maps and ELF files: regs.ip and frame addresses below
 * 2^32 are then offsets into this executable, so the fuzzer reaches real
 * unwind tables and symbols), other pids a process that cannot exist
 * (above the kernel's PID limit), 0 and pids above 2^31 stay as they are.
 * Both are targets of the model. Checks that the counters add up.
 */
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/types.h>

#include "export/export.h"
#include "memtop/abi.h"
#include "model/ingest.h"

#define NO_SUCH_PID 0x7ffffffe

static struct proc_cache *pc;
static struct symbolizer *sym;
static struct unwinder *unw;
static __u64 exe_base;
static pid_t self;

static void on_proc(void *ctx, pid_t pid, __u32 what)
{
	++*(__u64 *)ctx;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	Dl_info di;

	self = getpid();
	pc = proc_cache_new();
	sym = pc ? symbolizer_new(pc) : NULL;
	unw = pc ? unwinder_new(pc) : NULL;
	if (!sym || !unw || !dladdr((void *)LLVMFuzzerInitialize, &di))
		abort();
	exe_base = (__u64)(uintptr_t)di.dli_fbase;
	return 0;
}

static __u64 rebase(__u64 addr)
{
	return addr < (1ULL << 32) ? exe_base + addr : addr;
}

/* Rewrite the pid of an alloc record as the header comment says. */
static void choose_pid(struct mt_event_alloc *ev, size_t size)
{
	if (ev->pid == 0 || ev->pid >= 0x80000000u)
		return;
	if (!(ev->pid & 1)) {
		ev->pid = NO_SUCH_PID;
		return;
	}
	ev->pid = (__u32)self;
	ev->regs.ip = rebase(ev->regs.ip);
	for (size_t i = 0;
	     i < MT_MAX_FRAMES && offsetof(struct mt_event_alloc, frames) + (i + 1) * 8 <= size; i++)
		ev->frames[i] = rebase(ev->frames[i]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mt_model_opts o = { .rate = MT_DEFAULT_RATE, .group = MT_GROUP_FUNCTION };
	struct ingest in = { 0 };
	__u64 procs = 0, max_ts = 0, calls = 0;
	size_t pos = 0, pblen, flen;
	char *folded;
	__u8 *pb;

	in.model = model_new(&o);
	if (!in.model || model_apply(in.model, MT_INPUT_WATCHED(self)) ||
	    model_apply(in.model, MT_INPUT_WATCHED(NO_SUCH_PID)))
		abort();
	in.sym = sym;
	in.unw = unw;
	in.on_proc = on_proc;
	in.proc_ctx = &procs;
	while (pos + 2 <= size) {
		size_t n = (size_t)data[pos] | (size_t)data[pos + 1] << 8;
		__u32 kind = 0;
		__u8 *rec;

		pos += 2;
		if (n > size - pos)
			n = size - pos;
		rec = malloc(n ? n : 1);
		if (!rec)
			abort();
		memcpy(rec, data + pos, n);
		pos += n;
		if (n >= sizeof(kind))
			memcpy(&kind, rec, sizeof(kind));
		if (kind == MT_EV_ALLOC && n >= MT_ALLOC_EVENT_HDR_SIZE) {
			struct mt_event_alloc *ev = (struct mt_event_alloc *)rec;

			choose_pid(ev, n);
			if (ev->ts_ns > max_ts)
				max_ts = ev->ts_ns;
		}
		ingest_record(&in, rec, n);
		calls++;
		free(rec);
	}
	if (in.records + in.bad_records != calls || procs > in.records)
		abort();
	model_apply(in.model, MT_INPUT_TICK(max_ts + 1000000000ULL));
	if (!export_pprof_buf(in.model, &pb, &pblen))
		free(pb);
	if (!export_folded_buf(in.model, &folded, &flen))
		free(folded);
	model_free(in.model);
	return 0;
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * fuzz_unwind.c - libFuzzer harness for what reads a mapped ELF file on
 * the way from a stack to named frames: the unwinder's .eh_frame_hdr
 * parsing and libunwind's CFI interpretation over it
 * (src/stacks/unwind.c), the maps and file cache (proc_cache.c,
 * target_file.c: /proc/PID/map_files), and the symbolizer (symbolize.c:
 * symbols, debug links, DWARF). A target can map any file it likes and
 * put any bytes on its stack.
 *
 * Input: the whole ELF file. It is written to a memfd and mapped into this
 * process, which is the "target"; its last eight bytes choose the
 * registers and the stack copy: the ip at (first 32 bits) modulo the size
 * into the mapping, every stack word another address inside it, one step
 * (last 32 bits) further each. The walk is then symbolized. The file
 * caches are dropped after each input, so no input sees another's file.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "stacks/proc_cache.h"
#include "stacks/symbolize.h"
#include "stacks/unwind.h"

#define STACK_WORDS 128
#define MAX_IPS 32

static struct proc_cache *pc;
static struct unwinder *unw;
static pid_t self;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	self = getpid();
	pc = proc_cache_new();
	unw = pc ? unwinder_new(pc) : NULL;
	if (!unw)
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	__u64 stack[STACK_WORDS], ips[MAX_IPS], start;
	struct mt_regs regs = { 0 };
	struct mt_frame frames[8];
	struct symbolizer *sym;
	__u32 ip_off = 0, step = 0;
	bool truncated;
	void *map;
	int fd, n;

	if (size < 64)
		return 0;
	memcpy(&ip_off, data + size - 8, 4);
	memcpy(&step, data + size - 4, 4);
	fd = memfd_create("fuzz_unwind.so", MFD_CLOEXEC);
	if (fd < 0 || write(fd, data, size) != (ssize_t)size)
		abort();
	map = mmap(NULL, size, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED)
		map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED)
		abort();
	start = (__u64)(uintptr_t)map;

	regs.ip = start + ip_off % size;
	regs.sp = 0x7ffc00000000ULL;
	regs.bp = regs.sp + 8 * 4;
	for (int k = 0; k < STACK_WORDS; k++)
		stack[k] = start + (ip_off + (__u64)step * (k + 1)) % size;

	sym = symbolizer_new(pc);
	if (!sym)
		abort();
	n = unwinder_unwind(unw, self, &regs, (const __u8 *)stack, sizeof(stack), ips, MAX_IPS,
			    &truncated);
	if (n > MAX_IPS || (n >= 1 && ips[0] != regs.ip))
		abort();
	for (int i = 0; i < n; i++) {
		int nf = symbolizer_resolve(sym, self, ips[i], i > 0, frames, 8);

		if (nf < 1 || nf > 8)
			abort();
	}
	symbolizer_free(sym);
	unwinder_forget(unw, self);
	proc_cache_forget(pc, self);
	munmap(map, size);
	close(fd);
	return 0;
}

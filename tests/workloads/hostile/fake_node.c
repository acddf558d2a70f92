// SPDX-License-Identifier: GPL-2.0-only
/*
 * fake_node.c - a hostile "Node.js" process for test_node.py: it exports
 * the V8 and libuv functions memtop looks for (empty ones), so memtop
 * takes it for node, and maps a memfd named memtop-v8 of its own making,
 * laid out as memtop's agent would be, with a control block saying "on,
 * for a memtop that is gone" (so memtop takes it over without running
 * anything) and snapshots it rewrites every 20 ms with hostile contents:
 * random bytes, huge counts, offsets past the text, parent cycles, NUL
 * bytes in names, lengths past MT_NAMED_NAME_MAX. Run as nobody.
 *
 *   fake_node CTL_OFFSET BUF_OFFSET     (from readelf -s libmemtop-v8.so)
 *
 * Prints "READY pid=N" once mapped, then rewrites until killed.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "memtop/v8_abi.h"

#define EXPORT __attribute__((visibility("default"), used, noinline))
#define FAKE(name, sym)                      \
	EXPORT void name(void) __asm__(sym); \
	void name(void)                      \
	{                                    \
	}

FAKE(f0, "_ZN2v82V810GetVersionEv")
FAKE(f1, "_ZN2v87Isolate13TryGetCurrentEv")
FAKE(f2, "_ZN2v87Isolate15GetHeapProfilerEv")
FAKE(f3, "_ZN2v812HeapProfiler25StartSamplingHeapProfilerEmiNS0_13SamplingFlagsE")
FAKE(f4, "_ZN2v812HeapProfiler24StopSamplingHeapProfilerEv")
FAKE(f5, "_ZN2v812HeapProfiler20GetAllocationProfileEv")
FAKE(f6, "_ZN2v811HandleScopeC1EPNS_7IsolateE")
FAKE(f7, "_ZN2v811HandleScopeD1Ev")
FAKE(f8, "_ZNK2v86String9WriteUtf8EPNS_7IsolateEPciPii")
FAKE(f9, "uv_default_loop")
FAKE(f10, "uv_timer_init")
FAKE(f11, "uv_timer_start")
FAKE(f12, "uv_timer_stop")
FAKE(f13, "uv_unref")
FAKE(f14, "uv_close")

static uint64_t rnd(void)
{
	static uint64_t x = 88172645463325252ull;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return x;
}

static void hostile_snapshot(unsigned char *buf, struct mt_v8_ctl *ctl, unsigned round)
{
	struct mt_v8_snap *h = (struct mt_v8_snap *)buf;
	struct mt_v8_node *n = (struct mt_v8_node *)(buf + sizeof(*h));
	size_t i;

	ctl->seq++; /* odd: being written */
	switch (round % 5) {
	case 0: /* noise, and a length past the buffer */
		for (i = 0; i < 65536; i += 8)
			*(uint64_t *)(buf + i) = rnd();
		ctl->snap_len = rnd() % (MT_V8_BUF_SIZE * 2);
		break;
	case 1: /* counts that overflow any size computation */
		h->nnodes = 0xffffffffu;
		h->nsamples = 0x0fffffffu;
		h->text_len = 0xfffffff0u;
		ctl->snap_len = 4096;
		break;
	case 2: { /* a parent cycle, NULs in names, a sample of every node */
		struct mt_v8_sample *s;
		char *text;

		h->nnodes = 3;
		h->nsamples = 3;
		h->text_len = 16;
		h->interval = 1 + rnd() % 1000;
		n[0] = (struct mt_v8_node){ 1, 2, 1, 0, 0, 4, 4 };
		n[1] = (struct mt_v8_node){ 2, 1, 2, 4, 8, 4, 4 };
		n[2] = (struct mt_v8_node){ 3, 3, 3, 12, 12, 4, 4 }; /* its own parent */
		s = (struct mt_v8_sample *)(n + 3);
		for (i = 0; i < 3; i++)
			s[i] = (struct mt_v8_sample){ rnd(), rnd() % (1u << 20), (uint32_t)i + 1, 1 };
		text = (char *)(s + 3);
		memcpy(text, "a\0b\x1b[2Jevil\0\0fn\xff\xfe", 16);
		ctl->snap_len = (size_t)(text + 16 - (char *)buf);
		break;
	}
	case 3: { /* offsets and lengths past the text */
		h->nnodes = 1;
		h->nsamples = 1;
		h->text_len = 4;
		n[0] = (struct mt_v8_node){ 1, 7, 1, 0xfffffff0u, 2, 0xffff, 0xffff };
		*(struct mt_v8_sample *)(n + 1) = (struct mt_v8_sample){ rnd(), 64, 1, 1 };
		ctl->snap_len = sizeof(*h) + sizeof(*n) + sizeof(struct mt_v8_sample) + 4;
		break;
	}
	default: { /* a long chain of long names: cut, never overrun */
		struct mt_v8_sample *s;
		unsigned k;

		h->nnodes = 100;
		h->nsamples = 1;
		h->text_len = 60000;
		h->interval = 512;
		for (k = 0; k < 100; k++)
			n[k] = (struct mt_v8_node){ k + 1, k, k, 0, 0, 60000, 60000 };
		s = (struct mt_v8_sample *)(n + 100);
		*s = (struct mt_v8_sample){ rnd(), 128, 100, 1 };
		memset(s + 1, 'x', 60000);
		ctl->snap_len = (size_t)((unsigned char *)(s + 1) + 60000 - buf);
		break;
	}
	}
	ctl->seq++; /* even: done */
}

int main(int argc, char **argv)
{
	unsigned long ctl_off, buf_off;
	size_t size;
	unsigned char *base;
	struct mt_v8_ctl *ctl;
	unsigned round = 0;
	int fd;

	if (argc != 3)
		return 2;
	ctl_off = strtoul(argv[1], NULL, 16);
	buf_off = strtoul(argv[2], NULL, 16);
	size = buf_off + MT_V8_BUF_SIZE + 4096;
	fd = memfd_create(MT_V8_MEMFD_NAME, 0);
	if (fd < 0 || ftruncate(fd, (off_t)size))
		return 1;
	base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (base == MAP_FAILED)
		return 1;
	ctl = (struct mt_v8_ctl *)(base + ctl_off);
	ctl->magic = MT_V8_MAGIC;
	ctl->version = MT_V8_VERSION;
	ctl->state = MT_V8_ON;
	ctl->memtop_pid = 1; /* alive, but not a memtop: "its memtop is gone" */
	printf("READY pid=%d\n", getpid());
	fflush(stdout);
	for (;;) {
		struct timespec ts = { 0, 20000000 };

		hostile_snapshot(base + buf_off, ctl, round++);
		ctl->state = MT_V8_ON;
		nanosleep(&ts, NULL);
	}
}

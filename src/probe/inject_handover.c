// SPDX-License-Identifier: GPL-2.0-only
/*
 * inject_handover.c - the injected sampler's half of a handover
 * (inject_handover.h).
 *
 * memtop writes a round's addresses and count before its serial, each
 * with one pwrite of /proc/PID/mem; the sampler reads the serial with
 * acquire order and the rest after it (inject_sampler.c, adopt_take), so
 * a serial it sees comes with its round. A serial read half-written is
 * one the round is complete for already; the whole serial, seen later,
 * takes the round again, and addresses already in the table are not put
 * there twice.
 */
#include "probe/inject_handover.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "memtop/sampler_abi.h"
#include "probe/inject_ptrace.h"

#define CTL_FIELD(st, f) ((st)->base + (st)->im.ctl + offsetof(struct mt_inject_ctl, f))

int inject_text_range(const struct inject_state *st, __u64 *lo, __u64 *hi)
{
	int i;

	*lo = *hi = 0;
	for (i = 0; i < st->im.nload; i++) {
		__u64 a = st->base + st->im.load[i].vaddr, z = a + st->im.load[i].memsz;

		if (!(st->im.load[i].prot & PROT_EXEC))
			continue;
		if (!*hi || a < *lo)
			*lo = a;
		if (z > *hi)
			*hi = z;
	}
	return *hi ? 0 : -ENOENT;
}

int inject_adopt(const struct inject_state *st, const __u64 *addrs, size_t n, __u32 *serial)
{
	__u32 count = n < MT_INJECT_ADOPT_MAX ? (__u32)n : MT_INJECT_ADOPT_MAX, now;
	int fd = inject_mem_open_same(st, O_RDWR), e;

	if (fd < 0)
		return fd;
	e = inject_mem_read(fd, CTL_FIELD(st, adopt_serial), &now, sizeof(now));
	if (!e && count)
		e = inject_mem_write(fd, CTL_FIELD(st, adopt), addrs, count * sizeof(*addrs));
	if (!e)
		e = inject_mem_write(fd, CTL_FIELD(st, adopt_n), &count, sizeof(count));
	now++;
	if (!e)
		e = inject_mem_write(fd, CTL_FIELD(st, adopt_serial), &now, sizeof(now));
	close(fd);
	if (!e)
		*serial = now;
	return e;
}

int inject_adopted(const struct inject_state *st, __u32 serial)
{
	__u32 taken;
	int fd = inject_mem_open_same(st, O_RDONLY), e;

	if (fd < 0)
		return fd;
	e = inject_mem_read(fd, CTL_FIELD(st, adopt_taken), &taken, sizeof(taken));
	close(fd);
	return e ? e : taken == serial;
}

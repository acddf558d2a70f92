// SPDX-License-Identifier: GPL-2.0-only
/*
 * calibrate.c - the cost of one probe hit, measured on memtop itself.
 *
 * mt_calib_target starts with `push %rbx`, an instruction x86 uprobes
 * emulate, exactly like glibc's malloc entry. memtop makes itself a target
 * for the duration, attaches its entry program with the malloc cookie, and
 * calls the function with a size of 0 (counted, never sampled): the same
 * work as an unsampled malloc. The cost is the difference from bare calls,
 * the best of a few rounds of the thread's CPU time (the machine is noisy:
 * time spent preempted is not counted; the floor is the truth).
 */
#include "probe/calibrate.h"

#include <errno.h>
#include <time.h>
#include <unistd.h>

#include "memtop/abi.h"
#include "probe/attach.h"
#include "util/clock.h"

#define CALIB_CALLS 4000
#define CALIB_ROUNDS 3

void mt_calib_target(unsigned long size);
__asm__(".text\n"
	".globl mt_calib_target\n"
	".type mt_calib_target, @function\n"
	"mt_calib_target:\n"
	"\tpush %rbx\n"
	"\tpop %rbx\n"
	"\tret\n"
	".size mt_calib_target, .-mt_calib_target\n");

/* Nanoseconds per call of fn, best of CALIB_ROUNDS. */
static double time_calls(void (*volatile fn)(unsigned long))
{
	double best = 1e30;
	int r, i;

	for (r = 0; r < CALIB_ROUNDS; r++) {
		__u64 t0 = clock_thread_cpu_ns();
		double dt;

		for (i = 0; i < CALIB_CALLS; i++)
			fn(0);
		dt = (double)(clock_thread_cpu_ns() - t0) / CALIB_CALLS;
		if (dt < best)
			best = dt;
	}
	return best;
}

double calibrate_trap_ns(struct mt_bpf *b)
{
	void (*volatile fn)(unsigned long) = mt_calib_target;
	struct mt_probe_set *ps;
	double bare, probed;
	int e;

	e = bpf_loader_add_target(b, getpid());
	if (e)
		return e;
	ps = attach_self(b, (const void *)mt_calib_target, MT_FN_MALLOC);
	if (!ps) {
		e = -errno;
		bpf_loader_remove_target(b, getpid());
		return e;
	}
	probed = time_calls(fn);
	attach_detach(ps);
	bpf_loader_remove_target(b, getpid());
	bare = time_calls(fn);
	return probed > bare ? probed - bare : 1;
}

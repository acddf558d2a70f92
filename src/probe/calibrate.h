/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * calibrate.h - what one probe hit costs on this machine, measured at
 * start-up so the overhead memtop shows is this machine's, not a constant.
 */
#ifndef MEMTOP_CALIBRATE_H
#define MEMTOP_CALIBRATE_H

#include "probe/bpf_loader.h"

/* Time calls of a function of memtop's own whose first instruction the
 * kernel emulates (push %rbx), bare and under memtop's entry program
 * acting as for an unsampled malloc. Returns the added nanoseconds per
 * call (> 0), or a negative errno. Takes about 50 ms. */
double calibrate_trap_ns(struct mt_bpf *b);

#endif /* MEMTOP_CALIBRATE_H */

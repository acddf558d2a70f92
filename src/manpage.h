/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * manpage.h - memtop(1) in roff, generated from the tables --help and the
 * live view use (cli.c's options, keys.c's keys, legend.c's fields), so
 * the manual cannot drift from the program. `memtop --man` prints it;
 * the build writes build/memtop.1 with it and make install installs that.
 */
#ifndef MEMTOP_MANPAGE_H
#define MEMTOP_MANPAGE_H

#include <stdio.h>

/* Write the page to f. 0, or -EIO when writing failed. */
int manpage_write(FILE *f);

#endif /* MEMTOP_MANPAGE_H */

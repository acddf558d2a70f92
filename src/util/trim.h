/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * trim.h - white space off both ends of a line of a configuration file
 * (memtoprc, themes), in place.
 */
#ifndef MEMTOP_UTIL_TRIM_H
#define MEMTOP_UTIL_TRIM_H

/* s without leading white space, its trailing white space overwritten
 * with NULs: a pointer into s. */
char *trim_space(char *s);

#endif /* MEMTOP_UTIL_TRIM_H */

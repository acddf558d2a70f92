/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * one_site.h - for both samplers: a function holding a USDT probe must
 * exist exactly once in the binary (consumers attach to the notes, one
 * note per probe), so it is never inlined or cloned.
 */
#ifndef MEMTOP_SAMPLER_ONE_SITE_H
#define MEMTOP_SAMPLER_ONE_SITE_H

#ifdef __clang__ /* clang neither clones functions nor knows the attribute */
#define ONE_SITE __attribute__((noinline))
#else
#define ONE_SITE __attribute__((noinline, noclone))
#endif

#endif /* MEMTOP_SAMPLER_ONE_SITE_H */

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * inject_got.h - the allocator GOT slots of a running process, read from
 * its memory: the objects the dynamic loader has loaded (its link map, in
 * load order), the R_X86_64_JUMP_SLOT and R_X86_64_GLOB_DAT relocations
 * of each that bind one of the rerouted functions (sampler_abi.h,
 * enum mt_inject_fn), and the definition each function binds to.
 *
 * Nothing here stops or changes the process: it only reads /proc/PID/mem.
 */
#ifndef MEMTOP_PROBE_INJECT_GOT_H
#define MEMTOP_PROBE_INJECT_GOT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <linux/types.h>

#include "memtop/sampler_abi.h"

struct got_slot {
	__u64 dyn;  /* the object's dynamic section: identifies it */
	__u64 addr; /* where the slot is */
	__u64 orig; /* its value before memtop rerouted it */
	__u64 cur;  /* its value when read: what a reroute expects to replace */
	int fn;     /* enum mt_inject_fn */
	/* The pages of its object's PT_GNU_RELRO, as the loader protects
	 * them ([relro_lo, relro_hi), page-aligned; empty without one),
	 * when its program headers could be read (relro_known): a slot
	 * outside them is on a page the loader leaves writable. */
	__u64 relro_lo, relro_hi;
	bool relro_known;
};

/* The pages of the PT_GNU_RELRO of the object loaded at base as the
 * loader protects them, [*lo, *hi) rounded down at both ends as glibc's
 * _dl_protect_relro does (empty without one), from its program headers,
 * which lie in its first page when it was linked to load at 0 (shared
 * objects, PIE executables). 0, or -ENOENT when unknown (base 0: a
 * non-PIE executable; a header that does not read or hold together). */
int inject_got_relro(int mem_fd, __u64 base, __u64 *lo, __u64 *hi);

/* The loaded objects already scanned (by the run-time address of their
 * dynamic section, unique per object), so a rescan finds only new ones. */
struct got_seen {
	__u64 *dyn;
	size_t n, cap;
};

/* Address of the link map's first entry (the executable's), through the
 * executable's DT_DEBUG. -ENOENT for a process without a dynamic loader
 * (static), 0 or -errno otherwise. */
int inject_got_link_map(int mem_fd, pid_t pid, __u64 *first);

/* Has pid's loader mapped its objects: a link map, and r_debug's r_state
 * RT_CONSISTENT (not RT_ADD/RT_DELETE, a load or unload under way)? 0,
 * -EAGAIN (not yet), or -errno. For a command memtop just started. */
int inject_got_loader_done(pid_t pid);

/* For each function, the address it binds to: its definition in the first
 * object in load order that defines it (0 if none does), and that object
 * (its dynamic section's address) in owner. 0, -EAGAIN when the link
 * map changed under the walk (a dlclose: read it again), or -errno. */
int inject_got_targets(int mem_fd, __u64 first, __u64 target[MT_IFN_COUNT],
		       __u64 owner[MT_IFN_COUNT]);

/* Where name (a function) is defined: in the first object in load order
 * that defines it, as the loader binds it. 0 with *addr, -ENOENT when no
 * object does, -EAGAIN when the link map changed under the walk, or
 * -errno. */
int inject_got_symbol(int mem_fd, __u64 first, const char *name, __u64 *addr);

/* Append to *out the slots of the objects not in *seen (then added to
 * it), skipping the object whose dynamic section is at skip_dyn (0: none).
 * A slot's current value decides: a slot already pointing at entry[fn]
 * (rerouted by an earlier memtop that died) is taken with orig =
 * target[fn]; a slot bound elsewhere than target[fn] outside its own
 * object (RTLD_DEEPBIND, an interposer) is left alone; one still pointing
 * into its own object (lazy binding not done yet) or at target[fn] is
 * taken. An object whose slots are not relocated yet (a dlopen in
 * progress) is not added to *seen, so a later scan takes it, and so is
 * one whose tables vanish while they are read (a dlclose). 0, -EAGAIN
 * when the link map changed under the walk (read it again), or -errno. */
int inject_got_scan(int mem_fd, __u64 first, struct got_seen *seen, __u64 skip_dyn,
		    const __u64 entry[MT_IFN_COUNT], const __u64 target[MT_IFN_COUNT],
		    struct got_slot **out, size_t *nout);

/* The last component of the path of the object whose dynamic section is
 * at dyn ("libjemalloc.so.2"; "" for the executable). 0 or -errno. */
int inject_got_name(int mem_fd, __u64 first, __u64 dyn, char *base, size_t len);

/* Allocations the sampler would not see in this process: malloc defined
 * in the executable itself (malloc_owner: the dynamic section of the
 * object that defines it, inject_got_targets(); the executable's own
 * calls bind without a GOT), or a relocation of an entry point the
 * allocator itself defines and the sampler does not reroute (jemalloc's
 * xallocx, tcmalloc's tc_malloc, its aligned operator new). 1 with a few
 * words in why, 0 when none, -EAGAIN
 * (the link map changed under the walk) or -errno. */
int inject_got_blind_spot(int mem_fd, __u64 first, __u64 malloc_owner, char *why, size_t len);

/* Is the object whose dynamic section is at dyn still loaded? */
bool inject_got_loaded(int mem_fd, __u64 first, __u64 dyn);

/* Forget the objects of *seen no longer loaded: one loaded later at the
 * same address (a dlclose, then a dlopen) is scanned as the new object it
 * is. A chain that changes under the walk forgets nothing this time. */
void inject_got_seen_prune(int mem_fd, __u64 first, struct got_seen *seen);

void inject_got_seen_free(struct got_seen *seen);

#endif /* MEMTOP_PROBE_INJECT_GOT_H */

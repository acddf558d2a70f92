/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * alloc_family.h - one workload body for every allocator memtop probes
 * (mt_jemalloc.c, mt_tcmalloc.c, mt_family_libc.c): the including file
 * defines its allocator's site functions, this file runs them.
 *
 *   --mode=apis       every entry point of the allocator, each from its
 *                     own site function, --iterations=N times (default
 *                     200) over --duration=SECS (default 1); every second
 *                     block is freed by the site that allocated it.
 *   --mode=scenario   a leak (leak_site, --leak-rate bytes/s in 16 KiB
 *                     blocks), a cache that fills 32 MiB of 64 KiB entries
 *                     in 4 s (at the default 512 KiB rate some 64 live
 *                     samples: a smaller cache's in-use is too noisy to
 *                     look flat) and then only replaces 16 entries a second
 *                     (cache_site) and churn (churn_site, 4 MiB/s in 64 KiB
 *                     blocks freed at once), for --duration=SECS (default
 *                     20), gentle enough for memtop's default overhead
 *                     budget to keep every probe on. It burns 5% of a CPU
 *                     between steps, like a server working (within each
 *                     step: scn_burn never carries a shortfall, so a loaded
 *                     machine cannot starve the loop).
 *
 * Both print the exact truth (mt_workload.h) when the phase ends.
 */
#ifndef MEMTOP_ALLOC_FAMILY_H
#define MEMTOP_ALLOC_FAMILY_H

#include "scenario_common.h"

/* The C++ operators, called by their ELF names from C: whichever library
 * exports them first serves them (the allocator, when it has its own). */
void *_Znwm(size_t size);
void *_Znam(size_t size);
void *_ZnwmRKSt9nothrow_t(size_t size, const void *nothrow);
void *_ZnwmSt11align_val_t(size_t size, size_t align);
void _ZdlPv(void *p);
void _ZdaPv(void *p);
void _ZdlPvm(void *p, size_t size);
void _ZdaPvm(void *p, size_t size);
void _ZdlPvRKSt9nothrow_t(void *p, const void *nothrow);
void _ZdlPvmSt11align_val_t(void *p, size_t size, size_t align);

/* A NULL the compiler cannot see: GCC turns a literal realloc(NULL, n)
 * into malloc(n). */
static void *volatile fam_null;

/* What the including file provides. */
struct fam_def {
	const char *name;                 /* of the truth */
	struct wl_site *const *api_sites; /* --mode=apis: its sites */
	int napi_sites;
	void (*const *apis)(unsigned i); /* one call of each entry point */
	int napis;
	void (*leak)(unsigned long size);               /* leak_site */
	void (*cache)(void **slot, unsigned long size); /* cache_site: frees *slot first */
	void (*churn)(unsigned long size);              /* churn_site */
};

static struct wl_site fam_leak = { .function = "leak_site" };
static struct wl_site fam_cache = { .function = "cache_site" };
static struct wl_site fam_churn = { .function = "churn_site" };

static void *fam_checked(void *p, const char *what)
{
	if (!p)
		wl_die("allocation failed", what);
	return p;
}

/* Keep every second block; free the others from the allocating site with
 * `release` (the allocator's matching call). */
#define FAM_KEEP_OR_FREE(site, p, size, i, release)           \
	do {                                                  \
		wl_sink = (p);                                \
		if ((i)&1) {                                  \
			release;                              \
			wl_site_free((site), (site), (size)); \
		}                                             \
	} while (0)

#define FAM_ENTRIES 512
#define FAM_ENTRY (64 * KiB)
#define FAM_FILL_S 4.0
#define FAM_REPLACE_PER_S 16.0

static void *fam_cache_v[FAM_ENTRIES];
static unsigned long fam_inserted;
static double fam_leak_rate = 1 * MiB;

static void fam_step(void *arg, double t, double dt)
{
	const struct fam_def *d = arg;
	static double c_leak, c_churn;
	unsigned long due, n;

	due = t < FAM_FILL_S ? (unsigned long)(t * FAM_ENTRIES / FAM_FILL_S)
			     : FAM_ENTRIES + (unsigned long)((t - FAM_FILL_S) * FAM_REPLACE_PER_S);
	while (fam_inserted < due)
		d->cache(&fam_cache_v[fam_inserted++ % FAM_ENTRIES], FAM_ENTRY);
	for (n = scn_quota(&c_leak, fam_leak_rate, dt, 16 * KiB); n; n--)
		d->leak(16 * KiB);
	for (n = scn_quota(&c_churn, 4 * MiB, dt, 64 * KiB); n; n--)
		d->churn(64 * KiB);
}

static int fam_main(int argc, char **argv, const struct fam_def *d)
{
	static const char *const known[] = { "mode", "iterations", "duration", "leak-rate", NULL };
	static struct wl_site *const scn_sites[] = { &fam_leak, &fam_cache, &fam_churn };
	const char *mode = wl_arg(argc, argv, "mode");
	bool scenario = mode && !strcmp(mode, "scenario");
	struct wl_opts o;
	double duration, t0;

	wl_init(argc, argv, known, &o);
	if (mode && !scenario && strcmp(mode, "apis"))
		wl_die("--mode must be apis or scenario", mode);
	duration = wl_arg_double(argc, argv, "duration", scenario ? 20.0 : 1.0);
	fam_leak_rate = wl_arg_double(argc, argv, "leak-rate", fam_leak_rate);
	wl_ready();
	wl_wait_start(&o);
	t0 = wl_now();
	if (scenario) {
		scn_loop(t0, duration, 0.05, fam_step, (void *)d);
		wl_truth_print(d->name, scn_sites, 3);
	} else {
		uint64_t iterations = wl_arg_u64(argc, argv, "iterations", 200);

		for (uint64_t i = 0; i < iterations; i++) {
			for (int k = 0; k < d->napis; k++)
				d->apis[k]((unsigned)i);
			wl_pace(t0, i + 1, iterations, duration);
		}
		wl_truth_print(d->name, d->api_sites, d->napi_sites);
	}
	wl_hold_exit(&o);
}

#endif /* MEMTOP_ALLOC_FAMILY_H */

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * device_source.h - the device-memory source (docs/device-memory.md):
 * entry and return uprobes, per PID, on the allocate and free calls of
 * the device APIs a process has mapped (Vulkan's loader libvulkan.so.1,
 * OpenCL's ICD loader libOpenCL.so.1, CUDA's driver libcuda.so.1).
 * bpf/device.bpf.h records every such allocation (weight 1) in the device
 * tier. A library mapped later (dlopen) is found by the next scan.
 */
#ifndef MEMTOP_PROBE_DEVICE_SOURCE_H
#define MEMTOP_PROBE_DEVICE_SOURCE_H

#include <stddef.h>
#include <sys/types.h>
#include <linux/types.h>

#include "probe/bpf_loader.h"

/* One row of an API's table: an exported function and what it is. */
struct device_entry {
	const char *symbol;
	__u32 fn;      /* enum mt_dev_fn: the attach cookie */
	__u8 nargs;    /* argument registers the entry program reads */
	bool ret;      /* needs its return (the handle, the properties) */
	bool required; /* the API is not followed without it */
};

struct device_api {
	const char *name;    /* as the views say it (model/device_tier.c's words) */
	const char *library; /* the file name of the library to probe */
	__u32 api;           /* enum mt_dev_api */
	const struct device_entry *entries;
	size_t nentries;
};

/* Every API memtop follows, for listing (docs, tests). Returns the count. */
size_t device_source_apis(const struct device_api *const **v);

struct device_probes;

/* A process's device probes: none yet (device_source_scan attaches them). */
struct device_probes *device_probes_new(pid_t pid);
/* Release every link (nothing stays attached) and free. NULL is fine. */
void device_probes_free(struct device_probes *dp);

/* Look at pid's mappings for the libraries of the APIs not followed yet
 * (at each of the first 10 calls, then at one call in 5: a process reads
 * maps of its own at most that often), and attach to each found: all of its table's functions it exports (two
 * links for one that needs its return). Returns how many APIs it started
 * following, with one line per API in msg ("vulkan (libvulkan.so.1):
 * 4 functions, 0 single-stepped"), or -errno with one line in msg ("" when
 * the maps could not be read: tried again later); an API that cannot be
 * attached is left with nothing attached and not tried again. */
int device_source_scan(struct mt_bpf *b, struct device_probes *dp, char *msg, size_t len);

/* The APIs followed, comma-separated ("vulkan,opencl"), "" for none. */
const char *device_probes_apis(const struct device_probes *dp);

#endif /* MEMTOP_PROBE_DEVICE_SOURCE_H */

// SPDX-License-Identifier: GPL-2.0-only
/*
 * device_source.c - each device API's probe table, as data, and their
 * attachment per PID (device_source.h).
 *
 * A table lists the exported allocate and free entry points of one
 * library, the cookie that tells bpf/device.bpf.h what each is, and
 * whether its return is needed. The library is found in the process's
 * maps by file name and probed through /proc/PID/map_files, so the file
 * probed is the one the process mapped. Two names at one address (an
 * alias such as vkGetPhysicalDeviceMemoryProperties2KHR) are probed once.
 * Each entry point is probed where probe_place.c puts it (docs/probes.md
 * section 3): the first instruction the kernel emulates, in entry state
 * for a function whose return is needed, with the arguments the program
 * reads still in their registers; else the entry, single-stepped.
 */
#include "probe/device_source.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>

#include "memtop/abi.h"
#include "probe/link_release.h"
#include "probe/probe_place.h"
#include "readers/elf_file.h"
#include "readers/proc_maps.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* The Vulkan loader: an application's calls through its exports. The
 * memory properties give a memory type's flags (device-local,
 * host-visible) to the allocations that name it. */
static const struct device_entry vulkan_entries[] = {
	{ "vkAllocateMemory", MT_DEVFN_VK_ALLOC, 4, true, true },
	{ "vkFreeMemory", MT_DEVFN_VK_FREE, 2, false, true },
	{ "vkGetPhysicalDeviceMemoryProperties", MT_DEVFN_VK_PROPS, 2, true, false },
	{ "vkGetPhysicalDeviceMemoryProperties2", MT_DEVFN_VK_PROPS2, 2, true, false },
	{ "vkGetPhysicalDeviceMemoryProperties2KHR", MT_DEVFN_VK_PROPS2, 2, true, false },
};

/* The OpenCL ICD loader (ocl-icd, Khronos'): buffers and SVM, with the
 * reference counts of cl_mem objects (a retained buffer outlives a
 * release). */
static const struct device_entry opencl_entries[] = {
	{ "clCreateBuffer", MT_DEVFN_CL_BUFFER, 3, true, true },
	{ "clCreateBufferWithProperties", MT_DEVFN_CL_BUFFER_PROPS, 4, true, false },
	{ "clSVMAlloc", MT_DEVFN_CL_SVM_ALLOC, 3, true, false },
	{ "clSVMFree", MT_DEVFN_CL_SVM_FREE, 2, false, false },
	{ "clRetainMemObject", MT_DEVFN_CL_RETAIN, 1, false, true },
	{ "clReleaseMemObject", MT_DEVFN_CL_RELEASE, 1, false, true },
};

/* CUDA's driver API (what the runtime, cudart, calls in turn). */
static const struct device_entry cuda_entries[] = {
	{ "cuMemAlloc_v2", MT_DEVFN_CU_ALLOC, 2, true, true },
	{ "cuMemAllocAsync", MT_DEVFN_CU_ALLOC, 2, true, false },
	{ "cuMemAllocManaged", MT_DEVFN_CU_MANAGED, 2, true, false },
	{ "cuMemAllocPitch_v2", MT_DEVFN_CU_PITCH, 4, true, false },
	{ "cuMemCreate", MT_DEVFN_CU_CREATE, 3, true, false },
	{ "cuMemHostAlloc", MT_DEVFN_CU_HOST, 2, true, false },
	{ "cuMemAllocHost_v2", MT_DEVFN_CU_HOST, 2, true, false },
	{ "cuMemFree_v2", MT_DEVFN_CU_FREE, 1, false, true },
	{ "cuMemFreeAsync", MT_DEVFN_CU_FREE, 1, false, false },
	{ "cuMemFreeHost", MT_DEVFN_CU_FREE, 1, false, false },
	{ "cuMemRelease", MT_DEVFN_CU_RELEASE, 1, false, false },
};

static const struct device_api vulkan = { "vulkan", "libvulkan.so.1", MT_DEV_VULKAN, vulkan_entries,
					  N(vulkan_entries) };
static const struct device_api opencl = { "opencl", "libOpenCL.so.1", MT_DEV_OPENCL, opencl_entries,
					  N(opencl_entries) };
static const struct device_api cuda = { "cuda", "libcuda.so.1", MT_DEV_CUDA, cuda_entries,
					N(cuda_entries) };

static const struct device_api *const all[] = { &vulkan, &opencl, &cuda };

size_t device_source_apis(const struct device_api *const **v)
{
	*v = all;
	return N(all);
}

/* Links of one process: at most two per entry of every table. */
#define MAX_LINKS (2 * (N(vulkan_entries) + N(opencl_entries) + N(cuda_entries)))

/* Scans that always read the maps (the attach and the next refreshes,
 * when a program opens its device libraries), then one in SCAN_EVERY. */
#define SCAN_EAGER 10
#define SCAN_EVERY 5

struct device_probes {
	pid_t pid;
	unsigned long scans; /* device_source_scan calls so far */
	bool tried[N(all)];  /* followed, or failed for good */
	bool followed[N(all)];
	struct bpf_link *links[MAX_LINKS];
	size_t nlinks;
	char apis[64];
};

struct device_probes *device_probes_new(pid_t pid)
{
	struct device_probes *dp = calloc(1, sizeof(*dp));

	if (dp)
		dp->pid = pid;
	return dp;
}

void device_probes_free(struct device_probes *dp)
{
	if (!dp)
		return;
	for (size_t i = 0; i < dp->nlinks; i++)
		link_release(dp->links[i]);
	free(dp);
}

const char *device_probes_apis(const struct device_probes *dp)
{
	return dp ? dp->apis : "";
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* Whether a file name is the library's soname, or the soname with more
 * of the version after it (libvulkan.so.1.3.239, the file the soname's
 * link names). */
static bool is_library(const char *name, const char *library)
{
	size_t n = strlen(library);

	return !strncmp(name, library, n) && (name[n] == '\0' || name[n] == '.');
}

/* The first mapping of the library in maps, or NULL. */
static const struct mt_map *find_library(const struct mt_maps *maps, const char *library)
{
	for (size_t i = 0; i < maps->n; i++) {
		const struct mt_map *m = &maps->v[i];

		if (m->path && m->path[0] == '/' && !m->deleted &&
		    is_library(base_name(m->path), library))
			return m;
	}
	return NULL;
}

static int attach_one(struct mt_bpf *b, struct device_probes *dp, const char *path, __u64 off,
		      const struct device_entry *e, bool ret)
{
	LIBBPF_OPTS(bpf_uprobe_opts, opts, .bpf_cookie = e->fn, .retprobe = ret);
	struct bpf_link *l;

	if (dp->nlinks >= MAX_LINKS)
		return -ENOSPC;
	l = bpf_program__attach_uprobe_opts(bpf_loader_prog_device(b, ret), dp->pid, path, off,
					    &opts);
	if (!l)
		return errno ? -errno : -EINVAL;
	dp->links[dp->nlinks++] = l;
	return 0;
}

/* Bytes of a function given to the placement decoder, at most. */
#define PLACE_CODE_MAX 4096

/* Where to probe the function at file offset off (size bytes): off plus
 * the chosen instruction's offset; *slow when it is single-stepped. */
static __u64 place(struct elf_file *ef, const struct device_entry *e, __u64 off, __u64 size,
		   bool *slow)
{
	static __u8 code[PLACE_CODE_MAX];
	size_t len = size < sizeof(code) ? size : sizeof(code);
	struct probe_place pp;

	*slow = true;
	if (!len || elf_file_read(ef, off, code, len) ||
	    probe_place_choose_nargs(code, len, (__u32)size, e->ret, e->nargs, &pp))
		return off;
	*slow = !pp.emulated;
	return off + pp.offset;
}

/* Attach api's table to the file at path (dp->pid's mapping of it).
 * Returns the functions probed, or -errno with msg; on failure the links
 * made for it are released. */
static int attach_api(struct mt_bpf *b, struct device_probes *dp, const struct device_api *api,
		      const char *path, int *nslow, char *msg, size_t len)
{
	struct elf_file *ef = elf_file_open(path);
	size_t first = dp->nlinks, i, k;
	__u64 offs[16];
	int nfn = 0, e = 0;

	*nslow = 0;

	if (!ef) {
		e = errno ? -errno : -ENOEXEC;
		snprintf(msg, len, "cannot read %s: %s", api->library, strerror(-e));
		return e;
	}
	for (i = 0; i < api->nentries && !e; i++) {
		const struct device_entry *ent = &api->entries[i];
		__u64 off, size, at;
		bool dup = false, slow;

		if (elf_file_func_offset(ef, ent->symbol, &off, &size)) {
			if (ent->required) {
				e = -ENOENT;
				snprintf(msg, len, "%s does not export %s", api->library,
					 ent->symbol);
			}
			continue;
		}
		for (k = 0; k < (size_t)nfn && !dup; k++)
			dup = offs[k] == off;
		if (dup || nfn >= (int)N(offs))
			continue;
		at = place(ef, ent, off, size, &slow);
		e = attach_one(b, dp, path, at, ent, false);
		if (!e && ent->ret)
			e = attach_one(b, dp, path, at, ent, true);
		*nslow += slow;
		if (e)
			snprintf(msg, len, "cannot probe %s in %s: %s", ent->symbol, api->library,
				 strerror(-e));
		else
			offs[nfn++] = off;
	}
	elf_file_close(ef);
	if (e) {
		while (dp->nlinks > first)
			link_release(dp->links[--dp->nlinks]);
		return e;
	}
	return nfn;
}

int device_source_scan(struct mt_bpf *b, struct device_probes *dp, char *msg, size_t len)
{
	struct mt_maps maps = { 0 };
	size_t i, used = 0;
	int e, started = 0;

	msg[0] = '\0';
	for (i = 0; i < N(all) && dp->tried[i]; i++)
		;
	if (i == N(all))
		return 0; /* every API decided: nothing to look for */
	if (dp->scans++ >= SCAN_EAGER && dp->scans % SCAN_EVERY)
		return 0;
	/* a process going away, or briefly unreadable: looked at again at
	 * the next scan, without a word */
	e = proc_maps_read(dp->pid, &maps);
	if (e)
		return e;
	for (i = 0; i < N(all); i++) {
		const struct mt_map *m;
		char path[96], one[160];
		int n, nslow;

		if (dp->tried[i] || !(m = find_library(&maps, all[i]->library)))
			continue;
		dp->tried[i] = true;
		snprintf(path, sizeof(path), "/proc/%d/map_files/%llx-%llx", dp->pid,
			 (unsigned long long)m->start, (unsigned long long)m->end);
		n = attach_api(b, dp, all[i], path, &nslow, one, sizeof(one));
		if (n < 0) {
			e = n;
			snprintf(msg + used, len - used, "%s%s memory not followed: %s",
				 used ? "; " : "", all[i]->name, one);
		} else {
			dp->followed[i] = true;
			started++;
			snprintf(msg + used, len - used, "%s%s (%s): %d functions, %d single-stepped",
				 used ? "; " : "", all[i]->name, all[i]->library, n, nslow);
			snprintf(dp->apis + strlen(dp->apis), sizeof(dp->apis) - strlen(dp->apis),
				 "%s%s", dp->apis[0] ? "," : "", all[i]->name);
		}
		used = strlen(msg);
		if (used >= len)
			used = len - 1;
	}
	proc_maps_free(&maps);
	return started ? started : e;
}

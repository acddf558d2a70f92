// SPDX-License-Identifier: GPL-2.0-only
/*
 * cuda_standin.c - a STAND-IN for CUDA's driver library, built as
 * build/workloads/cuda-standin/libcuda.so.1 for the tests of memtop's
 * device source on machines without a GPU (docs/device-memory.md). It is
 * not NVIDIA's library and drives no device: it exports the memory calls
 * memtop probes with the driver API's C signatures and results
 * (CUDA_SUCCESS 0, the handle through the first argument), backed by host
 * memory, so a workload that calls them is seen as one calling the real
 * libcuda.so.1 would be. Device pointers are the host blocks' addresses;
 * cuMemCreate's handles are small integers, as opaque as the real ones.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef uint64_t CUdeviceptr;
typedef uint64_t CUmemGenericAllocationHandle;
typedef void *CUstream;

#define CUDA_SUCCESS 0
#define CUDA_ERROR_INVALID_VALUE 1
#define CUDA_ERROR_OUT_OF_MEMORY 2
#define STANDIN_HANDLES 4096

/* CUmemAllocationProp's head: type, requested handle types, location. */
struct standin_prop {
	int type;
	int handle_types;
	int location_type;
	int location_id;
};

static void *handles[STANDIN_HANDLES];

#define EXPORT __attribute__((visibility("default"), noinline))

EXPORT CUresult cuInit(unsigned int flags)
{
	(void)flags;
	return CUDA_SUCCESS;
}

static CUresult host_block(CUdeviceptr *dptr, size_t size)
{
	void *p;

	if (!dptr || !size)
		return CUDA_ERROR_INVALID_VALUE;
	p = aligned_alloc(256, (size + 255) & ~(size_t)255);
	if (!p)
		return CUDA_ERROR_OUT_OF_MEMORY;
	memset(p, 0, size < 4096 ? size : 4096);
	*dptr = (CUdeviceptr)(uintptr_t)p;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t size)
{
	return host_block(dptr, size);
}

EXPORT CUresult cuMemAllocManaged(CUdeviceptr *dptr, size_t size, unsigned int flags)
{
	(void)flags;
	return host_block(dptr, size);
}

EXPORT CUresult cuMemAllocAsync(CUdeviceptr *dptr, size_t size, CUstream stream)
{
	(void)stream;
	return host_block(dptr, size);
}

EXPORT CUresult cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pitch, size_t width, size_t height,
				   unsigned int elem)
{
	size_t p = (width + 511) & ~(size_t)511;

	(void)elem;
	if (!pitch || !height)
		return CUDA_ERROR_INVALID_VALUE;
	*pitch = p;
	return host_block(dptr, p * height);
}

EXPORT CUresult cuMemFree_v2(CUdeviceptr dptr)
{
	free((void *)(uintptr_t)dptr);
	return CUDA_SUCCESS;
}

EXPORT CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream stream)
{
	(void)stream;
	return cuMemFree_v2(dptr);
}

EXPORT CUresult cuMemHostAlloc(void **pp, size_t size, unsigned int flags)
{
	(void)flags;
	return host_block((CUdeviceptr *)pp, size);
}

EXPORT CUresult cuMemAllocHost_v2(void **pp, size_t size)
{
	return host_block((CUdeviceptr *)pp, size);
}

EXPORT CUresult cuMemFreeHost(void *p)
{
	free(p);
	return CUDA_SUCCESS;
}

EXPORT CUresult cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size,
			    const struct standin_prop *prop, unsigned long long flags)
{
	CUdeviceptr p;
	CUresult r;

	(void)flags;
	if (!handle || !prop)
		return CUDA_ERROR_INVALID_VALUE;
	for (size_t i = 1; i < STANDIN_HANDLES; i++) {
		if (handles[i])
			continue;
		r = host_block(&p, size);
		if (r)
			return r;
		handles[i] = (void *)(uintptr_t)p;
		*handle = i;
		return CUDA_SUCCESS;
	}
	return CUDA_ERROR_OUT_OF_MEMORY;
}

EXPORT CUresult cuMemRelease(CUmemGenericAllocationHandle handle)
{
	if (!handle || handle >= STANDIN_HANDLES || !handles[handle])
		return CUDA_ERROR_INVALID_VALUE;
	free(handles[handle]);
	handles[handle] = NULL;
	return CUDA_SUCCESS;
}

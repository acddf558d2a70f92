// cflags: -O2 -DCL_TARGET_OPENCL_VERSION=200
// ldflags: -lOpenCL
/*
 * mt_opencl.c - OpenCL device memory through the ICD loader
 * (libOpenCL.so.1) on the first platform's first device (PoCL on a
 * machine without a GPU): leak_cl_buffers() leaks a buffer every step,
 * pool_cl_buffers() keeps at most --pool-max of them (device_common.h has
 * the protocol and the truth). Reference counts are exercised: every
 * pooled buffer is retained once more when made (a second owner, as a
 * queued command or a sub-object would), so it is freed only at its
 * second clReleaseMemObject; the truth counts a free there.
 *
 * --mode=svm: the pool is of clSVMAlloc / clSVMFree blocks instead (kind
 * "managed"); --mode=hostptr: the leaked buffers are CL_MEM_ALLOC_HOST_PTR
 * (kind "host-visible"); --mode=retain: every other evicted buffer keeps
 * its second owner's reference for good, so it stays allocated (in use
 * in the truth): a tool that freed at the first release would miss it.
 */
#include <CL/cl.h>

#include "device_common.h"

static cl_context ctx;
static struct dev_site_truth leak = { "leak_cl_buffers", 1 }, pool = { "pool_cl_buffers", 0 };
static void *pool_v[DEV_POOL_MAX];
static unsigned pool_n, pool_head;
static cl_mem_flags leak_flags = CL_MEM_READ_WRITE;
static int svm, retain;
static unsigned long evicted;

WL_SITE static void leak_cl_buffers(uint64_t size)
{
	cl_int err;
	cl_mem m = clCreateBuffer(ctx, leak_flags, size, NULL, &err);

	if (!m)
		dev_die("clCreateBuffer failed");
	leak.alloc_calls++;
	leak.inuse_bytes += size;
}

WL_SITE static void pool_cl_buffers(uint64_t size, unsigned max)
{
	cl_int err;
	void *p;

	if (pool_n == max) {
		int freed = 1;

		if (svm) {
			clSVMFree(ctx, pool_v[pool_head]);
		} else {
			clReleaseMemObject(pool_v[pool_head]); /* the pool's */
			if (retain && evicted % 2)
				freed = 0; /* the second owner keeps it */
			else
				clReleaseMemObject(pool_v[pool_head]); /* the last: freed */
		}
		evicted++;
		pool_head = (pool_head + 1) % max;
		pool_n--;
		if (freed) {
			pool.free_calls++;
			pool.inuse_bytes -= size;
		}
	}
	if (svm) {
		p = clSVMAlloc(ctx, CL_MEM_READ_WRITE, size, 0);
	} else {
		p = clCreateBuffer(ctx, CL_MEM_READ_WRITE, size, NULL, &err);
		if (p)
			clRetainMemObject(p);
	}
	if (!p)
		dev_die("pool allocation failed");
	pool_v[(pool_head + pool_n++) % max] = p;
	pool.alloc_calls++;
	pool.inuse_bytes += size;
}

int main(int argc, char **argv)
{
	cl_platform_id plat;
	cl_device_id dev;
	cl_int err;
	struct dev_opts o;
	struct dev_site_truth sites[2];
	double t0, t0_wall;

	dev_parse(argc, argv, &o);
	svm = !strcmp(o.mode, "svm");
	retain = !strcmp(o.mode, "retain");
	if (!strcmp(o.mode, "hostptr"))
		leak_flags |= CL_MEM_ALLOC_HOST_PTR;
	if (clGetPlatformIDs(1, &plat, NULL) != CL_SUCCESS)
		dev_die("no OpenCL platform");
	if (clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL) != CL_SUCCESS)
		dev_die("no OpenCL device");
	ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
	if (!ctx)
		dev_die("clCreateContext failed");
	dev_ready_and_wait();
	t0 = dev_now();
	t0_wall = dev_wall();
	while (dev_now() - t0 < o.duration_s) {
		for (unsigned i = 0; i < o.leak_per_step; i++)
			leak_cl_buffers(o.leak_size);
		for (unsigned i = 0; i < o.pool_per_step; i++)
			pool_cl_buffers(o.pool_size, o.pool_max);
		dev_sleep_ms(o.step_ms);
	}
	sites[0] = leak;
	sites[1] = pool;
	dev_print_truth("mt_opencl", t0_wall, &o,
			leak_flags & CL_MEM_ALLOC_HOST_PTR ? "host-visible" : "device-local", sites,
			2);
	dev_hold();
}

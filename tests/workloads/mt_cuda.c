// cflags: -O2
// ldflags: -ldl
/*
 * mt_cuda.c - CUDA driver-API device memory, through whatever
 * libcuda.so.1 $MT_CUDA_LIB names (the tests give the stand-in,
 * tests/device/cuda_standin.c; on a GPU machine, the real one), opened
 * with dlopen when the phase starts, as frameworks do: so memtop must
 * find a library mapped after it attached. It prints "MAPPED" once the
 * library is loaded and waits for a second byte on stdin to begin the
 * phase. leak_cuda_memory() leaks a
 * cuMemAlloc_v2 block every step; pool_cuda_memory() keeps at most
 * --pool-max blocks of the kind --mode names (device_common.h has the
 * protocol and the truth):
 *
 *   alloc (default)  cuMemAlloc_v2 / cuMemFree_v2          device-local
 *   async            cuMemAllocAsync / cuMemFreeAsync      device-local
 *   pitch            cuMemAllocPitch_v2 / cuMemFree_v2     device-local
 *                    (--pool-size is the width; 4 rows; pitch rounds to 512)
 *   managed          cuMemAllocManaged / cuMemFree_v2      managed
 *   vmm              cuMemCreate / cuMemRelease            device-local, device 0
 *   host             cuMemHostAlloc / cuMemFreeHost        pinned-host
 */
#include <dlfcn.h>

#include "device_common.h"

typedef int (*alloc_fn)(uint64_t *, size_t);
static int (*p_init)(unsigned);
static int (*p_alloc)(uint64_t *, size_t);
static int (*p_async)(uint64_t *, size_t, void *);
static int (*p_pitch)(uint64_t *, size_t *, size_t, size_t, unsigned);
static int (*p_managed)(uint64_t *, size_t, unsigned);
static int (*p_free)(uint64_t);
static int (*p_free_async)(uint64_t, void *);
static int (*p_create)(uint64_t *, size_t, const void *, unsigned long long);
static int (*p_release)(uint64_t);
static int (*p_host)(void **, size_t, unsigned);
static int (*p_free_host)(void *);

static struct dev_site_truth leak = { "leak_cuda_memory", 1 }, pool = { "pool_cuda_memory", 0 };
static uint64_t pool_v[DEV_POOL_MAX];
static unsigned pool_n, pool_head;
static const char *mode;

WL_SITE static void leak_cuda_memory(uint64_t size)
{
	uint64_t d;

	if (p_alloc(&d, size))
		dev_die("cuMemAlloc_v2 failed");
	leak.alloc_calls++;
	leak.inuse_bytes += size;
}

/* Bytes a pool block of size holds, as the driver reports them. */
static uint64_t pool_bytes(uint64_t size)
{
	return !strcmp(mode, "pitch") ? ((size + 511) & ~511ULL) * 4 : size;
}

WL_SITE static void pool_cuda_memory(uint64_t size, unsigned max)
{
	struct {
		int type, handle_types, location_type, location_id;
		void *meta;
		unsigned char flags[8];
	} prop = { 1, 0, 1, 0, NULL, { 0 } };
	uint64_t d = 0;
	size_t pitch;
	int r;

	if (pool_n == max) {
		uint64_t old = pool_v[pool_head];

		if (!strcmp(mode, "async"))
			p_free_async(old, NULL);
		else if (!strcmp(mode, "vmm"))
			p_release(old);
		else if (!strcmp(mode, "host"))
			p_free_host((void *)(uintptr_t)old);
		else
			p_free(old);
		pool_head = (pool_head + 1) % max;
		pool_n--;
		pool.free_calls++;
		pool.inuse_bytes -= pool_bytes(size);
	}
	if (!strcmp(mode, "async"))
		r = p_async(&d, size, NULL);
	else if (!strcmp(mode, "pitch"))
		r = p_pitch(&d, &pitch, size, 4, 4);
	else if (!strcmp(mode, "managed"))
		r = p_managed(&d, size, 1);
	else if (!strcmp(mode, "vmm"))
		r = p_create(&d, size, &prop, 0);
	else if (!strcmp(mode, "host"))
		r = p_host((void **)&d, size, 0);
	else
		r = p_alloc(&d, size);
	if (r)
		dev_die("pool allocation failed");
	pool_v[(pool_head + pool_n++) % max] = d;
	pool.alloc_calls++;
	pool.inuse_bytes += pool_bytes(size);
}

static void *need(void *lib, const char *name)
{
	void *f = dlsym(lib, name);

	if (!f)
		dev_die(name);
	return f;
}

int main(int argc, char **argv)
{
	const char *path = getenv("MT_CUDA_LIB");
	struct dev_opts o;
	struct dev_site_truth sites[2];
	double t0, t0_wall;
	void *lib;

	dev_parse(argc, argv, &o);
	mode = o.mode[0] ? o.mode : "alloc";
	dev_ready_and_wait();
	lib = dlopen(path ? path : "libcuda.so.1", RTLD_NOW);
	if (!lib)
		dev_die(dlerror());
	/* the library is mapped now: say so, and start when told (the tests
	 * wait for memtop to say it follows it, or that it cannot) */
	printf("MAPPED\n");
	fflush(stdout);
	{
		char c;

		if (read(0, &c, 1) != 1)
			_exit(0);
	}
	p_init = need(lib, "cuInit");
	p_alloc = need(lib, "cuMemAlloc_v2");
	p_async = need(lib, "cuMemAllocAsync");
	p_pitch = need(lib, "cuMemAllocPitch_v2");
	p_managed = need(lib, "cuMemAllocManaged");
	p_free = need(lib, "cuMemFree_v2");
	p_free_async = need(lib, "cuMemFreeAsync");
	p_create = need(lib, "cuMemCreate");
	p_release = need(lib, "cuMemRelease");
	p_host = need(lib, "cuMemHostAlloc");
	p_free_host = need(lib, "cuMemFreeHost");
	if (p_init(0))
		dev_die("cuInit failed");
	t0 = dev_now();
	t0_wall = dev_wall();
	while (dev_now() - t0 < o.duration_s) {
		for (unsigned i = 0; i < o.leak_per_step; i++)
			leak_cuda_memory(o.leak_size);
		for (unsigned i = 0; i < o.pool_per_step; i++)
			pool_cuda_memory(o.pool_size, o.pool_max);
		dev_sleep_ms(o.step_ms);
	}
	sites[0] = leak;
	sites[1] = pool;
	dev_print_truth("mt_cuda", t0_wall, &o, "device-local", sites, 2);
	dev_hold();
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * device_loop.c - a device-memory loop for tests/bench/device.py: each
 * iteration allocates one buffer of SIZE bytes through Vulkan
 * (vkAllocateMemory, vkMapMemory, vkFreeMemory) or OpenCL (clCreateBuffer,
 * clEnqueueFillBuffer, clReleaseMemObject), writes WORK bytes of it REPS
 * times (the frame's or kernel's work between allocations; WORK 0:
 * allocate and free only; WORK larger than SIZE: of a host buffer of its
 * own instead, as a frame that allocates one small uniform buffer and
 * works elsewhere), and frees it. Runs flat out until stdin closes and prints, once
 * a second, "win START ITERS_PER_S CPU_NS_PER_ITER", START the window's
 * beginning on CLOCK_MONOTONIC (seconds), so a reader can leave out the
 * windows that began before a change it made.
 *
 *     device_loop vulkan|opencl SIZE WORK REPS
 */
#include <CL/cl.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <vulkan/vulkan.h>

static double now(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static VkDevice vk_dev;
static cl_context cl_ctx;
static cl_command_queue cl_q;

static void vk_setup(void)
{
	VkApplicationInfo app = { .sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
				  .apiVersion = VK_API_VERSION_1_1 };
	VkInstanceCreateInfo ici = { .sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
				     .pApplicationInfo = &app };
	float prio = 1.0f;
	VkDeviceQueueCreateInfo qci = { .sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
					.queueCount = 1,
					.pQueuePriorities = &prio };
	VkDeviceCreateInfo dci = { .sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
				   .queueCreateInfoCount = 1,
				   .pQueueCreateInfos = &qci };
	VkInstance inst;
	VkPhysicalDevice phys;
	uint32_t n = 1;

	if (vkCreateInstance(&ici, NULL, &inst) || vkEnumeratePhysicalDevices(inst, &n, &phys) < 0 ||
	    !n || vkCreateDevice(phys, &dci, NULL, &vk_dev))
		exit(2);
}

static unsigned reps = 1;
static unsigned char *scratch; /* WORK > SIZE: the host buffer worked on */

/* The work between allocations on the host buffer (WORK > SIZE). */
static void host_work(size_t work)
{
	for (unsigned r = 0; r < reps; r++)
		memset(scratch, 0x5a + r, work);
	__asm__ volatile("" : : "r"(scratch) : "memory");
}

static void vk_iter(size_t size, size_t work)
{
	VkMemoryAllocateInfo info = { .sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
				      .allocationSize = size };
	VkDeviceMemory mem;
	void *p;

	if (vkAllocateMemory(vk_dev, &info, NULL, &mem))
		exit(3);
	if (scratch) {
		host_work(work);
	} else if (work) {
		if (vkMapMemory(vk_dev, mem, 0, VK_WHOLE_SIZE, 0, &p))
			exit(3);
		for (unsigned r = 0; r < reps; r++)
			memset(p, 0x5a + r, work);
		vkUnmapMemory(vk_dev, mem);
	}
	vkFreeMemory(vk_dev, mem, NULL);
}

static void cl_setup(void)
{
	cl_platform_id plat;
	cl_device_id dev;
	cl_int err;

	if (clGetPlatformIDs(1, &plat, NULL) ||
	    clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL))
		exit(2);
	cl_ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
	cl_q = cl_ctx ? clCreateCommandQueueWithProperties(cl_ctx, dev, NULL, &err) : NULL;
	if (!cl_q)
		exit(2);
}

static void cl_iter(size_t size, size_t work)
{
	static const unsigned char pattern = 0x5a;
	cl_int err;
	cl_mem m = clCreateBuffer(cl_ctx, CL_MEM_READ_WRITE, size, NULL, &err);

	if (!m)
		exit(3);
	if (scratch) {
		host_work(work);
		clReleaseMemObject(m);
		return;
	}
	for (unsigned r = 0; work && r < reps; r++)
		if (clEnqueueFillBuffer(cl_q, m, &pattern, 1, 0, work, 0, NULL, NULL))
			exit(3);
	if (work && clFinish(cl_q))
		exit(3);
	clReleaseMemObject(m);
}

int main(int argc, char **argv)
{
	int vk = argc == 5 && !strcmp(argv[1], "vulkan");
	size_t size = argc == 5 ? strtoul(argv[2], NULL, 0) : 0;
	size_t work = argc == 5 ? strtoul(argv[3], NULL, 0) : 0;
	double w0, c0;
	unsigned long iters = 0;
	struct pollfd pfd = { .fd = 0, .events = POLLIN };

	if (argc == 5)
		reps = (unsigned)strtoul(argv[4], NULL, 0);
	if (argc != 5 || (!vk && strcmp(argv[1], "opencl")) || !size || !reps) {
		fprintf(stderr, "usage: device_loop vulkan|opencl SIZE WORK REPS\n");
		return 1;
	}
	if (work > size && !(scratch = malloc(work)))
		return 1;
	if (vk)
		vk_setup();
	else
		cl_setup();
	printf("READY pid=%d\n", getpid());
	fflush(stdout);
	w0 = now(CLOCK_MONOTONIC);
	c0 = now(CLOCK_PROCESS_CPUTIME_ID);
	for (;;) {
		double w, c;

		if (vk)
			vk_iter(size, work);
		else
			cl_iter(size, work);
		iters++;
		if ((iters & 15) || (w = now(CLOCK_MONOTONIC)) - w0 < 1.0)
			continue;
		c = now(CLOCK_PROCESS_CPUTIME_ID);
		printf("win %.3f %.1f %.0f\n", w0, iters / (w - w0), (c - c0) * 1e9 / iters);
		fflush(stdout);
		if (poll(&pfd, 1, 0) > 0)
			return 0; /* stdin closed (or written): done */
		iters = 0;
		w0 = w;
		c0 = c;
	}
}

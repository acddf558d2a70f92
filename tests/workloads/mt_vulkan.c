// cflags: -O2
// ldflags: -lvulkan
// SPDX-License-Identifier: GPL-2.0-only
/*
 * mt_vulkan.c - Vulkan device memory through the loader (libvulkan.so.1)
 * on the first physical device (Mesa's lavapipe on a machine without a
 * GPU): leak_vk_memory() leaks a buffer's worth of memory every step,
 * pool_vk_memory() keeps at most --pool-max allocations (device_common.h
 * has the protocol and the truth). The memory type is the first one the
 * device has, read with vkGetPhysicalDeviceMemoryProperties; its flags go
 * into the truth's "kind".
 *
 * The properties are read when the phase starts, as an application that
 * picks a memory type for each new resource does: a process that read
 * them only before memtop attached is reported with its type index.
 * --mode=props2 reads them with ...Properties2 instead; --mode=noprops
 * never reads them (memtop can then report only the type index).
 */
#include <vulkan/vulkan.h>

#include "device_common.h"

static VkDevice device;
static uint32_t type_index;
static struct dev_site_truth leak = { "leak_vk_memory", 1 }, pool = { "pool_vk_memory", 0 };
static VkDeviceMemory pool_v[DEV_POOL_MAX];
static unsigned pool_n, pool_head;

static VkMemoryAllocateInfo alloc_info = { .sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO };

/* A macro, not a function: each site calls vkAllocateMemory itself. */
#define ALLOCATE(mem, size)                                                            \
	do {                                                                           \
		alloc_info.allocationSize = (size);                                    \
		alloc_info.memoryTypeIndex = type_index;                               \
		if (vkAllocateMemory(device, &alloc_info, NULL, &(mem)) != VK_SUCCESS) \
			dev_die("vkAllocateMemory failed");                            \
	} while (0)

WL_SITE static void leak_vk_memory(uint64_t size)
{
	VkDeviceMemory mem;

	ALLOCATE(mem, size); /* never freed */
	leak.alloc_calls++;
	leak.inuse_bytes += size;
}

WL_SITE static void pool_vk_memory(uint64_t size, unsigned max)
{
	if (pool_n == max) {
		vkFreeMemory(device, pool_v[pool_head], NULL);
		pool_head = (pool_head + 1) % max;
		pool_n--;
		pool.free_calls++;
		pool.inuse_bytes -= size;
	}
	ALLOCATE(pool_v[(pool_head + pool_n++) % max], size);
	pool.alloc_calls++;
	pool.inuse_bytes += size;
}

static const char *kind_of(VkMemoryPropertyFlags f, const char *mode)
{
	if (!strcmp(mode, "noprops"))
		return "unknown";
	if ((f & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT) && (f & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT))
		return "device-local,host-visible";
	if (f & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT)
		return "device-local";
	if (f & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT)
		return "host-visible";
	return "unknown";
}

int main(int argc, char **argv)
{
	VkApplicationInfo app = { .sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
				  .apiVersion = VK_API_VERSION_1_1 };
	VkInstanceCreateInfo ici = { .sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
				     .pApplicationInfo = &app };
	float prio = 1.0f;
	VkDeviceQueueCreateInfo qci = { .sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
					.queueFamilyIndex = 0,
					.queueCount = 1,
					.pQueuePriorities = &prio };
	VkDeviceCreateInfo dci = { .sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
				   .queueCreateInfoCount = 1,
				   .pQueueCreateInfos = &qci };
	VkPhysicalDeviceMemoryProperties2 props2 = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_PROPERTIES_2
	};
	VkPhysicalDeviceMemoryProperties *props = &props2.memoryProperties;
	VkInstance inst;
	VkPhysicalDevice phys;
	uint32_t n = 1;
	struct dev_opts o;
	struct dev_site_truth sites[2];
	double t0, t0_wall;

	dev_parse(argc, argv, &o);
	if (vkCreateInstance(&ici, NULL, &inst) != VK_SUCCESS)
		dev_die("vkCreateInstance failed (no Vulkan driver?)");
	if (vkEnumeratePhysicalDevices(inst, &n, &phys) < 0 || n < 1)
		dev_die("no Vulkan physical device");
	if (vkCreateDevice(phys, &dci, NULL, &device) != VK_SUCCESS)
		dev_die("vkCreateDevice failed");
	type_index = 0;
	dev_ready_and_wait();
	if (!strcmp(o.mode, "props2"))
		vkGetPhysicalDeviceMemoryProperties2(phys, &props2);
	else if (strcmp(o.mode, "noprops"))
		vkGetPhysicalDeviceMemoryProperties(phys, props);
	else
		props->memoryTypes[0].propertyFlags = 0;
	t0 = dev_now();
	t0_wall = dev_wall();
	while (dev_now() - t0 < o.duration_s) {
		for (unsigned i = 0; i < o.leak_per_step; i++)
			leak_vk_memory(o.leak_size);
		for (unsigned i = 0; i < o.pool_per_step; i++)
			pool_vk_memory(o.pool_size, o.pool_max);
		dev_sleep_ms(o.step_ms);
	}
	sites[0] = leak;
	sites[1] = pool;
	dev_print_truth("mt_vulkan", t0_wall, &o,
			kind_of(props->memoryTypes[0].propertyFlags, o.mode), sites, 2);
	dev_hold();
}

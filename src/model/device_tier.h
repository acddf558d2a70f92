/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * device_tier.h - the words for the device tier (docs/device-memory.md):
 * the names of the device APIs (enum mt_dev_api) and of the kinds of
 * device memory (enum mt_dev_kind), as every view, export and the probe
 * messages say them. Pure.
 */
#ifndef MEMTOP_MODEL_DEVICE_TIER_H
#define MEMTOP_MODEL_DEVICE_TIER_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

/* Which memory a site, stack or sample is of. */
enum mt_tier {
	MT_TIER_HOST = 0,   /* the heap (and the mmap source's mappings) */
	MT_TIER_DEVICE = 1, /* a device API's allocations */
};

/* Which tier, device and kind a sample, stack or site is of. All zero
 * for the host tier. Part of a stack's identity and of a site's key: the
 * same code allocating on two devices, or two kinds, is two sites. */
struct mt_dev_tag {
	__u8 tier;  /* enum mt_tier */
	__u8 api;   /* enum mt_dev_api; MT_DEV_NONE on the host tier */
	__u8 kind;  /* enum mt_dev_kind, a set */
	__u8 index; /* the device in its process, per API: numbered 0, 1, ... in the
		     * order the process first used it (or CUDA's ordinal) */
	__s16 type; /* Vulkan: the memory type index asked for; -1: none */
};

static inline bool dev_tag_eq(const struct mt_dev_tag *a, const struct mt_dev_tag *b)
{
	return a->tier == b->tier && a->api == b->api && a->kind == b->kind &&
	       a->index == b->index && a->type == b->type;
}

/* The tag as one number, for hashing. */
static inline __u64 dev_tag_bits(const struct mt_dev_tag *t)
{
	return (__u64)t->tier | (__u64)t->api << 8 | (__u64)t->kind << 16 | (__u64)t->index << 24 |
	       (__u64)(__u16)t->type << 32;
}

/* Whether a site of tier is shown under the filter tiers (enum mt_tiers,
 * config.h). */
bool device_tier_shown(unsigned int tier, unsigned int tiers);
/* "all", "host", "device": the filter's name. */
const char *device_tiers_name(unsigned int tiers);

/* "host", "device". */
const char *device_tier_name(unsigned int tier);
/* "vulkan", "opencl", "cuda"; "?" for a value memtop does not know. */
const char *device_api_name(unsigned int api);
/* The kind set as comma-separated names ("device-local,host-visible",
 * "managed", "pinned-host", "host-ptr", "unknown") into buf, whole
 * names only (those that fit); "" for none. Returns buf. */
const char *device_kind_describe(unsigned int kind, char *buf, size_t len);
/* A device tag in words: "vulkan:0 device-local,host-visible",
 * "vulkan:0 type 3" (a Vulkan type whose flags memtop did not see); ""
 * for the host tier. Returns buf. */
const char *device_tag_describe(const struct mt_dev_tag *t, char *buf, size_t len);

#endif /* MEMTOP_MODEL_DEVICE_TIER_H */

// SPDX-License-Identifier: GPL-2.0-only
/*
 * device_tier.c - names of the device tier's APIs and memory kinds
 * (device_tier.h). One table each, so the views, the exports and the
 * probe's messages say the same words.
 */
#include "model/device_tier.h"

#include <stdio.h>

#include <linux/types.h>
#include "config.h"
#include "memtop/abi.h"

bool device_tier_shown(unsigned int tier, unsigned int tiers)
{
	switch (tiers) {
	case MT_TIERS_HOST:
		return tier != MT_TIER_DEVICE;
	case MT_TIERS_DEVICE:
		return tier == MT_TIER_DEVICE;
	default:
		return true;
	}
}

const char *device_tiers_name(unsigned int tiers)
{
	return tiers == MT_TIERS_HOST ? "host" : tiers == MT_TIERS_DEVICE ? "device" : "all";
}

const char *device_tier_name(unsigned int tier)
{
	return tier == MT_TIER_DEVICE ? "device" : "host";
}

const char *device_api_name(unsigned int api)
{
	switch (api) {
	case MT_DEV_VULKAN:
		return "vulkan";
	case MT_DEV_OPENCL:
		return "opencl";
	case MT_DEV_CUDA:
	case MT_DEV_CUDA_VMM:
		return "cuda";
	default:
		return "?";
	}
}

const char *device_kind_describe(unsigned int kind, char *buf, size_t len)
{
	static const struct {
		unsigned int bit;
		const char *name;
	} names[] = {
		{ MT_DK_DEVICE_LOCAL, "device-local" }, { MT_DK_HOST_VISIBLE, "host-visible" },
		{ MT_DK_MANAGED, "managed" },           { MT_DK_PINNED_HOST, "pinned-host" },
		{ MT_DK_HOST_PTR, "host-ptr" },         { MT_DK_UNKNOWN, "unknown" },
	};
	size_t used = 0, i;

	if (!len)
		return buf;
	buf[0] = '\0';
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		int n;

		if (!(kind & names[i].bit))
			continue;
		n = snprintf(buf + used, len - used, "%s%s", used ? "," : "", names[i].name);
		if (n < 0 || (size_t)n >= len - used) {
			buf[used] = '\0'; /* whole names only */
			break;
		}
		used += (size_t)n;
	}
	return buf;
}

const char *device_tag_describe(const struct mt_dev_tag *t, char *buf, size_t len)
{
	char kind[96];

	if (!len)
		return buf;
	buf[0] = '\0';
	if (t->tier != MT_TIER_DEVICE)
		return buf;
	device_kind_describe(t->kind, kind, sizeof(kind));
	if ((t->kind & MT_DK_UNKNOWN) && t->type >= 0)
		snprintf(buf, len, "%s:%u type %d", device_api_name(t->api), t->index, t->type);
	else
		snprintf(buf, len, "%s:%u %s", device_api_name(t->api), t->index, kind);
	return buf;
}

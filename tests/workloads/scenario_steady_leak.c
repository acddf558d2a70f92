// cflags: -O2 -fno-omit-frame-pointer
/*
 * scenario_steady_leak - a steady leak under heavy short-lived churn.
 * leak_steady keeps 2 MiB/s in 32 KiB blocks; parse_request allocates
 * 32 MiB/s in 64 KiB blocks and frees each at once; render_reply 16 MiB/s
 * in 96 KiB blocks held for 0.2 s. Only leak_steady leaks, from the start.
 * Options: --duration=SECS (default 35) and those of mt_workload.h.
 */
#include <stdlib.h>

#include "scenario_common.h"

#define REPLY_SLOTS 64

static const struct scn scenario = {
	.name = "scenario_steady_leak",
	.duration_s = 35,
	.cpu_share = 0.2,
	.sites = {
		{ "leak_steady", true, 0, -1, 2 * MiB },
		{ "parse_request" },
		{ "render_reply" },
	},
};

WL_SITE static void leak_steady(unsigned long size)
{
	char *p = malloc(size);

	scn_fill(p, size);
	wl_sink = p;
}

WL_SITE static void parse_request(unsigned long size)
{
	char *p = malloc(size);

	scn_fill(p, size);
	wl_sink = (void *)scn_work(p, size);
	free(p);
}

WL_SITE static void *render_reply(unsigned long size)
{
	char *p = malloc(size);

	scn_fill(p, size);
	return p;
}

static void step(void *arg, double t, double dt)
{
	static double c_leak, c_parse, c_reply;
	static struct {
		void *p;
		double t;
	} reply[REPLY_SLOTS];
	unsigned long n;

	for (n = scn_quota(&c_leak, 2 * MiB, dt, 32 * KiB); n; n--)
		leak_steady(32 * KiB);
	for (n = scn_quota(&c_parse, 32 * MiB, dt, 64 * KiB); n; n--)
		parse_request(64 * KiB);
	for (int i = 0; i < REPLY_SLOTS; i++)
		if (reply[i].p && t - reply[i].t >= 0.2) {
			free(reply[i].p);
			reply[i].p = NULL;
		}
	for (n = scn_quota(&c_reply, 16 * MiB, dt, 96 * KiB); n; n--)
		for (int i = 0; i < REPLY_SLOTS; i++)
			if (!reply[i].p) {
				reply[i].p = render_reply(96 * KiB);
				reply[i].t = t;
				break;
			}
}

int main(int argc, char **argv)
{
	return scn_main(argc, argv, &scenario, step);
}

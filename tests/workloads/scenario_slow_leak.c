// cflags: -O2 -fno-omit-frame-pointer
/*
 * scenario_slow_leak - a leak that is 1% of the allocation volume, inside
 * the churn itself: handle_request allocates 100 MiB/s in 64 KiB blocks,
 * frees 99 of every 100 at once and forgets the 100th (1 MiB/s leaked, so
 * 99% of the site's bytes are freed). log_format allocates 8 MiB/s in
 * 16 KiB blocks freed at once. Only handle_request leaks.
 * Options: --duration=SECS (default 35) and those of mt_workload.h.
 */
#include <stdlib.h>

#include "scenario_common.h"

static const struct scn scenario = {
	.name = "scenario_slow_leak",
	.duration_s = 35,
	.cpu_share = 0.25,
	.sites = {
		{ "handle_request", true, 0, -1, 1 * MiB },
		{ "log_format" },
	},
};

WL_SITE static void handle_request(unsigned long size)
{
	static unsigned long requests;
	char *p = malloc(size);

	scn_fill(p, size);
	wl_sink = (void *)scn_work(p, size);
	if (++requests % 100)
		free(p); /* the error path forgets the 100th */
}

WL_SITE static void log_format(unsigned long size)
{
	char *p = malloc(size);

	scn_fill(p, size);
	wl_sink = p;
	free(p);
}

static void step(void *arg, double t, double dt)
{
	static double c_req, c_log;
	unsigned long n;

	for (n = scn_quota(&c_req, 100 * MiB, dt, 64 * KiB); n; n--)
		handle_request(64 * KiB);
	for (n = scn_quota(&c_log, 8 * MiB, dt, 16 * KiB); n; n--)
		log_format(16 * KiB);
}

int main(int argc, char **argv)
{
	return scn_main(argc, argv, &scenario, step);
}

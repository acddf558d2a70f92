// cflags: -O2 -fno-omit-frame-pointer
/*
 * scenario_leak_stops - a leak that stops halfway: leak_until_stop keeps
 * 2 MiB/s in 32 KiB blocks for the first --stop seconds (default 30), then
 * allocates nothing more; churn allocates 32 MiB/s in 64 KiB blocks freed
 * at once throughout. The leak's score must fall below 50 within 60 s of
 * the stop.
 * Options: --duration=SECS (default 70), --stop=SECS and those of
 * mt_workload.h.
 */
#include <stdlib.h>

#include "scenario_common.h"

static struct scn scenario = {
	.name = "scenario_leak_stops",
	.duration_s = 70,
	.cpu_share = 0.15,
	.sites = {
		{ "leak_until_stop", true, 0, 30, 2 * MiB },
		{ "churn" },
	},
};

WL_SITE static void leak_until_stop(unsigned long size)
{
	char *p = malloc(size);

	scn_fill(p, size);
	wl_sink = p;
}

WL_SITE static void churn(unsigned long size)
{
	char *p = malloc(size);

	scn_fill(p, size);
	wl_sink = (void *)scn_work(p, size);
	free(p);
}

static void step(void *arg, double t, double dt)
{
	static double c_leak, c_churn;
	unsigned long n;

	if (t < scenario.sites[0].leak_stop_s)
		for (n = scn_quota(&c_leak, 2 * MiB, dt, 32 * KiB); n; n--)
			leak_until_stop(32 * KiB);
	for (n = scn_quota(&c_churn, 32 * MiB, dt, 64 * KiB); n; n--)
		churn(64 * KiB);
}

int main(int argc, char **argv)
{
	struct wl_opts o;
	double duration, t0;

	/* read before scn_begin: its truth line shows the stop */
	scenario.sites[0].leak_stop_s = wl_arg_double(argc, argv, "stop", 30);
	t0 = scn_begin(argc, argv, &scenario, "stop", &duration, &o);
	scn_loop(t0, duration, scenario.cpu_share, step, NULL);
	wl_hold_exit(&o);
}

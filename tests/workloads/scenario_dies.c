// cflags: -O2 -fno-omit-frame-pointer
/*
 * scenario_dies - a leak that ends with its process: leak_until_death
 * keeps 2 MiB/s in 32 KiB blocks (churn allocates 16 MiB/s in 64 KiB
 * blocks freed at once) for --after seconds, then the process ends as
 * --die says: "exit3" (_exit(3)), "segv" (raise(SIGSEGV)), "abort"
 * (abort()), or "never" (it leaks until someone kills it, the default).
 * The truth line (scenario_common.h) is printed when the phase starts;
 * its leak_stop_s is null: the leak stops only with the process.
 * Options: --after=SECS (default 5), --die=HOW and those of mt_workload.h.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "scenario_common.h"

static struct scn scenario = {
	.name = "scenario_dies",
	.duration_s = 5, /* unused: --after says */
	.cpu_share = 0.05, /* little: the tests run on a loaded machine */
	.sites = {
		{ "leak_until_death", true, 0, -1, 2 * MiB },
		{ "churn" },
	},
};

WL_SITE static void leak_until_death(unsigned long size)
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

	for (n = scn_quota(&c_leak, 2 * MiB, dt, 32 * KiB); n; n--)
		leak_until_death(32 * KiB);
	for (n = scn_quota(&c_churn, 16 * MiB, dt, 64 * KiB); n; n--)
		churn(64 * KiB);
}

int main(int argc, char **argv)
{
	const char *const known[] = { "after", "die", NULL };
	const char *how;
	struct wl_opts o;
	double after, t0;

	wl_init(argc, argv, known, &o);
	how = wl_arg(argc, argv, "die");
	if (!how)
		how = "never";
	if (strcmp(how, "never") && strcmp(how, "exit3") && strcmp(how, "segv") &&
	    strcmp(how, "abort"))
		wl_die("--die must be never, exit3, segv or abort, not", how);
	after = strcmp(how, "never") ? wl_arg_double(argc, argv, "after", 5) : 1e9;
	wl_ready();
	wl_wait_start(&o);
	t0 = wl_now();
	scn_print_truth(&scenario, after);
	scn_loop(t0, after, scenario.cpu_share, step, NULL);
	if (!strcmp(how, "exit3"))
		_exit(3);
	if (!strcmp(how, "segv"))
		raise(SIGSEGV);
	abort();
}

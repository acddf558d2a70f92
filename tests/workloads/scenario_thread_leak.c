// cflags: -O2 -fno-omit-frame-pointer
// ldflags: -lpthread
/*
 * scenario_thread_leak - a leak in one thread of several: four worker
 * threads each allocate 10 MiB/s through worker_churn (64 KiB blocks freed
 * at once); thread 2 also keeps 2 MiB/s in 16 KiB blocks from worker_leak.
 * Only worker_leak leaks. Threads are created before READY and wait on a
 * barrier for the phase; after it they block until the process _exit()s.
 * Options: --duration=SECS (default 35) and those of mt_workload.h.
 */
#include <pthread.h>
#include <stdlib.h>

#include "scenario_common.h"

#define NTHREADS 4
#define LEAKER 2

static const struct scn scenario = {
	.name = "scenario_thread_leak",
	.duration_s = 35,
	.cpu_share = 0.05, /* per thread */
	.sites = {
		{ "worker_leak", true, 0, -1, 2 * MiB },
		{ "worker_churn" },
	},
};

struct worker {
	pthread_t thread;
	int id;
	double carry_churn, carry_leak;
};

static struct worker workers[NTHREADS];
static pthread_barrier_t start_barrier;
static double t0, duration;

WL_SITE static void worker_leak(unsigned long size)
{
	char *p = malloc(size);

	scn_fill(p, size);
	wl_sink = p;
}

WL_SITE static void worker_churn(unsigned long size)
{
	char *p = malloc(size);

	scn_fill(p, size);
	wl_sink = (void *)scn_work(p, size);
	free(p);
}

static void step(void *arg, double t, double dt)
{
	struct worker *w = arg;
	unsigned long n;

	for (n = scn_quota(&w->carry_churn, 10 * MiB, dt, 64 * KiB); n; n--)
		worker_churn(64 * KiB);
	if (w->id == LEAKER)
		for (n = scn_quota(&w->carry_leak, 2 * MiB, dt, 16 * KiB); n; n--)
			worker_leak(16 * KiB);
}

static void *worker_main(void *arg)
{
	pthread_barrier_wait(&start_barrier);
	scn_loop(t0, duration, scenario.cpu_share, step, arg);
	/* a returning thread would free its malloc state: block until _exit() */
	for (;;)
		pause();
	return NULL;
}

int main(int argc, char **argv)
{
	struct wl_opts o;

	pthread_barrier_init(&start_barrier, NULL, NTHREADS + 1);
	for (int i = 0; i < NTHREADS; i++) {
		workers[i].id = i;
		if (pthread_create(&workers[i].thread, NULL, worker_main, &workers[i]))
			wl_die("pthread_create failed", NULL);
	}
	t0 = scn_begin(argc, argv, &scenario, NULL, &duration, &o);
	pthread_barrier_wait(&start_barrier);
	wl_sleep(t0 + duration - wl_now());
	wl_hold_exit(&o);
}

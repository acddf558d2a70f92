// cflags: -O2 -fno-omit-frame-pointer
/*
 * mt_threads - four threads allocating at once. Thread n leaks
 * (n + 1) * --leak-size bytes per round from its own function thread_leak_n
 * and runs --churn-per-round malloc/free pairs of --churn-size bytes through
 * the function all threads share, shared_site. The truth lists each
 * thread_leak_n and shared_site (merged over threads).
 *
 * Threads are created before READY (thread creation allocates), wait on a
 * barrier for the phase, and after it block until the process _exit()s:
 * a thread that returns frees its malloc state, which memtop would count.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "mt_workload.h"

#define NTHREADS 4

struct worker {
	pthread_t thread;
	unsigned id;
	struct wl_site leak;
	struct wl_site shared; /* this thread's part of shared_site */
};

static struct worker workers[NTHREADS];
static pthread_barrier_t start_barrier, done_barrier;
static uint64_t iterations, leak_size, churn_size, churn_per_round;
static double duration;

#define DEFINE_THREAD_LEAK(n)                                               \
	WL_SITE static void thread_leak_##n(struct wl_site *s, size_t size) \
	{                                                                   \
		char *p = malloc(size);                                     \
                                                                            \
		memset(p, n + 1, size);                                     \
		wl_sink = p;                                                \
		wl_site_alloc(s, size);                                     \
	}
DEFINE_THREAD_LEAK(0)
DEFINE_THREAD_LEAK(1)
DEFINE_THREAD_LEAK(2)
DEFINE_THREAD_LEAK(3)

static void (*const thread_leak[NTHREADS])(struct wl_site *,
					   size_t) = { thread_leak_0, thread_leak_1, thread_leak_2,
						       thread_leak_3 };
static const char *const leak_names[NTHREADS] = { "thread_leak_0", "thread_leak_1", "thread_leak_2",
						  "thread_leak_3" };

WL_SITE static void shared_site(struct wl_site *s, size_t size, unsigned count)
{
	for (unsigned i = 0; i < count; i++) {
		char *p = malloc(size);

		p[0] = 1;
		wl_sink = p;
		wl_site_alloc(s, size);
		free(p);
		wl_site_free(s, s, size);
	}
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	double t0;

	pthread_barrier_wait(&start_barrier);
	t0 = wl_now();
	for (uint64_t i = 0; i < iterations; i++) {
		thread_leak[w->id](&w->leak, (w->id + 1) * leak_size);
		shared_site(&w->shared, churn_size, (unsigned)churn_per_round);
		wl_pace(t0, i + 1, iterations, duration);
	}
	pthread_barrier_wait(&done_barrier);
	for (;;)
		pause();
	return NULL;
}

int main(int argc, char **argv)
{
	static const char *const known[] = { "iterations", "duration",        "leak-size",
					     "churn-size", "churn-per-round", NULL };
	static struct wl_site shared = { .function = "shared_site" };
	struct wl_site *sites[NTHREADS + 1];
	struct wl_opts o;

	wl_init(argc, argv, known, &o);
	iterations = wl_arg_u64(argc, argv, "iterations", 1000);
	duration = wl_arg_double(argc, argv, "duration", 2.0);
	leak_size = wl_arg_u64(argc, argv, "leak-size", 256);
	churn_size = wl_arg_u64(argc, argv, "churn-size", 200);
	churn_per_round = wl_arg_u64(argc, argv, "churn-per-round", 8);
	if (!leak_size || !churn_size)
		wl_die("sizes must be > 0", NULL);

	pthread_barrier_init(&start_barrier, NULL, NTHREADS + 1);
	pthread_barrier_init(&done_barrier, NULL, NTHREADS + 1);
	for (unsigned n = 0; n < NTHREADS; n++) {
		workers[n].id = n;
		workers[n].leak.function = leak_names[n];
		if (pthread_create(&workers[n].thread, NULL, worker_main, &workers[n]))
			wl_die("pthread_create failed", NULL);
	}

	wl_ready();
	wl_wait_start(&o);
	pthread_barrier_wait(&start_barrier);
	pthread_barrier_wait(&done_barrier);
	for (unsigned n = 0; n < NTHREADS; n++) {
		wl_site_merge(&shared, &workers[n].shared);
		sites[n] = &workers[n].leak;
	}
	sites[NTHREADS] = &shared;
	wl_truth_print("mt_threads", sites, NTHREADS + 1);
	wl_hold_exit(&o);
}

// cflags: -O2 -fno-omit-frame-pointer
/*
 * mt_arena - a program with its own allocator: arena_grow maps anonymous
 * memory with mmap and touches it (--rate bytes/s, default 8 MiB/s, in
 * 1 MiB chunks), so its RSS grows while malloc is hardly called. memtop
 * must say that the heap it sees does not explain the growth, and (with
 * its mmap source) show arena_grow as the site that maps it. Prints READY,
 * waits for a byte on stdin, runs --duration=SECS (default 12), prints
 * {"truth": "mt_arena", "time": UNIX_SECS, "mapped": BYTES, "chunks": N},
 * waits for EOF.
 */
#include <stdio.h>
#include <sys/mman.h>

#include "mt_workload.h"

#define CHUNK (1024 * 1024)

static unsigned long mapped, chunks;

WL_SITE static void arena_grow(void)
{
	char *p = mmap(NULL, CHUNK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		wl_die("mmap failed", NULL);
	memset(p, 0x5a, CHUNK);
	wl_sink = p;
	mapped += CHUNK;
	chunks++;
}

int main(int argc, char **argv)
{
	static const char *const known[] = { "duration", "rate", NULL };
	struct wl_opts o;
	double duration, rate, t0;
	char truth[256];
	struct timespec now;
	uint64_t total;

	wl_init(argc, argv, known, &o);
	duration = wl_arg_double(argc, argv, "duration", 12);
	rate = wl_arg_double(argc, argv, "rate", 8.0 * CHUNK);
	total = (uint64_t)(duration * rate / CHUNK);
	wl_ready();
	wl_wait_start(&o);
	t0 = wl_now();
	for (uint64_t i = 0; i < total; i++) {
		arena_grow();
		wl_pace(t0, i + 1, total, duration);
	}
	clock_gettime(CLOCK_REALTIME, &now);
	snprintf(truth, sizeof(truth),
		 "{\"truth\":\"mt_arena\",\"pid\":%d,\"time\":%.6f,\"mapped\":%lu,\"chunks\":%lu}\n",
		 (int)getpid(), (double)now.tv_sec + now.tv_nsec / 1e9, mapped, chunks);
	wl_write_all(1, truth, strlen(truth));
	wl_hold_exit(&o);
}

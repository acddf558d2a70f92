// cflags: -O2 -fno-omit-frame-pointer
/*
 * cg_leaker - a process for the --cgroup tests: leaks MIB_PER_S MiB per
 * second from cg_leak_site() (touching every page, so the cgroup is
 * charged) and churns small blocks in cg_churn_site(), until it is killed
 * (for instance by the OOM killer when its cgroup reaches memory.max).
 * Prints "READY pid=N" first. Usage: cg_leaker MIB_PER_S
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void *volatile sink;

__attribute__((noipa)) static void cg_leak_site(size_t size)
{
	char *p = malloc(size);

	if (p)
		memset(p, 0xa5, size); /* charge the pages to the cgroup */
	sink = p;
}

__attribute__((noipa)) static void cg_churn_site(void)
{
	int i;

	for (i = 0; i < 200; i++) {
		sink = malloc(64 + i);
		free(sink);
	}
}

int main(int argc, char **argv)
{
	double mib_per_s = argc > 1 ? atof(argv[1]) : 1.0;
	const size_t chunk = 64 * 1024;
	const struct timespec tick = { 0, 10 * 1000 * 1000 };
	double owed = 0;

	printf("READY pid=%d\n", getpid());
	fflush(stdout);
	for (;;) {
		owed += mib_per_s * 1024 * 1024 / 100;
		while (owed >= chunk) {
			cg_leak_site(chunk);
			owed -= chunk;
		}
		cg_churn_site();
		nanosleep(&tick, NULL);
	}
}

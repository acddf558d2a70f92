// cflags: -O2
// ldflags: -ljemalloc
/*
 * inject_jemalloc.c - a program whose allocator is jemalloc, including
 * C++'s operator new and delete (jemalloc defines them; this C program
 * calls them by their mangled names, as compiled C++ does), for
 * memtop --inject (tests/integration/test_inject.py).
 *
 * Prints "READY pid=N"; on a byte on stdin, new_site allocates 20000
 * blocks of 4096 bytes with operator new and malloc_site 20000 with
 * malloc, each keeping one block in four and releasing the rest (sized
 * operator delete, free); prints "done"; exits 0 at EOF.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern void *_Znwm(unsigned long size);
extern void _ZdlPvm(void *ptr, unsigned long size);

static void *kept[10000];

/* Each site writes its block, so the call is not a tail call and the
 * site is the caller memtop sees. */
__attribute__((noipa)) static void *new_site(size_t n)
{
	char *p = _Znwm(n);

	memset(p, 1, n);
	return p;
}

__attribute__((noipa)) static void *malloc_site(size_t n)
{
	char *p = malloc(n);

	memset(p, 2, n);
	return p;
}

int main(void)
{
	int i, k = 0;
	char c;

	free(malloc(16));
	_ZdlPvm(_Znwm(16), 16);
	printf("READY pid=%d\n", getpid());
	fflush(stdout);
	if (read(0, &c, 1) != 1)
		return 1;
	for (i = 0; i < 20000; i++) {
		char *p = new_site(4096), *q = malloc_site(4096);

		if (i % 4 == 0) {
			kept[k++] = p;
			kept[k++] = q;
		} else {
			_ZdlPvm(p, 4096);
			free(q);
		}
	}
	printf("done\n");
	fflush(stdout);
	while (read(0, &c, 1) == 1)
		;
	return 0;
}

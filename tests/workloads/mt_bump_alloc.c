// cflags: -O2 -shared -fPIC -pthread -fno-builtin
/*
 * mt_bump_alloc - an allocator memtop has no probe table for, to be
 * LD_PRELOADed (built as a shared object without the .so suffix): malloc,
 * free, calloc, realloc, memalign, posix_memalign, aligned_alloc, valloc,
 * pvalloc and malloc_usable_size, served from power-of-two free lists
 * (16 B to 128 KiB) carved from 4 MiB mmap'ed chunks under one lock,
 * larger blocks mmap'ed alone. Every block has a 16-byte header in front
 * of what the caller gets: the size class (or the mapping's length) and
 * the offset back to the start of the chunk piece, for aligned blocks.
 * (tests/integration/test_inject_edges.py: the default's in-process path
 * works behind any allocator; uprobes have no table for this one.)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define MIN_SHIFT 4
#define MAX_SHIFT 17
#define CHUNK (4u << 20)
#define HDR 16

struct hdr {
	uint64_t size; /* the class's bytes, or the mapping's length when big */
	uint32_t back; /* bytes from the piece's start to this header */
	uint32_t big;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static void *free_list[MAX_SHIFT + 1];
static char *carve, *carve_end;

static int class_of(size_t n)
{
	int s = MIN_SHIFT;

	while (((size_t)1 << s) < n)
		s++;
	return s;
}

/* A piece of at least n bytes, header room included; its first HDR bytes
 * will hold the header. */
static char *piece(size_t n, uint64_t *size, uint32_t *big)
{
	char *p;
	int s;

	if (n > ((size_t)1 << MAX_SHIFT)) {
		size_t len = (n + 4095) & ~(size_t)4095;

		p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		*size = len;
		*big = 1;
		return p == MAP_FAILED ? NULL : p;
	}
	s = class_of(n);
	*size = (uint64_t)1 << s;
	*big = 0;
	pthread_mutex_lock(&lock);
	p = free_list[s];
	if (p) {
		free_list[s] = *(void **)p;
	} else {
		if (carve + *size > carve_end) {
			carve = mmap(NULL, CHUNK, PROT_READ | PROT_WRITE,
				     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (carve == MAP_FAILED) {
				carve = carve_end = NULL;
				pthread_mutex_unlock(&lock);
				return NULL;
			}
			carve_end = carve + CHUNK;
		}
		p = carve;
		carve += *size;
	}
	pthread_mutex_unlock(&lock);
	return p;
}

static void *aligned(size_t align, size_t n)
{
	uint64_t size;
	uint32_t big;
	char *p, *user;
	struct hdr *h;

	if (align < HDR)
		align = HDR;
	if (n > SIZE_MAX / 2 || align > (1u << 20) || (align & (align - 1))) {
		errno = ENOMEM;
		return NULL;
	}
	p = piece(n + HDR + align - HDR, &size, &big);
	if (!p) {
		errno = ENOMEM;
		return NULL;
	}
	user = (char *)(((uintptr_t)p + HDR + align - 1) & ~(uintptr_t)(align - 1));
	h = (struct hdr *)(user - HDR);
	h->size = size;
	h->back = (uint32_t)((char *)h - p);
	h->big = big;
	return user;
}

void *malloc(size_t n)
{
	return aligned(HDR, n);
}

void free(void *ptr)
{
	struct hdr *h;
	char *p;

	if (!ptr)
		return;
	h = (struct hdr *)((char *)ptr - HDR);
	p = (char *)h - h->back;
	if (h->big) {
		munmap(p, h->size);
		return;
	}
	pthread_mutex_lock(&lock);
	*(void **)p = free_list[class_of(h->size)];
	free_list[class_of(h->size)] = p;
	pthread_mutex_unlock(&lock);
}

size_t malloc_usable_size(void *ptr)
{
	struct hdr *h;

	if (!ptr)
		return 0;
	h = (struct hdr *)((char *)ptr - HDR);
	return h->size - h->back - HDR - ((char *)ptr - ((char *)h + HDR));
}

void *calloc(size_t a, size_t b)
{
	void *p;

	if (b && a > SIZE_MAX / b) {
		errno = ENOMEM;
		return NULL;
	}
	p = malloc(a * b);
	if (p)
		memset(p, 0, a * b);
	return p;
}

void *realloc(void *old, size_t n)
{
	size_t have;
	void *p;

	if (!old)
		return malloc(n);
	if (!n) {
		free(old);
		return NULL;
	}
	have = malloc_usable_size(old);
	if (n <= have)
		return old;
	p = malloc(n);
	if (p) {
		memcpy(p, old, have);
		free(old);
	}
	return p;
}

void *memalign(size_t align, size_t n)
{
	return aligned(align, n);
}

void *aligned_alloc(size_t align, size_t n)
{
	return aligned(align, n);
}

int posix_memalign(void **out, size_t align, size_t n)
{
	void *p = aligned(align, n);

	if (!p)
		return ENOMEM;
	*out = p;
	return 0;
}

void *valloc(size_t n)
{
	return aligned(4096, n);
}

void *pvalloc(size_t n)
{
	return aligned(4096, (n + 4095) & ~(size_t)4095);
}

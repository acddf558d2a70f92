// cflags: -O2 -pthread
// ldflags: -ldl
/*
 * inject_target.c - a process for memtop --inject to be injected into,
 * detached from and injected into again, checking its own memory all the
 * while (tests/integration/test_inject.py).
 *
 *   inject_target churn [THREADS]
 *     THREADS (default 8) threads allocate, resize and free blocks through
 *     malloc, calloc, realloc, posix_memalign, aligned_alloc and memalign,
 *     hand blocks to each other through a shared exchange, and check every
 *     byte of a block before resizing or freeing it: each block starts with
 *     its size and a seed and is filled with bytes derived from them. A
 *     mismatch prints "CORRUPT ..." and aborts. Commands on stdin, one
 *     byte each: 'z' dlopen()s libz ("zlib loaded"), 'Z' then runs
 *     deflateInit/deflateEnd 2000 times (zlib allocates through its own
 *     GOT), printing "zlib N";
 *     'p' prints "alive OPS" (it is running and allocating); 'f' forks a
 *     child that checks and frees blocks it inherited, allocates and frees
 *     20000 checked blocks, then execs this program ("child" mode: a few
 *     allocations, exit 0), and prints "fork STATUS" (0: all fine); 'e'
 *     execs this program in "read" mode (same PID); EOF stops the
 *     threads, frees and checks every block, prints "ok" and exits 0.
 *   inject_target read
 *     the only thread blocks in read(0): each line read is echoed as
 *     "read LINE eintr=N" (N: reads that failed with EINTR, which a
 *     restarted system call never shows); EOF exits 0.
 *   inject_target epoll
 *     the same through epoll_wait on stdin ("epoll LINE eintr=N"): epoll_wait
 *     is never restarted after a stop, so N may grow; the program retries,
 *     as servers do.
 *   inject_target seccomp
 *     installs an allow-everything seccomp filter, then behaves as read.
 *   inject_target sum THREADS OPS [IDLE]
 *     deterministic work for integrity runs (bare against watched): for
 *     each line on stdin, THREADS threads (0: the main thread alone, with
 *     no thread made or ended) each make OPS seeded allocator
 *     calls (the churn's mix, on blocks of their own) and fold every byte
 *     of every block they check before resizing or freeing it into an
 *     FNV-1a sum; prints "sum N HEX allocs=A frees=F" (N: the batch, from
 *     1; A: its allocation calls, realloc included; F: its frees, all of
 *     non-NULL blocks), which depends only on N, THREADS and OPS; the
 *     calls the batch's thread creation makes are not in A or F. IDLE threads (say 3000) wait on a
 *     condition variable all the while. EOF exits 0.
 *
 * Every mode prints "READY pid=N" once it is in its steady state (every
 * allocator function called once, so lazily bound GOT slots are bound).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SLOTS 128
#define EXCHANGE 64
#define MAX_THREADS 64

static volatile int stop;
static uint64_t ops_done[MAX_THREADS];
static unsigned char *_Atomic exchange[EXCHANGE];

struct hdr {
	uint64_t size;
	uint64_t seed;
};

static uint64_t xs(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static unsigned char pattern(uint64_t seed, size_t i)
{
	return (unsigned char)(seed * 31 + i * 7 + (i >> 8));
}

static void corrupt(const unsigned char *p, const char *why, size_t at)
{
	fprintf(stdout, "CORRUPT %s block %p at %zu\n", why, (void *)p, at);
	fflush(stdout);
	abort();
}

static void fill(unsigned char *p, size_t size, uint64_t seed)
{
	struct hdr h = { size, seed };
	size_t i;

	memcpy(p, &h, sizeof(h));
	for (i = sizeof(h); i < size; i++)
		p[i] = pattern(seed, i);
}

/* Check a block; with keep, only its first keep bytes (after a realloc). */
static void verify(const unsigned char *p, size_t keep)
{
	struct hdr h;
	size_t i, n;

	memcpy(&h, p, sizeof(h));
	if (h.size < sizeof(h) || h.size > (1 << 20))
		corrupt(p, "header", 0);
	n = keep && keep < h.size ? keep : h.size;
	for (i = sizeof(h); i < n; i++)
		if (p[i] != pattern(h.seed, i))
			corrupt(p, "contents", i);
}

/* Fold the checked bytes of a block into *sum (FNV-1a). */
static void fold(uint64_t *sum, const unsigned char *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		*sum = (*sum ^ p[i]) * 0x100000001B3ULL;
}

static unsigned char *make(uint64_t *rng, size_t size)
{
	void *q = NULL;
	unsigned char *p;

	switch (xs(rng) % 6) {
	case 0:
		p = calloc(1, size);
		break;
	case 1:
		p = posix_memalign(&q, 64, size) ? NULL : q;
		break;
	case 2:
		p = aligned_alloc(32, (size + 31) & ~(size_t)31);
		break;
	case 3:
		p = memalign(128, size);
		break;
	default:
		p = malloc(size);
	}
	if (!p)
		corrupt(NULL, "allocation failed", size);
	fill(p, size, xs(rng));
	return p;
}

static size_t pick_size(uint64_t *rng)
{
	uint64_t r = xs(rng);

	return sizeof(struct hdr) + (r % 16 ? r % 2048 : r % 65536);
}

static void *churn(void *arg)
{
	long id = (long)arg;
	uint64_t rng = 0x9E3779B97F4A7C15ULL * (id + 1);
	unsigned char *slot[SLOTS] = { 0 };
	uint64_t ops = 0;
	int i;

	while (!stop) {
		int k = xs(&rng) % SLOTS;
		uint64_t what = xs(&rng) % 10;

		if (!slot[k]) {
			slot[k] = make(&rng, pick_size(&rng));
		} else if (what < 3) {
			struct hdr h;
			size_t size = pick_size(&rng);
			unsigned char *q;

			verify(slot[k], 0);
			memcpy(&h, slot[k], sizeof(h));
			q = realloc(slot[k], size);
			if (!q)
				corrupt(slot[k], "realloc failed", size);
			verify(q, size); /* the kept part, header included */
			fill(q, size, xs(&rng));
			slot[k] = q;
		} else if (what < 5) {
			/* hand it over: free whatever another thread left */
			unsigned char *other;

			verify(slot[k], 0);
			other = atomic_exchange(&exchange[xs(&rng) % EXCHANGE], slot[k]);
			slot[k] = NULL;
			if (other) {
				verify(other, 0);
				free(other);
			}
		} else {
			verify(slot[k], 0);
			free(slot[k]);
			slot[k] = NULL;
		}
		if (++ops % 4096 == 0) {
			struct timespec ts = { 0, 200000 };

			__atomic_store_n(&ops_done[id], ops, __ATOMIC_RELAXED);
			nanosleep(&ts, NULL); /* leave some CPU to the machine */
		}
	}
	for (i = 0; i < SLOTS; i++) {
		if (slot[i]) {
			verify(slot[i], 0);
			free(slot[i]);
		}
	}
	return NULL;
}

static void *zlib;

static void zlib_load(void)
{
	zlib = dlopen("libz.so.1", RTLD_NOW | RTLD_LOCAL);
	printf(zlib ? "zlib loaded\n" : "zlib missing\n");
	fflush(stdout);
}

static void zlib_round(void)
{
	int (*init)(void *, int, const char *, int);
	int (*end)(void *);
	unsigned char strm[112]; /* z_stream on LP64 */
	int i, n = 0;

	if (!zlib)
		zlib_load();
	init = (int (*)(void *, int, const char *, int))dlsym(zlib, "deflateInit_");
	end = (int (*)(void *))dlsym(zlib, "deflateEnd");
	for (i = 0; init && end && i < 2000; i++) {
		memset(strm, 0, sizeof(strm)); /* zalloc = NULL: zlib's own malloc */
		if (init(strm, 6, "1.2.13", (int)sizeof(strm)) == 0) {
			n++;
			end(strm);
		}
	}
	printf("zlib %d\n", n);
	fflush(stdout);
}

/* 'f': fork while the other threads allocate; the child uses the heap
 * (and the rerouted GOT) it inherited, then execs. */
static void fork_round(const char *self)
{
	int st = -1;
	pid_t pid = fork();

	if (pid == 0) {
		uint64_t rng = 12345;
		int i;

		for (i = 0; i < EXCHANGE; i++) {
			unsigned char *p = exchange[i];

			exchange[i] = NULL;
			if (p) {
				verify(p, 0);
				free(p);
			}
		}
		for (i = 0; i < 20000; i++) {
			unsigned char *p = make(&rng, pick_size(&rng));

			verify(p, 0);
			free(p);
		}
		execl(self, self, "child", (char *)NULL);
		_exit(126);
	}
	if (pid > 0)
		waitpid(pid, &st, 0);
	printf("fork %d\n", st);
	fflush(stdout);
}

static int run_churn(int threads, const char *self)
{
	pthread_t t[MAX_THREADS];
	unsigned char *warm;
	void *q;
	long i;
	int c;

	/* every function once: lazily bound slots are bound before READY */
	warm = malloc(64);
	free(calloc(1, 64));
	warm = realloc(warm, 128);
	free(warm);
	if (!posix_memalign(&q, 64, 64))
		free(q);
	free(aligned_alloc(64, 64));
	free(memalign(64, 64));
	free(valloc(64));
	for (i = 0; i < threads; i++)
		pthread_create(&t[i], NULL, churn, (void *)i);
	printf("READY pid=%d\n", getpid());
	fflush(stdout);
	while ((c = getchar()) != EOF) {
		if (c == 'z') {
			zlib_load();
		} else if (c == 'Z') {
			zlib_round();
		} else if (c == 'f') {
			fork_round(self);
		} else if (c == 'e') {
			execl(self, self, "read", (char *)NULL);
			printf("exec failed\n");
			fflush(stdout);
		} else if (c == 'p') {
			uint64_t sum = 0;

			for (i = 0; i < threads; i++)
				sum += __atomic_load_n(&ops_done[i], __ATOMIC_RELAXED);
			printf("alive %llu\n", (unsigned long long)sum);
			fflush(stdout);
		}
	}
	stop = 1;
	for (i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	for (i = 0; i < EXCHANGE; i++) {
		if (exchange[i]) {
			verify(exchange[i], 0);
			free(exchange[i]);
		}
	}
	printf("ok\n");
	fflush(stdout);
	return 0;
}

struct batch {
	long thread, batch, ops;
	uint64_t sum, allocs, frees;
};

/* One thread's share of a sum batch: the churn without the exchange, so
 * its sum depends on its seed only. */
static void *sum_work(void *arg)
{
	struct batch *b = arg;
	uint64_t rng = 0x9E3779B97F4A7C15ULL * (b->thread + 1) + (uint64_t)b->batch * 0x2545F491;
	unsigned char *slot[SLOTS] = { 0 };
	uint64_t sum = 0xCBF29CE484222325ULL;
	long op;
	int i;

	for (op = 0; op < b->ops; op++) {
		int k = xs(&rng) % SLOTS;
		uint64_t what = xs(&rng) % 10;
		struct hdr h;

		if (!slot[k]) {
			slot[k] = make(&rng, pick_size(&rng));
			b->allocs++;
			continue;
		}
		verify(slot[k], 0);
		memcpy(&h, slot[k], sizeof(h));
		fold(&sum, slot[k], h.size);
		if (what < 4) {
			size_t size = pick_size(&rng);
			unsigned char *q = realloc(slot[k], size);

			if (!q)
				corrupt(slot[k], "realloc failed", size);
			verify(q, size);
			fill(q, size, xs(&rng));
			slot[k] = q;
			b->allocs++;
		} else {
			free(slot[k]);
			slot[k] = NULL;
			b->frees++;
		}
		if (op % 2048 == 2047) {
			struct timespec ts = { 0, 200000 };

			nanosleep(&ts, NULL); /* leave some CPU to the machine */
		}
	}
	for (i = 0; i < SLOTS; i++) {
		if (slot[i]) {
			struct hdr h;

			verify(slot[i], 0);
			memcpy(&h, slot[i], sizeof(h));
			fold(&sum, slot[i], h.size);
			free(slot[i]);
			b->frees++;
		}
	}
	b->sum = sum;
	return NULL;
}

static pthread_mutex_t idle_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t idle_cond = PTHREAD_COND_INITIALIZER;

static void *idle_thread(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&idle_lock);
	while (!stop)
		pthread_cond_wait(&idle_cond, &idle_lock);
	pthread_mutex_unlock(&idle_lock);
	return NULL;
}

static int run_sum(int threads, long ops, int idle)
{
	pthread_t t[MAX_THREADS], *idlers = calloc(idle ? idle : 1, sizeof(*idlers));
	struct batch b[MAX_THREADS];
	pthread_attr_t small;
	char line[64];
	long n = 0;
	int i, started = 0;

	pthread_attr_init(&small);
	pthread_attr_setstacksize(&small, 64 * 1024);
	for (i = 0; i < idle && idlers; i++)
		if (!pthread_create(&idlers[i], &small, idle_thread, NULL))
			started++;
	free(calloc(1, 64));
	free(realloc(malloc(16), 64));
	printf("READY pid=%d idle=%d\n", getpid(), started);
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin)) {
		uint64_t sum = 0, allocs = 0, frees = 0;

		n++;
		for (i = 0; i < threads; i++) {
			b[i] = (struct batch){ .thread = i, .batch = n, .ops = ops };
			pthread_create(&t[i], NULL, sum_work, &b[i]);
		}
		if (!threads) {
			b[0] = (struct batch){ .thread = 0, .batch = n, .ops = ops };
			sum_work(&b[0]);
		}
		for (i = 0; i < (threads ? threads : 1); i++) {
			if (threads)
				pthread_join(t[i], NULL);
			sum = sum * 31 + b[i].sum;
			allocs += b[i].allocs;
			frees += b[i].frees;
		}
		printf("sum %ld %016llx allocs=%llu frees=%llu\n", n, (unsigned long long)sum,
		       (unsigned long long)allocs, (unsigned long long)frees);
		fflush(stdout);
	}
	pthread_mutex_lock(&idle_lock);
	stop = 1;
	pthread_cond_broadcast(&idle_cond);
	pthread_mutex_unlock(&idle_lock);
	for (i = 0; i < started; i++)
		pthread_join(idlers[i], NULL);
	free(idlers);
	return 0;
}

static int run_blocked(int use_epoll)
{
	char buf[256];
	int eintr = 0, ep = -1;
	size_t have = 0;

	if (use_epoll) {
		struct epoll_event ev = { .events = EPOLLIN };

		ep = epoll_create1(0);
		if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, 0, &ev))
			return 2;
	}
	free(malloc(16));
	printf("READY pid=%d\n", getpid());
	fflush(stdout);
	for (;;) {
		ssize_t n;
		char *nl;

		if (use_epoll) {
			struct epoll_event ev;
			int r = epoll_wait(ep, &ev, 1, -1);

			if (r < 0 && errno == EINTR) {
				eintr++;
				continue;
			}
			if (r != 1)
				return 3;
		}
		n = read(0, buf + have, sizeof(buf) - 1 - have);
		if (n < 0 && errno == EINTR) {
			eintr++;
			continue;
		}
		if (n <= 0)
			return n < 0 ? 4 : 0;
		have += (size_t)n;
		buf[have] = '\0';
		while ((nl = strchr(buf, '\n'))) {
			char *copy;

			*nl = '\0';
			copy = strdup(buf); /* an allocation after the injection */
			printf("%s %s eintr=%d\n", use_epoll ? "epoll" : "read", copy, eintr);
			fflush(stdout);
			free(copy);
			have -= (size_t)(nl + 1 - buf);
			memmove(buf, nl + 1, have + 1);
		}
	}
}

static int allow_all_seccomp(void)
{
	struct sock_filter f[] = { BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW) };
	struct sock_fprog prog = { .len = 1, .filter = f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -1;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "churn";

	if (!strcmp(mode, "churn")) {
		int n = argc > 2 ? atoi(argv[2]) : 8;

		return run_churn(n < 1 ? 1 : n > MAX_THREADS ? MAX_THREADS : n, argv[0]);
	}
	if (!strcmp(mode, "child")) {
		uint64_t rng = 99;
		int i;

		for (i = 0; i < 1000; i++) {
			unsigned char *p = make(&rng, pick_size(&rng));

			verify(p, 0);
			free(p);
		}
		return 0;
	}
	if (!strcmp(mode, "sum") && argc > 3) {
		int n = atoi(argv[2]);

		/* 0: one thread, the main one, so that no thread starts or
		 * ends (the C library's own calls then) during a batch */
		return run_sum(n < 0             ? 1
			       : n > MAX_THREADS ? MAX_THREADS
						 : n,
			       atol(argv[3]), argc > 4 ? atoi(argv[4]) : 0);
	}
	if (!strcmp(mode, "read"))
		return run_blocked(0);
	if (!strcmp(mode, "epoll"))
		return run_blocked(1);
	if (!strcmp(mode, "seccomp")) {
		if (allow_all_seccomp())
			return 5;
		return run_blocked(0);
	}
	fprintf(stderr,
		"usage: inject_target churn [THREADS] | sum THREADS OPS [IDLE] | read | epoll | seccomp\n");
	return 2;
}

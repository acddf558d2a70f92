// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_unwind.c - unwinder: a live snapshot of this test's own stack taken
 * at the bottom of a chain of functions built without frame pointers (the
 * state a uprobe sees after malloc returns), the same snapshot cut short
 * or garbled, and a recorded snapshot (tests/fixtures/unwind/chain.snap)
 * replayed against a live copy of the program that recorded it.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "stacks/proc_cache.h"
#include "stacks/unwind.h"

#include "../fixtures/unwind/capture.h"

#define COPY_SIZE 8192
#define MAX_IPS 64
/* Enough for the whole stack of this test, environment strings included. */
#define FULL_SIZE (512 * 1024)

/* ==== a snapshot of our own stack ====================================== */

struct snap {
	struct mt_regs regs;
	__u32 stack_len;
	__u8 stack[FULL_SIZE];
};

CAPTURE_REGS_CHECK_LAYOUT(struct mt_regs);
asm(CAPTURE_REGS_ASM("capture_regs"));
void capture_regs(struct mt_regs *r);

static __u64 stack_top;                 /* end of the main thread's stack */
static __thread __u64 thread_stack_top; /* end of another thread's stack */

/* Copy up to `want` bytes of the stack at s->regs.sp, as bpf_probe_read_user
 * would, never past the top of the stack. Called by chain_f4 after capture,
 * so its own frame lies below s->regs.sp and the copied frames are intact.
 * Byte by byte and uninstrumented: under ASan the stack holds redzones. */
static __attribute__((noinline, no_sanitize_address)) void snap_copy(struct snap *s, __u32 want)
{
	__u64 avail = (thread_stack_top ? thread_stack_top : stack_top) - s->regs.sp;
	const volatile __u8 *src = (const volatile __u8 *)s->regs.sp;

	s->stack_len = avail < want ? (__u32)avail : want;
	for (__u32 i = 0; i < s->stack_len; i++)
		s->stack[i] = src[i];
}

/* The chain: each function in its own section, so the linker's
 * __start_/__stop_ symbols give exact address ranges; each with a buffer
 * in its frame, so only the CFI says where the return address is; each
 * doing work after its call, so no call becomes a jump. */
#ifdef __clang__ /* clang omits frame pointers at -O2 and has no noclone */
#define CHAIN_FN(sec) __attribute__((noinline, section(sec)))
#else
#define CHAIN_FN(sec) \
	__attribute__((noinline, noclone, section(sec), optimize("omit-frame-pointer")))
#endif

extern char __start_mt_unw_f1[], __stop_mt_unw_f1[];
extern char __start_mt_unw_f2[], __stop_mt_unw_f2[];
extern char __start_mt_unw_f3[], __stop_mt_unw_f3[];
extern char __start_mt_unw_f4[], __stop_mt_unw_f4[];

CHAIN_FN("mt_unw_f4") int chain_f4(struct snap *s, __u32 want)
{
	volatile char pad[200];

	pad[want & 127] = (char)want;
	capture_regs(&s->regs);
	snap_copy(s, want);
	return pad[want & 127] + 1;
}

CHAIN_FN("mt_unw_f3") int chain_f3(struct snap *s, __u32 want)
{
	volatile char pad[40];

	pad[want & 31] = 3;
	return chain_f4(s, want) + pad[want & 31];
}

CHAIN_FN("mt_unw_f2") int chain_f2(struct snap *s, __u32 want)
{
	volatile char pad[520];

	pad[want & 511] = 2;
	return chain_f3(s, want) + pad[want & 511];
}

CHAIN_FN("mt_unw_f1") int chain_f1(struct snap *s, __u32 want)
{
	volatile char pad[16];

	pad[want & 15] = 1;
	return chain_f2(s, want) + pad[want & 15];
}

static bool ip_in(__u64 ip, const char *start, const char *stop)
{
	return ip > (__u64)start && ip - 1 < (__u64)stop;
}

/* ==== fixtures ========================================================= */

struct state {
	struct proc_cache *pc;
	struct unwinder *u;
	struct snap *snap; /* COPY_SIZE bytes */
	struct snap *full; /* the stack up to its top */
};

static int setup(void **state)
{
	struct state *st = calloc(1, sizeof(*st));
	pthread_attr_t attr;
	void *addr;
	size_t size;

	assert_non_null(st);
	assert_int_equal(pthread_getattr_np(pthread_self(), &attr), 0);
	assert_int_equal(pthread_attr_getstack(&attr, &addr, &size), 0);
	pthread_attr_destroy(&attr);
	stack_top = (__u64)addr + size;

	st->pc = proc_cache_new();
	assert_non_null(st->pc);
	st->u = unwinder_new(st->pc);
	assert_non_null(st->u);
	st->snap = malloc(sizeof(*st->snap));
	st->full = malloc(sizeof(*st->full));
	assert_non_null(st->snap);
	assert_non_null(st->full);
	assert_int_equal(chain_f1(st->snap, COPY_SIZE), 1 + 3 + 2 + 1);
	assert_int_equal(chain_f1(st->full, FULL_SIZE), 1 + 3 + 2 + 1);
	*state = st;
	return 0;
}

static int teardown(void **state)
{
	struct state *st = *state;

	unwinder_free(st->u);
	proc_cache_free(st->pc);
	free(st->snap);
	free(st->full);
	free(st);
	return 0;
}

/* ==== live snapshots =================================================== */

static void test_chain_in_order(void **state)
{
	struct state *st = *state;
	struct snap *s = st->snap;
	__u64 ips[MAX_IPS];
	bool truncated = false;
	int n;

	assert_true(ip_in(s->regs.ip, __start_mt_unw_f4, __stop_mt_unw_f4));
	n = unwinder_unwind(st->u, getpid(), &s->regs, s->stack, s->stack_len, ips, MAX_IPS,
			    &truncated);
	assert_true(n >= 5);
	assert_int_equal(ips[0], s->regs.ip);
	assert_true(ip_in(ips[1], __start_mt_unw_f3, __stop_mt_unw_f3));
	assert_true(ip_in(ips[2], __start_mt_unw_f2, __stop_mt_unw_f2));
	assert_true(ip_in(ips[3], __start_mt_unw_f1, __stop_mt_unw_f1));
	/* Above the chain: setup(), which is no chain function. */
	assert_false(ip_in(ips[4], __start_mt_unw_f1, __stop_mt_unw_f1));
}

/* The whole stack: the walk goes through libc and ends at _start, whose
 * CFI marks the return address undefined. */
static void test_full_stack_ends_cleanly(void **state)
{
	struct state *st = *state;
	struct snap *s = st->full;
	__u64 ips[MAX_IPS], again[MAX_IPS];
	bool truncated = true, in_libc = false;
	Dl_info info;
	int n;

	assert_true(s->stack_len < FULL_SIZE); /* reached the top */
	n = unwinder_unwind(st->u, getpid(), &s->regs, s->stack, s->stack_len, ips, MAX_IPS,
			    &truncated);
	assert_true(n > 6 && n < MAX_IPS);
	assert_false(truncated);
	assert_int_equal(unwinder_last_stop(st->u), UNWIND_STOP_END);
	assert_true(ip_in(ips[3], __start_mt_unw_f1, __stop_mt_unw_f1));
	for (int i = 4; i < n; i++)
		if (dladdr((void *)(ips[i] - 1), &info) && info.dli_fname &&
		    strstr(info.dli_fname, "libc.so"))
			in_libc = true;
	assert_true(in_libc);

	/* Exactly enough room is not a truncation; one slot less is. */
	assert_int_equal(unwinder_unwind(st->u, getpid(), &s->regs, s->stack, s->stack_len, again,
					 n, &truncated),
			 n);
	assert_false(truncated);
	assert_memory_equal(ips, again, n * sizeof(ips[0]));
	assert_int_equal(unwinder_unwind(st->u, getpid(), &s->regs, s->stack, s->stack_len, again,
					 n - 1, &truncated),
			 n - 1);
	assert_true(truncated);
	assert_int_equal(unwinder_last_stop(st->u), UNWIND_STOP_MAX);
}

static void *thread_main(void *arg)
{
	struct snap *s = arg;
	pthread_attr_t attr;
	size_t size;
	void *addr;

	if (pthread_getattr_np(pthread_self(), &attr) || pthread_attr_getstack(&attr, &addr, &size))
		return NULL;
	pthread_attr_destroy(&attr);
	thread_stack_top = (__u64)addr + size;
	return chain_f1(s, FULL_SIZE) == 1 + 3 + 2 + 1 ? s : NULL;
}

/* In a thread the outermost frame is glibc's clone3, whose CFI also marks
 * the return address undefined. */
static void test_thread_stack_ends_cleanly(void **state)
{
	struct state *st = *state;
	struct snap *s = malloc(sizeof(*s));
	__u64 ips[MAX_IPS];
	bool truncated = true;
	pthread_t t;
	void *ret;
	int n;

	assert_non_null(s);
	assert_int_equal(pthread_create(&t, NULL, thread_main, s), 0);
	assert_int_equal(pthread_join(t, &ret), 0);
	assert_ptr_equal(ret, s);
	n = unwinder_unwind(st->u, getpid(), &s->regs, s->stack, s->stack_len, ips, MAX_IPS,
			    &truncated);
	free(s);
	assert_true(n >= 6 && n < MAX_IPS);
	assert_false(truncated);
	assert_int_equal(unwinder_last_stop(st->u), UNWIND_STOP_END);
	assert_true(ip_in(ips[3], __start_mt_unw_f1, __stop_mt_unw_f1));
}

/* A second walk of the same stack is served by libunwind's cache: no new
 * table lookup. unwinder_forget() drops the cache; the result is the same. */
static void test_cache_and_forget(void **state)
{
	struct state *st = *state;
	struct snap *s = st->snap;
	__u64 ips[MAX_IPS], again[MAX_IPS];
	struct unwind_stats before, after;
	bool truncated;
	int n, m;

	n = unwinder_unwind(st->u, getpid(), &s->regs, s->stack, s->stack_len, ips, MAX_IPS,
			    &truncated);
	assert_true(n >= 5);
	unwinder_stats(st->u, &before);
	m = unwinder_unwind(st->u, getpid(), &s->regs, s->stack, s->stack_len, again, MAX_IPS,
			    &truncated);
	unwinder_stats(st->u, &after);
	assert_int_equal(m, n);
	assert_memory_equal(ips, again, n * sizeof(ips[0]));
	assert_int_equal(after.table_lookups, before.table_lookups);
	assert_int_equal(after.walks, before.walks + 1);

	unwinder_forget(st->u, getpid());
	m = unwinder_unwind(st->u, getpid(), &s->regs, s->stack, s->stack_len, again, MAX_IPS,
			    &truncated);
	unwinder_stats(st->u, &after);
	assert_int_equal(m, n);
	assert_memory_equal(ips, again, n * sizeof(ips[0]));
	assert_true(after.table_lookups > before.table_lookups);
}

static void test_short_copy_truncates(void **state)
{
	struct state *st = *state;
	struct snap *s = st->snap;
	__u64 ips[MAX_IPS];
	bool truncated = false;
	int n;

	/* chain_f4's frame alone is larger than 64 bytes. */
	n = unwinder_unwind(st->u, getpid(), &s->regs, s->stack, 64, ips, MAX_IPS, &truncated);
	assert_int_equal(n, 1);
	assert_int_equal(ips[0], s->regs.ip);
	assert_true(truncated);
	assert_int_equal(unwinder_last_stop(st->u), UNWIND_STOP_STACK);

	truncated = false;
	n = unwinder_unwind(st->u, getpid(), &s->regs, NULL, 0, ips, MAX_IPS, &truncated);
	assert_int_equal(n, 1);
	assert_true(truncated);
}

static void test_max_truncates(void **state)
{
	struct state *st = *state;
	struct snap *s = st->snap;
	__u64 ips[3];
	bool truncated = false;

	assert_int_equal(unwinder_unwind(st->u, getpid(), &s->regs, s->stack, s->stack_len, ips, 3,
					 &truncated),
			 3);
	assert_true(truncated);
	assert_int_equal(unwinder_last_stop(st->u), UNWIND_STOP_MAX);
	assert_true(ip_in(ips[2], __start_mt_unw_f2, __stop_mt_unw_f2));

	assert_int_equal(unwinder_unwind(st->u, getpid(), &s->regs, s->stack, s->stack_len, ips, 1,
					 &truncated),
			 1);
	assert_true(truncated);
}

static void test_bad_arguments(void **state)
{
	struct state *st = *state;
	struct snap *s = st->snap;
	__u64 ips[4];
	bool truncated;

	assert_int_equal(unwinder_unwind(NULL, getpid(), &s->regs, s->stack, 8, ips, 4, &truncated),
			 -EINVAL);
	assert_int_equal(unwinder_unwind(st->u, getpid(), NULL, s->stack, 8, ips, 4, &truncated),
			 -EINVAL);
	assert_int_equal(unwinder_unwind(st->u, getpid(), &s->regs, s->stack, 8, ips, 0, &truncated),
			 -EINVAL);
	assert_int_equal(unwinder_unwind(st->u, getpid(), &s->regs, NULL, 8, ips, 4, &truncated),
			 -EINVAL);
	errno = 0;
	assert_null(unwinder_new(NULL));
	assert_int_equal(errno, EINVAL);
	unwinder_free(NULL);
}

/* No unwind info for the ip (unmapped, a writable mapping, anonymous
 * executable memory), and a process that does not exist: one frame,
 * truncated. */
static void test_no_info(void **state)
{
	struct state *st = *state;
	struct snap *s = st->snap;
	struct mt_regs r = s->regs;
	static __u8 anon_code[64];
	__u64 ips[MAX_IPS];
	bool truncated = false;
	void *jit;

	r.ip = 0x10;
	assert_int_equal(unwinder_unwind(st->u, getpid(), &r, s->stack, s->stack_len, ips, MAX_IPS,
					 &truncated),
			 1);
	assert_true(truncated);
	assert_int_equal(unwinder_last_stop(st->u), UNWIND_STOP_NOINFO);

	r.ip = (__u64)anon_code + 8; /* .bss: a writable mapping */
	truncated = false;
	assert_int_equal(unwinder_unwind(st->u, getpid(), &r, s->stack, s->stack_len, ips, MAX_IPS,
					 &truncated),
			 1);
	assert_true(truncated);

	/* Anonymous executable memory, as a JIT makes. */
	jit = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(jit != MAP_FAILED);
	r.ip = (__u64)jit + 16;
	truncated = false;
	assert_int_equal(unwinder_unwind(st->u, getpid(), &r, s->stack, s->stack_len, ips, MAX_IPS,
					 &truncated),
			 1);
	assert_true(truncated);
	assert_int_equal(unwinder_last_stop(st->u), UNWIND_STOP_NOINFO);
	munmap(jit, 4096);

	truncated = false;
	assert_int_equal(unwinder_unwind(st->u, INT_MAX, &s->regs, s->stack, s->stack_len, ips,
					 MAX_IPS, &truncated),
			 1);
	assert_true(truncated);
	unwinder_forget(st->u, INT_MAX);
}

/* Garbage registers and stack bytes, and real code addresses over a
 * garbled stack: never a crash, always a bounded, well-formed result. */
static void test_garbage(void **state)
{
	struct state *st = *state;
	static __u8 junk[COPY_SIZE];
	__u64 ips[16], code[] = {
		st->snap->regs.ip,
		(__u64)&chain_f2 + 5,
		(__u64)&memcpy + 16,
		(__u64)&fopen + 3,
	};
	struct mt_regs r;
	bool truncated;
	int n;

	srand(42);
	for (int iter = 0; iter < 3000; iter++) {
		__u64 *w = (__u64 *)&r;

		for (size_t i = 0; i < sizeof(r) / 8; i++)
			w[i] = ((__u64)rand() << 33) ^ ((__u64)rand() << 11) ^ (__u64)rand();
		for (size_t i = 0; i < sizeof(junk); i++)
			junk[i] = (__u8)rand();
		/* Plausible values too: real code, stack-looking pointers. */
		if (iter % 3)
			r.ip = code[iter % 4];
		if (iter % 2)
			memcpy(junk + 8 * (rand() % 64), &code[rand() % 4], 8);
		truncated = false;
		n = unwinder_unwind(st->u, getpid(), &r, junk, sizeof(junk), ips, 16, &truncated);
		if (n < 0) {
			assert_true(n >= -4095);
			continue;
		}
		assert_true(n >= 1 && n <= 16);
		assert_int_equal(ips[0], r.ip);
		if (n == 16)
			assert_true(truncated);
	}
}

/* ==== the recorded fixture ============================================= */

struct recorded {
	struct mt_regs regs;
	int nframes;
	char names[8][32];
	__u64 start[8], end[8];
	__u32 stack_len;
	__u8 stack[COPY_SIZE];
	char exe_maps[4][128]; /* the recorder's own mappings: "start-end perms offset" */
	int nexe;
};

static const char *fixture_dir(void)
{
	static char dir[PATH_MAX];
	char exe[PATH_MAX - 64];
	ssize_t n;

	if (access("tests/fixtures/unwind/chain.snap", R_OK) == 0)
		return "tests/fixtures/unwind";
	/* build/tests/test_unwind -> tests/fixtures/unwind */
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return NULL;
	exe[n] = 0;
	*strrchr(exe, '/') = 0;
	snprintf(dir, sizeof(dir), "%s/../../tests/fixtures/unwind", exe);
	return dir;
}

static int load_recorded(const char *path, struct recorded *rec)
{
	char line[512], name[32];
	FILE *f = fopen(path, "r");
	int section = 0; /* 1 stack, 2 maps */
	__u32 have = 0;
	__u64 a, b;

	if (!f)
		return -errno;
	memset(rec, 0, sizeof(*rec));
	while (fgets(line, sizeof(line), f)) {
		struct mt_regs *r = &rec->regs;

		if (line[0] == '#')
			continue;
		if (sscanf(line,
			   "regs ip=%llx sp=%llx bp=%llx bx=%llx r12=%llx r13=%llx "
			   "r14=%llx r15=%llx",
			   &r->ip, &r->sp, &r->bp, &r->bx, &r->r12, &r->r13, &r->r14, &r->r15) == 8)
			continue;
		if (sscanf(line, "frame %31s %llx %llx", name, &a, &b) == 3 && rec->nframes < 8) {
			strcpy(rec->names[rec->nframes], name);
			rec->start[rec->nframes] = a;
			rec->end[rec->nframes++] = b;
			continue;
		}
		if (sscanf(line, "stack %x", &rec->stack_len) == 1 && rec->stack_len <= COPY_SIZE) {
			section = 1;
			continue;
		}
		if (!strcmp(line, "maps\n")) {
			section = 2;
			continue;
		}
		if (section == 1) {
			for (char *p = line; p[0] && p[1] && p[0] != '\n' && have < rec->stack_len;
			     p += 2) {
				unsigned int byte;

				if (sscanf(p, "%2x", &byte) != 1)
					break;
				rec->stack[have++] = (__u8)byte;
			}
		} else if (section == 2 && strstr(line, "/chain\n") && rec->nexe < 4) {
			char range[64], perms[8], off[32];

			if (sscanf(line, "%63s %7s %31s", range, perms, off) == 3)
				snprintf(rec->exe_maps[rec->nexe++], 128, "%s %s %s", range, perms,
					 off);
		}
	}
	fclose(f);
	return have == rec->stack_len && rec->nframes > 0 && rec->nexe > 0 ? 0 : -EINVAL;
}

/* Start `chain wait` and return its pid once it is running, or -1. */
static pid_t spawn_chain(const char *dir)
{
	char exe[PATH_MAX + 16], buf[16];
	int pfd[2];
	pid_t pid;

	snprintf(exe, sizeof(exe), "%s/chain", dir);
	if (pipe(pfd))
		return -1;
	pid = fork();
	if (pid == 0) {
		dup2(pfd[1], 1);
		close(pfd[0]);
		execl(exe, exe, "wait", (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	if (pid > 0 && read(pfd[0], buf, sizeof(buf)) != 6) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		pid = -1;
	}
	close(pfd[0]);
	return pid;
}

/* Every recorded mapping of the executable is mapped the same in pid. */
static bool same_layout(pid_t pid, const struct recorded *rec)
{
	char path[64], line[512];
	int found = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "r");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		for (int i = 0; i < rec->nexe; i++)
			if (!strncmp(line, rec->exe_maps[i], strlen(rec->exe_maps[i])) &&
			    strstr(line, "/chain\n"))
				found++;
	}
	fclose(f);
	return found == rec->nexe;
}

static void test_recorded_fixture(void **state)
{
	struct state *st = *state;
	struct recorded *rec = calloc(1, sizeof(*rec));
	const char *dir = fixture_dir();
	char path[PATH_MAX + 16];
	__u64 ips[MAX_IPS], short_ips[MAX_IPS];
	bool truncated = true, short_truncated = false, half_truncated = false;
	enum unwind_stop stop, short_stop, half_stop;
	int n, short_n, half_n, whole_n;
	__u32 ra_off;
	pid_t pid;

	assert_non_null(rec);
	assert_non_null(dir);
	snprintf(path, sizeof(path), "%s/chain.snap", dir);
	assert_int_equal(load_recorded(path, rec), 0);
	assert_int_equal(rec->nframes, 6);
	assert_string_equal(rec->names[0], "f4");
	assert_string_equal(rec->names[5], "_start");

	pid = spawn_chain(dir);
	assert_true(pid > 0);
	if (!same_layout(pid, rec)) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		free(rec);
		fail_msg("chain does not map as recorded: re-run tests/fixtures/unwind/record.sh");
	}
	n = unwinder_unwind(st->u, pid, &rec->regs, rec->stack, rec->stack_len, ips, MAX_IPS,
			    &truncated);
	stop = unwinder_last_stop(st->u);
	/* The same snapshot with the copy ending inside f3's frame: f4's
	 * return address is in it, f3's is not. */
	short_n = unwinder_unwind(st->u, pid, &rec->regs, rec->stack, 0x100, short_ips, MAX_IPS,
				  &short_truncated);
	short_stop = unwinder_last_stop(st->u);
	/* f4's return address (into f3) half inside the copy: unreadable. */
	for (ra_off = 0; ra_off + 8 <= rec->stack_len; ra_off += 8) {
		__u64 v;

		memcpy(&v, rec->stack + ra_off, 8);
		if (v > rec->start[1] && v <= rec->end[1])
			break;
	}
	half_n = unwinder_unwind(st->u, pid, &rec->regs, rec->stack, ra_off + 4, short_ips, MAX_IPS,
				 &half_truncated);
	half_stop = unwinder_last_stop(st->u);
	whole_n = unwinder_unwind(st->u, pid, &rec->regs, rec->stack, ra_off + 8, short_ips,
				  MAX_IPS, &half_truncated);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	unwinder_forget(st->u, pid);
	proc_cache_forget(st->pc, pid);

	assert_int_equal(n, rec->nframes);
	assert_false(truncated);
	assert_int_equal(stop, UNWIND_STOP_END);
	assert_int_equal(ips[0], rec->regs.ip);
	for (int i = 0; i < n; i++)
		assert_true(ips[i] > rec->start[i] && ips[i] - 1 < rec->end[i]);

	assert_int_equal(short_n, 2);
	assert_true(short_truncated);
	assert_int_equal(short_stop, UNWIND_STOP_STACK);
	assert_memory_equal(short_ips, ips, 2 * sizeof(ips[0]));

	assert_true(ra_off + 8 <= rec->stack_len);
	assert_int_equal(half_n, 1);
	assert_true(half_truncated);
	assert_int_equal(half_stop, UNWIND_STOP_STACK);
	assert_int_equal(whole_n, 2);
	free(rec);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_chain_in_order),
		cmocka_unit_test(test_full_stack_ends_cleanly),
		cmocka_unit_test(test_thread_stack_ends_cleanly),
		cmocka_unit_test(test_cache_and_forget),
		cmocka_unit_test(test_short_copy_truncates),
		cmocka_unit_test(test_max_truncates),
		cmocka_unit_test(test_bad_arguments),
		cmocka_unit_test(test_no_info),
		cmocka_unit_test(test_garbage),
		cmocka_unit_test(test_recorded_fixture),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}

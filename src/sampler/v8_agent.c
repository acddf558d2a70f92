// SPDX-License-Identifier: GPL-2.0-only
/*
 * v8_agent.c - libmemtop-v8.so, the agent memtop maps into a Node.js
 * process to see its JavaScript heap by call site (docs/node.md). Its
 * contract is include/memtop/v8_abi.h.
 *
 * It is loaded like libmemtop-inject.so, without the dynamic loader: no
 * C library, no imports, no relocations, no TLS, no constructor. Every
 * function it calls is the process's own (V8's public C++ API and libuv,
 * both exported by node for addons) at an address memtop wrote into the
 * control block. C, not C++: V8's members are called with the object as
 * their first argument and its two virtual calls through the vtable, as
 * the Itanium C++ ABI lays them out; the few V8 layouts it reads are
 * below, each from V8's include/v8-profiler.h of the versions memtop names
 * in ctl.want_version (the start refuses any other): the same in V8 11.3
 * (Node 20) and 10.2 (Node 18, Debian 12's libnode-dev 18.20.4).
 *
 * Where it runs, all on the process's JavaScript thread:
 *   - mt_v8_start, once per start: memtop holds that thread under ptrace
 *     while it waits in epoll_wait inside libuv's poll (no JavaScript on
 *     its stack, no V8 lock held: where libuv calls every callback) and
 *     makes it run this entry, which checks V8's version, starts V8's
 *     sampling heap profiler and a libuv timer (unreferenced: it never
 *     keeps the process alive), then ends with int3 for memtop;
 *   - tick(), the timer's callback, every MT_V8_TICK_MS: stops everything
 *     when memtop asks (want 0) or its lease has run out (memtop killed),
 *     else writes a snapshot when memtop asked for one (request).
 * Nothing runs on any other thread, and no thread is created.
 */
#include <stdbool.h>
#include <stddef.h>

#include "memtop/v8_abi.h"

#define SHARED __attribute__((visibility("hidden"), used))

SHARED struct mt_v8_ctl mt_v8_ctl = {
	.magic = MT_V8_MAGIC,
	.version = MT_V8_VERSION,
};

SHARED unsigned char mt_v8_buf[MT_V8_BUF_SIZE] __attribute__((aligned(64)));

/* Two libuv timers, used in turn: a timer closed by a stop may not have
 * had its close completed by the loop when a later memtop starts again.
 * uv_timer_t is 152 bytes in libuv 1.4x; room to spare. */
static unsigned char timers[2][512] __attribute__((aligned(64)));
static void *heap_profiler, *isolate;

/* ---- V8's layouts (include/v8-profiler.h, V8 11.3; libstdc++) ---- */

/* std::vector<T>: begin, end, end of storage. */
struct cxx_vector {
	char *begin, *end, *cap;
};

/* v8::AllocationProfile::Node */
struct v8_node {
	void *name;        /* Local<String> */
	void *script_name; /* Local<String> */
	int script_id;
	int start_position;
	int line_number; /* 1-based; 0: kNoLineNumberInfo */
	int column_number;
	__u32 node_id;
	struct cxx_vector children; /* Node* */
	struct cxx_vector allocations;
};

/* v8::AllocationProfile::Sample */
struct v8_sample {
	__u32 node_id;
	__u64 size;
	unsigned int count;
	__u64 sample_id;
};

/* v8::AllocationProfile's virtual functions, in declaration order:
 * GetRootNode, GetSamples, then the destructor's two entries (complete,
 * deleting). */
enum { VT_ROOT = 0, VT_SAMPLES = 1, VT_DELETE = 3 };

_Static_assert(sizeof(struct v8_node) == 88, "AllocationProfile::Node layout");
_Static_assert(sizeof(struct v8_sample) == 32, "AllocationProfile::Sample layout");

/* String::WriteOptions: no terminator, orphan surrogates replaced (valid UTF-8) */
#define WRITE_OPTIONS (2 | 8)

typedef const char *get_version_fn(void);
typedef void *try_get_current_fn(void);
typedef void *get_heap_profiler_fn(void *isolate);
typedef bool start_sampling_fn(void *hp, __u64 interval, int depth, int flags);
typedef void stop_sampling_fn(void *hp);
typedef void *get_profile_fn(void *hp);
typedef void scope_open_fn(void *scope, void *isolate);
typedef void scope_close_fn(void *scope);
typedef int write_utf8_fn(void *str, void *isolate, char *buf, int len, int *nchars, int options);
typedef void *uv_default_loop_fn(void);
typedef int uv_timer_init_fn(void *loop, void *timer);
typedef int uv_timer_start_fn(void *timer, void (*cb)(void *), __u64 timeout, __u64 repeat);
typedef int uv_timer_stop_fn(void *timer);
typedef void uv_unref_fn(void *handle);
typedef void uv_close_fn(void *handle, void (*cb)(void *));

#define FN(k, type) ((type *)(unsigned long)mt_v8_ctl.fn[k])

/* ---- no C library: the few helpers it would give ---- */

static __u64 mono_ns(void)
{
	struct {
		long sec, nsec;
	} ts = { 0, 0 };
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "0"(228L /* clock_gettime */), "D"(1L /* CLOCK_MONOTONIC */), "S"(&ts)
			 : "rcx", "r11", "memory");
	return ret ? 0 : (__u64)ts.sec * 1000000000ull + (__u64)ts.nsec;
}

static void copy(void *dst, const void *src, size_t n)
{
#ifndef __clang_analyzer__
	volatile unsigned char *d = dst;
	const unsigned char *s = src;

	while (n--)
		*d++ = *s++;
#else
	/* scan-build only: what is copied was read from V8's objects through
	 * V8's vtables, memory the analyzer can only call undefined */
	(void)dst, (void)src, (void)n;
#endif
}

static void say(char *dst, size_t cap, const char *msg)
{
	size_t i = 0;

	while (msg[i] && i + 1 < cap) {
		dst[i] = msg[i];
		i++;
	}
	dst[i] = '\0';
}

/* Does s start with one of the '|'-separated prefixes of list? */
static bool has_prefix(const char *s, const char *list)
{
	while (*list) {
		const char *p = s;

		while (*list && *list != '|' && *p == *list) {
			p++;
			list++;
		}
		if (!*list || *list == '|')
			return true;
		while (*list && *list != '|')
			list++;
		if (*list == '|')
			list++;
	}
	return false;
}

/* ---- the snapshot ---- */

struct writer {
	unsigned char *at, *end; /* nodes and samples grow up from at */
	unsigned char *text;     /* text grows here, in its own region */
	__u32 text_len, text_cap;
	bool cut;
};

/* File names repeat across a script's functions: each script's once. */
#define SCRIPTS 256
static struct {
	int id;
	__u32 off;
	__u16 len;
	bool used;
} scripts[SCRIPTS];

static void text_put(struct writer *w, void *str, __u32 *off, __u16 *len)
{
	int cap = (int)(w->text_cap - w->text_len), n;

	*off = w->text_len;
	*len = 0;
	if (!str)
		return;
	if (cap > MT_V8_TEXT_MAX)
		cap = MT_V8_TEXT_MAX;
	if (cap <= 0) {
		w->cut = true;
		return;
	}
	n = FN(MT_V8_WRITE_UTF8, write_utf8_fn)(str, isolate, (char *)w->text + w->text_len, cap,
						NULL, WRITE_OPTIONS);
	if (n < 0)
		n = 0;
	if (n > cap)
		n = cap;
	w->text_len += (__u32)n;
	*len = (__u16)n;
}

static void file_put(struct writer *w, const struct v8_node *n, __u32 *off, __u16 *len)
{
	unsigned int h = (unsigned int)n->script_id % SCRIPTS, i;

	for (i = 0; i < 8; i++) {
		unsigned int k = (h + i) % SCRIPTS;

		if (scripts[k].used && scripts[k].id == n->script_id) {
			*off = scripts[k].off;
			*len = scripts[k].len;
			return;
		}
		if (!scripts[k].used) {
			text_put(w, n->script_name, off, len);
			scripts[k].used = true;
			scripts[k].id = n->script_id;
			scripts[k].off = *off;
			scripts[k].len = *len;
			return;
		}
	}
	text_put(w, n->script_name, off, len);
}

static bool room(struct writer *w, size_t n)
{
	if ((size_t)(w->end - w->at) < n) {
		w->cut = true;
		return false;
	}
	return true;
}

/* The call tree, parents first: a walk with an explicit stack, at most
 * MT_V8_MAX_DEPTH deep (V8 records MT_V8_STACK_DEPTH frames). */
static __u32 write_nodes(struct writer *w, struct v8_node *root)
{
	struct {
		struct v8_node *node;
		size_t next;
	} stack[MT_V8_MAX_DEPTH];
	int depth = 0;
	__u32 count = 0;

	for (int i = 0; i < SCRIPTS; i++)
		scripts[i].used = false;
	stack[0].node = root;
	stack[0].next = 0;
	while (depth >= 0) {
		struct v8_node *n = stack[depth].node;
		struct mt_v8_node out;

		if (stack[depth].next == 0) {
			if (!room(w, sizeof(out)))
				break;
			out.id = n->node_id;
			out.parent = depth ? stack[depth - 1].node->node_id : 0;
			out.line = n->line_number > 0 ? (__u32)n->line_number : 0;
			text_put(w, n->name, &out.name_off, &out.name_len);
			file_put(w, n, &out.file_off, &out.file_len);
			copy(w->at, &out, sizeof(out));
			w->at += sizeof(out);
			count++;
		}
		{
			size_t nchildren =
				(size_t)(n->children.end - n->children.begin) / sizeof(void *);
			size_t k = stack[depth].next;

			if (k < nchildren && depth + 1 < MT_V8_MAX_DEPTH) {
				stack[depth].next = k + 1;
				depth++;
				stack[depth].node = ((struct v8_node **)n->children.begin)[k];
				stack[depth].next = 0;
				continue;
			}
		}
		depth--;
	}
	return count;
}

static __u32 write_samples(struct writer *w, const struct cxx_vector *v)
{
	const struct v8_sample *s = (const struct v8_sample *)v->begin;
	size_t n = (size_t)(v->end - v->begin) / sizeof(*s), i;
	__u32 count = 0;

	for (i = 0; i < n; i++) {
		struct mt_v8_sample out;

		if (!room(w, sizeof(out)))
			break;
		out.sample_id = s[i].sample_id;
		out.size = s[i].size;
		out.node_id = s[i].node_id;
		out.count = s[i].count;
		copy(w->at, &out, sizeof(out));
		w->at += sizeof(out);
		count++;
	}
	return count;
}

/* The live samples and their call tree, into mt_v8_buf under the
 * sequence lock. Run on the JavaScript thread, outside JavaScript. */
static void collect(void)
{
	__u64 scope[8]; /* v8::HandleScope: 3 pointers */
	__u64 t0 = mono_ns(), took;
	struct mt_v8_snap hdr = { 0 };
	struct writer w;
	void *profile, **vtable;
	struct v8_node *root;
	const struct cxx_vector *samples;
	/* text takes the last quarter of the buffer */
	__u32 text_at = MT_V8_BUF_SIZE / 4 * 3;

	FN(MT_V8_SCOPE_OPEN, scope_open_fn)(scope, isolate);
	profile = FN(MT_V8_GET_PROFILE, get_profile_fn)(heap_profiler);
	if (!profile) {
		FN(MT_V8_SCOPE_CLOSE, scope_close_fn)(scope);
		return;
	}
	vtable = *(void ***)profile;
	root = ((struct v8_node * (*)(void *)) vtable[VT_ROOT])(profile);
	samples = ((const struct cxx_vector *(*)(void *))vtable[VT_SAMPLES])(profile);

	__atomic_store_n(&mt_v8_ctl.seq, mt_v8_ctl.seq + 1, __ATOMIC_RELEASE);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	w.at = mt_v8_buf + sizeof(hdr);
	w.end = mt_v8_buf + text_at;
	w.text = mt_v8_buf + text_at;
	w.text_len = 0;
	w.text_cap = MT_V8_BUF_SIZE - text_at;
	w.cut = false;
	hdr.nnodes = root ? write_nodes(&w, root) : 0;
	hdr.nsamples = write_samples(&w, samples);
	/* the text right after the samples */
	copy(w.at, w.text, w.text_len);
	hdr.text_len = w.text_len;
	hdr.flags = w.cut ? MT_V8_SNAP_CUT : 0;
	hdr.interval = mt_v8_ctl.interval;
	hdr.ts_ns = t0;
	copy(mt_v8_buf, &hdr, sizeof(hdr));
	mt_v8_ctl.snap_len = (__u64)(w.at - mt_v8_buf) + w.text_len;
	mt_v8_ctl.served = mt_v8_ctl.request;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	__atomic_store_n(&mt_v8_ctl.seq, mt_v8_ctl.seq + 1, __ATOMIC_RELEASE);

	((void (*)(void *))vtable[VT_DELETE])(profile);
	FN(MT_V8_SCOPE_CLOSE, scope_close_fn)(scope);
	took = mono_ns() - t0;
	mt_v8_ctl.collections++;
	mt_v8_ctl.collect_ns += took;
	if (took > mt_v8_ctl.collect_ns_max)
		mt_v8_ctl.collect_ns_max = took;
}

static void *timer_now(void)
{
	return timers[mt_v8_ctl.generation & 1];
}

static void stop(void)
{
	FN(MT_V8_STOP_SAMPLING, stop_sampling_fn)(heap_profiler);
	FN(MT_UV_TIMER_STOP, uv_timer_stop_fn)(timer_now());
	FN(MT_UV_CLOSE, uv_close_fn)(timer_now(), NULL);
	__atomic_store_n(&mt_v8_ctl.state, MT_V8_STOPPED, __ATOMIC_RELEASE);
}

static void tick(void *timer)
{
	(void)timer;
	if (__atomic_load_n(&mt_v8_ctl.state, __ATOMIC_ACQUIRE) != MT_V8_ON)
		return;
	if (!__atomic_load_n(&mt_v8_ctl.want, __ATOMIC_ACQUIRE) ||
	    mono_ns() > __atomic_load_n(&mt_v8_ctl.lease_ns, __ATOMIC_ACQUIRE)) {
		stop();
		return;
	}
	if (__atomic_load_n(&mt_v8_ctl.request, __ATOMIC_ACQUIRE) != mt_v8_ctl.served)
		collect();
}

static void refuse(const char *why)
{
	say(mt_v8_ctl.why, sizeof(mt_v8_ctl.why), why);
	__atomic_store_n(&mt_v8_ctl.state, MT_V8_REFUSED, __ATOMIC_RELEASE);
}

/* The start, run once by memtop on the JavaScript thread it holds in
 * epoll_wait (mt_v8_start below is the entry). */
SHARED void v8_agent_start(void)
{
	const char *version;
	void *loop, *timer;
	int k;

	if (mt_v8_ctl.state == MT_V8_ON)
		return;
	for (k = 0; k < MT_V8_FN_COUNT; k++) {
		if (!mt_v8_ctl.fn[k]) {
			refuse("a V8 or libuv function is missing");
			return;
		}
	}
	version = FN(MT_V8_GET_VERSION, get_version_fn)();
	say(mt_v8_ctl.v8_version, sizeof(mt_v8_ctl.v8_version), version ? version : "");
	if (!version || !mt_v8_ctl.want_version[0] || !has_prefix(version, mt_v8_ctl.want_version)) {
		refuse("V8 version not supported");
		return;
	}
	isolate = FN(MT_V8_TRY_GET_CURRENT, try_get_current_fn)();
	if (!isolate) {
		refuse("no V8 isolate on the held thread");
		return;
	}
	heap_profiler = FN(MT_V8_GET_HEAP_PROFILER, get_heap_profiler_fn)(isolate);
	if (!heap_profiler) {
		refuse("no heap profiler");
		return;
	}
	loop = FN(MT_UV_DEFAULT_LOOP, uv_default_loop_fn)();
	if (!loop) {
		refuse("no libuv default loop");
		return;
	}
	/* V8 returns false when its sampling heap profiler runs already
	 * (an inspector session, --heap-prof): leave it to its owner */
	if (!FN(MT_V8_START_SAMPLING, start_sampling_fn)(heap_profiler, mt_v8_ctl.interval,
							 MT_V8_STACK_DEPTH, 0)) {
		refuse("V8's sampling heap profiler is in use (--heap-prof, an inspector?)");
		return;
	}
	mt_v8_ctl.isolate = (__u64)(unsigned long)isolate;
	mt_v8_ctl.generation++;
	timer = timer_now();
	FN(MT_UV_TIMER_INIT, uv_timer_init_fn)(loop, timer);
	FN(MT_UV_TIMER_START, uv_timer_start_fn)(timer, tick, MT_V8_TICK_MS, MT_V8_TICK_MS);
	FN(MT_UV_UNREF, uv_unref_fn)(timer);
	mt_v8_ctl.why[0] = '\0';
	__atomic_store_n(&mt_v8_ctl.state, MT_V8_ON, __ATOMIC_RELEASE);
}

/* The entry memtop points the held thread at: below the thread's red
 * zone, a 16-byte aligned stack for a C call, then int3 hands the thread
 * back to memtop, which restores every register. */
__asm__(".text\n"
	".globl mt_v8_start\n"
	".hidden mt_v8_start\n"
	".type mt_v8_start, @function\n"
	"mt_v8_start:\n"
	"	sub $512, %rsp\n"
	"	and $-16, %rsp\n"
	"	call v8_agent_start\n"
	"	int3\n"
	".size mt_v8_start, .-mt_v8_start\n");

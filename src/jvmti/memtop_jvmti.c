// SPDX-License-Identifier: GPL-2.0-only
/*
 * memtop_jvmti.c - libmemtop-jvmti.so, the JVMTI agent memtop loads into a
 * running JVM (docs/java.md). Its contract:
 *
 * - Loaded (Agent_OnAttach), it checks the JVM offers JVMTI 11 (heap
 *   sampling), listens on MT_JW_SOCKET_PREFIX<pid> in the JVM's /tmp (mode
 *   0600) and starts one daemon thread, "memtop-jvmti". Nothing else: no
 *   event is on and no capability held until memtop connects. A second
 *   load of the same file does nothing (memtop finds the socket first).
 * - A session is one connection from the JVM's own user or root
 *   (SO_PEERCRED). It opens with MT_JW_START (the sampling interval); the
 *   thread then takes a JVMTI environment of its own with sampled-allocation
 *   events, object tags and ObjectFree events, sets the interval, and
 *   streams what the JVM samples (include/memtop/jvm_wire.h).
 * - In the JVM's allocating threads (SampledObjectAlloc) and its service
 *   thread (ObjectFree) the agent never waits on memtop: the stack
 *   (GetStackTrace of the current thread) and a fresh tag go into a
 *   fixed queue, or are counted as dropped when it is full.
 * - Method names and line tables are resolved by the agent's thread,
 *   once per jmethodID (a cache), and named to memtop once per session.
 * - The connection's end (memtop's exit, or its death: the kernel closes
 *   the socket) ends the session: events off, the sampling interval back to
 *   HotSpot's default (512 KiB), the environment disposed (its tags with
 *   it). JVMTI cannot unload an agent, so the library and its idle thread
 *   (blocked in accept) stay; the next memtop reuses them.
 * - When the JVM terminates (Agent_OnUnload) the socket's name is removed
 *   from its /tmp, if it is still the one the agent bound.
 */

#include <errno.h>
#include <jvmti.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>

#include "memtop/jvm_wire.h"
#include "jvmti/queue.h"

#define EXPORT __attribute__((visibility("default")))

/* HotSpot's default heap sampling interval (HeapSamplingInterval is not
 * readable through JVMTI): what a session's end puts back. */
#define DEFAULT_INTERVAL (512 * 1024)
#define SAMPLE_CELLS 4096
#define FREE_CELLS 65536
#define START_WAIT_MS 5000
#define SEND_BUF (64 * 1024)
/* A callback timed longer than this was preempted or waited (for a
 * safepoint): it counts as this long. */
#define CALLBACK_CLIP_NS 100000

struct sample_cell {
	uint64_t tag;
	uint64_t size;
	uint64_t interval;
	uint32_t tid;
	uint16_t nframes;
	uint16_t flags;
	jvmtiFrameInfo frames[MT_JW_MAX_FRAMES];
};

struct method {
	jmethodID key; /* NULL: empty slot */
	uint32_t id;
	uint32_t named_in; /* the session that was told its name (0: none) */
	char *name;
	char *file;
	jvmtiLineNumberEntry *lines;
	jint nlines;
};

static JavaVM *the_vm;
static int listen_fd = -1;
/* The socket's path and the inode bind() made there: what the JVM's end
 * removes, and only while it is still that one. */
static char listen_path[108];
static ino_t listen_ino;
static atomic_int loaded;
static struct jq samples, frees;
/* The session now streaming (0: none); read by the JVM's threads. */
static _Atomic uint32_t active_session;
static uint32_t sessions_served;
static _Atomic uint64_t next_tag = 1;
static _Atomic uint64_t n_samples, n_dropped, callback_ns;
/* The session's sampling interval: memtop's, and the one in force now
 * (widened past MT_JW_SAMPLES_PER_S_MAX samples a second). */
static uint64_t interval_asked;
static _Atomic uint64_t interval_now;

static struct method *methods;
static size_t methods_cap, methods_len;

/* ---- in the JVM's threads: never wait ------------------------------------ */

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static uint64_t thread_cpu_ns(void)
{
	return clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

/* What one callback cost its thread: timed on the monotonic clock, read
 * in the vDSO in some 20 ns. (The thread's CPU clock is a system call;
 * under a VM's mitigations the entry and exit of the two calls around a
 * callback of 3 us added 1-2 us, and the slowdown shown was twice the
 * measured one.) A callback longer than CALLBACK_CLIP_NS was preempted
 * or waited, not working: it counts as CALLBACK_CLIP_NS. */
static void callback_cost(uint64_t t0)
{
	uint64_t d = clock_ns(CLOCK_MONOTONIC) - t0;

	atomic_fetch_add_explicit(&callback_ns, d < CALLBACK_CLIP_NS ? d : CALLBACK_CLIP_NS,
				  memory_order_relaxed);
}

static void JNICALL on_sampled_alloc(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jobject object,
				     jclass klass, jlong size)
{
	static __thread uint32_t my_tid;
	struct sample_cell c;
	jint n = 0;
	uint64_t t0;

	if (!atomic_load_explicit(&active_session, memory_order_relaxed))
		return;
	t0 = clock_ns(CLOCK_MONOTONIC);
	if ((*jvmti)->GetStackTrace(jvmti, NULL, 0, MT_JW_MAX_FRAMES, c.frames, &n) !=
	    JVMTI_ERROR_NONE)
		n = 0;
	c.tag = atomic_fetch_add_explicit(&next_tag, 1, memory_order_relaxed);
	c.size = (uint64_t)size;
	c.interval = atomic_load_explicit(&interval_now, memory_order_relaxed);
	if (!my_tid)
		my_tid = (uint32_t)syscall(SYS_gettid);
	c.tid = my_tid;
	c.nframes = (uint16_t)n;
	c.flags = 0;
	if (n == MT_JW_MAX_FRAMES) {
		jint count;

		if ((*jvmti)->GetFrameCount(jvmti, NULL, &count) == JVMTI_ERROR_NONE && count > n)
			c.flags |= MT_JWS_TRUNCATED;
	}
	if ((*jvmti)->SetTag(jvmti, object, (jlong)c.tag) == JVMTI_ERROR_NONE) {
		atomic_fetch_add_explicit(&n_samples, 1, memory_order_relaxed);
		if (!jq_push(&samples, &c,
			     offsetof(struct sample_cell, frames) + n * sizeof(c.frames[0])))
			atomic_fetch_add_explicit(&n_dropped, 1, memory_order_relaxed);
	}
	callback_cost(t0);
}

static void JNICALL on_object_free(jvmtiEnv *jvmti, jlong tag)
{
	uint64_t t = (uint64_t)tag, t0;

	if (!atomic_load_explicit(&active_session, memory_order_relaxed))
		return;
	t0 = clock_ns(CLOCK_MONOTONIC);
	if (!jq_push(&frees, &t, sizeof(t)))
		atomic_fetch_add_explicit(&n_dropped, 1, memory_order_relaxed);
	callback_cost(t0);
}

/* ---- the agent's thread: names ----------------------------------------- */

static uint64_t ptr_hash(const void *p)
{
	uint64_t x = (uint64_t)(uintptr_t)p;

	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return x;
}

static int methods_grow(void)
{
	size_t cap = methods_cap ? methods_cap * 2 : 4096, i;
	struct method *v = calloc(cap, sizeof(*v));

	if (!v)
		return -1;
	for (i = 0; i < methods_cap; i++) {
		size_t k;

		if (!methods[i].key)
			continue;
		for (k = ptr_hash(methods[i].key) & (cap - 1); v[k].key; k = (k + 1) & (cap - 1))
			;
		v[k] = methods[i];
	}
	free(methods);
	methods = v;
	methods_cap = cap;
	return 0;
}

/* A JVMTI string copied into malloc'ed memory and given back. */
static char *take_string(jvmtiEnv *jvmti, char *s)
{
	char *c = s ? strndup(s, MT_JW_NAME_MAX) : NULL;

	if (s)
		(*jvmti)->Deallocate(jvmti, (unsigned char *)s);
	return c;
}

/* "Lcom/x/Y;" -> "com.x.Y" in place. */
static void class_name(char *sig)
{
	size_t n = strlen(sig), i;

	if (n >= 2 && sig[0] == 'L' && sig[n - 1] == ';') {
		memmove(sig, sig + 1, n - 2);
		sig[n - 2] = '\0';
	}
	for (i = 0; sig[i]; i++)
		if (sig[i] == '/')
			sig[i] = '.';
}

static void method_resolve(jvmtiEnv *jvmti, struct method *m)
{
	char *cls = NULL, *name = NULL, *file = NULL, buf[MT_JW_NAME_MAX + 1];
	jclass klass;
	jvmtiLineNumberEntry *lines = NULL;

	if ((*jvmti)->GetMethodDeclaringClass(jvmti, m->key, &klass) == JVMTI_ERROR_NONE) {
		(*jvmti)->GetClassSignature(jvmti, klass, &cls, NULL);
		(*jvmti)->GetSourceFileName(jvmti, klass, &file);
	}
	(*jvmti)->GetMethodName(jvmti, m->key, &name, NULL, NULL);
	cls = take_string(jvmti, cls);
	name = take_string(jvmti, name);
	if (cls)
		class_name(cls);
	snprintf(buf, sizeof(buf), "%s.%s", cls ? cls : "?", name ? name : "?");
	free(cls);
	free(name);
	m->name = strdup(buf);
	m->file = take_string(jvmti, file);
	if ((*jvmti)->GetLineNumberTable(jvmti, m->key, &m->nlines, &lines) == JVMTI_ERROR_NONE) {
		m->lines = malloc(m->nlines * sizeof(*lines));
		if (m->lines)
			memcpy(m->lines, lines, m->nlines * sizeof(*lines));
		else
			m->nlines = 0;
		(*jvmti)->Deallocate(jvmti, (unsigned char *)lines);
	} else {
		m->nlines = 0;
	}
}

/* The cache entry of method (resolved on first use), or NULL when the
 * cache cannot grow or the id space is spent. */
static struct method *method_of(jvmtiEnv *jvmti, jmethodID key)
{
	size_t k;

	if (!key)
		return NULL;
	if ((methods_len + 1) * 2 > methods_cap && methods_grow())
		return NULL;
	for (k = ptr_hash(key) & (methods_cap - 1); methods[k].key; k = (k + 1) & (methods_cap - 1))
		if (methods[k].key == key)
			return &methods[k];
	if (methods_len >= MT_JW_MAX_METHODS)
		return NULL;
	methods[k].key = key;
	methods[k].id = (uint32_t)methods_len++;
	methods[k].named_in = 0;
	method_resolve(jvmti, &methods[k]);
	if (!methods[k].name) {
		methods[k].key = NULL;
		methods_len--;
		return NULL;
	}
	return &methods[k];
}

static int32_t line_of(const struct method *m, jlocation at)
{
	jlocation best = -1;
	int32_t line = 0;
	jint i;

	if (at < 0)
		return 0;
	for (i = 0; i < m->nlines; i++) {
		if (m->lines[i].start_location <= at && m->lines[i].start_location > best) {
			best = m->lines[i].start_location;
			line = m->lines[i].line_number;
		}
	}
	return line;
}

/* ---- the agent's thread: the stream ------------------------------------ */

struct out {
	int fd;
	size_t len;
	bool broken;
	unsigned char buf[SEND_BUF];
};

static void out_flush(struct out *o)
{
	size_t done = 0;

	while (!o->broken && done < o->len) {
		ssize_t w = send(o->fd, o->buf + done, o->len - done, MSG_NOSIGNAL);

		if (w > 0)
			done += (size_t)w;
		else if (w < 0 && (errno == EINTR || errno == EAGAIN))
			continue; /* SO_SNDTIMEO: memtop slow; the queue absorbs or drops */
		else
			o->broken = true;
	}
	o->len = 0;
}

static void out_msg(struct out *o, uint32_t type, const void *a, size_t alen, const void *b,
		    size_t blen, const void *c, size_t clen)
{
	struct mt_jw_hdr h = { type, (uint32_t)(alen + blen + clen) };

	if (o->len + sizeof(h) + h.len > sizeof(o->buf))
		out_flush(o);
	memcpy(o->buf + o->len, &h, sizeof(h));
	o->len += sizeof(h);
	memcpy(o->buf + o->len, a, alen);
	o->len += alen;
	if (blen)
		memcpy(o->buf + o->len, b, blen);
	o->len += blen;
	if (clen)
		memcpy(o->buf + o->len, c, clen);
	o->len += clen;
}

static void send_sample(jvmtiEnv *jvmti, struct out *o, const struct sample_cell *c, uint32_t session)
{
	struct mt_jw_frame fr[MT_JW_MAX_FRAMES];
	struct mt_jw_sample s = { c->tag, c->size, c->tid, 0, c->flags, c->interval };
	uint16_t i;

	for (i = 0; i < c->nframes && i < MT_JW_MAX_FRAMES; i++) {
		struct method *m = method_of(jvmti, c->frames[i].method);

		if (!m) {
			s.flags |= MT_JWS_TRUNCATED;
			break;
		}
		if (m->named_in != session) {
			struct mt_jw_method mm = { m->id, (uint16_t)strlen(m->name),
						   (uint16_t)(m->file ? strlen(m->file) : 0) };

			out_msg(o, MT_JW_METHOD, &mm, sizeof(mm), m->name, mm.name_len, m->file,
				mm.file_len);
			m->named_in = session;
		}
		fr[s.nframes].method = m->id;
		fr[s.nframes].line = line_of(m, c->frames[i].location);
		s.nframes++;
	}
	out_msg(o, MT_JW_SAMPLE, &s, sizeof(s), fr, s.nframes * sizeof(fr[0]), NULL, 0);
}

/* Move what the queues hold to memtop. Returns whether anything moved. */
static bool pump(jvmtiEnv *jvmti, struct out *o, uint32_t session)
{
	uint64_t tags[MT_JW_FREE_BATCH];
	struct mt_jw_free f = { 0, 0 };
	const void *d;
	bool any = false;
	int budget = 4096;

	while (budget-- > 0 && (d = jq_peek(&samples))) {
		struct sample_cell c;

		memcpy(&c, d, offsetof(struct sample_cell, frames));
		if (c.nframes > MT_JW_MAX_FRAMES)
			c.nframes = 0;
		memcpy(c.frames, ((const struct sample_cell *)d)->frames,
		       c.nframes * sizeof(c.frames[0]));
		jq_pop(&samples);
		send_sample(jvmti, o, &c, session);
		any = true;
	}
	budget = 64 * MT_JW_FREE_BATCH;
	while (budget-- > 0 && (d = jq_peek(&frees))) {
		memcpy(&tags[f.n++], d, sizeof(tags[0]));
		jq_pop(&frees);
		if (f.n == MT_JW_FREE_BATCH) {
			out_msg(o, MT_JW_FREE, &f, sizeof(f), tags, f.n * sizeof(tags[0]), NULL, 0);
			f.n = 0;
		}
		any = true;
	}
	if (f.n)
		out_msg(o, MT_JW_FREE, &f, sizeof(f), tags, f.n * sizeof(tags[0]), NULL, 0);
	return any;
}

static void drain_discard(void)
{
	while (jq_peek(&samples))
		jq_pop(&samples);
	while (jq_peek(&frees))
		jq_pop(&frees);
}

/* Read exactly len bytes within ms. 0 or -1. */
static int read_within(int fd, void *buf, size_t len, int ms)
{
	size_t got = 0;

	while (got < len) {
		struct pollfd p = { fd, POLLIN, 0 };
		ssize_t r;

		if (poll(&p, 1, ms) <= 0)
			return -1;
		r = recv(fd, (char *)buf + got, len - got, 0);
		if (r <= 0)
			return -1;
		got += (size_t)r;
	}
	return 0;
}

static jvmtiEnv *session_env(uint64_t interval)
{
	jvmtiEnv *jvmti = NULL;
	jvmtiCapabilities caps;
	jvmtiEventCallbacks cb;

	if ((*the_vm)->GetEnv(the_vm, (void **)&jvmti, JVMTI_VERSION_11) != JNI_OK || !jvmti)
		return NULL;
	memset(&caps, 0, sizeof(caps));
	caps.can_generate_sampled_object_alloc_events = 1;
	caps.can_tag_objects = 1;
	caps.can_generate_object_free_events = 1;
	caps.can_get_source_file_name = 1;
	caps.can_get_line_numbers = 1;
	memset(&cb, 0, sizeof(cb));
	cb.SampledObjectAlloc = on_sampled_alloc;
	cb.ObjectFree = on_object_free;
	if ((*jvmti)->AddCapabilities(jvmti, &caps) != JVMTI_ERROR_NONE ||
	    (*jvmti)->SetEventCallbacks(jvmti, &cb, sizeof(cb)) != JVMTI_ERROR_NONE ||
	    (*jvmti)->SetHeapSamplingInterval(
		    jvmti, (jint)(interval > 0x7fffffff ? 0x7fffffff : interval)) !=
		    JVMTI_ERROR_NONE) {
		(*jvmti)->DisposeEnvironment(jvmti);
		return NULL;
	}
	return jvmti;
}

/* Keep the samples of the last second (per_s) under the cap: widen the
 * interval to aim at half of it, narrow it by half (never below memtop's)
 * once they are under an eighth. A sample already drawn keeps its own. */
static void interval_steer(jvmtiEnv *jvmti, uint64_t per_s)
{
	uint64_t cur = atomic_load(&interval_now), next = cur;
	uint64_t top = interval_asked * MT_JW_INTERVAL_MAX_FACTOR;

	if (per_s > MT_JW_SAMPLES_PER_S_MAX)
		next = cur * (per_s / (MT_JW_SAMPLES_PER_S_MAX / 2) + 1);
	else if (per_s < MT_JW_SAMPLES_PER_S_MAX / 8 && cur > interval_asked)
		next = cur / 2;
	if (next > top)
		next = top;
	if (next > 0x7fffffff)
		next = 0x7fffffff;
	if (next < interval_asked)
		next = interval_asked;
	if (next != cur && (*jvmti)->SetHeapSamplingInterval(jvmti, (jint)next) == JVMTI_ERROR_NONE)
		atomic_store(&interval_now, next);
}

static void session_end(jvmtiEnv *jvmti)
{
	atomic_store(&active_session, 0);
	(*jvmti)->SetEventNotificationMode(jvmti, JVMTI_DISABLE, JVMTI_EVENT_SAMPLED_OBJECT_ALLOC,
					   NULL);
	(*jvmti)->SetEventNotificationMode(jvmti, JVMTI_DISABLE, JVMTI_EVENT_OBJECT_FREE, NULL);
	(*jvmti)->SetHeapSamplingInterval(jvmti, DEFAULT_INTERVAL);
	(*jvmti)->DisposeEnvironment(jvmti);
	drain_discard();
}

static void serve(int fd)
{
	static struct out o;
	struct mt_jw_hdr h;
	struct mt_jw_start st;
	struct mt_jw_hello hello = { MT_JW_MAGIC, MT_JW_VERSION, sessions_served, JVMTI_VERSION };
	struct timeval tv = { 0, 200 * 1000 };
	uint32_t session = sessions_served + 1;
	struct timespec last = { 0, 0 }, now;
	uint64_t thread_t0, samples_then = 0;
	bool on = false;
	jvmtiEnv *jvmti;

	if (read_within(fd, &h, sizeof(h), START_WAIT_MS) || h.type != MT_JW_START ||
	    h.len != sizeof(st) || read_within(fd, &st, sizeof(st), START_WAIT_MS) ||
	    st.magic != MT_JW_MAGIC || st.version != MT_JW_VERSION || !st.interval)
		return;
	jvmti = session_env(st.interval);
	if (!jvmti)
		return;
	interval_asked = st.interval > 0x7fffffff ? 0x7fffffff : st.interval;
	atomic_store(&interval_now, interval_asked);
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	o.fd = fd;
	o.len = 0;
	o.broken = false;
	drain_discard();
	atomic_store(&n_samples, 0);
	atomic_store(&n_dropped, 0);
	atomic_store(&callback_ns, 0);
	atomic_store(&active_session, session);
	out_msg(&o, MT_JW_HELLO, &hello, sizeof(hello), NULL, 0, NULL, 0);
	out_flush(&o);
	thread_t0 = thread_cpu_ns();
	while (!o.broken) {
		struct pollfd p = { fd, POLLIN, 0 };
		char in[64];

		if (poll(&p, 1, 10) > 0) {
			ssize_t r = recv(fd, in, sizeof(in), MSG_DONTWAIT);

			if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR))
				break; /* memtop closed: exit or death */
			/* memtop's MT_JW_GO (its loop reads now), whatever else */
			if (r > 0 && !on && (on = true) &&
			    ((*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE,
								JVMTI_EVENT_OBJECT_FREE, NULL) ||
			     (*jvmti)->SetEventNotificationMode(
				     jvmti, JVMTI_ENABLE, JVMTI_EVENT_SAMPLED_OBJECT_ALLOC, NULL)))
				break;
		}
		while (!o.broken && pump(jvmti, &o, session))
			;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec != last.tv_sec) {
			struct mt_jw_stats s = { atomic_load(&n_samples), atomic_load(&n_dropped),
						 atomic_load(&callback_ns) + thread_cpu_ns() -
							 thread_t0,
						 0 };

			if (last.tv_sec)
				interval_steer(jvmti, (s.samples - samples_then) /
							      (uint64_t)(now.tv_sec - last.tv_sec));
			samples_then = s.samples;
			s.interval = atomic_load(&interval_now);
			out_msg(&o, MT_JW_STATS, &s, sizeof(s), NULL, 0, NULL, 0);
			last = now;
		}
		out_flush(&o);
	}
	session_end(jvmti);
	sessions_served++;
}

/* memtop, or root: a connection from anyone else is closed unheard. */
static bool peer_allowed(int fd)
{
	struct ucred cr;
	socklen_t len = sizeof(cr);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len))
		return false;
	return cr.uid == 0 || cr.uid == geteuid();
}

static void *agent_thread(void *arg)
{
	JavaVMAttachArgs args = { JNI_VERSION_1_8, (char *)"memtop-jvmti", NULL };
	JNIEnv *jni;

	(void)arg;
	if ((*the_vm)->AttachCurrentThreadAsDaemon(the_vm, (void **)&jni, &args) != JNI_OK)
		return NULL;
	for (;;) {
		int fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);

		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			struct timespec ts = { 1, 0 };

			nanosleep(&ts, NULL); /* out of descriptors: try later */
			continue;
		}
		if (peer_allowed(fd))
			serve(fd);
		close(fd);
	}
	return NULL;
}

static int listen_on(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct stat st;
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -1;
	strcpy(sa.sun_path, path);
	/* a stale socket of this user's (an earlier JVM with this pid) goes */
	if (!lstat(path, &st) && S_ISSOCK(st.st_mode) && st.st_uid == geteuid())
		unlink(path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || chmod(path, 0600) || listen(fd, 4) ||
	    lstat(path, &st)) {
		close(fd);
		return -1;
	}
	strcpy(listen_path, path);
	listen_ino = st.st_ino;
	return fd;
}

/* The JVM ends (Agent_OnUnload): its socket goes with it, unless
 * something else took its name meanwhile. */
static void unlisten(void)
{
	struct stat st;

	if (listen_path[0] && !lstat(listen_path, &st) && S_ISSOCK(st.st_mode) &&
	    st.st_ino == listen_ino && st.st_uid == geteuid())
		unlink(listen_path);
	listen_path[0] = '\0';
}

EXPORT jint JNICALL Agent_OnAttach(JavaVM *vm, char *options, void *reserved)
{
	char path[108];
	jvmtiEnv *probe = NULL;
	pthread_t th;
	pthread_attr_t attr;

	(void)options;
	(void)reserved;
	if (atomic_exchange(&loaded, 1))
		return JNI_OK; /* already listening */
	/* heap sampling is JVMTI 11: an older JVM refuses the version */
	if ((*vm)->GetEnv(vm, (void **)&probe, JVMTI_VERSION_11) != JNI_OK || !probe) {
		atomic_store(&loaded, 0);
		return JNI_EVERSION;
	}
	(*probe)->DisposeEnvironment(probe);
	the_vm = vm;
	if (jq_init(&samples, SAMPLE_CELLS, sizeof(struct sample_cell)) ||
	    jq_init(&frees, FREE_CELLS, sizeof(uint64_t))) {
		atomic_store(&loaded, 0);
		return JNI_ENOMEM;
	}
	snprintf(path, sizeof(path), "%s%d", MT_JW_SOCKET_PREFIX, (int)getpid());
	listen_fd = listen_on(path);
	if (listen_fd < 0) {
		atomic_store(&loaded, 0);
		return JNI_ERR;
	}
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&th, &attr, agent_thread, NULL)) {
		close(listen_fd);
		unlisten();
		listen_fd = -1;
		atomic_store(&loaded, 0);
		return JNI_ERR;
	}
	pthread_attr_destroy(&attr);
	return JNI_OK;
}

/* Called as the JVM terminates (JVMTI: the library is "in effect
 * unloaded by the termination of the VM"); never after a SIGKILL, whose
 * socket the next agent of this user and pid replaces (listen_on). The
 * agent's thread may still block in accept: the descriptor stays open,
 * only the name goes. */
EXPORT void JNICALL Agent_OnUnload(JavaVM *vm)
{
	(void)vm;
	unlisten();
}

EXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved)
{
	(void)vm;
	(void)options;
	(void)reserved;
	return JNI_ERR; /* memtop attaches to running JVMs only */
}

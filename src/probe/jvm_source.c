// SPDX-License-Identifier: GPL-2.0-only
/*
 * jvm_source.c - a JVM as a data source (jvm_source.h).
 *
 * Owns one session with memtop's agent in one JVM: the start message (the
 * sampling interval), the agent's hello (bounded wait), and the stream
 * after it, read without blocking into a fixed buffer. Every message is
 * checked against include/memtop/jvm_wire.h before use; one that is not
 * ends the session. Methods are named once per session (METHOD) and kept
 * in a table by the agent's id, bounded in count and bytes. A SAMPLE
 * becomes an MT_EV_NAMED record (its frames as text, the object's tag as
 * its address with MT_ADDR_NAMED), a FREE one MT_EV_FREE per tag, stamped
 * with memtop's clock as they are read. Closing the descriptor ends the
 * session on the agent's side, whether memtop exits or is killed.
 */
#include "probe/jvm_source.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>

#include "memtop/abi.h"
#include "memtop/jvm_wire.h"
#include "probe/jvm_attach.h"
#include "probe/slowdown.h"
#include "probe/target.h"
#include "util/clock.h"
#include "util/grow.h"

#define HELLO_WAIT_MS 5000
#define IN_BUF (256 * 1024)
/* Bytes of method names kept per JVM; past it the stream is refused. */
#define NAMES_MAX (32u << 20)
/* Bytes read per pump: the loop's other work is never starved. */
#define PUMP_MAX (4u << 20)

struct method {
	char *name; /* NULL: not named yet */
	char *file;
	__u16 name_len, file_len;
};

struct jvm_source {
	pid_t pid;
	int fd;
	__u64 rate;
	__u64 interval; /* the agent's interval now (its last STATS): rate or wider */
	bool widened_said;
	bool reused;
	bool go_sent; /* MT_JW_GO: the loop reads, the events may go on */
	__u64 samples, dropped;
	/* what the session cost the JVM, and its CPU time, at the first and
	 * the last STATS: the slowdown between them */
	__u64 cost0_ns, cpu0_ns, cost_ns, cpu_ns;
	struct method *methods;
	__u32 nmethods; /* allocated entries */
	size_t name_bytes;
	size_t in_len;
	unsigned char in[IN_BUF];
	/* the record being built: header, frames, text */
	union {
		struct mt_event_named ev;
		unsigned char bytes[sizeof(struct mt_event_named) +
				    MT_NAMED_MAX_FRAMES * sizeof(struct mt_named_frame) +
				    MT_NAMED_TEXT_MAX];
	} rec;
};

int jvm_source_detect(pid_t pid, char *why, size_t len)
{
	struct jvm_info ji;

	return jvm_detect(pid, &ji, why, len);
}

bool jvm_source_reused(const struct jvm_source *s)
{
	return s->reused;
}

int jvm_source_fd(const struct jvm_source *s)
{
	return s->fd;
}

bool jvm_source_widened(struct jvm_source *s, __u64 *interval, pid_t *pid)
{
	if (s->widened_said || s->interval <= s->rate)
		return false;
	s->widened_said = true;
	*interval = s->interval;
	*pid = s->pid;
	return true;
}

void jvm_source_counts(const struct jvm_source *s, __u64 *samples, __u64 *dropped, double *slowdown)
{
	*samples = s->samples;
	*dropped = s->dropped;
	*slowdown = s->cpu_ns > s->cpu0_ns ? slowdown_pct((double)(s->cost_ns - s->cost0_ns),
							  (double)(s->cpu_ns - s->cpu0_ns))
					   : 0;
}

static int read_exact_within(int fd, void *buf, size_t len, int ms)
{
	__u64 until = clock_mono_ns() + (__u64)ms * 1000000ULL;
	size_t got = 0;

	while (got < len) {
		__u64 now = clock_mono_ns();
		struct pollfd p = { fd, POLLIN, 0 };
		ssize_t r;

		if (now >= until || poll(&p, 1, (int)((until - now) / 1000000) + 1) <= 0)
			return -ETIMEDOUT;
		r = recv(fd, (char *)buf + got, len - got, MSG_DONTWAIT);
		if (r == 0)
			return -ECONNRESET;
		if (r < 0 && errno != EAGAIN && errno != EINTR)
			return -errno;
		if (r > 0)
			got += (size_t)r;
	}
	return 0;
}

/* START, then the agent's HELLO. */
static int open_session(struct jvm_source *s, char *err, size_t len)
{
	struct {
		struct mt_jw_hdr h;
		struct mt_jw_start st;
	} start = { { MT_JW_START, sizeof(struct mt_jw_start) },
		    { MT_JW_MAGIC, MT_JW_VERSION, s->rate } };
	struct mt_jw_hdr h;
	struct mt_jw_hello hello;
	int e;

	if (send(s->fd, &start, sizeof(start), MSG_NOSIGNAL) != (ssize_t)sizeof(start)) {
		snprintf(err, len, "cannot talk to the agent: %s", strerror(errno));
		return -EIO;
	}
	e = read_exact_within(s->fd, &h, sizeof(h), HELLO_WAIT_MS);
	if (!e && (h.type != MT_JW_HELLO || h.len != sizeof(hello)))
		e = -EPROTO;
	if (!e)
		e = read_exact_within(s->fd, &hello, sizeof(hello), HELLO_WAIT_MS);
	if (!e && (hello.magic != MT_JW_MAGIC || hello.version != MT_JW_VERSION))
		e = -EPROTO;
	if (e) {
		snprintf(err, len, "the agent did not open a session within %d s: %s",
			 HELLO_WAIT_MS / 1000,
			 e == -EPROTO ? "another version of the agent" : strerror(-e));
		return e;
	}
	s->reused = s->reused || hello.sessions > 0;
	return 0;
}

struct jvm_source *jvm_source_start(pid_t pid, const char *agent_path, __u64 rate, char *err,
				    size_t len)
{
	struct jvm_source *s;
	struct jvm_info ji;
	int e = jvm_detect(pid, &ji, err, len), fd;
	bool reused;

	if (e <= 0) {
		if (!e)
			snprintf(err, len, "not a JVM");
		errno = e ? -e : ENOENT;
		return NULL;
	}
	fd = jvm_attach(&ji, agent_path, &reused, err, len);
	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		close(fd);
		snprintf(err, len, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	s->pid = pid;
	s->fd = fd;
	s->rate = rate ? rate : 1;
	s->interval = s->rate;
	s->reused = reused;
	e = open_session(s, err, len);
	if (e) {
		jvm_source_stop(s);
		errno = -e;
		return NULL;
	}
	return s;
}

void jvm_source_stop(struct jvm_source *s)
{
	__u32 i;

	if (!s)
		return;
	close(s->fd);
	for (i = 0; i < s->nmethods; i++) {
		free(s->methods[i].name);
		free(s->methods[i].file);
	}
	free(s->methods);
	free(s);
}

/* ---- the stream ----------------------------------------------------------- */

static int on_method(struct jvm_source *s, const unsigned char *p, __u32 n)
{
	struct mt_jw_method m;
	struct method *slot;

	if (n < sizeof(m))
		return -EPROTO;
	memcpy(&m, p, sizeof(m));
	if (m.id >= MT_JW_MAX_METHODS || !m.name_len || m.name_len > MT_NAMED_NAME_MAX ||
	    m.file_len > MT_NAMED_NAME_MAX || n != sizeof(m) + m.name_len + m.file_len ||
	    memchr(p + sizeof(m), '\0', m.name_len + m.file_len))
		return -EPROTO;
	if (m.id >= s->nmethods) {
		size_t cap = s->nmethods;

		if (grow_array(&s->methods, &cap, (size_t)m.id + 1, sizeof(*s->methods)))
			return -ENOMEM;
		memset(s->methods + s->nmethods, 0, (cap - s->nmethods) * sizeof(*s->methods));
		s->nmethods = (__u32)cap; /* bounded by MT_JW_MAX_METHODS */
	}
	slot = &s->methods[m.id];
	if (slot->name || s->name_bytes + m.name_len + m.file_len > NAMES_MAX)
		return -EPROTO; /* named twice, or more names than any program has */
	slot->name = malloc(m.name_len);
	slot->file = m.file_len ? malloc(m.file_len) : NULL;
	if (!slot->name || (m.file_len && !slot->file))
		return -ENOMEM;
	memcpy(slot->name, p + sizeof(m), m.name_len);
	if (m.file_len)
		memcpy(slot->file, p + sizeof(m) + m.name_len, m.file_len);
	slot->name_len = m.name_len;
	slot->file_len = m.file_len;
	s->name_bytes += m.name_len + m.file_len;
	return 0;
}

/* An interval the agent may use: memtop's, or wider up to
 * MT_JW_INTERVAL_MAX_FACTOR times (and what a jint holds). */
static bool interval_ok(const struct jvm_source *s, __u64 interval)
{
	__u64 asked = s->rate > 0x7fffffff ? 0x7fffffff : s->rate;

	return interval >= asked && interval <= asked * MT_JW_INTERVAL_MAX_FACTOR &&
	       interval <= 0x7fffffff;
}

static int on_sample(struct jvm_source *s, const unsigned char *p, __u32 n, jvm_emit_fn emit,
		     void *ctx)
{
	struct mt_jw_sample smp;
	struct mt_event_named *ev = &s->rec.ev;
	struct mt_named_frame *nf = (struct mt_named_frame *)(ev + 1);
	char *text;
	__u32 i, at = 0, nframes;

	if (n < sizeof(smp))
		return -EPROTO;
	memcpy(&smp, p, sizeof(smp));
	if (smp.nframes > MT_JW_MAX_FRAMES ||
	    n != sizeof(smp) + smp.nframes * sizeof(struct mt_jw_frame) || !smp.tag ||
	    smp.tag & (MT_ADDR_NAMED | MT_ADDR_MMAP) || !interval_ok(s, smp.interval))
		return -EPROTO;
	nframes = smp.nframes < MT_NAMED_MAX_FRAMES ? smp.nframes : MT_NAMED_MAX_FRAMES;
	text = (char *)(nf + nframes);
	memset(ev, 0, sizeof(*ev));
	for (i = 0; i < nframes; i++) {
		struct mt_jw_frame f;
		const struct method *m;

		memcpy(&f, p + sizeof(smp) + i * sizeof(f), sizeof(f));
		if (f.method >= s->nmethods || !s->methods[f.method].name)
			return -EPROTO; /* a method never named */
		m = &s->methods[f.method];
		if (at + m->name_len + m->file_len > MT_NAMED_TEXT_MAX) {
			ev->flags |= MT_NEF_TRUNCATED;
			break;
		}
		nf[i].line = f.line > 0 ? (__u32)f.line : 0;
		nf[i].function_len = m->name_len;
		nf[i].file_len = m->file_len;
		memcpy(text + at, m->name, m->name_len);
		if (m->file_len) /* a method without a source file has none */
			memcpy(text + at + m->name_len, m->file, m->file_len);
		at += m->name_len + m->file_len;
	}
	if (i < nframes) { /* cut: the text sits after the frames kept */
		memmove(nf + i, text, at);
		nframes = i;
	}
	ev->kind = MT_EV_NAMED;
	ev->pid = (__u32)s->pid;
	ev->tid = smp.tid;
	ev->nframes = nframes;
	ev->ts_ns = clock_mono_ns();
	ev->addr = smp.tag | MT_ADDR_NAMED;
	ev->size = smp.size;
	ev->rate = smp.interval; /* its weight: the interval it was drawn with */
	ev->runtime = MT_NAMED_JAVA;
	if (smp.flags & MT_JWS_TRUNCATED || nframes < smp.nframes)
		ev->flags |= MT_NEF_TRUNCATED;
	ev->text_len = at;
	emit(ctx, ev, sizeof(*ev) + nframes * sizeof(*nf) + at);
	return 0;
}

static int on_free(struct jvm_source *s, const unsigned char *p, __u32 n, jvm_emit_fn emit, void *ctx)
{
	struct mt_jw_free f;
	struct mt_event_free ev = { .kind = MT_EV_FREE, .pid = (__u32)s->pid };
	__u32 i;

	if (n < sizeof(f))
		return -EPROTO;
	memcpy(&f, p, sizeof(f));
	if (!f.n || f.n > MT_JW_FREE_BATCH || n != sizeof(f) + f.n * sizeof(__u64))
		return -EPROTO;
	ev.ts_ns = clock_mono_ns();
	for (i = 0; i < f.n; i++) {
		__u64 tag;

		memcpy(&tag, p + sizeof(f) + i * sizeof(tag), sizeof(tag));
		if (!tag || tag & (MT_ADDR_NAMED | MT_ADDR_MMAP))
			return -EPROTO;
		ev.addr = tag | MT_ADDR_NAMED;
		emit(ctx, &ev, sizeof(ev));
	}
	return 0;
}

static int on_message(struct jvm_source *s, __u32 type, const unsigned char *p, __u32 n,
		      jvm_emit_fn emit, void *ctx)
{
	struct mt_jw_stats st;

	switch (type) {
	case MT_JW_METHOD:
		return on_method(s, p, n);
	case MT_JW_SAMPLE:
		return on_sample(s, p, n, emit, ctx);
	case MT_JW_FREE:
		return on_free(s, p, n, emit, ctx);
	case MT_JW_STATS:
		if (n != sizeof(st))
			return -EPROTO;
		memcpy(&st, p, sizeof(st));
		if (!interval_ok(s, st.interval))
			return -EPROTO;
		s->interval = st.interval;
		s->samples = st.samples;
		s->dropped = st.dropped;
		s->cost_ns = st.cost_ns >= s->cost0_ns ? st.cost_ns : s->cost0_ns;
		s->cpu_ns = target_cpu_ns(s->pid);
		if (!s->cpu0_ns) {
			s->cpu0_ns = s->cpu_ns;
			s->cost0_ns = s->cost_ns;
		}
		return 0;
	default:
		return -EPROTO;
	}
}

int jvm_source_pump(struct jvm_source *s, jvm_emit_fn emit, void *ctx, char *err, size_t len)
{
	size_t total = 0;

	if (!s->go_sent) {
		struct mt_jw_hdr go = { MT_JW_GO, 0 };

		if (send(s->fd, &go, sizeof(go), MSG_NOSIGNAL | MSG_DONTWAIT) != sizeof(go)) {
			snprintf(err, len, "PID %d: cannot talk to the JVM's agent: %s",
				 (int)s->pid, strerror(errno));
			return -EIO;
		}
		s->go_sent = true;
	}
	while (total < PUMP_MAX) {
		size_t at = 0;
		ssize_t r = recv(s->fd, s->in + s->in_len, sizeof(s->in) - s->in_len, MSG_DONTWAIT);

		if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR)) {
			snprintf(err, len, "PID %d: the JVM's agent closed its stream%s%s",
				 (int)s->pid, r ? ": " : "", r ? strerror(errno) : "");
			return r ? -errno : -ECONNRESET;
		}
		if (r < 0)
			return 0;
		s->in_len += (size_t)r;
		total += (size_t)r;
		while (s->in_len - at >= sizeof(struct mt_jw_hdr)) {
			struct mt_jw_hdr h;
			int e;

			memcpy(&h, s->in + at, sizeof(h));
			if (h.len > MT_JW_MSG_MAX) {
				snprintf(err, len, "PID %d: the JVM's agent sent a malformed message",
					 (int)s->pid);
				return -EPROTO;
			}
			if (s->in_len - at < sizeof(h) + h.len)
				break;
			e = on_message(s, h.type, s->in + at + sizeof(h), h.len, emit, ctx);
			if (e) {
				snprintf(err, len, "PID %d: the JVM's agent sent a %s message",
					 (int)s->pid, e == -EPROTO ? "malformed" : "too large a");
				return e;
			}
			at += sizeof(h) + h.len;
		}
		memmove(s->in, s->in + at, s->in_len - at);
		s->in_len -= at;
	}
	return 0;
}

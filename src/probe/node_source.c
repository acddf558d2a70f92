// SPDX-License-Identifier: GPL-2.0-only
/*
 * node_source.c - the V8 heap of a Node.js process through
 * libmemtop-v8.so (node_source.h, docs/node.md).
 *
 * The agent is mapped by the injection machinery (inject_image, a holder
 * process holding one thread, inject_hold) and started by one hold of the
 * JavaScript thread (the main thread) taken only while that thread waits
 * in epoll_wait: the holder checks, on the saved registers, that the
 * thread stopped inside that system call before it makes it run the
 * agent's start, so V8's API is called where libuv calls its callbacks,
 * never in the middle of JavaScript or of V8. Otherwise nothing is run,
 * and the next poll tries again, for NODE_START_GIVE_UP_MS.
 *
 * Once started, the agent works alone on that thread (a libuv timer);
 * memtop only writes its lease and its request through /proc/PID/mem and
 * reads the snapshots the agent writes in answer, under their sequence
 * lock. A snapshot is validated before any of it is used (the process
 * wrote it: every count, offset and length is bounded by the copy).
 */
#include "probe/node_source.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>

#include "memtop/abi.h"
#include "probe/inject_check.h"
#include "probe/inject_got.h"
#include "probe/inject_hold.h"
#include "probe/inject_ptrace.h"
#include "util/clock.h"

/* The V8 versions whose layouts the agent was checked against (V8's
 * include/v8-profiler.h, v8-local-handle.h): Node 20's (run by the tests)
 * and Node 18's (Debian 12's libnode108, the same declarations). */
#define NODE_V8_VERSIONS "11.3.|10.2."

static const char *const fn_names[MT_V8_FN_COUNT] = MT_V8_FN_NAMES;

static int mem_fd_open(pid_t pid, int flags)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	return open(path, flags | O_CLOEXEC);
}

/* Every function the agent calls, as the process's loader binds them. */
static int functions_find(int fd, pid_t pid, __u64 fn[MT_V8_FN_COUNT], const char **missing)
{
	__u64 first;
	int e = inject_got_link_map(fd, pid, &first), k, tries;

	if (e)
		return e;
	for (k = 0; k < MT_V8_FN_COUNT; k++) {
		for (tries = 0; tries < 3; tries++)
			if ((e = inject_got_symbol(fd, first, fn_names[k], &fn[k])) != -EAGAIN)
				break;
		if (e) {
			if (missing)
				*missing = fn_names[k];
			return e;
		}
	}
	return 0;
}

bool node_detect(pid_t pid)
{
	__u64 first, at;
	int fd = mem_fd_open(pid, O_RDONLY);
	bool yes;

	if (fd < 0)
		return false;
	yes = !inject_got_link_map(fd, pid, &first) &&
	      !inject_got_symbol(fd, first, fn_names[MT_V8_START_SAMPLING], &at);
	close(fd);
	return yes;
}

static int ctl_write(const struct node_source *ns, int fd, size_t off, const void *v, size_t len)
{
	return inject_mem_write(fd, ns->ctl + off, v, len);
}

#define CTL_WRITE(ns, fd, field, v)                             \
	ctl_write(ns, fd, offsetof(struct mt_v8_ctl, field), v, \
		  sizeof(((struct mt_v8_ctl *)0)->field))

static int ctl_read(const struct node_source *ns, int fd, struct mt_v8_ctl *c)
{
	return inject_mem_read(fd, ns->ctl, c, sizeof(*c));
}

/* /proc/PID/mem, read-write, once the agent is known to be in the memory
 * it reaches: opened first, then the agent's mapping checked in the maps
 * (an exec before the check: the maps are the new program's, refused; an
 * exec after it: the descriptor still reaches only the old memory) and
 * its magic read through it. A process that exec'd is never written to
 * at the old image's addresses. The descriptor, or -errno (-ESTALE: the
 * agent is not there any more). */
static int agent_mem_open(const struct node_source *ns)
{
	__u64 base = 0, magic = 0;
	int fd = mem_fd_open(ns->pid, O_RDWR);

	if (fd < 0)
		return -errno;
	if (inject_image_find_named(ns->pid, MT_V8_MEMFD_NAME, &base) || base != ns->base ||
	    inject_mem_read(fd, ns->ctl, &magic, sizeof(magic)) || magic != MT_V8_MAGIC) {
		close(fd);
		return -ESTALE;
	}
	return fd;
}

/* What the agent needs before its start: the functions, the rate, the
 * version it may run on, a lease, and that it is memtop's now. */
static int ctl_fill(struct node_source *ns, int fd)
{
	char want[16] = NODE_V8_VERSIONS;
	__u32 me = (__u32)getpid(), on = 1;
	__u64 lease = clock_mono_ns() + ns->lease_ns;
	int e = CTL_WRITE(ns, fd, fn, ns->fn);

	/* for the tests of the refusal: accept no V8 at all (it can only
	 * narrow what the agent accepts) */
	if (getenv("MEMTOP_TEST_V8_NONE"))
		snprintf(want, sizeof(want), "%s", "none");

	if (!e)
		e = CTL_WRITE(ns, fd, interval, &ns->rate);
	if (!e)
		e = CTL_WRITE(ns, fd, want_version, want);
	if (!e)
		e = CTL_WRITE(ns, fd, lease_ns, &lease);
	if (!e)
		e = CTL_WRITE(ns, fd, memtop_pid, &me);
	if (!e)
		e = CTL_WRITE(ns, fd, want, &on);
	return e;
}

/* The syscalls in which the JavaScript thread waits in libuv's poll. */
static bool in_event_loop_wait(long nr)
{
	return nr == SYS_epoll_wait || nr == SYS_epoll_pwait || nr == 441 /* epoll_pwait2 */;
}

struct start_work {
	struct node_source *ns;
	bool map_image;
};

/* In the holder, with the main thread held: refuse unless it stopped
 * inside epoll_wait; map the agent if needed, fill its control block and
 * run its start on the thread. */
static int start_work_run(struct inject_session *s, void *ctx, struct inject_hold_out *out,
			  char *err, size_t errlen)
{
	struct start_work *w = ctx;
	struct node_source *ns = w->ns;
	struct user_regs_struct after;
	int e;

	static const long loop_waits[] = { SYS_epoll_wait, SYS_epoll_pwait, 441 /* epoll_pwait2 */ };
	__u64 t0 = clock_mono_ns();

	/* a thread blocked in epoll_wait is there already; a busy one is let
	 * run to its next epoll_wait, for at most NODE_LOOP_WAIT_MS */
	e = inject_session_until_syscall(s, loop_waits, 3, t0 + NODE_LOOP_WAIT_MS * 1000000ull);
	out->nflags = 0;
	if (e || !(in_event_loop_wait((long)s->saved.orig_rax) ||
		   ((long)s->saved.orig_rax == -1 && in_event_loop_wait((long)s->saved.rax)))) {
		snprintf(err, errlen,
			 "PID %d: its JavaScript thread did not wait in its event loop within %d ms",
			 s->pid, NODE_LOOP_WAIT_MS);
		return e == -ESRCH ? e : -EAGAIN;
	}
	/* how long it ran on before its epoll_wait: not a pause */
	out->ran_ns = clock_mono_ns() - t0;
	if (w->map_image) {
		e = inject_image_map(&ns->im, s, &ns->base, err, errlen);
		if (e)
			return e;
		out->base = ns->base;
		ns->ctl = ns->base + inject_image_symbol(&ns->im, MT_V8_CTL_SYMBOL);
	}
	e = ctl_fill(ns, s->mem_fd);
	if (e) {
		snprintf(err, errlen, "PID %d: cannot set the V8 agent up: %s", s->pid, strerror(-e));
		return e;
	}
	e = inject_session_run(s, ns->base + inject_image_symbol(&ns->im, MT_V8_START_SYMBOL), 0,
			       &after);
	if (e)
		snprintf(err, errlen, "PID %d: the V8 agent's start %s", s->pid,
			 e == -EFAULT ? "faulted" : "did not finish");
	return e;
}

/* Another live memtop's agent? */
static bool held_by_another(const struct mt_v8_ctl *c)
{
	char path[64], comm[32] = "";
	FILE *f;

	if (c->state != MT_V8_ON || !c->memtop_pid || c->memtop_pid == (__u32)getpid() ||
	    kill((pid_t)c->memtop_pid, 0))
		return false;
	snprintf(path, sizeof(path), "/proc/%u/comm", c->memtop_pid);
	f = fopen(path, "re");
	if (f) {
		if (!fgets(comm, sizeof(comm), f))
			comm[0] = '\0';
		fclose(f);
	}
	return !strncmp(comm, "memtop", 6);
}

/* One try of the start: only while the main thread waits in its loop. */
static int start_try(struct node_source *ns, char *err, size_t errlen)
{
	struct inject_hold_out out = { 0 };
	struct inject_session s;
	struct start_work w = { .ns = ns };
	struct mt_v8_ctl c;
	int e;

	e = inject_session_prepare(&s, ns->pid, ns->libc, NULL, err, errlen);
	if (e)
		return e;
	w.map_image = !ns->base;
	s.want_tid = ns->pid;
	ns->tries++;
	e = inject_hold(&s, start_work_run, &w, &out, err, errlen);
	free(out.flags);
	if (out.base) {
		ns->base = out.base;
		ns->ctl = ns->base + inject_image_symbol(&ns->im, MT_V8_CTL_SYMBOL);
	}
	ns->held_ns = s.paused_ns > out.ran_ns ? s.paused_ns - out.ran_ns : 0;
	ns->ran_ns = out.ran_ns;
	if (!e && ns->ctl && !(e = ctl_read(ns, s.mem_fd, &c))) {
		memcpy(ns->v8_version, c.v8_version, sizeof(ns->v8_version));
		ns->v8_version[sizeof(ns->v8_version) - 1] = '\0';
		if (c.state == MT_V8_REFUSED) {
			c.why[sizeof(c.why) - 1] = '\0';
			snprintf(err, errlen,
				 "PID %d: V8 %s: %s (memtop knows V8 11.3 and 10.2: Node 20 and 18)",
				 ns->pid, ns->v8_version, c.why);
			e = -ENOTSUP;
		} else if (c.state != MT_V8_ON) {
			snprintf(err, errlen, "PID %d: the V8 agent did not start", ns->pid);
			e = -EIO;
		} else {
			ns->started = true;
			ns->seq_done = c.seq;
		}
	}
	inject_session_close(&s);
	return e;
}

int node_attach(struct node_source *ns, pid_t pid, const char *agent_so, __u64 rate,
		unsigned int lease_ms, char *err, size_t errlen)
{
	const char *missing = NULL, *why = NULL;
	struct mt_v8_ctl c;
	int fd, e;

	memset(ns, 0, sizeof(*ns));
	ns->pid = pid;
	ns->rate = rate > 1 ? rate : 1;
	ns->lease_ns = (__u64)lease_ms * 1000000ull;
	e = inject_check(pid, ns->libc, sizeof(ns->libc), err, errlen, &why);
	if (e)
		return e;
	fd = mem_fd_open(pid, O_RDWR);
	if (fd < 0) {
		e = -errno;
		snprintf(err, errlen, "PID %d: cannot open its memory: %s", pid, strerror(errno));
		return e;
	}
	e = functions_find(fd, pid, ns->fn, &missing);
	if (e) {
		close(fd);
		snprintf(err, errlen, "PID %d: no V8 heap profiler API in it (%s: %s)", pid,
			 missing ? missing : "link map", strerror(-e));
		return e;
	}
	e = inject_image_load(&ns->im, agent_so, MT_V8_MEMFD_NAME, err, errlen);
	if (e) {
		close(fd);
		return e;
	}
	if (!inject_image_symbol(&ns->im, MT_V8_CTL_SYMBOL) ||
	    !inject_image_symbol(&ns->im, MT_V8_START_SYMBOL) ||
	    !inject_image_symbol(&ns->im, MT_V8_BUF_SYMBOL)) {
		close(fd);
		inject_image_close(&ns->im);
		snprintf(err, errlen, "%s lacks its symbols (stripped?)", agent_so);
		return -ENOEXEC;
	}
	if (!inject_image_find_named(pid, MT_V8_MEMFD_NAME, &ns->base)) {
		/* mapped by an earlier memtop: ours if its version is, and
		 * nobody else's now */
		ns->ctl = ns->base + inject_image_symbol(&ns->im, MT_V8_CTL_SYMBOL);
		e = ctl_read(ns, fd, &c);
		if (!e && (c.magic != MT_V8_MAGIC || c.version != MT_V8_VERSION)) {
			snprintf(err, errlen,
				 "PID %d: another version of memtop's V8 agent is in it", pid);
			e = -EPROTO;
		} else if (!e && held_by_another(&c)) {
			snprintf(err, errlen, "PID %d: another memtop (PID %u) samples its V8 heap",
				 pid, c.memtop_pid);
			e = -EBUSY;
		} else if (!e && c.state == MT_V8_ON) {
			/* its memtop died (SIGKILL) and the lease has not run
			 * out yet: taken over, no start needed */
			e = ctl_fill(ns, fd);
			if (!e) {
				ns->started = true;
				ns->seq_done = c.seq;
			}
		}
		if (e) {
			close(fd);
			inject_image_close(&ns->im);
			return e;
		}
	}
	close(fd);
	ns->buf = 0;
	ns->since_ns = clock_mono_ns();
	if (!ns->started) {
		e = start_try(ns, err, errlen);
		if (e && e != -EAGAIN) {
			inject_image_close(&ns->im);
			return e;
		}
	}
	return 0;
}

/* ---- snapshots ---------------------------------------------------------- */

/* A copy of the newest snapshot if there is one not taken in yet: 1, 0
 * (nothing new, or caught while written: the next poll), or -errno. */
static int snapshot_read(struct node_source *ns, int fd, size_t *len)
{
	struct mt_v8_ctl c;
	__u64 seq2, buf = ns->base + inject_image_symbol(&ns->im, MT_V8_BUF_SYMBOL);
	__u64 now = clock_mono_ns();
	int e = ctl_read(ns, fd, &c);

	if (e)
		return e;
	/* the JavaScript thread's time in the agent since the last poll */
	if (ns->cost_at_ns && now > ns->cost_at_ns && c.collect_ns >= ns->cost_collect_ns) {
		double spent = (double)(c.collect_ns - ns->cost_collect_ns);
		double span = (double)(now - ns->cost_at_ns);

		ns->cost_pct = spent < span ? 100.0 * spent / (span - spent) : 100.0;
	}
	ns->cost_collect_ns = c.collect_ns;
	ns->cost_at_ns = now;
	if (c.seq == ns->seq_done || (c.seq & 1) || c.snap_len < sizeof(struct mt_v8_snap) ||
	    c.snap_len > MT_V8_BUF_SIZE)
		return 0;
	if (ns->snap_cap < c.snap_len) {
		unsigned char *p = realloc(ns->snap, c.snap_len);

		if (!p)
			return -ENOMEM;
		ns->snap = p;
		ns->snap_cap = c.snap_len;
	}
	e = inject_mem_read(fd, buf, ns->snap, c.snap_len);
	if (!e)
		e = inject_mem_read(fd, ns->ctl + offsetof(struct mt_v8_ctl, seq), &seq2, 8);
	if (e)
		return e;
	if (seq2 != c.seq)
		return 0;
	ns->seq_done = c.seq;
	*len = c.snap_len;
	return 1;
}

struct snap_view {
	const struct mt_v8_snap *hdr;
	const struct mt_v8_node *nodes;
	const struct mt_v8_sample *samples;
	const char *text;
	__u32 *by_id; /* node indexes sorted by id */
};

static const struct snap_view *cmp_view;

static int cmp_node(const void *a, const void *b)
{
	__u32 x = cmp_view->nodes[*(const __u32 *)a].id, y = cmp_view->nodes[*(const __u32 *)b].id;

	return x < y ? -1 : x > y;
}

static int cmp_u64(const void *a, const void *b)
{
	__u64 x = *(const __u64 *)a, y = *(const __u64 *)b;

	return x < y ? -1 : x > y;
}

/* The snapshot's parts, every count and offset checked against len. */
static int view_make(struct snap_view *v, const unsigned char *p, size_t len)
{
	const struct mt_v8_snap *h = (const struct mt_v8_snap *)p;
	size_t need;
	__u32 i;

	if (len < sizeof(*h))
		return -EINVAL;
	need = sizeof(*h) + (size_t)h->nnodes * sizeof(struct mt_v8_node) +
	       (size_t)h->nsamples * sizeof(struct mt_v8_sample) + h->text_len;
	if (h->nnodes > MT_V8_BUF_SIZE / sizeof(struct mt_v8_node) ||
	    h->nsamples > MT_V8_BUF_SIZE / sizeof(struct mt_v8_sample) || need > len)
		return -EINVAL;
	v->hdr = h;
	v->nodes = (const struct mt_v8_node *)(p + sizeof(*h));
	v->samples = (const struct mt_v8_sample *)(v->nodes + h->nnodes);
	v->text = (const char *)(v->samples + h->nsamples);
	for (i = 0; i < h->nnodes; i++) {
		const struct mt_v8_node *n = &v->nodes[i];

		if ((__u64)n->name_off + n->name_len > h->text_len ||
		    (__u64)n->file_off + n->file_len > h->text_len)
			return -EINVAL;
	}
	v->by_id = malloc((h->nnodes ? h->nnodes : 1) * sizeof(__u32));
	if (!v->by_id)
		return -ENOMEM;
	for (i = 0; i < h->nnodes; i++)
		v->by_id[i] = i;
	cmp_view = v;
	qsort(v->by_id, h->nnodes, sizeof(__u32), cmp_node);
	cmp_view = NULL; /* v is the caller's: not kept past the sort */
	return 0;
}

static const struct mt_v8_node *node_of(const struct snap_view *v, __u32 id)
{
	size_t lo = 0, hi = v->hdr->nnodes;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const struct mt_v8_node *n = &v->nodes[v->by_id[mid]];

		if (n->id == id)
			return n;
		if (n->id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* The record of one new sample: its node and its ancestors up to (not
 * including) the root, innermost first. */
static size_t named_record(const struct snap_view *v, const struct mt_v8_sample *s, pid_t pid,
			   unsigned char *rec, size_t cap)
{
	struct mt_event_named *ev = (struct mt_event_named *)rec;
	const struct mt_v8_node *n = node_of(v, s->node_id);
	struct mt_named_frame *frames;
	size_t text = 0;
	char *out;
	__u32 k = 0;

	memset(ev, 0, sizeof(*ev));
	ev->kind = MT_EV_NAMED;
	ev->pid = (__u32)pid;
	ev->ts_ns = v->hdr->ts_ns;
	ev->addr = MT_ADDR_NAMED | (s->sample_id & (MT_ADDR_NAMED - 1));
	ev->size = s->size;
	ev->rate = v->hdr->interval > 0 ? v->hdr->interval : 1; /* V8 draws as pprof does */
	ev->runtime = MT_NAMED_V8;
	/* frames first, to know where the text starts */
	for (const struct mt_v8_node *m = n; m && m->parent && k < MT_NAMED_MAX_FRAMES;
	     m = node_of(v, m->parent))
		k++;
	frames = (struct mt_named_frame *)(ev + 1);
	out = (char *)(frames + k);
	if (sizeof(*ev) + k * sizeof(*frames) > cap)
		return 0;
	for (; n && n->parent && ev->nframes < k; n = node_of(v, n->parent)) {
		struct mt_named_frame *f = &frames[ev->nframes++];
		__u16 nl = n->name_len > MT_NAMED_NAME_MAX ? MT_NAMED_NAME_MAX : n->name_len;
		__u16 fl = n->file_len > MT_NAMED_NAME_MAX ? MT_NAMED_NAME_MAX : n->file_len;

		if ((size_t)(out - (char *)rec) + text + nl + fl > cap)
			return 0;
		f->line = n->line;
		f->function_len = nl;
		f->file_len = fl;
		memcpy(out + text, v->text + n->name_off, nl);
		memcpy(out + text + nl, v->text + n->file_off, fl);
		text += nl + fl;
	}
	if (n && n->parent)
		ev->flags |= MT_NEF_TRUNCATED;
	ev->text_len = (__u32)text;
	return (size_t)(out - (char *)rec) + text;
}

/* New samples of the snapshot become named records, samples of the last
 * one it no longer has become frees. The number of records. */
static int snapshot_apply(struct node_source *ns, node_emit_fn emit, void *ctx,
			  const unsigned char *p, size_t len)
{
	static unsigned char
		rec[sizeof(struct mt_event_named) +
		    MT_NAMED_MAX_FRAMES * (sizeof(struct mt_named_frame) + 2 * MT_NAMED_NAME_MAX)];
	struct snap_view v;
	__u64 *ids;
	size_t i, j, nids;
	int e = view_make(&v, p, len), records = 0;

	if (e)
		return e;
	nids = v.hdr->nsamples;
	ids = malloc((nids ? nids : 1) * sizeof(*ids));
	if (!ids) {
		free(v.by_id);
		return -ENOMEM;
	}
	for (i = 0; i < nids; i++)
		ids[i] = v.samples[i].sample_id;
	qsort(ids, nids, sizeof(*ids), cmp_u64);
	/* gone: in the last set, not in this one */
	for (i = j = 0; i < ns->nlive; i++) {
		while (j < nids && ids[j] < ns->live[i])
			j++;
		if (j < nids && ids[j] == ns->live[i])
			continue;
		struct mt_event_free fr = { .kind = MT_EV_FREE,
					    .pid = (__u32)ns->pid,
					    .ts_ns = v.hdr->ts_ns,
					    .addr = MT_ADDR_NAMED |
						    (ns->live[i] & (MT_ADDR_NAMED - 1)) };

		emit(ctx, &fr, sizeof(fr));
		ns->freed++;
		records++;
	}
	/* new: in this set, not in the last */
	for (i = 0; i < nids; i++) {
		const struct mt_v8_sample *s = &v.samples[i];
		size_t n;

		if (ns->nlive && /* none yet: no array to search */
		    bsearch(&s->sample_id, ns->live, ns->nlive, sizeof(__u64), cmp_u64))
			continue;
		n = named_record(&v, s, ns->pid, rec, sizeof(rec));
		if (n) {
			emit(ctx, rec, n);
			ns->named++;
			records++;
		}
	}
	free(ns->live);
	ns->live = ids;
	ns->nlive = nids;
	free(v.by_id);
	return records;
}

int node_poll(struct node_source *ns, node_emit_fn emit, void *ctx, __u64 now_ns, char *err,
	      size_t errlen)
{
	__u64 lease = now_ns + ns->lease_ns;
	size_t len = 0;
	int fd, e, records = 0;

	if (ns->gave_up)
		return 0;
	if (!ns->started) {
		e = start_try(ns, err, errlen);
		if (e == -EAGAIN && now_ns - ns->since_ns < (__u64)NODE_START_GIVE_UP_MS * 1000000ull)
			return 0;
		if (e) {
			ns->gave_up = true;
			if (e == -EAGAIN) {
				snprintf(err, errlen,
					 "PID %d: its JavaScript thread did not wait in its event "
					 "loop in %d s: its V8 heap is not sampled",
					 ns->pid, NODE_START_GIVE_UP_MS / 1000);
				e = -ETIMEDOUT;
			}
			return e;
		}
	}
	fd = agent_mem_open(ns);
	if (fd < 0) {
		snprintf(err, errlen, "PID %d: %s", ns->pid,
			 fd == -ESTALE ? "its V8 agent is gone (the process exec'd?)"
				       : strerror(-fd));
		ns->gave_up = true;
		return fd;
	}
	e = CTL_WRITE(ns, fd, lease_ns, &lease);
	if (!e)
		e = snapshot_read(ns, fd, &len);
	if (e == 1) {
		records = snapshot_apply(ns, emit, ctx, ns->snap, len);
		if (records == -EINVAL) {
			/* the process wrote it: refused whole, said once */
			records = 0;
			if (!ns->bad_snapshots++)
				snprintf(err, errlen,
					 "PID %d: a snapshot of its V8 agent does not hold together: "
					 "ignored (and any later one like it)",
					 ns->pid);
			e = ns->bad_snapshots == 1 ? -EINVAL : 0;
		}
	}
	ns->request++;
	{
		int w = CTL_WRITE(ns, fd, request, &ns->request);

		if (e >= 0 && w)
			e = w;
	}
	close(fd);
	if (e == -EINVAL)
		return e;
	if (e < 0) {
		snprintf(err, errlen, "PID %d: cannot read its V8 agent: %s", ns->pid, strerror(-e));
		return e;
	}
	if (records < 0)
		snprintf(err, errlen, "PID %d: its V8 agent's snapshot: %s", ns->pid,
			 strerror(-records));
	return records;
}

int node_detach(struct node_source *ns, unsigned int wait_ms)
{
	__u32 off = 0;
	__u64 now = clock_mono_ns(), until = now + (__u64)wait_ms * 1000000ull;
	struct mt_v8_ctl c;
	int fd, e;

	if (!ns->started || !ns->ctl)
		return 0;
	ns->started = false;
	fd = agent_mem_open(ns);
	if (fd < 0)
		return fd; /* -ESTALE: exec'd, nothing of it to stop */
	e = CTL_WRITE(ns, fd, want, &off);
	if (!e)
		e = CTL_WRITE(ns, fd, lease_ns, &now);
	while (!e) {
		e = ctl_read(ns, fd, &c);
		if (e || c.state != MT_V8_ON)
			break;
		if (clock_mono_ns() > until) {
			e = -ETIMEDOUT;
			break;
		}
		usleep(10000);
	}
	close(fd);
	return e;
}

void node_free(struct node_source *ns)
{
	inject_image_close(&ns->im);
	free(ns->live);
	free(ns->snap);
	ns->live = NULL;
	ns->snap = NULL;
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * inject.c - attach, rescan and detach for --inject (inject.h): the order
 * of the steps and what must hold between them.
 *
 * Attach: refuse early (inject_check), read the process's link map and
 * where each allocation function binds (inject_got), stop one thread
 * (inject_ptrace), map the sampler unless a copy is there
 * (inject_image), fill its control block (where each function went, the
 * rate, who is attached) and only then point the GOT slots at the
 * sampler, one aligned store each by the sampler's poke stub, with
 * read-only pages (RELRO) made writable just for the stores. The thread
 * goes back where it was. Detach does the stores in reverse, for the
 * slots of objects still loaded that still point at the sampler.
 */
#include "probe/inject.h"
#include "probe/inject_lock.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/syscall.h>

#include "memtop/abi.h"
#include "probe/inject_check.h"
#include "probe/inject_hold.h"
#include "probe/inject_ptrace.h"
#include "readers/proc_maps.h"
#include "util/clock.h"
#include "util/grow.h"

static int ctl_read(const struct inject_state *st, int fd, struct mt_inject_ctl *c)
{
	return inject_mem_read(fd, st->base + st->im.ctl, c, sizeof(*c));
}

static int ctl_write_field(const struct inject_state *st, int fd, size_t off, const void *v,
			   size_t len)
{
	return inject_mem_write(fd, st->base + st->im.ctl + off, v, len);
}

/* The BPF side reads the slots as the process ends by abi.h's copy of
 * their layout (struct mt_inject_final). */
_Static_assert(MT_INJECT_FINAL_SLOTS == MT_INJECT_SLOTS, "abi.h: the slots' count");
_Static_assert(MT_INJECT_FINAL_PY_SLOT == MT_INJECT_THREAD_SLOTS, "abi.h: CPython's slot");
_Static_assert(MT_INJECT_FINAL_STRIDE == sizeof(struct mt_inject_slot), "abi.h: a slot's size");
_Static_assert(MT_INJECT_FINAL_COUNTS == offsetof(struct mt_inject_slot, alloc_calls) &&
		       offsetof(struct mt_inject_slot, alloc_bytes) == MT_INJECT_FINAL_COUNTS + 8 &&
		       offsetof(struct mt_inject_slot, free_calls) == MT_INJECT_FINAL_COUNTS + 16 &&
		       offsetof(struct mt_inject_slot, py_calls) == MT_INJECT_FINAL_COUNTS + 24,
	       "abi.h: the counts' place in a slot");

/* Where the copy's mark is (sampler_abi.h, struct mt_inject_slots). */
static __u64 mark_at(const struct inject_state *st)
{
	return st->base + st->im.slots + offsetof(struct mt_inject_slots, mark);
}

/* A program for the poke stub (sampler_abi.h). */
struct poke_prog {
	struct mt_poke_record *v;
	size_t n, cap;
};

static int prog_add(struct poke_prog *p, __u64 op, __u64 a, __u64 b, __u64 c, __u64 d)
{
	if (grow_array(&p->v, &p->cap, p->n + 1, sizeof(*p->v)))
		return -ENOMEM;
	p->v[p->n++] = (struct mt_poke_record){ op, a, b, c, d };
	return 0;
}

/* mprotect records for the read-only pages of the slots: to writable
 * (write = true) or back to their protection.
 *
 * The maps were read before the stop, and other threads run on meanwhile:
 * an object dlopen'ed and dlclose'd without pause is, at the moment they
 * were read, as likely as not half loaded (the loader first reserves its
 * whole span read-only), and at the moment the stub runs, another copy of
 * it may be being relocated at the same address. A protection put back
 * from such maps once made the page of a library's .got.plt and .data
 * read-only under the loader relocating it (SIGSEGV in ld.so, the
 * dlopen churn of test_inject_hostile). So where the object's program
 * headers were read, only a page of its PT_GNU_RELRO, which the loader
 * itself makes read-only for good, is ever made writable, and it is put
 * back to read-only, its final protection; any other page is left as it
 * is (a store into it that faults is skipped, chunk_run). The maps decide
 * only for objects whose headers are not known (a non-PIE executable,
 * never unloaded). */
static int prog_protect(struct poke_prog *p, const struct mt_maps *maps, const struct got_slot *v,
			size_t n, bool write)
{
	size_t i, k;
	int e = 0;

	for (i = 0; i < n && !e; i++) {
		__u64 page = INJECT_PAGE_DOWN(v[i].addr);
		const struct mt_map *m;
		bool done = false;
		int prot;

		for (k = 0; k < i && !done; k++)
			done = INJECT_PAGE_DOWN(v[k].addr) == page;
		if (done || (v[i].relro_known && (page < v[i].relro_lo || page >= v[i].relro_hi)))
			continue;
		m = proc_maps_find(maps, page);
		if (!m || m->perms[1] == 'w')
			continue;
		prot = v[i].relro_known ? PROT_READ
					: (m->perms[0] == 'r' ? PROT_READ : 0) |
						  (m->perms[2] == 'x' ? PROT_EXEC : 0);
		e = prog_add(p, MT_POKE_SYSCALL, SYS_mprotect, page, INJECT_PAGE,
			     (__u64)(write ? prot | PROT_WRITE : prot));
	}
	return e;
}

/* Run the k records at scratch in the held thread. A record that fails,
 * a store into memory no longer mapped (the stub faults there: the
 * SIGSEGV is never delivered) or an mprotect of a page no longer mapped
 * (the stub stops there), is one of an object dlclose'd since memtop read
 * the process: it is skipped and the run goes on from the next one. */
static int chunk_run(struct inject_state *st, struct inject_session *s, __u64 scratch, size_t k)
{
	const __u64 rec = sizeof(struct mt_poke_record), end = scratch + k * rec;
	__u64 from = scratch;

	for (;;) {
		struct user_regs_struct r;
		int e = inject_session_run(s, st->base + st->im.poke, from, &r);

		if (e && e != -EFAULT)
			return e;
		if (!e && r.r15 == end)
			return 0;
		if (r.r15 < from || r.r15 >= end || (r.r15 - scratch) % rec)
			return e ? e : -EFAULT; /* not stopped at a record: not ours to skip */
		if (!e && (long)r.rax >= 0)
			return -EFAULT;
		from = r.r15 + rec;
	}
}

/* Run p in the held thread, MT_INJECT_SCRATCH_RECORDS at a time; each
 * record comes back as the stub left it (a store's d: what it found). */
static int prog_run(struct inject_state *st, struct inject_session *s, struct poke_prog *p)
{
	static const struct mt_poke_record end = { MT_POKE_END };
	__u64 scratch = st->base + st->im.scratch;
	size_t i = 0;

	while (i < p->n) {
		size_t k =
			p->n - i < MT_INJECT_SCRATCH_RECORDS ? p->n - i : MT_INJECT_SCRATCH_RECORDS;
		int e = inject_mem_write(s->mem_fd, scratch, &p->v[i], k * sizeof(p->v[0]));

		if (!e)
			e = inject_mem_write(s->mem_fd, scratch + k * sizeof(end), &end, sizeof(end));
		if (!e)
			e = chunk_run(st, s, scratch, k);
		if (!e) /* what each compare-and-swap found */
			e = inject_mem_read(s->mem_fd, scratch, &p->v[i], k * sizeof(p->v[0]));
		if (e)
			return e;
		i += k;
	}
	return 0;
}

static int prog_append(struct poke_prog *p, const struct poke_prog *q)
{
	size_t i;
	int e = 0;

	for (i = 0; i < q->n && !e; i++)
		e = prog_add(p, q->v[i].op, q->v[i].a, q->v[i].b, q->v[i].c, q->v[i].d);
	return e;
}

/* One run of the stub over the slots of v not stored yet: the pages made
 * writable, a compare-and-swap per slot, the pages back. A slot is
 * expected to hold what the scan read (reroute), or, in the lazy round,
 * the definition a lazy binding may have put there since; entry[fn] when
 * restoring. */
static int store_round(struct inject_state *st, struct inject_session *s,
		       const struct poke_prog *writable, const struct poke_prog *back,
		       const struct got_slot *v, size_t n, bool reroute, bool lazy,
		       unsigned char *stored)
{
	struct poke_prog p = { 0 };
	size_t i, todo = 0, *at = calloc(n, sizeof(*at));
	int e = at ? prog_append(&p, writable) : -ENOMEM;

	for (i = 0; i < n && !e; i++) {
		__u64 def = st->target[v[i].fn];

		if (stored[i] || (lazy && v[i].cur == def))
			continue;
		at[i] = p.n + 1;
		todo++;
		e = prog_add(&p, MT_POKE_STORE, v[i].addr, reroute ? st->entry[v[i].fn] : v[i].orig,
			     !reroute ? st->entry[v[i].fn]
			     : lazy   ? def
				      : v[i].cur,
			     0);
	}
	if (!e && todo)
		e = prog_append(&p, back);
	if (!e && todo)
		e = prog_run(st, s, &p);
	for (i = 0; i < n && !e; i++)
		if (at[i] && p.v[at[i] - 1].d == p.v[at[i] - 1].c)
			stored[i] = 1;
	free(at);
	free(p.v);
	return e;
}

/* Compare-and-swap into every slot of v: entry[fn] where it still holds
 * what the scan read (reroute), or orig where it holds entry[fn]
 * (restore), with read-only pages made writable around the stores (their
 * protections from maps, read before the stop). stored[i] says whether
 * slot i was written: a slot that changed since (its object dlclose'd,
 * something else there now) is left alone. A lazy slot the loader bound
 * in the meantime is taken in a second round. */
static int slots_store(struct inject_state *st, struct inject_session *s, const struct mt_maps *maps,
		       const struct got_slot *v, size_t n, bool reroute, unsigned char *stored)
{
	struct poke_prog writable = { 0 }, back = { 0 };
	int e;

	if (!n)
		return 0;
	memset(stored, 0, n);
	e = prog_protect(&writable, maps, v, n, true);
	if (!e)
		e = prog_protect(&back, maps, v, n, false);
	if (!e)
		e = store_round(st, s, &writable, &back, v, n, reroute, false, stored);
	if (!e && reroute)
		e = store_round(st, s, &writable, &back, v, n, reroute, true, stored);
	if (e && back.n)
		prog_run(st, s, &back); /* whatever happened, the pages get their protection back */
	free(writable.v);
	free(back.v);
	return e;
}

static void pause_record(struct inject_state *st, const struct inject_session *s)
{
	st->pause_ns = s->paused_ns;
	st->reach_ns = s->reach_ns;
	if (s->paused_ns > st->pause_max_ns)
		st->pause_max_ns = s->paused_ns;
	st->stops++;
}

/* The sampler in the process is ours and free to use. */
static int reuse_check(struct inject_state *st, int fd, char *err, size_t errlen)
{
	struct mt_inject_ctl c;

	if (ctl_read(st, fd, &c) || c.magic != MT_INJECT_MAGIC || c.version != MT_INJECT_VERSION) {
		snprintf(err, errlen,
			 "PID %d maps a memtop sampler of another version: not injecting", st->pid);
		return -EEXIST;
	}
	if (c.attached_pid && (pid_t)c.attached_pid != getpid() && !kill((pid_t)c.attached_pid, 0)) {
		snprintf(err, errlen, "PID %d is already watched by memtop PID %u with --inject",
			 st->pid, c.attached_pid);
		return -EBUSY;
	}
	return 0;
}

/* A reused copy starts with an empty table and filter: their entries are from a
 * session whose frees no longer reached it. Done before the stop (a
 * sampler still reached through GOTs a killed memtop left sees entries
 * vanish, which only loses samples). */
static int table_clear(struct inject_state *st, int fd)
{
	static const __u64 zeros[512];
	__u64 at, zero = 0;
	int e;

	for (at = 0; at < MT_INJECT_TABLE_SLOTS * 8ULL; at += sizeof(zeros)) {
		e = inject_mem_write(fd, st->base + st->im.table + at, zeros, sizeof(zeros));
		if (e)
			return e;
	}
	for (at = 0; at < MT_INJECT_FILTER_SLOTS * 2ULL; at += sizeof(zeros)) {
		e = inject_mem_write(fd, st->base + st->im.filter + at, zeros, sizeof(zeros));
		if (e)
			return e;
	}
	return ctl_write_field(st, fd, offsetof(struct mt_inject_ctl, live), &zero, 8);
}

/* Control block before any slot points at the sampler: targets, rate,
 * seed, us. */
static int ctl_fill(struct inject_state *st, int fd, __u64 rate)
{
	struct mt_inject_ctl c;
	__u32 me = (__u32)getpid(), want = st->python;
	__u64 seed = 0;
	int e;

	if (getrandom(&seed, sizeof(seed), GRND_NONBLOCK) != sizeof(seed))
		seed = (__u64)getpid() << 32 ^ (__u64)st->pid ^ (__u64)(uintptr_t)&c;
	e = ctl_write_field(st, fd, offsetof(struct mt_inject_ctl, orig), st->target, sizeof(c.orig));
	if (!e)
		e = ctl_write_field(st, fd, offsetof(struct mt_inject_ctl, rate), &rate, 8);
	if (!e)
		e = ctl_write_field(st, fd, offsetof(struct mt_inject_ctl, seed), &seed, 8);
	if (!e)
		e = ctl_write_field(st, fd, offsetof(struct mt_inject_ctl, py_api), st->py_api,
				    sizeof(st->py_api));
	if (!e)
		e = ctl_write_field(st, fd, offsetof(struct mt_inject_ctl, py_want), &want, 4);
	if (!e)
		e = ctl_write_field(st, fd, offsetof(struct mt_inject_ctl, attached_pid), &me, 4);
	return e;
}

/* The sampler's counts now, summed over its slots. */
static int counts_read(const struct inject_state *st, struct mt_inject_counts *c)
{
	struct mt_inject_slot v[MT_INJECT_SLOTS];
	int fd = inject_mem_open_same(st, O_RDONLY), e, i;

	if (fd < 0)
		return fd; /* gone, or another program since (an exec) */
	e = inject_mem_read(fd, st->base + st->im.slots, v, sizeof(v));
	close(fd);
	if (e)
		return e;
	memset(c, 0, sizeof(*c));
	for (i = 0; i < MT_INJECT_SLOTS; i++) {
		c->alloc_calls += v[i].alloc_calls;
		c->alloc_bytes += v[i].alloc_bytes;
		c->free_calls += v[i].free_calls;
		c->py_calls += v[i].py_calls;
	}
	c->py_allocs = v[MT_INJECT_THREAD_SLOTS].alloc_calls;
	c->py_frees = v[MT_INJECT_THREAD_SLOTS].free_calls;
	return e;
}

/* The copy at st->base (read through fd) is a forked child's whose
 * counters were zeroed at the fork, and that has counted every call
 * since: its parent's copy was marked (the flag, inherited), its own mark
 * is not (wiped), and so it counts whatever its semaphores say
 * (sampler_abi.h). */
static bool forked_counting(const struct inject_state *st, int fd)
{
	struct mt_inject_ctl c;
	__u64 mark = 1;

	return !ctl_read(st, fd, &c) && c.magic == MT_INJECT_MAGIC &&
	       c.version == MT_INJECT_VERSION && c.wipe_on_fork == 1 &&
	       !inject_mem_read(fd, mark_at(st), &mark, sizeof(mark)) && !mark;
}

/* test of the copy of the sampler pid maps, read through its memory
 * (false without one). */
static bool copy_is(pid_t pid, const char *sampler_so,
		    bool (*test)(const struct inject_state *st, int fd))
{
	struct inject_state st = { .pid = pid };
	char err[256], path[64];
	bool yes = false;
	int fd;

	if (inject_image_find(pid, &st.base) ||
	    inject_image_open(&st.im, sampler_so, err, sizeof(err)))
		return false;
	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		yes = test(&st, fd);
		close(fd);
	}
	inject_image_close(&st.im);
	return yes;
}

bool inject_counted_since_fork(pid_t pid, const char *sampler_so)
{
	return copy_is(pid, sampler_so, forked_counting);
}

static int maps_for(const struct inject_state *st, const struct got_slot *v, size_t n,
		    struct mt_maps *out);

int inject_mem_open_same(const struct inject_state *st, int flags)
{
	struct mt_maps maps = { 0 };
	char path[64];
	__u64 base = 0;
	int fd, e;

	snprintf(path, sizeof(path), "/proc/%d/mem", st->pid);
	fd = open(path, flags | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* the descriptor is bound to the memory the process had at the
	 * open: if the sampler is still where it was after it, that memory
	 * is the one memtop changed (an exec since writes nowhere). Only
	 * the mapping at the base is asked for (a hostile process's maps
	 * can be many MiB). */
	e = maps_for(st, NULL, 0, &maps);
	if (!e && (inject_image_find_in(&maps, &base) || base != st->base))
		e = -ESTALE;
	proc_maps_free(&maps);
	if (e) {
		close(fd);
		return e;
	}
	return fd;
}

int inject_mark_probed(struct inject_state *st)
{
	__u64 one = 1;
	int fd, e;

	if (!st->mark_pending)
		return 0;
	fd = inject_mem_open_same(st, O_WRONLY);
	if (fd < 0)
		return fd;
	e = inject_mem_write(fd, mark_at(st), &one, sizeof(one));
	close(fd);
	st->mark_pending = e != 0;
	return e;
}

int inject_count_from_now(struct inject_state *st)
{
	st->since_fork = false;
	return counts_read(st, &st->counted_before);
}

__u64 inject_slots_at(const struct inject_state *st)
{
	return st->base + st->im.slots;
}

void inject_counts_since(const struct inject_state *st, const struct mt_inject_counts *raw,
			 struct mt_inject_counts *out)
{
	*out = *raw;
	out->alloc_calls -= st->counted_before.alloc_calls;
	out->alloc_bytes -= st->counted_before.alloc_bytes;
	out->free_calls -= st->counted_before.free_calls;
	out->py_calls -= st->counted_before.py_calls;
	out->py_allocs -= st->counted_before.py_allocs;
	out->py_frees -= st->counted_before.py_frees;
}

int inject_counts(const struct inject_state *st, struct mt_inject_counts *c)
{
	struct mt_inject_counts now;
	int e = counts_read(st, &now);

	if (e)
		return e; /* *c as it was */
	inject_counts_since(st, &now, c);
	return 0;
}

int inject_python_state(const struct inject_state *st)
{
	char path[64];
	__u32 state;
	int fd, e;

	snprintf(path, sizeof(path), "/proc/%d/mem", st->pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	e = inject_mem_read(fd, st->base + st->im.ctl + offsetof(struct mt_inject_ctl, py_state),
			    &state, sizeof(state));
	close(fd);
	return e ? e : (int)state;
}

/* CPython's object allocator back before the GOT: py_want 0, then wait for
 * the pending call (the wrapper asks for it on its next object). */
static void python_restore(struct inject_state *st, int fd)
{
	__u64 deadline = clock_mono_ns() + INJECT_PY_RESTORE_MS * 1000000ULL;
	__u32 none = 0;
	int state;

	if (!st->python || ctl_write_field(st, fd, offsetof(struct mt_inject_ctl, py_want), &none, 4))
		return;
	for (;;) {
		state = inject_python_state(st);
		if (state < 0 || state == MT_PY_HOOK_OFF)
			return;
		if (state == MT_PY_HOOK_LEFT) {
			snprintf(st->py_note, sizeof(st->py_note),
				 "PID %d: another hook (tracemalloc?) wrapped CPython's "
				 "object allocator after memtop: the sampler stays in its chain, "
				 "forwarding only",
				 st->pid);
			return;
		}
		if (clock_mono_ns() >= deadline)
			break;
		usleep(10000);
	}
	snprintf(st->py_note, sizeof(st->py_note),
		 "PID %d: CPython's main thread ran no Python code for %d ms (a C "
		 "call holding the GIL?): its object allocator still goes through the sampler, "
		 "which only forwards now",
		 st->pid, INJECT_PY_RESTORE_MS);
}

static void entries_set(struct inject_state *st)
{
	int k;

	for (k = 0; k < MT_IFN_COUNT; k++)
		st->entry[k] = st->base + st->im.entry[k];
}

/* What the holder does with the thread held (inject_hold.h): map the
 * sampler and fill its control block (an attach without a copy mapped),
 * then one compare-and-swap per slot; on a failed reroute the slots it
 * did store are put back. */
struct hold_work {
	struct inject_state *st;
	const struct mt_maps *maps;
	const struct got_slot *slots;
	size_t n;
	bool reroute;        /* else restore */
	bool map_image;      /* no copy mapped yet */
	bool release;        /* clear attached_pid after the stores (detach) */
	bool mark;           /* the process marked as not a forked child (attach) */
	bool count_children; /* a child forked from now on counts from its fork */
	__u64 rate;
};

/* The slots' pages zeroed in any child the process forks from now on,
 * and the process marked as not such a child (sampler_abi.h, struct
 * mt_inject_slots): the madvise, then the mark, then the flag its
 * children inherit (on only where they are to be counted), so that a
 * child forked between two of them is counted from when memtop finds it,
 * as before. Without them a child's counts start there too. */
static void wipe_mark(struct inject_state *st, struct inject_session *s, bool count_children)
{
	__u64 one = 1;
	__u32 on = count_children;

	if (!inject_image_wipe_on_fork(&st->im, s, st->base) &&
	    !inject_mem_write(s->mem_fd, mark_at(st), &one, sizeof(one)))
		ctl_write_field(st, s->mem_fd, offsetof(struct mt_inject_ctl, wipe_on_fork), &on,
				sizeof(on));
}

static int hold_work_run(struct inject_session *s, void *ctx, struct inject_hold_out *out,
			 char *err, size_t errlen)
{
	struct hold_work *w = ctx;
	struct inject_state *st = w->st;
	__u32 none = 0;
	size_t i, k;
	int e;

	if (w->map_image) {
		e = inject_image_map(&st->im, s, &st->base, err, errlen);
		if (e)
			return e;
		out->base = st->base;
		entries_set(st);
		e = ctl_fill(st, s->mem_fd, w->rate);
		if (e) {
			snprintf(err, errlen, "PID %d: cannot set the sampler up: %s", st->pid,
				 strerror(-e));
			return e;
		}
	}
	if (w->mark)
		wipe_mark(st, s, w->count_children);
	out->nflags = w->n;
	out->flags = calloc(w->n ? w->n : 1, 1);
	if (!out->flags || w->n > INJECT_HOLD_MAX_FLAGS)
		return -ENOMEM;
	e = slots_store(st, s, w->maps, w->slots, w->n, w->reroute, out->flags);
	if (e && w->reroute) {
		struct got_slot *done = calloc(w->n, sizeof(*done));
		unsigned char *back = calloc(w->n, 1);

		for (i = k = 0; done && back && i < w->n; i++)
			if (out->flags[i])
				done[k++] = w->slots[i];
		if (done && back)
			slots_store(st, s, w->maps, done, k, false, back);
		memset(out->flags, 0, w->n);
		free(done);
		free(back);
		snprintf(err, errlen, "PID %d: cannot reroute its GOT: %s", st->pid, strerror(-e));
	} else if (e) {
		snprintf(err, errlen, "PID %d: cannot restore its GOT: %s", st->pid, strerror(-e));
	}
	if (w->release) {
		/* and a child forked from now on counts nothing: nobody will */
		ctl_write_field(st, s->mem_fd, offsetof(struct mt_inject_ctl, attached_pid), &none,
				4);
		ctl_write_field(st, s->mem_fd, offsetof(struct mt_inject_ctl, wipe_on_fork), &none,
				4);
	}
	return e;
}

/* Keep the slots of v the hold stored. */
static size_t slots_keep(struct got_slot *v, size_t n, const struct inject_hold_out *out)
{
	size_t i, k = 0;

	for (i = 0; i < n && i < out->nflags; i++)
		if (out->flags[i])
			v[k++] = v[i];
	return k;
}

/* How often a walk of the link map is tried again when a dlclose changed
 * it under the walk. */
#define LINK_MAP_TRIES 8

/* The link map's head and where each function binds, again while a
 * dlclose changes the chain under the walk. */
static int targets_read(struct inject_state *st, int fd, __u64 owner[MT_IFN_COUNT])
{
	int e, tries = 0;

	do
		e = inject_got_link_map(fd, st->pid, &st->first)
			    ?: inject_got_targets(fd, st->first, st->target, owner);
	while (e == -EAGAIN && ++tries < LINK_MAP_TRIES);
	return e;
}

/* The slots of objects not seen yet (inject_got_scan), again while a
 * dlclose changes the chain under the walk. */
static int slots_scan(struct inject_state *st, int fd, struct got_slot **out, size_t *n)
{
	struct got_seen before = st->seen;
	int e, tries = 0;

	for (;;) {
		struct got_seen seen = { 0 };

		if (before.n) {
			seen.dyn = malloc(before.cap * sizeof(*seen.dyn));
			if (!seen.dyn)
				return -ENOMEM;
			memcpy(seen.dyn, before.dyn, before.n * sizeof(*seen.dyn));
			seen.n = before.n;
			seen.cap = before.cap;
		}
		*n = 0;
		e = inject_got_scan(fd, st->first, &seen, st->skip_dyn, st->entry, st->target, out,
				    n);
		if (!e) {
			inject_got_seen_free(&st->seen);
			st->seen = seen;
			return 0;
		}
		inject_got_seen_free(&seen);
		free(*out);
		*out = NULL;
		*n = 0;
		if (e != -EAGAIN || ++tries == LINK_MAP_TRIES)
			return e;
	}
}

/* A failed hold's reason in a few words (inject_state.why). */
static const char *hold_refusal(int e)
{
	switch (e) {
	case 0:
		return NULL;
	case -EPERM:
		return "ptrace refused: another tracer (another memtop?)";
	case -ESRCH:
		return "exited or exec'd during the injection";
	case -ETIMEDOUT:
		return "the injection timed out";
	case -EBADF:
		return "a descriptor swapped during the injection";
	default:
		return "the injection failed";
	}
}

int inject_blind_spot(pid_t pid, char *why, size_t len)
{
	struct inject_state st = { .pid = pid };
	__u64 owner[MT_IFN_COUNT];
	char path[64];
	int fd, e, tries = 0;

	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	do {
		e = targets_read(&st, fd, owner);
		if (!e)
			e = inject_got_blind_spot(fd, st.first, owner[MT_IFN_MALLOC], why, len);
	} while (e == -EAGAIN && ++tries < LINK_MAP_TRIES);
	close(fd);
	return e;
}

static int detach_locked(struct inject_state *st, char *err, size_t errlen);

static int attach_locked(struct inject_state *st, pid_t pid, const char *sampler_so, __u64 rate,
			 const __u64 *py_api, bool count_children, char *err, size_t errlen)
{
	__u64 owner[MT_IFN_COUNT];
	struct inject_hold_out out = { 0 };
	struct inject_session s;
	struct hold_work w = {
		.st = st, .reroute = true, .mark = true, .count_children = count_children, .rate = rate
	};
	struct mt_maps maps = { 0 };
	int e, k;

	memset(st, 0, sizeof(*st));
	st->pid = pid;
	if (py_api) {
		memcpy(st->py_api, py_api, sizeof(st->py_api));
		st->python = true;
	}
	e = inject_check(pid, st->libc, sizeof(st->libc), err, errlen, &st->why);
	if (e)
		return e;
	st->why = "sampler unreadable";
	e = inject_image_open(&st->im, sampler_so, err, errlen);
	if (e)
		return e;
	st->why = "memory unreadable";
	/* one read of its maps (many MiB in a hostile process) for the
	 * syscall instruction, a sampler already there and the protections
	 * of the slots' pages, all before the stop */
	e = proc_maps_read(pid, &maps);
	if (e) {
		snprintf(err, errlen, "cannot read the memory map of PID %d: %s", pid, strerror(-e));
		goto fail_image;
	}
	e = inject_session_prepare(&s, pid, st->libc, &maps, err, errlen);
	if (e) {
		proc_maps_free(&maps);
		goto fail_image;
	}
	st->syscall_at = s.syscall_insn;
	st->why = "no link map";
	e = targets_read(st, s.mem_fd, owner);
	if (e || !st->target[MT_IFN_MALLOC] || !st->target[MT_IFN_FREE]) {
		snprintf(err, errlen, "PID %d: cannot read its loader's link map: %s", pid,
			 e == -EAGAIN ? "it kept changing (dlopen/dlclose)"
			 : e          ? strerror(-e)
				      : "no malloc or free defined");
		e = e ? e : -ENOENT;
		goto fail_session;
	}
	/* operator new/delete only where the allocator itself defines them */
	for (k = MT_IFN_FIRST_CXX; k < MT_IFN_COUNT; k++)
		if (owner[k] != owner[MT_IFN_MALLOC])
			st->target[k] = 0;
	/* an allocator other than the C library calls its own functions
	 * through its GOT (jemalloc's aligned operator new calls
	 * aligned_alloc): its machinery, counted once at its entry point.
	 * glibc's strdup and the like are calls of the program's, seen. */
	{
		char base[64] = "";

		inject_got_name(s.mem_fd, st->first, owner[MT_IFN_MALLOC], base, sizeof(base));
		if (strncmp(base, "libc.so", 7))
			st->skip_dyn = owner[MT_IFN_MALLOC];
	}
	st->reused = !inject_image_find_in(&maps, &st->base);
	if (st->reused) {
		entries_set(st);
		e = reuse_check(st, s.mem_fd, err, errlen);
		if (e) {
			st->why = e == -EBUSY ? "another memtop's sampler in it"
					      : "another version's sampler in it";
			st->base = 0; /* not ours to touch */
			goto fail_session;
		}
		/* a forked child counting since its fork is marked once
		 * memtop's probes are on it (inject_mark_probed) */
		st->since_fork = forked_counting(st, s.mem_fd);
		st->mark_pending = st->since_fork;
		w.mark = !st->since_fork;
		e = table_clear(st, s.mem_fd);
		if (!e)
			e = ctl_fill(st, s.mem_fd, rate);
		if (e) {
			snprintf(err, errlen, "PID %d: cannot reset the sampler: %s", pid,
				 strerror(-e));
			goto fail_session;
		}
	}
	/* everything that only reads, before the stop: the slots (with the
	 * entry points of a reused copy, to recognise slots a killed memtop
	 * left rerouted) and the protections of their pages */
	st->why = "GOT unreadable";
	e = slots_scan(st, s.mem_fd, &st->slots, &st->nslots);
	if (e) {
		snprintf(err, errlen, "PID %d: cannot read its GOT: %s", pid,
			 e == -EAGAIN ? "its link map kept changing (dlopen/dlclose)" : strerror(-e));
		goto fail_session;
	}
	w.maps = &maps;
	w.slots = st->slots;
	w.n = st->nslots;
	w.map_image = !st->reused;
	e = inject_hold(&s, hold_work_run, &w, &out, err, errlen);
	st->why = hold_refusal(e);
	if (out.base) {
		st->base = out.base;
		entries_set(st);
	}
	proc_maps_free(&maps);
	if (e)
		goto fail_session;
	st->nslots = slots_keep(st->slots, st->nslots, &out);
	free(out.flags);
	st->attached = true;
	/* a reused copy's counts go on; a forked one's are its own */
	if (!st->since_fork)
		counts_read(st, &st->counted_before);
	pause_record(st, &s);
	inject_session_close(&s);
	if (!st->reused && inject_image_count(pid) > 1) {
		/* another memtop mapped its sampler at the same moment: the
		 * slots are split between two samplers; both put theirs back
		 * and watch it with uprobes (the calls pass through to the
		 * allocator, where the uprobes see them) */
		detach_locked(st, NULL, 0);
		inject_free(st);
		snprintf(err, errlen,
			 "PID %d: another memtop put its sampler in at the same moment", pid);
		st->why = "another memtop's sampler in it";
		return -EBUSY;
	}
	if (inject_image_path(pid, st->base, st->path, sizeof(st->path))) {
		snprintf(err, errlen, "PID %d: the sampler mapping vanished", pid);
		detach_locked(st, NULL, 0);
		st->why = "the sampler mapping vanished";
		return -ENOENT;
	}
	return 0;

fail_session:
	free(out.flags);
	proc_maps_free(&maps);
	if (st->base) {
		__u32 none = 0;

		ctl_write_field(st, s.mem_fd, offsetof(struct mt_inject_ctl, attached_pid), &none, 4);
	}
	inject_session_close(&s);
fail_image:
	inject_free(st);
	return e;
}

/* The process still runs the program memtop injected into: an exec
 * replaced its link map and unmapped the sampler, and nothing of the old
 * addresses may be written any more. */
/* The mappings a rescan or a detach of st needs, the sampler's, the
 * syscall instruction's and those of the n slots at v: asked of the
 * kernel one by one (proc_maps_read_at), else read with all the others
 * (a hostile process's text can be many MiB: memtop's exit waits for
 * it). 0 or -errno. */
static int maps_for(const struct inject_state *st, const struct got_slot *v, size_t n,
		    struct mt_maps *out)
{
	__u64 *at = malloc((n + 2) * sizeof(*at));
	size_t i;
	int e = -ENOMEM;

	if (at) {
		at[0] = st->base;
		at[1] = st->syscall_at;
		for (i = 0; i < n; i++)
			at[i + 2] = v[i].addr;
		e = proc_maps_read_at(st->pid, at, n + 2, out);
		free(at);
	}
	return e && e != -ESRCH ? proc_maps_read(st->pid, out) : e;
}

static bool same_image(struct inject_state *st, const struct mt_maps *maps)
{
	__u64 base;

	if (!inject_image_find_in(maps, &base) && base == st->base)
		return true;
	st->attached = false;
	return false;
}

/* The slots of objects loaded since the last scan: only reads of the link
 * map, so the maps (many MiB in a hostile process) are read only when
 * there is something to reroute. */
static int rescan_fresh(struct inject_state *st, struct got_slot **fresh, size_t *nfresh)
{
	char path[64];
	int fd, e;

	snprintf(path, sizeof(path), "/proc/%d/mem", st->pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	inject_got_seen_prune(fd, st->first, &st->seen);
	e = slots_scan(st, fd, fresh, nfresh);
	close(fd);
	return e == -EAGAIN ? 0 : e; /* a dlopen/dlclose storm: the next
				      * refresh tries again */
}

int inject_rescan(struct inject_state *st, char *err, size_t errlen)
{
	struct inject_hold_out out = { 0 };
	struct inject_session s = { .mem_fd = -1 };
	struct mt_maps maps = { 0 };
	struct got_slot *fresh = NULL;
	size_t nfresh = 0;
	int e;

	if (!st->attached)
		return 0;
	e = rescan_fresh(st, &fresh, &nfresh);
	if (e || !nfresh)
		goto out;
	/* an exec since the scan read another program's memory: nothing of
	 * it is written (the link map read was only a read) */
	e = maps_for(st, fresh, nfresh, &maps);
	if (e || !same_image(st, &maps))
		goto out;
	e = inject_session_prepare(&s, st->pid, st->libc, &maps, err, errlen);
	if (e)
		goto out;
	{
		struct hold_work w = {
			.st = st, .maps = &maps, .slots = fresh, .n = nfresh, .reroute = true
		};
		int lock = inject_lock();

		if (lock == -EBUSY) {
			e = 0; /* another memtop injecting: the next refresh tries again */
			goto out;
		}
		e = inject_hold(&s, hold_work_run, &w, &out, err, errlen);
		inject_unlock(lock);
	}
	if (e)
		goto out;
	pause_record(st, &s);
	nfresh = slots_keep(fresh, nfresh, &out);
	{
		struct got_slot *v = realloc(st->slots, (st->nslots + nfresh) * sizeof(*v));

		if (!v) {
			e = -ENOMEM;
			goto out;
		}
		memcpy(v + st->nslots, fresh, nfresh * sizeof(*v));
		st->slots = v;
		st->nslots += nfresh;
	}
	e = (int)nfresh;
out:
	free(out.flags);
	free(fresh);
	proc_maps_free(&maps);
	inject_session_close(&s);
	return e;
}

static int detach_locked(struct inject_state *st, char *err, size_t errlen)
{
	struct inject_hold_out out = { 0 };
	struct inject_session s;
	struct mt_maps maps;
	size_t i, n = 0;
	char dummy[8];
	int e;

	if (!err) {
		err = dummy;
		errlen = sizeof(dummy);
	}
	if (!st->attached)
		return 0;
	/* one read of its maps (many MiB in a hostile process: memtop's exit
	 * waits for it) for the image, the syscall instruction and the
	 * protections of the slots' pages */
	e = maps_for(st, st->slots, st->nslots, &maps);
	if (e) {
		snprintf(err, errlen, "PID %d: cannot read its memory map: %s", st->pid,
			 strerror(-e));
		return e;
	}
	if (!same_image(st, &maps)) {
		proc_maps_free(&maps);
		snprintf(err, errlen,
			 "PID %d runs another program since it was injected (exec): "
			 "nothing to restore",
			 st->pid);
		return -ESTALE;
	}
	e = inject_session_prepare(&s, st->pid, st->libc, &maps, err, errlen);
	if (e) {
		proc_maps_free(&maps);
		return e;
	}
	python_restore(st, s.mem_fd);
	/* only slots of objects still loaded that still point at us (the
	 * compare-and-swap checks each again, in the stop) */
	for (i = 0; i < st->nslots; i++) {
		__u64 v;

		if (!inject_got_loaded(s.mem_fd, st->first, st->slots[i].dyn) ||
		    inject_mem_read(s.mem_fd, st->slots[i].addr, &v, sizeof(v)) ||
		    v != st->entry[st->slots[i].fn])
			continue;
		st->slots[n++] = st->slots[i];
	}
	st->nslots = n;
	{
		struct hold_work w = {
			.st = st, .maps = &maps, .slots = st->slots, .n = st->nslots, .release = true
		};

		e = inject_hold(&s, hold_work_run, &w, &out, err, errlen);
	}
	if (!e) {
		pause_record(st, &s);
		st->nslots = slots_keep(st->slots, st->nslots, &out);
		st->attached = false;
	}
	free(out.flags);
	proc_maps_free(&maps);
	inject_session_close(&s);
	return e;
}

/* Its memtop is gone, killed: the GOT slots it left still point at the copy. */
static bool orphaned(const struct inject_state *st, int fd)
{
	struct mt_inject_ctl c;

	return !ctl_read(st, fd, &c) && c.magic == MT_INJECT_MAGIC &&
	       c.version == MT_INJECT_VERSION && c.attached_pid &&
	       (pid_t)c.attached_pid != getpid() && kill((pid_t)c.attached_pid, 0) && errno == ESRCH;
}

bool inject_orphaned(pid_t pid, const char *sampler_so)
{
	return copy_is(pid, sampler_so, orphaned);
}

/* One injection or putting back at a time on this host (inject_lock.h). */
int inject_attach(struct inject_state *st, pid_t pid, const char *sampler_so, __u64 rate,
		  const __u64 *py_api, bool count_children, char *err, size_t errlen)
{
	int lock = inject_lock(), e;

	if (lock == -EBUSY) {
		st->pid = pid;
		st->why = "another memtop was injecting";
		snprintf(err, errlen, "PID %d: another memtop held the injection lock for %d ms",
			 pid, INJECT_LOCK_WAIT_MS);
		return -EBUSY;
	}
	e = attach_locked(st, pid, sampler_so, rate, py_api, count_children, err, errlen);
	inject_unlock(lock);
	return e;
}

int inject_detach(struct inject_state *st, char *err, size_t errlen)
{
	int lock = inject_lock(), e;

	/* a lock that cannot be had in time: put the process back all the
	 * same (its slots are compared and swapped one by one) */
	e = detach_locked(st, err, errlen);
	inject_unlock(lock);
	return e;
}

void inject_free(struct inject_state *st)
{
	inject_image_close(&st->im);
	free(st->slots);
	st->slots = NULL;
	st->nslots = 0;
	inject_got_seen_free(&st->seen);
}

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

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/syscall.h>

#include "probe/inject_check.h"
#include "probe/inject_ptrace.h"
#include "stacks/proc_maps.h"

#define PAGE 4096ULL

/* A thread to hold: one that is running (not blocked in a system call,
 * which the stop would interrupt), else the main thread. */
static pid_t pick_thread(pid_t pid)
{
	char path[320], buf[512];
	struct dirent *d;
	pid_t pick = pid;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	dir = opendir(path);
	if (!dir)
		return pid;
	while ((d = readdir(dir))) {
		char *p;
		FILE *f;

		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/stat", pid, d->d_name);
		f = fopen(path, "re");
		if (!f)
			continue;
		p = fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
		fclose(f);
		if (p && p[1] == ' ' && p[2] == 'R') {
			pick = atoi(d->d_name);
			break;
		}
	}
	closedir(dir);
	return pick;
}

static int ctl_read(const struct inject_state *st, int fd, struct mt_inject_ctl *c)
{
	return inject_mem_read(fd, st->base + st->im.ctl, c, sizeof(*c));
}

static int ctl_write_field(const struct inject_state *st, int fd, size_t off, const void *v,
			   size_t len)
{
	return inject_mem_write(fd, st->base + st->im.ctl + off, v, len);
}

/* Make the pages of the slots writable (write = true) or give them their
 * protection back, from the process's maps. */
static int pages_protect(struct inject_session *s, const struct got_slot *v, size_t n,
			 bool write)
{
	struct mt_maps maps;
	size_t i, k;
	int e = proc_maps_read(s->pid, &maps);

	if (e)
		return e;
	for (i = 0; i < n && !e; i++) {
		__u64 page = v[i].addr & ~(PAGE - 1);
		const struct mt_map *m;
		bool done = false;
		int prot;

		for (k = 0; k < i && !done; k++)
			done = (v[k].addr & ~(PAGE - 1)) == page;
		m = done ? NULL : proc_maps_find(&maps, page);
		if (!m || m->perms[1] == 'w')
			continue;
		prot = (m->perms[0] == 'r' ? PROT_READ : 0) | (m->perms[2] == 'x' ? PROT_EXEC : 0);
		{
			__u64 args[6] = { page, PAGE, (__u64)(write ? prot | PROT_WRITE : prot) };
			long r;

			e = inject_session_syscall(s, SYS_mprotect, args, &r);
			if (!e && r)
				e = (int)r;
		}
	}
	proc_maps_free(&maps);
	return e;
}

/* Store into every slot of v: entry[fn] (reroute) or orig (restore). */
static int slots_store(struct inject_state *st, struct inject_session *s,
		       const struct got_slot *v, size_t n, bool reroute)
{
	__u64 pairs[2 * MT_INJECT_SCRATCH_PAIRS + 2];
	size_t i = 0;
	int e;

	if (!n)
		return 0;
	e = pages_protect(s, v, n, true);
	while (!e && i < n) {
		size_t k = 0;

		for (; i < n && k < MT_INJECT_SCRATCH_PAIRS; i++, k++) {
			pairs[2 * k] = v[i].addr;
			pairs[2 * k + 1] = reroute ? st->entry[v[i].fn] : v[i].orig;
		}
		pairs[2 * k] = 0;
		pairs[2 * k + 1] = 0;
		e = inject_mem_write(s->mem_fd, st->base + st->im.scratch, pairs,
				     (2 * k + 2) * sizeof(__u64));
		if (!e)
			e = inject_session_run(s, st->base + st->im.poke, st->base + st->im.scratch);
	}
	/* whatever happened, the pages get their protection back */
	if (pages_protect(s, v, n, false) && !e)
		e = -EFAULT;
	return e;
}

static void pause_record(struct inject_state *st, const struct inject_session *s)
{
	st->pause_ns = s->paused_ns;
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
	if (c.attached_pid && (pid_t)c.attached_pid != getpid() &&
	    !kill((pid_t)c.attached_pid, 0)) {
		snprintf(err, errlen, "PID %d is already watched by memtop PID %u with --inject",
			 st->pid, c.attached_pid);
		return -EBUSY;
	}
	return 0;
}

/* Control block before any slot points at the sampler: targets, rate,
 * seed, us; on a reused copy, an empty table (its entries are from a
 * session whose frees no longer reach it). */
static int ctl_fill(struct inject_state *st, int fd, __u64 rate)
{
	struct mt_inject_ctl c;
	__u32 me = (__u32)getpid();
	__u64 seed = 0, zero = 0;
	int e;

	if (getrandom(&seed, sizeof(seed), GRND_NONBLOCK) != sizeof(seed))
		seed = (__u64)getpid() << 32 ^ (__u64)st->pid ^ (__u64)(uintptr_t)&c;
	if (st->reused) {
		static const __u64 zeros[512];
		__u64 at;

		for (at = 0; at < MT_INJECT_TABLE_SLOTS * 8ULL; at += sizeof(zeros)) {
			e = inject_mem_write(fd, st->base + st->im.table + at, zeros, sizeof(zeros));
			if (e)
				return e;
		}
		e = ctl_write_field(st, fd, offsetof(struct mt_inject_ctl, live), &zero, 8);
		if (e)
			return e;
	}
	e = ctl_write_field(st, fd, offsetof(struct mt_inject_ctl, orig), st->target,
			    sizeof(c.orig));
	if (!e)
		e = ctl_write_field(st, fd, offsetof(struct mt_inject_ctl, rate), &rate, 8);
	if (!e)
		e = ctl_write_field(st, fd, offsetof(struct mt_inject_ctl, seed), &seed, 8);
	if (!e)
		e = ctl_write_field(st, fd, offsetof(struct mt_inject_ctl, attached_pid), &me, 4);
	return e;
}

static void entries_set(struct inject_state *st)
{
	int k;

	for (k = 0; k < MT_IFN_COUNT; k++)
		st->entry[k] = st->base + st->im.entry[k];
}

int inject_attach(struct inject_state *st, pid_t pid, const char *sampler_so, __u64 rate,
		  char *err, size_t errlen)
{
	struct inject_session s;
	int e;

	memset(st, 0, sizeof(*st));
	st->pid = pid;
	e = inject_check(pid, st->libc, sizeof(st->libc), err, errlen);
	if (e)
		return e;
	e = inject_image_open(&st->im, sampler_so, err, errlen);
	if (e)
		return e;
	e = inject_session_prepare(&s, pid, st->libc, err, errlen);
	if (e)
		goto fail_image;
	e = inject_got_link_map(s.mem_fd, pid, &st->first);
	if (!e)
		e = inject_got_targets(s.mem_fd, st->first, st->target);
	if (e || !st->target[MT_IFN_MALLOC] || !st->target[MT_IFN_FREE]) {
		snprintf(err, errlen, "PID %d: cannot read its loader's link map: %s", pid,
			 e ? strerror(-e) : "no malloc or free defined");
		e = e ? e : -ENOENT;
		goto fail_session;
	}
	st->reused = !inject_image_find(pid, &st->base);
	if (st->reused) {
		entries_set(st);
		e = reuse_check(st, s.mem_fd, err, errlen);
		if (e)
			goto fail_session;
	}
	e = inject_session_begin(&s, pick_thread(pid), err, errlen);
	if (e)
		goto fail_session;
	if (!st->reused) {
		e = inject_image_map(&st->im, &s, &st->base, err, errlen);
		if (e)
			goto fail_stopped;
		entries_set(st);
	}
	e = ctl_fill(st, s.mem_fd, rate);
	if (!e)
		e = inject_got_scan(s.mem_fd, st->first, &st->seen, 0, st->entry, st->target,
				    &st->slots, &st->nslots);
	if (e) {
		snprintf(err, errlen, "PID %d: cannot prepare the sampler: %s", pid, strerror(-e));
		goto fail_stopped;
	}
	e = slots_store(st, &s, st->slots, st->nslots, true);
	if (e) {
		/* put back whatever was stored */
		slots_store(st, &s, st->slots, st->nslots, false);
		snprintf(err, errlen, "PID %d: cannot reroute its GOT: %s", pid, strerror(-e));
		goto fail_stopped;
	}
	st->attached = true;
	inject_session_end(&s);
	pause_record(st, &s);
	inject_session_close(&s);
	if (inject_image_path(pid, st->base, st->path, sizeof(st->path))) {
		snprintf(err, errlen, "PID %d: the sampler mapping vanished", pid);
		inject_detach(st, NULL, 0);
		return -ENOENT;
	}
	return 0;

fail_stopped:
	if (st->base) {
		__u32 none = 0;

		ctl_write_field(st, s.mem_fd, offsetof(struct mt_inject_ctl, attached_pid), &none, 4);
	}
	inject_session_end(&s);
fail_session:
	inject_session_close(&s);
fail_image:
	inject_free(st);
	return e;
}

int inject_rescan(struct inject_state *st, char *err, size_t errlen)
{
	struct inject_session s;
	struct got_slot *fresh = NULL;
	size_t nfresh = 0, cap;
	int e;

	if (!st->attached)
		return 0;
	e = inject_session_prepare(&s, st->pid, st->libc, err, errlen);
	if (e)
		return e;
	e = inject_got_scan(s.mem_fd, st->first, &st->seen, 0, st->entry, st->target, &fresh,
			    &nfresh);
	if (e || !nfresh)
		goto out;
	e = inject_session_begin(&s, pick_thread(st->pid), err, errlen);
	if (e)
		goto out;
	e = slots_store(st, &s, fresh, nfresh, true);
	if (e)
		slots_store(st, &s, fresh, nfresh, false);
	inject_session_end(&s);
	pause_record(st, &s);
	if (e) {
		snprintf(err, errlen, "PID %d: cannot reroute a new object's GOT: %s", st->pid,
			 strerror(-e));
		goto out;
	}
	cap = st->nslots + nfresh;
	{
		struct got_slot *v = realloc(st->slots, cap * sizeof(*v));

		if (!v) {
			e = -ENOMEM;
			goto out;
		}
		memcpy(v + st->nslots, fresh, nfresh * sizeof(*v));
		st->slots = v;
		st->nslots = cap;
	}
	e = (int)nfresh;
out:
	free(fresh);
	inject_session_close(&s);
	return e;
}

int inject_detach(struct inject_state *st, char *err, size_t errlen)
{
	struct inject_session s;
	size_t i, n = 0;
	__u32 none = 0;
	char dummy[8];
	int e;

	if (!st->attached)
		return 0;
	if (!err) {
		err = dummy;
		errlen = sizeof(dummy);
	}
	e = inject_session_prepare(&s, st->pid, st->libc, err, errlen);
	if (e)
		return e;
	/* only slots of objects still loaded that still point at us */
	for (i = 0; i < st->nslots; i++) {
		__u64 v;

		if (!inject_got_loaded(s.mem_fd, st->first, st->slots[i].dyn) ||
		    inject_mem_read(s.mem_fd, st->slots[i].addr, &v, sizeof(v)) ||
		    v != st->entry[st->slots[i].fn])
			continue;
		st->slots[n++] = st->slots[i];
	}
	st->nslots = n;
	e = inject_session_begin(&s, pick_thread(st->pid), err, errlen);
	if (!e) {
		e = slots_store(st, &s, st->slots, st->nslots, false);
		ctl_write_field(st, s.mem_fd, offsetof(struct mt_inject_ctl, attached_pid), &none, 4);
		inject_session_end(&s);
		pause_record(st, &s);
		if (e)
			snprintf(err, errlen, "PID %d: cannot restore its GOT: %s", st->pid,
				 strerror(-e));
		else
			st->attached = false;
	}
	inject_session_close(&s);
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

// SPDX-License-Identifier: GPL-2.0-only
/*
 * bpf_loader.c - owns the memtop BPF skeleton: sets the read-only
 * configuration (sampling rate, exponential table, stack copy size) and map
 * sizes before load, loads with the session program when asked, and wraps
 * the few map operations the rest of memtop needs.
 */
#include "probe/bpf_loader.h"
#include "probe/link_release.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "memtop.skel.h"
#include "util/sampling.h"

/* BPF_TRACE_UPROBE_SESSION (kernel 6.13); not in the installed uapi. */
#define MT_BPF_TRACE_UPROBE_SESSION 57

struct mt_bpf {
	struct memtop_bpf *skel;
	struct bpf_link *fork_link, *exec_link;
	struct bpf_link *mmap_link; /* the mmap source, once started */
	struct bpf_link *exit_link; /* the injected samplers' last counts, once asked for */
	bool session;
	int ncpus;
	__u32 handovers; /* entries of the handover map */
};

static struct memtop_bpf *open_and_load(const struct mt_bpf_opts *o, bool session, int *perr)
{
	struct memtop_bpf *skel = memtop_bpf__open();
	int err;

	if (!skel) {
		*perr = -errno;
		return NULL;
	}
	skel->rodata->sample_rate = o->rate;
	skel->rodata->stack_copy = o->stack_copy;
	skel->rodata->stack_chunks =
		o->stack_copy ? (o->stack_copy + MT_STACK_CHUNK - 1) / MT_STACK_CHUNK + 1 : 0;
	if (skel->rodata->stack_chunks > MT_STACK_COPY_MAX / MT_STACK_CHUNK)
		skel->rodata->stack_chunks = MT_STACK_COPY_MAX / MT_STACK_CHUNK;
	sampling_exp_table((__u32 *)skel->rodata->exp_table);
	bpf_map__set_max_entries(skel->maps.live, o->live_max);
	if (session)
		bpf_program__set_expected_attach_type(skel->progs.mt_session,
						      MT_BPF_TRACE_UPROBE_SESSION);
	else
		bpf_program__set_autoload(skel->progs.mt_session, false);
	err = memtop_bpf__load(skel);
	if (err) {
		*perr = err;
		memtop_bpf__destroy(skel);
		return NULL;
	}
	return skel;
}

struct mt_bpf *bpf_loader_open(const struct mt_bpf_opts *opts, char *err, size_t errlen)
{
	struct mt_bpf *b = calloc(1, sizeof(*b));
	int e = 0;

	if (!b) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	b->ncpus = libbpf_num_possible_cpus();
	if (opts->session) {
		b->skel = open_and_load(opts, true, &e);
		b->session = b->skel != NULL;
	}
	if (!b->skel)
		b->skel = open_and_load(opts, false, &e);
	if (!b->skel || b->ncpus <= 0) {
		if (e == -EPERM || (e == -EACCES && geteuid() != 0))
			snprintf(err, errlen,
				 "cannot load BPF programs: permission denied (run as root, or with CAP_BPF and CAP_PERFMON)");
		else if (access("/sys/kernel/btf/vmlinux", R_OK) != 0)
			snprintf(err, errlen,
				 "cannot load BPF programs: kernel BTF (/sys/kernel/btf/vmlinux) is missing");
		else if (e == -EACCES)
			snprintf(err, errlen,
				 "the kernel's verifier rejected memtop's BPF programs (run with -vv for its log)");
		else
			snprintf(err, errlen,
				 "cannot load BPF programs: %s (run with -vv for details)",
				 strerror(-e));
		bpf_loader_close(b);
		errno = e ? -e : EINVAL;
		return NULL;
	}
	return b;
}

void bpf_loader_set_phase(struct mt_bpf *b, __u64 rate, double duty, bool allocs_on)
{
	struct mt_phase *ph = &b->skel->data->phase;
	__u32 ppm = (__u32)(duty * 1e6 + 0.5);

	if (ppm < 1)
		ppm = 1;
	if (ppm > 1000000)
		ppm = 1000000;
	if (ph->rate != rate || ph->duty_ppm != ppm) {
		/* rate and duty first: an entry that sees the new epoch must
		 * draw at the new rate */
		*(volatile __u64 *)&ph->rate = rate;
		*(volatile __u32 *)&ph->duty_ppm = ppm;
		__sync_synchronize();
		*(volatile __u32 *)&ph->epoch = ph->epoch + 1;
	}
	*(volatile __u32 *)&ph->allocs_on = allocs_on ? 1 : 0;
	__sync_synchronize();
}

void bpf_loader_set_count_only(struct mt_bpf *b, bool on)
{
	*(volatile __u32 *)&b->skel->data->phase.count_only = on ? 1 : 0;
	__sync_synchronize();
}

void bpf_loader_close(struct mt_bpf *b)
{
	if (!b)
		return;
	link_batch_begin(); /* released side by side: one grace period */
	link_release(b->mmap_link);
	link_release(b->exit_link);
	link_release(b->fork_link);
	link_release(b->exec_link);
	link_batch_end();
	memtop_bpf__destroy(b->skel);
	free(b);
}

bool bpf_loader_has_session(const struct mt_bpf *b)
{
	return b->session;
}

struct bpf_program *bpf_loader_prog_session(struct mt_bpf *b)
{
	return b->session ? b->skel->progs.mt_session : NULL;
}

struct bpf_program *bpf_loader_prog_entry(struct mt_bpf *b)
{
	return b->skel->progs.mt_entry;
}

struct bpf_program *bpf_loader_prog_return(struct mt_bpf *b)
{
	return b->skel->progs.mt_return;
}

struct bpf_program *bpf_loader_prog_usdt_alloc(struct mt_bpf *b)
{
	return b->skel->progs.mt_usdt_alloc;
}

struct bpf_program *bpf_loader_prog_usdt_free(struct mt_bpf *b)
{
	return b->skel->progs.mt_usdt_free;
}

int bpf_loader_add_target(struct mt_bpf *b, pid_t pid)
{
	struct mt_proc_counters *zero = calloc(b->ncpus, sizeof(*zero));
	__u32 key = pid;
	int e = 0;

	/* an entry in counters is what makes the programs act for pid */
	if (!zero)
		return -ENOMEM;
	if (bpf_map__update_elem(b->skel->maps.counters, &key, sizeof(key), zero,
				 sizeof(*zero) * b->ncpus, BPF_ANY))
		e = -errno;
	free(zero);
	return e;
}

/* Delete every live-map entry of pid. */
/* Delete pid's entries of a map keyed by struct mt_live_key. */
static void forget_keyed(int fd, pid_t pid)
{
	struct mt_live_key key, next, *prev = NULL;

	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		if (next.pid == (__u32)pid) {
			bpf_map_delete_elem(fd, &next);
			/* restart from the top: the deleted key can't be a cursor */
			prev = NULL;
			continue;
		}
		key = next;
		prev = &key;
	}
}

int bpf_loader_handover(struct mt_bpf *b, pid_t pid, __u64 lo, __u64 hi)
{
	struct mt_text_range r = { .lo = lo, .hi = hi };
	__u32 key = pid;
	int fd = bpf_map__fd(b->skel->maps.handover);

	if (!hi) {
		if (!bpf_map_delete_elem(fd, &key) && b->handovers)
			b->handovers--;
	} else if (bpf_map_update_elem(fd, &key, &r, BPF_NOEXIST)) {
		if (errno != EEXIST || bpf_map_update_elem(fd, &key, &r, BPF_EXIST))
			return -errno;
	} else {
		b->handovers++;
	}
	/* read by every probe hit: one aligned store */
	*(volatile __u32 *)&b->skel->bss->handovers = b->handovers;
	return 0;
}

int bpf_loader_set_exit_frees(struct mt_bpf *b, pid_t pid, __u64 lo, __u64 hi)
{
	struct mt_text_range r = { .lo = lo, .hi = hi };
	__u32 key = pid;

	if (hi <= lo) {
		bpf_map__delete_elem(b->skel->maps.exit_frees, &key, sizeof(key), 0);
		return 0;
	}
	if (bpf_map__update_elem(b->skel->maps.exit_frees, &key, sizeof(key), &r, sizeof(r), BPF_ANY))
		return -errno;
	return 0;
}

size_t bpf_loader_live_addrs(struct mt_bpf *b, pid_t pid, size_t skip, __u64 *out, size_t max)
{
	struct mt_live_key key, next, *prev = NULL;
	int fd = bpf_map__fd(b->skel->maps.live);
	/* a key deleted under the walk restarts it from the top: bounded */
	size_t n = 0, steps = 2 * (size_t)bpf_map__max_entries(b->skel->maps.live);

	while (n < max && steps-- && bpf_map_get_next_key(fd, prev, &next) == 0) {
		if (next.pid != (__u32)pid)
			; /* another process's */
		else if (skip)
			skip--;
		else
			out[n++] = next.addr;
		key = next;
		prev = &key;
	}
	return n;
}

void bpf_loader_remove_target(struct mt_bpf *b, pid_t pid)
{
	__u32 key = pid;

	bpf_loader_handover(b, pid, 0, 0);

	bpf_map__delete_elem(b->skel->maps.counters, &key, sizeof(key), 0);
	bpf_map__delete_elem(b->skel->maps.exit_frees, &key, sizeof(key), 0);
	bpf_map__delete_elem(b->skel->maps.pyprocs, &key, sizeof(key), 0);
	bpf_map__delete_elem(b->skel->maps.brk_state, &key, sizeof(key), 0);
	bpf_map__delete_elem(b->skel->maps.inject_final, &key, sizeof(key), 0);
	bpf_map__delete_elem(b->skel->maps.goprocs, &key, sizeof(key), 0);
	bpf_map__delete_elem(b->skel->maps.vk_types, &key, sizeof(key), 0);
	forget_keyed(bpf_map__fd(b->skel->maps.live), pid);
	forget_keyed(bpf_map__fd(b->skel->maps.dev_refs), pid);
}

/* *link: prog attached, once for the run (a program of the loader's own,
 * not per target). 0, or -1 with errno set. */
static int attach_once(struct bpf_link **link, struct bpf_program *prog)
{
	if (!*link)
		*link = bpf_program__attach(prog);
	return *link ? 0 : -1;
}

int bpf_loader_inject_final(struct mt_bpf *b, pid_t pid, __u64 slots)
{
	struct mt_inject_final f = { .slots = slots };
	__u32 key = pid;

	if (!slots) {
		bpf_map__delete_elem(b->skel->maps.inject_final, &key, sizeof(key), 0);
		return 0;
	}
	/* summed at its end; forgotten at an exec (no sampler in a new
	 * program: its slots' address is another mapping's, if any) */
	if (attach_once(&b->exit_link, b->skel->progs.mt_process_exit) ||
	    attach_once(&b->exec_link, b->skel->progs.mt_exec))
		return -errno;
	if (bpf_map__update_elem(b->skel->maps.inject_final, &key, sizeof(key), &f, sizeof(f),
				 BPF_ANY))
		return -errno;
	return 0;
}

int bpf_loader_read_inject_final(struct mt_bpf *b, pid_t pid, struct mt_inject_final *out)
{
	__u32 key = pid;

	if (bpf_map__lookup_elem(b->skel->maps.inject_final, &key, sizeof(key), out, sizeof(*out), 0))
		return -errno;
	return out->done ? 0 : -EAGAIN;
}

int bpf_loader_set_brk(struct mt_bpf *b, pid_t pid, __u64 brk)
{
	struct mt_brk_state state = { .top = brk };
	__u32 key = pid;

	if (bpf_map__update_elem(b->skel->maps.brk_state, &key, sizeof(key), &state, sizeof(state),
				 BPF_ANY))
		return -errno;
	return 0;
}

int bpf_loader_add_python(struct mt_bpf *b, pid_t pid, const struct mt_py_proc *py)
{
	__u32 key = pid;

	if (bpf_map__update_elem(b->skel->maps.pyprocs, &key, sizeof(key), py, sizeof(*py), BPF_ANY))
		return -errno;
	return 0;
}

int bpf_loader_set_go(struct mt_bpf *b, pid_t pid, const struct mt_go_proc *go)
{
	__u32 key = pid;

	if (bpf_map__update_elem(b->skel->maps.goprocs, &key, sizeof(key), go, sizeof(*go), BPF_ANY))
		return -errno;
	return 0;
}

struct bpf_program *bpf_loader_prog_device(struct mt_bpf *b, bool ret)
{
	return ret ? b->skel->progs.mt_dev_return : b->skel->progs.mt_dev_entry;
}

struct bpf_program *bpf_loader_prog_go(struct mt_bpf *b, enum mt_go_prog which)
{
	switch (which) {
	case MT_GO_PROG_MALLOC:
		return b->skel->progs.mt_go_malloc;
	default:
		return b->skel->progs.mt_go_free;
	}
}

/* The fork and exec programs, once. */
static int attach_proc_events(struct mt_bpf *b)
{
	if (attach_once(&b->fork_link, b->skel->progs.mt_fork) ||
	    attach_once(&b->exec_link, b->skel->progs.mt_exec))
		return -errno;
	return 0;
}

int bpf_loader_follow_cgroup(struct mt_bpf *b, int cgroup_fd)
{
	__u32 key = 0, fd = cgroup_fd;

	if (bpf_map__update_elem(b->skel->maps.watch_cgroup, &key, sizeof(key), &fd, sizeof(fd),
				 BPF_ANY))
		return -errno;
	return attach_proc_events(b);
}

int bpf_loader_follow_family(struct mt_bpf *b, pid_t pid)
{
	__u32 key = pid;
	__u8 seed = MT_FAMILY_SEED;

	if (bpf_map__update_elem(b->skel->maps.family, &key, sizeof(key), &seed, sizeof(seed),
				 BPF_ANY))
		return -errno;
	return attach_proc_events(b);
}

int bpf_loader_hold_newcomers(struct mt_bpf *b, __u32 what)
{
	bool on = what != 0;

	/* the hook is the mmap source's program, at every system call's end */
	if (on && attach_once(&b->mmap_link, b->skel->progs.mt_sys_exit))
		return -errno;
	*(volatile __u32 *)&b->skel->bss->hold_newcomers = what;
	__sync_synchronize();
	return 0;
}

__u64 bpf_loader_holds_over_budget(const struct mt_bpf *b)
{
	return *(volatile __u64 *)&b->skel->bss->holds_over_budget;
}

int bpf_loader_held_fd(const struct mt_bpf *b)
{
	return bpf_map__fd(b->skel->maps.held);
}

int bpf_loader_follow_mmap(struct mt_bpf *b)
{
	return attach_once(&b->mmap_link, b->skel->progs.mt_sys_exit) ? -errno : 0;
}

int bpf_loader_read_counters(struct mt_bpf *b, pid_t pid, struct mt_proc_counters *out)
{
	struct mt_proc_counters *per = calloc(b->ncpus, sizeof(*per));
	__u32 key = pid;
	int i;

	if (!per)
		return -ENOMEM;
	if (bpf_map__lookup_elem(b->skel->maps.counters, &key, sizeof(key), per,
				 sizeof(*per) * b->ncpus, 0)) {
		free(per);
		return -ENOENT;
	}
	memset(out, 0, sizeof(*out));
	for (i = 0; i < b->ncpus; i++) {
		out->alloc_calls += per[i].alloc_calls;
		out->free_calls += per[i].free_calls;
		out->alloc_bytes += per[i].alloc_bytes;
		out->probe_hits += per[i].probe_hits;
		out->samples += per[i].samples;
		out->phased_calls += per[i].phased_calls;
		out->sample_ns += per[i].sample_ns;
	}
	free(per);
	return 0;
}

void bpf_loader_read_drops(struct mt_bpf *b, __u64 out[MT_DROP_COUNT])
{
	__u64 per[b->ncpus];
	__u32 k;
	int i;

	for (k = 0; k < MT_DROP_COUNT; k++) {
		out[k] = 0;
		if (bpf_map__lookup_elem(b->skel->maps.drops, &k, sizeof(k), per, sizeof(per), 0))
			continue;
		for (i = 0; i < b->ncpus; i++)
			out[k] += per[i];
	}
}

struct ring_buffer *bpf_loader_ring(struct mt_bpf *b, int (*cb)(void *ctx, void *data, size_t size),
				    void *ctx)
{
	return ring_buffer__new(bpf_map__fd(b->skel->maps.events), cb, ctx, NULL);
}

int bpf_loader_ring_fd(struct ring_buffer *r)
{
	return ring_buffer__epoll_fd(r);
}

int bpf_loader_ring_drain(struct ring_buffer *r)
{
	return ring_buffer__consume(r);
}

void bpf_loader_ring_free(struct ring_buffer *r)
{
	ring_buffer__free(r);
}

static int libbpf_verbosity;

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (!libbpf_verbosity || (level == LIBBPF_DEBUG && libbpf_verbosity < 2))
		return 0;
	return vfprintf(stderr, fmt, ap);
}

void bpf_loader_set_verbosity(int verbose)
{
	libbpf_verbosity = verbose;
	libbpf_set_print(libbpf_print);
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * attach.c - turns the probe table into links for one process.
 *
 * The table lists glibc's allocation entry points with their attach
 * cookie (enum mt_alloc_fn) and whether a return value is needed. Symbols
 * are resolved to file offsets in the target's library; functions that are
 * aliases of one another (aligned_alloc and memalign in glibc 2.36) are
 * probed once. In session mode all probes go into one uprobe_multi link
 * created with a raw bpf(BPF_LINK_CREATE) (libbpf 1.1 cannot); otherwise
 * each function gets an entry uprobe, plus a uretprobe when it returns an
 * address.
 */
#include "probe/attach.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "memtop/abi.h"
#include "stacks/elf_file.h"
#include "probe/probe_place.h"
#include "stacks/proc_maps.h"

#define MT_BPF_TRACE_UPROBE_SESSION 57

struct probe_spec {
	const char *symbol;
	__u32 fn;	  /* enum mt_alloc_fn: the attach cookie */
	__u8 nargs;	  /* argument registers the entry program reads */
	bool need_return; /* returns the address of a sampled allocation */
	bool required;	  /* attach fails without it */
};

/*
 * reallocarray is absent on purpose: glibc's tail-calls realloc through
 * the PLT, so realloc's probe sees every call and a probe of its own would
 * count each one twice (tests/workloads/mt_apis.c checks the counts).
 */
static const struct probe_spec probe_table[] = {
	{ "malloc", MT_FN_MALLOC, 1, true, true },
	{ "calloc", MT_FN_CALLOC, 2, true, true },
	{ "realloc", MT_FN_REALLOC, 2, true, true },
	{ "posix_memalign", MT_FN_POSIX_MEMALIGN, 3, true, false },
	{ "aligned_alloc", MT_FN_ALIGNED_ALLOC, 2, true, false },
	{ "memalign", MT_FN_MEMALIGN, 2, true, false },
	{ "valloc", MT_FN_VALLOC, 1, true, false },
	{ "pvalloc", MT_FN_PVALLOC, 1, true, false },
	{ "free", MT_FN_FREE, 1, false, true },
};
#define NPROBES (sizeof(probe_table) / sizeof(probe_table[0]))

/* One resolved probe: where it goes in the file. */
struct probe_loc {
	const struct probe_spec *spec;
	unsigned long offset; /* file offset of the probed instruction */
	__u32 delta;	      /* bytes from the function entry */
	bool slow;	      /* single-stepped by the kernel */
};

/* Probes are attached in two groups: allocation functions, which the
 * overhead budget may switch off for a while, and free() and realloc(),
 * which stay on so that in-use accounting never misses the free of a
 * sampled block (realloc frees its old block; while the other allocation
 * probes are off it samples nothing: struct mt_phase). */
enum probe_group { GROUP_ALLOC = 0, GROUP_FREE, NGROUPS };

struct link_group {
	struct bpf_link *links[2 * NPROBES];
	int nlinks;
	int session_fd; /* a uprobe_multi session link, or -1 */
	bool on;
};

struct mt_probe_set {
	struct mt_bpf *b;
	pid_t pid;
	char path[PATH_MAX];
	enum mt_attach_mode mode;
	struct probe_loc locs[NPROBES];
	int n;
	struct link_group g[NGROUPS];
};

static int group_of(const struct probe_loc *l)
{
	return l->spec->fn == MT_FN_FREE || l->spec->fn == MT_FN_REALLOC ? GROUP_FREE : GROUP_ALLOC;
}

const char *attach_mode_name(enum mt_attach_mode mode)
{
	switch (mode) {
	case MT_ATTACH_SESSION:
		return "session";
	case MT_ATTACH_USDT:
		return "usdt";
	default:
		return "uretprobe";
	}
}

/* Bytes of a function given to the placement decoder: all of it, so that
 * jumps back towards the entry are seen, up to this. */
#define PLACE_CODE_MAX 4096

/* Choose the instruction to probe in one function (probe_place.h). */
static int place_probe(struct elf_file *ef, const struct probe_spec *spec, __u64 sym_off,
		       __u64 size, struct probe_loc *loc)
{
	static __u8 code[PLACE_CODE_MAX];
	size_t len = size < sizeof(code) ? size : sizeof(code);
	struct probe_place pp;

	loc->spec = spec;
	loc->offset = sym_off;
	loc->delta = 0;
	loc->slow = true;
	if (len == 0 || elf_file_read(ef, sym_off, code, len))
		return 0; /* unreadable: entry, reported slow */
	if (probe_place_choose_nargs(code, len, size, spec->need_return, spec->nargs, &pp))
		return 0;
	loc->offset = sym_off + pp.offset;
	loc->delta = pp.offset;
	loc->slow = !pp.emulated;
	return 0;
}

/* Resolve the table in lib_path. Returns the number of probes, or -errno. */
static int resolve_probes(const char *lib_path, struct probe_loc *locs, char *err, size_t errlen)
{
	struct elf_file *ef = elf_file_open(lib_path);
	int n = 0;
	size_t i;

	if (!ef) {
		snprintf(err, errlen, "cannot read %s: %s", lib_path, strerror(errno));
		return -errno;
	}
	for (i = 0; i < NPROBES; i++) {
		const struct probe_spec *spec = &probe_table[i];
		__u64 off, size;
		bool alias = false;
		int j;

		if (elf_file_func_offset(ef, spec->symbol, &off, &size)) {
			if (!spec->required)
				continue;
			snprintf(err, errlen, "%s has no %s(): not a glibc allocator", lib_path,
				 spec->symbol);
			elf_file_close(ef);
			return -ENOENT;
		}
		for (j = 0; j < n; j++)
			alias |= locs[j].offset - locs[j].delta == off;
		if (alias)
			continue;
		place_probe(ef, spec, off, size, &locs[n++]);
	}
	elf_file_close(ef);
	return n;
}

/*
 * BPF_LINK_CREATE for a uprobe_multi session. The installed uapi headers
 * predate uprobe_multi, so its fields are written at their documented
 * offsets inside link_create (KERNEL-FACTS.md section 1).
 */
static int create_session_link(int prog_fd, pid_t pid, const char *path, const unsigned long *offsets,
			       const __u64 *cookies, __u32 cnt)
{
	union bpf_attr attr;
	char *lc = (char *)&attr.link_create;
	__u64 ptr;
	__u32 u32;

	memset(&attr, 0, sizeof(attr));
	attr.link_create.prog_fd = prog_fd;
	attr.link_create.attach_type = MT_BPF_TRACE_UPROBE_SESSION;
	ptr = (unsigned long)path;
	memcpy(lc + 16, &ptr, 8);
	ptr = (unsigned long)offsets;
	memcpy(lc + 24, &ptr, 8);
	ptr = (unsigned long)cookies;
	memcpy(lc + 40, &ptr, 8);
	memcpy(lc + 48, &cnt, 4);
	u32 = pid;
	memcpy(lc + 56, &u32, 4);
	return syscall(__NR_bpf, BPF_LINK_CREATE, &attr, sizeof(attr));
}

static int attach_one(struct link_group *g, struct bpf_program *prog, pid_t pid, const char *path,
		      unsigned long offset, __u32 fn, bool retprobe)
{
	LIBBPF_OPTS(bpf_uprobe_opts, opts, .bpf_cookie = fn, .retprobe = retprobe);
	struct bpf_link *link = bpf_program__attach_uprobe_opts(prog, pid, path, offset, &opts);

	if (!link)
		return -errno;
	g->links[g->nlinks++] = link;
	return 0;
}

static int group_attach_session(struct mt_probe_set *ps, struct link_group *g, int group)
{
	unsigned long offsets[NPROBES];
	__u64 cookies[NPROBES];
	int i, n = 0, fd;

	for (i = 0; i < ps->n; i++) {
		if (group_of(&ps->locs[i]) != group)
			continue;
		offsets[n] = ps->locs[i].offset;
		cookies[n++] = ps->locs[i].spec->fn;
	}
	if (!n)
		return 0;
	fd = create_session_link(bpf_program__fd(bpf_loader_prog_session(ps->b)), ps->pid, ps->path,
				 offsets, cookies, n);
	if (fd < 0)
		return -errno;
	g->session_fd = fd;
	return 0;
}

static int group_attach_uretprobes(struct mt_probe_set *ps, struct link_group *g, int group,
				   const char **failed)
{
	int i, err;

	for (i = 0; i < ps->n; i++) {
		const struct probe_loc *l = &ps->locs[i];

		if (group_of(l) != group)
			continue;
		*failed = l->spec->symbol;
		err = attach_one(g, bpf_loader_prog_entry(ps->b), ps->pid, ps->path, l->offset,
				 l->spec->fn, false);
		if (!err && l->spec->need_return)
			/* a return probe must sit on the entry, where [rsp]
			 * is the return address */
			err = attach_one(g, bpf_loader_prog_return(ps->b), ps->pid, ps->path,
					 l->offset - l->delta, l->spec->fn, true);
		if (err && (l->spec->required || err == -ESRCH))
			return err;
	}
	return 0;
}

/* The USDT contract: alloc in the allocation group, free in the other. */
static int group_attach_usdt(struct mt_probe_set *ps, struct link_group *g, int group)
{
	struct bpf_program *prog = group == GROUP_FREE ? bpf_loader_prog_usdt_free(ps->b)
						       : bpf_loader_prog_usdt_alloc(ps->b);
	struct bpf_link *link = bpf_program__attach_usdt(prog, ps->pid, ps->path, "otel_memory",
							 group == GROUP_FREE ? "free" : "alloc",
							 NULL);

	if (!link)
		return -errno;
	g->links[g->nlinks++] = link;
	return 0;
}

static void group_detach(struct link_group *g)
{
	int i;

	for (i = 0; i < g->nlinks; i++)
		bpf_link__destroy(g->links[i]);
	g->nlinks = 0;
	if (g->session_fd >= 0)
		close(g->session_fd);
	g->session_fd = -1;
	g->on = false;
}

static int group_attach(struct mt_probe_set *ps, int group, const char **failed)
{
	struct link_group *g = &ps->g[group];
	int e;

	if (g->on)
		return 0;
	if (ps->mode == MT_ATTACH_SESSION)
		e = group_attach_session(ps, g, group);
	else if (ps->mode == MT_ATTACH_USDT)
		e = group_attach_usdt(ps, g, group);
	else
		e = group_attach_uretprobes(ps, g, group, failed);
	if (e)
		group_detach(g);
	else
		g->on = true;
	return e;
}

/* Both groups in one mode. 0 or -errno, nothing left attached then. */
static int attach_mode(struct mt_probe_set *ps, enum mt_attach_mode mode, const char **failed)
{
	int group, e = 0;

	ps->mode = mode;
	for (group = 0; group < NGROUPS && !e; group++)
		e = group_attach(ps, group, failed);
	if (e)
		for (group = 0; group < NGROUPS; group++)
			group_detach(&ps->g[group]);
	return e;
}

int attach_set_allocs(struct mt_probe_set *ps, bool on)
{
	const char *failed;

	if (!on) {
		group_detach(&ps->g[GROUP_ALLOC]);
		return 0;
	}
	return group_attach(ps, GROUP_ALLOC, &failed);
}

static void describe(const struct probe_loc *locs, int n, struct attach_info *info)
{
	size_t len = 0;
	int i;

	info->nprobes = n;
	info->nslow = 0;
	info->detail[0] = '\0';
	for (i = 0; i < n && len < sizeof(info->detail); i++) {
		char where[16];

		info->nslow += locs[i].slow;
		if (locs[i].delta)
			snprintf(where, sizeof(where), "+%u", locs[i].delta);
		else
			snprintf(where, sizeof(where), "entry");
		len += snprintf(info->detail + len, sizeof(info->detail) - len, "%s%s@%s%s",
				i ? " " : "", locs[i].spec->symbol, where, locs[i].slow ? "(slow)" : "");
	}
}

static struct mt_probe_set *probe_set_new(struct mt_bpf *b, pid_t pid, const char *path)
{
	struct mt_probe_set *ps = calloc(1, sizeof(*ps));
	int group;

	if (!ps)
		return NULL;
	ps->b = b;
	ps->pid = pid;
	snprintf(ps->path, sizeof(ps->path), "%s", path);
	for (group = 0; group < NGROUPS; group++)
		ps->g[group].session_fd = -1;
	return ps;
}

struct mt_probe_set *attach_target(struct mt_bpf *b, pid_t pid, const char *lib_path,
				   bool want_session, struct attach_info *info, char *err,
				   size_t errlen)
{
	struct mt_probe_set *ps = probe_set_new(b, pid, lib_path);
	const char *failed = "?";
	int e = -ENOSYS;

	if (!ps) {
		snprintf(err, errlen, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	ps->n = resolve_probes(lib_path, ps->locs, err, errlen);
	if (ps->n < 0) {
		e = ps->n;
		free(ps);
		errno = -e;
		return NULL;
	}
	describe(ps->locs, ps->n, info);
	if (want_session && bpf_loader_prog_session(b)) {
		e = attach_mode(ps, MT_ATTACH_SESSION, &failed);
		if (e == -ESRCH)
			goto fail;
	}
	if (e)
		e = attach_mode(ps, MT_ATTACH_URETPROBE, &failed);
	if (!e) {
		info->mode = ps->mode;
		return ps;
	}
fail:
	if (e == -ESRCH)
		snprintf(err, errlen, "process %d exited while attaching", pid);
	else if (e == -EINVAL)
		snprintf(err, errlen,
			 "cannot probe %s in %s: %s (another tool, e.g. bcc's memleak, may hold a conflicting uprobe there; see dmesg)",
			 failed, lib_path, strerror(-e));
	else
		snprintf(err, errlen, "cannot probe %s in %s: %s", failed, lib_path, strerror(-e));
	attach_detach(ps);
	errno = -e;
	return NULL;
}

struct mt_probe_set *attach_usdt(struct mt_bpf *b, pid_t pid, const char *sampler_path,
				 struct attach_info *info, char *err, size_t errlen)
{
	struct mt_probe_set *ps = probe_set_new(b, pid, sampler_path);
	const char *failed = "otel_memory";
	int e;

	if (!ps) {
		snprintf(err, errlen, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	e = attach_mode(ps, MT_ATTACH_USDT, &failed);
	if (e) {
		if (e == -ESRCH)
			snprintf(err, errlen, "process %d exited while attaching", pid);
		else
			snprintf(err, errlen, "cannot attach to the otel_memory probes of %s: %s",
				 sampler_path, strerror(-e));
		attach_detach(ps);
		errno = -e;
		return NULL;
	}
	info->mode = MT_ATTACH_USDT;
	info->nprobes = 2;
	info->nslow = 0;
	snprintf(info->detail, sizeof(info->detail), "otel_memory:alloc otel_memory:free in %s",
		 sampler_path);
	return ps;
}

struct mt_probe_set *attach_self(struct mt_bpf *b, const void *addr, __u32 fn)
{
	struct mt_maps maps;
	const struct mt_map *map;
	struct mt_probe_set *ps;
	int e = proc_maps_read(getpid(), &maps);

	if (e) {
		errno = -e;
		return NULL;
	}
	map = proc_maps_find(&maps, (unsigned long)addr);
	ps = map && map->path ? probe_set_new(b, getpid(), "/proc/self/exe") : NULL;
	if (!ps) {
		proc_maps_free(&maps);
		errno = map ? ENOMEM : ENOENT;
		return NULL;
	}
	ps->mode = MT_ATTACH_URETPROBE;
	e = attach_one(&ps->g[GROUP_ALLOC], bpf_loader_prog_entry(b), getpid(), ps->path,
		       (unsigned long)addr - map->start + map->offset, fn, false);
	proc_maps_free(&maps);
	if (e) {
		free(ps);
		errno = -e;
		return NULL;
	}
	return ps;
}

void attach_detach(struct mt_probe_set *ps)
{
	int group;

	if (!ps)
		return;
	for (group = 0; group < NGROUPS; group++)
		group_detach(&ps->g[group]);
	free(ps);
}

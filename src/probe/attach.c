// SPDX-License-Identifier: GPL-2.0-only
/*
 * attach.c - turns an allocator's probe table (allocators.h) into links
 * for one process.
 *
 * Symbols are resolved to file offsets in the target's allocator library;
 * functions that are aliases of one another (aligned_alloc and memalign in
 * glibc 2.36, malloc and tc_malloc) are probed once, and a function whose
 * first instruction is a jump to another probed function or into the PLT
 * (jemalloc's _Znam, its unsized operator delete) is not probed at all:
 * the call counts where it lands. The attach cookie carries the entry's
 * enum mt_alloc_fn and the allocator's counting flags. In session mode all probes go into one uprobe_multi link
 * created with a raw bpf(BPF_LINK_CREATE) (libbpf 1.1 cannot); otherwise
 * each function gets an entry uprobe, plus a uretprobe when it returns an
 * address.
 */
#include "probe/attach.h"
#include "probe/link_release.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <gelf.h>
#include <sys/syscall.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "memtop/abi.h"
#include "probe/allocators.h"
#include "probe/exit_frees.h"
#include "readers/elf_file.h"
#include "probe/probe_place.h"
#include "readers/proc_maps.h"

#define MT_BPF_TRACE_UPROBE_SESSION 57

/* Most probes one allocator's table may ask for. */
#define NPROBES 32

/* One resolved probe: where it goes in the file. */
struct probe_loc {
	const struct alloc_entry *spec;
	char symbol[64];      /* as resolved, with the allocator's prefix */
	unsigned long offset; /* file offset of the probed instruction */
	__u32 delta;          /* bytes from the function entry */
	bool slow;            /* single-stepped by the kernel */
	bool entry_state;     /* [rsp] is the return address there */
	__s32 ra_off;         /* the return address is at [rsp + ra_off] there; -1: unknown */
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
	__u32 flags; /* enum mt_probe_flags, in every cookie */
	struct probe_loc locs[NPROBES];
	int n;
	struct link_group g[NGROUPS];
	struct mt_probe_set *next;        /* another allocator of the process (attach_chain) */
	struct exit_frees_loc exit_frees; /* where its allocator frees at a thread's exit */
	int exit_frees_tries; /* refreshes left to find them mapped (attach_exit_frees) */
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
	case MT_ATTACH_GO:
		return "go";
	default:
		return "uretprobe";
	}
}

/* Bytes of a function given to the placement decoder: all of it, so that
 * jumps back towards the entry are seen, up to this. */
#define PLACE_CODE_MAX 4096

/* Choose the instruction to probe in one function (probe_place.h). */
static int place_probe(struct elf_file *ef, const struct alloc_entry *spec, __u64 sym_off,
		       __u64 size, struct probe_loc *loc)
{
	static __u8 code[PLACE_CODE_MAX];
	size_t len = size < sizeof(code) ? size : sizeof(code);
	struct probe_place pp;

	loc->spec = spec;
	loc->offset = sym_off;
	loc->delta = 0;
	loc->slow = true;
	loc->entry_state = true;
	loc->ra_off = 0;
	if (len == 0 || elf_file_read(ef, sym_off, code, len))
		return 0; /* unreadable: entry, reported slow */
	if (probe_place_choose_nargs(code, len, size, spec->need_return, spec->nargs, &pp))
		return 0;
	loc->offset = sym_off + pp.offset;
	loc->delta = pp.offset;
	loc->slow = !pp.emulated;
	loc->entry_state = pp.entry_state;
	loc->ra_off = pp.ra_off;
	return 0;
}

/* Whether file offset off lies in a PLT section of ef. */
static bool in_plt(struct elf_file *ef, __u64 off)
{
	const char *name = elf_file_section_at(ef, off);

	return name && !strncmp(name, ".plt", 4);
}

/*
 * A function whose first instruction (after endbr64) is an unconditional
 * jump to the entry of another function of the table (offs, n) or into
 * the PLT only forwards the call: probing it would count the call twice.
 */
static bool is_forwarder(struct elf_file *ef, __u64 sym_off, __u64 size, const __u64 *offs, int n)
{
	static const __u8 endbr64[4] = { 0xf3, 0x0f, 0x1e, 0xfa };
	__u8 code[4 + PROBE_INSN_MAX];
	struct probe_insn in;
	__u64 at = 0, target;
	size_t len = size < sizeof(code) ? size : sizeof(code);
	int i;

	if (len < 2 || elf_file_read(ef, sym_off, code, len))
		return false;
	if (len >= 4 && !memcmp(code, endbr64, 4))
		at = 4;
	if (probe_insn_decode(code + at, len - at, &in) || in.map != 0 ||
	    (in.op != 0xe9 && in.op != 0xeb))
		return false;
	target = sym_off + at + in.len + in.imm;
	for (i = 0; i < n; i++)
		if (offs[i] == target)
			return true;
	return in_plt(ef, target);
}

/* is_forwarder() of entry i against the other entries found. */
static bool forwards(struct elf_file *ef, size_t i, const __u64 *entry, const __u64 *esize,
		     const bool *have, size_t n)
{
	__u64 others[NPROBES];
	int no = 0;
	size_t k;

	for (k = 0; k < n && k < NPROBES; k++)
		if (have[k] && entry[k] != entry[i])
			others[no++] = entry[k];
	return is_forwarder(ef, entry[i], esize[i], others, no);
}

/* The symbol of an entry: C names get the allocator's prefix (je_). */
static void entry_symbol(const struct alloc_entry *spec, const char *prefix, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s", strncmp(spec->symbol, "_Z", 2) ? prefix : "", spec->symbol);
}

/* Resolve alloc's table in lib_path. Returns the number of probes, or
 * -errno. *flags gets the allocator's flags, without MT_PF_FREE_DEDUPE
 * when a free-family probe could not be put in entry state. */
static int resolve_probes(const char *lib_path, const struct allocator *alloc, const char *prefix,
			  struct probe_loc *locs, __u32 *flags, char *err, size_t errlen)
{
	struct elf_file *ef = elf_file_open(lib_path);
	__u64 entry[NPROBES], esize[NPROBES];
	bool have[NPROBES] = { false };
	int n = 0, j;
	size_t i;

	if (!ef) {
		snprintf(err, errlen, "cannot read %s: %s", lib_path, strerror(errno));
		return -errno;
	}
	*flags = alloc->flags;
	for (i = 0; i < alloc->nentries && i < NPROBES; i++) {
		char sym[64];

		entry_symbol(&alloc->entries[i], prefix, sym, sizeof(sym));
		if (!elf_file_func_offset(ef, sym, &entry[i], &esize[i])) {
			have[i] = true;
			continue;
		}
		if (alloc->entries[i].required) {
			snprintf(err, errlen, "%s has no %s(): not the %s allocator memtop expects",
				 lib_path, sym, alloc->name);
			elf_file_close(ef);
			return -ENOENT;
		}
	}
	for (i = 0; i < alloc->nentries && i < NPROBES; i++) {
		const struct alloc_entry *spec = &alloc->entries[i];
		bool alias = false;

		if (!have[i])
			continue;
		for (j = 0; j < n; j++)
			alias |= locs[j].offset - locs[j].delta == entry[i];
		if (alias || forwards(ef, i, entry, esize, have, alloc->nentries))
			continue;
		place_probe(ef, spec, entry[i], esize[i], &locs[n]);
		entry_symbol(spec, prefix, locs[n].symbol, sizeof(locs[n].symbol));
		if (spec->fn == MT_FN_FREE && !locs[n].entry_state)
			*flags &= ~(__u32)MT_PF_FREE_DEDUPE;
		n++;
	}
	elf_file_close(ef);
	return n;
}

/*
 * BPF_LINK_CREATE for a uprobe_multi session. The installed uapi headers
 * predate uprobe_multi, so its fields are written at their documented
 * offsets inside link_create (union bpf_attr in the kernel's
 * include/uapi/linux/bpf.h: path at 16, offsets 24, ref_ctr_offsets 32,
 * cookies 40, cnt 48, flags 52, pid 56).
 */
static int create_session_link(int prog_fd, pid_t pid, const char *path,
			       const unsigned long *offsets, const __u64 *cookies, __u32 cnt)
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

/* The attach cookie of a probe: its function and the flags (an entry's
 * own MT_PF_FREE_FORWARDS only while the allocator dedupes). */
static __u64 cookie_of(const struct mt_probe_set *ps, const struct probe_loc *l)
{
	__u32 flags = ps->flags;

	if (flags & MT_PF_FREE_DEDUPE)
		flags |= l->spec->flags;
	return MT_COOKIE(l->spec->fn, flags) | MT_COOKIE_RA(l->ra_off);
}

static int attach_one(struct link_group *g, struct bpf_program *prog, pid_t pid, const char *path,
		      unsigned long offset, __u64 cookie, bool retprobe)
{
	LIBBPF_OPTS(bpf_uprobe_opts, opts, .bpf_cookie = cookie, .retprobe = retprobe);
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
		cookies[n++] = cookie_of(ps, &ps->locs[i]);
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
		*failed = l->symbol;
		err = attach_one(g, bpf_loader_prog_entry(ps->b), ps->pid, ps->path, l->offset,
				 cookie_of(ps, l), false);
		if (!err && l->spec->need_return)
			/* a return probe must sit on the entry, where [rsp]
			 * is the return address */
			err = attach_one(g, bpf_loader_prog_return(ps->b), ps->pid, ps->path,
					 l->offset - l->delta, cookie_of(ps, l), true);
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
	struct bpf_link *link =
		bpf_program__attach_usdt(prog, ps->pid, ps->path, "otel_memory",
					 group == GROUP_FREE ? "free" : "alloc", NULL);

	if (!link)
		return -errno;
	g->links[g->nlinks++] = link;
	return 0;
}

static void group_detach(struct link_group *g)
{
	int i;

	for (i = 0; i < g->nlinks; i++)
		link_release(g->links[i]);
	g->nlinks = 0;
	link_release_fd(g->session_fd);
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

static int set_group(struct mt_probe_set *ps, int group, bool on)
{
	const char *failed;
	int e = 0;

	/* in uretprobe mode a group is a dozen links: released one after
	 * another, each waits its own grace period (a switch of the
	 * allocation probes took 0.3-1 s, the start-up's 6.7-7.5 s against
	 * 2.9-3.2 s in session mode at a load of 16): side by side, one */
	if (!on)
		link_batch_begin();
	for (; ps && !e; ps = ps->next) {
		if (!on)
			group_detach(&ps->g[group]);
		else
			e = group_attach(ps, group, &failed);
	}
	if (!on)
		link_batch_end();
	return e;
}

int attach_set_allocs(struct mt_probe_set *ps, bool on)
{
	return set_group(ps, GROUP_ALLOC, on);
}

int attach_set_frees(struct mt_probe_set *ps, bool on)
{
	return set_group(ps, GROUP_FREE, on);
}

void attach_chain(struct mt_probe_set *ps, struct mt_probe_set *next)
{
	while (ps->next)
		ps = ps->next;
	ps->next = next;
}

void attach_info_merge(struct attach_info *info, const struct attach_info *more, const char *prefix)
{
	size_t len = strlen(info->allocator);

	info->nprobes += more->nprobes;
	info->nslow += more->nslow;
	snprintf(info->allocator + len, sizeof(info->allocator) - len, "+%s", more->allocator);
	len = strlen(info->detail);
	snprintf(info->detail + len, sizeof(info->detail) - len, "; %s%s%s: %s", more->allocator,
		 *prefix ? " " : "", prefix, more->detail);
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
				i ? " " : "", locs[i].symbol, where, locs[i].slow ? "(slow)" : "");
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

/* Refreshes a command attached before its exec looks for its thread-exit
 * frees (memtop lets it exec at once, and its libc is mapped within
 * milliseconds of the exec). */
#define EXIT_FREES_TRIES 20

/* Not yet: the process's program is not there, or has not mapped its
 * libc yet (exit_frees.h). */
static bool exit_frees_later(int e)
{
	return e == -EAGAIN || e == -ESRCH;
}

/* Give the BPF side where ps's allocator frees at a thread's exit, as
 * the process maps it (exit_frees.h): 0 when set; exit_frees_later() when
 * not yet; else the error, and any older range of the process dropped. */
static int set_exit_frees(struct mt_probe_set *ps)
{
	__u64 lo, hi;
	int e = exit_frees_mapped(ps->pid, &ps->exit_frees, &lo, &hi);

	if (!e)
		e = bpf_loader_set_exit_frees(ps->b, ps->pid, lo, hi);
	if (e && !exit_frees_later(e))
		bpf_loader_set_exit_frees(ps->b, ps->pid, 0, 0);
	return e;
}

/* Let ps's free probes leave out the allocator's thread-exit frees, where
 * one of them knows its return address. For a command held before its
 * exec the range comes later (attach_exit_frees); the probes look it up
 * from the start. */
static void mark_exit_frees(struct mt_probe_set *ps, const struct allocator *alloc)
{
	bool ra_known = false, later;
	int e;

	if (!alloc->exit_frees)
		return;
	for (int i = 0; i < ps->n; i++)
		ra_known |= ps->locs[i].spec->fn == MT_FN_FREE && MT_COOKIE_RA(ps->locs[i].ra_off);
	if (!ra_known || exit_frees_locate(ps->pid, ps->path, alloc->exit_frees, &ps->exit_frees)) {
		bpf_loader_set_exit_frees(ps->b, ps->pid, 0, 0);
		return;
	}
	e = set_exit_frees(ps);
	later = exit_frees_later(e);
	if (!e || later)
		ps->flags |= MT_PF_FREE_EXIT_RANGE;
	ps->exit_frees_tries = later ? EXIT_FREES_TRIES : 0;
}

void attach_exit_frees(struct mt_probe_set *ps)
{
	for (; ps; ps = ps->next) {
		int e;

		if (!ps->exit_frees_tries)
			continue;
		e = set_exit_frees(ps);
		ps->exit_frees_tries = exit_frees_later(e) ? ps->exit_frees_tries - 1 : 0;
	}
}

struct mt_probe_set *attach_target(struct mt_bpf *b, pid_t pid, const char *lib_path,
				   const struct allocator *alloc, const char *prefix,
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
	ps->n = resolve_probes(lib_path, alloc, prefix, ps->locs, &ps->flags, err, errlen);
	if (ps->n < 0) {
		e = ps->n;
		free(ps);
		errno = -e;
		return NULL;
	}
	describe(ps->locs, ps->n, info);
	snprintf(info->allocator, sizeof(info->allocator), "%s", alloc->name);
	mark_exit_frees(ps, alloc);
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
	snprintf(info->allocator, sizeof(info->allocator), "usdt");
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
	while (ps) {
		struct mt_probe_set *next = ps->next;
		int group;

		for (group = 0; group < NGROUPS; group++)
			group_detach(&ps->g[group]);
		free(ps);
		ps = next;
	}
}

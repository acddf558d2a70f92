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
#include "memtop/attach.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "memtop/abi.h"
#include "memtop/elf_file.h"
#include "memtop/probe_place.h"

#define MT_BPF_TRACE_UPROBE_SESSION 57

struct probe_spec {
	const char *symbol;
	__u32 fn;	  /* enum mt_alloc_fn: the attach cookie */
	bool need_return; /* returns the address of a sampled allocation */
	bool required;	  /* attach fails without it */
};

/*
 * reallocarray is absent on purpose: glibc's tail-calls realloc through
 * the PLT, so realloc's probe sees every call and a probe of its own would
 * count each one twice (tests/workloads/mt_apis.c checks the counts).
 */
static const struct probe_spec probe_table[] = {
	{ "malloc", MT_FN_MALLOC, true, true },
	{ "calloc", MT_FN_CALLOC, true, true },
	{ "realloc", MT_FN_REALLOC, true, true },
	{ "posix_memalign", MT_FN_POSIX_MEMALIGN, true, false },
	{ "aligned_alloc", MT_FN_ALIGNED_ALLOC, true, false },
	{ "memalign", MT_FN_MEMALIGN, true, false },
	{ "valloc", MT_FN_VALLOC, true, false },
	{ "pvalloc", MT_FN_PVALLOC, true, false },
	{ "free", MT_FN_FREE, false, true },
};
#define NPROBES (sizeof(probe_table) / sizeof(probe_table[0]))

/* One resolved probe: where it goes in the file. */
struct probe_loc {
	const struct probe_spec *spec;
	unsigned long offset; /* file offset of the probed instruction */
	__u32 delta;	      /* bytes from the function entry */
	bool slow;	      /* single-stepped by the kernel */
};

struct mt_probe_set {
	struct bpf_link *links[2 * NPROBES];
	int nlinks;
	int session_fd; /* the uprobe_multi link, or -1 */
};

const char *attach_mode_name(enum mt_attach_mode mode)
{
	return mode == MT_ATTACH_SESSION ? "session" : "uretprobe";
}

/* Choose the instruction to probe in one function (probe_place.h). */
static int place_probe(struct elf_file *ef, const struct probe_spec *spec, __u64 sym_off,
		       __u64 size, struct probe_loc *loc)
{
	__u8 code[64];
	size_t len = size < sizeof(code) ? size : sizeof(code);
	struct probe_place pp;

	loc->spec = spec;
	loc->offset = sym_off;
	loc->delta = 0;
	loc->slow = true;
	if (len == 0 || elf_file_read(ef, sym_off, code, len))
		return 0; /* unreadable: entry, reported slow */
	if (probe_place_choose(code, len, size, spec->need_return, true, &pp))
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

static int attach_session(struct mt_bpf *b, struct mt_probe_set *ps, pid_t pid, const char *path,
			  const struct probe_loc *locs, int n)
{
	unsigned long offsets[NPROBES];
	__u64 cookies[NPROBES];
	int i, fd;

	for (i = 0; i < n; i++) {
		offsets[i] = locs[i].offset;
		cookies[i] = locs[i].spec->fn;
	}
	fd = create_session_link(bpf_program__fd(bpf_loader_prog_session(b)), pid, path, offsets,
				 cookies, n);
	if (fd < 0)
		return -errno;
	ps->session_fd = fd;
	return 0;
}

static int attach_one(struct mt_probe_set *ps, struct bpf_program *prog, pid_t pid, const char *path,
		      unsigned long offset, __u32 fn, bool retprobe)
{
	LIBBPF_OPTS(bpf_uprobe_opts, opts, .bpf_cookie = fn, .retprobe = retprobe);
	struct bpf_link *link = bpf_program__attach_uprobe_opts(prog, pid, path, offset, &opts);

	if (!link)
		return -errno;
	ps->links[ps->nlinks++] = link;
	return 0;
}

static int attach_uretprobes(struct mt_bpf *b, struct mt_probe_set *ps, pid_t pid, const char *path,
			     const struct probe_loc *locs, int n, const char **failed)
{
	int i, err;

	for (i = 0; i < n; i++) {
		const struct probe_loc *l = &locs[i];

		*failed = l->spec->symbol;
		err = attach_one(ps, bpf_loader_prog_entry(b), pid, path, l->offset, l->spec->fn, false);
		if (!err && l->spec->need_return)
			/* a return probe must sit on the entry, where [rsp]
			 * is the return address */
			err = attach_one(ps, bpf_loader_prog_return(b), pid, path,
					 l->offset - l->delta, l->spec->fn, true);
		if (err && (l->spec->required || err == -ESRCH))
			return err;
	}
	return 0;
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

struct mt_probe_set *attach_target(struct mt_bpf *b, pid_t pid, const char *lib_path,
				   bool want_session, struct attach_info *info, char *err,
				   size_t errlen)
{
	struct probe_loc locs[NPROBES];
	struct mt_probe_set *ps;
	const char *failed = "?";
	int n, e = -ENOSYS;

	n = resolve_probes(lib_path, locs, err, errlen);
	if (n < 0) {
		errno = -n;
		return NULL;
	}
	/* A uretprobe at a non-entry offset would hijack the wrong stack
	 * slot: resolve_probes only moves probes of need_return functions
	 * where [rsp] is still the return address. */
	ps = calloc(1, sizeof(*ps));
	if (!ps) {
		snprintf(err, errlen, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	ps->session_fd = -1;
	describe(locs, n, info);

	if (want_session && bpf_loader_prog_session(b)) {
		e = attach_session(b, ps, pid, lib_path, locs, n);
		if (!e) {
			info->mode = MT_ATTACH_SESSION;
			return ps;
		}
		if (e == -ESRCH)
			goto fail;
	}
	e = attach_uretprobes(b, ps, pid, lib_path, locs, n, &failed);
	if (!e) {
		info->mode = MT_ATTACH_URETPROBE;
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

void attach_detach(struct mt_probe_set *ps)
{
	int i;

	if (!ps)
		return;
	for (i = 0; i < ps->nlinks; i++)
		bpf_link__destroy(ps->links[i]);
	if (ps->session_fd >= 0)
		close(ps->session_fd);
	free(ps);
}

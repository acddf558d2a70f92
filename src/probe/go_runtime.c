// SPDX-License-Identifier: GPL-2.0-only
/*
 * go_runtime.c - a Go executable's probe points (go_runtime.h).
 *
 * Signatures, read in the Go sources Debian ships (src/runtime/mprof.go,
 * mheap.go of golang-1.19 and of golang-1.21, 1.22, 1.23 from
 * bookworm-backports), arguments in Go's register ABI (RAX, RBX, RCX):
 *
 *   mProf_Malloc(p unsafe.Pointer, size uintptr)          1.19 - 1.22
 *   mProf_Malloc(mp *m, p unsafe.Pointer, size uintptr)   1.23
 *   freeSpecial(s *special, p unsafe.Pointer, size uintptr)  1.19 - 1.23
 *
 * freeSpecial frees every special record at the sweep of its object, the
 * profile record of a sampled object among them (it then calls
 * mProf_Free(b, size), which has the bucket but not the address):
 * special is {next *special; offset uint16; kind byte} in all four, and
 * the profile kind _KindSpecialProfile is 2 up to 1.22, 3 in 1.23 (which
 * added _KindSpecialWeakHandle = 2).
 *
 * Go 1.20 has no Debian package; its sources have the 1.19 and 1.21
 * signature. Any other version is refused rather than guessed.
 */
#include "probe/go_runtime.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "memtop/abi.h"
#include "probe/probe_place.h"
#include "readers/elf_file.h"
#include "stacks/go_binary.h"
#include "readers/proc_maps.h"

static const char *const fn_names[GO_NFN] = {
	"runtime.mProf_Malloc",
	"runtime.freeSpecial",
};

static const struct {
	int minor_from, minor_to; /* Go 1.x, inclusive */
	__u32 args;
	const char *sig;
	__u32 kind_profile;
} versions[] = {
	{ 19, 22, MT_GO_MALLOC_AX_BX, "mProf_Malloc(p, size)", 2 },
	{ 23, 23, MT_GO_MALLOC_BX_CX, "mProf_Malloc(mp, p, size)", 3 },
};

const char *go_runtime_fn_name(enum go_fn fn)
{
	return fn < GO_NFN ? fn_names[fn] : "?";
}

double go_runtime_heap_goal(const char *gogc)
{
	char *end;
	long n;

	if (!gogc)
		return 2;
	if (!strcmp(gogc, "off"))
		return 0;
	errno = 0;
	n = strtol(gogc, &end, 10);
	if (!(*gogc == '-' || (*gogc >= '0' && *gogc <= '9')) || *end || errno == ERANGE ||
	    n > INT32_MAX || n < INT32_MIN)
		return 2; /* atoi32 refuses it: 100 */
	return n < 0 ? 0 : 1 + n / 100.0;
}

int go_runtime_signature(int major, int minor, __u32 *args, const char **sig, __u32 *kind_profile)
{
	for (size_t i = 0; i < sizeof(versions) / sizeof(versions[0]); i++) {
		if (major == 1 && minor >= versions[i].minor_from && minor <= versions[i].minor_to) {
			*args = versions[i].args;
			*sig = versions[i].sig;
			*kind_profile = versions[i].kind_profile;
			return 0;
		}
	}
	return -ENOTSUP;
}

/* A conditional jump (jcc rel8 or rel32). */
static bool is_jcc(const struct probe_insn *in)
{
	return (in->map == 0 && in->op >= 0x70 && in->op <= 0x7f) ||
	       (in->map == 1 && in->op >= 0x80 && in->op <= 0x8f);
}

__u32 go_runtime_probe_point(const __u8 *code, size_t len, bool *emulated, bool *once)
{
	struct probe_insn in;
	size_t at = 0, jump;

	*emulated = false;
	*once = false;
	/* lea -N(%rsp),%r12 for a large frame */
	if (!probe_insn_decode(code, len, &in) && in.map == 0 && in.op == 0x8d)
		at += in.len;
	/* cmp against the stack guard: cmp 0x10(%r14),%rsp / %r12 */
	if (probe_insn_decode(code + at, len - at, &in) || in.map != 0 ||
	    (in.op != 0x3b && in.op != 0x39) || !in.has_modrm)
		return 0;
	at += in.len;
	if (probe_insn_decode(code + at, len - at, &in) || !is_jcc(&in))
		return 0;
	jump = at;
	at += in.len;
	*emulated = true;
	if (at < len && code[at] == 0x55) { /* push %rbp */
		*once = true;
		return (__u32)at;
	}
	return (__u32)jump;
}

bool go_runtime_is_go(const char *path)
{
	struct elf_file *ef = elf_file_open(path);
	bool yes = ef && go_binary_is_go(ef);

	elf_file_close(ef);
	return yes;
}

/* Resolve one function and its probe point. */
static int place(struct elf_file *ef, const struct go_binary *gb, enum go_fn fn, struct go_target *gt)
{
	__u8 code[64];
	__u64 off, size;
	size_t len;

	if (go_binary_func(ef, gb, fn_names[fn], &off, &size))
		return -ENOENT;
	len = size < sizeof(code) ? size : sizeof(code);
	gt->off[fn] = off;
	gt->delta[fn] = 0;
	gt->slow[fn] = true;
	if (len && !elf_file_read(ef, off, code, len)) {
		bool emulated, once;

		gt->delta[fn] = go_runtime_probe_point(code, len, &emulated, &once);
		gt->slow[fn] = !emulated;
		gt->off[fn] += gt->delta[fn];
	}
	return 0;
}

int go_runtime_inspect(const char *path, struct go_target *gt, char *err, size_t errlen)
{
	struct go_binary gb;
	struct elf_file *ef = elf_file_open(path);
	__u64 size;
	int e, fn;

	memset(gt, 0, sizeof(*gt));
	if (!ef) {
		e = -errno;
		snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
		return e;
	}
	e = go_binary_open(ef, &gb);
	if (e) {
		snprintf(err, errlen, "%s is not a Go binary", path);
		elf_file_close(ef);
		return e;
	}
	snprintf(gt->version, sizeof(gt->version), "%s", gb.version);
	gt->pie = elf_file_is_dyn(ef);
	gt->cgo = elf_file_is_dynamic(ef);
	gt->stripped = !elf_file_has_symtab(ef);
	if (!gb.version[0]) {
		snprintf(err, errlen,
			 "%s is a Go binary without build information: "
			 "its Go version, and so its runtime's signatures, are unknown",
			 path);
		e = -ENOTSUP;
	} else if (go_runtime_signature(gb.major, gb.minor, &gt->malloc_args, &gt->malloc_sig,
					&gt->kind_profile)) {
		snprintf(err, errlen,
			 "%s is built with %s: memtop knows the Go runtime's "
			 "profiling functions of go1.19 to go1.23 only",
			 path, gb.version);
		e = -ENOTSUP;
	}
	for (fn = 0; !e && fn < GO_NFN; fn++) {
		if (place(ef, &gb, fn, gt)) {
			snprintf(err, errlen, "%s (%s) has no %s%s", path, gb.version, fn_names[fn],
				 gb.has_table ? "" : " (no readable .gopclntab)");
			e = -ENOTSUP;
		}
	}
	if (!e && elf_file_object_symbol(ef, "runtime.MemProfileRate", &gt->rate_vaddr, &size))
		gt->rate_vaddr = 0;
	if (!e && elf_file_object_symbol(ef, "runtime.main_init_done", &gt->ready_vaddr, &size))
		gt->ready_vaddr = 0;
	go_binary_close(&gb);
	elf_file_close(ef);
	return e;
}

/* vaddr, a link-time address in pid's executable, at run time. */
static __u64 runtime_addr(pid_t pid, const struct go_target *gt, __u64 vaddr)
{
	char exe[64], link[4096];
	struct mt_maps maps;
	struct elf_file *ef;
	__u64 bias = 0;
	ssize_t n;
	int found = -ENOENT;

	if (!vaddr || !gt->pie)
		return vaddr;
	snprintf(exe, sizeof(exe), "/proc/%d/exe", pid);
	n = readlink(exe, link, sizeof(link) - 1);
	if (n <= 0 || proc_maps_read(pid, &maps))
		return 0;
	link[n] = '\0';
	ef = elf_file_open(exe);
	for (size_t i = 0; ef && i < maps.n && found; i++)
		if (maps.v[i].path && !strcmp(maps.v[i].path, link))
			found = elf_file_load_bias(ef, maps.v[i].start, maps.v[i].offset, &bias);
	elf_file_close(ef);
	proc_maps_free(&maps);
	return found ? 0 : vaddr + bias;
}

__u64 go_runtime_rate_addr(pid_t pid, const struct go_target *gt)
{
	return runtime_addr(pid, gt, gt->rate_vaddr);
}

__u64 go_runtime_ready_addr(pid_t pid, const struct go_target *gt)
{
	return runtime_addr(pid, gt, gt->ready_vaddr);
}

int go_runtime_read_rate(pid_t pid, __u64 addr, __s64 *rate)
{
	char path[64];
	ssize_t n;
	int fd;

	if (!addr)
		return -ENOENT;
	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = pread(fd, rate, sizeof(*rate), (off_t)addr);
	close(fd);
	return n == (ssize_t)sizeof(*rate) ? 0 : -EIO;
}

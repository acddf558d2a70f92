/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * go_runtime.h - where to probe a Go executable's sampled allocation path
 * (docs/go.md): which Go versions memtop knows, the signature of
 * runtime.mProf_Malloc in each (Go's register ABI on amd64), the file
 * offsets of the probed functions (an emulated instruction of their
 * stack-growth check, or just past it), and the address of
 * runtime.MemProfileRate. Refuses, in one line,
 * a version it does not know or a binary whose functions it cannot find.
 * No libbpf here (go_attach.h attaches).
 */
#ifndef MEMTOP_PROBE_GO_RUNTIME_H
#define MEMTOP_PROBE_GO_RUNTIME_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <linux/types.h>

/* The probed functions, in this order. */
enum go_fn { GO_FN_MALLOC = 0, GO_FN_FREE, GO_NFN }; /* mProf_Malloc, freeSpecial */

struct go_target {
	char version[32];       /* "go1.19.8" */
	__u32 malloc_args;      /* enum mt_go_malloc_args */
	const char *malloc_sig; /* "mProf_Malloc(p, size)" */
	__u32 kind_profile;     /* special.kind of a profiled object (_KindSpecialProfile) */
	__u64 off[GO_NFN];      /* file offset of each probe */
	__u32 delta[GO_NFN];    /* bytes past the function's entry */
	bool slow[GO_NFN];      /* the probed instruction is single-stepped */
	__u64 rate_vaddr;       /* link-time address of runtime.MemProfileRate; 0:
				 * unknown (stripped) */
	__u64 ready_vaddr;      /* runtime.main_init_done, set once the runtime's
				 * own start is done; 0: unknown */
	bool pie;               /* position independent: addresses move by the load bias */
	bool cgo;               /* dynamically linked (cgo) */
	bool stripped;          /* no ELF symbol table: names from .gopclntab */
};

/* The names of the probed functions ("runtime.mProf_Malloc", ...). */
const char *go_runtime_fn_name(enum go_fn fn);

/* Whether the executable at path is a Go binary. */
bool go_runtime_is_go(const char *path);

/* Inspect the Go executable at path. 0; -ENOENT when it is not a Go
 * binary; -ENOTSUP (one line in err) for a Go version memtop does not
 * know or a binary without the functions; -errno when unreadable. */
int go_runtime_inspect(const char *path, struct go_target *out, char *err, size_t errlen);

/* The mProf_Malloc argument layout of Go major.minor (enum
 * mt_go_malloc_args), its signature text and the special kind of a
 * profiled object. 0 or -ENOTSUP. */
int go_runtime_signature(int major, int minor, __u32 *args, const char **sig, __u32 *kind_profile);

/* Where to probe a Go function, in bytes from its entry. Its prologue
 * checks the stack (an optional lea, a cmp against the goroutine's stack
 * guard, a conditional jump to the morestack call, which restarts the
 * function from its entry); the argument registers and rsp are as at the
 * entry until the instruction after that jump. That instruction when the
 * kernel emulates it (push %rbp: it runs once per call; *once = true),
 * else the jump itself (emulated, but run again after the stack grew:
 * *once = false, the BPF side ignores the repeat); 0 (the entry,
 * single-stepped, *once false) when there is no such check. *emulated
 * says whether the kernel emulates the chosen instruction. */
__u32 go_runtime_probe_point(const __u8 *code, size_t len, bool *emulated, bool *once);

/* The runtime address of runtime.MemProfileRate in pid (load bias added
 * for a PIE), or 0 when unknown. */
__u64 go_runtime_rate_addr(pid_t pid, const struct go_target *gt);

/* The runtime address of runtime.main_init_done in pid, or 0. */
__u64 go_runtime_ready_addr(pid_t pid, const struct go_target *gt);

/* Read pid's runtime.MemProfileRate at runtime address addr. 0 or -errno. */
int go_runtime_read_rate(pid_t pid, __u64 addr, __s64 *rate);

/* How far the Go GC lets the heap grow past its live part, as a multiple
 * of it (the heap goal, 1 + GOGC/100), from the value of GOGC the process
 * started with (NULL: unset). As the runtime reads it (its readGOGC):
 * unset or not a number is 100; "off" or below 0 is no collection, 0
 * here: every allocation stays, and the heap memtop sees is all of it. */
double go_runtime_heap_goal(const char *gogc);

#endif /* MEMTOP_PROBE_GO_RUNTIME_H */

// SPDX-License-Identifier: GPL-2.0-only
/*
 * inject_got.c - finds the allocator GOT slots of a running process in its
 * memory (inject_got.h).
 *
 * The executable's DT_DEBUG entry holds the loader's struct r_debug, whose
 * r_map starts the chain of struct link_map (l_addr, l_name, l_ld, l_next:
 * <link.h>, the loader's public ABI) in load order, which is also the
 * order symbols are searched in for objects loaded at start-up; objects
 * dlopen'ed later are appended. Each object's dynamic section gives its
 * symbol, string, hash and relocation tables; the loader has rewritten
 * their addresses to run-time ones (except in the vDSO, whose are
 * adjusted here). Everything is read with pread() on /proc/PID/mem.
 */
#include "probe/inject_got.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "probe/inject_ptrace.h"
#include "util/elf_dynhash.h"
#include "util/grow.h"

#define MAX_OBJECTS 4096
#define MAX_DYN 512
/* Bounds on what the target's memory may make memtop walk: hash-chain
 * steps in one chain and in one search of every object for every function
 * (real chains are a few symbols long; a cycle or a chain without its end
 * would otherwise go on until a read fails, or forever), and relocations
 * per table (libc has about 1,000), read RELA_CHUNK at a time. */
#define MAX_CHAIN 1024
#define MAX_CHAIN_STEPS (1 << 18)
#define MAX_RELA (1 << 20)
#define RELA_CHUNK 256

static const char *const fn_names[MT_IFN_COUNT] = MT_INJECT_FN_NAMES;

struct lm {
	__u64 l_addr, l_name, l_ld, l_next;
};

struct object {
	__u64 base, dyn;
	__u64 symtab, strtab, strsz, gnu_hash, sysv_hash, versym;
	__u64 jmprel, pltrelsz, rela, relasz;
	__u64 lo, hi; /* span of the object's own addresses seen so far */
	__u64 relro_lo, relro_hi;
	bool relro_known;
};

#define MAX_PHDRS 256

int inject_got_relro(int fd, __u64 base, __u64 *lo, __u64 *hi)
{
	Elf64_Phdr ph[MAX_PHDRS];
	Elf64_Ehdr eh;
	int i;

	if (!base || inject_mem_read(fd, base, &eh, sizeof(eh)) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_type != ET_DYN || eh.e_phentsize != sizeof(ph[0]) || eh.e_phnum > MAX_PHDRS ||
	    eh.e_phoff > INJECT_PAGE ||
	    inject_mem_read(fd, base + eh.e_phoff, ph, eh.e_phnum * sizeof(ph[0])))
		return -ENOENT;
	*lo = *hi = base;
	for (i = 0; i < eh.e_phnum; i++)
		if (ph[i].p_type == PT_GNU_RELRO && ph[i].p_vaddr + ph[i].p_memsz >= ph[i].p_vaddr) {
			*lo = INJECT_PAGE_DOWN(base + ph[i].p_vaddr);
			*hi = INJECT_PAGE_DOWN(base + ph[i].p_vaddr + ph[i].p_memsz);
		}
	return 0;
}

/* One link_map entry. A read that fails is an entry freed by a dlclose
 * while memtop walked the chain: -EAGAIN, the walk is to be done again. */
static int lm_read(int fd, __u64 at, struct lm *l)
{
	__u64 v[4];
	int e = inject_mem_read(fd, at, v, sizeof(v));

	if (e)
		return e == -ENOMEM ? e : -EAGAIN;
	l->l_addr = v[0];
	l->l_name = v[1];
	l->l_ld = v[2];
	l->l_next = v[3];
	return 0;
}

static int auxv_get(pid_t pid, __u64 type, __u64 *val)
{
	char path[64];
	__u64 v[2];
	int fd, e = -ENOENT;

	snprintf(path, sizeof(path), "/proc/%d/auxv", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (read(fd, v, sizeof(v)) == sizeof(v) && v[0] != AT_NULL) {
		if (v[0] == type) {
			*val = v[1];
			e = 0;
			break;
		}
	}
	close(fd);
	return e;
}

/* The address of the loader's struct r_debug (the executable's DT_DEBUG). */
static int r_debug_find(int mem_fd, pid_t pid, __u64 *r_debug)
{
	__u64 phdr_at = 0, phnum = 0, bias = 0, dyn = 0, i;
	bool have_bias = false;
	Elf64_Phdr ph;
	Elf64_Dyn d;
	int e;

	e = auxv_get(pid, AT_PHDR, &phdr_at);
	if (!e)
		e = auxv_get(pid, AT_PHNUM, &phnum);
	if (e)
		return e;
	for (i = 0; i < phnum; i++) {
		e = inject_mem_read(mem_fd, phdr_at + i * sizeof(ph), &ph, sizeof(ph));
		if (e)
			return e;
		if (ph.p_type == PT_PHDR) {
			bias = phdr_at - ph.p_vaddr;
			have_bias = true;
		}
	}
	for (i = 0; i < phnum; i++) {
		e = inject_mem_read(mem_fd, phdr_at + i * sizeof(ph), &ph, sizeof(ph));
		if (e)
			return e;
		if (ph.p_type == PT_DYNAMIC)
			dyn = ph.p_vaddr;
	}
	if (!dyn || !have_bias)
		return -ENOENT;
	dyn += bias;
	for (i = 0; i < MAX_DYN; i++) {
		e = inject_mem_read(mem_fd, dyn + i * sizeof(d), &d, sizeof(d));
		if (e)
			return e;
		if (d.d_tag == DT_NULL)
			break;
		if (d.d_tag == DT_DEBUG) {
			*r_debug = d.d_un.d_ptr;
			return d.d_un.d_ptr ? 0 : -ENOENT;
		}
	}
	return -ENOENT;
}

/* struct r_debug { int r_version; struct link_map *r_map; ElfW(Addr) r_brk;
 * enum { RT_CONSISTENT, RT_ADD, RT_DELETE } r_state; ... } (<link.h>) */
#define R_DEBUG_MAP 8
#define R_DEBUG_STATE 24

int inject_got_link_map(int mem_fd, pid_t pid, __u64 *first)
{
	__u64 rd, r_map;
	int e = r_debug_find(mem_fd, pid, &rd);

	if (!e)
		e = inject_mem_read(mem_fd, rd + R_DEBUG_MAP, &r_map, sizeof(r_map));
	if (e)
		return e;
	*first = r_map;
	return r_map ? 0 : -ENOENT;
}

int inject_got_loader_done(pid_t pid)
{
	char path[64];
	__u64 rd, r_map = 0;
	__u32 state = 1;
	int fd, e;

	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	e = r_debug_find(fd, pid, &rd);
	if (!e)
		e = inject_mem_read(fd, rd + R_DEBUG_MAP, &r_map, sizeof(r_map));
	if (!e)
		e = inject_mem_read(fd, rd + R_DEBUG_STATE, &state, sizeof(state));
	close(fd);
	if (e == -ENOENT || (!e && (!r_map || state != 0)))
		return -EAGAIN; /* no link map yet, or objects being added */
	return e;
}

static __u64 dyn_addr(__u64 base, __u64 v)
{
	return v < base ? v + base : v;
}

static int object_read(int fd, const struct lm *l, struct object *o)
{
	Elf64_Dyn d;
	int i, e;

	memset(o, 0, sizeof(*o));
	o->base = l->l_addr;
	o->dyn = l->l_ld;
	for (i = 0; i < MAX_DYN; i++) {
		e = inject_mem_read(fd, l->l_ld + i * sizeof(d), &d, sizeof(d));
		if (e)
			return e;
		switch (d.d_tag) {
		case DT_NULL:
			if (!o->symtab || !o->strtab)
				return -ENOENT;
			o->relro_known = !inject_got_relro(fd, o->base, &o->relro_lo, &o->relro_hi);
			return 0;
		case DT_SYMTAB:
			o->symtab = dyn_addr(o->base, d.d_un.d_ptr);
			break;
		case DT_STRTAB:
			o->strtab = dyn_addr(o->base, d.d_un.d_ptr);
			break;
		case DT_STRSZ:
			o->strsz = d.d_un.d_val;
			break;
		case DT_GNU_HASH:
			o->gnu_hash = dyn_addr(o->base, d.d_un.d_ptr);
			break;
		case DT_HASH:
			o->sysv_hash = dyn_addr(o->base, d.d_un.d_ptr);
			break;
		case DT_VERSYM:
			o->versym = dyn_addr(o->base, d.d_un.d_ptr);
			break;
		case DT_JMPREL:
			o->jmprel = dyn_addr(o->base, d.d_un.d_ptr);
			break;
		case DT_PLTRELSZ:
			o->pltrelsz = d.d_un.d_val;
			break;
		case DT_RELA:
			o->rela = dyn_addr(o->base, d.d_un.d_ptr);
			break;
		case DT_RELASZ:
			o->relasz = d.d_un.d_val;
			break;
		}
	}
	return -E2BIG;
}

/* The NUL-terminated name at strtab offset off into buf (cut to len - 1
 * bytes), read a page at a time: a read never runs past the page where
 * the name ends, so a short name at the end of a mapping reads. */
static int str_read(int fd, const struct object *o, __u64 off, char *buf, size_t len)
{
	__u64 at = o->strtab + off;
	size_t got = 0;

	if (o->strsz && off >= o->strsz)
		return -EINVAL;
	while (got < len - 1) {
		size_t n = 4096 - (size_t)(at & 4095);
		int e;

		if (n > len - 1 - got)
			n = len - 1 - got;
		e = inject_mem_read(fd, at, buf + got, n);
		if (e)
			return e;
		if (memchr(buf + got, '\0', n))
			return 0;
		got += n;
		at += n;
	}
	buf[len - 1] = '\0';
	return 0;
}

static int name_index(const char *name)
{
	int i;

	for (i = 0; i < MT_IFN_COUNT; i++)
		if (!strcmp(name, fn_names[i]))
			return i;
	return -1;
}

/* Symbol idx of o defines name (default version): its address, else 0. */
static __u64 sym_def(int fd, const struct object *o, __u32 idx, const char *name)
{
	Elf64_Sym s;
	char buf[160]; /* C++ names of V8's API run to 80 bytes */

	if (inject_mem_read(fd, o->symtab + (__u64)idx * sizeof(s), &s, sizeof(s)) ||
	    s.st_shndx == SHN_UNDEF || !s.st_value || ELF64_ST_TYPE(s.st_info) != STT_FUNC ||
	    (ELF64_ST_BIND(s.st_info) != STB_GLOBAL && ELF64_ST_BIND(s.st_info) != STB_WEAK) ||
	    str_read(fd, o, s.st_name, buf, sizeof(buf)) || strcmp(buf, name))
		return 0;
	if (o->versym) {
		__u16 v;

		if (inject_mem_read(fd, o->versym + (__u64)idx * 2, &v, sizeof(v)) ||
		    (v & 0x8000) || v == 0)
			return 0;
	}
	return o->base + s.st_value;
}

struct lookup_ctx {
	int fd;
	const struct object *o;
};

static int lookup_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	return inject_mem_read(((struct lookup_ctx *)ctx)->fd, addr, buf, len);
}

static uint64_t lookup_match(void *ctx, uint32_t idx, const char *name)
{
	const struct lookup_ctx *c = ctx;

	return sym_def(c->fd, c->o, idx, name);
}

/* Where o defines name, through its hash table; 0 if it does not. At
 * most MAX_CHAIN steps, each counted in *steps, and none past
 * MAX_CHAIN_STEPS there. */
static __u64 object_lookup(int fd, const struct object *o, const char *name, __u32 *steps)
{
	struct lookup_ctx c = { fd, o };
	const struct elf_dynhash t = {
		.gnu_hash = o->gnu_hash,
		.sysv_hash = o->sysv_hash,
		.read = lookup_read,
		.match = lookup_match,
		.ctx = &c,
	};

	return elf_dynhash_lookup(&t, name, MAX_CHAIN, MAX_CHAIN_STEPS, steps);
}

int inject_got_targets(int mem_fd, __u64 first, __u64 target[MT_IFN_COUNT], __u64 owner[MT_IFN_COUNT])
{
	__u64 at = first;
	int n, i, left = MT_IFN_COUNT;
	__u32 steps = 0;

	memset(target, 0, sizeof(__u64) * MT_IFN_COUNT);
	memset(owner, 0, sizeof(__u64) * MT_IFN_COUNT);
	for (n = 0; at && n < MAX_OBJECTS && left; n++) {
		struct object o;
		struct lm l;
		int e = lm_read(mem_fd, at, &l);

		if (e)
			return e;
		at = l.l_next;
		if (!l.l_ld || object_read(mem_fd, &l, &o))
			continue;
		for (i = 0; i < MT_IFN_COUNT; i++) {
			if (!target[i] &&
			    (target[i] = object_lookup(mem_fd, &o, fn_names[i], &steps))) {
				owner[i] = o.dyn;
				left--;
			}
		}
	}
	return 0;
}

int inject_got_symbol(int mem_fd, __u64 first, const char *name, __u64 *addr)
{
	__u64 at = first;
	__u32 steps = 0;
	int n;

	*addr = 0;
	for (n = 0; at && n < MAX_OBJECTS; n++) {
		struct object o;
		struct lm l;
		int e = lm_read(mem_fd, at, &l);

		if (e)
			return e;
		at = l.l_next;
		if (!l.l_ld || object_read(mem_fd, &l, &o))
			continue;
		if ((*addr = object_lookup(mem_fd, &o, name, &steps)))
			return 0;
	}
	return -ENOENT;
}

static bool seen_has(const struct got_seen *s, __u64 dyn)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (s->dyn[i] == dyn)
			return true;
	return false;
}

static int seen_add(struct got_seen *s, __u64 dyn)
{
	if (grow_array(&s->dyn, &s->cap, s->n + 1, sizeof(*s->dyn)))
		return -ENOMEM;
	s->dyn[s->n++] = dyn;
	return 0;
}

static int slot_add(struct got_slot **out, size_t *n, size_t *cap, const struct got_slot *s)
{
	if (grow_array(out, cap, *n + 1, sizeof(**out)))
		return -ENOMEM;
	(*out)[(*n)++] = *s;
	return 0;
}

/* Is addr inside the object (between its base and its dynamic section's
 * neighbourhood)? A lazy slot points at the object's own PLT, which lies
 * below its dynamic section, above its base. */
static bool own_address(const struct object *o, __u64 addr)
{
	return addr >= o->base && addr < o->dyn;
}

/* Does a slot that holds v look untouched by the loader? Before an
 * object is relocated its GOT holds link-time values: 0 (GLOB_DAT) or
 * the address of its own PLT entry before the base is added (JUMP_SLOT),
 * below the dynamic section's link-time address. Only a relocatable
 * object (base != 0) can tell; the test is made after the run-time
 * values the slot may hold are ruled out, since a definition in an object
 * loaded below this one (libc under a libpython loaded before it) also
 * lies below the base. */
static bool unrelocated_value(const struct object *o, __u64 v)
{
	return !v || (o->base && v < o->dyn - o->base);
}

/* Call visit for each JUMP_SLOT and GLOB_DAT relocation of a named
 * symbol in o's table [rel, rel + size), read RELA_CHUNK at a time, with
 * the symbol's name (a relocation whose symbol cannot be read is
 * skipped). Stops at visit's first nonzero return, which it returns; 0
 * at the end, -E2BIG for a table past MAX_RELA, or the read's -errno. */
static int rela_walk(int fd, const struct object *o, __u64 rel, __u64 size,
		     int (*visit)(void *ctx, const Elf64_Rela *r, const char *name), void *ctx)
{
	Elf64_Rela r[RELA_CHUNK];
	size_t i, k, done, n = size / sizeof(*r);
	int e = 0;

	if (!rel || !n)
		return 0;
	if (n > MAX_RELA)
		return -E2BIG;
	for (done = 0; !e && done < n; done += k) {
		k = n - done < RELA_CHUNK ? n - done : RELA_CHUNK;
		e = inject_mem_read(fd, rel + done * sizeof(*r), r, k * sizeof(*r));
		for (i = 0; !e && i < k; i++) {
			__u32 type = ELF64_R_TYPE(r[i].r_info), sym = ELF64_R_SYM(r[i].r_info);
			Elf64_Sym es;
			char name[48];

			if ((type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT) || !sym ||
			    inject_mem_read(fd, o->symtab + (__u64)sym * sizeof(es), &es, sizeof(es)) ||
			    str_read(fd, o, es.st_name, name, sizeof(name)))
				continue;
			e = visit(ctx, &r[i], name);
		}
	}
	return e;
}

/* What scan_table() collects into. */
struct slot_scan {
	int fd;
	const struct object *o;
	const __u64 *entry, *target;
	struct got_slot **out;
	size_t *nout, *cap;
	bool *unrelocated;
};

static int slot_visit(void *ctx, const Elf64_Rela *r, const char *name)
{
	struct slot_scan *c = ctx;
	int fn = name_index(name);
	struct got_slot s;

	if (fn < 0 || !c->target[fn])
		return 0;
	s.dyn = c->o->dyn;
	s.addr = c->o->base + r->r_offset;
	s.fn = fn;
	s.relro_lo = c->o->relro_lo;
	s.relro_hi = c->o->relro_hi;
	s.relro_known = c->o->relro_known;
	if (inject_mem_read(c->fd, s.addr, &s.orig, sizeof(s.orig)))
		return 0;
	s.cur = s.orig;
	if (s.orig && s.orig == c->entry[fn]) {
		s.orig = c->target[fn]; /* rerouted by a memtop that is gone */
	} else if (!s.orig || (s.orig != c->target[fn] && !own_address(c->o, s.orig))) {
		if (unrelocated_value(c->o, s.orig))
			*c->unrelocated = true; /* the loader has not got to it */
		return 0;                       /* or bound elsewhere on purpose */
	}
	return slot_add(c->out, c->nout, c->cap, &s);
}

/* The slots of one object's relocation table at [rel, rel + size). */
static int scan_table(int fd, const struct object *o, __u64 rel, __u64 size,
		      const __u64 entry[MT_IFN_COUNT], const __u64 target[MT_IFN_COUNT],
		      struct got_slot **out, size_t *nout, size_t *cap, bool *unrelocated)
{
	struct slot_scan c = { fd, o, entry, target, out, nout, cap, unrelocated };

	return rela_walk(fd, o, rel, size, slot_visit, &c);
}

int inject_got_scan(int mem_fd, __u64 first, struct got_seen *seen, __u64 skip_dyn,
		    const __u64 entry[MT_IFN_COUNT], const __u64 target[MT_IFN_COUNT],
		    struct got_slot **out, size_t *nout)
{
	size_t cap = *nout;
	__u64 at = first;
	int n, e;

	for (n = 0; at && n < MAX_OBJECTS; n++) {
		size_t before = *nout;
		bool unrelocated = false;
		struct object o;
		struct lm l;

		e = lm_read(mem_fd, at, &l);
		if (e)
			return e;
		at = l.l_next;
		if (!l.l_ld || l.l_ld == skip_dyn || seen_has(seen, l.l_ld))
			continue;
		if (object_read(mem_fd, &l, &o))
			continue;
		e = scan_table(mem_fd, &o, o.jmprel, o.pltrelsz, entry, target, out, nout, &cap,
			       &unrelocated);
		if (!e)
			e = scan_table(mem_fd, &o, o.rela, o.relasz, entry, target, out, nout, &cap,
				       &unrelocated);
		if (e == -EFAULT || e == -EIO) {
			*nout = before; /* unmapped while read: dlclose'd */
			continue;
		}
		if (!e && unrelocated)
			*nout = before; /* all of it next time */
		else if (!e)
			e = seen_add(seen, l.l_ld);
		if (e)
			return e;
	}
	return 0;
}

/* Allocation entry points the sampler does not reroute, which a program
 * may call instead of malloc's family: jemalloc's xallocx (its mallocx,
 * rallocx, dallocx and sdallocx are rerouted), tcmalloc's own API. */
static const char *const unrerouted[] = {
	"xallocx",
	"tc_malloc",
	"tc_free",
	"tc_calloc",
	"tc_realloc",
	"tc_memalign",
	"tc_posix_memalign",
	"tc_valloc",
	"tc_pvalloc",
	"tc_new",
	"tc_newarray",
	"tc_new_nothrow",
	"tc_newarray_nothrow",
	"tc_delete",
	"tc_deletearray",
	"tc_malloc_skip_new_handler",
};

/* What table_unrerouted() looks for with. */
struct unrerouted_scan {
	int fd;
	const struct object *al;
	__u32 steps;
	char *name;
	size_t len;
};

static int unrerouted_visit(void *ctx, const Elf64_Rela *r, const char *name)
{
	struct unrerouted_scan *c = ctx;
	size_t j;

	(void)r;
	for (j = 0; j < sizeof(unrerouted) / sizeof(unrerouted[0]); j++) {
		if (!strcmp(name, unrerouted[j]) && object_lookup(c->fd, c->al, name, &c->steps)) {
			snprintf(c->name, c->len, "%s", name);
			return 1;
		}
	}
	return 0;
}

/* The first name of unrerouted[] a relocation of table [rel, rel +
 * size) of o binds and the allocator's object al defines (a call another
 * object answers, libstdc++'s aligned new, goes on to malloc's family),
 * into name; 1 found, 0 not (a table that cannot be read is one of a
 * dlclose'd object: not), -E2BIG. */
static int table_unrerouted(int fd, const struct object *o, __u64 rel, __u64 size,
			    const struct object *al, char *name, size_t len)
{
	struct unrerouted_scan c = { fd, al, 0, name, len };
	int e = rela_walk(fd, o, rel, size, unrerouted_visit, &c);

	return e < 0 && e != -E2BIG ? 0 : e;
}

/* The object whose dynamic section is at dyn, and its path's last
 * component in base. 0 or -errno. */
static int object_of(int fd, __u64 first, __u64 dyn, struct object *o, char *base, size_t len)
{
	__u64 at = first;
	int n, e;

	for (n = 0; at && n < MAX_OBJECTS; n++) {
		struct lm l;

		e = lm_read(fd, at, &l);
		if (e)
			return e;
		if (l.l_ld == dyn) {
			char path[256] = "";
			const char *b;

			if (l.l_name && !inject_mem_read(fd, l.l_name, path, sizeof(path) - 1))
				path[sizeof(path) - 1] = '\0';
			else
				path[0] = '\0';
			b = strrchr(path, '/');
			snprintf(base, len, "%s", b ? b + 1 : path);
			return object_read(fd, &l, o) ? -ENOENT : 0;
		}
		at = l.l_next;
	}
	return -ENOENT;
}

int inject_got_name(int mem_fd, __u64 first, __u64 dyn, char *base, size_t len)
{
	struct object o;

	return object_of(mem_fd, first, dyn, &o, base, len);
}

int inject_got_blind_spot(int mem_fd, __u64 first, __u64 malloc_owner, char *why, size_t len)
{
	struct object al;
	__u64 at = first;
	char name[48], base[64];
	int n, e = object_of(mem_fd, first, malloc_owner, &al, base, sizeof(base));

	if (e)
		return e;
	if (!strcmp(base, "libmemtop-sampler.so")) {
		/* preloaded, in front of an allocator it passes through */
		snprintf(why, len, "memtop's preloaded sampler in front of its allocator");
		return 1;
	}
	for (n = 0; at && n < MAX_OBJECTS; n++) {
		struct object o;
		struct lm l;

		e = lm_read(mem_fd, at, &l);
		if (e)
			return e;
		if (n == 0 && l.l_ld && l.l_ld == malloc_owner) {
			snprintf(why, len, "malloc defined in the executable");
			return 1;
		}
		at = l.l_next;
		/* the allocator's own calls of its own API are its business */
		if (!l.l_ld || l.l_ld == malloc_owner || object_read(mem_fd, &l, &o))
			continue;
		e = table_unrerouted(mem_fd, &o, o.jmprel, o.pltrelsz, &al, name, sizeof(name));
		if (!e)
			e = table_unrerouted(mem_fd, &o, o.rela, o.relasz, &al, name, sizeof(name));
		if (e == 1)
			snprintf(why, len, "calls %s, not rerouted", name);
		if (e)
			return e;
	}
	return 0;
}

bool inject_got_loaded(int mem_fd, __u64 first, __u64 dyn)
{
	__u64 at = first;
	int n;

	for (n = 0; at && n < MAX_OBJECTS; n++) {
		struct lm l;

		if (lm_read(mem_fd, at, &l))
			return false;
		if (l.l_ld == dyn)
			return true;
		at = l.l_next;
	}
	return false;
}

void inject_got_seen_prune(int mem_fd, __u64 first, struct got_seen *seen)
{
	struct got_seen now = { 0 };
	__u64 at = first;
	size_t i, k = 0;
	int n;

	/* the objects loaded now, in one walk of the chain */
	for (n = 0; at && n < MAX_OBJECTS; n++) {
		struct lm l;

		if (lm_read(mem_fd, at, &l))
			goto out; /* the chain changed under the walk: keep all */
		if (l.l_ld && seen_add(&now, l.l_ld))
			goto out;
		at = l.l_next;
	}
	for (i = 0; i < seen->n; i++)
		if (seen_has(&now, seen->dyn[i]))
			seen->dyn[k++] = seen->dyn[i];
	seen->n = k;
out:
	inject_got_seen_free(&now);
}

void inject_got_seen_free(struct got_seen *seen)
{
	free(seen->dyn);
	memset(seen, 0, sizeof(*seen));
}

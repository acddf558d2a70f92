// SPDX-License-Identifier: GPL-2.0-only
/*
 * unwind.c - DWARF unwinding of a copied user stack with libunwind's remote
 * API, the way perf does it (tools/perf/util/unwind-libunwind-local.c).
 *
 * The target is never touched. libunwind sees an address space made of
 * three things, looked up in this order by access_mem(): the stack copy
 * taken by the BPF program at regs->sp, then the bytes of the ELF files
 * mapped read-only by the target (read from the file through proc_cache:
 * .eh_frame_hdr, .eh_frame, code), and nothing else. Registers come from
 * struct mt_regs. find_proc_info() locates the .eh_frame_hdr of the object
 * containing an ip and hands its binary-search table to libunwind's
 * dwarf_search_unwind_table(), which reads the table and the FDE through
 * access_mem(). Objects with no .eh_frame_hdr (only .debug_frame, or JIT
 * code) end the walk as truncated; so does libunwind's %rbp guess, which
 * is noise in code without frame pointers. docs/unwinding.md has the rest.
 *
 * The module owns one libunwind address space per target process (its
 * cache of decoded frames is keyed by address, which means nothing across
 * processes), at most MAX_SPACES of them, least recently used evicted; and
 * a small cache of parsed .eh_frame_hdr headers keyed by file identity.
 * With the address space's cache warm, a walk reads only the stack copy.
 */
#include "stacks/unwind.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <libunwind.h>

#include "readers/elf_file.h"
#include "readers/proc_maps.h"
#include "util/file_id.h"
#include "util/hmap.h"

/* libunwind exports this internal helper (as _Ux86_64_dwarf_search_unwind_table)
 * but declares it in no public header; perf declares it the same way. */
extern int UNW_OBJ(dwarf_search_unwind_table)(unw_addr_space_t as, unw_word_t ip, unw_dyn_info_t *di,
					      unw_proc_info_t *pi, int need_unwind_info, void *arg);
#define dwarf_search_unwind_table UNW_OBJ(dwarf_search_unwind_table)

#define MAX_SPACES 32      /* per-process address spaces kept (LRU) */
#define RS_CACHE_SIZE 1024 /* libunwind frame-state cache entries per space */
#define HDR_CACHE_SIZE 256 /* parsed .eh_frame_hdr headers, direct-mapped */
#define RECENT_REGIONS 4   /* mappings remembered during one walk */

/* DWARF exception-header pointer encodings (LSB 5.0, .eh_frame_hdr). */
#define DW_EH_PE_absptr 0x00
#define DW_EH_PE_udata2 0x02
#define DW_EH_PE_udata4 0x03
#define DW_EH_PE_udata8 0x04
#define DW_EH_PE_sdata2 0x0a
#define DW_EH_PE_sdata4 0x0b
#define DW_EH_PE_sdata8 0x0c
#define DW_EH_PE_pcrel 0x10
#define DW_EH_PE_datarel 0x30
#define DW_EH_PE_omit 0xff

struct unw_space {
	pid_t pid; /* 0: free slot */
	unw_addr_space_t as;
	__u64 last_use; /* u->clock at the last walk */
};

/* A parsed .eh_frame_hdr: where its search table is, link-time. */
struct hdr_entry {
	bool used;
	bool usable;       /* false: no table libunwind can search */
	struct file_id id; /* key, with hdr_vaddr */
	__u64 hdr_vaddr;
	__u64 table_vaddr;
	__u64 fde_count;
};

/* A mapping as one walk needs it; copied, because a subsequent proc_cache
 * lookup may re-read the maps and free the array the map came from. */
struct region {
	__u64 start;
	__u64 end;
	__u64 bias;          /* runtime = link-time vaddr + bias */
	struct elf_file *ef; /* NULL: nothing readable behind it */
};

/* The accessor argument: everything one walk reads from. */
struct walk {
	struct unwinder *u;
	pid_t pid;
	const struct mt_regs *regs;
	const __u8 *stack;
	__u64 stack_lo; /* [stack_lo, stack_hi) is the copy */
	__u64 stack_hi;
	struct region recent[RECENT_REGIONS];
	unsigned int nrecent;
	/* libunwind reads unwind tables a byte at a time, each byte through
	 * access_mem() of the aligned word holding it: keep the last word. */
	__u64 word_addr;
	__u64 word;
	bool word_valid;
	bool noinfo;     /* find_proc_info() found nothing this step */
	bool above_copy; /* a read above the copy failed this step */
};

struct unwinder {
	struct proc_cache *pc;
	unw_accessors_t accessors;
	struct unw_space spaces[MAX_SPACES];
	__u64 clock;
	struct hdr_entry hdrs[HDR_CACHE_SIZE];
	enum unwind_stop last_stop;
	struct unwind_stats stats;
};

/* ==== Mappings and file bytes ========================================== */

static void region_put(struct region *r)
{
	if (r->ef)
		elf_file_close(r->ef);
	memset(r, 0, sizeof(*r));
}

/* The region of the walk's process containing addr, from the walk's few
 * recent ones or from proc_cache. NULL when addr is in no mapping. */
static const struct region *walk_region(struct walk *w, __u64 addr)
{
	const struct mt_map *map;
	struct region *r;

	for (unsigned int i = 0; i < w->nrecent && i < RECENT_REGIONS; i++) {
		r = &w->recent[i];
		if (addr >= r->start && addr < r->end)
			return r;
	}
	map = proc_cache_find_map(w->u->pc, w->pid, addr);
	if (!map)
		return NULL;
	r = &w->recent[w->nrecent++ % RECENT_REGIONS];
	region_put(r);
	r->start = map->start;
	r->end = map->end;
	/* File-backed mappings are read from the file. For writable ones
	 * (.data, .got) that is the data as linked, not as it is now: the
	 * unwinder only reads them while parsing a CIE (the indirect
	 * personality pointer, DW.ref.__gxx_personality_v0 in C++ code),
	 * whose value it records but never uses. */
	if (map->path && map->path[0] != '[') {
		struct elf_file *ef = proc_cache_elf(w->u->pc, w->pid, map);

		/* Held for the walk: a maps re-read may drop the cache's reference. */
		if (ef && proc_cache_load_bias(w->u->pc, w->pid, map, &r->bias) == 0)
			r->ef = elf_file_ref(ef);
	}
	return r;
}

/* Drop what the walk remembers about its mappings. */
static void walk_release(struct walk *w)
{
	for (unsigned int i = 0; i < RECENT_REGIONS; i++)
		region_put(&w->recent[i]);
}

/* Read len bytes of the target at runtime address addr from the file
 * mapped there. 0 or -EFAULT. */
static int walk_read_file(struct walk *w, __u64 addr, void *buf, size_t len)
{
	const struct region *r = walk_region(w, addr);

	if (!r || !r->ef || r->end - addr < len)
		return -EFAULT;
	return elf_file_read_vaddr(r->ef, addr - r->bias, buf, len) ? -EFAULT : 0;
}

/* ==== .eh_frame_hdr ==================================================== */

/* Decode one encoded pointer at *pos (link-time vaddr of the field) from
 * buf, which holds the bytes at link-time vaddr base. data_base is the
 * base of DW_EH_PE_datarel. 0 or -EINVAL. */
static int eh_read_encoded(const __u8 *buf, size_t len, __u64 base, __u64 *pos, __u8 enc,
			   __u64 data_base, __u64 *out)
{
	size_t off = *pos - base, size;
	__u64 val = 0;

	switch (enc & 0x0f) {
	case DW_EH_PE_absptr:
	case DW_EH_PE_udata8:
	case DW_EH_PE_sdata8:
		size = 8;
		break;
	case DW_EH_PE_udata4:
	case DW_EH_PE_sdata4:
		size = 4;
		break;
	case DW_EH_PE_udata2:
	case DW_EH_PE_sdata2:
		size = 2;
		break;
	default:
		return -EINVAL;
	}
	if (off > len || len - off < size)
		return -EINVAL;
	if (size == 8) {
		memcpy(&val, buf + off, 8);
	} else if (size == 4) {
		__u32 v;

		memcpy(&v, buf + off, 4);
		val = (enc & 0x0f) == DW_EH_PE_sdata4 ? (__u64)(__s64)(__s32)v : v;
	} else {
		__u16 v;

		memcpy(&v, buf + off, 2);
		val = (enc & 0x0f) == DW_EH_PE_sdata2 ? (__u64)(__s64)(__s16)v : v;
	}
	switch (enc & 0x70) {
	case 0:
		break;
	case DW_EH_PE_pcrel:
		val += *pos;
		break;
	case DW_EH_PE_datarel:
		val += data_base;
		break;
	default:
		return -EINVAL;
	}
	*pos += size;
	*out = val;
	return 0;
}

/* Parse the header of the .eh_frame_hdr at link-time hdr_vaddr of ef into
 * e. Sets e->usable only for a binary-search table libunwind can use. */
static void eh_hdr_parse(struct elf_file *ef, __u64 hdr_vaddr, __u64 hdr_size, struct hdr_entry *e)
{
	__u8 buf[4 + 8 + 8];
	size_t len = hdr_size < sizeof(buf) ? hdr_size : sizeof(buf);
	__u64 pos = hdr_vaddr + 4, eh_frame, count;

	e->usable = false;
	if (len < 4 || elf_file_read_vaddr(ef, hdr_vaddr, buf, len))
		return;
	/* version, eh_frame_ptr_enc, fde_count_enc, table_enc */
	if (buf[0] != 1 || buf[1] == DW_EH_PE_omit || buf[2] == DW_EH_PE_omit ||
	    buf[3] != (DW_EH_PE_datarel | DW_EH_PE_sdata4))
		return;
	if (eh_read_encoded(buf, len, hdr_vaddr, &pos, buf[1], hdr_vaddr, &eh_frame) ||
	    eh_read_encoded(buf, len, hdr_vaddr, &pos, buf[2], hdr_vaddr, &count))
		return;
	/* The table must lie inside the section. */
	if (count == 0 || pos - hdr_vaddr > hdr_size || count > (hdr_size - (pos - hdr_vaddr)) / 8)
		return;
	e->table_vaddr = pos;
	e->fde_count = count;
	e->usable = true;
}

static size_t hdr_slot(const struct file_id *id, __u64 hdr_vaddr)
{
	return hmap_mix(file_id_hash(id), hdr_vaddr) % HDR_CACHE_SIZE;
}

/* The parsed .eh_frame_hdr of ef, cached by file identity; NULL if the
 * file has none usable. */
static const struct hdr_entry *eh_hdr_get(struct unwinder *u, struct elf_file *ef)
{
	const struct file_id *id = elf_file_id(ef);
	__u64 vaddr, size;
	struct hdr_entry *e;

	if (!id || elf_file_eh_frame_hdr(ef, &vaddr, &size))
		return NULL;
	e = &u->hdrs[hdr_slot(id, vaddr)];
	if (!e->used || e->hdr_vaddr != vaddr || !file_id_equal(&e->id, id)) {
		e->used = true;
		e->id = *id;
		e->hdr_vaddr = vaddr;
		eh_hdr_parse(ef, vaddr, size, e);
	}
	return e->usable ? e : NULL;
}

/* ==== libunwind accessors ============================================== */

static int find_proc_info(unw_addr_space_t as, unw_word_t ip, unw_proc_info_t *pi,
			  int need_unwind_info, void *arg)
{
	struct walk *w = arg;
	const struct hdr_entry *h;
	const struct region *r;
	unw_dyn_info_t di;
	int ret;

	w->u->stats.table_lookups++;
	r = walk_region(w, ip);
	if (!r || !r->ef || !(h = eh_hdr_get(w->u, r->ef))) {
		w->noinfo = true;
		return -UNW_ENOINFO;
	}
	memset(&di, 0, sizeof(di));
	di.format = UNW_INFO_FORMAT_REMOTE_TABLE;
	di.start_ip = r->start;
	di.end_ip = r->end;
	di.u.rti.segbase = h->hdr_vaddr + r->bias;
	di.u.rti.table_data = h->table_vaddr + r->bias;
	di.u.rti.table_len = h->fde_count * 8 / sizeof(unw_word_t);
	ret = dwarf_search_unwind_table(as, ip, &di, pi, need_unwind_info, arg);
	if (ret == -UNW_ENOINFO)
		w->noinfo = true;
	return ret;
}

/* libunwind frees what dwarf_search_unwind_table() allocated itself. */
static void put_unwind_info(unw_addr_space_t as, unw_proc_info_t *pi, void *arg)
{
}

static int get_dyn_info_list_addr(unw_addr_space_t as, unw_word_t *dilap, void *arg)
{
	return -UNW_ENOINFO;
}

static int access_mem(unw_addr_space_t as, unw_word_t addr, unw_word_t *valp, int write, void *arg)
{
	struct walk *w = arg;

	if (write)
		return -UNW_EINVAL;
	if (addr >= w->stack_lo && addr < w->stack_hi) {
		if (w->stack_hi - addr < sizeof(*valp)) {
			w->above_copy = true;
			return -UNW_EINVAL;
		}
		memcpy(valp, w->stack + (addr - w->stack_lo), sizeof(*valp));
		return 0;
	}
	if (w->word_valid && addr == w->word_addr) {
		*valp = w->word;
		return 0;
	}
	if (walk_read_file(w, addr, valp, sizeof(*valp)) == 0) {
		w->word_addr = addr;
		w->word = *valp;
		w->word_valid = true;
		return 0;
	}
	if (addr >= w->stack_hi)
		w->above_copy = true;
	return -UNW_EINVAL;
}

static int access_reg(unw_addr_space_t as, unw_regnum_t regnum, unw_word_t *valp, int write, void *arg)
{
	const struct mt_regs *r = ((struct walk *)arg)->regs;

	if (write)
		return -UNW_EREADONLYREG;
	switch (regnum) {
	case UNW_X86_64_RAX:
		*valp = r->ax;
		break;
	case UNW_X86_64_RDX:
		*valp = r->dx;
		break;
	case UNW_X86_64_RCX:
		*valp = r->cx;
		break;
	case UNW_X86_64_RBX:
		*valp = r->bx;
		break;
	case UNW_X86_64_RSI:
		*valp = r->si;
		break;
	case UNW_X86_64_RDI:
		*valp = r->di;
		break;
	case UNW_X86_64_RBP:
		*valp = r->bp;
		break;
	case UNW_X86_64_RSP:
		*valp = r->sp;
		break;
	case UNW_X86_64_R8:
		*valp = r->r8;
		break;
	case UNW_X86_64_R9:
		*valp = r->r9;
		break;
	case UNW_X86_64_R10:
		*valp = r->r10;
		break;
	case UNW_X86_64_R11:
		*valp = r->r11;
		break;
	case UNW_X86_64_R12:
		*valp = r->r12;
		break;
	case UNW_X86_64_R13:
		*valp = r->r13;
		break;
	case UNW_X86_64_R14:
		*valp = r->r14;
		break;
	case UNW_X86_64_R15:
		*valp = r->r15;
		break;
	case UNW_X86_64_RIP:
		*valp = r->ip;
		break;
	default:
		return -UNW_EBADREG;
	}
	return 0;
}

static int access_fpreg(unw_addr_space_t as, unw_regnum_t num, unw_fpreg_t *val, int write, void *arg)
{
	return -UNW_EBADREG;
}

static int resume(unw_addr_space_t as, unw_cursor_t *cu, void *arg)
{
	return -UNW_EINVAL;
}

static int get_proc_name(unw_addr_space_t as, unw_word_t addr, char *bufp, size_t buf_len,
			 unw_word_t *offp, void *arg)
{
	return -UNW_ENOINFO;
}

/* ==== Address spaces =================================================== */

static void space_release(struct unw_space *s)
{
	if (s->as)
		unw_destroy_addr_space(s->as);
	memset(s, 0, sizeof(*s));
}

/* The address space of pid, created on first use (evicting the least
 * recently used one when all are taken). NULL when libunwind fails. */
static unw_addr_space_t space_get(struct unwinder *u, pid_t pid)
{
	struct unw_space *s = NULL, *lru = &u->spaces[0];

	u->clock++;
	for (int i = 0; i < MAX_SPACES; i++) {
		if (u->spaces[i].pid == pid && u->spaces[i].as) {
			s = &u->spaces[i];
			break;
		}
		if (u->spaces[i].last_use < lru->last_use)
			lru = &u->spaces[i];
	}
	if (!s) {
		s = lru;
		space_release(s);
		s->as = unw_create_addr_space(&u->accessors, 0);
		if (!s->as)
			return NULL;
		unw_set_caching_policy(s->as, UNW_CACHE_GLOBAL);
		unw_set_cache_size(s->as, RS_CACHE_SIZE, 0);
		s->pid = pid;
	}
	s->last_use = u->clock;
	return s->as;
}

/* ==== Public API ======================================================= */

struct unwinder *unwinder_new(struct proc_cache *pc)
{
	struct unwinder *u;

	if (!pc) {
		errno = EINVAL;
		return NULL;
	}
	u = calloc(1, sizeof(*u));
	if (!u)
		return NULL;
	u->pc = pc;
	u->accessors = (unw_accessors_t){
		.find_proc_info = find_proc_info,
		.put_unwind_info = put_unwind_info,
		.get_dyn_info_list_addr = get_dyn_info_list_addr,
		.access_mem = access_mem,
		.access_reg = access_reg,
		.access_fpreg = access_fpreg,
		.resume = resume,
		.get_proc_name = get_proc_name,
	};
	return u;
}

void unwinder_free(struct unwinder *u)
{
	if (!u)
		return;
	for (int i = 0; i < MAX_SPACES; i++)
		space_release(&u->spaces[i]);
	free(u);
}

void unwinder_forget(struct unwinder *u, pid_t pid)
{
	for (int i = 0; u && i < MAX_SPACES; i++)
		if (u->spaces[i].pid == pid && u->spaces[i].as)
			space_release(&u->spaces[i]);
}

enum unwind_stop unwinder_last_stop(const struct unwinder *u)
{
	return u->last_stop;
}

void unwinder_stats(const struct unwinder *u, struct unwind_stats *out)
{
	*out = u->stats;
}

/* Walk up from w's registers, appending return addresses to ips[*n..max).
 * Returns why it stopped. */
static enum unwind_stop walk_frames(struct walk *w, unw_addr_space_t as, __u64 *ips, int *n, int max)
{
	unw_word_t ip, sp, prev_sp = w->regs->sp;
	unw_cursor_t cursor;
	int ret;

	if (unw_init_remote(&cursor, as, w) < 0)
		return UNWIND_STOP_BADFRAME;
	for (;;) {
		w->noinfo = false;
		w->above_copy = false;
		ret = unw_step(&cursor);
		/* With no table for the ip libunwind falls back to guessing
		 * from %rbp, which is noise without frame pointers. */
		if (w->noinfo)
			return *n >= max ? UNWIND_STOP_MAX : UNWIND_STOP_NOINFO;
		if (ret == 0)
			return UNWIND_STOP_END;
		/* ips[] is full: the step above only told whether the last
		 * frame stored was the outermost one. */
		if (*n >= max)
			return UNWIND_STOP_MAX;
		if (ret < 0)
			return w->above_copy ? UNWIND_STOP_STACK : UNWIND_STOP_BADFRAME;
		if (unw_get_reg(&cursor, UNW_REG_IP, &ip) < 0 ||
		    unw_get_reg(&cursor, UNW_REG_SP, &sp) < 0)
			return UNWIND_STOP_BADFRAME;
		if (ip == 0)
			return UNWIND_STOP_END;
		/* Each caller's frame lies above its callee's. */
		if (sp <= prev_sp)
			return UNWIND_STOP_BADFRAME;
		prev_sp = sp;
		ips[(*n)++] = ip;
	}
}

int unwinder_unwind(struct unwinder *u, pid_t pid, const struct mt_regs *regs, const __u8 *stack,
		    __u32 stack_len, __u64 *ips, int max, bool *truncated)
{
	struct walk w = {
		.u = u,
		.pid = pid,
		.regs = regs,
		.stack = stack,
	};
	enum unwind_stop stop;
	unw_addr_space_t as;
	int n = 0;

	if (!u || !regs || !ips || !truncated || max < 1 || (!stack && stack_len))
		return -EINVAL;
	as = space_get(u, pid);
	if (!as)
		return -ENOMEM;
	w.stack_lo = regs->sp;
	/* A copy that would wrap around the address space is cut short. */
	w.stack_hi = regs->sp + stack_len < regs->sp ? ~0ULL : regs->sp + stack_len;
	ips[n++] = regs->ip;
	stop = walk_frames(&w, as, ips, &n, max);
	walk_release(&w);

	*truncated = stop != UNWIND_STOP_END;
	u->last_stop = stop;
	u->stats.walks++;
	u->stats.frames += n;
	u->stats.stops[stop]++;
	return n;
}

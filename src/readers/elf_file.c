// SPDX-License-Identifier: GPL-2.0-only
/*
 * elf_file.c - one ELF file read through libelf. Owns the descriptor, the
 * libelf handle (the file is mapped read-only, ELF_C_READ_MMAP) and what is
 * derived from them: program headers, build ID, .gnu_debuglink, and a
 * sorted function-symbol table built on first use from .symtab and
 * .dynsym. The file is validated at open: ELF header, program headers and
 * every section header (a section with data past the end of the file, or
 * a section header table outside it, is ENOEXEC), so later calls only
 * meet well-formed tables; each call still bounds-checks what it reads.
 *
 * libelf is used rather than hand parsing because it handles both ELF
 * classes, both byte orders, extended section numbering and compressed
 * sections, and because libdw (DWARF) takes the same Elf handle; the build
 * ID note and .gnu_debuglink are read by libdw's dwelf_* functions.
 */
#include "readers/elf_file.h"
#include "util/grow.h"

#include "util/strpool.h"

#include <errno.h>
#include <fcntl.h>
#include <elfutils/libdwelf.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "util/safe_open.h"

#define VERSYM_HIDDEN 0x8000

struct elf_sym {
	__u64 start;
	__u64 end; /* exclusive; for an unsized symbol, its section's end */
	const char *name;
	int rank; /* higher wins when two symbols share a start */
	bool sized;
};

struct elf_file {
	int refs;
	int fd;
	Elf *elf;
	char *path;
	struct file_id id;
	const char *image; /* whole file, from elf_rawfile() */
	size_t image_size;
	GElf_Ehdr ehdr;
	GElf_Phdr *phdrs;
	size_t phnum;
	Elf_Scn *symtab;
	Elf_Scn *dynsym;
	Elf_Scn *versym; /* parallel to dynsym */
	bool has_dwarf;
	bool build_id_done;
	char *build_id;
	bool syms_done;
	struct elf_sym *syms;
	size_t nsyms;
	bool syms_cut; /* more than ELF_MAX_SYMS: the rest not kept */
};

/* Bounds on what one file may cost, whoever made it: the largest file
 * parsed, and the most function symbols kept (a 4M-symbol .symtab would
 * otherwise cost some 200 MB). Files that hit one are counted. */
#define ELF_MAX_BYTES (2ULL << 30)
#define ELF_MAX_SYMS (1u << 20)
static unsigned long limits_hit;

unsigned long elf_file_limits_hit(void)
{
	return __atomic_load_n(&limits_hit, __ATOMIC_RELAXED);
}

static void limit_hit(void)
{
	__atomic_add_fetch(&limits_hit, 1, __ATOMIC_RELAXED);
}

static int elf_lib_init(void)
{
	static int ready; /* 1 ok, -1 failed */

	if (!ready)
		ready = elf_version(EV_CURRENT) == EV_NONE ? -1 : 1;
	return ready > 0 ? 0 : -ENOSYS;
}

/* Reject files whose section header table or any section's data lies
 * outside the file, and note the sections used later. */
static int elf_scan_sections(struct elf_file *ef)
{
	bool has_info = false, has_line = false;
	size_t shnum, shstrndx;
	Elf_Scn *scn = NULL;

	/* libelf reports no sections at all when the table is out of range,
	 * so compare with what the header claims. */
	if (!ef->ehdr.e_shoff)
		return 0;
	if (ef->ehdr.e_shentsize != (ef->ehdr.e_ident[EI_CLASS] == ELFCLASS64 ? sizeof(Elf64_Shdr)
									      : sizeof(Elf32_Shdr)) ||
	    ef->ehdr.e_shoff > ef->image_size ||
	    ef->image_size - ef->ehdr.e_shoff < ef->ehdr.e_shentsize)
		return -ENOEXEC;
	if (elf_getshdrnum(ef->elf, &shnum) || !shnum ||
	    (ef->ehdr.e_shnum && shnum != ef->ehdr.e_shnum) ||
	    shnum > (ef->image_size - ef->ehdr.e_shoff) / ef->ehdr.e_shentsize)
		return -ENOEXEC;
	if (elf_getshdrstrndx(ef->elf, &shstrndx) || shstrndx >= shnum)
		return -ENOEXEC;
	while ((scn = elf_nextscn(ef->elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh))
			return -ENOEXEC;
		if (sh.sh_type != SHT_NOBITS &&
		    (sh.sh_offset > ef->image_size || sh.sh_size > ef->image_size - sh.sh_offset))
			return -ENOEXEC;
		switch (sh.sh_type) {
		case SHT_SYMTAB:
			ef->symtab = scn;
			break;
		case SHT_DYNSYM:
			ef->dynsym = scn;
			break;
		case SHT_GNU_versym:
			ef->versym = scn;
			break;
		default:
			break;
		}
		name = elf_strptr(ef->elf, shstrndx, sh.sh_name);
		if (name && sh.sh_type != SHT_NOBITS && sh.sh_size) {
			if (!strcmp(name, ".debug_info") || !strcmp(name, ".zdebug_info"))
				has_info = true;
			else if (!strcmp(name, ".debug_line") || !strcmp(name, ".zdebug_line"))
				has_line = true;
		}
	}
	ef->has_dwarf = has_info && has_line;
	return 0;
}

static int elf_file_load(struct elf_file *ef)
{
	struct stat st;
	int err;

	if (fstat(ef->fd, &st))
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -ENOEXEC;
	if ((__u64)st.st_size > ELF_MAX_BYTES) {
		limit_hit();
		return -EFBIG;
	}
	ef->id = file_id_of_stat(&st);
	err = elf_lib_init();
	if (err)
		return err;
	ef->elf = elf_begin(ef->fd, ELF_C_READ_MMAP, NULL);
	if (!ef->elf || elf_kind(ef->elf) != ELF_K_ELF)
		return -ENOEXEC;
	ef->image = elf_rawfile(ef->elf, &ef->image_size);
	if (!ef->image || !gelf_getehdr(ef->elf, &ef->ehdr))
		return -ENOEXEC;
	if (elf_getphdrnum(ef->elf, &ef->phnum))
		return -ENOEXEC;
	if (ef->phnum) {
		if (ef->ehdr.e_phoff > ef->image_size)
			return -ENOEXEC;
		ef->phdrs = calloc(ef->phnum, sizeof(*ef->phdrs));
		if (!ef->phdrs)
			return -ENOMEM;
		for (size_t i = 0; i < ef->phnum; i++) {
			if (!gelf_getphdr(ef->elf, (int)i, &ef->phdrs[i]))
				return -ENOEXEC;
		}
	}
	return elf_scan_sections(ef);
}

struct elf_file *elf_file_open_fd(int fd, const char *path)
{
	struct elf_file *ef;
	int err;

	if (fd < 0) {
		errno = EBADF;
		return NULL;
	}
	ef = calloc(1, sizeof(*ef));
	if (!ef) {
		close(fd);
		errno = ENOMEM;
		return NULL;
	}
	ef->refs = 1;
	ef->fd = fd;
	ef->path = strdup(path ? path : "");
	err = ef->path ? elf_file_load(ef) : -ENOMEM;
	if (err) {
		elf_file_close(ef);
		errno = -err;
		return NULL;
	}
	return ef;
}

struct elf_file *elf_file_open(const char *path)
{
	int fd = safe_open_read(path, NULL);

	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	return elf_file_open_fd(fd, path);
}

struct elf_file *elf_file_ref(struct elf_file *ef)
{
	if (ef)
		__atomic_add_fetch(&ef->refs, 1, __ATOMIC_RELAXED);
	return ef;
}

void elf_file_close(struct elf_file *ef)
{
	if (!ef || __atomic_sub_fetch(&ef->refs, 1, __ATOMIC_ACQ_REL) > 0)
		return;
	free(ef->syms);
	free(ef->build_id);
	free(ef->phdrs);
	if (ef->elf)
		elf_end(ef->elf);
	if (ef->fd >= 0)
		close(ef->fd);
	free(ef->path);
	free(ef);
}

const char *elf_file_path(struct elf_file *ef)
{
	return ef->path;
}

const struct file_id *elf_file_id(struct elf_file *ef)
{
	return &ef->id;
}

struct Elf *elf_file_libelf(struct elf_file *ef)
{
	return ef->elf;
}

/* The first section for which match(name, header, arg) holds. */
static Elf_Scn *section_where(struct elf_file *ef, GElf_Shdr *sh,
			      bool (*match)(const char *, const GElf_Shdr *, const void *),
			      const void *arg)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (!ef->elf || elf_getshdrstrndx(ef->elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(ef->elf, scn))) {
		const char *s;

		if (gelf_getshdr(scn, sh) && (s = elf_strptr(ef->elf, shstrndx, sh->sh_name)) &&
		    match(s, sh, arg))
			return scn;
	}
	return NULL;
}

static bool named(const char *s, const GElf_Shdr *sh, const void *name)
{
	return !strcmp(s, name);
}

static bool holds(const char *s, const GElf_Shdr *sh, const void *off)
{
	__u64 at = *(const __u64 *)off;

	return at >= sh->sh_offset && at < sh->sh_offset + sh->sh_size;
}

Elf_Scn *elf_file_section(struct elf_file *ef, const char *name, GElf_Shdr *sh)
{
	return section_where(ef, sh, named, name);
}

const char *elf_file_section_at(struct elf_file *ef, __u64 off)
{
	GElf_Shdr sh;
	size_t shstrndx;

	if (!section_where(ef, &sh, holds, &off) || elf_getshdrstrndx(ef->elf, &shstrndx))
		return NULL;
	return elf_strptr(ef->elf, shstrndx, sh.sh_name);
}

/* ==== Raw bytes and segments ==== */

int elf_file_read(struct elf_file *ef, __u64 off, void *buf, size_t len)
{
	if (off > ef->image_size || len > ef->image_size - off)
		return -EINVAL;
	memcpy(buf, ef->image + off, len);
	return 0;
}

/* The PT_LOAD segment whose file-backed part holds vaddr, or NULL. */
static const GElf_Phdr *segment_of_vaddr(const struct elf_file *ef, __u64 vaddr)
{
	for (size_t i = 0; i < ef->phnum; i++) {
		const GElf_Phdr *ph = &ef->phdrs[i];

		if (ph->p_type == PT_LOAD && vaddr >= ph->p_vaddr &&
		    vaddr - ph->p_vaddr < ph->p_filesz)
			return ph;
	}
	return NULL;
}

int elf_file_read_vaddr(struct elf_file *ef, __u64 vaddr, void *buf, size_t len)
{
	const GElf_Phdr *ph = segment_of_vaddr(ef, vaddr);

	if (!ph || len > ph->p_filesz - (vaddr - ph->p_vaddr))
		return -EFAULT;
	return elf_file_read(ef, ph->p_offset + (vaddr - ph->p_vaddr), buf, len) ? -EFAULT : 0;
}

int elf_file_off_to_vaddr(struct elf_file *ef, __u64 off, __u64 *vaddr)
{
	for (size_t i = 0; i < ef->phnum; i++) {
		const GElf_Phdr *ph = &ef->phdrs[i];

		if (ph->p_type == PT_LOAD && off >= ph->p_offset &&
		    off - ph->p_offset < ph->p_filesz) {
			*vaddr = ph->p_vaddr + (off - ph->p_offset);
			return 0;
		}
	}
	return -ENOENT;
}

int elf_file_vaddr_to_off(struct elf_file *ef, __u64 vaddr, __u64 *off)
{
	const GElf_Phdr *ph = segment_of_vaddr(ef, vaddr);

	if (!ph)
		return -ENOENT;
	*off = ph->p_offset + (vaddr - ph->p_vaddr);
	return 0;
}

int elf_file_load_bias(struct elf_file *ef, __u64 map_start, __u64 map_offset, __u64 *bias)
{
	const GElf_Phdr *best = NULL;
	__u64 page = (__u64)sysconf(_SC_PAGESIZE);

	for (size_t i = 0; i < ef->phnum; i++) {
		const GElf_Phdr *ph = &ef->phdrs[i];
		__u64 lo = ph->p_offset & ~(page - 1);

		if (ph->p_type != PT_LOAD)
			continue;
		if (lo == map_offset) {
			best = ph;
			break;
		}
		if (!best && map_offset >= lo && map_offset < ph->p_offset + ph->p_filesz)
			best = ph;
	}
	if (!best)
		return -ENOENT;
	*bias = map_start - map_offset + best->p_offset - best->p_vaddr;
	return 0;
}

bool elf_file_is_dyn(struct elf_file *ef)
{
	return ef->ehdr.e_type == ET_DYN;
}

bool elf_file_is_dynamic(struct elf_file *ef)
{
	for (size_t i = 0; i < ef->phnum; i++) {
		if (ef->phdrs[i].p_type == PT_INTERP || ef->phdrs[i].p_type == PT_DYNAMIC)
			return true;
	}
	return false;
}

int elf_file_eh_frame_hdr(struct elf_file *ef, __u64 *vaddr, __u64 *size)
{
	for (size_t i = 0; i < ef->phnum; i++) {
		if (ef->phdrs[i].p_type == PT_GNU_EH_FRAME) {
			*vaddr = ef->phdrs[i].p_vaddr;
			*size = ef->phdrs[i].p_memsz;
			return 0;
		}
	}
	return -ENOENT;
}

/* ==== Notes: build ID ==== */

const char *elf_file_build_id(struct elf_file *ef)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *id;
	ssize_t n;

	if (ef->build_id_done)
		return ef->build_id;
	ef->build_id_done = true;
	/* libdw's reader: the note sections, or the PT_NOTE segments of a
	 * file without sections. */
	n = dwelf_elf_gnu_build_id(ef->elf, (const void **)&id);
	if (n <= 0)
		return NULL;
	ef->build_id = malloc((size_t)n * 2 + 1);
	if (!ef->build_id)
		return NULL;
	for (ssize_t i = 0; i < n; i++) {
		ef->build_id[2 * i] = hex[id[i] >> 4];
		ef->build_id[2 * i + 1] = hex[id[i] & 15];
	}
	ef->build_id[n * 2] = '\0';
	return ef->build_id;
}

/* ==== Debug links ==== */

int elf_file_debuglink(struct elf_file *ef, const char **name, __u32 *crc)
{
	GElf_Word word;
	const char *link = dwelf_elf_gnu_debuglink(ef->elf, &word);

	if (!link || !*link)
		return -ENOENT;
	*name = link;
	*crc = word;
	return 0;
}

__u32 elf_file_crc32(struct elf_file *ef)
{
	uLong crc = crc32(0L, Z_NULL, 0);
	size_t done = 0;

	while (done < ef->image_size) { /* zlib takes uInt lengths */
		size_t n = ef->image_size - done;

		if (n > (1u << 30))
			n = 1u << 30;
		crc = crc32(crc, (const Bytef *)ef->image + done, (uInt)n);
		done += n;
	}
	return (__u32)crc;
}

bool elf_file_has_symtab(struct elf_file *ef)
{
	return ef->symtab != NULL;
}

bool elf_file_has_dwarf(struct elf_file *ef)
{
	return ef->has_dwarf;
}

/* ==== Symbols ==== */

static bool sym_is_func(const GElf_Sym *sym)
{
	int type = GELF_ST_TYPE(sym->st_info);

	return (type == STT_FUNC || type == STT_GNU_IFUNC) && sym->st_shndx != SHN_UNDEF;
}

static bool sym_is_object(const GElf_Sym *sym)
{
	return GELF_ST_TYPE(sym->st_info) == STT_OBJECT && sym->st_shndx != SHN_UNDEF;
}

/* Number of symbols in a symbol section, 0 when unusable. */
static size_t sym_count(Elf_Scn *scn, Elf_Data **data, GElf_Shdr *sh)
{
	if (!scn || !gelf_getshdr(scn, sh) || !sh->sh_entsize)
		return 0;
	*data = elf_getdata(scn, NULL);
	if (!*data)
		return 0;
	return (*data)->d_size / sh->sh_entsize;
}

/* Whether .dynsym entry i has a hidden (non-default) version. */
static bool dynsym_hidden(struct elf_file *ef, size_t i)
{
	Elf_Data *vd = ef->versym ? elf_getdata(ef->versym, NULL) : NULL;
	GElf_Versym v;

	return vd && gelf_getversym(vd, (int)i, &v) && (v & VERSYM_HIDDEN);
}

/* Look name up in one table. *hidden_only tells the caller the only match
 * was a hidden version (kept in *found as a fallback). */
static bool sym_find_in(struct elf_file *ef, Elf_Scn *scn, const char *name,
			bool (*want)(const GElf_Sym *), GElf_Sym *found, bool *have_fallback)
{
	GElf_Shdr sh;
	Elf_Data *data = NULL;
	size_t n = sym_count(scn, &data, &sh);

	for (size_t i = 1; i < n; i++) {
		GElf_Sym sym;
		const char *s;

		if (!gelf_getsym(data, (int)i, &sym) || !want(&sym))
			continue;
		s = elf_strptr(ef->elf, sh.sh_link, sym.st_name);
		if (!s || strcmp(s, name))
			continue;
		if (scn == ef->dynsym && dynsym_hidden(ef, i)) {
			if (!*have_fallback) {
				*found = sym;
				*have_fallback = true;
			}
			continue;
		}
		*found = sym;
		return true;
	}
	return false;
}

/* The symbol `name` that want() accepts: .dynsym first, then .symtab. */
static int sym_find(struct elf_file *ef, const char *name, bool (*want)(const GElf_Sym *),
		    GElf_Sym *sym)
{
	bool fallback = false;

	if (!sym_find_in(ef, ef->dynsym, name, want, sym, &fallback) &&
	    !sym_find_in(ef, ef->symtab, name, want, sym, &fallback) && !fallback)
		return -ENOENT;
	return 0;
}

static int symbol_vaddr(struct elf_file *ef, const char *name, bool (*want)(const GElf_Sym *),
			__u64 *vaddr, __u64 *size)
{
	GElf_Sym sym;

	if (sym_find(ef, name, want, &sym))
		return -ENOENT;
	*vaddr = sym.st_value;
	if (size)
		*size = sym.st_size;
	return 0;
}

int elf_file_object_symbol(struct elf_file *ef, const char *name, __u64 *vaddr, __u64 *size)
{
	return symbol_vaddr(ef, name, sym_is_object, vaddr, size);
}

int elf_file_func_symbol(struct elf_file *ef, const char *name, __u64 *vaddr, __u64 *size)
{
	return symbol_vaddr(ef, name, sym_is_func, vaddr, size);
}

int elf_file_func_offset(struct elf_file *ef, const char *name, __u64 *file_off, __u64 *size)
{
	__u64 vaddr;

	if (elf_file_func_symbol(ef, name, &vaddr, size) ||
	    elf_file_vaddr_to_off(ef, vaddr, file_off))
		return -ENOENT;
	return 0;
}

/* End address of the section holding sym; start + 1 when unknown. */
static __u64 section_end(struct elf_file *ef, const GElf_Sym *sym)
{
	Elf_Scn *scn = sym->st_shndx < SHN_LORESERVE ? elf_getscn(ef->elf, sym->st_shndx) : NULL;
	GElf_Shdr sh;

	if (!scn || !gelf_getshdr(scn, &sh) || sym->st_value < sh.sh_addr ||
	    sym->st_value - sh.sh_addr >= sh.sh_size)
		return sym->st_value + 1;
	return sh.sh_addr + sh.sh_size;
}

static int sym_cmp(const void *a, const void *b)
{
	const struct elf_sym *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->rank != y->rank)
		return y->rank - x->rank; /* best first */
	return strcmp(x->name, y->name);  /* stable choice among equals */
}

/* Append the function symbols of one table. */
static int syms_collect(struct elf_file *ef, Elf_Scn *scn, size_t *cap)
{
	GElf_Shdr sh;
	Elf_Data *data = NULL;
	size_t n = sym_count(scn, &data, &sh);

	for (size_t i = 1; i < n; i++) {
		GElf_Sym sym;
		const char *s;
		const char *at, *name;
		int bind;

		if (!gelf_getsym(data, (int)i, &sym) || !sym_is_func(&sym))
			continue;
		s = elf_strptr(ef->elf, sh.sh_link, sym.st_name);
		if (!s || !*s)
			continue;
		if (ef->nsyms >= ELF_MAX_SYMS) {
			if (!ef->syms_cut)
				limit_hit();
			ef->syms_cut = true;
			break;
		}
		if (grow_array(&ef->syms, cap, ef->nsyms + 1, sizeof(*ef->syms)))
			return -ENOMEM;
		bind = GELF_ST_BIND(sym.st_info);
		at = strchr(s, '@');
		/* "__libc_start_main@@GLIBC_2.34" is shown without its version;
		 * with it when the pool refuses the name (the file is shared by
		 * every target: the one that opened it may be over its share) */
		name = at ? strpool_intern_len(s, at - s) : s;
		if (strpool_is_overflow(name))
			name = s;
		ef->syms[ef->nsyms++] = (struct elf_sym){
			.start = sym.st_value,
			.end = sym.st_size ? sym.st_value + sym.st_size : section_end(ef, &sym),
			.sized = sym.st_size != 0,
			.name = name,
			/* Among aliases prefer .symtab, sized, exported (not a
			 * local alias such as "__libc_start_main_alias_1"), the
			 * default version (not "cfree@GLIBC_2.2.5"), public
			 * ("calloc" over "__libc_calloc"), global over weak. */
			.rank = (scn == ef->symtab ? 32 : 0) + (sym.st_size ? 16 : 0) +
				(bind != STB_LOCAL ? 8 : 0) + (!at || at[1] == '@' ? 4 : 0) +
				(s[0] != '_' ? 2 : 0) + (bind == STB_GLOBAL),
		};
	}
	return 0;
}

static int syms_build(struct elf_file *ef)
{
	size_t cap = 0, w = 0;
	int err;

	err = syms_collect(ef, ef->symtab, &cap);
	if (!err)
		err = syms_collect(ef, ef->dynsym, &cap);
	if (err) {
		free(ef->syms);
		ef->syms = NULL;
		ef->nsyms = 0;
		return err;
	}
	if (ef->nsyms)
		qsort(ef->syms, ef->nsyms, sizeof(*ef->syms), sym_cmp);
	for (size_t i = 0; i < ef->nsyms; i++) { /* one entry per start, best rank */
		if (w && ef->syms[w - 1].start == ef->syms[i].start)
			continue;
		ef->syms[w++] = ef->syms[i];
	}
	ef->nsyms = w;
	/* Unsized symbols (assembly) extend to the next symbol, within their
	 * section (so _init does not swallow the PLT). */
	for (size_t i = 0; i < ef->nsyms; i++) {
		struct elf_sym *sym = &ef->syms[i];

		if (!sym->sized && i + 1 < ef->nsyms && ef->syms[i + 1].start < sym->end)
			sym->end = ef->syms[i + 1].start;
	}
	return 0;
}

int elf_file_symbol_at(struct elf_file *ef, __u64 vaddr, const char **name, __u64 *start)
{
	size_t lo = 0, hi;

	if (!ef->syms_done) {
		ef->syms_done = true;
		if (syms_build(ef))
			ef->syms_done = false; /* out of memory: try again next time */
	}
	hi = ef->nsyms;
	while (lo < hi) { /* first symbol with start > vaddr */
		size_t mid = lo + (hi - lo) / 2;

		if (ef->syms[mid].start <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Nested symbols: the nearest start may end before vaddr while an
	 * enclosing one a little earlier still covers it. */
	for (size_t i = lo, tries = 0; i > 0 && tries < 4; i--, tries++) {
		const struct elf_sym *sym = &ef->syms[i - 1];

		if (vaddr < sym->end) {
			*name = sym->name;
			*start = sym->start;
			return 0;
		}
	}
	return -ENOENT;
}

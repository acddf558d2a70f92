// SPDX-License-Identifier: GPL-2.0-only
/*
 * python.c - CPython interpreters in a target (python.h).
 *
 * Detection reads ELF files only: the mapped executable or libpython that
 * defines _PyRuntime, and its Py_Version (exported since 3.11) for the
 * version check against the headers memtop was built with (py_offsets.h,
 * generated). Naming reads the target's memory with process_vm_readv:
 * a code object's co_qualname, co_filename, co_firstlineno and
 * co_linetable, bounded in size, cached per (pid, code object) and
 * re-validated on every use by re-reading the fields the cache keeps.
 */
#include "stacks/python.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/uio.h>

#include "py_offsets.h"
#include "readers/elf_file.h"
#include "readers/target_file.h"
#include "memtop/sampler_abi.h"
#include "util/hmap.h"
#include "util/strpool.h"

#define PY_STR_MAX 512         /* longest name or path read from a target */
#define PY_LINETABLE_MAX 65536 /* longest location table read */
#define PY_CACHE_MAX 65536     /* code objects cached; then the cache restarts */

const char *python_supported_version(void)
{
	static char v[16];

	if (!v[0])
		snprintf(v, sizeof(v), "%u.%u", MT_PY_VERSION_HEX >> 24,
			 (MT_PY_VERSION_HEX >> 16) & 0xff);
	return v;
}

/* ==== detection ======================================================== */

static bool looks_like_python(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return !strncmp(base, "python", 6) || !strncmp(base, "libpython", 9);
}

/* Run-time addresses of the C API functions enum mt_py_api names, from
 * the interpreter file's symbols; 0 for one it does not define. */
static void api_find(struct elf_file *ef, __u64 bias, __u64 api[MT_PY_API_COUNT])
{
	static const char *const names[MT_PY_API_COUNT] = MT_PY_API_NAMES;
	__u64 off, vaddr;
	int k;

	for (k = 0; k < MT_PY_API_COUNT; k++)
		api[k] = !elf_file_func_offset(ef, names[k], &off, NULL) &&
					 !elf_file_off_to_vaddr(ef, off, &vaddr)
				 ? vaddr + bias
				 : 0;
}

/* The interpreter in one mapping's file, if it defines _PyRuntime. */
static int detect_in(pid_t pid, const struct mt_map *map, struct mt_py_proc *out, __u64 *api,
		     char *msg, size_t msglen)
{
	int fd = target_file_open_map(pid, map), e = -ENOENT;
	struct elf_file *ef;
	__u64 runtime, version_at, bias;
	unsigned long version = 0;

	if (fd < 0)
		return fd;
	ef = elf_file_open_fd(fd, map->path);
	if (!ef) {
		close(fd);
		return -errno;
	}
	if (elf_file_object_symbol(ef, "_PyRuntime", &runtime, NULL))
		goto out;
	if (elf_file_object_symbol(ef, "Py_Version", &version_at, NULL) ||
	    elf_file_read_vaddr(ef, version_at, &version, sizeof(version))) {
		snprintf(msg, msglen,
			 "%s is a CPython older than 3.11 (no Py_Version): memtop "
			 "reads the frames of CPython %s only",
			 map->path, python_supported_version());
		e = -ENOTSUP;
		goto out;
	}
	if ((version >> 16) != (MT_PY_VERSION_HEX >> 16)) {
		snprintf(msg, msglen,
			 "%s is CPython %lu.%lu: memtop reads the frames of CPython %s "
			 "only (built with its headers)",
			 map->path, version >> 24, (version >> 16) & 0xff,
			 python_supported_version());
		e = -ENOTSUP;
		goto out;
	}
	if (elf_file_load_bias(ef, map->start, map->offset, &bias)) {
		e = -ENOEXEC;
		goto out;
	}
	memset(out, 0, sizeof(*out));
	out->tstate_current = runtime + bias + MT_PY_RUNTIME_TSTATE_CURRENT;
	out->tstate_thread_id = MT_PY_TSTATE_THREAD_ID;
	out->tstate_cframe = MT_PY_TSTATE_CFRAME;
	out->cframe_current_frame = MT_PY_CFRAME_CURRENT_FRAME;
	out->frame_code = MT_PY_FRAME_CODE;
	out->frame_previous = MT_PY_FRAME_PREVIOUS;
	out->frame_prev_instr = MT_PY_FRAME_PREV_INSTR;
	out->frame_is_entry = MT_PY_FRAME_IS_ENTRY;
	if (api)
		api_find(ef, bias, api);
	snprintf(msg, msglen, "CPython %lu.%lu.%lu in %s", version >> 24, (version >> 16) & 0xff,
		 (version >> 8) & 0xff, map->path);
	e = 0;
out:
	elf_file_close(ef);
	return e;
}

int python_detect(pid_t pid, const struct mt_maps *maps, struct mt_py_proc *out, __u64 *api,
		  char *msg, size_t msglen)
{
	const char *tried = NULL;
	int e = -ENOENT;
	size_t i;

	if (msglen)
		msg[0] = '\0';
	for (i = 0; i < maps->n; i++) {
		const struct mt_map *m = &maps->v[i];

		/* each file once: at its first mapping (offset 0 maps the ELF header) */
		if (!m->path || m->path[0] != '/' || m->offset || m->path == tried ||
		    !looks_like_python(m->path))
			continue;
		tried = m->path;
		e = detect_in(pid, m, out, api, msg, msglen);
		if (e != -ENOENT)
			return e;
	}
	return -ENOENT;
}

/* ==== line tables ====================================================== */

static unsigned int read_varint(const __u8 *t, size_t len, size_t *i)
{
	unsigned int v = 0, shift = 0;
	__u8 b;

	do {
		if (*i >= len || shift > 28)
			return v;
		b = t[(*i)++];
		v |= (unsigned int)(b & 63) << shift;
		shift += 6;
	} while (b & 64);
	return v;
}

static int read_svarint(const __u8 *t, size_t len, size_t *i)
{
	unsigned int u = read_varint(t, len, i);

	return (u & 1) ? -(int)(u >> 1) : (int)(u >> 1);
}

int python_line_for(const __u8 *table, size_t len, int firstlineno, int instr)
{
	/* 64 bits: a table from the target can add up deltas of 2^29 each */
	__s64 line = firstlineno;
	int start = 0;
	size_t i = 0;

	if (instr < 0)
		return firstlineno;
	while (i < len) {
		__u8 first = table[i++];
		unsigned int code = (first >> 3) & 15, n = (first & 7) + 1;
		bool has_line = true;

		if (!(first & 0x80))
			break; /* not an entry start: a corrupt table */
		switch (code) {
		case 15: /* no location */
			has_line = false;
			break;
		case 14: /* long form */
			line += read_svarint(table, len, &i);
			read_varint(table, len, &i); /* end line delta */
			read_varint(table, len, &i); /* start column */
			read_varint(table, len, &i); /* end column */
			break;
		case 13: /* no columns */
			line += read_svarint(table, len, &i);
			break;
		case 10:
		case 11:
		case 12: /* one line: delta in the code, two column bytes */
			line += (int)code - 10;
			i += 2;
			break;
		default: /* short form: same line, one column byte */
			i += 1;
			break;
		}
		if (line < INT_MIN || line > INT_MAX)
			break; /* no real line: a corrupt table */
		if (instr < start + (int)n)
			return has_line ? (int)line : firstlineno;
		start += (int)n;
	}
	return firstlineno;
}

/* ==== reading the target =============================================== */

static int read_mem(pid_t pid, __u64 addr, void *buf, size_t len)
{
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };
	ssize_t n;

	if (!addr)
		return -EFAULT;
	n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EFAULT;
}

/* A str object's text, interned; NULL when it cannot be read. Compact
 * ASCII (every identifier and almost every path), or compact with a UTF-8
 * copy, or Latin-1 compact data. */
static const char *read_str(pid_t pid, __u64 obj)
{
	__u8 hdr[MT_PY_STR_COMPACT_DATA];
	char text[PY_STR_MAX + 1];
	__u64 length, utf8 = 0, utf8_len = 0;
	unsigned int state, kind;
	size_t n;

	if (read_mem(pid, obj, hdr, sizeof(hdr)))
		return NULL;
	memcpy(&length, hdr + MT_PY_STR_LENGTH, sizeof(length));
	memcpy(&state, hdr + MT_PY_STR_STATE, sizeof(state));
	if (!((state >> MT_PY_STR_STATE_COMPACT_BIT) & 1))
		return NULL;
	n = length < PY_STR_MAX ? (size_t)length : PY_STR_MAX;
	if ((state >> MT_PY_STR_STATE_ASCII_BIT) & 1) {
		if (read_mem(pid, obj + MT_PY_STR_ASCII_DATA, text, n))
			return NULL;
	} else {
		memcpy(&utf8, hdr + MT_PY_STR_COMPACT_UTF8, sizeof(utf8));
		memcpy(&utf8_len, hdr + MT_PY_STR_COMPACT_UTF8_LENGTH, sizeof(utf8_len));
		kind = (state >> MT_PY_STR_STATE_KIND_SHIFT) & 7;
		if (utf8) {
			n = utf8_len < PY_STR_MAX ? (size_t)utf8_len : PY_STR_MAX;
			if (read_mem(pid, utf8, text, n))
				return NULL;
		} else if (kind == 1) { /* Latin-1: keep ASCII, mark the rest */
			size_t k;

			if (read_mem(pid, obj + MT_PY_STR_COMPACT_DATA, text, n))
				return NULL;
			for (k = 0; k < n; k++)
				if ((unsigned char)text[k] >= 0x80)
					text[k] = '?';
		} else {
			return NULL;
		}
	}
	text[n] = '\0';
	if (memchr(text, '\0', n))
		return NULL;
	return strpool_intern(text);
}

/* ==== the code-object cache ============================================ */

/* The fields of a code object the cache checks on every hit. */
struct code_check {
	__s32 firstlineno;
	__u64 filename;
	__u64 qualname;
	__u64 linetable;
};

struct code_info {
	pid_t pid;
	__u64 code;
	struct code_check check;
	const char *qualname;
	const char *filename;
	__u8 *linetable;
	size_t linetable_len;
};

struct python_names {
	struct hmap codes;
	const char *module; /* "[python]" */
};

static __u64 code_hash(pid_t pid, __u64 code)
{
	return hmap_mix(hmap_mix(0x9e3779b97f4a7c15ULL, (__u64)pid), code);
}

struct code_key {
	pid_t pid;
	__u64 code;
};

static bool code_eq(const void *val, const void *key)
{
	const struct code_info *c = val;
	const struct code_key *k = key;

	return c->pid == k->pid && c->code == k->code;
}

struct python_names *python_names_new(void)
{
	struct python_names *pn = calloc(1, sizeof(*pn));

	if (!pn)
		return NULL;
	hmap_init(&pn->codes);
	pn->module = strpool_intern("[python]");
	return pn;
}

static void drop_all(struct python_names *pn, pid_t only)
{
	size_t i;

	for (i = 0; i < pn->codes.cap; i++) {
		struct code_info *c = pn->codes.v[i].val;

		if (c && (only <= 0 || c->pid == only)) {
			struct code_key k = { c->pid, c->code };

			hmap_del(&pn->codes, pn->codes.v[i].hash, code_eq, &k);
			free(c->linetable);
			free(c);
			i--; /* backward-shift deletion may have moved another entry here */
		}
	}
}

void python_names_forget(struct python_names *pn, pid_t pid)
{
	if (pn)
		drop_all(pn, pid);
}

void python_names_free(struct python_names *pn)
{
	if (!pn)
		return;
	drop_all(pn, 0);
	hmap_fini(&pn->codes);
	free(pn);
}

static int read_check(pid_t pid, __u64 code, struct code_check *out)
{
	__u8 buf[MT_PY_CODE_LINETABLE + 8 - MT_PY_CODE_FIRSTLINENO];
	const __u8 *b = buf - MT_PY_CODE_FIRSTLINENO;
	int e = read_mem(pid, code + MT_PY_CODE_FIRSTLINENO, buf, sizeof(buf));

	if (e)
		return e;
	memset(out, 0, sizeof(*out));
	memcpy(&out->firstlineno, b + MT_PY_CODE_FIRSTLINENO, sizeof(out->firstlineno));
	memcpy(&out->filename, b + MT_PY_CODE_FILENAME, sizeof(out->filename));
	memcpy(&out->qualname, b + MT_PY_CODE_QUALNAME, sizeof(out->qualname));
	memcpy(&out->linetable, b + MT_PY_CODE_LINETABLE, sizeof(out->linetable));
	return 0;
}

static struct code_info *code_load(pid_t pid, __u64 code, const struct code_check *chk)
{
	struct code_info *c = calloc(1, sizeof(*c));
	__u64 size = 0;

	if (!c)
		return NULL;
	c->pid = pid;
	c->code = code;
	c->check = *chk;
	c->qualname = read_str(pid, chk->qualname);
	c->filename = read_str(pid, chk->filename);
	if (!read_mem(pid, chk->linetable + MT_PY_BYTES_SIZE, &size, sizeof(size)) && size &&
	    size <= PY_LINETABLE_MAX) {
		c->linetable = malloc(size);
		if (c->linetable &&
		    !read_mem(pid, chk->linetable + MT_PY_BYTES_DATA, c->linetable, size))
			c->linetable_len = size;
	}
	return c;
}

int python_names_resolve(struct python_names *pn, pid_t pid, const struct mt_py_frame *pf,
			 struct mt_frame *out)
{
	struct code_key key = { pid, pf->code };
	__u64 h = code_hash(pid, pf->code);
	struct code_info *c = hmap_get(&pn->codes, h, code_eq, &key);
	struct code_check chk;
	__s64 instr;
	int e;

	memset(out, 0, sizeof(*out));
	out->addr = pf->instr;
	out->module = pn->module;
	out->flags = MT_FRAME_PYTHON;
	e = read_check(pid, pf->code, &chk);
	if (e)
		return e;
	if (c && memcmp(&c->check, &chk, sizeof(chk))) { /* a new code object here */
		hmap_del(&pn->codes, h, code_eq, &key);
		free(c->linetable);
		free(c);
		c = NULL;
	}
	if (!c) {
		if (pn->codes.len >= PY_CACHE_MAX)
			drop_all(pn, 0);
		c = code_load(pid, pf->code, &chk);
		if (!c)
			return -ENOMEM;
		if (hmap_put(&pn->codes, h, c)) {
			free(c->linetable);
			free(c);
			return -ENOMEM;
		}
	}
	instr = pf->instr >= pf->code + MT_PY_CODE_ADAPTIVE
			? (__s64)(pf->instr - (pf->code + MT_PY_CODE_ADAPTIVE)) / MT_PY_CODEUNIT_SIZE
			: -1;
	out->rel_addr = instr >= 0 ? (__u64)instr * MT_PY_CODEUNIT_SIZE : 0;
	out->function = c->qualname;
	out->file = c->filename;
	out->line = (__u32)python_line_for(c->linetable, c->linetable_len, c->check.firstlineno,
					   instr > 0x7fffffff ? 0x7fffffff : (int)instr);
	return 0;
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * go_binary.c - a Go executable's version and symbol table (go_binary.h).
 *
 * The build info (src/debug/buildinfo/buildinfo.go reads the same) starts
 * with the 14-byte magic "\xff Go buildinf:", a pointer size and a flags
 * byte; with flag 2 (Go 1.18 and later) the version follows inline at
 * offset 32 as a uvarint length and its bytes.
 */
#include "stacks/go_binary.h"

#include <errno.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "readers/elf_file.h"

#define BUILDINFO_MAGIC "\xff Go buildinf:"
#define BUILDINFO_MAGIC_LEN 14
#define BUILDINFO_INLINE 0x2
#define BUILDINFO_HDR 32
#define BUILDINFO_READ 4096            /* the version is near the start */
#define TABLE_MAX (512u * 1024 * 1024) /* larger than any real Go binary's */

/* The header of section name: its file offset, size and address. */
static int section(struct elf_file *ef, const char *name, GElf_Shdr *out)
{
	return elf_file_section(ef, name, out) && out->sh_type != SHT_NOBITS ? 0 : -ENOENT;
}

bool go_binary_is_go(struct elf_file *ef)
{
	GElf_Shdr sh;

	return !section(ef, ".go.buildinfo", &sh) || !section(ef, ".gopclntab", &sh);
}

int go_buildinfo_version(const __u8 *sec, size_t len, char *out, size_t outlen)
{
	__u64 n = 0;
	size_t off = BUILDINFO_HDR;

	if (!sec || len < BUILDINFO_HDR || memcmp(sec, BUILDINFO_MAGIC, BUILDINFO_MAGIC_LEN))
		return -EINVAL;
	if (!(sec[15] & BUILDINFO_INLINE))
		return -ENOTSUP;
	for (unsigned int shift = 0;; shift += 7) {
		if (off >= len || shift > 28)
			return -EINVAL;
		n |= (__u64)(sec[off] & 0x7f) << shift;
		if (!(sec[off++] & 0x80))
			break;
	}
	if (!n || n > len - off || n >= outlen)
		return -EINVAL;
	memcpy(out, sec + off, n);
	out[n] = '\0';
	for (size_t i = 0; i < n; i++)
		if (out[i] < 0x21 || out[i] > 0x7e)
			return -EINVAL;
	return 0;
}

int go_version_parse(const char *version, int *major, int *minor)
{
	char tail;

	*major = *minor = 0;
	if (!version || strncmp(version, "go", 2))
		return -EINVAL;
	/* go1.21, go1.21.13, go1.23rc1, go1.22.12 X:... */
	if (sscanf(version + 2, "%d.%d%c", major, minor, &tail) < 2 || *major <= 0 || *minor < 0) {
		*major = *minor = 0;
		return -EINVAL;
	}
	return 0;
}

/* The bytes of a section, at most max of them; NULL if absent. */
static __u8 *read_section(struct elf_file *ef, const GElf_Shdr *sh, size_t max, size_t *len)
{
	size_t n = sh->sh_size < max ? sh->sh_size : max;
	__u8 *buf;

	if (!n)
		return NULL;
	buf = malloc(n);
	if (buf && elf_file_read(ef, sh->sh_offset, buf, n)) {
		free(buf);
		return NULL;
	}
	*len = n;
	return buf;
}

static void read_version(struct elf_file *ef, struct go_binary *gb)
{
	GElf_Shdr sh;
	size_t len;
	__u8 *b;

	if (section(ef, ".go.buildinfo", &sh))
		return;
	b = read_section(ef, &sh, BUILDINFO_READ, &len);
	if (b && !go_buildinfo_version(b, len, gb->version, sizeof(gb->version)))
		go_version_parse(gb->version, &gb->major, &gb->minor);
	else
		gb->version[0] = '\0';
	free(b);
}

int go_binary_open(struct elf_file *ef, struct go_binary *gb)
{
	GElf_Shdr sh, text;
	size_t len;

	memset(gb, 0, sizeof(*gb));
	if (!go_binary_is_go(ef))
		return -ENOENT;
	read_version(ef, gb);
	if (section(ef, ".gopclntab", &sh) || sh.sh_size > TABLE_MAX)
		return 0;
	gb->table_bytes = read_section(ef, &sh, TABLE_MAX, &len);
	if (!gb->table_bytes)
		return 0;
	if (section(ef, ".text", &text))
		text.sh_addr = 0;
	gb->has_table = !go_pclntab_init(&gb->tab, gb->table_bytes, len, text.sh_addr);
	return 0;
}

void go_binary_close(struct go_binary *gb)
{
	if (!gb)
		return;
	free(gb->table_bytes);
	memset(gb, 0, sizeof(*gb));
}

int go_binary_func(struct elf_file *ef, const struct go_binary *gb, const char *name,
		   __u64 *file_off, __u64 *size)
{
	__u64 entry, end;

	if (!elf_file_func_offset(ef, name, file_off, size))
		return 0;
	if (!gb->has_table || go_pclntab_find(&gb->tab, name, &entry, &end) ||
	    elf_file_vaddr_to_off(ef, entry, file_off))
		return -ENOENT;
	*size = end - entry;
	return 0;
}

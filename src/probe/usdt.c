// SPDX-License-Identifier: GPL-2.0-only
/*
 * usdt.c - reads SystemTap SDT notes: in section .note.stapsdt, notes of
 * type 3 named "stapsdt" whose descriptor holds three addresses (probe pc,
 * .stapsdt.base, semaphore) followed by the provider, the probe name and
 * the argument string, each NUL-terminated. Only the names matter here;
 * libbpf reads the rest when it attaches.
 */
#include "probe/usdt.h"

#include <errno.h>
#include <gelf.h>
#include <stdio.h>
#include <string.h>

#include "readers/proc_maps.h"
#include "readers/target_file.h"

#define NT_STAPSDT 3

bool usdt_has_probe(struct elf_file *ef, const char *provider, const char *name)
{
	Elf *elf = elf_file_libelf(ef);
	GElf_Shdr sh;
	Elf_Scn *scn = elf_file_section(ef, ".note.stapsdt", &sh);

	if (scn && sh.sh_type == SHT_NOTE) {
		Elf_Data *data;
		GElf_Nhdr nh;
		size_t off = 0, next, name_off, desc_off;

		data = elf_getdata(scn, NULL);
		while (data && (next = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
			const char *desc = (const char *)data->d_buf + desc_off;
			size_t addrs = 3 * (gelf_getclass(elf) == ELFCLASS32 ? 4 : 8);
			const char *prov, *probe;

			off = next;
			if (nh.n_type != NT_STAPSDT || nh.n_descsz <= addrs ||
			    desc_off + nh.n_descsz > data->d_size)
				continue;
			prov = desc + addrs;
			if (!memchr(prov, '\0', nh.n_descsz - addrs))
				continue;
			probe = prov + strlen(prov) + 1;
			if (probe >= desc + nh.n_descsz ||
			    !memchr(probe, '\0', desc + nh.n_descsz - probe))
				continue;
			if (!strcmp(prov, provider) && !strcmp(probe, name))
				return true;
		}
	}
	return false;
}

int usdt_find_in_maps(pid_t pid, const struct mt_maps *maps, const char *provider, char *path,
		      size_t len)
{
	const char *last = NULL;
	size_t i;
	int e = -ENOENT;

	for (i = 0; i < maps->n && e; i++) {
		const struct mt_map *m = &maps->v[i];
		struct elf_file *ef;
		int fd;

		/* each file once: its mappings are adjacent */
		if (!m->path || m->path[0] != '/' || m->path == last)
			continue;
		last = m->path;
		fd = target_file_open_map(pid, m);
		ef = fd >= 0 ? elf_file_open_fd(fd, m->path) : NULL;
		if (!ef)
			continue;
		if (usdt_has_probe(ef, provider, "alloc") && usdt_has_probe(ef, provider, "free"))
			e = target_file_map_path(pid, m, path, len);
		elf_file_close(ef);
	}
	return e;
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * fake_sampler.c - a process that pretends a killed memtop left its
 * sampler in it (tests/integration/test_hostile.py, issue 28 item 4): it
 * maps a copy of libmemtop-inject.so from a memfd named memtop-sampler,
 * segment by segment as memtop would, and writes a dead PID into the
 * control block's attached_pid. Nothing in its GOT points there. A plain
 * `memtop -p` must only look at it.
 *
 *   fake_sampler SAMPLER.so DEAD_PID
 *
 * Prints "READY pid=N ctl=0xADDR", then mallocs and frees until stdin
 * closes.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "memtop/sampler_abi.h"

#define PAGE 4096UL

static unsigned char *slurp(const char *path, size_t *len)
{
	struct stat st;
	unsigned char *p;
	int fd = open(path, O_RDONLY);

	if (fd < 0 || fstat(fd, &st) || !(p = malloc(st.st_size)) ||
	    read(fd, p, st.st_size) != st.st_size) {
		perror(path);
		exit(1);
	}
	close(fd);
	*len = st.st_size;
	return p;
}

/* The link-time address of symbol name in .symtab, or 0. */
static unsigned long symbol(const unsigned char *f, const char *name)
{
	const Elf64_Ehdr *eh = (const void *)f;
	const Elf64_Shdr *sh = (const void *)(f + eh->e_shoff);
	int i;

	for (i = 0; i < eh->e_shnum; i++) {
		const Elf64_Sym *sym = (const void *)(f + sh[i].sh_offset);
		const char *str = (const char *)f + sh[sh[i].sh_link].sh_offset;
		size_t j;

		if (sh[i].sh_type != SHT_SYMTAB)
			continue;
		for (j = 0; j < sh[i].sh_size / sizeof(*sym); j++)
			if (!strcmp(str + sym[j].st_name, name))
				return sym[j].st_value;
	}
	return 0;
}

int main(int argc, char **argv)
{
	const Elf64_Ehdr *eh;
	const Elf64_Phdr *ph;
	unsigned long span = 0, ctl;
	unsigned char *f, *base;
	size_t len;
	unsigned int dead;
	int fd, i;

	if (argc != 3) {
		fprintf(stderr, "usage: fake_sampler SAMPLER.so DEAD_PID\n");
		return 2;
	}
	f = slurp(argv[1], &len);
	dead = (unsigned int)atoi(argv[2]);
	eh = (const void *)f;
	ph = (const void *)(f + eh->e_phoff);
	fd = memfd_create(MT_INJECT_MEMFD_NAME, MFD_CLOEXEC);
	if (fd < 0 || write(fd, f, len) != (ssize_t)len) {
		perror("memfd");
		return 1;
	}
	for (i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_LOAD && ph[i].p_vaddr + ph[i].p_memsz > span)
			span = (ph[i].p_vaddr + ph[i].p_memsz + PAGE - 1) & ~(PAGE - 1);
	base = mmap(NULL, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	for (i = 0; base != MAP_FAILED && i < eh->e_phnum; i++) {
		unsigned long start = ph[i].p_vaddr & ~(PAGE - 1);
		unsigned long end = (ph[i].p_vaddr + ph[i].p_memsz + PAGE - 1) & ~(PAGE - 1);

		if (ph[i].p_type != PT_LOAD)
			continue;
		if (mmap(base + start, end - start, PROT_READ | PROT_WRITE | PROT_EXEC,
			 MAP_PRIVATE | MAP_FIXED, fd, ph[i].p_offset & ~(PAGE - 1)) == MAP_FAILED) {
			perror("mmap");
			return 1;
		}
	}
	ctl = symbol(f, MT_INJECT_CTL_SYMBOL);
	if (base == MAP_FAILED || !ctl) {
		fprintf(stderr, "cannot lay the sampler out\n");
		return 1;
	}
	memcpy(base + ctl + offsetof(struct mt_inject_ctl, attached_pid), &dead, sizeof(dead));
	printf("READY pid=%d ctl=%#lx\n", getpid(), (unsigned long)(base + ctl));
	fflush(stdout);
	fcntl(0, F_SETFL, O_NONBLOCK);
	for (;;) {
		char c;
		void *p = malloc(4096);

		free(p);
		if (read(0, &c, 1) == 0)
			return 0;
		usleep(1000);
	}
}

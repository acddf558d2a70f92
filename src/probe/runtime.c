// SPDX-License-Identifier: GPL-2.0-only
/*
 * runtime.c - which managed runtime a process runs (runtime.h), from what
 * it maps: the file names are the runtimes' own (libjvm.so, libnode.so.*,
 * libpython3.*.so, the node and python binaries), and a Go executable
 * carries a .go.buildinfo section (Go >= 1.13) or, older or stripped of
 * it, the runtime.mallocgc symbol.
 */
#include "probe/runtime.h"

#include <errno.h>
#include <fnmatch.h>
#include <gelf.h>
#include <stdio.h>
#include <string.h>

#include "readers/elf_file.h"
#include "readers/proc_maps.h"

struct known {
	const char *pattern; /* fnmatch() over the mapped file's base name */
	const struct runtime_info *info;
};

static const struct runtime_info jvm = {
	"JVM", "the Java heap",
	"jcmd PID GC.class_histogram, jmap -dump:live, or async-profiler -e alloc"
};

static const struct runtime_info node = {
	"Node/V8", "the V8 heap",
	"node --heapsnapshot-signal=SIGUSR2 or --inspect (DevTools Memory), --heap-prof"
};

static const struct runtime_info cpython = {
	"CPython",
	"pymalloc's objects (512 bytes or less, in the arenas shown as one site, \"pymalloc arenas\")",
	"memtop --inject (wraps its object allocator), tracemalloc or memray"
};

static const struct known by_file[] = {
	{ "libjvm.so", &jvm }, { "libnode.so*", &node },        { "node", &node },
	{ "nodejs", &node },   { "libpython3*.so*", &cpython }, { "python3*", &cpython },
};

static const struct runtime_info go = {
	"Go", "the Go heap",
	"net/http/pprof's /debug/pprof/heap (go tool pprof) or runtime/pprof.WriteHeapProfile"
};

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

static bool has_section(struct elf_file *ef, const char *name)
{
	GElf_Shdr sh;

	return elf_file_section(ef, name, &sh) != NULL;
}

static bool is_go(pid_t pid)
{
	char exe[64];
	struct elf_file *ef;
	__u64 off, size;
	bool yes;

	snprintf(exe, sizeof(exe), "/proc/%d/exe", pid);
	ef = elf_file_open(exe);
	if (!ef)
		return false;
	yes = has_section(ef, ".go.buildinfo") ||
	      !elf_file_func_offset(ef, "runtime.mallocgc", &off, &size);
	elf_file_close(ef);
	return yes;
}

int runtime_detect(pid_t pid, struct runtime_info *out)
{
	struct mt_maps maps;
	size_t i, k;
	int e = proc_maps_read(pid, &maps);

	memset(out, 0, sizeof(*out));
	if (e)
		return e;
	for (i = 0; i < maps.n && !out->name; i++) {
		const char *p = maps.v[i].path;

		if (!p || p[0] != '/')
			continue;
		for (k = 0; k < sizeof(by_file) / sizeof(by_file[0]); k++) {
			if (!fnmatch(by_file[k].pattern, base_name(p), 0)) {
				*out = *by_file[k].info;
				break;
			}
		}
	}
	proc_maps_free(&maps);
	if (!out->name && is_go(pid))
		*out = go;
	return 0;
}

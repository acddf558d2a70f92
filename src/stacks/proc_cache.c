// SPDX-License-Identifier: GPL-2.0-only
/*
 * proc_cache.c - per-process mappings and the ELF files behind them.
 *
 * Owns two tables (util/hmap). Processes (by pid) hold their parsed maps; a lookup
 * that misses re-reads /proc/PID/maps, at most once per REREAD_NS per
 * process, so libraries dlopen'ed after attach are found while addresses
 * that are truly unmapped cost a binary search. The pause after a read is
 * also REREAD_COST_FACTOR times what the read took: a target whose maps are
 * long and always changing (each read slow, every sample a miss) gets at
 * most a tenth of memtop's time, not all of it. A miss sooner than
 * REREAD_NS re-reads when a sample newer than the table was noted
 * (proc_cache_note_sample): the table cannot know a mapping made after it
 * was read, such as a library the loader mapped just after the first read
 * of a starting process; at most EARLY_REREADS of these per
 * EARLY_WINDOW_NS, and never sooner than the cost factor allows. A table
 * older than
 * MAX_AGE_NS is re-read on its next use even on a hit, so an address
 * reused by a later mmap (dlclose, then dlopen of another library) is
 * named after the new mapping within seconds. A re-read does not free
 * the previous table at once: the last GENERATIONS tables stay allocated,
 * so a `const struct mt_map *` handed out stays valid across the next
 * GENERATIONS - 1 re-reads of that process (at least 0.7 s).
 *
 * Files (by device, inode, size and mtime from fstat) hold one elf_file
 * each, shared by every mapping of every process that maps the file, and
 * are closed when the last such mapping is dropped. A mapping's file is
 * opened once, by target_file_open_map() (map_files first; a path only
 * while it names the mapped inode; regular files only, never blocking).
 * Not thread-safe: one thread uses a proc_cache at a time.
 */
#include "stacks/proc_cache.h"

#include "readers/target_file.h"
#include "util/clock.h"
#include "util/file_id.h"
#include "util/hmap.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define GENERATIONS 8
#define REREAD_NS (100 * 1000 * 1000ULL)
#define REREAD_COST_FACTOR 9
#define MAX_AGE_NS (5 * 1000 * 1000 * 1000ULL)
#define EARLY_REREADS PROC_CACHE_EARLY_REREADS
#define EARLY_WINDOW_NS (1000 * 1000 * 1000ULL)

struct pc_file {
	struct file_id id;
	struct elf_file *ef;
	unsigned long refs; /* mapping slots pointing here */
};

/* Sentinel for a mapping whose file could not be opened. */
static struct pc_file file_failed;
/* Sentinel for one not opened because its process had too many open:
 * not inherited by the next generation, so tried again then. */
static struct pc_file file_refused;

struct pc_gen {
	struct mt_maps maps;
	struct pc_file **files; /* parallel to maps.v; NULL = not tried yet */
};

struct pc_proc {
	pid_t pid;
	struct pc_gen gens[GENERATIONS]; /* ring; gens[cur] is current */
	unsigned int cur;
	__u64 last_read_ns;    /* when the last read ended */
	__u64 reread_gap_ns;   /* the least time to the next one after a miss */
	__u64 read_ns;         /* fine clock: when the current table's read began */
	__u64 sample_ns;       /* newest sample noted (proc_cache_note_sample) */
	__u64 early_window_ns; /* early re-reads are counted since */
	unsigned int early_rereads;
	size_t open_maps;              /* slots of gens[cur] holding an open file */
	__u64 files_refused, maps_cut; /* since proc_cache_take_limits() */
};

struct proc_cache {
	struct hmap procs;    /* struct pc_proc, by pid */
	struct hmap files;    /* struct pc_file, by file_id */
	struct pc_proc *last; /* most recently used process */
};

struct proc_cache *proc_cache_new(void)
{
	struct proc_cache *pc = calloc(1, sizeof(*pc));

	if (!pc) {
		errno = ENOMEM;
		return NULL;
	}
	hmap_init(&pc->procs);
	hmap_init(&pc->files);
	return pc;
}

/* ==== Files ==== */

static bool file_eq(const void *val, const void *key)
{
	return file_id_equal(&((const struct pc_file *)val)->id, key);
}

static void file_put(struct proc_cache *pc, struct pc_file *f)
{
	if (!f || f == &file_failed || f == &file_refused || --f->refs)
		return;
	hmap_del(&pc->files, file_id_hash(&f->id), file_eq, &f->id);
	elf_file_close(f->ef);
	free(f);
}

bool proc_cache_has_file(const struct proc_cache *pc, const struct file_id *id)
{
	return hmap_get(&pc->files, file_id_hash(id), file_eq, id) != NULL;
}

static struct pc_file *file_get(struct proc_cache *pc, pid_t pid, const struct mt_map *map)
{
	struct file_id id;
	struct pc_file *f;
	struct stat st;
	int fd;

	if (!map->path || map->path[0] == '[')
		return &file_failed;
	fd = target_file_open_map(pid, map);
	if (fd < 0)
		return &file_failed;
	if (fstat(fd, &st)) {
		close(fd);
		return &file_failed;
	}
	id = file_id_of_stat(&st);
	f = hmap_get(&pc->files, file_id_hash(&id), file_eq, &id);
	if (f) {
		close(fd);
		f->refs++;
		return f;
	}
	f = calloc(1, sizeof(*f));
	if (!f) {
		close(fd);
		return &file_failed;
	}
	f->ef = elf_file_open_fd(fd, map->path);
	if (!f->ef) {
		free(f);
		return &file_failed;
	}
	f->id = *elf_file_id(f->ef);
	f->refs = 1;
	if (hmap_put(&pc->files, file_id_hash(&f->id), f)) {
		elf_file_close(f->ef);
		free(f);
		return &file_failed;
	}
	return f;
}

/* ==== Processes ==== */

static void gen_clear(struct proc_cache *pc, struct pc_gen *g)
{
	if (g->files) {
		for (size_t i = 0; i < g->maps.n; i++)
			file_put(pc, g->files[i]);
	}
	free(g->files);
	g->files = NULL;
	proc_maps_free(&g->maps);
}

static bool map_same(const struct mt_map *a, const struct mt_map *b)
{
	return a->start == b->start && a->end == b->end && a->offset == b->offset &&
	       a->inode == b->inode && a->dev_major == b->dev_major &&
	       a->dev_minor == b->dev_minor && a->path == b->path && a->deleted == b->deleted;
}

/* Give the new generation the files already opened for identical
 * mappings in the old one (both tables are sorted by start). */
static void gen_inherit(struct pc_gen *to, const struct pc_gen *from)
{
	size_t i = 0, j = 0;

	while (i < to->maps.n && j < from->maps.n) {
		const struct mt_map *a = &to->maps.v[i], *b = &from->maps.v[j];

		if (a->start < b->start) {
			i++;
		} else if (a->start > b->start) {
			j++;
		} else {
			struct pc_file *f = from->files[j];

			if (f && f != &file_refused && map_same(a, b)) {
				if (f != &file_failed)
					f->refs++;
				to->files[i] = f;
			}
			i++;
			j++;
		}
	}
}

/* Read the maps of p into a new current generation. */
static int proc_reread(struct proc_cache *pc, struct pc_proc *p)
{
	struct pc_gen fresh = { 0 }, *old = &p->gens[p->cur];
	unsigned int next = (p->cur + 1) % GENERATIONS;
	__u64 started = clock_mono_ns();
	int err;

	err = proc_maps_read_within(p->pid, &fresh.maps, PROC_MAPS_MAX_MS);
	p->last_read_ns = clock_mono_coarse_ns();
	/* the read's cost on the fine clock: on the coarse one a 50 us read
	 * that spans a tick costs 4 ms */
	p->reread_gap_ns = REREAD_NS + REREAD_COST_FACTOR * (clock_mono_ns() - started);
	if (err)
		return err;
	fresh.files = calloc(fresh.maps.n ?: 1, sizeof(*fresh.files));
	if (!fresh.files) {
		proc_maps_free(&fresh.maps);
		return -ENOMEM;
	}
	if (old->files)
		gen_inherit(&fresh, old);
	gen_clear(pc, &p->gens[next]);
	p->gens[next] = fresh;
	p->cur = next;
	p->read_ns = started;
	p->maps_cut += fresh.maps.cut;
	p->open_maps = 0;
	for (size_t i = 0; i < fresh.maps.n; i++)
		p->open_maps += fresh.files[i] && fresh.files[i] != &file_failed;
	return 0;
}

static __u64 pid_hash(pid_t pid)
{
	return hmap_mix(0, (__u64)pid);
}

static bool proc_eq(const void *val, const void *key)
{
	return ((const struct pc_proc *)val)->pid == *(const pid_t *)key;
}

static struct pc_proc *proc_lookup(struct proc_cache *pc, pid_t pid)
{
	struct pc_proc *p;

	if (pc->last && pc->last->pid == pid)
		return pc->last;
	p = hmap_get(&pc->procs, pid_hash(pid), proc_eq, &pid);
	if (p)
		pc->last = p;
	return p;
}

/* A miss of p: is a re-read due? After the pause, or sooner when the
 * table predates a noted sample (a few times a second, and no sooner than
 * the cost factor allows). */
static bool reread_due(struct pc_proc *p)
{
	__u64 now = clock_mono_coarse_ns(), since = now - p->last_read_ns;

	if (since >= p->reread_gap_ns)
		return true;
	if (p->read_ns >= p->sample_ns || since < p->reread_gap_ns - REREAD_NS)
		return false;
	if (now - p->early_window_ns >= EARLY_WINDOW_NS) {
		p->early_window_ns = now;
		p->early_rereads = 0;
	}
	if (p->early_rereads >= EARLY_REREADS)
		return false;
	p->early_rereads++;
	return true;
}

void proc_cache_note_sample(struct proc_cache *pc, pid_t pid, __u64 ts_ns)
{
	struct pc_proc *p = proc_lookup(pc, pid);

	if (p && ts_ns > p->sample_ns)
		p->sample_ns = ts_ns;
}

const struct mt_map *proc_cache_find_map(struct proc_cache *pc, pid_t pid, __u64 addr)
{
	struct pc_proc *p = proc_lookup(pc, pid);
	const struct mt_map *m;

	if (!p) {
		if (pid <= 0)
			return NULL;
		p = calloc(1, sizeof(*p));
		if (!p)
			return NULL;
		p->pid = pid;
		if (hmap_put(&pc->procs, pid_hash(pid), p)) {
			free(p);
			return NULL;
		}
		pc->last = p;
		proc_reread(pc, p);
		return proc_maps_find(&p->gens[p->cur].maps, addr);
	}
	m = proc_maps_find(&p->gens[p->cur].maps, addr);
	if (m ? clock_mono_coarse_ns() - p->last_read_ns < MAX_AGE_NS : !reread_due(p))
		return m;
	/* A process that exited keeps its last known mappings, so samples
	 * taken before the exit can still be named. */
	if (proc_reread(pc, p))
		return m;
	return proc_maps_find(&p->gens[p->cur].maps, addr);
}

/* The generation and slot a mapping pointer belongs to. */
static struct pc_file **map_slot(struct pc_proc *p, const struct mt_map *map)
{
	for (unsigned int k = 0; k < GENERATIONS; k++) {
		struct pc_gen *g = &p->gens[(p->cur + GENERATIONS - k) % GENERATIONS];
		uintptr_t lo = (uintptr_t)g->maps.v, at = (uintptr_t)map;

		if (g->maps.n && at >= lo && at < lo + g->maps.n * sizeof(*map) &&
		    (at - lo) % sizeof(*map) == 0)
			return &g->files[(at - lo) / sizeof(*map)];
	}
	return NULL;
}

struct elf_file *proc_cache_elf(struct proc_cache *pc, pid_t pid, const struct mt_map *map)
{
	struct pc_proc *p = proc_lookup(pc, pid);
	struct pc_file **slot;

	if (!p || !map)
		return NULL;
	slot = map_slot(p, map);
	if (!slot)
		return NULL;
	if (!*slot && p->open_maps >= PROC_CACHE_MAX_FILE_MAPS) {
		*slot = &file_refused;
		p->files_refused++;
	} else if (!*slot) {
		*slot = file_get(pc, pid, map);
		p->open_maps += *slot != &file_failed;
	}
	return *slot == &file_failed || *slot == &file_refused ? NULL : (*slot)->ef;
}

void proc_cache_take_limits(struct proc_cache *pc, pid_t pid, __u64 *files_refused, __u64 *maps_cut)
{
	struct pc_proc *p = proc_lookup(pc, pid);

	if (!p)
		return;
	*files_refused += p->files_refused;
	*maps_cut += p->maps_cut;
	p->files_refused = p->maps_cut = 0;
}

int proc_cache_load_bias(struct proc_cache *pc, pid_t pid, const struct mt_map *map, __u64 *bias)
{
	struct elf_file *ef = proc_cache_elf(pc, pid, map);

	if (!ef)
		return -ENOENT;
	return elf_file_load_bias(ef, map->start, map->offset, bias);
}

static void proc_free(struct proc_cache *pc, struct pc_proc *p)
{
	if (pc->last == p)
		pc->last = NULL;
	for (unsigned int k = 0; k < GENERATIONS; k++)
		gen_clear(pc, &p->gens[k]);
	free(p);
}

void proc_cache_forget(struct proc_cache *pc, pid_t pid)
{
	struct pc_proc *p = hmap_del(&pc->procs, pid_hash(pid), proc_eq, &pid);

	if (p)
		proc_free(pc, p);
}

void proc_cache_free(struct proc_cache *pc)
{
	struct pc_proc *p;
	size_t pos = 0;

	if (!pc)
		return;
	while ((p = hmap_next(&pc->procs, &pos)))
		proc_free(pc, p);
	hmap_fini(&pc->procs);
	hmap_fini(&pc->files);
	free(pc);
}

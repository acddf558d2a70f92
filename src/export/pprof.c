// SPDX-License-Identifier: GPL-2.0-only
/*
 * pprof.c - profile.proto builder and the model -> heap Profile
 * conversion (see pprof.h).
 *
 * Owns the deduplication a Profile needs. Strings, functions, mappings and
 * locations each live in an intern table: a byte-string key (the string
 * itself, or a small fixed-layout struct of string indices and numbers)
 * maps to a dense index, and the id written to the wire is index + 1 (ids
 * must be non-zero). Mapping ids are assigned only at encoding time, after
 * the main binary is moved to the front as profile.proto asks.
 *
 * The wire layout (field numbers below) follows google/pprof
 * proto/profile.proto. Only pbuf.c knows how fields are encoded.
 */
#include "export/pprof.h"
#include "util/grow.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/clock.h"
#include "util/hmap.h"

#ifndef MEMTOP_VERSION
#define MEMTOP_VERSION "unknown"
#endif

/* ==== profile.proto field numbers ==================================== */

enum {
	PROFILE_SAMPLE_TYPE = 1,
	PROFILE_SAMPLE = 2,
	PROFILE_MAPPING = 3,
	PROFILE_LOCATION = 4,
	PROFILE_FUNCTION = 5,
	PROFILE_STRING_TABLE = 6,
	PROFILE_TIME_NANOS = 9,
	PROFILE_DURATION_NANOS = 10,
	PROFILE_PERIOD_TYPE = 11,
	PROFILE_PERIOD = 12,
	PROFILE_COMMENT = 13,
	PROFILE_DEFAULT_SAMPLE_TYPE = 14,
};
enum { VALUETYPE_TYPE = 1, VALUETYPE_UNIT = 2 };
enum { SAMPLE_LOCATION_ID = 1, SAMPLE_VALUE = 2, SAMPLE_LABEL = 3 };
enum { LABEL_KEY = 1, LABEL_STR = 2, LABEL_NUM = 3 };
enum {
	MAPPING_ID = 1,
	MAPPING_MEMORY_START = 2,
	MAPPING_MEMORY_LIMIT = 3,
	MAPPING_FILENAME = 5,
	MAPPING_BUILD_ID = 6,
	MAPPING_HAS_FUNCTIONS = 7,
	MAPPING_HAS_FILENAMES = 8,
	MAPPING_HAS_LINE_NUMBERS = 9,
	MAPPING_HAS_INLINE_FRAMES = 10,
};
enum { LOCATION_ID = 1, LOCATION_MAPPING_ID = 2, LOCATION_ADDRESS = 3, LOCATION_LINE = 4 };
enum { LINE_FUNCTION_ID = 1, LINE_LINE = 2 };
enum { FUNCTION_ID = 1, FUNCTION_NAME = 2, FUNCTION_SYSTEM_NAME = 3, FUNCTION_FILENAME = 4 };

/* ==== growable arrays and intern tables =============================== */

/* Make room for need elements of size elem in *arr. 0 or -ENOMEM. */

struct ient {
	size_t off; /* into arena */
	size_t len;
};

/* Byte-string keys to dense indices, in insertion order. */
struct itab {
	struct hmap map; /* hash -> (void *)(index + 1) */
	struct ient *ents;
	size_t n, cap;
	char *arena;
	size_t alen, acap;
};

struct ikey {
	const struct itab *t;
	const void *key;
	size_t len;
};

static bool itab_eq(const void *val, const void *key)
{
	const struct ikey *k = key;
	const struct ient *e = &k->t->ents[(uintptr_t)val - 1];

	return e->len == k->len && !memcmp(k->t->arena + e->off, k->key, k->len);
}

static __u64 hash_bytes(const void *p, size_t n)
{
	return hmap_fnv1a(HMAP_FNV1A_BASIS, p, n);
}

static void itab_fini(struct itab *t)
{
	hmap_fini(&t->map);
	free(t->ents);
	free(t->arena);
	memset(t, 0, sizeof(*t));
}

/* Index of key[0..len) in t, added when absent (*added tells which).
 * -ENOMEM on failure. A trailing NUL is stored after every key so string
 * keys can be read back as C strings. */
static long itab_intern(struct itab *t, const void *key, size_t len, bool *added)
{
	struct ikey k = { t, key, len };
	__u64 h = hash_bytes(key, len);
	void *v = hmap_get(&t->map, h, itab_eq, &k);

	*added = false;
	if (v)
		return (long)((uintptr_t)v - 1);
	if (grow_array(&t->ents, &t->cap, t->n + 1, sizeof(*t->ents)) ||
	    grow_array(&t->arena, &t->acap, t->alen + len + 1, 1))
		return -ENOMEM;
	if (hmap_put(&t->map, h, (void *)(uintptr_t)(t->n + 1)))
		return -ENOMEM;
	memcpy(t->arena + t->alen, key, len);
	t->arena[t->alen + len] = '\0';
	t->ents[t->n].off = t->alen;
	t->ents[t->n].len = len;
	t->alen += len + 1;
	*added = true;
	return (long)t->n++;
}

static const void *itab_key(const struct itab *t, size_t i, size_t *len)
{
	if (len)
		*len = t->ents[i].len;
	return t->arena + t->ents[i].off;
}

/* ==== the builder ===================================================== */

/* Intern keys: fixed layouts without padding, so bytes compare equal
 * exactly when the fields do. */
struct fn_key {
	__u32 name;
	__u32 file;
};

struct map_key {
	__u64 bias; /* addr - rel_addr: where file offset 0 is mapped */
	__s32 pid;
	__u32 file;
	__u32 build_id;
	__u32 _pad;
};

/* A location key is a loc_head followed by nlines loc_line entries. */
struct loc_head {
	__u64 addr;
	__u32 mapping; /* mapping index + 1; 0: none */
	__u32 nlines;
};

struct loc_line {
	__u32 function; /* function index */
	__u32 line;
};

struct map_info {
	__u64 limit;
	bool has_functions, has_filenames, has_line_numbers;
};

struct label {
	__u32 key;
	__u32 str; /* 0 (""): a numeric label */
	__s64 num;
};

struct sample {
	size_t loc_off, val_off, lab_off;
	__u32 nloc, nlab;
};

struct pprof {
	struct itab strings, functions, mappings, locations;
	struct map_info *minfo;
	size_t minfo_cap;

	__u32 *types; /* (type, unit) string index pairs */
	size_t ntypes, types_cap;
	__u32 period_type, period_unit;
	__s64 period;
	bool has_period;
	__s64 time_ns, duration_ns;
	__u32 *comments;
	size_t ncomments, comments_cap;
	__u32 default_type; /* string index; 0: none */

	struct sample *samples;
	size_t nsamples, samples_cap;
	__u64 *locs; /* location ids of every sample */
	size_t nlocs, locs_cap;
	__s64 *vals;
	size_t nvals, vals_cap;
	struct label *labs;
	size_t nlabs, labs_cap;

	char *scratch; /* location key being built */
	size_t scratch_cap;
};

/* String table index of s (NULL counts as ""). -ENOMEM on failure. */
static long str_index(struct pprof *p, const char *s)
{
	bool added;

	if (!s || !*s)
		return 0;
	return itab_intern(&p->strings, s, strlen(s), &added);
}

struct pprof *pprof_new(void)
{
	struct pprof *p = calloc(1, sizeof(*p));
	bool added;

	if (!p)
		return NULL;
	/* string_table[0] must be "" */
	if (itab_intern(&p->strings, "", 0, &added) != 0) {
		pprof_free(p);
		errno = ENOMEM;
		return NULL;
	}
	return p;
}

void pprof_free(struct pprof *p)
{
	if (!p)
		return;
	itab_fini(&p->strings);
	itab_fini(&p->functions);
	itab_fini(&p->mappings);
	itab_fini(&p->locations);
	free(p->minfo);
	free(p->types);
	free(p->comments);
	free(p->samples);
	free(p->locs);
	free(p->vals);
	free(p->labs);
	free(p->scratch);
	free(p);
}

int pprof_add_sample_type(struct pprof *p, const char *type, const char *unit)
{
	long t, u;

	if (p->nsamples)
		return -EBUSY;
	t = str_index(p, type);
	u = str_index(p, unit);
	if (t < 0 || u < 0 ||
	    grow_array(&p->types, &p->types_cap, 2 * (p->ntypes + 1), sizeof(__u32)))
		return -ENOMEM;
	p->types[2 * p->ntypes] = (__u32)t;
	p->types[2 * p->ntypes + 1] = (__u32)u;
	p->ntypes++;
	return 0;
}

int pprof_set_period(struct pprof *p, const char *type, const char *unit, __s64 period)
{
	long t = str_index(p, type), u = str_index(p, unit);

	if (t < 0 || u < 0)
		return -ENOMEM;
	p->period_type = (__u32)t;
	p->period_unit = (__u32)u;
	p->period = period;
	p->has_period = true;
	return 0;
}

void pprof_set_time(struct pprof *p, __s64 time_ns, __s64 duration_ns)
{
	p->time_ns = time_ns;
	p->duration_ns = duration_ns;
}

int pprof_set_default_sample_type(struct pprof *p, const char *type)
{
	long t = str_index(p, type);

	if (t < 0)
		return -ENOMEM;
	p->default_type = (__u32)t;
	return 0;
}

int pprof_add_comment(struct pprof *p, const char *text)
{
	long s = str_index(p, text);

	if (s < 0 || grow_array(&p->comments, &p->comments_cap, p->ncomments + 1, sizeof(__u32)))
		return -ENOMEM;
	p->comments[p->ncomments++] = (__u32)s;
	return 0;
}

size_t pprof_sample_count(const struct pprof *p)
{
	return p->nsamples;
}

const char *pprof_frame_name(const struct mt_frame *f, char *buf, size_t len)
{
	if (f->function)
		return f->function;
	if (f->module)
		snprintf(buf, len, "%s+0x%llx", f->module, (unsigned long long)f->rel_addr);
	else
		snprintf(buf, len, "0x%llx", (unsigned long long)f->addr);
	return buf;
}

/* Function index for frame f. -ENOMEM on failure. */
static long function_index(struct pprof *p, const struct mt_frame *f)
{
	char buf[160];
	struct fn_key k;
	long name = str_index(p, pprof_frame_name(f, buf, sizeof(buf)));
	long file = str_index(p, f->file);
	bool added;

	if (name < 0 || file < 0)
		return -ENOMEM;
	k.name = (__u32)name;
	k.file = (__u32)file;
	return itab_intern(&p->functions, &k, sizeof(k), &added);
}

/* Mapping index + 1 for frame f (of process pid), 0 when f has no file.
 * -ENOMEM on failure. */
static long mapping_ref(struct pprof *p, pid_t pid, const struct mt_frame *f)
{
	struct map_key k;
	struct map_info *mi;
	long file, build, idx;
	bool added;

	if (!f->module_path || !*f->module_path)
		return 0;
	file = str_index(p, f->module_path);
	build = str_index(p, f->build_id);
	if (file < 0 || build < 0)
		return -ENOMEM;
	memset(&k, 0, sizeof(k));
	k.bias = f->addr >= f->rel_addr ? f->addr - f->rel_addr : 0;
	k.pid = pid;
	k.file = (__u32)file;
	k.build_id = (__u32)build;
	idx = itab_intern(&p->mappings, &k, sizeof(k), &added);
	if (idx < 0 || grow_array(&p->minfo, &p->minfo_cap, (size_t)idx + 1, sizeof(*p->minfo)))
		return -ENOMEM;
	mi = &p->minfo[idx];
	if (added) {
		mi->limit = 0;
		mi->has_functions = mi->has_filenames = mi->has_line_numbers = true;
	}
	if (f->addr + 1 > mi->limit)
		mi->limit = f->addr + 1;
	return idx + 1;
}

/* Location id (index + 1) for frames[0..n), where every frame but the last
 * is inlined into the next. -ENOMEM on failure. */
static long location_id(struct pprof *p, pid_t pid, const struct mt_frame *frames, __u32 n)
{
	const struct mt_frame *outer = &frames[n - 1];
	size_t len = sizeof(struct loc_head) + n * sizeof(struct loc_line);
	struct loc_head head;
	struct loc_line line;
	long map, idx;
	bool added;
	__u32 i;

	if (grow_array(&p->scratch, &p->scratch_cap, len, 1))
		return -ENOMEM;
	map = mapping_ref(p, pid, outer);
	if (map < 0)
		return map;
	memset(&head, 0, sizeof(head));
	head.addr = outer->addr;
	head.mapping = (__u32)map;
	head.nlines = n;
	memcpy(p->scratch, &head, sizeof(head));
	for (i = 0; i < n; i++) {
		long fn = function_index(p, &frames[i]);

		if (fn < 0)
			return fn;
		line.function = (__u32)fn;
		line.line = frames[i].line;
		memcpy(p->scratch + sizeof(head) + i * sizeof(line), &line, sizeof(line));
	}
	idx = itab_intern(&p->locations, p->scratch, len, &added);
	if (idx < 0)
		return idx;
	if (added && map) {
		struct map_info *mi = &p->minfo[map - 1];

		for (i = 0; i < n; i++) {
			mi->has_functions &= frames[i].function != NULL;
			mi->has_filenames &= frames[i].file != NULL;
			mi->has_line_numbers &= frames[i].line != 0;
		}
	}
	return idx + 1;
}

static int push_loc(struct pprof *p, __u64 id)
{
	if (grow_array(&p->locs, &p->locs_cap, p->nlocs + 1, sizeof(*p->locs)))
		return -ENOMEM;
	p->locs[p->nlocs++] = id;
	return 0;
}

static int add_sample_locations(struct pprof *p, pid_t pid, const struct mt_frame *frames,
				__u32 nframes, bool truncated)
{
	__u32 i = 0;
	long id;

	while (i < nframes) {
		__u32 j = i;

		while (j + 1 < nframes && (frames[j].flags & MT_FRAME_INLINED))
			j++;
		id = location_id(p, pid, frames + i, j - i + 1);
		if (id < 0 || push_loc(p, (__u64)id))
			return -ENOMEM;
		i = j + 1;
	}
	if (truncated) {
		struct mt_frame top = { .function = PPROF_TRUNCATED_FRAME };

		id = location_id(p, pid, &top, 1);
		if (id < 0 || push_loc(p, (__u64)id))
			return -ENOMEM;
	}
	return 0;
}

int pprof_add_sample(struct pprof *p, pid_t pid, const struct mt_frame *frames, __u32 nframes,
		     bool truncated, const __s64 *values, const struct pprof_label *labels,
		     size_t nlabels)
{
	size_t loc_off = p->nlocs, lab_off = p->nlabs, i;
	struct sample *s;

	if (!p->ntypes)
		return -EINVAL;
	if (add_sample_locations(p, pid, frames, nframes, truncated))
		goto nomem;
	for (i = 0; i < nlabels; i++) {
		long k = str_index(p, labels[i].key), v = str_index(p, labels[i].str);

		if (k < 0 || v < 0 ||
		    grow_array(&p->labs, &p->labs_cap, p->nlabs + 1, sizeof(*p->labs)))
			goto nomem;
		p->labs[p->nlabs].key = (__u32)k;
		p->labs[p->nlabs].str = (__u32)v;
		p->labs[p->nlabs++].num = labels[i].str ? 0 : labels[i].num;
	}
	if (grow_array(&p->vals, &p->vals_cap, p->nvals + p->ntypes, sizeof(*p->vals)) ||
	    grow_array(&p->samples, &p->samples_cap, p->nsamples + 1, sizeof(*p->samples)))
		goto nomem;
	memcpy(p->vals + p->nvals, values, p->ntypes * sizeof(*values));
	s = &p->samples[p->nsamples++];
	s->loc_off = loc_off;
	s->nloc = (__u32)(p->nlocs - loc_off);
	s->val_off = p->nvals;
	s->lab_off = lab_off;
	s->nlab = (__u32)(nlabels);
	p->nvals += p->ntypes;
	return 0;
nomem:
	p->nlocs = loc_off;
	p->nlabs = lab_off;
	return -ENOMEM;
}

/* ==== encoding ======================================================== */

static void encode_value_type(struct bytebuf *b, __u32 field, __u32 type, __u32 unit)
{
	size_t m = pbuf_msg_begin(b, field);

	pbuf_uint(b, VALUETYPE_TYPE, type);
	pbuf_uint(b, VALUETYPE_UNIT, unit);
	pbuf_msg_end(b, m);
}

static void encode_samples(const struct pprof *p, struct bytebuf *b)
{
	size_t i, j;

	for (i = 0; i < p->nsamples; i++) {
		const struct sample *s = &p->samples[i];
		size_t m = pbuf_msg_begin(b, PROFILE_SAMPLE);

		pbuf_packed_uint(b, SAMPLE_LOCATION_ID, p->locs + s->loc_off, s->nloc);
		pbuf_packed_int(b, SAMPLE_VALUE, p->vals + s->val_off, p->ntypes);
		for (j = 0; j < s->nlab; j++) {
			const struct label *lab = &p->labs[s->lab_off + j];
			size_t l = pbuf_msg_begin(b, SAMPLE_LABEL);

			pbuf_uint(b, LABEL_KEY, lab->key);
			if (lab->str)
				pbuf_uint(b, LABEL_STR, lab->str);
			else
				pbuf_int(b, LABEL_NUM, lab->num);
			pbuf_msg_end(b, l);
		}
		pbuf_msg_end(b, m);
	}
}

/* Does the mapping look like the main executable (pprof's own heuristic:
 * not a shared library, not a pseudo-path like "[vdso]")? */
static bool looks_main(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return *path != '[' && !strstr(base, ".so");
}

/* Mapping ids: mapping[0] must be the main binary. ids[i] is the wire id
 * of mapping index i; order[k] the index written k-th. */
static void mapping_order(const struct pprof *p, size_t *order, __u64 *ids)
{
	size_t n = p->mappings.n, main = 0, i, k = 0;

	for (i = 0; i < n; i++) {
		struct map_key mk;

		memcpy(&mk, itab_key(&p->mappings, i, NULL), sizeof(mk));
		if (looks_main(itab_key(&p->strings, mk.file, NULL))) {
			main = i;
			break;
		}
	}
	if (n)
		order[k++] = main;
	for (i = 0; i < n; i++)
		if (i != main)
			order[k++] = i;
	for (k = 0; k < n; k++)
		ids[order[k]] = k + 1;
}

static void encode_mappings(const struct pprof *p, struct bytebuf *b, const size_t *order,
			    const __u64 *ids)
{
	size_t k;

	for (k = 0; k < p->mappings.n; k++) {
		size_t i = order[k];
		struct map_key mk;
		const struct map_info *mi = &p->minfo[i];
		size_t m;

		memcpy(&mk, itab_key(&p->mappings, i, NULL), sizeof(mk));
		m = pbuf_msg_begin(b, PROFILE_MAPPING);
		pbuf_uint(b, MAPPING_ID, ids[i]);
		pbuf_uint(b, MAPPING_MEMORY_START, mk.bias);
		pbuf_uint(b, MAPPING_MEMORY_LIMIT, mi->limit);
		/* file_offset stays 0: memory_start is where offset 0 is mapped */
		pbuf_uint(b, MAPPING_FILENAME, mk.file);
		if (mk.build_id)
			pbuf_uint(b, MAPPING_BUILD_ID, mk.build_id);
		pbuf_bool(b, MAPPING_HAS_FUNCTIONS, mi->has_functions);
		pbuf_bool(b, MAPPING_HAS_FILENAMES, mi->has_filenames);
		pbuf_bool(b, MAPPING_HAS_LINE_NUMBERS, mi->has_line_numbers);
		/* the symbolizer expands inline chains wherever it has DWARF */
		pbuf_bool(b, MAPPING_HAS_INLINE_FRAMES, mi->has_filenames);
		pbuf_msg_end(b, m);
	}
}

static void encode_locations(const struct pprof *p, struct bytebuf *b, const __u64 *map_ids)
{
	size_t i, j;

	for (i = 0; i < p->locations.n; i++) {
		const char *key = itab_key(&p->locations, i, NULL);
		struct loc_head head;
		size_t m;

		memcpy(&head, key, sizeof(head));
		m = pbuf_msg_begin(b, PROFILE_LOCATION);
		pbuf_uint(b, LOCATION_ID, i + 1);
		if (head.mapping)
			pbuf_uint(b, LOCATION_MAPPING_ID, map_ids[head.mapping - 1]);
		if (head.addr)
			pbuf_uint(b, LOCATION_ADDRESS, head.addr);
		for (j = 0; j < head.nlines; j++) {
			struct loc_line line;
			size_t l;

			memcpy(&line, key + sizeof(head) + j * sizeof(line), sizeof(line));
			l = pbuf_msg_begin(b, LOCATION_LINE);
			pbuf_uint(b, LINE_FUNCTION_ID, (__u64)line.function + 1);
			if (line.line)
				pbuf_int(b, LINE_LINE, line.line);
			pbuf_msg_end(b, l);
		}
		pbuf_msg_end(b, m);
	}
}

static void encode_functions(const struct pprof *p, struct bytebuf *b)
{
	size_t i;

	for (i = 0; i < p->functions.n; i++) {
		struct fn_key k;
		size_t m;

		memcpy(&k, itab_key(&p->functions, i, NULL), sizeof(k));
		m = pbuf_msg_begin(b, PROFILE_FUNCTION);
		pbuf_uint(b, FUNCTION_ID, i + 1);
		pbuf_uint(b, FUNCTION_NAME, k.name);
		pbuf_uint(b, FUNCTION_SYSTEM_NAME, k.name);
		if (k.file)
			pbuf_uint(b, FUNCTION_FILENAME, k.file);
		pbuf_msg_end(b, m);
	}
}

int pprof_encode(const struct pprof *p, struct bytebuf *b)
{
	size_t n = p->mappings.n, i;
	size_t *order = calloc(n ? n : 1, sizeof(*order));
	__u64 *ids = calloc(n ? n : 1, sizeof(*ids));

	if (!order || !ids) {
		free(order);
		free(ids);
		return -ENOMEM;
	}
	mapping_order(p, order, ids);
	for (i = 0; i < p->ntypes; i++)
		encode_value_type(b, PROFILE_SAMPLE_TYPE, p->types[2 * i], p->types[2 * i + 1]);
	encode_samples(p, b);
	encode_mappings(p, b, order, ids);
	encode_locations(p, b, ids);
	encode_functions(p, b);
	for (i = 0; i < p->strings.n; i++) {
		size_t len;
		const void *s = itab_key(&p->strings, i, &len);

		pbuf_bytes(b, PROFILE_STRING_TABLE, s, len);
	}
	if (p->time_ns)
		pbuf_int(b, PROFILE_TIME_NANOS, p->time_ns);
	if (p->duration_ns)
		pbuf_int(b, PROFILE_DURATION_NANOS, p->duration_ns);
	if (p->has_period) {
		encode_value_type(b, PROFILE_PERIOD_TYPE, p->period_type, p->period_unit);
		pbuf_int(b, PROFILE_PERIOD, p->period);
	}
	for (i = 0; i < p->ncomments; i++)
		pbuf_int(b, PROFILE_COMMENT, p->comments[i]);
	if (p->default_type)
		pbuf_int(b, PROFILE_DEFAULT_SAMPLE_TYPE, p->default_type);
	free(order);
	free(ids);
	return b->err;
}

int pprof_encode_gz(const struct pprof *p, __u8 **out, size_t *outlen)
{
	struct bytebuf b;
	int err;

	bytebuf_init(&b);
	err = pprof_encode(p, &b);
	if (!err)
		err = pbuf_gzip(b.data, b.len, out, outlen);
	bytebuf_fini(&b);
	return err;
}

/* ==== the model's heap profile ======================================== */

struct delta_ent {
	__u32 stack_id;
	pid_t pid;
	double alloc_bytes;
	double alloc_objects;
};

struct pprof_delta {
	struct hmap map;
};

static bool delta_eq(const void *val, const void *key)
{
	const struct delta_ent *a = val, *b = key;

	return a->stack_id == b->stack_id && a->pid == b->pid;
}

struct pprof_delta *pprof_delta_new(void)
{
	struct pprof_delta *d = calloc(1, sizeof(*d));

	if (d)
		hmap_init(&d->map);
	return d;
}

void pprof_delta_free(struct pprof_delta *d)
{
	size_t i;

	if (!d)
		return;
	for (i = 0; i < d->map.cap; i++)
		free(d->map.v[i].val);
	hmap_fini(&d->map);
	free(d);
}

/* Replace *bytes and *objects (cumulative since attach) by their growth
 * since the baseline, and advance the baseline. A value below the
 * baseline means the model restarted counting: the growth is the value. */
static int delta_advance(struct pprof_delta *d, __u32 stack_id, pid_t pid, double *bytes,
			 double *objects)
{
	struct delta_ent key = { .stack_id = stack_id, .pid = pid };
	__u64 h = hmap_mix(hmap_mix(0, stack_id), (__u64)(__u32)pid);
	struct delta_ent *e = hmap_get(&d->map, h, delta_eq, &key);
	double b = *bytes, o = *objects;

	if (!e) {
		e = calloc(1, sizeof(*e));
		if (!e || hmap_put(&d->map, h, e)) {
			free(e);
			return -ENOMEM;
		}
		e->stack_id = stack_id;
		e->pid = pid;
	}
	*bytes = b >= e->alloc_bytes ? b - e->alloc_bytes : b;
	*objects = o >= e->alloc_objects ? o - e->alloc_objects : o;
	e->alloc_bytes = b;
	e->alloc_objects = o;
	return 0;
}

const struct mt_frame *pprof_stack_frames(const struct mt_stack *s, __u32 *n)
{
	if (s->site_frame < s->nframes) {
		*n = s->nframes - s->site_frame;
		return s->frames + s->site_frame;
	}
	*n = s->nframes;
	return s->frames;
}

__s64 pprof_wall_ns(__u64 mono_ns)
{
	return (__s64)clock_wall_ns() - (__s64)clock_mono_ns() + (__s64)mono_ns;
}

static void comm_of(const struct mt_target *t, char *buf, size_t len)
{
	snprintf(buf, len, "%.*s", (int)sizeof(t->comm), t ? t->comm : "?");
}

/* First comment: who was profiled, by which memtop. Sets *start to the
 * earliest start_ns of the targets covered (0: unknown). */
static int add_target_comment(struct pprof *p, struct mt_model *m, const struct pprof_model_opts *o,
			      __u64 *start)
{
	char text[512], comm[32];
	size_t n = model_target_count(m), i, used, listed = 0;
	const struct mt_target *t;

	*start = 0;
	if (o->pid) {
		t = model_target(m, o->pid);
		comm_of(t, comm, sizeof(comm));
		if (t)
			*start = t->start_ns;
		snprintf(text, sizeof(text), "memtop %s heap profile of pid %d (%s)",
			 o->version ? o->version : MEMTOP_VERSION, (int)o->pid, t ? comm : "?");
		return pprof_add_comment(p, text);
	}
	used = (size_t)snprintf(text, sizeof(text), "memtop %s heap profile of %zu target%s",
				o->version ? o->version : MEMTOP_VERSION, n, n == 1 ? "" : "s");
	for (i = 0; i < n; i++) {
		t = model_target_at(m, i);
		if (t->start_ns && (!*start || t->start_ns < *start))
			*start = t->start_ns;
		if (used >= sizeof(text) - 64)
			continue;
		comm_of(t, comm, sizeof(comm));
		used += (size_t)snprintf(text + used, sizeof(text) - used, "%s pid %d (%s)",
					 listed++ ? "," : ":", (int)t->pid, comm);
	}
	if (used >= sizeof(text) - 64 && listed < n)
		snprintf(text + used, sizeof(text) - used, ", ...");
	return pprof_add_comment(p, text);
}

static int add_meta(struct pprof *p, struct mt_model *m, const struct pprof_model_opts *o)
{
	__u64 rate = model_rate(m), now = model_now(m), start;
	char text[200];
	int err = 0;

	err |= pprof_add_sample_type(p, "alloc_objects", "count");
	err |= pprof_add_sample_type(p, "alloc_space", "bytes");
	err |= pprof_add_sample_type(p, "inuse_objects", "count");
	err |= pprof_add_sample_type(p, "inuse_space", "bytes");
	/* the device tier (docs/device-memory.md): its own sample types, so
	 * host and device memory are never summed */
	err |= pprof_add_sample_type(p, "device_alloc_objects", "count");
	err |= pprof_add_sample_type(p, "device_alloc_space", "bytes");
	err |= pprof_add_sample_type(p, "device_inuse_objects", "count");
	err |= pprof_add_sample_type(p, "device_inuse_space", "bytes");
	err |= pprof_set_period(p, "space", "bytes", (__s64)rate);
	err |= add_target_comment(p, m, o, &start);
	if (rate > 1)
		snprintf(text, sizeof(text),
			 "values are unsampled estimates from allocations sampled every %llu bytes on average",
			 (unsigned long long)rate);
	else
		snprintf(text, sizeof(text), "every allocation was recorded (rate 1)");
	err |= pprof_add_comment(p, text);
	err |= pprof_add_comment(
		p, o->delta ? "alloc_objects and alloc_space: allocations since the previous profile"
			    : "alloc_objects and alloc_space: allocations since memtop attached");
	if (err)
		return -ENOMEM;
	if (!now)
		now = clock_mono_ns();
	pprof_set_time(p, o->time_ns ? o->time_ns : pprof_wall_ns(now),
		       o->duration_ns ? o->duration_ns
				      : (start && now > start ? (__s64)(now - start) : 0));
	return 0;
}

static __s64 round_value(double v)
{
	return v > 0 && isfinite(v) ? llround(v) : 0;
}

static int add_stack_agg(struct pprof *p, struct mt_model *m, const struct mt_stack_agg *a,
			 const struct pprof_model_opts *o, bool labels)
{
	double alloc_bytes = a->alloc_bytes, alloc_objects = a->alloc_objects;
	struct pprof_label lab[4];
	char comm[32], device[32], kind[96];
	const struct mt_frame *frames;
	bool dev = a->stack->dev.tier == MT_TIER_DEVICE;
	__s64 v[8] = { 0 }, *tier = dev ? v + 4 : v;
	size_t nlab = 0;
	__u32 n;

	if (o->delta && delta_advance(o->delta, a->stack->id, a->pid, &alloc_bytes, &alloc_objects))
		return -ENOMEM;
	tier[0] = round_value(alloc_objects);
	tier[1] = round_value(alloc_bytes);
	tier[2] = round_value(a->inuse_objects);
	tier[3] = round_value(a->inuse_bytes);
	if (!tier[0] && !tier[1] && !tier[2] && !tier[3])
		return 0;
	if (labels) {
		comm_of(model_target(m, a->pid), comm, sizeof(comm));
		lab[nlab++] = (struct pprof_label){ .key = "pid", .num = a->pid };
		lab[nlab++] = (struct pprof_label){ .key = "comm", .str = comm };
	}
	if (dev) {
		snprintf(device, sizeof(device), "%s:%u", device_api_name(a->stack->dev.api),
			 a->stack->dev.index);
		lab[nlab++] = (struct pprof_label){ .key = "device", .str = device };
		lab[nlab++] = (struct pprof_label){ .key = "memory_kind",
						    .str = device_kind_describe(a->stack->dev.kind,
										kind, sizeof(kind)) };
	}
	frames = pprof_stack_frames(a->stack, &n);
	return pprof_add_sample(p, a->pid, frames, n, a->stack->truncated, v, lab, nlab);
}

struct pprof *pprof_from_model(struct mt_model *m, const struct pprof_model_opts *o)
{
	static const struct pprof_model_opts defaults;
	struct pprof *p;
	bool labels;
	size_t i, n;
	int err;

	if (!o)
		o = &defaults;
	p = pprof_new();
	if (!p)
		return NULL;
	err = add_meta(p, m, o);
	labels = !o->pid && model_target_count(m) > 1;
	n = model_stack_count(m);
	for (i = 0; i < n && !err; i++) {
		const struct mt_stack_agg *a = model_stack_at(m, i);

		if (!a || !a->stack || (o->pid && a->pid != o->pid))
			continue;
		err = add_stack_agg(p, m, a, o, labels);
	}
	if (err) {
		pprof_free(p);
		errno = -err;
		return NULL;
	}
	return p;
}

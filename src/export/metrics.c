// SPDX-License-Identifier: GPL-2.0-only
/*
 * metrics.c - Prometheus text exposition of the model (metrics.h): one
 * HELP and one TYPE line per metric family, then its samples, label
 * values escaped and made valid UTF-8. Pure: reads the model and the
 * status, writes memory, runs on the main loop. Numbers are written under
 * a private "C" LC_NUMERIC locale (uselocale, this thread only): the TUI's
 * setlocale() must not turn 0.5 into "0,5".
 */
#include "export/metrics.h"

#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Length of the valid UTF-8 sequence at s (1..4), or 0. */
static size_t utf8_len(const unsigned char *s)
{
	unsigned char c = s[0];
	size_t n, i;

	if (c < 0x80)
		return 1;
	if (c >= 0xC2 && c <= 0xDF)
		n = 2;
	else if (c >= 0xE0 && c <= 0xEF)
		n = 3;
	else if (c >= 0xF0 && c <= 0xF4)
		n = 4;
	else
		return 0;
	for (i = 1; i < n; i++)
		if ((s[i] & 0xC0) != 0x80)
			return 0;
	if ((c == 0xE0 && s[1] < 0xA0) || (c == 0xED && s[1] > 0x9F) ||
	    (c == 0xF0 && s[1] < 0x90) || (c == 0xF4 && s[1] > 0x8F))
		return 0; /* overlong, surrogate, beyond U+10FFFF */
	return n;
}

size_t metrics_escape_label(char *dst, size_t room, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	size_t n = 0;

	while (*p) {
		char esc[2];
		const char *src = esc;
		size_t k = 2, i;

		if (*p == '\\' || *p == '"' || *p == '\n') {
			esc[0] = '\\';
			esc[1] = *p == '\n' ? 'n' : (char)*p;
			p++;
		} else if (*p < 0x20 || *p == 0x7f || !(k = utf8_len(p))) {
			esc[0] = '?';
			k = 1;
			p++;
		} else {
			src = (const char *)p;
			p += k;
		}
		for (i = 0; i < k; i++, n++)
			if (n + 1 < room)
				dst[n] = src[i];
	}
	if (room)
		dst[n < room ? n : room - 1] = '\0';
	return n;
}

/* A label value, escaped, into f. */
static void put_label(FILE *f, const char *key, const char *val, bool first)
{
	char buf[512];
	size_t need = metrics_escape_label(buf, sizeof(buf), val);
	char *big = NULL;

	if (need >= sizeof(buf) && (big = malloc(need + 1)))
		metrics_escape_label(big, need + 1, val);
	fprintf(f, "%s%s=\"%s\"", first ? "" : ",", key, big ? big : buf);
	free(big);
}

/* A sample value: the shortest of %.15g and %.17g that reads back as v,
 * Inf and NaN spelled the format's way. */
static void put_value(FILE *f, double v)
{
	char buf[40];

	if (isnan(v)) {
		fputs(" NaN\n", f);
		return;
	}
	if (isinf(v)) {
		fputs(v > 0 ? " +Inf\n" : " -Inf\n", f);
		return;
	}
	snprintf(buf, sizeof(buf), "%.15g", v);
	if (strtod(buf, NULL) != v)
		snprintf(buf, sizeof(buf), "%.17g", v);
	fprintf(f, " %s\n", buf);
}

static void family(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void plain(FILE *f, const char *name, const char *type, const char *help, double v)
{
	family(f, name, type, help);
	fputs(name, f);
	put_value(f, v);
}

/* ---- targets ------------------------------------------------------------ */

static int target_cmp(const void *a, const void *b)
{
	const struct mt_target *x = *(const struct mt_target *const *)a;
	const struct mt_target *y = *(const struct mt_target *const *)b;

	if (x->alive != y->alive)
		return x->alive ? -1 : 1;
	if (x->rss_bytes != y->rss_bytes)
		return x->rss_bytes > y->rss_bytes ? -1 : 1;
	return x->pid - y->pid;
}

enum tfield { T_RSS, T_INUSE, T_ALLOC_BPS, T_CALLS_PS, T_SLOWDOWN, T_ALIVE, T_NFIELDS };

static const struct {
	const char *name, *type, *help;
} tfields[T_NFIELDS] = {
	[T_RSS] = { "memtop_target_rss_bytes", "gauge", "Resident set size of the target." },
	[T_INUSE] = { "memtop_target_heap_inuse_bytes", "gauge",
		      "Estimated heap bytes in use (sampled allocations not freed, unsampled)." },
	[T_ALLOC_BPS] = { "memtop_target_alloc_bytes_per_second", "gauge",
			  "Bytes requested from the allocator per second over the last interval." },
	[T_CALLS_PS] = { "memtop_target_alloc_calls_per_second", "gauge",
			 "Allocation calls per second over the last interval." },
	[T_SLOWDOWN] = { "memtop_target_slowdown_percent", "gauge",
			 "How much memtop's probes slow the target down, in % of its own CPU time." },
	[T_ALIVE] = { "memtop_target_alive", "gauge", "1 while the target runs, 0 once it ended." },
};

static double target_value(const struct mt_target *t, enum tfield k)
{
	switch (k) {
	case T_RSS:
		return (double)t->rss_bytes;
	case T_INUSE:
		return t->inuse_bytes;
	case T_ALLOC_BPS:
		return t->alloc_bytes_per_s;
	case T_CALLS_PS:
		return t->alloc_calls_per_s;
	case T_SLOWDOWN:
		/* not measured yet, or only from below */
		return t->slowdown_measured && isfinite(t->slowdown_high_pct) ? t->slowdown_pct : NAN;
	case T_ALIVE:
	default:
		return t->alive ? 1 : 0;
	}
}

static void write_targets(FILE *f, const struct mt_target **v, size_t n)
{
	char pid[16];
	size_t i;
	int k;

	for (k = 0; k < T_NFIELDS; k++) {
		family(f, tfields[k].name, tfields[k].type, tfields[k].help);
		for (i = 0; i < n; i++) {
			snprintf(pid, sizeof(pid), "%d", (int)v[i]->pid);
			fprintf(f, "%s{", tfields[k].name);
			put_label(f, "pid", pid, true);
			put_label(f, "comm", v[i]->comm, false);
			fputc('}', f);
			put_value(f, target_value(v[i], (enum tfield)k));
		}
	}
}

/* ---- sites ---------------------------------------------------------------- */

enum sfield { S_INUSE, S_GROWTH, S_SCORE, S_ALLOC_BPS, S_NFIELDS };

static const struct {
	const char *name, *help;
} sfields[S_NFIELDS] = {
	[S_INUSE] = { "memtop_site_inuse_bytes",
		      "Estimated bytes in use allocated at the call site." },
	[S_GROWTH] = { "memtop_site_growth_bytes_per_second",
		       "Least-squares slope of the site's in-use bytes over its long window." },
	[S_SCORE] = { "memtop_site_leak_score", "Leak-suspicion score of the site, 0 to 100." },
	[S_ALLOC_BPS] = { "memtop_site_alloc_bytes_per_second",
			  "Estimated bytes allocated per second at the site over the last interval." },
};

static double site_value(const struct mt_site *s, enum sfield k)
{
	switch (k) {
	case S_INUSE:
		return s->inuse_bytes;
	case S_GROWTH:
		return s->stats.long_fit.slope;
	case S_SCORE:
		return s->stats.leak_score;
	case S_ALLOC_BPS:
	default:
		return s->alloc_bytes_per_s;
	}
}

/* The sites left out of the exposition (those not among the n of v),
 * summed: in-use bytes and bytes allocated per second, the families where
 * a sum means something. False when none is left out. */
static bool sum_others(struct mt_model *m, struct mt_site **v, size_t n, double *inuse,
		       double *alloc_bps)
{
	size_t all = model_site_count(m), i, j;
	bool any = false;

	*inuse = *alloc_bps = 0;
	for (i = 0; i < all; i++) {
		const struct mt_site *s = model_site_at(m, i);

		for (j = 0; j < n && v[j] != s; j++)
			;
		if (j < n)
			continue;
		*inuse += site_value(s, S_INUSE);
		*alloc_bps += site_value(s, S_ALLOC_BPS);
		any = true;
	}
	return any;
}

static void write_sites(FILE *f, struct mt_model *m, struct mt_site **v, size_t n)
{
	char num[24], fname[256];
	const char *name;
	double other[S_NFIELDS] = { 0 };
	bool others = sum_others(m, v, n, &other[S_INUSE], &other[S_ALLOC_BPS]);
	size_t i;
	int k;

	for (k = 0; k < S_NFIELDS; k++) {
		family(f, sfields[k].name, "gauge", sfields[k].help);
		if (others && (k == S_INUSE || k == S_ALLOC_BPS)) {
			/* the rest as one series, so a sum over the family is
			 * every site's, whatever the bound left out */
			fprintf(f, "%s{", sfields[k].name);
			put_label(f, "site", METRICS_OTHER_SITE, true);
			put_label(f, "function", METRICS_OTHER_FUNCTION, false);
			put_label(f, "module", "", false);
			put_label(f, "file", "", false);
			put_label(f, "line", "0", false);
			fputc('}', f);
			put_value(f, other[k]);
		}
		for (i = 0; i < n; i++) {
			const struct mt_frame *fr = v[i]->frame;

			fprintf(f, "%s{", sfields[k].name);
			snprintf(num, sizeof(num), "%u", v[i]->id);
			put_label(f, "site", num, true);
			name = fr->function ? fr->function : fname;
			if (!fr->function)
				snprintf(fname, sizeof(fname), "%s+0x%llx",
					 fr->module ? fr->module : "?",
					 (unsigned long long)fr->rel_addr);
			put_label(f, "function", name, false);
			put_label(f, "module", fr->module ? fr->module : "", false);
			put_label(f, "file", fr->file ? fr->file : "", false);
			snprintf(num, sizeof(num), "%u", (unsigned)fr->line);
			put_label(f, "line", num, false);
			fputc('}', f);
			put_value(f, site_value(v[i], (enum sfield)k));
		}
	}
}

/* The top METRICS_TOP_SITES by score and by in-use, each site once, by
 * score first. Returns how many went into out (2 * METRICS_TOP_SITES). */
static size_t pick_sites(struct mt_model *m, struct mt_site **out)
{
	struct mt_site *by_inuse[METRICS_TOP_SITES];
	size_t n = model_sites_sorted(m, MT_SORT_LEAK, out, METRICS_TOP_SITES), k, i, j;

	k = model_sites_sorted(m, MT_SORT_INUSE, by_inuse, METRICS_TOP_SITES);
	for (i = 0; i < k; i++) {
		for (j = 0; j < n && out[j] != by_inuse[i]; j++)
			;
		if (j == n)
			out[n++] = by_inuse[i];
	}
	return n;
}

/* The memory tiers (docs/device-memory.md): the heap and the device
 * tier's total held, and each device's held bytes and growth, one series
 * per device (at most MT_DEVICES_MAX). */
static void write_tiers(FILE *f, struct mt_model *m)
{
	double device = 0;
	char name[32];
	size_t i;

	for (i = 0; i < model_device_count(m); i++)
		device += model_device_at(m, i)->inuse_bytes;
	family(f, "memtop_tier_inuse_bytes", "gauge",
	       "Bytes in use per memory tier: host (the heap seen) and device (Vulkan, OpenCL, "
	       "CUDA allocations of live processes).");
	fputs("memtop_tier_inuse_bytes{", f);
	put_label(f, "tier", "host", true);
	fputc('}', f);
	put_value(f, model_inuse_bytes(m));
	fputs("memtop_tier_inuse_bytes{", f);
	put_label(f, "tier", "device", true);
	fputc('}', f);
	put_value(f, device);
	if (!model_device_count(m))
		return;
	family(f, "memtop_device_inuse_bytes", "gauge",
	       "Device memory the watched processes hold, per device (API:number).");
	for (i = 0; i < model_device_count(m); i++) {
		const struct mt_device_total *d = model_device_at(m, i);

		snprintf(name, sizeof(name), "%s:%u", device_api_name(d->api), d->index);
		fputs("memtop_device_inuse_bytes{", f);
		put_label(f, "device", name, true);
		fputc('}', f);
		put_value(f, d->inuse_bytes);
	}
	family(f, "memtop_device_growth_bytes_per_second", "gauge",
	       "Growth of a device's memory held over the last minute (least squares).");
	for (i = 0; i < model_device_count(m); i++) {
		const struct mt_device_total *d = model_device_at(m, i);

		snprintf(name, sizeof(name), "%s:%u", device_api_name(d->api), d->index);
		fputs("memtop_device_growth_bytes_per_second{", f);
		put_label(f, "device", name, true);
		fputc('}', f);
		put_value(f, d->growth_bytes_per_s);
	}
}

/* ---- the whole exposition ------------------------------------------------- */

static void write_status(FILE *f, struct mt_model *m, const struct mt_status *st, double wall_s)
{
	const struct mt_drops *d = model_drops(m);

	plain(f, "memtop_snapshot_timestamp_seconds", "gauge",
	      "When memtop closed the interval these figures describe (unix time).", wall_s);
	plain(f, "memtop_interval_seconds", "gauge", "Length of that interval.", model_interval_s(m));
	plain(f, "memtop_sampling_rate_bytes", "gauge", "Mean bytes allocated between two samples.",
	      (double)model_rate(m));
	plain(f, "memtop_sites", "gauge",
	      "Call sites memtop knows (the site_* families show at most "
	      "the top 20 by leak score and the top 20 by in-use bytes).",
	      (double)model_site_count(m));
	plain(f, "memtop_targets", "gauge", "Processes memtop has watched (at most 64 are labelled).",
	      (double)model_target_count(m));
	plain(f, "memtop_overhead_slowdown_percent", "gauge",
	      "Slowdown the worst target suffers from the probes, in % of its own CPU time "
	      "(NaN until measured on it, or while it is known only from below).",
	      st->est_slowdown_measured && isfinite(st->est_slowdown_high_pct) ? st->est_slowdown_pct
									       : NAN);
	plain(f, "memtop_overhead_cpu_percent", "gauge",
	      "Estimated CPU the probes cost the targets, in % of one CPU.", st->est_cpu_pct);
	plain(f, "memtop_overhead_duty", "gauge",
	      "Share of time the allocation probes are on (1 unless the overhead budget backs off).",
	      st->duty);
	plain(f, "memtop_probe_hits_per_second", "gauge", "Probe hits per second, all targets.",
	      st->probe_hits_per_s);
	plain(f, "memtop_events_per_second", "gauge", "Ring-buffer records per second.",
	      st->events_per_s);
	plain(f, "memtop_dropped_events_total", "counter",
	      "Samples or frees lost because the ring buffer was full.", (double)d->events_lost);
	plain(f, "memtop_live_map_full_total", "counter",
	      "Samples counted but not tracked for in-use (live map full).",
	      (double)d->live_map_full);
}

int metrics_text(struct mt_model *m, const struct mt_status *st, double wall_s, char **out,
		 size_t *len)
{
	struct mt_site *sites[2 * METRICS_TOP_SITES];
	size_t nt = model_target_count(m), ns, i;
	const struct mt_target **tv = calloc(nt ? nt : 1, sizeof(*tv));
	locale_t c_num = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0), old = (locale_t)0;
	FILE *f;
	int e = 0;

	*out = NULL;
	*len = 0;
	f = tv ? open_memstream(out, len) : NULL;
	if (!f) {
		free(tv);
		if (c_num)
			freelocale(c_num);
		return -ENOMEM;
	}
	for (i = 0; i < nt; i++)
		tv[i] = model_target_at(m, i);
	qsort(tv, nt, sizeof(*tv), target_cmp);
	if (nt > METRICS_MAX_TARGETS)
		nt = METRICS_MAX_TARGETS;
	ns = pick_sites(m, sites);
	if (c_num)
		old = uselocale(c_num);
	write_status(f, m, st, wall_s);
	write_targets(f, tv, nt);
	write_sites(f, m, sites, ns);
	write_tiers(f, m);
	if (c_num) {
		uselocale(old);
		freelocale(c_num);
	}
	if (ferror(f))
		e = -ENOMEM;
	if (fclose(f))
		e = -ENOMEM;
	free(tv);
	if (e) {
		free(*out);
		*out = NULL;
		*len = 0;
	}
	return e;
}

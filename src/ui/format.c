// SPDX-License-Identifier: GPL-2.0-only
/*
 * format.c - see format.h.
 */
#include "ui/format.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "util/sanitize.h"

static char *fmt_scaled(char *buf, size_t len, double v, double base, const char *units)
{
	double a = fabs(v);
	int u = 0;

	while (a >= base * 0.9995 && units[u + 1]) {
		a /= base;
		v /= base;
		u++;
	}
	if (u == 0)
		snprintf(buf, len, "%.0f", v);
	else
		snprintf(buf, len,
			 a < 9.995   ? "%.2f%c"
			 : a < 99.95 ? "%.1f%c"
				     : "%.0f%c",
			 v, units[u]);
	return buf;
}

char *fmt_bytes(char *buf, size_t len, double bytes)
{
	return fmt_scaled(buf, len, bytes, 1024, " KMGTP");
}

char *fmt_count(char *buf, size_t len, double n)
{
	return fmt_scaled(buf, len, n, 1000, " kMGTP");
}

void fmt_process_rates(char *bytes, size_t bytes_len, char *calls, size_t calls_len,
		       double bytes_per_s, double calls_per_s, bool exact)
{
	char b[16], c[16];

	fmt_bytes(b, sizeof(b), bytes_per_s);
	fmt_count(c, sizeof(c), calls_per_s);
	snprintf(bytes, bytes_len, "%s%s", exact ? "" : "~", b);
	snprintf(calls, calls_len, "%s%s", exact ? "" : "~", c);
}

char *fmt_age(char *buf, size_t len, double s)
{
	long t = (long)s;

	if (s <= 0)
		snprintf(buf, len, "-");
	else if (t < 60)
		snprintf(buf, len, "%lds", t);
	else if (t < 3600)
		snprintf(buf, len, "%ldm%02lds", t / 60, t % 60);
	else
		snprintf(buf, len, "%ldh%02ldm", t / 3600, t / 60 % 60);
	return buf;
}

const char *fmt_basename(const char *path)
{
	const char *s;

	if (!path)
		return "";
	s = strrchr(path, '/');
	return s ? s + 1 : path;
}

char *fmt_frame_name(char *buf, size_t len, const struct mt_frame *f)
{
	if (f->function)
		snprintf(buf, len, "%s", f->function);
	else
		snprintf(buf, len, "%s+0x%llx", f->module ? f->module : "?",
			 (unsigned long long)f->rel_addr);
	return sanitize_inplace(buf); /* the target chose these bytes */
}

char *fmt_frame(char *buf, size_t len, const struct mt_frame *f)
{
	char name[256];

	fmt_frame_name(name, sizeof(name), f);
	if (f->flags & MT_FRAME_NAMED) /* JavaScript: function (file.js:LINE) */
		snprintf(buf, len, "%s (%s:%u)", name, f->file ? fmt_basename(f->file) : "?",
			 f->line);
	else if (f->file && f->line)
		snprintf(buf, len, "%s (%s %s:%u)", name, f->module ? f->module : "?",
			 fmt_basename(f->file), f->line);
	else if (f->function)
		snprintf(buf, len, "%s (%s)", name, f->module ? f->module : "?");
	else
		snprintf(buf, len, "%s", name);
	return sanitize_inplace(buf);
}

char *fmt_backoff(char *buf, size_t len, bool backed_off, double duty, double interval_bytes)
{
	char b[16];

	if (!backed_off)
		snprintf(buf, len, "%s", "");
	else
		snprintf(buf, len, "probes on %.0f%%: sampling interval %s", 100 * duty,
			 fmt_bytes(b, sizeof(b), interval_bytes));
	return buf;
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * json_writer.c - compact, streaming JSON output (see json_writer.h).
 *
 * The writer owns only its nesting state and, in memory mode, its buffer.
 * It validates the call sequence as it goes instead of building a tree, so
 * a JSON line costs no allocation when written to a FILE. Every public call
 * starts by checking the sticky error; the first failure wins and the
 * calls after it do nothing.
 *
 * Numbers are formatted under a private "C" LC_NUMERIC locale (uselocale(),
 * thread-local), because the TUI calls setlocale() and a "de_DE" locale
 * would otherwise turn 0.5 into "0,5", which is not JSON.
 */
#include "util/json_writer.h"

#include "util/sanitize.h"

#include <errno.h>
#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ==== Sink ================================================================ */

static void jw_fail(struct json_writer *w, int err)
{
	if (!w->err)
		w->err = err;
}

static void jw_write(struct json_writer *w, const char *s, size_t n)
{
	if (w->err || n == 0)
		return;
	if (w->f) {
		if (fwrite(s, 1, n, w->f) != n)
			jw_fail(w, -EIO);
		return;
	}
	bytebuf_add(&w->buf, s, n);
	if (w->buf.err)
		jw_fail(w, w->buf.err);
}

static void jw_puts(struct json_writer *w, const char *s)
{
	jw_write(w, s, strlen(s));
}

/* ==== Lifecycle =========================================================== */

void jw_init(struct json_writer *w, FILE *f)
{
	memset(w, 0, sizeof(*w));
	w->f = f;
	if (!f)
		w->err = -EINVAL;
}

void jw_init_buf(struct json_writer *w)
{
	memset(w, 0, sizeof(*w));
}

void jw_fini(struct json_writer *w)
{
	bytebuf_fini(&w->buf);
}

void jw_reset(struct json_writer *w)
{
	w->err = 0;
	w->depth = 0;
	w->key_pending = false;
	w->done = false;
	bytebuf_clear(&w->buf);
}

const char *jw_buf(const struct json_writer *w, size_t *len)
{
	if (w->f)
		return NULL;
	if (len)
		*len = w->buf.len;
	return bytebuf_text(&w->buf);
}

int jw_error(const struct json_writer *w)
{
	return w->err;
}

int jw_finish(const struct json_writer *w)
{
	if (w->err)
		return w->err;
	if (w->depth || w->key_pending || !w->done)
		return -EINVAL;
	return 0;
}

/* ==== Structure =========================================================== */

/* Called before any value: checks that one may go here and writes the
 * comma that separates it from a previous array element. */
static bool jw_value_begin(struct json_writer *w)
{
	int top = w->depth - 1;

	if (w->err)
		return false;
	if (w->depth == 0) {
		if (w->done)
			jw_fail(w, -EINVAL);
		return !w->err;
	}
	if (w->is_object[top]) {
		if (!w->key_pending)
			jw_fail(w, -EINVAL);
		w->key_pending = false;
		return !w->err;
	}
	if (w->nonempty[top])
		jw_write(w, ",", 1);
	w->nonempty[top] = true;
	return !w->err;
}

static void jw_value_end(struct json_writer *w)
{
	if (w->depth == 0 && !w->err)
		w->done = true;
}

static void jw_container_begin(struct json_writer *w, bool object)
{
	if (w->err)
		return;
	if (w->depth == JW_MAX_DEPTH) {
		jw_fail(w, -E2BIG);
		return;
	}
	if (!jw_value_begin(w))
		return;
	jw_write(w, object ? "{" : "[", 1);
	w->is_object[w->depth] = object;
	w->nonempty[w->depth] = false;
	w->depth++;
}

static void jw_container_end(struct json_writer *w, bool object)
{
	if (w->err)
		return;
	if (w->depth == 0 || w->is_object[w->depth - 1] != object || w->key_pending) {
		jw_fail(w, -EINVAL);
		return;
	}
	jw_write(w, object ? "}" : "]", 1);
	w->depth--;
	jw_value_end(w);
}

void jw_object_begin(struct json_writer *w)
{
	jw_container_begin(w, true);
}

void jw_object_end(struct json_writer *w)
{
	jw_container_end(w, true);
}

void jw_array_begin(struct json_writer *w)
{
	jw_container_begin(w, false);
}

void jw_array_end(struct json_writer *w)
{
	jw_container_end(w, false);
}

/* ==== Strings ============================================================= */

/* The two-character escape of c, or NULL when it has none. */
static const char *json_short_escape(unsigned char c)
{
	switch (c) {
	case '"':
		return "\\\"";
	case '\\':
		return "\\\\";
	case '\b':
		return "\\b";
	case '\f':
		return "\\f";
	case '\n':
		return "\\n";
	case '\r':
		return "\\r";
	case '\t':
		return "\\t";
	default:
		return NULL;
	}
}

static void jw_escaped(struct json_writer *w, const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0, run = 0;

	jw_write(w, "\"", 1);
	while (i < n) {
		const char *esc = json_short_escape(s[i]);
		unsigned int cp;
		char hex[8];
		size_t k;

		if (!esc && s[i] < 0x20) {
			snprintf(hex, sizeof(hex), "\\u%04x", s[i]);
			esc = hex;
		}
		k = esc ? 0 : utf8_sequence(str + i, n - i, &cp);
		if (k && (cp == 0x7f || (cp >= 0x80 && cp <= 0x9f))) {
			/* DEL and C1 (CSI is U+009B) escaped too, so that no
			 * control character reaches a terminal showing the JSON */
			snprintf(hex, sizeof(hex), "\\u%04x", cp);
			jw_write(w, str + run, i - run);
			jw_puts(w, hex);
			i += k;
			run = i;
			continue;
		}
		if (k) {
			i += k;
			continue;
		}
		jw_write(w, str + run, i - run);
		jw_puts(w, esc ? esc : "\\ufffd");
		run = ++i;
	}
	jw_write(w, str + run, n - run);
	jw_write(w, "\"", 1);
}

void jw_key(struct json_writer *w, const char *key)
{
	int top = w->depth - 1;

	if (w->err)
		return;
	if (!key || w->depth == 0 || !w->is_object[top] || w->key_pending) {
		jw_fail(w, -EINVAL);
		return;
	}
	if (w->nonempty[top])
		jw_write(w, ",", 1);
	w->nonempty[top] = true;
	jw_escaped(w, key, strlen(key));
	jw_write(w, ":", 1);
	w->key_pending = true;
}

void jw_stringn(struct json_writer *w, const char *s, size_t len)
{
	if (!s && len) {
		jw_fail(w, -EINVAL);
		return;
	}
	if (!jw_value_begin(w))
		return;
	jw_escaped(w, s ? s : "", len);
	jw_value_end(w);
}

void jw_string(struct json_writer *w, const char *s)
{
	if (!s)
		jw_null(w);
	else
		jw_stringn(w, s, strlen(s));
}

/* ==== Scalars ============================================================= */

static void jw_literal(struct json_writer *w, const char *text)
{
	if (!jw_value_begin(w))
		return;
	jw_puts(w, text);
	jw_value_end(w);
}

void jw_null(struct json_writer *w)
{
	jw_literal(w, "null");
}

void jw_bool(struct json_writer *w, bool v)
{
	jw_literal(w, v ? "true" : "false");
}

void jw_int(struct json_writer *w, __s64 v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%lld", (long long)v);
	jw_literal(w, buf);
}

void jw_uint(struct json_writer *w, __u64 v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)v);
	jw_literal(w, buf);
}

static locale_t jw_c_locale;
static pthread_once_t jw_c_locale_once = PTHREAD_ONCE_INIT;

static void jw_c_locale_init(void)
{
	jw_c_locale = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
}

/* Switch this thread to the "C" numeric locale; returns what to restore,
 * or (locale_t)0 when the switch was not possible. */
static locale_t jw_locale_enter(void)
{
	pthread_once(&jw_c_locale_once, jw_c_locale_init);
	return jw_c_locale ? uselocale(jw_c_locale) : (locale_t)0;
}

static void jw_locale_leave(locale_t old)
{
	if (old)
		uselocale(old);
}

/* "-0" (from -0.0, or -0.001 rounded) reads as 0 anyway: write "0". */
static const char *jw_unsign_zero(const char *s)
{
	return strcmp(s, "-0") == 0 ? "0" : s;
}

void jw_double(struct json_writer *w, double v)
{
	char buf[40];
	locale_t old;
	int prec;

	if (!isfinite(v)) {
		jw_null(w);
		return;
	}
	old = jw_locale_enter();
	for (prec = 15; prec <= 17; prec++) {
		snprintf(buf, sizeof(buf), "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	jw_locale_leave(old);
	jw_literal(w, jw_unsign_zero(buf));
}

void jw_double_fixed(struct json_writer *w, double v, int decimals)
{
	char buf[64];
	locale_t old;
	char *end;

	if (!isfinite(v)) {
		jw_null(w);
		return;
	}
	if (decimals < 0 || decimals > 17) {
		jw_fail(w, -EINVAL);
		return;
	}
	if (fabs(v) >= 1e15) { /* %f would print digits a double does not have */
		jw_double(w, v);
		return;
	}
	old = jw_locale_enter();
	snprintf(buf, sizeof(buf), "%.*f", decimals, v);
	jw_locale_leave(old);
	if (strchr(buf, '.')) {
		end = buf + strlen(buf) - 1;
		while (*end == '0')
			*end-- = '\0';
		if (*end == '.')
			*end = '\0';
	}
	jw_literal(w, jw_unsign_zero(buf));
}

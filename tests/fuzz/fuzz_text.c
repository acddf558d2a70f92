// SPDX-License-Identifier: GPL-2.0-only
/*
 * fuzz_text.c - libFuzzer harness for the two ways target text (comm,
 * paths, symbol names) reaches the user: sanitized for a terminal
 * (src/util/sanitize.c) and escaped into JSON (src/util/json_writer.c).
 * The input is the text up to its first NUL (the strings memtop handles
 * are C strings), also given whole to jw_stringn. Checks each against an
 * independent strict UTF-8 decoder: sanitized text is valid UTF-8 without
 * a control character (C0, DEL, C1), never longer than the input, the
 * same in place as copied, and when cut to a small buffer a prefix of the
 * whole that ends on a character; a JSON string is quoted, valid UTF-8,
 * with no raw byte below 0x20 and only JSON's escapes.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/json_writer.h"
#include "util/sanitize.h"

/* Length of the strictly valid UTF-8 sequence at s (code point in *cp),
 * or 0. */
static size_t utf8_len(const unsigned char *s, size_t n, unsigned int *cp)
{
	unsigned int c = s[0], need, min;
	size_t i;

	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if (c >= 0xc2 && c <= 0xdf)
		need = 1, min = 0x80, c &= 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		need = 2, min = 0x800, c &= 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		need = 3, min = 0x10000, c &= 0x07;
	else
		return 0;
	if (n < need + 1)
		return 0;
	for (i = 1; i <= need; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return need + 1;
}

/* Valid UTF-8 throughout; with no_controls, no C0, DEL or C1 either. */
static void check_utf8(const char *t, size_t n, bool no_controls)
{
	const unsigned char *s = (const unsigned char *)t;
	unsigned int cp;

	for (size_t i = 0, k; i < n; i += k) {
		k = utf8_len(s + i, n - i, &cp);
		if (!k || (no_controls && (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f))))
			abort();
	}
}

static void check_json(const char *j, size_t n)
{
	if (n < 2 || j[0] != '"' || j[n - 1] != '"')
		abort();
	check_utf8(j, n, false);
	for (size_t i = 1; i < n - 1; i++) {
		if ((unsigned char)j[i] < 0x20 || (j[i] == '"'))
			abort();
		if (j[i] != '\\')
			continue;
		if (++i >= n - 1 || !strchr("\"\\/bfnrtu", j[i]))
			abort();
		if (j[i] == 'u' && (i + 4 >= n - 1 || strspn(j + i + 1, "0123456789abcdefABCDEF") < 4))
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *src = malloc(size + 1), *full = malloc(size + 1), *inpl = malloc(size + 1);
	struct json_writer w;
	char small[16];
	const char *j;
	size_t n, len;

	if (!src || !full || !inpl)
		abort();
	memcpy(src, data, size);
	src[size] = '\0';
	len = strlen(src);

	sanitize_text(full, size + 1, src);
	n = strlen(full);
	if (n > len)
		abort();
	check_utf8(full, n, true);
	memcpy(inpl, src, len + 1);
	if (strcmp(sanitize_inplace(inpl), full))
		abort();
	for (size_t k = 1; k <= sizeof(small); k++) {
		memset(small, 'x', sizeof(small));
		sanitize_text(small, k, src);
		if (!memchr(small, '\0', k) || strncmp(small, full, strlen(small)))
			abort();
		check_utf8(small, strlen(small), true);
	}

	jw_init_buf(&w);
	jw_stringn(&w, (const char *)data, size);
	j = jw_buf(&w, &n);
	if (jw_finish(&w) || !j)
		abort();
	check_json(j, n);
	jw_fini(&w);

	free(src);
	free(full);
	free(inpl);
	return 0;
}

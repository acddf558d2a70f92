// SPDX-License-Identifier: GPL-2.0-only
/*
 * sanitize.c - the terminal-safety rule for text from a target
 * (sanitize.h): a strict UTF-8 decoder (RFC 3629: no overlongs, no
 * surrogates, nothing above U+10FFFF) that maps control characters and
 * invalid bytes to '?'. Locale-independent, so -b output is the same
 * under LANG=C as under a UTF-8 locale.
 */
#include "util/sanitize.h"

#include <stdbool.h>
#include <string.h>

static unsigned int control_free(unsigned int cp)
{
	if (cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp <= 0x9f))
		return SANITIZE_REPLACEMENT;
	return cp;
}

size_t utf8_sequence(const char *s, size_t left, unsigned int *cp)
{
	const unsigned char *u = (const unsigned char *)s;
	unsigned int c = u[0], v, min;
	size_t n, i;

	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if (c >= 0xc2 && c <= 0xdf) {
		n = 2;
		v = c & 0x1f;
		min = 0x80;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 3;
		v = c & 0x0f;
		min = 0x800;
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4;
		v = c & 0x07;
		min = 0x10000;
	} else {
		return 0; /* continuation byte, 0xc0/0xc1, 0xf5+ */
	}
	if (left < n)
		return 0;
	for (i = 1; i < n; i++) {
		if ((u[i] & 0xc0) != 0x80)
			return 0;
		v = v << 6 | (u[i] & 0x3f);
	}
	if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
		return 0;
	*cp = v;
	return n;
}

size_t sanitize_decode(const char *s, size_t left, unsigned int *cp)
{
	size_t n = utf8_sequence(s, left, cp);

	if (!n) {
		*cp = SANITIZE_REPLACEMENT;
		return 1;
	}
	*cp = control_free(*cp);
	return n;
}

char *sanitize_text(char *dst, size_t dstlen, const char *src)
{
	size_t out = 0, left;

	if (!dstlen)
		return dst;
	left = src ? strlen(src) : 0;
	while (left) {
		unsigned int cp;
		size_t n = sanitize_decode(src, left, &cp);
		bool keep = cp != SANITIZE_REPLACEMENT || (n == 1 && *src == SANITIZE_REPLACEMENT);
		size_t w = keep ? n : 1;

		if (out + w >= dstlen)
			break;
		if (keep)
			memmove(dst + out, src, n);
		else
			dst[out] = SANITIZE_REPLACEMENT;
		out += w;
		src += n;
		left -= n;
	}
	dst[out] = '\0';
	return dst;
}

char *sanitize_inplace(char *s)
{
	size_t len;

	if (!s)
		return s;
	len = strlen(s);
	/* each step writes no more bytes than it reads: safe in place */
	sanitize_text(s, len + 1, s);
	return s;
}

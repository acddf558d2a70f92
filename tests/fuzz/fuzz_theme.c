// SPDX-License-Identifier: GPL-2.0-only
/*
 * fuzz_theme.c - libFuzzer harness for the theme parser
 * (src/ui/tui/theme.c). The input is the text of a theme file (--theme
 * takes any path). Parsed twice, with a roomy and a tiny message buffer,
 * and checks the contract: all or nothing (a rejected text leaves the
 * theme byte for byte as it was), messages NUL-terminated inside the
 * buffer, every colour -1..255 and reducible to 16 and 8 colours.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ui/tui/theme.h"

static void check(const struct theme *t)
{
	for (int e = 0; e < THEME_COUNT; e++) {
		const struct theme_style *s = &t->style[e];
		short c[2] = { s->fg, s->bg };

		for (int k = 0; k < 2; k++) {
			bool bright;

			if (c[k] < THEME_DEFAULT_COLOR || c[k] > 255)
				abort();
			static const int ncolors[] = { 8, 16, 256 };

			for (int n = 0; n < 3; n++) {
				int r = theme_color_reduce(c[k], ncolors[n], &bright);

				if (r < -1 || r >= ncolors[n] || (r < 0) != (c[k] < 0))
					abort();
			}
		}
	}
}

static void parse_with(const uint8_t *data, size_t size, size_t errlen)
{
	struct theme t, before;
	char err[256];
	int r;

	theme_builtin_default(&t);
	before = t;
	memset(err, 'x', sizeof(err));
	err[0] = '\0';
	r = theme_parse(&t, (const char *)data, size, "fuzz.theme", err, errlen);
	if (r) {
		if (memcmp(&t, &before, sizeof(t)) || !memchr(err, '\0', errlen))
			abort();
		return;
	}
	check(&t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	parse_with(data, size, 256);
	parse_with(data, size, 12);
	return 0;
}

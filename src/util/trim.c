// SPDX-License-Identifier: GPL-2.0-only
/*
 * trim.c - see trim.h. White space is isspace() in the C locale's sense
 * for ASCII; bytes above 0x7f are never white space.
 */
#include "util/trim.h"

#include <ctype.h>
#include <string.h>

char *trim_space(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

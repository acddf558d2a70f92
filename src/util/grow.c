// SPDX-License-Identifier: GPL-2.0-only
/*
 * grow.c - growing arrays (grow.h).
 */
#include "util/grow.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

int grow_array(void *arr, size_t *cap, size_t need, size_t elem)
{
	void **p = arr;
	size_t n = *cap ? *cap : GROW_FIRST;
	void *q;

	if (need <= *cap)
		return 0;
	if (!elem || need > SIZE_MAX / elem)
		return -ENOMEM;
	while (n < need)
		n = n > SIZE_MAX / 2 ? need : n * 2;
	if (n > SIZE_MAX / elem)
		n = need; /* doubling would overflow: exactly what is asked */
	q = realloc(*p, n * elem);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = n;
	return 0;
}

int grow_push(void ***v, size_t *n, size_t *cap, void *item)
{
	if (*n == SIZE_MAX || grow_array(v, cap, *n + 1, sizeof(**v)))
		return -ENOMEM;
	(*v)[(*n)++] = item;
	return 0;
}

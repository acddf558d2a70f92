// SPDX-License-Identifier: GPL-2.0-only
/*
 * snapshots.c - runs the exporter table (exporters.h) for a run: starts
 * the rows the options ask for, ticks them, finishes them at exit.
 */
#include "export/snapshots.h"

#include <stdio.h>
#include <string.h>

_Static_assert(sizeof(((struct snapshots *)0)->run) / sizeof(struct exporter_run) >= 4,
	       "room for every row of the exporter table");

int snapshots_init(struct snapshots *s, const struct mt_config *cfg, char *err, size_t errlen)
{
	size_t i;
	int e;

	memset(s, 0, sizeof(*s));
	for (i = 0; i < exporters_count; i++) {
		struct exporter_run *r = &s->run[s->n];

		if (!exporters[i]->wanted(cfg))
			continue;
		r->x = exporters[i];
		r->cfg = cfg;
		e = r->x->start(r, err, errlen);
		if (e) {
			snapshots_fini(s);
			return e;
		}
		s->n++;
	}
	return 0;
}

void snapshots_tick(struct snapshots *s, struct mt_model *m, __u64 now_ns, struct mt_status *st)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (s->run[i].x->tick)
			s->run[i].x->tick(&s->run[i], m, now_ns, st);
}

int snapshots_finish(struct snapshots *s, struct mt_model *m, char *err, size_t errlen)
{
	char one[512];
	size_t i;
	int e = 0, r;

	/* every row gets its last say: a file that cannot be written does
	 * not cost the others theirs; the first failure is the one told */
	for (i = 0; i < s->n; i++) {
		if (!s->run[i].x->finish)
			continue;
		r = s->run[i].x->finish(&s->run[i], m, one, sizeof(one));
		if (r && !e) {
			e = r;
			snprintf(err, errlen, "%s", one);
		}
	}
	s->n = 0;
	return e;
}

void snapshots_fini(struct snapshots *s)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (s->run[i].x->stop)
			s->run[i].x->stop(&s->run[i]);
	s->n = 0;
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * figures.c - a site's and a target's figures as the views print them,
 * uncertainty and death included (figures.h). Pure formatting over the
 * model's numbers: nothing here estimates anything.
 */
#include "ui/figures.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "ui/format.h"

/* value formatted by fmt, with "~" in front when rel_err is large */
static char *approx(char *buf, size_t len, char *(*fmt)(char *, size_t, double), double v,
		    double rel_err)
{
	char tmp[32];

	fmt(tmp, sizeof(tmp), v);
	snprintf(buf, len, "%s%s", rel_err > MT_APPROX_REL_ERR ? "~" : "", tmp);
	return buf;
}

char *fig_rate(char *buf, size_t len, const struct mt_site *s)
{
	return approx(buf, len, fmt_bytes, s->stats.rate_bytes_per_s, s->stats.rate_rel_err);
}

char *fig_obj_rate(char *buf, size_t len, const struct mt_site *s)
{
	return approx(buf, len, fmt_count, model_site_obj_rate(s), s->stats.rate_rel_err);
}

char *fig_inuse(char *buf, size_t len, const struct mt_site *s, double bytes)
{
	return approx(buf, len, fmt_bytes, bytes, bytes > 0 ? s->stats.inuse_rel_err : 0);
}

char *fig_growth(char *buf, size_t len, const struct mt_site *s)
{
	if (!s->stats.growth_shown) {
		snprintf(buf, len, "-");
		return buf;
	}
	return fmt_bytes(buf, len, s->stats.long_fit.slope * 60);
}

char *fig_state(char *buf, size_t len, const struct mt_target *t)
{
	const char *abbrev;

	if (t->alive) {
		snprintf(buf, len, "alive");
		return buf;
	}
	switch (t->end.kind) {
	case MT_END_EXIT:
		/* a clean exit is just "exited"; anything else names its code */
		if (t->end.code)
			snprintf(buf, len, "exit %d", t->end.code);
		else
			snprintf(buf, len, "exited");
		break;
	case MT_END_SIGNAL:
		abbrev = sigabbrev_np(t->end.signal);
		if (abbrev)
			snprintf(buf, len, "SIG%s", abbrev);
		else
			snprintf(buf, len, "sig %d", t->end.signal);
		break;
	case MT_END_OOM:
		snprintf(buf, len, "OOM");
		break;
	default:
		snprintf(buf, len, "exited");
		break;
	}
	return buf;
}

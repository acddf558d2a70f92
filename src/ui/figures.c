// SPDX-License-Identifier: GPL-2.0-only
/*
 * figures.c - a site's and a target's figures as the views print them,
 * uncertainty and death included (figures.h). Pure formatting over the
 * model's numbers: nothing here estimates anything.
 */
#include "ui/figures.h"

#include <math.h>
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

/* The range of 1 + S (the target's time against its own work) wider
 * than this either side of the figure: shown with "~" and the range. */
#define SLOWDOWN_APPROX 1.25

bool fig_slowdown_approx(double pct, double low_pct, double high_pct)
{
	double one = 1 + pct / 100;

	return !isfinite(high_pct) || 1 + high_pct / 100 > SLOWDOWN_APPROX * one ||
	       one > SLOWDOWN_APPROX * (1 + low_pct / 100);
}

char *fig_slowdown(char *buf, size_t len, bool measured, double pct, double low_pct, double high_pct)
{
	if (!measured) {
		snprintf(buf, len, "-");
		return buf;
	}
	if (!fig_slowdown_approx(pct, low_pct, high_pct)) {
		snprintf(buf, len, "%.1f%%", pct);
		return buf;
	}
	if (isfinite(high_pct))
		snprintf(buf, len, "~%.0f%% (%.0f-%.0f%%)", pct, low_pct, high_pct);
	else /* no figure: only what is known */
		snprintf(buf, len, ">= %.0f%%", low_pct);
	return buf;
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

// SPDX-License-Identifier: GPL-2.0-only
/*
 * view_procs.c - the process list: one line per watched process (all of a
 * cgroup's, or every -p PID) with its state, RSS, estimated heap, exact
 * allocation rates and probe hits; the first line stands for all of them.
 * Enter shows the site table restricted to the selected process.
 */
#include "ui/tui/tui.h"
#include "util/grow.h"

#include <stdlib.h>
#include <string.h>

#include "ui/format.h"

static void procs_snapshot(struct tui *t)
{
	struct tui_procs *p = &t->procs;
	size_t n = model_target_count(t->model), i;
	struct tui_proc_row *all;

	if (grow_array(&p->rows, &p->cap, n + 1, sizeof(*p->rows))) {
		tui_message(t, true, "out of memory");
		return;
	}
	all = &p->rows[0];
	memset(all, 0, sizeof(*all));
	snprintf(all->comm, sizeof(all->comm), "all");
	all->exact = true;
	for (i = 0; i < n; i++) {
		const struct mt_target *tg = model_target_at(t->model, i);
		struct tui_proc_row *r = &p->rows[i + 1];

		r->pid = tg->pid;
		memcpy(r->comm, tg->comm, sizeof(r->comm));
		r->alive = tg->alive;
		memcpy(r->mechanism, tg->mechanism, sizeof(r->mechanism));
		r->exact = tg->rates_exact; /* again after a back-off ends */
		r->rss_bytes = tg->rss_bytes;
		r->inuse_bytes = tg->inuse_bytes;
		r->alloc_bytes_per_s = tg->alloc_bytes_per_s;
		r->alloc_calls_per_s = tg->alloc_calls_per_s;
		r->probe_hits_per_s = tg->probe_hits_per_s;
		all->alive |= tg->alive;
		all->exact &= tg->rates_exact;
		all->rss_bytes += tg->rss_bytes;
		all->inuse_bytes += tg->inuse_bytes;
		all->alloc_bytes_per_s += tg->alloc_bytes_per_s;
		all->alloc_calls_per_s += tg->alloc_calls_per_s;
		all->probe_hits_per_s += tg->probe_hits_per_s;
	}
	p->nrows = n + 1;
	if (p->sel >= (int)p->nrows)
		p->sel = (int)p->nrows - 1;
}

static void draw_row(struct tui *t, int y, const struct tui_proc_row *r, bool all, bool selected)
{
	attr_t a = t->attr[selected ? THEME_ROW_SELECTED : THEME_NORMAL];
	char rss[16], heap[16], rate[16], calls[16], hits[16], pid[16];

	if (selected)
		tui_fill(t, y, 0, t->cols, a);
	if (all)
		snprintf(pid, sizeof(pid), "*");
	else
		snprintf(pid, sizeof(pid), "%d", r->pid);
	fmt_bytes(rss, sizeof(rss), r->rss_bytes);
	fmt_bytes(heap, sizeof(heap), r->inuse_bytes);
	fmt_count(hits, sizeof(hits), r->probe_hits_per_s);
	fmt_process_rates(rate, sizeof(rate), calls, sizeof(calls), r->alloc_bytes_per_s,
			  r->alloc_calls_per_s, r->exact);
	tui_putf(t, y, 0, t->cols, a, "%7s %-15s %-6s %-10s %8s %8s %9s %8s %8s", pid, r->comm,
		 all        ? ""
		 : r->alive ? "alive"
			    : "exited",
		 r->mechanism, rss, heap, rate, calls, hits);
}

static void procs_draw(struct tui *t, int y, int h)
{
	struct tui_procs *p = &t->procs;
	int rows = h - 1;

	tui_fill(t, y, 0, t->cols, t->attr[THEME_TABLE_HEADER]);
	tui_putf(t, y, 0, t->cols, t->attr[THEME_TABLE_HEADER],
		 "%7s %-15s %-6s %-10s %8s %8s %9s %8s %8s", "PID", "COMM", "STATE", "HOW", "RSS",
		 "HEAP", "ALLOC/s", "CALLS/s", "HITS/s");
	p->page = rows;
	tui_list_follow(&p->scroll, p->sel, (int)p->nrows, rows);
	for (int i = 0; i < rows && p->scroll + i < (int)p->nrows; i++)
		draw_row(t, y + 1 + i, &p->rows[p->scroll + i], p->scroll + i == 0,
			 p->scroll + i == p->sel);
}

static bool procs_action(struct tui *t, enum key_action a)
{
	struct tui_procs *p = &t->procs;

	if (tui_list_move(&p->sel, (int)p->nrows, p->page, a))
		return true;
	if (a != KA_ENTER || !p->nrows)
		return false;
	t->top.pid = p->sel > 0 ? p->rows[p->sel].pid : 0;
	t->top.sel = 0;
	t->top.follow = false;
	t->snapped &= ~(unsigned)KV_TOP; /* another filter: a fresh table */
	tui_show(t, &view_top);
	return true;
}

static void procs_click(struct tui *t, int row, int col)
{
	struct tui_procs *p = &t->procs;

	if (row > 0 && p->scroll + row - 1 < (int)p->nrows)
		p->sel = p->scroll + row - 1;
}

static void procs_status(struct tui *t, char *buf, size_t len)
{
	snprintf(buf, len, "%zu processes (Enter: their sites)",
		 t->procs.nrows ? t->procs.nrows - 1 : 0);
}

static void procs_fini(struct tui *t)
{
	free(t->procs.rows);
	t->procs.rows = NULL;
	t->procs.nrows = t->procs.cap = 0;
}

const struct tui_view view_procs = {
	.name = "processes",
	.kv = KV_PROCS,
	.snapshot = procs_snapshot,
	.draw = procs_draw,
	.action = procs_action,
	.status = procs_status,
	.click = procs_click,
	.fini = procs_fini,
};

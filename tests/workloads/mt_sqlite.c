// cflags: -O2 -fno-omit-frame-pointer
// ldflags: -lsqlite3
/*
 * mt_sqlite - allocations made by Debian's (stripped) libsqlite3 on behalf
 * of the program: leak_statements prepares statements and never finalizes
 * them (each keeps its VDBE program), query_rows runs queries whose memory
 * sqlite frees again. sqlite's own allocation wrappers (sqlite3Malloc,
 * sqlite3MemMalloc) are static functions without a symbol in the stripped
 * library, so the call site memtop shows must be these functions, never an
 * unnamed frame of libsqlite3. Prints READY, waits for a byte on stdin,
 * runs --duration=SECS (default 3), prints {"truth": "mt_sqlite", ...}
 * with the number of leaked statements, waits for EOF.
 */
#include <sqlite3.h>
#include <stdio.h>

#include "mt_workload.h"

static sqlite3 *db;
static unsigned long leaked;

static void die_sql(const char *what)
{
	wl_die(what, db ? sqlite3_errmsg(db) : "no database");
}

WL_SITE static void leak_statements(unsigned i)
{
	char sql[128];
	sqlite3_stmt *st;

	snprintf(sql, sizeof(sql), "SELECT k, v, length(v) + %u FROM t WHERE k > ? ORDER BY v", i);
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		die_sql("prepare");
	wl_sink = st; /* never finalized */
	leaked++;
}

WL_SITE static void query_rows(unsigned i)
{
	sqlite3_stmt *st;

	if (sqlite3_prepare_v2(db, "SELECT group_concat(v) FROM t WHERE k % 7 = ?", -1, &st, NULL) !=
	    SQLITE_OK)
		die_sql("prepare");
	sqlite3_bind_int(st, 1, (int)(i % 7));
	while (sqlite3_step(st) == SQLITE_ROW)
		wl_sink = (void *)sqlite3_column_text(st, 0);
	sqlite3_finalize(st);
}

int main(int argc, char **argv)
{
	static const char *const known[] = { "duration", NULL };
	struct wl_opts o;
	double duration, t0;
	char truth[256];
	unsigned i;

	wl_init(argc, argv, known, &o);
	duration = wl_arg_double(argc, argv, "duration", 3.0);
	if (sqlite3_open(":memory:", &db) != SQLITE_OK)
		die_sql("open");
	if (sqlite3_exec(db,
			 "CREATE TABLE t(k INTEGER PRIMARY KEY, v TEXT);"
			 "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 2000)"
			 " INSERT INTO t SELECT x, hex(randomblob(40)) FROM c;",
			 NULL, NULL, NULL) != SQLITE_OK)
		die_sql("setup");
	wl_ready();
	wl_wait_start(&o);
	t0 = wl_now();
	for (i = 0; wl_now() - t0 < duration; i++) {
		leak_statements(i);
		query_rows(i);
		wl_sleep(0.002);
	}
	snprintf(truth, sizeof(truth), "{\"truth\":\"mt_sqlite\",\"pid\":%d,\"leaked\":%lu}\n",
		 (int)getpid(), leaked);
	wl_write_all(1, truth, strlen(truth));
	wl_hold_exit(&o);
}

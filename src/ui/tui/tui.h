/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * tui.h - what the pieces of the ncurses front end (src/tui/) share: the
 * state of one session, the view ops table, the screen layer and the
 * drawing widgets. Only src/tui/ includes it; the rest of memtop sees
 * frontend_tui (frontend.h) and nothing else.
 *
 * Data flow: on every tick that is not paused, tui.c takes a snapshot of
 * the header figures and asks the current view to refresh its own
 * snapshot from the model; drawing reads only those snapshots, so a paused
 * screen stays exactly as it was while the model moves on. Views keep site
 * ids and label paths, never pointers into the model across refreshes.
 */
#ifndef MEMTOP_TUI_H
#define MEMTOP_TUI_H

#include <stdbool.h>
#include <limits.h>
#include <stddef.h>
#include <curses.h>
#include <linux/types.h>

#include "ui/flame.h"
#include "ui/frontend.h"
#include "ui/tui/keys.h"
#include "model/model.h"
#include "ui/tui/theme.h"

struct tui;

/* A screen of the TUI, like htop's classes: a const table of functions. */
struct tui_view {
	const char *name;
	unsigned kv; /* its enum key_view bit */
	/* Take a new snapshot from the model (not called while paused). */
	void (*snapshot)(struct tui *t);
	/* Draw into screen rows [y, y + h), full width. */
	void (*draw)(struct tui *t, int y, int h);
	/* Handle an action from the key table; false when it means nothing
	 * here (tui.c then handles the global ones). */
	bool (*action)(struct tui *t, enum key_action a);
	/* One line of context for the status line when it has nothing else
	 * to say (sort, grouping, counts); may be NULL. */
	void (*status)(struct tui *t, char *buf, size_t len);
	/* The filter or search text changed (input line); may be NULL. */
	void (*input_changed)(struct tui *t);
	/* Mouse button 1 at (row, col) of the view area; may be NULL. */
	void (*click)(struct tui *t, int row, int col);
	/* Free what the view holds; may be NULL. */
	void (*fini)(struct tui *t);
};

extern const struct tui_view view_top;
extern const struct tui_view view_site;
extern const struct tui_view view_flame;
extern const struct tui_view view_help;
extern const struct tui_view view_procs;
extern const struct tui_view view_setup;

/* ---- per-view state ----------------------------------------------------- */

/* One line of the site table, copied at refresh. */
struct tui_row {
	__u32 id;
	struct mt_frame frame; /* strings are interned: safe to keep */
	double alloc_bytes_per_s;
	double alloc_objects_per_s;
	double inuse_bytes;
	double growth_per_min;
	double leak_score;
	double age_s;
	pid_t pid;      /* the process with the most in-use here; 0: one target */
	bool more_pids; /* other processes allocate here too */
	/* ui/figures.h: rates are the smoothed ones; ~ on large sampling
	 * errors; growth only once it stands out of the noise */
	bool rate_approx, inuse_approx, growth_shown;
	bool ended;            /* frozen: its processes all ended */
	bool mmap;             /* anonymous mappings (the mmap source), not heap */
	struct mt_dev_tag dev; /* the device tier: API, device, kind */
	bool untracked;        /* some samples found the live map full: in-use low */
};

#define TUI_TEXT_MAX 128

struct tui_top {
	enum mt_sort sort;
	bool invert;
	char filter[TUI_TEXT_MAX];
	char search[TUI_TEXT_MAX];
	unsigned hidden; /* column bits hidden in the settings */
	struct tui_row *rows;
	size_t nrows, cap;
	size_t nsites; /* before filtering */
	__u32 sel_id;
	bool follow; /* the user moved the cursor: it stays on sel_id */
	int sel;
	int scroll;
	int page;       /* rows shown at the last draw */
	pid_t pid;      /* only sites with allocations of this process; 0: all */
	unsigned tiers; /* enum mt_tiers: host sites, device sites or both (T) */
};

#define TUI_SITE_STACKS 8

struct tui_site_stack {
	const struct mt_stack *stack; /* stacks live as long as the model */
	pid_t pid;
	double inuse_bytes;
	double alloc_bytes;
};

struct tui_site {
	__u32 id;
	bool valid;            /* the site still exists */
	struct mt_site snap;   /* copy at refresh */
	struct mt_frame frame; /* the call-site frame */
	struct tui_site_stack stacks[TUI_SITE_STACKS];
	int nstacks;
	int more_stacks; /* stacks not listed */
	int scroll;
	int lines; /* content lines at the last draw */
	int page;
};

struct tui_flame {
	struct flame_tree *tree;
	struct flame_layout layout;
	const struct flame_node *zoom; /* NULL: the root */
	const struct flame_node *sel;
	bool alloc_mode; /* allocated bytes instead of in-use */
	char search[TUI_TEXT_MAX];
	int scroll; /* first depth shown */
	int page;
};

/* One line of the process list, copied at refresh. */
struct tui_proc_row {
	pid_t pid;
	char comm[16];
	bool alive;
	bool exact;
	char mechanism[16]; /* mt_target.mechanism; "" for the "all" row */
	double rss_bytes;
	double inuse_bytes;
	double alloc_bytes_per_s;
	double alloc_calls_per_s;
	double probe_hits_per_s;
};

struct tui_procs {
	struct tui_proc_row *rows; /* rows[0] stands for all processes */
	size_t nrows, cap;
	int sel;
	int scroll;
	int page;
};

struct tui_help {
	const struct tui_view *from; /* where closing the help returns */
	bool legend;                 /* the second page: what every field means */
	int scroll;
	int lines;
	int page;
};

struct tui_setup {
	const struct tui_view *from; /* where closing the settings returns */
	int sel;
	int page;
	bool changed;              /* save when the screen closes */
	char path[PATH_MAX];       /* the settings file; "": none (no HOME) */
	char error[PATH_MAX + 64]; /* reading it at start went wrong */
};

/* Header figures, copied at refresh. */
#define TUI_HDR_TARGETS 8
#define TUI_SPARK_MAX 512
struct tui_header {
	struct {
		pid_t pid;
		char comm[16];
		bool alive;
		char state[16]; /* "alive", "exited", "exit 3", "SIGSEGV", "OOM" */
	} target[TUI_HDR_TARGETS];
	char ended[96];   /* how the first dead target ended, in words; "" if none */
	bool ended_clean; /* ... with exit code 0 */
	int ntargets;     /* all of them, even beyond TUI_HDR_TARGETS */
	int nalive;
	double rss_bytes;
	double inuse_bytes;
	__u64 rate;
	double events_per_s;
	__u64 lost;      /* ring buffer full */
	__u64 untracked; /* live map full */
	const char *probe_mode;
	double est_cpu_pct;
	double slowdown_pct;    /* the target's, as in -b and the JSON */
	bool slowdown_measured; /* else not shown (fig_slowdown) */
	double slowdown_low_pct, slowdown_high_pct;
	double floor_pct;  /* what the free() probes alone cost */
	double budget_pct; /* <= 0: none */
	bool backed_off;
	bool unreachable;
	double inprocess_over_pct; /* status.h: in-process cost over the budget */
	double duty;
	__u64 phase_rate;
	/* Memory the probes do not see (model/unseen.h): the first live
	 * target whose RSS growth the heap does not explain, else the first
	 * running a managed runtime; unseen_pid 0: none. */
	char allocator[16]; /* probed in the live targets: one name, or "mixed" */
	pid_t unseen_pid;
	bool unseen_growth;
	double unseen_explains;
	char unseen_runtime[16];
	/* Live targets memtop changed (its sampler loaded in them); injected_pid:
	 * the first, 0: none. */
	int ninjected;
	pid_t injected_pid;
	/* The first live Go target (watched through its runtime, docs/go.md):
	 * go_pid 0: none; go_rate its MemProfileRate (0: no samples come). */
	pid_t go_pid;
	__s64 go_rate;
	struct mt_cgroup_status cgroup;
	double spark[TUI_SPARK_MAX];
	int nspark;
};

struct tui_input {
	bool active;
	enum key_action kind; /* KA_FILTER or KA_SEARCH */
	char *target;         /* the text being edited (filter or search) */
	char saved[TUI_TEXT_MAX];
};

struct tui {
	bool quit_asked; /* q with a running -- CMD: the next key says what becomes of it */
	struct mt_fe_ctx *ctx;
	struct mt_model *model;
	const struct mt_config *cfg;
	struct mt_status *status;

	/* Terminal, set by screen.c. */
	bool utf8;    /* the locale is UTF-8: text may be decoded as such */
	bool unicode; /* draw bars and blocks with Unicode (utf8 && !--ascii) */
	bool color;   /* colours in use */
	int ncolors;
	int rows, cols;
	attr_t attr[THEME_COUNT];
	int clip_y0, clip_y1; /* widgets draw only on rows [clip_y0, clip_y1) */
	char theme_name[64];
	int epfd; /* input_fd: stdin and the signal pipe */
	int sigpipe[2];
	bool active; /* curses is up */

	const struct tui_view *view;
	const struct tui_view *back; /* where Esc from site/help returns */
	bool paused;
	unsigned snapped; /* KV_* bits of views with a snapshot taken while paused */
	char msg[PATH_MAX + 128];
	bool msg_error;
	bool confirm;                /* e asked; the next key answers */
	char confirm_path[PATH_MAX]; /* what e would write */
	char export_dir[PATH_MAX];   /* e writes there; "": the current directory */
	__u64 msg_ns;
	struct tui_input input;

	struct tui_header hdr;
	struct tui_top top;
	struct tui_site site;
	struct tui_flame flame;
	struct tui_procs procs;
	struct tui_help help;
	struct tui_setup setup;
	char theme_want[64]; /* the theme asked for (--theme or the settings) */
	int act;             /* MT_FE_* bits a view's action asks app.c for */
	bool seeking;        /* a replay's seek asked, not shown yet (ctx->seek) */
};

/* ---- tui.c -------------------------------------------------------------- */

/* Status-line message (printf format); error ones use status_error. */
void tui_message(struct tui *t, bool error, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Switch to a view, taking its snapshot; while paused, only when it has
 * none from this pause yet, so going back and forth shows the same data. */
void tui_show(struct tui *t, const struct tui_view *v);
/* Start typing into text (a TUI_TEXT_MAX buffer) for a filter or search. */
void tui_input_begin(struct tui *t, enum key_action kind, char *text);
/* Seconds since the model's clock started, for ages. */
double tui_now_s(const struct tui *t);

/* Load and apply theme spec (NULL: "default"; "mono" when colour is
 * off); on error the built-in default is applied and err says why. */
int tui_set_theme(struct tui *t, const char *spec, char *err, size_t errlen);
/* One step of the refresh interval's ladder, dir > 0 longer. Returns
 * MT_FE_INTERVAL when it changed. */
int tui_change_interval(struct tui *t, int dir);

/* ---- view_top.c ---------------------------------------------------------- */

/* The title of column i of the site table ("OBJ/s"), NULL past the last
 * numeric column; hideable: the settings may hide it. */
const char *top_column_name(int i, bool *hideable);
/* The column title a sort key goes by ("LEAK"), and back (any case). */
const char *top_sort_name(enum mt_sort s);
bool top_sort_parse(const char *name, enum mt_sort *out);

/* ---- view_setup.c -------------------------------------------------------- */

/* Read the settings file (unless --no-config) and apply what the command
 * line did not set; a problem goes into t->setup.error. */
void setup_load(struct tui *t);

/* ---- header.c ----------------------------------------------------------- */

/* Copy the header figures from the model and the status. */
void header_refresh(struct tui *t);
/* Lines the header takes on this terminal (1 to 3). */
int header_rows(const struct tui *t);
/* Draw the header on rows [0, header_rows()). */
void header_draw(struct tui *t);
/* Something the user must see: ended targets, back-off, lost events... */
bool header_has_warnings(const struct tui *t);

/* ---- screen.c ----------------------------------------------------------- */

/* Set up curses on the controlling terminal: locale, modes, colours from
 * the theme, signal handlers that restore the terminal. 0 or -errno (then
 * nothing is left to undo; err says why). */
int screen_init(struct tui *t, char *err, size_t errlen);
/* Whether the live view can run on this terminal, before anything is
 * attached: stdin and stdout are terminals whose terminfo can address
 * the cursor. 0, or -ENOTTY with the -b suggestion in err. */
int screen_check(char *err, size_t errlen);
/* Restore the terminal exactly as it was. Safe to call twice. */
void screen_fini(struct tui *t);
/* Colour pairs and attributes from a theme. */
void screen_apply_theme(struct tui *t, const struct theme *th);
/* Drain the signal pipe. Returns SCREEN_* bits. */
enum { SCREEN_QUIT = 1, SCREEN_RESIZE = 2, SCREEN_HANGUP = 4 };
int screen_poll(struct tui *t);
/* Adopt the terminal's current size. */
void screen_resize(struct tui *t);

/* ---- widgets.c ---------------------------------------------------------- */

/* Print s at (y, x) in at most maxw columns with attribute a, replacing
 * control and undecodable characters and ending a cut string with an
 * ellipsis. Returns the columns used. */
int tui_put(struct tui *t, int y, int x, int maxw, attr_t a, const char *s);
int tui_putf(struct tui *t, int y, int x, int maxw, attr_t a, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));
/* Right-align s within [x, x + w). */
void tui_put_right(struct tui *t, int y, int x, int w, attr_t a, const char *s);
/* Paint w columns with spaces in attribute a. */
void tui_fill(struct tui *t, int y, int x, int w, attr_t a);
/* Display columns of s as tui_put() would print it. */
int tui_width(const struct tui *t, const char *s);
/* A horizontal bar of w columns filled to frac (0..1), eighths in Unicode. */
void tui_bar(struct tui *t, int y, int x, int w, double frac, attr_t a);
/* One-row sparkline of v[0..n) (oldest first) in w columns, scaled to
 * [0, max of v]; the newest points when n > w. */
void tui_sparkline(struct tui *t, int y, int x, int w, const double *v, int n, attr_t a);
/* A graph of h rows by w columns of v[0..n), scaled to [lo, hi]. */
void tui_graph(struct tui *t, int y, int x, int w, int h, const double *v, int n, double lo,
	       double hi, attr_t a);
/* A frame as "name (module file:line)": the name in name_attr, the rest in
 * loc_attr. Returns the columns used. */
int tui_put_frame(struct tui *t, int y, int x, int w, const struct mt_frame *f, attr_t name_attr,
		  attr_t loc_attr);
/* "+1.2M" / "-300K" / "0" for a growth in bytes. Returns buf. */
char *tui_fmt_growth(char *buf, size_t len, double bytes);
/* Movement actions on a cursor *sel over n lines showing page at a time.
 * True when a was one of them. */
bool tui_list_move(int *sel, int n, int page, enum key_action a);
/* Keep sel within [*scroll, *scroll + page). */
void tui_list_follow(int *scroll, int sel, int n, int page);
/* Movement actions on a view without a cursor: scroll over lines. */
bool tui_scroll_move(int *scroll, int lines, int page, enum key_action a);
/* A page of content lines that scrolls: each tui_page_line() call is the
 * next line of content; it returns its screen row, or -1 when that line is
 * scrolled out of [y0, y0 + h). n counts the lines. */
struct tui_page {
	int y0, h, scroll, n;
};
int tui_page_line(struct tui_page *pg);
/* Key bar: the hints of the key-table rows of view kv. */
void tui_keybar(struct tui *t, int y, unsigned kv);

#endif /* MEMTOP_TUI_H */

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * keys.h - the one key table of the TUI. Dispatch (keys_lookup), the help
 * screen, the key bar and docs/keybindings.md (keys_markdown) all read the
 * same rows, so what a key does and what the help says cannot drift.
 *
 * Key codes are curses codes (KEY_UP, KEY_F(1), plain characters); nothing
 * here calls curses, so the table is unit-tested without a terminal.
 */
#ifndef MEMTOP_KEYS_H
#define MEMTOP_KEYS_H

#include <stdbool.h>
#include <stddef.h>

/* Where a binding applies: one bit per view, plus the input line. */
enum key_view {
	KV_TOP = 1 << 0,   /* the site table */
	KV_SITE = 1 << 1,  /* one site's detail */
	KV_FLAME = 1 << 2, /* the flame view */
	KV_HELP = 1 << 3,  /* the help screen */
	KV_INPUT = 1 << 4, /* a filter or search text being typed */
	KV_PROCS = 1 << 5, /* the process list */
	KV_SETUP = 1 << 6, /* the settings screen (F2) */
};
#define KV_MAIN (KV_TOP | KV_SITE | KV_FLAME | KV_PROCS)
/* The views one level below the site table: q and Esc go back from them. */
#define KV_SUB (KV_SITE | KV_FLAME | KV_PROCS)

enum key_action {
	KA_NONE = 0,
	KA_QUIT,
	KA_HELP,
	KA_BACK,
	KA_ENTER,
	KA_NEXT_VIEW,
	KA_PAUSE,
	KA_SLOWER,
	KA_FASTER,
	KA_EXPORT,
	KA_REDRAW,
	KA_FILTER,
	KA_SEARCH,
	KA_SEARCH_NEXT,
	KA_SETUP,
	KA_SORT_NEXT,
	KA_SORT_PREV,
	KA_SORT_INVERT,
	KA_SORT_INUSE,
	KA_SORT_LEAK,
	KA_GROUP,
	KA_TIER,
	KA_FLAME_MODE,
	KA_PROCS,
	KA_UP,
	KA_DOWN,
	KA_LEFT,
	KA_RIGHT,
	KA_PAGE_UP,
	KA_PAGE_DOWN,
	KA_HOME,
	KA_END,
	KA_INPUT_ACCEPT,
	KA_INPUT_CANCEL,
	KA_INPUT_ERASE,
	KA_INPUT_CLEAR,
	KA_TIME_BACK, /* a replay: one interval back */
	KA_TIME_FORWARD,
	KA_TIME_BACK_MORE, /* ten intervals */
	KA_TIME_FORWARD_MORE,
	KA_DETACH, /* memtop attach: leave the session running */
	KA_COUNT,
};

#define KEYS_PER_BINDING 6

struct key_binding {
	int keys[KEYS_PER_BINDING]; /* curses key codes; unused slots are 0 */
	enum key_action action;
	unsigned views;   /* enum key_view bits where this row applies */
	const char *hint; /* label in the bottom key bar; NULL: not shown there */
	const char *help; /* one line for the help screen and the docs */
	int rank;         /* key-bar order, most important first (lower first) */
};

extern const struct key_binding key_table[];
extern const size_t key_table_len;

/* The action of key in view (a single KV_* bit); KA_NONE when unbound. */
enum key_action keys_lookup(int key, unsigned view);

/* The row that binds key in view, or NULL. */
const struct key_binding *keys_binding(int key, unsigned view);

/* Display name of a key: "q", "Enter", "Esc", "Tab", "Space", "F1",
 * "Ctrl-L", "Up", "PgDn", "Backspace"... Returns buf. */
const char *keys_name(int key, char *buf, size_t len);

/* The names of all keys of a row, separated by a space, each name once
 * ("\n" and KEY_ENTER are both "Enter"). Returns buf. */
const char *keys_binding_names(const struct key_binding *b, char *buf, size_t len);

/* Sections of the help screen and docs, in order. "Everywhere" holds the
 * rows that apply to every main view; each other section holds the rows of
 * its view that are not already under "Everywhere". */
struct key_section {
	unsigned view;
	const char *title;
};
extern const struct key_section key_sections[];
extern const size_t key_sections_len;
bool keys_in_section(const struct key_binding *b, const struct key_section *s);
/* How many rows a section holds; the help and the docs skip empty ones. */
size_t keys_section_rows(const struct key_section *s);

/* The key-bar rows of view kv (those with a hint), most important first
 * (by rank, then table order), at most max of them into out. Returns how
 * many. The bar shows them left to right while they fit. */
size_t keys_bar(unsigned kv, const struct key_binding **out, size_t max);

/* The generated part of docs/keybindings.md: one Markdown table per
 * section. snprintf semantics: returns the length it needed. */
int keys_markdown(char *buf, size_t len);

#endif /* MEMTOP_KEYS_H */

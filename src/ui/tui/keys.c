// SPDX-License-Identifier: GPL-2.0-only
/*
 * keys.c - the key table and everything derived from it: lookup for
 * dispatch, key names, the sections of the help screen, and the Markdown
 * of docs/keybindings.md.
 *
 * Keys follow top, htop and k9s: q/F10 quit (from the site table; below
 * it they go back, like Esc), ?/F1/h help, F2 settings, F3 or / search,
 * F4 or \\ filter, F5 or Tab the flame view, F6 or < > sort, I invert,
 * Enter/Esc in and out, Space or Z to pause, vi and arrow movement. A key may mean different things in different views (Enter
 * drills down in the table and zooms in the flame view), but never two
 * things in one view: test_keys checks that.
 */
#include "ui/tui/keys.h"

#include <curses.h>
#include <stdio.h>
#include <string.h>

#define CTRL(c) ((c)&0x1f)
#define ESC 27
#define ENTER_KEYS '\n', '\r', KEY_ENTER

/* clang-format off */
const struct key_binding key_table[] = {
	/* Everywhere. q quits from the site table only; one level down it
	 * goes back, as Esc does, so no history is lost by reflex. */
	{ { 'q', KEY_F(10) }, KA_QUIT, KV_TOP, "Quit",
	  "Quit memtop (from the site table; elsewhere q goes back)", 1 },
	{ { ESC, 'q', KEY_F(10) }, KA_BACK, KV_SUB, "Back",
	  "Back one level: leave a detail or the process list, zoom out", 1 },
	{ { '?', KEY_F(1), 'h' }, KA_HELP, KV_MAIN, "Help",
	  "Help; ? again shows the legend of every header field and column", 2 },
	{ { '\t', 'f', KEY_F(5), 't' }, KA_NEXT_VIEW, KV_MAIN, "Flame",
	  "Switch between the site table and the flame view (the call tree)", 8 },
	{ { KEY_F(2), 'S' }, KA_SETUP, KV_MAIN, "Setup",
	  "Settings: sort, grouping, theme, interval, columns, export directory", 10 },
	{ { ' ', 'Z', 'P' }, KA_PAUSE, KV_MAIN, "Pause",
	  "Pause or resume the display (data is still collected)", 9 },
	{ { '+' }, KA_SLOWER, KV_MAIN, NULL, "Refresh less often (longer interval)" },
	{ { '-' }, KA_FASTER, KV_MAIN, NULL, "Refresh more often (shorter interval)" },
	{ { 'p' }, KA_PROCS, KV_MAIN, "Procs",
	  "Process list; Enter there shows the sites of one process", 12 },
	{ { 'e' }, KA_EXPORT, KV_MAIN, "Export",
	  "Write a pprof snapshot: shows the path and asks first (y writes)", 11 },
	{ { CTRL('L') }, KA_REDRAW, KV_MAIN, NULL, "Redraw the whole screen" },
	{ { '[' }, KA_TIME_BACK, KV_MAIN, NULL,
	  "Replay or attach: one interval back in time" },
	{ { ']' }, KA_TIME_FORWARD, KV_MAIN, NULL, "Replay: one interval forward" },
	{ { '{' }, KA_TIME_BACK_MORE, KV_MAIN, NULL, "Replay: ten intervals back" },
	{ { '}' }, KA_TIME_FORWARD_MORE, KV_MAIN, NULL,
	  "Replay: ten intervals forward (at the end, attach follows live again)" },
	{ { 'd' }, KA_DETACH, KV_MAIN, NULL,
	  "memtop attach: detach (as q does); the session keeps running" },
	{ { KEY_UP, 'k' }, KA_UP, KV_MAIN | KV_HELP | KV_SETUP, NULL,
	  "Move up; in the flame view, to the calling frame" },
	{ { KEY_DOWN, 'j' }, KA_DOWN, KV_MAIN | KV_HELP | KV_SETUP, NULL,
	  "Move down; in the flame view, to the widest called frame" },
	{ { KEY_PPAGE, CTRL('B') }, KA_PAGE_UP, KV_MAIN | KV_HELP | KV_SETUP, NULL, "Page up" },
	{ { KEY_NPAGE, CTRL('F') }, KA_PAGE_DOWN, KV_MAIN | KV_HELP | KV_SETUP, NULL, "Page down" },
	{ { KEY_HOME }, KA_HOME, KV_MAIN | KV_HELP | KV_SETUP, NULL, "To the first line" },
	{ { KEY_END }, KA_END, KV_MAIN | KV_HELP | KV_SETUP, NULL, "To the last line" },

	/* Site table. */
	{ { ESC }, KA_BACK, KV_TOP, NULL, "Clear the filter, the search and the process selection" },
	{ { ENTER_KEYS }, KA_ENTER, KV_TOP, "Detail",
	  "Open the selected site: stacks, sizes, history, leak-score reasons", 3 },
	{ { '/', KEY_F(3) }, KA_SEARCH, KV_TOP, "Search",
	  "Search: move the cursor to a site whose name contains a text", 5 },
	{ { '\\', KEY_F(4) }, KA_FILTER, KV_TOP, "Filter",
	  "Filter: show only sites with a text in function, module or file", 4 },
	{ { 's', '>', '.', KEY_F(6) }, KA_SORT_NEXT, KV_TOP, "Sort", "Sort by the next column", 6 },
	{ { '<', ',' }, KA_SORT_PREV, KV_TOP, NULL, "Sort by the previous column" },
	{ { 'r', 'I' }, KA_SORT_INVERT, KV_TOP, NULL, "Invert the sort order" },
	{ { 'M' }, KA_SORT_INUSE, KV_TOP, NULL, "Sort by in-use bytes" },
	{ { 'L' }, KA_SORT_LEAK, KV_TOP, NULL, "Sort by leak score" },
	{ { 'g' }, KA_GROUP, KV_TOP, "Group",
	  "Group sites by function, by line or by whole stack (cycles)", 7 },
	{ { 'T' }, KA_TIER, KV_TOP, NULL,
	  "Show host sites, device sites (Vulkan, OpenCL, CUDA) or both (cycles)" },
	{ { 'n' }, KA_SEARCH_NEXT, KV_TOP | KV_FLAME, NULL,
	  "Jump to the next match of the search" },

	/* Flame view. */
	{ { ENTER_KEYS }, KA_ENTER, KV_FLAME, "Zoom", "Zoom into the selected frame", 3 },
	{ { KEY_LEFT }, KA_LEFT, KV_FLAME, NULL, "Previous frame in the row" },
	{ { KEY_RIGHT }, KA_RIGHT, KV_FLAME, NULL, "Next frame in the row" },
	{ { '/', KEY_F(3) }, KA_SEARCH, KV_FLAME, "Search",
	  "Highlight frames whose name contains a text", 4 },
	{ { 'i' }, KA_FLAME_MODE, KV_FLAME, "Bytes",
	  "Show in-use bytes or allocated bytes (toggles)", 5 },

	/* Process list. */
	{ { ENTER_KEYS }, KA_ENTER, KV_PROCS, "Sites",
	  "Show the sites of the selected process (the first row: all processes)", 3 },

	/* Help screen. */
	{ { '?', KEY_F(1), 'h', '\t' }, KA_HELP, KV_HELP, "Page",
	  "Next page: keys, then the legend; from the legend, close", 2 },
	{ { ESC, 'q', KEY_F(10) }, KA_BACK, KV_HELP, "Close", "Close the help", 1 },

	/* Settings screen. */
	{ { KEY_LEFT, '-', ',' }, KA_LEFT, KV_SETUP, "Change", "Previous value of the setting", 2 },
	{ { KEY_RIGHT, '+', ENTER_KEYS }, KA_RIGHT, KV_SETUP, NULL,
	  "Next value of the setting" },
	{ { ESC, 'q', KEY_F(10), KEY_F(2) }, KA_BACK, KV_SETUP, "Done",
	  "Close the settings and save them to ~/.config/memtop/memtoprc", 1 },

	/* Typing a filter or search text. */
	{ { ENTER_KEYS }, KA_INPUT_ACCEPT, KV_INPUT, "Keep", "Keep the text and leave the input line", 1 },
	{ { ESC }, KA_INPUT_CANCEL, KV_INPUT, "Cancel", "Cancel: restore the previous text", 2 },
	{ { KEY_BACKSPACE, 127, CTRL('H') }, KA_INPUT_ERASE, KV_INPUT, NULL,
	  "Delete the last character" },
	{ { CTRL('U') }, KA_INPUT_CLEAR, KV_INPUT, NULL, "Clear the text" },
};
/* clang-format on */

const size_t key_table_len = sizeof(key_table) / sizeof(key_table[0]);

const struct key_section key_sections[] = {
	{ KV_MAIN, "Everywhere" },     { KV_TOP, "Site table" },
	{ KV_SITE, "Site detail" },    { KV_FLAME, "Flame view" },
	{ KV_PROCS, "Process list" },  { KV_HELP, "Help screen" },
	{ KV_SETUP, "Settings (F2)" }, { KV_INPUT, "Typing a filter or search" },
};

const size_t key_sections_len = sizeof(key_sections) / sizeof(key_sections[0]);

const struct key_binding *keys_binding(int key, unsigned view)
{
	if (key == 0)
		return NULL;
	for (size_t i = 0; i < key_table_len; i++) {
		if (!(key_table[i].views & view))
			continue;
		for (int k = 0; k < KEYS_PER_BINDING; k++)
			if (key_table[i].keys[k] == key)
				return &key_table[i];
	}
	return NULL;
}

enum key_action keys_lookup(int key, unsigned view)
{
	const struct key_binding *b = keys_binding(key, view);

	return b ? b->action : KA_NONE;
}

const char *keys_name(int key, char *buf, size_t len)
{
	static const struct {
		int key;
		const char *name;
	} named[] = {
		{ ESC, "Esc" },
		{ '\t', "Tab" },
		{ ' ', "Space" },
		{ '\n', "Enter" },
		{ '\r', "Enter" },
		{ KEY_ENTER, "Enter" },
		{ 127, "Backspace" },
		{ CTRL('H'), "Backspace" },
		{ KEY_BACKSPACE, "Backspace" },
		{ KEY_UP, "Up" },
		{ KEY_DOWN, "Down" },
		{ KEY_LEFT, "Left" },
		{ KEY_RIGHT, "Right" },
		{ KEY_PPAGE, "PgUp" },
		{ KEY_NPAGE, "PgDn" },
		{ KEY_HOME, "Home" },
		{ KEY_END, "End" },
		{ KEY_BTAB, "Shift-Tab" },
	};

	for (size_t i = 0; i < sizeof(named) / sizeof(named[0]); i++) {
		if (named[i].key == key) {
			snprintf(buf, len, "%s", named[i].name);
			return buf;
		}
	}
	if (key >= KEY_F(1) && key <= KEY_F(63))
		snprintf(buf, len, "F%d", key - KEY_F(0));
	else if (key > 0 && key < 32)
		snprintf(buf, len, "Ctrl-%c", '@' + key);
	else if (key > 32 && key < 127)
		snprintf(buf, len, "%c", key);
	else
		snprintf(buf, len, "key-%d", key);
	return buf;
}

const char *keys_binding_names(const struct key_binding *b, char *buf, size_t len)
{
	size_t used = 0;

	if (len)
		buf[0] = '\0';
	for (int k = 0; k < KEYS_PER_BINDING && b->keys[k]; k++) {
		char name[32];

		keys_name(b->keys[k], name, sizeof(name));
		/* Several codes may share a name (Enter); list it once. */
		for (int j = 0; j < k; j++) {
			char prev[32];

			if (strcmp(keys_name(b->keys[j], prev, sizeof(prev)), name) == 0) {
				name[0] = '\0';
				break;
			}
		}
		if (!name[0] || used >= len)
			continue;
		used += snprintf(buf + used, len - used, "%s%s", used ? " " : "", name);
	}
	return buf;
}

bool keys_in_section(const struct key_binding *b, const struct key_section *s)
{
	bool everywhere = (b->views & KV_MAIN) == KV_MAIN;

	if (s->view == KV_MAIN)
		return everywhere;
	if (everywhere && (s->view & KV_MAIN))
		return false;
	if (everywhere && !(s->view & KV_MAIN))
		return false; /* movement rows are listed once, under Everywhere */
	return (b->views & s->view) != 0;
}

size_t keys_section_rows(const struct key_section *s)
{
	size_t n = 0;

	for (size_t i = 0; i < key_table_len; i++)
		n += keys_in_section(&key_table[i], s);
	return n;
}

size_t keys_bar(unsigned kv, const struct key_binding **out, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < key_table_len && n < max; i++) {
		const struct key_binding *b = &key_table[i];
		size_t k;

		if (!b->hint || !(b->views & kv))
			continue;
		/* insertion by rank; equal ranks keep table order */
		for (k = n; k > 0 && out[k - 1]->rank > b->rank; k--)
			out[k] = out[k - 1];
		out[k] = b;
		n++;
	}
	return n;
}

/* Keys inside a Markdown table cell: `q` `F10`. A '|' would end the cell
 * and must be escaped even inside backticks. */
static void md_keys(const struct key_binding *b, char *buf, size_t len)
{
	char names[128], *save = NULL;
	size_t used = 0;

	buf[0] = '\0';
	keys_binding_names(b, names, sizeof(names));
	for (char *tok = strtok_r(names, " ", &save); tok && used < len;
	     tok = strtok_r(NULL, " ", &save))
		used += snprintf(buf + used, len - used, "%s`%s`", used ? " " : "",
				 strcmp(tok, "|") == 0 ? "\\|" : tok);
}

int keys_markdown(char *buf, size_t len)
{
	size_t used = 0;

#define OUT(...)                                                       \
	used += snprintf(buf ? buf + (used < len ? used : len) : NULL, \
			 used < len ? len - used : 0, __VA_ARGS__)
	for (size_t s = 0; s < key_sections_len; s++) {
		if (!keys_section_rows(&key_sections[s]))
			continue;
		OUT("%s### %s\n\n| Keys | Action |\n|------|--------|\n", used ? "\n" : "",
		    key_sections[s].title);
		for (size_t i = 0; i < key_table_len; i++) {
			char cell[160];

			if (!keys_in_section(&key_table[i], &key_sections[s]))
				continue;
			md_keys(&key_table[i], cell, sizeof(cell));
			OUT("| %s | %s |\n", cell, key_table[i].help);
		}
	}
#undef OUT
	return (int)used;
}

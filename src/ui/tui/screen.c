// SPDX-License-Identifier: GPL-2.0-only
/*
 * screen.c - the terminal: ncurses set up and torn down, colours from the
 * theme, window size, and the promise that the terminal is restored on
 * every way out.
 *
 * Ways out and who restores:
 *   q / F10 ........ the front end asks to quit; app.c calls stop()
 *   SIGINT, SIGTERM, SIGHUP
 *                    app.c blocks them and reads a signalfd, then stop().
 *                    When they are not blocked, our handler sets a flag and
 *                    wakes the loop through the input fd (the same path);
 *                    a second one while the first is pending restores the
 *                    terminal from the handler and dies by the signal.
 *   SSH drop ....... SIGHUP as above; a hung-up stdin also reads as quit
 *   SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL
 *                    the handler (on its own stack) writes the terminfo
 *                    reset strings and the saved termios, which is
 *                    async-signal-safe, then re-raises with the default
 *                    action so the exit status and core dump are unchanged
 *   exit() ......... an atexit hook calls endwin()
 * SIGWINCH is ours too (so ncurses never resizes behind our back): it sets
 * a flag and wakes the loop, which calls resizeterm() at a safe point.
 */
#include "ui/tui/tui.h"

#include <errno.h>
#include <fcntl.h>
#include <langinfo.h>
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <term.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>

/* State the signal handlers need: plain data only. */
static volatile sig_atomic_t g_quit, g_winch, g_hup, g_active;
static int g_pipe_w = -1;
static struct termios g_termios;
static bool g_have_termios;
static char g_reset[512];
static size_t g_reset_len;
static SCREEN *g_screen;
static bool g_atexit_done;
static bool g_has_rmcup;

static const int quit_signals[] = { SIGINT, SIGTERM, SIGHUP };
static const int fatal_signals[] = { SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL };
#define NQUIT (int)(sizeof(quit_signals) / sizeof(quit_signals[0]))
#define NFATAL (int)(sizeof(fatal_signals) / sizeof(fatal_signals[0]))
static struct sigaction old_quit[NQUIT], old_fatal[NFATAL], old_winch;
static stack_t g_altstack, g_old_altstack;

/* Put the terminal back from a signal handler: write() and tcsetattr()
 * are async-signal-safe, curses is not. */
static void emergency_restore(void)
{
	ssize_t r;

	if (!g_active)
		return;
	g_active = 0;
	r = write(STDOUT_FILENO, g_reset, g_reset_len);
	(void)r;
	if (g_have_termios)
		tcsetattr(STDIN_FILENO, TCSANOW, &g_termios);
}

static void wake(void)
{
	if (g_pipe_w >= 0) {
		ssize_t r = write(g_pipe_w, "x", 1);

		(void)r; /* a full pipe already wakes the loop */
	}
}

static void on_quit(int sig)
{
	int saved = errno;

	if (g_quit) {
		/* The loop did not react to the first one: leave now. */
		emergency_restore();
		signal(sig, SIG_DFL);
		raise(sig);
	}
	g_quit = 1;
	if (sig == SIGHUP)
		g_hup = 1;
	wake();
	errno = saved;
}

static void on_winch(int sig)
{
	int saved = errno;

	g_winch = 1;
	wake();
	errno = saved;
}

static void on_fatal(int sig)
{
	emergency_restore();
	signal(sig, SIG_DFL);
	raise(sig); /* delivered when the handler returns */
}

static void at_exit(void)
{
	if (g_active) {
		g_active = 0;
		endwin();
		if (g_have_termios)
			tcsetattr(STDIN_FILENO, TCSANOW, &g_termios);
	}
}

/* Append a terminfo string capability to the reset sequence. */
static void reset_add(const char *cap)
{
	char *s = tigetstr((char *)cap);
	size_t n;

	if (!s || s == (char *)-1)
		return;
	n = strlen(s);
	if (g_reset_len + n < sizeof(g_reset)) {
		memcpy(g_reset + g_reset_len, s, n);
		g_reset_len += n;
	}
}

static void install_handlers(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on_quit;
	for (int i = 0; i < NQUIT; i++)
		sigaction(quit_signals[i], &sa, &old_quit[i]);
	sa.sa_handler = on_winch;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGWINCH, &sa, &old_winch);

	/* Fatal ones run on their own stack: a stack overflow is a SIGSEGV. */
	g_altstack.ss_size = 64 * 1024;
	g_altstack.ss_sp = malloc(g_altstack.ss_size);
	if (g_altstack.ss_sp && sigaltstack(&g_altstack, &g_old_altstack) == 0)
		sa.sa_flags = SA_ONSTACK | SA_RESETHAND;
	else
		sa.sa_flags = SA_RESETHAND;
	sa.sa_handler = on_fatal;
	for (int i = 0; i < NFATAL; i++)
		sigaction(fatal_signals[i], &sa, &old_fatal[i]);
}

static void restore_handlers(void)
{
	for (int i = 0; i < NQUIT; i++)
		sigaction(quit_signals[i], &old_quit[i], NULL);
	for (int i = 0; i < NFATAL; i++)
		sigaction(fatal_signals[i], &old_fatal[i], NULL);
	sigaction(SIGWINCH, &old_winch, NULL);
	if (g_altstack.ss_sp) {
		sigaltstack(&g_old_altstack, NULL);
		free(g_altstack.ss_sp);
		g_altstack.ss_sp = NULL;
	}
}

static int setup_fds(struct tui *t)
{
	struct epoll_event ev = { .events = EPOLLIN };

	if (pipe2(t->sigpipe, O_NONBLOCK | O_CLOEXEC))
		return -errno;
	t->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (t->epfd < 0)
		return -errno;
	ev.data.fd = STDIN_FILENO;
	if (epoll_ctl(t->epfd, EPOLL_CTL_ADD, STDIN_FILENO, &ev))
		return -errno;
	ev.data.fd = t->sigpipe[0];
	if (epoll_ctl(t->epfd, EPOLL_CTL_ADD, t->sigpipe[0], &ev))
		return -errno;
	g_pipe_w = t->sigpipe[1];
	return 0;
}

static void close_fds(struct tui *t)
{
	g_pipe_w = -1;
	if (t->epfd >= 0)
		close(t->epfd);
	for (int i = 0; i < 2; i++)
		if (t->sigpipe[i] >= 0)
			close(t->sigpipe[i]);
	t->epfd = t->sigpipe[0] = t->sigpipe[1] = -1;
}

/* What to say about a terminal that cannot address the cursor. */
static void no_cursor(const char *term, char *err, size_t errlen)
{
	snprintf(err, errlen,
		 "terminal '%s' cannot move the cursor: use -b for text output "
		 "(or --json), or a terminal such as TERM=xterm",
		 term ? term : "(unset)");
}

int screen_check(char *err, size_t errlen)
{
	const char *term = getenv("TERM");
	char *cup;
	int rc = 0;

	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
		snprintf(err, errlen, "the live view needs a terminal; use -b for text output");
		return -ENOTTY;
	}
	if (setupterm(NULL, STDOUT_FILENO, &rc) != OK) {
		snprintf(err, errlen, "cannot use terminal type '%s'; try TERM=xterm or -b",
			 term ? term : "(unset)");
		return -ENOTTY;
	}
	cup = tigetstr((char *)"cup");
	del_curterm(cur_term); /* newterm() sets the terminal up for good */
	if (!cup || cup == (char *)-1) {
		no_cursor(term, err, errlen);
		return -ENOTTY;
	}
	return 0;
}

int screen_init(struct tui *t, char *err, size_t errlen)
{
	const char *no_color = getenv("NO_COLOR");
	const char *term = getenv("TERM");
	int e;

	t->epfd = t->sigpipe[0] = t->sigpipe[1] = -1;
	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
		snprintf(err, errlen, "the live view needs a terminal; use -b for text output");
		return -ENOTTY;
	}
	setlocale(LC_ALL, "");
	t->utf8 = strcmp(nl_langinfo(CODESET), "UTF-8") == 0;
	t->unicode = t->utf8 && !t->cfg->ascii;
	g_have_termios = tcgetattr(STDIN_FILENO, &g_termios) == 0;

	e = setup_fds(t);
	if (e) {
		snprintf(err, errlen, "cannot set up terminal input: %s", strerror(-e));
		close_fds(t);
		return e;
	}
	/* newterm, not initscr: an unknown TERM is an error we report, not
	 * an exit inside the library. */
	g_screen = newterm(NULL, stdout, stdin);
	if (!g_screen) {
		snprintf(err, errlen, "cannot use terminal type '%s'; try TERM=xterm or -b",
			 term ? term : "(unset)");
		close_fds(t);
		return -ENOTTY;
	}
	set_term(g_screen);
	/* A terminal that cannot address the cursor (TERM=dumb, emacs'
	 * shell) would get a stream of garbage: say what works instead. */
	if (!tigetstr((char *)"cup") || tigetstr((char *)"cup") == (char *)-1) {
		no_cursor(term, err, errlen);
		endwin();
		delscreen(g_screen);
		g_screen = NULL;
		close_fds(t);
		return -ENOTTY;
	}
	g_reset_len = 0;
	reset_add("sgr0");
	reset_add("cnorm");
	reset_add("rmkx");
	reset_add("rmcup");
	{
		char *rmcup = tigetstr((char *)"rmcup");

		g_has_rmcup = rmcup && rmcup != (char *)-1;
	}
	g_quit = g_winch = g_hup = 0;
	g_active = 1;
	t->active = true;
	if (!g_atexit_done) {
		atexit(at_exit);
		g_atexit_done = true;
	}
	install_handlers();

	cbreak(); /* keep ISIG: Ctrl-C stays a signal */
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	nodelay(stdscr, TRUE);
	intrflush(stdscr, FALSE);
	leaveok(stdscr, TRUE);
	set_escdelay(50);
	curs_set(0);
	/* Click to select, wheel to scroll; press and release are reported
	 * as they come (no click timing to wait for). */
	if (mousemask(BUTTON1_PRESSED | BUTTON4_PRESSED | BUTTON5_PRESSED, NULL)) {
		static const char mouse_off[] = "\033[?1000l\033[?1006l";

		mouseinterval(0);
		if (g_reset_len + sizeof(mouse_off) - 1 < sizeof(g_reset)) {
			memcpy(g_reset + g_reset_len, mouse_off, sizeof(mouse_off) - 1);
			g_reset_len += sizeof(mouse_off) - 1;
		}
	}

	t->color = has_colors() && !t->cfg->no_color && !(no_color && *no_color);
	if (t->color) {
		start_color();
		if (use_default_colors() != OK)
			assume_default_colors(COLOR_WHITE, COLOR_BLACK);
		t->ncolors = COLORS;
		if (COLOR_PAIRS <= THEME_COUNT || COLORS < 8)
			t->color = false;
	}
	screen_resize(t);
	return 0;
}

void screen_fini(struct tui *t)
{
	if (!t->active)
		return;
	t->active = false;
	if (g_active) {
		g_active = 0;
		/* Without an alternate screen (vt100) the last frame would stay
		 * above the prompt: leave a clean screen instead. */
		if (!g_has_rmcup) {
			erase();
			refresh();
		}
		curs_set(1);
		endwin();
	}
	if (g_have_termios)
		tcsetattr(STDIN_FILENO, TCSANOW, &g_termios);
	restore_handlers();
	delscreen(g_screen);
	g_screen = NULL;
	close_fds(t);
}

static attr_t theme_attrs(unsigned a)
{
	attr_t r = A_NORMAL;

	if (a & THEME_A_BOLD)
		r |= A_BOLD;
	if (a & THEME_A_DIM)
		r |= A_DIM;
	if (a & THEME_A_UNDERLINE)
		r |= A_UNDERLINE;
	if (a & THEME_A_REVERSE)
		r |= A_REVERSE;
	if (a & THEME_A_STANDOUT)
		r |= A_STANDOUT;
	if (a & THEME_A_ITALIC)
		r |= A_ITALIC;
	if (a & THEME_A_BLINK)
		r |= A_BLINK;
	return r;
}

void screen_apply_theme(struct tui *t, const struct theme *th)
{
	for (int i = 0; i < THEME_COUNT; i++) {
		const struct theme_style *s = &th->style[i];
		attr_t a = theme_attrs(s->attrs);

		if (t->color) {
			bool bright = false, bg_bright;
			int fg = theme_color_reduce(s->fg, t->ncolors, &bright);
			int bg = theme_color_reduce(s->bg, t->ncolors, &bg_bright);

			/* 8 colours: a bright foreground is bold; a bright
			 * background is the plain colour. */
			if (bright)
				a |= A_BOLD;
			init_pair(i + 1, fg, bg);
			a |= COLOR_PAIR(i + 1);
		}
		t->attr[i] = a;
	}
	bkgdset(' ' | t->attr[THEME_NORMAL]);
}

int screen_poll(struct tui *t)
{
	struct epoll_event ev[4];
	char buf[64];
	int bits = 0, n;

	while (read(t->sigpipe[0], buf, sizeof(buf)) > 0)
		;
	n = epoll_wait(t->epfd, ev, 4, 0);
	for (int i = 0; i < n; i++)
		if (ev[i].data.fd == STDIN_FILENO && (ev[i].events & (EPOLLHUP | EPOLLERR)))
			bits |= SCREEN_HANGUP;
	if (g_quit)
		bits |= SCREEN_QUIT;
	if (g_hup)
		bits |= SCREEN_HANGUP;
	if (g_winch) {
		g_winch = 0;
		bits |= SCREEN_RESIZE;
	}
	return bits;
}

void screen_resize(struct tui *t)
{
	struct winsize ws;

	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0 && ws.ws_col > 0 &&
	    (ws.ws_row != LINES || ws.ws_col != COLS))
		resizeterm(ws.ws_row, ws.ws_col);
	t->rows = LINES;
	t->cols = COLS;
}

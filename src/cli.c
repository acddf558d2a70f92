// SPDX-License-Identifier: GPL-2.0-only
/*
 * cli.c - memtop's command line: argv in, struct mt_config out.
 *
 * One table (cli_opts[]) drives getopt_long's option list and the --help
 * text, so the two cannot drift apart. Parsing is pure: no I/O, no exit();
 * help, version and error messages are written into the caller's buffer,
 * and every error is one line starting with "memtop: " that names the
 * option as the user spelled it (-d or --delay). argv is never reordered
 * ('+' in the optstring: option parsing stops at the first non-option),
 * getopt's own messages are off (opterr = 0) and its state is reset on
 * every call (optind = 0), so cli_parse() may be called repeatedly.
 *
 * Numbers are parsed here, not with strtod(), so that a locale set by the
 * TUI never changes what "0.5" means. Sizes: see the grammar above
 * cli_parse_size(). Long options may be abbreviated to a unique prefix
 * (getopt_long's rule); a repeated option keeps its last value, except -p
 * (adds processes) and --cgroup (one per run).
 */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "memtop/abi.h"
#include "export/export.h"
#include "export/serve_addr.h"
#include "util/out_file.h"
#include "util/pattern.h"

#ifndef MEMTOP_VERSION
#define MEMTOP_VERSION "dev"
#endif

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Defaults that the header leaves to this file; the help text repeats them
 * and tests/unit/test_cli.c checks that both agree. */
#define CLI_DEFAULT_INTERVAL_S 1.0
#define CLI_DEFAULT_TOP 20
#define CLI_DEFAULT_STACK_COPY 8192
#define CLI_DEFAULT_LIVE_MAX 65536
#define CLI_DEFAULT_MAX_STACKS 8192
#define CLI_DEFAULT_PUSH_EVERY_S 15.0
#define CLI_DEFAULT_MAX_OVERHEAD_PCT 10.0

#define CLI_MIN_DELAY_S 0.05 /* below this memtop would spin on its own ticks */
#define CLI_MAX_DELAY_S 3600.0
#define CLI_MAX_EVERY_S 86400.0 /* --output-every, --push-every */
#define CLI_MIN_EVERY_S 1.0
#define CLI_MAX_RATE (1ULL << 30)
#define CLI_MIN_STACK_COPY 512
#define CLI_MIN_LIVE_MAX 1024
#define CLI_MAX_LIVE_MAX (16U << 20)
#define CLI_MIN_RECORD_MAX (64ULL << 10)
#define CLI_MAX_RECORD_MAX (1ULL << 40)
#define CLI_MIN_MAX_STACKS 16
#define CLI_MAX_MAX_STACKS (1U << 20)
#define CLI_PID_MAX 4194304 /* the kernel's PID_MAX_LIMIT on 64-bit */

/* Width of the option column in --help, and of the whole text. */
#define HELP_COL 27
#define HELP_WIDTH 79

/* ==== The option table ==================================================== */

enum cli_section {
	SEC_TARGETS,
	SEC_OUTPUT,
	SEC_SAMPLING,
	SEC_DISPLAY,
	SEC_EXPORT,
	SEC_RECORD,
	SEC_OVERHEAD,
	SEC_OTHER,
	SEC_COUNT,
	SEC_HIDDEN, /* not in --help: --man */
};

static const char *const cli_section_titles[SEC_COUNT] = {
	[SEC_TARGETS] = "Targets (exactly one):",
	[SEC_OUTPUT] = "Output:",
	[SEC_SAMPLING] = "Sampling:",
	[SEC_DISPLAY] = "Display:",
	[SEC_EXPORT] = "Export:",
	[SEC_RECORD] = "Recording and sessions:",
	[SEC_OVERHEAD] = "Overhead:",
	[SEC_OTHER] = "Other:",
};

/* getopt_long values of options without a short letter. */
enum {
	OPT_CGROUP = 256,
	OPT_JSON,
	OPT_TOP,
	OPT_TIER,
	OPT_RATE,
	OPT_GROUP,
	OPT_SKIP,
	OPT_PROBE_MODE,
	OPT_STACK_COPY,
	OPT_LIVE_MAX,
	OPT_MAX_STACKS,
	OPT_THEME,
	OPT_ASCII,
	OPT_NO_COLOR,
	OPT_OUTPUT,
	OPT_OUTPUT_EVERY,
	OPT_FOLDED,
	OPT_PUSH,
	OPT_PUSH_EVERY,
	OPT_SERVE,
	OPT_MAX_OVERHEAD,
	OPT_NO_PRELOAD,
	OPT_INJECT,
	OPT_NO_INJECT,
	OPT_NO_HOLD,
	OPT_CMD_LOG,
	OPT_RECORD,
	OPT_RECORD_MAX,
	OPT_REPLAY,
	OPT_DAEMON,
	OPT_NO_CONFIG,
	OPT_MAN,
};

struct cli_opt {
	const char *name; /* long name; NULL: a help-only line (the "--" entry) */
	int val;          /* short letter, OPT_*, or 0 for help-only lines */
	const char *arg;  /* argument name shown in help; NULL: takes none */
	enum cli_section section;
	const char *help; /* one paragraph, wrapped by cli_help() */
};

static const struct cli_opt cli_opts[] = {
	{ "pid", 'p', "PID[,PID...]", SEC_TARGETS,
	  "watch running processes (repeatable; at most 256)" },
	{ "cgroup", OPT_CGROUP, "PATH|ID", SEC_TARGETS,
	  "watch every process of a cgroup: a path under /sys/fs/cgroup, "
	  "a cgroup id or a pod uid" },
	{ NULL, 0, "CMD [ARG...]", SEC_TARGETS,
	  "launch CMD and watch it, and the processes it starts, from their "
	  "first allocation; everything after the first -- belongs to CMD" },
	{ "cmd-log", OPT_CMD_LOG, "FILE", SEC_TARGETS,
	  "with -- CMD, where its stdout and stderr go (default "
	  "memtop-cmd-PID.log in $XDG_STATE_HOME/memtop, else "
	  "~/.local/state/memtop, the newest 20 kept; said on stderr): never "
	  "over the display, into -b/--json output or the current directory" },

	{ "batch", 'b', NULL, SEC_OUTPUT,
	  "print text tables to stdout instead of the interactive view" },
	{ "json", OPT_JSON, NULL, SEC_OUTPUT, "print each interval as one line of JSON (implies -b)" },
	{ "delay", 'd', "SECS", SEC_OUTPUT, "refresh interval in seconds, 0.05 to 3600 (default 1)" },
	{ "iterations", 'n', "COUNT", SEC_OUTPUT,
	  "stop after COUNT >= 1 intervals (default: run until stopped)" },
	{ "top", OPT_TOP, "N", SEC_OUTPUT,
	  "call sites per interval in -b and --json output; 0 shows all "
	  "(default 20)" },
	{ "tier", OPT_TIER, "WHICH", SEC_OUTPUT,
	  "the call sites shown: all, host (the heap) or device (Vulkan, "
	  "OpenCL and CUDA allocations; docs/device-memory.md); the live "
	  "view's T key cycles it (default all)" },
	{ "verbose", 'v', NULL, SEC_OUTPUT, "more diagnostics on stderr; repeat for more" },

	{ "rate", OPT_RATE, "BYTES", SEC_SAMPLING,
	  "mean bytes allocated between two samples, 1 = every allocation, "
	  "at most 1G (default 512K); a Go program is sampled by its own "
	  "runtime, at its runtime.MemProfileRate (docs/go.md)" },
	{ "group", OPT_GROUP, "HOW", SEC_SAMPLING,
	  "one call site per function, per line (function and file:line) "
	  "or per stack (default function)" },
	{ "skip", OPT_SKIP, "REGEX", SEC_SAMPLING,
	  "also treat frames whose function matches REGEX anywhere as allocator "
	  "code, so the call site is their caller. REGEX is POSIX extended "
	  "without back references or escapes of letters (\\d, \\w), at most "
	  "256 bytes and 1024 states ({m,n} counts at most 255): matched in time "
	  "linear in the name (docs/allocators.md)" },
	{ "stack-copy", OPT_STACK_COPY, "BYTES", SEC_SAMPLING,
	  "user stack copied per sample for unwinding: 0 (frame pointers only) "
	  "or 512 to 16K, a multiple of 8 (default 8K)" },
	{ "live-max", OPT_LIVE_MAX, "N", SEC_SAMPLING,
	  "sampled allocations tracked until freed, 1K to 16M (default 64K)" },
	{ "max-stacks", OPT_MAX_STACKS, "N", SEC_SAMPLING,
	  "distinct stacks kept per target, 16 to 1M (default 8K); its samples "
	  "in stacks new past that are counted in one [too many stacks] site" },

	{ "theme", OPT_THEME, "NAME|PATH", SEC_DISPLAY,
	  "colour theme: a name from themes/ or a theme file (default: "
	  "built-in)" },
	{ "ascii", OPT_ASCII, NULL, SEC_DISPLAY, "ASCII-only bars, sparklines and flame blocks" },
	{ "no-color", OPT_NO_COLOR, NULL, SEC_DISPLAY, "no colours (also when NO_COLOR is set)" },
	{ "no-config", OPT_NO_CONFIG, NULL, SEC_DISPLAY,
	  "do not read ~/.config/memtop/memtoprc, the settings F2 saves "
	  "(options given here always win over it)" },

	{ "output", OPT_OUTPUT, "FILE", SEC_EXPORT,
	  "write a gzipped pprof heap profile to FILE at exit" },
	{ "output-every", OPT_OUTPUT_EVERY, "SECS", SEC_EXPORT,
	  "also write numbered snapshots (FILE.0001.pb.gz, ...) every SECS, "
	  "1 to 86400 (default: only at exit)" },
	{ "folded", OPT_FOLDED, "FILE", SEC_EXPORT,
	  "write folded stacks of in-use bytes (flamegraph.pl) to FILE at exit" },
	{ "push", OPT_PUSH, "URL", SEC_EXPORT,
	  "push pprof profiles to a Pyroscope-compatible /ingest endpoint "
	  "at an http:// or https:// URL" },
	{ "push-every", OPT_PUSH_EVERY, "SECS", SEC_EXPORT, "push interval, 1 to 86400 (default 15)" },
	{ "serve", OPT_SERVE, "ADDR", SEC_EXPORT,
	  "serve /debug/pprof/heap, /debug/pprof/allocs and /metrics over HTTP "
	  "at ADDR: HOST:PORT, :PORT or PORT (then on 127.0.0.1; port 0 picks "
	  "one, printed on stderr). Loopback unless a non-loopback IP address "
	  "is spelled out: anyone who reaches it reads the profiles. At most "
	  "16 connections, 4 from one client (a user on this host, else an "
	  "address): more are answered 503 at once" },

	{ "record", OPT_RECORD, "FILE", SEC_RECORD,
	  "append everything memtop learns to FILE as it happens (mode 0600; "
	  "docs/recording.md): readable up to the last complete interval "
	  "however memtop ends" },
	{ "record-max", OPT_RECORD_MAX, "SIZE", SEC_RECORD,
	  "bound the recording, 64K to 1024G: two segments FILE and FILE.1 of "
	  "SIZE/2 each, the oldest dropped when a new one starts (default: "
	  "unbounded; 64M for --daemon's own recording)" },
	{ "replay", OPT_REPLAY, "FILE", SEC_RECORD,
	  "show a recording instead of live processes: the TUI (with [ ] { } "
	  "to move through time), -b, --json, --output and --folded as the live "
	  "run had them" },
	{ "daemon", OPT_DAEMON, NULL, SEC_RECORD,
	  "run headless in the background (survives the terminal and SIGHUP), "
	  "serving the session on /run/memtop/PID.sock (root only) for "
	  "`memtop attach`; records to --record FILE, else to "
	  "/run/memtop/PID.rec (removed when the session ends; a killed "
	  "session's files are removed by the next --daemon or attach)" },

	{ "max-overhead", OPT_MAX_OVERHEAD, "PCT", SEC_OVERHEAD,
	  "how much the probes may slow a target down, in % of its own CPU "
	  "time (0 < PCT <= 1000, or none); above it memtop samples only part "
	  "of the time and says so (default 10)" },
	{ "probe-mode", OPT_PROBE_MODE, "MODE", SEC_OVERHEAD,
	  "how returned addresses are caught: session (a return probe on "
	  "sampled calls only, Linux 6.13+), uretprobe (on every call) or "
	  "auto, which picks session when the kernel has it (default auto)" },
	{ "no-preload", OPT_NO_PRELOAD, NULL, SEC_OVERHEAD,
	  "with -- CMD, load nothing of memtop's into the command (neither its "
	  "in-process sampler nor, in a JVM, its JVMTI agent): trap glibc's "
	  "allocator with uprobes instead" },
	{ "inject", OPT_INJECT, NULL, SEC_OVERHEAD,
	  "with -p or --cgroup, sample in-process or fail: without it memtop "
	  "loads its sampler into each running process when it can (one thread "
	  "held a few ms with ptrace; a few ns per allocator call instead of a "
	  "trap; CPython's object allocator wrapped too), puts the process back "
	  "when it exits, and uses uprobes, saying why, where it cannot "
	  "(docs/inject.md); in a Node.js process it also starts V8's sampling "
	  "heap profiler, from inside, for JavaScript call sites (docs/node.md)" },
	{ "no-inject", OPT_NO_INJECT, NULL, SEC_OVERHEAD,
	  "never change a watched process: uprobes only, kept within "
	  "--max-overhead by sampling part of the time; a Go program's "
	  "runtime.MemProfileRate of 0 is left at 0 (docs/go.md); no Java or "
	  "JavaScript sites (no agent is loaded: docs/java.md, docs/node.md)" },

	{ "no-hold", OPT_NO_HOLD, NULL, SEC_OVERHEAD,
	  "with --cgroup or -- CMD, never stop a process that a followed "
	  "process starts: it is counted from when memtop finds it (50-100 ms "
	  "after its start). Without it a program one execs (and, in a "
	  "cgroup, a child one on uprobes forks), unless it has a terminal, "
	  "is stopped until memtop's probes are on (a few ms; at most 1 s, "
	  "whatever becomes of memtop) and counted from its first allocation "
	  "(docs/cgroup.md)" },

	{ "help", 'h', NULL, SEC_OTHER, "show this help and exit" },
	{ "version", 'V', NULL, SEC_OTHER, "show the version and exit" },
	{ "man", OPT_MAN, NULL, SEC_HIDDEN, "print the manual page (roff) and exit" },
};

#define CLI_NOPTS ARRAY_SIZE(cli_opts)

static const char cli_usage[] =
	"Usage: memtop [OPTIONS] -p PID[,PID...]\n"
	"       memtop [OPTIONS] --cgroup PATH|ID\n"
	"       memtop [OPTIONS] -- CMD [ARG...]\n"
	"       memtop [OPTIONS] --replay FILE\n"
	"       memtop attach [OPTIONS] [ID|SOCKET]\n"
	"\n"
	"Live memory profiler: samples the allocations of running processes and\n"
	"shows, per call site, allocation rate, in-use bytes, growth and a leak\n"
	"score.\n"
	"\n"
	"memtop attach opens the TUI on a --daemon session (ID is its PID, or\n"
	"give the socket's path); q or d detaches, the session runs on. Without\n"
	"an argument it lists the sessions.\n";

static const char cli_trailer[] =
	"Sizes take K, M or G suffixes (binary: 1K = 1024); a fraction needs a\n"
	"suffix (1.5M) and is rounded down to whole bytes. Seconds may have\n"
	"decimals (0.5).\n"
	"\n"
	"-- CMD runs in a session and process group of its own, its output in\n"
	"--cmd-log. When memtop ends (-n reached, q, SIGINT, SIGTERM, SIGHUP) it\n"
	"sends SIGTERM to that group and to every descendant it followed, even\n"
	"one that left the group, then SIGKILL to what still runs 1 s later.\n"
	"In the TUI, d at q's question leaves them all running, unprobed.\n"
	"\n"
	"--output, --folded, --record (and FILE.1, FILE.new), --cmd-log,\n"
	"--output-every's numbered files and the file --replay reads must be\n"
	"different files, however they are spelled (a terminal or /dev/null may\n"
	"be shared). The gzipped --output is not written to a terminal; --folded\n"
	"is text, with control characters in names shown as ?.\n"
	"\n"
	"Examples:\n"
	"  sudo memtop -p 4242                      watch a running process\n"
	"  sudo memtop -b --json -n 5 -- ./server   run ./server, print 5 JSON lines\n"
	"  sudo memtop --cgroup <pod-uid>           watch every process of a pod\n";

static const char *const cli_tier_names[] = {
	[MT_TIERS_ALL] = "all",
	[MT_TIERS_HOST] = "host",
	[MT_TIERS_DEVICE] = "device",
};

static const char *const cli_probe_mode_names[] = {
	[MT_PROBE_AUTO] = "auto",
	[MT_PROBE_SESSION] = "session",
	[MT_PROBE_URETPROBE] = "uretprobe",
};

/* ==== Bounded output buffer =============================================== */

/* Appends to a caller buffer; never writes past cap, always NUL-terminates
 * when cap > 0, and remembers whether something was cut. */
struct cli_out {
	char *buf;
	size_t cap;
	size_t len;
	bool truncated;
};

static void out_vprintf(struct cli_out *o, const char *fmt, va_list ap)
{
	int n;

	if (!o->buf || o->cap == 0 || o->truncated)
		return;
	n = vsnprintf(o->buf + o->len, o->cap - o->len, fmt, ap);
	if (n < 0)
		return;
	if ((size_t)n >= o->cap - o->len) {
		o->len = o->cap - 1;
		o->truncated = true;
		/* Do not leave half a UTF-8 sequence at the end. */
		while (o->len > 0 && ((unsigned char)o->buf[o->len - 1] & 0xC0) == 0x80)
			o->len--;
		if (o->len > 0 && ((unsigned char)o->buf[o->len - 1] & 0xC0) == 0xC0)
			o->len--;
		o->buf[o->len] = '\0';
		return;
	}
	o->len += (size_t)n;
}

static void __attribute__((format(printf, 2, 3))) out_printf(struct cli_out *o, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	out_vprintf(o, fmt, ap);
	va_end(ap);
}

/* ==== Parser state and errors ============================================= */

struct cli_ctx {
	int argc;
	char **argv;
	struct mt_config *cfg;
	struct cli_out out;
	char label[32]; /* the current option as typed: "-d" or "--delay" */
	bool cgroup_set;
	bool inject_given; /* --inject or --no-inject */
};

/* Put one "memtop: ..." line into out, replacing whatever was there;
 * control bytes from user input become '?' so it stays one line. */
static enum mt_cli_result __attribute__((format(printf, 2, 3)))
cli_error(struct cli_ctx *c, const char *fmt, ...)
{
	va_list ap;
	size_t i;

	c->out.len = 0;
	c->out.truncated = false;
	out_printf(&c->out, "memtop: ");
	va_start(ap, fmt);
	out_vprintf(&c->out, fmt, ap);
	va_end(ap);
	for (i = 0; i < c->out.len; i++) {
		unsigned char ch = (unsigned char)c->out.buf[i];

		if (ch < 0x20 || ch == 0x7f)
			c->out.buf[i] = '?';
	}
	return MT_CLI_ERROR;
}

static const struct cli_opt *cli_opt_by_val(int val)
{
	size_t i;

	for (i = 0; i < CLI_NOPTS; i++)
		if (cli_opts[i].name && cli_opts[i].val == val)
			return &cli_opts[i];
	return NULL;
}

/* The argv element getopt was looking at when it returned; scan is the
 * optind before the call (0 right after the reset means argv[1]). */
static const char *cli_scanned(const struct cli_ctx *c, int scan)
{
	if (scan < 1)
		scan = 1;
	return scan < c->argc ? c->argv[scan] : "";
}

/* Name the option val as the user typed it: "-d" when it came from a short
 * option (alone or in a cluster such as -bd5), else "--delay". */
static void cli_set_label(struct cli_ctx *c, int val, int scan)
{
	const struct cli_opt *o = cli_opt_by_val(val);
	const char *arg = cli_scanned(c, scan);

	if (strncmp(arg, "--", 2) != 0 && val < 256)
		snprintf(c->label, sizeof(c->label), "-%c", val);
	else
		snprintf(c->label, sizeof(c->label), "--%s", o ? o->name : "?");
}

/* getopt_long returned '?' for the argument at scan. */
static enum mt_cli_result cli_bad_option(struct cli_ctx *c, int scan)
{
	const char *arg = cli_scanned(c, scan);
	const char *cands[CLI_NOPTS];
	size_t len, i, n = 0;

	if (strncmp(arg, "--", 2) != 0)
		return cli_error(c, "unknown option '-%c' (see memtop --help)", optopt);

	if (optopt) {
		cli_set_label(c, optopt, scan);
		return cli_error(c, "%s takes no value", c->label);
	}
	len = strcspn(arg + 2, "=");
	for (i = 0; i < CLI_NOPTS && len; i++)
		if (cli_opts[i].name && strncmp(cli_opts[i].name, arg + 2, len) == 0)
			cands[n++] = cli_opts[i].name;
	if (n > 1) {
		char list[256] = "";
		size_t used = 0;

		for (i = 0; i < n && used < sizeof(list); i++)
			used += (size_t)snprintf(list + used, sizeof(list) - used, "%s--%s",
						 i ? ", " : "", cands[i]);
		return cli_error(c, "option '--%.*s' is ambiguous (%s)", (int)len, arg + 2, list);
	}
	return cli_error(c, "unknown option '--%.*s' (see memtop --help)", (int)len, arg + 2);
}

/* ==== Value parsers ======================================================= */

/* Digits only, no sign, no spaces. 0, -EINVAL or -ERANGE. */
static int parse_u64(const char *s, __u64 *out)
{
	__u64 v = 0;

	if (!*s)
		return -EINVAL;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -EINVAL;
		if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, *s - '0', &v))
			return -ERANGE;
	}
	*out = v;
	return 0;
}

/* "DIGITS[.DIGITS]": a non-negative decimal, locale independent, at most
 * 15 significant digits (so the result is the correctly rounded double). */
static int parse_decimal(const char *s, double *out)
{
	__u64 mant = 0, scale = 1;
	int digits = 0;
	bool dot = false, seen = false, frac_seen = false;

	for (; *s; s++) {
		if (*s == '.' && !dot) {
			if (!seen)
				return -EINVAL;
			dot = true;
			continue;
		}
		if (*s < '0' || *s > '9')
			return -EINVAL;
		seen = true;
		if (dot)
			frac_seen = true;
		if (mant == 0 && *s == '0' && !dot)
			continue; /* leading zeros are not significant */
		if (++digits > 15)
			return -ERANGE;
		mant = mant * 10 + (__u64)(*s - '0');
		if (dot)
			scale *= 10;
	}
	if (!seen || (dot && !frac_seen))
		return -EINVAL;
	*out = (double)mant / (double)scale;
	return 0;
}

/* 1 << 10, 20, 30 for K, M, G in either case; 1 for anything else. */
static __u64 size_multiplier(char c)
{
	switch (c) {
	case 'k':
	case 'K':
		return 1ULL << 10;
	case 'm':
	case 'M':
		return 1ULL << 20;
	case 'g':
	case 'G':
		return 1ULL << 30;
	default:
		return 1;
	}
}

/*
 * Grammar: DIGITS [ "." DIGITS ] [ K|M|G [ "B" | "iB" ] | "B" ], letters in
 * either case, multipliers binary (1K = 1024). Decisions:
 * - a fraction needs a multiplier ("1.5M" = 1572864, "1.5" is -EINVAL) and
 *   the result is rounded down to whole bytes ("0.3K" = 307); at most 18
 *   digits after the point;
 * - no sign, no spaces, no hex, no exponent, no T: -EINVAL;
 * - more than fits a __u64: -ERANGE; *out is only written on success.
 */
int cli_parse_size(const char *s, __u64 *out)
{
	const char *p = s, *ip, *fp = NULL;
	size_t ilen, flen = 0, i;
	__u64 mult = 1, ival = 0, fval = 0, fscale = 1;
	unsigned __int128 v;

	if (!s || !out)
		return -EINVAL;
	ip = p;
	while (*p >= '0' && *p <= '9')
		p++;
	ilen = (size_t)(p - ip);
	if (ilen == 0)
		return -EINVAL;
	if (*p == '.') {
		fp = ++p;
		while (*p >= '0' && *p <= '9')
			p++;
		flen = (size_t)(p - fp);
		if (flen == 0 || flen > 18)
			return -EINVAL;
	}
	mult = size_multiplier(*p);
	if (mult > 1)
		p++;
	if (mult > 1 && (*p == 'i' || *p == 'I')) {
		p++;
		if (*p != 'b' && *p != 'B')
			return -EINVAL;
	}
	if (*p == 'b' || *p == 'B')
		p++;
	if (*p)
		return -EINVAL;
	if (fp && mult == 1)
		return -EINVAL; /* "1.5" bytes: fractions need a K/M/G multiplier */

	for (i = 0; i < ilen; i++)
		if (__builtin_mul_overflow(ival, 10, &ival) ||
		    __builtin_add_overflow(ival, (__u64)(ip[i] - '0'), &ival))
			return -ERANGE;
	for (i = 0; i < flen; i++) {
		fval = fval * 10 + (__u64)(fp[i] - '0');
		fscale *= 10;
	}
	v = (unsigned __int128)ival * mult + (unsigned __int128)fval * mult / fscale;
	if (v > UINT64_MAX)
		return -ERANGE;
	*out = (__u64)v;
	return 0;
}

/* Short human form of a size for messages: 16384 -> "16K". */
static const char *size_str(__u64 v, char *buf, size_t len)
{
	static const char units[] = "GMK";
	int shift, u;

	for (u = 0, shift = 30; shift > 0; u++, shift -= 10) {
		if (v && (v & ((1ULL << shift) - 1)) == 0) {
			snprintf(buf, len, "%llu%c", (unsigned long long)(v >> shift), units[u]);
			return buf;
		}
	}
	snprintf(buf, len, "%llu", (unsigned long long)v);
	return buf;
}

/* "-5": well formed but below any minimum, so "out of range" rather than
 * "not a number" is the useful message. */
static bool is_negative(const char *arg)
{
	return arg[0] == '-' && arg[1] >= '0' && arg[1] <= '9';
}

static enum mt_cli_result cli_out_of_range(struct cli_ctx *c, const char *arg, const char *range)
{
	return cli_error(c, "%s: '%s' is out of range (%s)", c->label, arg, range);
}

/* A whole number in [min, max]; what names the unit in messages. */
static enum mt_cli_result cli_number(struct cli_ctx *c, const char *arg, __u64 min, __u64 max,
				     const char *range, __u64 *out)
{
	int err = parse_u64(arg, out);

	if (err == -EINVAL && !is_negative(arg))
		return cli_error(c, "%s: '%s' is not a whole number", c->label, arg);
	if (err || *out < min || *out > max)
		return cli_out_of_range(c, arg, range);
	return MT_CLI_RUN;
}

/* A decimal in (0, max], and >= min; what names the expected kind of value
 * ("a number of seconds") in the message for malformed input. */
static enum mt_cli_result cli_decimal(struct cli_ctx *c, const char *arg, double min, double max,
				      const char *what, const char *range, double *out)
{
	int err = parse_decimal(arg, out);

	if (err == -EINVAL && !is_negative(arg))
		return cli_error(c, "%s: '%s' is not %s", c->label, arg, what);
	if (err || *out <= 0 || *out < min || *out > max)
		return cli_out_of_range(c, arg, range);
	return MT_CLI_RUN;
}

static enum mt_cli_result cli_seconds(struct cli_ctx *c, const char *arg, double min, double max,
				      const char *range, double *out)
{
	return cli_decimal(c, arg, min, max, "a number of seconds (e.g. 2, 0.5)", range, out);
}

/* A size in [min, max] bytes, or exactly 0 when zero_ok. */
static enum mt_cli_result cli_size(struct cli_ctx *c, const char *arg, __u64 min, __u64 max,
				   bool zero_ok, const char *range, __u64 *out)
{
	int err = cli_parse_size(arg, out);

	if (err == -EINVAL && !is_negative(arg))
		return cli_error(c, "%s: '%s' is not a size (use e.g. 512K, 4M)", c->label, arg);
	if (err || ((*out < min || *out > max) && !(zero_ok && *out == 0)))
		return cli_out_of_range(c, arg, range);
	return MT_CLI_RUN;
}

static enum mt_cli_result cli_choice(struct cli_ctx *c, const char *arg, const char *const *names,
				     size_t n, int *out)
{
	char list[128] = "";
	size_t i, used = 0;

	for (i = 0; i < n; i++) {
		if (strcmp(arg, names[i]) == 0) {
			*out = (int)i;
			return MT_CLI_RUN;
		}
	}
	for (i = 0; i < n; i++)
		used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%s",
					 i == 0       ? ""
					 : i + 1 == n ? " or "
						      : ", ",
					 names[i]);
	return cli_error(c, "%s: '%s' is not %s", c->label, arg, list);
}

static enum mt_cli_result cli_nonempty(struct cli_ctx *c, const char *arg, const char *what,
				       const char **out)
{
	if (!*arg)
		return cli_error(c, "%s: empty %s", c->label, what);
	*out = arg;
	return MT_CLI_RUN;
}

/* "-p 1,2 -p 3": positive pids, no duplicates, at most MT_MAX_PIDS. */
static enum mt_cli_result cli_pids(struct cli_ctx *c, const char *arg)
{
	struct mt_config *cfg = c->cfg;
	const char *p = arg;
	char tok[32];
	__u64 v;
	int i, err;

	do {
		size_t len = strcspn(p, ",");

		if (len == 0 || len >= sizeof(tok))
			return cli_error(c, "%s: '%s' is not a list of process ids", c->label, arg);
		memcpy(tok, p, len);
		tok[len] = '\0';
		err = parse_u64(tok, &v);
		if (err == -EINVAL)
			return cli_error(c, "%s: '%s' is not a process id", c->label, tok);
		if (err || v == 0 || v > CLI_PID_MAX)
			return cli_error(c, "%s: '%s' is not a process id (1 to %d)", c->label, tok,
					 CLI_PID_MAX);
		for (i = 0; i < cfg->npids; i++)
			if (cfg->pids[i] == (pid_t)v)
				return cli_error(c, "%s: process %llu given twice", c->label,
						 (unsigned long long)v);
		if (cfg->npids == MT_MAX_PIDS)
			return cli_error(c, "%s: too many processes (at most %d)", c->label,
					 MT_MAX_PIDS);
		cfg->pids[cfg->npids++] = (pid_t)v;
		p += len;
	} while (*p++ == ',');
	return MT_CLI_RUN;
}

/* "http://" or "https://" (scheme in any case) and something after it. */
static enum mt_cli_result cli_url(struct cli_ctx *c, const char *arg)
{
	static const char *const schemes[] = { "http://", "https://" };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(schemes); i++) {
		size_t n = strlen(schemes[i]);

		if (strncasecmp(arg, schemes[i], n) == 0 && arg[n] && arg[n] != '/') {
			c->cfg->push_url = arg;
			return MT_CLI_RUN;
		}
	}
	return cli_error(c, "%s: '%s' is not an http:// or https:// URL", c->label, arg);
}

/* A --skip pattern: one util/pattern.h compiles, within its bounds. */
static enum mt_cli_result cli_pattern(struct cli_ctx *c, const char *arg)
{
	char why[128];
	struct pattern *p = pattern_compile(arg, why, sizeof(why));

	if (!p && errno == ENOMEM)
		return cli_error(c, "%s: out of memory", c->label);
	if (!p && strnlen(arg, PATTERN_MAX_LEN + 1) > PATTERN_MAX_LEN)
		return cli_error(c, "%s: a pattern of %zu bytes refused: %s (see memtop --help)",
				 c->label, strlen(arg), why);
	if (!p)
		return cli_error(c, "%s: pattern '%s' refused: %s (see memtop --help)", c->label,
				 arg, why);
	pattern_free(p);
	c->cfg->skip_regex = arg;
	return MT_CLI_RUN;
}

/* ==== One option ========================================================== */

static enum mt_cli_result cli_option(struct cli_ctx *c, int val, const char *arg)
{
	struct mt_config *cfg = c->cfg;
	enum mt_cli_result r = MT_CLI_RUN;
	char big[16];
	__u64 u = 0;
	int choice = 0;

	switch (val) {
	case 'p':
		return cli_pids(c, arg);
	case OPT_CGROUP:
		if (c->cgroup_set)
			return cli_error(c, "%s given twice (one cgroup per run)", c->label);
		c->cgroup_set = true;
		return cli_nonempty(c, arg, "cgroup", &cfg->cgroup);
	case 'b':
		cfg->batch = true;
		return MT_CLI_RUN;
	case OPT_JSON:
		cfg->json = true;
		cfg->batch = true;
		return MT_CLI_RUN;
	case 'd':
		cfg->given |= MT_GIVEN_DELAY;
		return cli_seconds(c, arg, CLI_MIN_DELAY_S, CLI_MAX_DELAY_S, "0.05 to 3600",
				   &cfg->interval_s);
	case 'n':
		r = cli_number(c, arg, 1, LONG_MAX, "COUNT >= 1", &u);
		cfg->count = (long)u;
		return r;
	case OPT_TOP:
		r = cli_number(c, arg, 0, INT_MAX, "N >= 0", &u);
		cfg->top = (int)u;
		return r;
	case OPT_TIER:
		r = cli_choice(c, arg, cli_tier_names, ARRAY_SIZE(cli_tier_names), &choice);
		cfg->tiers = (enum mt_tiers)choice;
		return r;
	case 'v':
		if (cfg->verbose < INT_MAX)
			cfg->verbose++;
		return MT_CLI_RUN;
	case OPT_RATE:
		if (cli_parse_size(arg, &u) == 0 && u == 0)
			return cli_error(c,
					 "%s: must be at least 1 (at 1, every allocation is sampled)",
					 c->label);
		return cli_size(c, arg, 1, CLI_MAX_RATE, false, "1 to 1G", &cfg->rate);
	case OPT_GROUP:
		cfg->given |= MT_GIVEN_GROUP;
		r = cli_choice(c, arg, mt_group_names(), MT_GROUP_COUNT, &choice);
		cfg->group = (enum mt_group)choice;
		return r;
	case OPT_SKIP:
		return cli_pattern(c, arg);
	case OPT_PROBE_MODE:
		r = cli_choice(c, arg, cli_probe_mode_names, ARRAY_SIZE(cli_probe_mode_names),
			       &choice);
		cfg->probe_mode = (enum mt_probe_mode)choice;
		return r;
	case OPT_STACK_COPY: {
		char range[48];

		snprintf(range, sizeof(range), "0, or 512 to %s",
			 size_str(MT_STACK_COPY_MAX, big, sizeof(big)));
		r = cli_size(c, arg, CLI_MIN_STACK_COPY, MT_STACK_COPY_MAX, true, range, &u);
		if (r != MT_CLI_RUN)
			return r;
		if (u % 8)
			return cli_error(c, "%s: '%s' is not a multiple of 8", c->label, arg);
		cfg->stack_copy = (__u32)u;
		return MT_CLI_RUN;
	}
	case OPT_LIVE_MAX:
		r = cli_size(c, arg, CLI_MIN_LIVE_MAX, CLI_MAX_LIVE_MAX, false, "1K to 16M", &u);
		cfg->live_max = (__u32)u;
		return r;
	case OPT_MAX_STACKS:
		r = cli_size(c, arg, CLI_MIN_MAX_STACKS, CLI_MAX_MAX_STACKS, false, "16 to 1M", &u);
		cfg->max_stacks = (__u32)u;
		return r;
	case OPT_THEME:
		cfg->given |= MT_GIVEN_THEME;
		return cli_nonempty(c, arg, "theme", &cfg->theme);
	case OPT_ASCII:
		cfg->ascii = true;
		return MT_CLI_RUN;
	case OPT_NO_COLOR:
		cfg->no_color = true;
		return MT_CLI_RUN;
	case OPT_NO_CONFIG:
		cfg->no_config = true;
		return MT_CLI_RUN;
	case OPT_OUTPUT:
		return cli_nonempty(c, arg, "file name", &cfg->output);
	case OPT_OUTPUT_EVERY:
		return cli_seconds(c, arg, CLI_MIN_EVERY_S, CLI_MAX_EVERY_S, "1 to 86400",
				   &cfg->output_every);
	case OPT_FOLDED:
		return cli_nonempty(c, arg, "file name", &cfg->folded);
	case OPT_PUSH:
		return cli_url(c, arg);
	case OPT_PUSH_EVERY:
		return cli_seconds(c, arg, CLI_MIN_EVERY_S, CLI_MAX_EVERY_S, "1 to 86400",
				   &cfg->push_every);
	case OPT_SERVE: {
		struct sockaddr_storage ss;
		socklen_t len;
		bool loopback;
		char err[160];

		if (serve_parse_addr(arg, &ss, &len, &loopback, err, sizeof(err)))
			return cli_error(c, "%s: %s", c->label, err);
		cfg->serve = arg;
		return MT_CLI_RUN;
	}
	case OPT_MAX_OVERHEAD:
		if (!strcmp(arg, "none")) {
			cfg->max_overhead_pct = 0;
			return MT_CLI_RUN;
		}
		return cli_decimal(c, arg, 0, 1000, "a percentage (e.g. 10, 2.5) or none",
				   "0 < PCT <= 1000", &cfg->max_overhead_pct);
	case OPT_NO_PRELOAD:
		cfg->no_preload = true;
		return MT_CLI_RUN;
	case OPT_NO_HOLD:
		cfg->no_hold = true;
		return MT_CLI_RUN;
	case OPT_INJECT:
	case OPT_NO_INJECT: {
		enum mt_inject_mode m = val == OPT_INJECT ? MT_INJECT_ALWAYS : MT_INJECT_NEVER;

		if (c->inject_given && cfg->inject_mode != m)
			return cli_error(c, "--inject and --no-inject cannot be combined");
		c->inject_given = true;
		cfg->given |= MT_GIVEN_INJECT;
		cfg->inject_mode = m;
		return MT_CLI_RUN;
	}
	case OPT_CMD_LOG:
		return cli_nonempty(c, arg, "file name", &cfg->cmd_log);
	case OPT_RECORD:
		return cli_nonempty(c, arg, "file name", &cfg->record);
	case OPT_RECORD_MAX:
		return cli_size(c, arg, CLI_MIN_RECORD_MAX, CLI_MAX_RECORD_MAX, false,
				"64K to 1024G", &cfg->record_max);
	case OPT_REPLAY:
		return cli_nonempty(c, arg, "file name", &cfg->replay);
	case OPT_DAEMON:
		cfg->daemon = true;
		return MT_CLI_RUN;
	default:
		return cli_error(c, "internal error: option %d has no handler", val);
	}
}

/* ==== Help ================================================================ */

/* Word-wrap text into the help column, starting on the current line at
 * column col. */
static void help_wrap(struct cli_out *o, const char *text, int col)
{
	const char *p = text;

	while (*p) {
		size_t word = strcspn(p, " ");

		if (col > HELP_COL && col + 1 + (int)word > HELP_WIDTH) {
			out_printf(o, "\n%*s", HELP_COL, "");
			col = HELP_COL;
		} else if (col > HELP_COL) {
			out_printf(o, " ");
			col++;
		}
		out_printf(o, "%.*s", (int)word, p);
		col += (int)word;
		p += word;
		while (*p == ' ')
			p++;
	}
	out_printf(o, "\n");
}

static void cli_help(struct cli_out *o)
{
	int sec;
	size_t i;

	out_printf(o, "%s", cli_usage);
	for (sec = 0; sec < SEC_COUNT; sec++) {
		out_printf(o, "\n%s\n", cli_section_titles[sec]);
		for (i = 0; i < CLI_NOPTS; i++) {
			const struct cli_opt *opt = &cli_opts[i];
			char left[64];
			int n;

			if (opt->section != (enum cli_section)sec)
				continue;
			if (!opt->name)
				n = snprintf(left, sizeof(left), "  -- %s", opt->arg);
			else if (opt->val < 256)
				n = snprintf(left, sizeof(left), "  -%c, --%s%s%s", opt->val,
					     opt->name, opt->arg ? " " : "",
					     opt->arg ? opt->arg : "");
			else
				n = snprintf(left, sizeof(left), "      --%s%s%s", opt->name,
					     opt->arg ? " " : "", opt->arg ? opt->arg : "");
			if (n > HELP_COL - 2)
				out_printf(o, "%s\n%*s", left, HELP_COL, "");
			else
				out_printf(o, "%-*s", HELP_COL, left);
			help_wrap(o, opt->help, HELP_COL);
		}
	}
	out_printf(o, "\n%s", cli_trailer);
}

bool cli_option_at(size_t i, struct cli_option_info *out)
{
	size_t k = 0;

	for (int sec = 0; sec < SEC_COUNT; sec++) {
		for (size_t j = 0; j < CLI_NOPTS; j++) {
			const struct cli_opt *o = &cli_opts[j];

			if (o->section != (enum cli_section)sec || k++ != i)
				continue;
			*out = (struct cli_option_info){
				.long_name = o->name,
				.short_name = o->name && o->val < 256 ? (char)o->val : 0,
				.arg = o->arg,
				.section = cli_section_titles[sec],
				.help = o->help,
			};
			return true;
		}
	}
	return false;
}

const char *cli_usage_text(void)
{
	return cli_usage;
}

const char *cli_trailer_text(void)
{
	return cli_trailer;
}

/* ==== Entry point ========================================================= */

static void cli_defaults(struct mt_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->interval_s = CLI_DEFAULT_INTERVAL_S;
	cfg->count = -1;
	cfg->top = CLI_DEFAULT_TOP;
	cfg->rate = MT_DEFAULT_RATE;
	cfg->group = MT_GROUP_FUNCTION;
	cfg->probe_mode = MT_PROBE_AUTO;
	cfg->stack_copy = CLI_DEFAULT_STACK_COPY;
	cfg->live_max = CLI_DEFAULT_LIVE_MAX;
	cfg->max_stacks = CLI_DEFAULT_MAX_STACKS;
	cfg->push_every = CLI_DEFAULT_PUSH_EVERY_S;
	cfg->max_overhead_pct = CLI_DEFAULT_MAX_OVERHEAD_PCT;
}

/* Exactly one target; dependent options need their base option. */
static enum mt_cli_result cli_check_args(struct cli_ctx *c, bool push_every_set, bool output_every_set)
{
	const struct mt_config *cfg = c->cfg;
	const char *given[3];
	int n = 0;

	if (cfg->npids)
		given[n++] = "-p";
	if (cfg->cgroup)
		given[n++] = "--cgroup";
	if (cfg->cmd_argv)
		given[n++] = "-- CMD";
	if (cfg->attach || cfg->replay) {
		const char *what = cfg->attach ? "memtop attach" : "--replay";

		if (n)
			return cli_error(c, "%s shows recorded data: %s cannot be given with it",
					 what, given[0]);
		if (cfg->record || cfg->daemon || cfg->push_url || cfg->serve || c->inject_given ||
		    cfg->record_max)
			return cli_error(c, "%s shows recorded data: %s cannot be given with it",
					 what,
					 cfg->record       ? "--record"
					 : cfg->daemon     ? "--daemon"
					 : cfg->push_url   ? "--push"
					 : cfg->serve      ? "--serve"
					 : c->inject_given ? (cfg->inject_mode == MT_INJECT_ALWAYS
								      ? "--inject"
								      : "--no-inject")
							   : "--record-max");
		if (cfg->attach && (cfg->batch || cfg->replay || cfg->output || cfg->folded))
			return cli_error(c, "memtop attach opens the TUI: %s cannot be given with it",
					 cfg->replay   ? "--replay"
					 : cfg->batch  ? "-b/--json"
					 : cfg->output ? "--output"
						       : "--folded");
		if (output_every_set)
			return cli_error(
				c,
				"--output-every is for live runs: a replay writes --output at its end");
		return MT_CLI_RUN;
	}
	if (n == 0)
		return cli_error(c, "no target: use -p PID, --cgroup PATH or -- CMD");
	if (n > 1)
		return cli_error(c, "%s and %s cannot be combined: choose one target", given[0],
				 given[1]);
	if (cfg->no_preload && !cfg->cmd_argv)
		return cli_error(c,
				 "--no-preload is for -- CMD: memtop preloads its sampler only "
				 "into a command it starts (%s)",
				 given[0]);
	if (cfg->no_hold && !cfg->cmd_argv && !cfg->cgroup)
		return cli_error(c,
				 "--no-hold is for --cgroup and -- CMD: memtop holds only the "
				 "programs that processes it follows start (%s)",
				 given[0]);
	if (c->inject_given && cfg->cmd_argv)
		return cli_error(c,
				 "%s is for running processes (-p, --cgroup): -- CMD starts the "
				 "command with the sampler preloaded (--no-preload: uprobes)",
				 cfg->inject_mode == MT_INJECT_ALWAYS ? "--inject" : "--no-inject");
	if (output_every_set && !cfg->output)
		return cli_error(c, "--output-every needs --output FILE");
	if (push_every_set && !cfg->push_url)
		return cli_error(c, "--push-every needs --push URL");
	if (cfg->cmd_log && !cfg->cmd_argv)
		return cli_error(c, "--cmd-log needs a command to run (-- CMD)");
	if (cfg->record_max && !cfg->record && !cfg->daemon)
		return cli_error(c, "--record-max needs --record FILE (or --daemon)");
	if (cfg->daemon && cfg->batch)
		return cli_error(
			c, "--daemon runs without a display: -b and --json cannot be given with it");
	return MT_CLI_RUN;
}

/* ==== Two outputs, one file ================================================ */

/* A file memtop writes (or, for --replay, reads while it writes the
 * others), as the command line names it. */
struct cli_file {
	const char *opt;  /* "--output", ... */
	const char *path; /* as given */
	const char *what; /* --record-max's: which file of the recording */
	char buf[PATH_MAX + 8];
};

/* One line for two options that name one file; every output would lose
 * the other's bytes (a file replaced over the recording being appended,
 * two streams mixed in one FIFO). */
static enum mt_cli_result cli_same_file(struct cli_ctx *c, const struct cli_file *a,
					const struct cli_file *b)
{
	if (!strcmp(a->opt, "--replay"))
		return cli_error(c, "%s %s would overwrite the recording --replay %s reads", b->opt,
				 b->path, a->path);
	if (!strcmp(a->opt, "--record-max"))
		return cli_error(c,
				 "%s %s is %s --record %s (with --record-max): "
				 "each would overwrite the other",
				 b->opt, b->path, a->what, c->cfg->record);
	return cli_error(c, "%s %s and %s %s name the same file: each would overwrite the other",
			 a->opt, a->path, b->opt, b->path);
}

/* Every pair of files the run writes must be two files (out_file_same():
 * by device and inode, else by canonical name), and none of them one of
 * --output-every's numbered snapshots. A character device (a terminal,
 * /dev/null) may be shared: it is written through, nothing replaced. */
static enum mt_cli_result cli_check_outputs(struct cli_ctx *c, bool output_every_set)
{
	const struct mt_config *cfg = c->cfg;
	struct cli_file f[7];
	char base[PATH_MAX + 8], other[PATH_MAX + 8], dir[PATH_MAX];
	size_t n = 0, i, j;

	if (cfg->replay)
		f[n++] = (struct cli_file){ .opt = "--replay", .path = cfg->replay };
	if (cfg->record && (cfg->record_max || cfg->daemon)) {
		f[n] = (struct cli_file){ .opt = "--record-max", .what = "the second segment of" };
		snprintf(f[n].buf, sizeof(f[n].buf), "%s.1", cfg->record);
		f[n].path = f[n].buf;
		n++;
		f[n] = (struct cli_file){ .opt = "--record-max",
					  .what = "the next segment (while it is written) of" };
		snprintf(f[n].buf, sizeof(f[n].buf), "%s.new", cfg->record);
		f[n].path = f[n].buf;
		n++;
	}
	if (cfg->output)
		f[n++] = (struct cli_file){ .opt = "--output", .path = cfg->output };
	if (cfg->folded)
		f[n++] = (struct cli_file){ .opt = "--folded", .path = cfg->folded };
	if (cfg->record)
		f[n++] = (struct cli_file){ .opt = "--record", .path = cfg->record };
	if (cfg->cmd_log && cfg->cmd_argv)
		f[n++] = (struct cli_file){ .opt = "--cmd-log", .path = cfg->cmd_log };
	for (i = 0; i < n; i++)
		for (j = i + 1; j < n; j++)
			if (out_file_same(f[i].path, f[j].path) == OUT_FILE_SAME)
				return cli_same_file(c, &f[i], &f[j]);
	if (!output_every_set || !cfg->output)
		return MT_CLI_RUN;
	/* the snapshots go beside --output under its name (not its link
	 * target's): its directory resolved, its name as given */
	{
		const char *slash = strrchr(cfg->output, '/');
		size_t dlen = slash ? (size_t)(slash - cfg->output) : 0;

		if (!slash)
			snprintf(dir, sizeof(dir), ".");
		else
			snprintf(dir, sizeof(dir), "%.*s", (int)(dlen ? dlen : 1), cfg->output);
		if (out_file_canonical(dir, base, sizeof(base)))
			snprintf(base, sizeof(base), "%s", dir);
		snprintf(base + strlen(base), sizeof(base) - strlen(base), "%s%s",
			 strcmp(base, "/") ? "/" : "", slash ? slash + 1 : cfg->output);
	}
	for (i = 0; i < n; i++) {
		if (!strcmp(f[i].opt, "--output"))
			continue;
		out_file_canonical(f[i].path, other, sizeof(other));
		if (export_is_numbered(base, other))
			return cli_error(c,
					 "%s %s is one of --output-every's numbered snapshots of "
					 "--output %s: each would overwrite the other",
					 f[i].opt, f[i].path, cfg->output);
	}
	return MT_CLI_RUN;
}

/* The arguments' rules, then the files they name. */
static enum mt_cli_result cli_check(struct cli_ctx *c, bool push_every_set, bool output_every_set)
{
	enum mt_cli_result r = cli_check_args(c, push_every_set, output_every_set);

	return r == MT_CLI_RUN ? cli_check_outputs(c, output_every_set) : r;
}

enum mt_cli_result cli_parse(int argc, char **argv, struct mt_config *cfg, char *out, size_t outlen)
{
	struct option longopts[CLI_NOPTS + 1];
	struct cli_ctx c = {
		.argc = argc,
		.argv = argv,
		.cfg = cfg,
		.out = { .buf = out, .cap = out ? outlen : 0 },
	};
	bool push_every_set = false, output_every_set = false, dashdash = false;
	size_t i, n = 0;
	int val, scan;

	if (c.out.cap)
		out[0] = '\0';
	cli_defaults(cfg);
	for (i = 0; i < CLI_NOPTS; i++) {
		if (!cli_opts[i].name)
			continue;
		longopts[n++] = (struct option){
			.name = cli_opts[i].name,
			.has_arg = cli_opts[i].arg ? required_argument : no_argument,
			.val = cli_opts[i].val,
		};
	}
	longopts[n] = (struct option){ 0 };

	if (argc < 1 || !argv)
		return cli_check(&c, false, false);
	if (argc >= 2 && argv[1] && !strcmp(argv[1], "attach")) {
		/* memtop attach [OPTIONS] [ID|SOCKET]: "attach" stands for argv[0] */
		cfg->attach = true;
		argc--;
		argv++;
		c.argc = argc;
		c.argv = argv;
	}

	optind = 0; /* full reset of glibc's getopt state */
	opterr = 0;
	for (;;) {
		scan = optind;
		val = getopt_long(argc, argv, "+:p:bd:n:vhV", longopts, NULL);
		if (val == -1)
			break;
		if (val == '?')
			return cli_bad_option(&c, scan);
		if (val == ':') {
			const struct cli_opt *o;

			cli_set_label(&c, optopt, scan);
			o = cli_opt_by_val(optopt);
			return cli_error(&c, "%s: missing %s", c.label, o ? o->arg : "value");
		}
		if (val == 'h') {
			cli_help(&c.out);
			return MT_CLI_EXIT_OK;
		}
		if (val == OPT_MAN)
			return MT_CLI_MAN;
		if (val == 'V') {
			out_printf(&c.out, "memtop %s\n", MEMTOP_VERSION);
			return MT_CLI_EXIT_OK;
		}
		cli_set_label(&c, val, scan);
		if (cli_option(&c, val, optarg) != MT_CLI_RUN)
			return MT_CLI_ERROR;
		push_every_set |= val == OPT_PUSH_EVERY;
		output_every_set |= val == OPT_OUTPUT_EVERY;
	}

	/* getopt stopped either after consuming a "--" (then optind moved past
	 * it in this very call) or at the first non-option argument. */
	dashdash = optind > scan && optind - 1 >= 1 && strcmp(argv[optind - 1], "--") == 0;
	if (cfg->attach && !dashdash && optind < argc) {
		if (optind + 1 < argc)
			return cli_error(&c,
					 "memtop attach takes one session (ID or SOCKET), not '%s'",
					 argv[optind + 1]);
		cfg->attach_to = argv[optind];
		return cli_check(&c, push_every_set, output_every_set);
	}
	if (!dashdash && optind < argc)
		return cli_error(&c, "unexpected argument '%s' (a command to run goes after --)",
				 argv[optind]);
	if (dashdash) {
		if (optind >= argc)
			return cli_error(&c, "-- needs a command to run (e.g. -- ./server)");
		cfg->cmd_argv = &argv[optind];
		cfg->cmd_argc = argc - optind;
	}
	return cli_check(&c, push_every_set, output_every_set);
}

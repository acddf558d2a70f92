// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_cli.c - every option of cli_parse(), every error message (exact
 * text), the target and dependency rules, "--" handling, the --help text
 * and cli_parse_size()'s grammar.
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

#include "memtop/abi.h"

#ifndef MEMTOP_VERSION
#define MEMTOP_VERSION "dev"
#endif

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static char out[16384];
static struct mt_config cfg;
static char *argv_buf[1100];
static int argc_buf;

/* cli_parse() of "memtop" followed by the NULL-terminated arguments. */
static enum mt_cli_result parse_v(const char *first, va_list ap)
{
	const char *a;

	argc_buf = 0;
	argv_buf[argc_buf++] = (char *)"memtop";
	for (a = first; a; a = va_arg(ap, const char *))
		argv_buf[argc_buf++] = (char *)a;
	argv_buf[argc_buf] = NULL;
	memset(out, 'X', sizeof(out));
	return cli_parse(argc_buf, argv_buf, &cfg, out, sizeof(out));
}

static enum mt_cli_result parse(const char *first, ...)
{
	enum mt_cli_result r;
	va_list ap;

	va_start(ap, first);
	r = parse_v(first, ap);
	va_end(ap);
	if (r == MT_CLI_RUN)
		assert_string_equal(out, "");
	return r;
}

/* Expect MT_CLI_ERROR with exactly msg: one line, no newline. */
static void expect_error(const char *msg, const char *first, ...)
{
	enum mt_cli_result r;
	va_list ap;

	va_start(ap, first);
	r = parse_v(first, ap);
	va_end(ap);
	if (r != MT_CLI_ERROR || strcmp(out, msg) != 0)
		print_error("want error \"%s\", got %d \"%s\"\n", msg, r, r == MT_CLI_RUN ? "" : out);
	assert_int_equal(r, MT_CLI_ERROR);
	assert_string_equal(out, msg);
	assert_null(strchr(out, '\n'));
}

/* rm -r of the few files a test made in dir. */
static void unlink_tree(const char *dir)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

#define OK(...) assert_int_equal(parse(__VA_ARGS__, NULL), MT_CLI_RUN)
#define ERR(msg, ...) expect_error(msg, __VA_ARGS__, NULL)

/* ==== Defaults and help =================================================== */

static void test_defaults(void **state)
{
	OK("-p", "1");
	assert_int_equal(cfg.npids, 1);
	assert_int_equal(cfg.pids[0], 1);
	assert_null(cfg.cmd_argv);
	assert_int_equal(cfg.cmd_argc, 0);
	assert_null(cfg.cgroup);
	assert_false(cfg.batch);
	assert_false(cfg.json);
	assert_true(cfg.interval_s == 1.0);
	assert_int_equal(cfg.count, -1);
	assert_int_equal(cfg.top, 20);
	assert_int_equal(cfg.rate, MT_DEFAULT_RATE);
	assert_int_equal(cfg.rate, 512 * 1024);
	assert_int_equal(cfg.group, MT_GROUP_FUNCTION);
	assert_null(cfg.skip_regex);
	assert_int_equal(cfg.probe_mode, MT_PROBE_AUTO);
	assert_int_equal(cfg.stack_copy, 8192);
	assert_int_equal(cfg.live_max, 65536);
	assert_null(cfg.theme);
	assert_false(cfg.ascii);
	assert_false(cfg.no_color);
	assert_null(cfg.output);
	assert_true(cfg.output_every == 0);
	assert_null(cfg.folded);
	assert_null(cfg.push_url);
	assert_true(cfg.push_every == 15.0);
	assert_true(cfg.max_overhead_pct == 10.0);
	assert_false(cfg.no_preload);
	assert_int_equal(cfg.verbose, 0);
}

static const char *const all_long_options[] = {
	"--pid",        "--cgroup",       "--batch",        "--json",      "--delay",
	"--iterations", "--top",          "--rate",         "--group",     "--skip",
	"--probe-mode", "--stack-copy",   "--live-max",     "--theme",     "--ascii",
	"--no-color",   "--output",       "--output-every", "--folded",    "--push",
	"--push-every", "--max-overhead", "--no-preload",   "--no-inject", "--verbose",
	"--help",       "--version",      "--tier",         "--no-hold",
};

/* Help text with every run of blanks and newlines as one space, so a
 * phrase can be found wherever the wrapping broke it. */
static void flatten(char *dst, const char *src)
{
	bool blank = false;

	for (; *src; src++) {
		if (*src == ' ' || *src == '\n') {
			blank = true;
			continue;
		}
		if (blank)
			*dst++ = ' ';
		blank = false;
		*dst++ = *src;
	}
	*dst = '\0';
}

static void test_help(void **state)
{
	static const char *const in_order[] = {
		"Usage: memtop", "Targets", "Output:",   "Sampling:",
		"Display:",      "Export:", "Overhead:", "Examples:",
	};
	/* The defaults the help states, matching test_defaults. */
	static const char *const defaults[] = {
		"(default 1)",         "(default 20)",
		"(default 512K)",      "(default function)",
		"(default 8K)",        "(default 64K)",
		"(default 15)",        "(default 10)",
		"(default auto)",      "(default: run until stopped)",
		"(default: built-in)", "(default: only at exit)",
	};
	static const char *const examples[] = {
		"sudo memtop -p 4242",
		"sudo memtop -b --json -n 5 -- ./server",
		"sudo memtop --cgroup <pod-uid>",
	};
	static char flat[sizeof(out)];
	const char *p, *line;
	size_t i, len;

	assert_int_equal(parse("--help", NULL), MT_CLI_EXIT_OK);
	len = strlen(out);
	assert_true(len > 1000);
	assert_true(len < 12288);
	assert_int_equal(out[len - 1], '\n');
	flatten(flat, out);
	for (i = 0; i < ARRAY_SIZE(all_long_options); i++) {
		if (!strstr(out, all_long_options[i]))
			print_error("help lacks %s\n", all_long_options[i]);
		assert_non_null(strstr(out, all_long_options[i]));
	}
	for (i = 0, p = out; i < ARRAY_SIZE(in_order); i++) {
		p = strstr(p, in_order[i]);
		assert_non_null(p);
	}
	for (i = 0; i < ARRAY_SIZE(defaults); i++) {
		if (!strstr(flat, defaults[i]))
			print_error("help lacks %s\n", defaults[i]);
		assert_non_null(strstr(flat, defaults[i]));
	}
	for (i = 0; i < ARRAY_SIZE(examples); i++)
		assert_non_null(strstr(out, examples[i]));
	assert_non_null(strstr(out, "  -p, --pid PID[,PID...]"));
	assert_non_null(strstr(out, "  -- CMD [ARG...]"));
	assert_non_null(strstr(out, "  -d, --delay SECS"));
	/* Fits an 80-column terminal, ASCII only, no tabs. */
	for (line = out; *line; line = p + 1) {
		p = strchr(line, '\n');
		assert_non_null(p);
		assert_true(p - line <= 79);
	}
	for (i = 0; i < len; i++)
		assert_true(out[i] == '\n' || (out[i] >= 0x20 && out[i] < 0x7f));

	/* -h wins wherever it is, even without a target, and parsing stops. */
	assert_int_equal(parse("-h", NULL), MT_CLI_EXIT_OK);
	assert_true(strlen(out) == len);
	assert_int_equal(parse("-p", "1", "-h", "--bogus", NULL), MT_CLI_EXIT_OK);
	assert_true(strlen(out) == len);
}

static void test_help_truncated(void **state)
{
	static char full[16384], small[100];
	char *argv[] = { (char *)"memtop", (char *)"--help", NULL };

	assert_int_equal(cli_parse(2, argv, &cfg, full, sizeof(full)), MT_CLI_EXIT_OK);
	memset(small, 'X', sizeof(small));
	assert_int_equal(cli_parse(2, argv, &cfg, small, sizeof(small)), MT_CLI_EXIT_OK);
	assert_int_equal(strlen(small), sizeof(small) - 1);
	assert_memory_equal(small, full, sizeof(small) - 1);
	assert_int_equal(cli_parse(2, argv, &cfg, small, 1), MT_CLI_EXIT_OK);
	assert_string_equal(small, "");
	assert_int_equal(cli_parse(2, argv, &cfg, NULL, 0), MT_CLI_EXIT_OK);
}

static void test_version(void **state)
{
	assert_int_equal(parse("-V", NULL), MT_CLI_EXIT_OK);
	assert_string_equal(out, "memtop " MEMTOP_VERSION "\n");
	assert_int_equal(parse("--version", NULL), MT_CLI_EXIT_OK);
	assert_string_equal(out, "memtop " MEMTOP_VERSION "\n");
}

/* ==== Targets ============================================================= */

static void test_pids(void **state)
{
	OK("-p", "1,2", "-p", "3", "--pid=42", "-p7", "--pid", "4194304");
	assert_int_equal(cfg.npids, 6);
	assert_int_equal(cfg.pids[0], 1);
	assert_int_equal(cfg.pids[1], 2);
	assert_int_equal(cfg.pids[2], 3);
	assert_int_equal(cfg.pids[3], 42);
	assert_int_equal(cfg.pids[4], 7);
	assert_int_equal(cfg.pids[5], 4194304);

	ERR("memtop: -p: '0' is not a process id (1 to 4194304)", "-p", "0");
	ERR("memtop: -p: '4194305' is not a process id (1 to 4194304)", "-p", "4194305");
	ERR("memtop: -p: '99999999999999999999' is not a process id (1 to 4194304)", "-p",
	    "99999999999999999999");
	ERR("memtop: -p: 'abc' is not a process id", "-p", "abc");
	ERR("memtop: -p: '-1' is not a process id", "-p", "-1");
	ERR("memtop: -p: '+1' is not a process id", "-p", "+1");
	ERR("memtop: -p: ' 1' is not a process id", "-p", " 1");
	ERR("memtop: --pid: '1x' is not a process id", "--pid", "1,1x");
	ERR("memtop: -p: '1,,2' is not a list of process ids", "-p", "1,,2");
	ERR("memtop: -p: '1,' is not a list of process ids", "-p", "1,");
	ERR("memtop: -p: ',1' is not a list of process ids", "-p", ",1");
	ERR("memtop: -p: '' is not a list of process ids", "-p", "");
	ERR("memtop: -p: process 5 given twice", "-p", "5,6,5");
	ERR("memtop: -p: process 5 given twice", "-p", "5", "-p", "5");
	ERR("memtop: -p: missing PID[,PID...]", "-p");
	ERR("memtop: --pid: missing PID[,PID...]", "--pid");
}

/* Up to MT_MAX_PIDS processes, across several -p. */
static void test_pid_limit(void **state)
{
	static char list[MT_MAX_PIDS * 8], more[16];
	size_t used = 0;
	int i;

	for (i = 1; i <= MT_MAX_PIDS; i++)
		used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%d", i > 1 ? "," : "",
					 i);
	OK("-p", list);
	assert_int_equal(cfg.npids, MT_MAX_PIDS);
	assert_int_equal(cfg.pids[MT_MAX_PIDS - 1], MT_MAX_PIDS);
	snprintf(more, sizeof(more), "%d", MT_MAX_PIDS + 1);
	ERR("memtop: -p: too many processes (at most 256)", "-p", list, "-p", more);
}

static void test_cgroup(void **state)
{
	OK("--cgroup", "/sys/fs/cgroup/kubepods/pod1234");
	assert_string_equal(cfg.cgroup, "/sys/fs/cgroup/kubepods/pod1234");
	assert_int_equal(cfg.npids, 0);
	OK("--cgroup=4e1f-ab");
	assert_string_equal(cfg.cgroup, "4e1f-ab");
	ERR("memtop: --cgroup: empty cgroup", "--cgroup=");
	ERR("memtop: --cgroup given twice (one cgroup per run)", "--cgroup", "a", "--cgroup", "b");
	ERR("memtop: --cgroup: missing PATH|ID", "--cgroup");
}

static void test_command(void **state)
{
	OK("-b", "--", "./cmd", "-p", "3");
	assert_true(cfg.batch);
	assert_int_equal(cfg.npids, 0);
	assert_int_equal(cfg.cmd_argc, 3);
	assert_ptr_equal(cfg.cmd_argv, &argv_buf[3]); /* points into argv */
	assert_string_equal(cfg.cmd_argv[0], "./cmd");
	assert_string_equal(cfg.cmd_argv[1], "-p");
	assert_string_equal(cfg.cmd_argv[2], "3");
	assert_null(cfg.cmd_argv[3]);

	/* A second "--" belongs to the command. */
	OK("--", "./cmd", "--", "x");
	assert_int_equal(cfg.cmd_argc, 3);
	assert_string_equal(cfg.cmd_argv[1], "--");

	/* "--" as an option's value is not the separator. */
	OK("-p", "1", "--skip", "--");
	assert_string_equal(cfg.skip_regex, "--");
	assert_null(cfg.cmd_argv);
	OK("--skip", "--", "--", "./cmd");
	assert_string_equal(cfg.skip_regex, "--");
	assert_int_equal(cfg.cmd_argc, 1);
	assert_string_equal(cfg.cmd_argv[0], "./cmd");
	OK("--theme=--", "--", "./cmd");
	assert_string_equal(cfg.theme, "--");

	ERR("memtop: -- needs a command to run (e.g. -- ./server)", "--");
	ERR("memtop: -- needs a command to run (e.g. -- ./server)", "-b", "--");
	ERR("memtop: unexpected argument './server' (a command to run goes after --)", "./server");
	ERR("memtop: unexpected argument 'x' (a command to run goes after --)", "-p", "1", "x", "-b");
	ERR("memtop: unexpected argument '-' (a command to run goes after --)", "-p", "1", "-");
}

/* argv is read only: no permutation, even with options after operands
 * (GNU getopt would otherwise move "x" behind "-b -p 1"). */
static void test_argv_untouched(void **state)
{
	char *argv[] = { (char *)"memtop", (char *)"x", (char *)"-b",
			 (char *)"-p",     (char *)"1", NULL };
	char *copy[ARRAY_SIZE(argv)];
	size_t i;

	memcpy(copy, argv, sizeof(argv));
	assert_int_equal(cli_parse(5, argv, &cfg, out, sizeof(out)), MT_CLI_ERROR);
	assert_string_equal(out, "memtop: unexpected argument 'x' (a command to run goes after --)");
	assert_false(cfg.batch); /* parsing stopped at "x" */
	for (i = 0; i < ARRAY_SIZE(argv); i++)
		assert_ptr_equal(copy[i], argv[i]);

	OK("-b", "--", "./cmd", "-p", "3");
	assert_string_equal(argv_buf[1], "-b");
	assert_string_equal(argv_buf[2], "--");
	assert_string_equal(argv_buf[3], "./cmd");
	assert_string_equal(argv_buf[4], "-p");
}

static void test_target_rules(void **state)
{
	ERR("memtop: no target: use -p PID, --cgroup PATH or -- CMD", "-b");
	ERR("memtop: no target: use -p PID, --cgroup PATH or -- CMD", "--json", "-n", "3");
	ERR("memtop: -p and --cgroup cannot be combined: choose one target", "-p", "1", "--cgroup",
	    "x");
	ERR("memtop: -p and --cgroup cannot be combined: choose one target", "--cgroup", "x", "-p",
	    "1");
	ERR("memtop: -p and -- CMD cannot be combined: choose one target", "-p", "1", "--", "./x");
	ERR("memtop: --cgroup and -- CMD cannot be combined: choose one target", "--cgroup", "x",
	    "--", "./x");
	ERR("memtop: -p and --cgroup cannot be combined: choose one target", "-p", "1", "--cgroup",
	    "x", "--", "./x");
	ERR("memtop: --no-preload is for -- CMD: memtop preloads its sampler only into a command "
	    "it starts (-p)",
	    "-p", "1", "--no-preload");
	ERR("memtop: --no-preload is for -- CMD: memtop preloads its sampler only into a command "
	    "it starts (--cgroup)",
	    "--no-preload", "--cgroup", "x");
	OK("--no-preload", "--", "./x");
	assert_true(cfg.no_preload);
	/* the hold of the programs followed processes start */
	ERR("memtop: --no-hold is for --cgroup and -- CMD: memtop holds only the programs that "
	    "processes it follows start (-p)",
	    "-p", "1", "--no-hold");
	OK("--cgroup", "x");
	assert_false(cfg.no_hold);
	OK("--no-hold", "--cgroup", "x");
	assert_true(cfg.no_hold);
	OK("--no-hold", "--", "./x");
	assert_true(cfg.no_hold);
	/* in-process sampling: the default asks the process, the options
	 * require it or rule it out, one of them, for running processes */
	OK("-p", "1");
	assert_int_equal(cfg.inject_mode, MT_INJECT_AUTO);
	OK("-p", "1", "--inject");
	assert_int_equal(cfg.inject_mode, MT_INJECT_ALWAYS);
	OK("--cgroup", "x", "--no-inject");
	assert_int_equal(cfg.inject_mode, MT_INJECT_NEVER);
	OK("-p", "1", "--inject", "--inject");
	ERR("memtop: --inject and --no-inject cannot be combined", "-p", "1", "--inject",
	    "--no-inject");
	ERR("memtop: --no-inject is for running processes (-p, --cgroup): -- CMD starts the "
	    "command with the sampler preloaded (--no-preload: uprobes)",
	    "--no-inject", "--", "./x");
	ERR("memtop: --replay shows recorded data: --no-inject cannot be given with it", "--replay",
	    "f", "--no-inject");

	/* No arguments at all. */
	memset(out, 'X', sizeof(out));
	assert_int_equal(cli_parse(0, NULL, &cfg, out, sizeof(out)), MT_CLI_ERROR);
	assert_string_equal(out, "memtop: no target: use -p PID, --cgroup PATH or -- CMD");
	expect_error("memtop: no target: use -p PID, --cgroup PATH or -- CMD", NULL);
}

/* ==== Recordings and sessions ============================================= */

static void test_record_replay_daemon_attach(void **state)
{
	OK("-p", "1", "--record", "r.mtr");
	assert_string_equal(cfg.record, "r.mtr");
	assert_int_equal(cfg.record_max, 0);
	OK("-p", "1", "--record", "r.mtr", "--record-max", "1M");
	assert_int_equal(cfg.record_max, 1 << 20);
	ERR("memtop: --record-max: '1K' is out of range (64K to 1024G)", "-p", "1", "--record", "r",
	    "--record-max", "1K");
	ERR("memtop: --record-max needs --record FILE (or --daemon)", "-p", "1", "--record-max",
	    "1M");
	OK("-p", "1", "--daemon", "--record-max", "1M");
	assert_true(cfg.daemon);
	ERR("memtop: --daemon runs without a display: -b and --json cannot be given with it", "-p",
	    "1", "--daemon", "--json");

	/* a replay has no target and none of a live run's outputs */
	OK("--replay", "r.mtr", "--json", "--output", "o.pb.gz");
	assert_string_equal(cfg.replay, "r.mtr");
	ERR("memtop: --replay shows recorded data: -p cannot be given with it", "--replay", "r",
	    "-p", "1");
	ERR("memtop: --replay shows recorded data: --record cannot be given with it", "--replay",
	    "r", "--record", "x");
	ERR("memtop: --replay shows recorded data: --serve cannot be given with it", "--replay",
	    "r", "--serve", "0");

	/* memtop attach [OPTIONS] [ID|SOCKET] */
	OK("attach");
	assert_true(cfg.attach);
	assert_null(cfg.attach_to);
	OK("attach", "--ascii", "5150");
	assert_true(cfg.ascii);
	assert_string_equal(cfg.attach_to, "5150");
	ERR("memtop: memtop attach takes one session (ID or SOCKET), not 'b'", "attach", "a", "b");
	ERR("memtop: memtop attach opens the TUI: -b/--json cannot be given with it", "attach",
	    "--json");
	ERR("memtop: memtop attach shows recorded data: -p cannot be given with it", "attach", "-p",
	    "1");
	/* "attach" anywhere else is not the subcommand */
	ERR("memtop: unexpected argument 'attach' (a command to run goes after --)", "-p", "1",
	    "attach");
}

/* ==== Output ============================================================== */

static void test_batch_json(void **state)
{
	OK("-p", "1", "-b");
	assert_true(cfg.batch);
	assert_false(cfg.json);
	OK("-p", "1", "--batch");
	assert_true(cfg.batch);
	OK("-p", "1", "--json");
	assert_true(cfg.batch); /* implied */
	assert_true(cfg.json);
	ERR("memtop: --batch takes no value", "-p", "1", "--batch=yes");
	ERR("memtop: --json takes no value", "-p", "1", "--json=1");
}

static void test_delay(void **state)
{
	static const struct {
		const char *arg;
		double want;
	} good[] = {
		{ "2", 2 },         { "0.5", 0.5 }, { "0.05", 0.05 }, { "3600", 3600 },
		{ "3600.0", 3600 }, { "007", 7 },   { "1.25", 1.25 },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(good); i++) {
		OK("-p", "1", "-d", good[i].arg);
		assert_true(cfg.interval_s == good[i].want);
	}
	OK("-p", "1", "--delay=0.25");
	assert_true(cfg.interval_s == 0.25);
	OK("-p", "1", "-bd3");
	assert_true(cfg.batch);
	assert_true(cfg.interval_s == 3);

	ERR("memtop: -d: '0' is out of range (0.05 to 3600)", "-p", "1", "-d", "0");
	ERR("memtop: -d: '0.0' is out of range (0.05 to 3600)", "-p", "1", "-d", "0.0");
	ERR("memtop: -d: '-1' is out of range (0.05 to 3600)", "-p", "1", "-d", "-1");
	/* a busy loop, not an interval */
	ERR("memtop: -d: '0.0000001' is out of range (0.05 to 3600)", "-p", "1", "-d", "0.0000001");
	ERR("memtop: -d: '0.049' is out of range (0.05 to 3600)", "-p", "1", "-d", "0.049");
	ERR("memtop: -d: '3600.001' is out of range (0.05 to 3600)", "-p", "1", "-d", "3600.001");
	ERR("memtop: --delay: '99999999999999999' is out of range (0.05 to 3600)", "-p", "1",
	    "--delay", "99999999999999999");
	ERR("memtop: -d: 'abc' is not a number of seconds (e.g. 2, 0.5)", "-p", "1", "-d", "abc");
	ERR("memtop: -d: '1e3' is not a number of seconds (e.g. 2, 0.5)", "-p", "1", "-d", "1e3");
	ERR("memtop: -d: '.5' is not a number of seconds (e.g. 2, 0.5)", "-p", "1", "-d", ".5");
	ERR("memtop: -d: '5.' is not a number of seconds (e.g. 2, 0.5)", "-p", "1", "-d", "5.");
	ERR("memtop: -d: '1,5' is not a number of seconds (e.g. 2, 0.5)", "-p", "1", "-d", "1,5");
	ERR("memtop: -d: 'inf' is not a number of seconds (e.g. 2, 0.5)", "-p", "1", "-d", "inf");
	ERR("memtop: --delay: '' is not a number of seconds (e.g. 2, 0.5)", "-p", "1", "--delay=");
	ERR("memtop: -d: missing SECS", "-p", "1", "-bd");
	/* The option is named as typed, also when abbreviated. */
	ERR("memtop: --delay: '0' is out of range (0.05 to 3600)", "-p", "1", "--del", "0");
}

static void test_iterations_top_verbose(void **state)
{
	OK("-p", "1", "-n", "5");
	assert_int_equal(cfg.count, 5);
	OK("-p", "1", "--iterations=1");
	assert_int_equal(cfg.count, 1);
	OK("-p", "1", "--iter", "9223372036854775807");
	assert_int_equal(cfg.count, LONG_MAX);
	ERR("memtop: -n: '0' is out of range (COUNT >= 1)", "-p", "1", "-n", "0");
	ERR("memtop: -n: '-1' is out of range (COUNT >= 1)", "-p", "1", "-n", "-1");
	ERR("memtop: -n: '9223372036854775808' is out of range (COUNT >= 1)", "-p", "1", "-n",
	    "9223372036854775808");
	ERR("memtop: -n: '1.5' is not a whole number", "-p", "1", "-n", "1.5");
	ERR("memtop: -n: 'five' is not a whole number", "-p", "1", "-n", "five");

	OK("-p", "1", "--top", "0");
	assert_int_equal(cfg.top, 0);
	OK("-p", "1", "--top=100");
	assert_int_equal(cfg.top, 100);
	ERR("memtop: --top: '-1' is out of range (N >= 0)", "-p", "1", "--top", "-1");
	ERR("memtop: --top: '2147483648' is out of range (N >= 0)", "-p", "1", "--top", "2147483648");
	ERR("memtop: --top: 'all' is not a whole number", "-p", "1", "--top", "all");

	OK("-p", "1", "-v", "-vv", "--verbose");
	assert_int_equal(cfg.verbose, 4);
}

/* ==== Sampling ============================================================ */

static void test_rate(void **state)
{
	OK("-p", "1", "--rate", "1");
	assert_int_equal(cfg.rate, 1);
	OK("-p", "1", "--rate", "4M");
	assert_int_equal(cfg.rate, 4 << 20);
	OK("-p", "1", "--rate=1.5M");
	assert_int_equal(cfg.rate, 1572864);
	OK("-p", "1", "--rate", "1G");
	assert_int_equal(cfg.rate, 1 << 30);
	OK("-p", "1", "--rate", "1K", "--rate", "2K"); /* the last one wins */
	assert_int_equal(cfg.rate, 2048);

	ERR("memtop: --rate: '12X' is not a size (use e.g. 512K, 4M)", "-p", "1", "--rate", "12X");
	ERR("memtop: --rate: must be at least 1 (at 1, every allocation is sampled)", "-p", "1",
	    "--rate", "0");
	ERR("memtop: --rate: must be at least 1 (at 1, every allocation is sampled)", "-p", "1",
	    "--rate", "0K");
	ERR("memtop: --rate: '1025M' is out of range (1 to 1G)", "-p", "1", "--rate", "1025M");
	ERR("memtop: --rate: '1073741825' is out of range (1 to 1G)", "-p", "1", "--rate",
	    "1073741825");
	ERR("memtop: --rate: '99999999999999999999' is out of range (1 to 1G)", "-p", "1", "--rate",
	    "99999999999999999999");
	ERR("memtop: --rate: '-4K' is out of range (1 to 1G)", "-p", "1", "--rate", "-4K");
	ERR("memtop: --rate: '1.5' is not a size (use e.g. 512K, 4M)", "-p", "1", "--rate", "1.5");
	ERR("memtop: --rate: missing BYTES", "-p", "1", "--rate");
}

static void test_parse_size(void **state)
{
	static const struct {
		const char *s;
		int err;
		__u64 v;
	} cases[] = {
		{ "0", 0, 0 },
		{ "1", 0, 1 },
		{ "512", 0, 512 },
		{ "1B", 0, 1 },
		{ "512K", 0, 524288 },
		{ "512k", 0, 524288 },
		{ "512KB", 0, 524288 },
		{ "512KiB", 0, 524288 },
		{ "512kib", 0, 524288 },
		{ "4M", 0, 4194304 },
		{ "4MB", 0, 4194304 },
		{ "4MiB", 0, 4194304 },
		{ "1G", 0, 1073741824 },
		{ "1g", 0, 1073741824 },
		{ "0512K", 0, 524288 },
		/* Fractions need a multiplier and round down to whole bytes. */
		{ "1.5M", 0, 1572864 },
		{ "1.5MiB", 0, 1572864 },
		{ "0.5K", 0, 512 },
		{ "0.3K", 0, 307 },
		{ "1.0000000001G", 0, 1073741824 },
		{ "0.999999999999999999G", 0, 1073741823 },
		/* Limits of __u64. */
		{ "18446744073709551615", 0, UINT64_MAX },
		{ "17179869183G", 0, 17179869183ULL << 30 },
		{ "18446744073709551616", -ERANGE, 0 },
		{ "17179869184G", -ERANGE, 0 },
		{ "99999999999999999999999K", -ERANGE, 0 },
		{ "17179869183.999999999G", 0, UINT64_MAX - 1 },
		/* Not sizes. */
		{ "", -EINVAL, 0 },
		{ "K", -EINVAL, 0 },
		{ "-1", -EINVAL, 0 },
		{ "+1", -EINVAL, 0 },
		{ " 1", -EINVAL, 0 },
		{ "1 ", -EINVAL, 0 },
		{ "1 K", -EINVAL, 0 },
		{ "1.5", -EINVAL, 0 },
		{ "1.5B", -EINVAL, 0 },
		{ ".5K", -EINVAL, 0 },
		{ "1.K", -EINVAL, 0 },
		{ "1..5K", -EINVAL, 0 },
		{ "1.0000000000000000001K", -EINVAL, 0 }, /* > 18 decimals */
		{ "1T", -EINVAL, 0 },
		{ "1KiBx", -EINVAL, 0 },
		{ "1iB", -EINVAL, 0 },
		{ "1Ki", -EINVAL, 0 },
		{ "1KK", -EINVAL, 0 },
		{ "0x10", -EINVAL, 0 },
		{ "1e3", -EINVAL, 0 },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		__u64 v = 12345;
		int err = cli_parse_size(cases[i].s, &v);

		if (err != cases[i].err || (!err && v != cases[i].v))
			print_error("'%s': got %d %llu\n", cases[i].s, err, (unsigned long long)v);
		assert_int_equal(err, cases[i].err);
		if (!err)
			assert_int_equal(v, cases[i].v);
		else
			assert_int_equal(v, 12345); /* untouched on error */
	}
	{
		__u64 v;

		assert_int_equal(cli_parse_size(NULL, &v), -EINVAL);
		assert_int_equal(cli_parse_size("1", NULL), -EINVAL);
	}
}

static void test_group_probe_mode(void **state)
{
	OK("-p", "1", "--group", "function");
	assert_int_equal(cfg.group, MT_GROUP_FUNCTION);
	OK("-p", "1", "--group", "line");
	assert_int_equal(cfg.group, MT_GROUP_LINE);
	OK("-p", "1", "--group=stack");
	assert_int_equal(cfg.group, MT_GROUP_STACK);
	ERR("memtop: --group: 'Function' is not function, line or stack", "-p", "1", "--group",
	    "Function");
	ERR("memtop: --group: '' is not function, line or stack", "-p", "1", "--group=");

	OK("-p", "1");
	assert_int_equal(cfg.tiers, MT_TIERS_ALL);
	OK("-p", "1", "--tier", "device");
	assert_int_equal(cfg.tiers, MT_TIERS_DEVICE);
	OK("-p", "1", "--tier=host");
	assert_int_equal(cfg.tiers, MT_TIERS_HOST);
	OK("-p", "1", "--tier", "all");
	assert_int_equal(cfg.tiers, MT_TIERS_ALL);
	ERR("memtop: --tier: 'gpu' is not all, host or device", "-p", "1", "--tier", "gpu");

	OK("-p", "1", "--probe-mode", "auto");
	assert_int_equal(cfg.probe_mode, MT_PROBE_AUTO);
	OK("-p", "1", "--probe-mode", "session");
	assert_int_equal(cfg.probe_mode, MT_PROBE_SESSION);
	OK("-p", "1", "--probe-mode", "uretprobe");
	assert_int_equal(cfg.probe_mode, MT_PROBE_URETPROBE);
	ERR("memtop: --probe-mode: 'kprobe' is not auto, session or uretprobe", "-p", "1",
	    "--probe-mode", "kprobe");
}

static void test_skip(void **state)
{
	char big[300];

	OK("-p", "1", "--skip", "^(xmalloc|g_malloc0?|my_alloc_.*)$");
	assert_string_equal(cfg.skip_regex, "^(xmalloc|g_malloc0?|my_alloc_.*)$");
	assert_ptr_equal(cfg.skip_regex, argv_buf[4]);
	ERR("memtop: --skip: pattern '(' refused: at byte 1: '(' without ')' (see memtop --help)",
	    "-p", "1", "--skip", "(");
	ERR("memtop: --skip: pattern 'a{2,1}' refused: at byte 2: {2,1} counts backwards (see "
	    "memtop --help)",
	    "-p", "1", "--skip", "a{2,1}");
	ERR("memtop: --skip: pattern '(a)\\1' refused: at byte 4: \\1 is not supported (no back "
	    "references or escapes such as \\d, \\w) (see memtop --help)",
	    "-p", "1", "--skip", "(a)\\1");
	/* the audit's pattern (glibc: 12.5 GB at 24 '+') compiles to 28 states */
	OK("-p", "1", "--skip", "a++++++++++++++++++++++++++");
	ERR("memtop: --skip: pattern '(((a{255}){255}){255}){255}' refused: more than 1024 "
	    "states (a {m,n} or a long pattern expands too far) (see memtop --help)",
	    "-p", "1", "--skip", "(((a{255}){255}){255}){255}");
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	ERR("memtop: --skip: a pattern of 299 bytes refused: longer than 256 bytes (see memtop "
	    "--help)",
	    "-p", "1", "--skip", big);
}

static void test_stack_copy_live_max(void **state)
{
	OK("-p", "1", "--stack-copy", "0");
	assert_int_equal(cfg.stack_copy, 0);
	OK("-p", "1", "--stack-copy", "512");
	assert_int_equal(cfg.stack_copy, 512);
	OK("-p", "1", "--stack-copy", "4K");
	assert_int_equal(cfg.stack_copy, 4096);
	OK("-p", "1", "--stack-copy", "520");
	assert_int_equal(cfg.stack_copy, 520);
	OK("-p", "1", "--stack-copy", "16K");
	assert_int_equal(cfg.stack_copy, MT_STACK_COPY_MAX);
	ERR("memtop: --stack-copy: '516' is not a multiple of 8", "-p", "1", "--stack-copy", "516");
	ERR("memtop: --stack-copy: '511' is out of range (0, or 512 to 16K)", "-p", "1",
	    "--stack-copy", "511");
	ERR("memtop: --stack-copy: '16392' is out of range (0, or 512 to 16K)", "-p", "1",
	    "--stack-copy", "16392");
	ERR("memtop: --stack-copy: 'big' is not a size (use e.g. 512K, 4M)", "-p", "1",
	    "--stack-copy", "big");

	OK("-p", "1", "--live-max", "1024");
	assert_int_equal(cfg.live_max, 1024);
	OK("-p", "1", "--live-max", "1M");
	assert_int_equal(cfg.live_max, 1 << 20);
	OK("-p", "1", "--live-max", "16M");
	assert_int_equal(cfg.live_max, 16 << 20);
	ERR("memtop: --live-max: '1023' is out of range (1K to 16M)", "-p", "1", "--live-max",
	    "1023");
	ERR("memtop: --live-max: '16777217' is out of range (1K to 16M)", "-p", "1", "--live-max",
	    "16777217");
	ERR("memtop: --live-max: '0' is out of range (1K to 16M)", "-p", "1", "--live-max", "0");
}

/* ==== Display and export ================================================== */

static void test_display(void **state)
{
	OK("-p", "1", "--theme", "light", "--ascii", "--no-color");
	assert_string_equal(cfg.theme, "light");
	assert_true(cfg.ascii);
	assert_true(cfg.no_color);
	OK("-p", "1", "--theme", "/etc/memtop/my.theme");
	assert_string_equal(cfg.theme, "/etc/memtop/my.theme");
	ERR("memtop: --theme: empty theme", "-p", "1", "--theme=");
	ERR("memtop: --ascii takes no value", "-p", "1", "--ascii=1");
}

static void test_export(void **state)
{
	OK("-p", "1", "--output", "heap.pb.gz", "--folded", "heap.folded");
	assert_string_equal(cfg.output, "heap.pb.gz");
	assert_string_equal(cfg.folded, "heap.folded");
	assert_true(cfg.output_every == 0);
	OK("-p", "1", "--output-every", "30", "--output", "h.pb.gz"); /* any order */
	assert_true(cfg.output_every == 30);
	OK("-p", "1", "--output", "h", "--output-every", "1.5");
	assert_true(cfg.output_every == 1.5);
	ERR("memtop: --output-every needs --output FILE", "-p", "1", "--output-every", "30");
	ERR("memtop: --output-every: '0.5' is out of range (1 to 86400)", "-p", "1", "--output",
	    "h", "--output-every", "0.5");
	ERR("memtop: --output-every: '86401' is out of range (1 to 86400)", "-p", "1", "--output",
	    "h", "--output-every", "86401");
	ERR("memtop: --output: empty file name", "-p", "1", "--output=");
	ERR("memtop: --folded: empty file name", "-p", "1", "--folded=");

	OK("-p", "1", "--push", "http://localhost:4040/ingest");
	assert_string_equal(cfg.push_url, "http://localhost:4040/ingest");
	assert_true(cfg.push_every == 15);
	OK("-p", "1", "--push", "HTTPS://parca.example/", "--push-every", "60");
	assert_string_equal(cfg.push_url, "HTTPS://parca.example/");
	assert_true(cfg.push_every == 60);
	ERR("memtop: --push: 'ftp://x' is not an http:// or https:// URL", "-p", "1", "--push",
	    "ftp://x");
	ERR("memtop: --push: 'localhost:4040' is not an http:// or https:// URL", "-p", "1",
	    "--push", "localhost:4040");
	ERR("memtop: --push: 'http://' is not an http:// or https:// URL", "-p", "1", "--push",
	    "http://");
	ERR("memtop: --push: 'https:///x' is not an http:// or https:// URL", "-p", "1", "--push",
	    "https:///x");
	ERR("memtop: --push-every needs --push URL", "-p", "1", "--push-every", "30");
	ERR("memtop: --push-every: '0' is out of range (1 to 86400)", "-p", "1", "--push",
	    "http://x", "--push-every", "0");
}

/* ==== Two outputs, one file ============================================== */

/* Every spelling of one file is refused for two outputs: the same string,
 * ./F, a directory reached through a symlink or "..", a symlink to the
 * file, a hard link of it; a file that does not exist yet by its
 * canonical name. --record-max's second segment and its next one while it
 * is written (FILE.new), --output-every's numbered snapshots and the
 * recording --replay reads count too. A character device may be shared. */
static void test_same_file(void **state)
{
	char dir[] = "/tmp/memtop-cli-XXXXXX", cwd[PATH_MAX];
	FILE *f;

	(void)state;
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_non_null(mkdtemp(dir));
	assert_int_equal(chdir(dir), 0);
	assert_int_equal(mkdir("d", 0700), 0);
	assert_int_equal(symlink("d", "dl"), 0);
	f = fopen("G", "w");
	assert_non_null(f);
	fclose(f);
	assert_int_equal(symlink("G", "L"), 0);
	assert_int_equal(link("G", "H"), 0);

	ERR("memtop: --output F and --record F name the same file: each would overwrite the other",
	    "-p", "1", "--output", "F", "--record", "F");
	ERR("memtop: --output F and --record ./F name the same file: each would overwrite the "
	    "other",
	    "-p", "1", "--record", "./F", "--output", "F");
	ERR("memtop: --output d/../d/x and --folded dl/x name the same file: each would "
	    "overwrite the other",
	    "-p", "1", "--output", "d/../d/x", "--folded", "dl/x");
	ERR("memtop: --output L and --folded G name the same file: each would overwrite the other",
	    "-p", "1", "--output", "L", "--folded", "G");
	ERR("memtop: --folded H and --record G name the same file: each would overwrite the other",
	    "-p", "1", "--folded", "H", "--record", "G");
	ERR("memtop: --output F and --cmd-log ./F name the same file: each would overwrite the "
	    "other",
	    "--output", "F", "--cmd-log", "./F", "--", "true");
	ERR("memtop: --output r.1 is the second segment of --record r (with --record-max): each "
	    "would overwrite the other",
	    "-p", "1", "--record", "r", "--record-max", "1M", "--output", "r.1");
	ERR("memtop: --folded ./r.new is the next segment (while it is written) of --record r (with "
	    "--record-max): each would overwrite the other",
	    "-p", "1", "--record", "r", "--record-max", "1M", "--folded", "./r.new");
	ERR("memtop: --folded L would overwrite the recording --replay G reads", "--replay", "G",
	    "--folded", "L");
	ERR("memtop: --folded ./h.0003.pb.gz is one of --output-every's numbered snapshots of "
	    "--output h.pb.gz: each would overwrite the other",
	    "-p", "1", "--output", "h.pb.gz", "--output-every", "5", "--folded", "./h.0003.pb.gz");
	ERR("memtop: --record d/../h.12345 is one of --output-every's numbered snapshots of "
	    "--output h: each would overwrite the other",
	    "-p", "1", "--output", "h", "--output-every", "5", "--record", "d/../h.12345");

	/* two files, or one device written through */
	OK("-p", "1", "--output", "F", "--record", "F2", "--folded", "d/F");
	OK("-p", "1", "--record", "r", "--output", "r.1");                /* no second segment */
	OK("-p", "1", "--output", "h.pb.gz", "--folded", "h.0003.pb.gz"); /* no --output-every */
	OK("-p", "1", "--output", "h.pb.gz", "--output-every", "5", "--folded", "h.003.pb.gz");
	OK("-p", "1", "--output", "/dev/null", "--folded", "/dev/null", "--record", "G");

	assert_int_equal(chdir(cwd), 0);
	unlink_tree(dir);
}

/* ==== Overhead ============================================================ */

static void test_overhead(void **state)
{
	OK("-p", "1", "--max-overhead", "2.5");
	assert_true(cfg.max_overhead_pct == 2.5);
	OK("-p", "1", "--max-overhead", "100");
	assert_true(cfg.max_overhead_pct == 100);
	OK("-p", "1", "--max-overhead", "0.01");
	assert_true(cfg.max_overhead_pct == 0.01);
	OK("-p", "1", "--max-overhead", "none");
	assert_true(cfg.max_overhead_pct == 0);
	OK("-p", "1");
	assert_true(cfg.max_overhead_pct == 10);
	ERR("memtop: --max-overhead: '0' is out of range (0 < PCT <= 1000)", "-p", "1",
	    "--max-overhead", "0");
	ERR("memtop: --max-overhead: '1000.5' is out of range (0 < PCT <= 1000)", "-p", "1",
	    "--max-overhead", "1000.5");
	ERR("memtop: --max-overhead: '5%' is not a percentage (e.g. 10, 2.5) or none", "-p", "1",
	    "--max-overhead", "5%");

	OK("--no-preload", "--", "./server");
	assert_true(cfg.no_preload);
}

/* ==== getopt plumbing ===================================================== */

static void test_unknown_and_ambiguous(void **state)
{
	ERR("memtop: unknown option '-x' (see memtop --help)", "-p", "1", "-x");
	ERR("memtop: unknown option '-x' (see memtop --help)", "-p", "1", "-bx");
	ERR("memtop: unknown option '--bogus' (see memtop --help)", "-p", "1", "--bogus");
	ERR("memtop: unknown option '--bogus' (see memtop --help)", "-p", "1", "--bogus=3");
	ERR("memtop: option '--pus' is ambiguous (--push, --push-every)", "-p", "1", "--pus", "x");
	ERR("memtop: option '--no' is ambiguous (--no-color, --no-config, --no-preload, --no-inject, "
	    "--no-hold)",
	    "-p", "1", "--no");
	ERR("memtop: option '--p' is ambiguous (--pid, --push, --push-every, --probe-mode)", "--p",
	    "1");
	ERR("memtop: unknown option '--' (see memtop --help)", "-p", "1", "--=x");
	ERR("memtop: --rate: missing BYTES", "-p", "1", "--rate");
	ERR("memtop: --stack-copy: missing BYTES", "-p", "1", "--stack-copy");
	/* A unique prefix is accepted, as GNU tools do; exact names win. */
	OK("-p", "1", "--asc", "--push", "http://h", "--it", "2");
	assert_true(cfg.ascii);
	assert_int_equal(cfg.count, 2);
}

/* Messages stay on one line whatever the user typed. */
static void test_error_one_line(void **state)
{
	ERR("memtop: -p: '1?2' is not a process id", "-p", "1\n2");
	ERR("memtop: --group: 'a?b?' is not function, line or stack", "-p", "1", "--group",
	    "a\tb\x1b");
}

/* Errors truncate safely in small buffers, never mid UTF-8 sequence. */
static void test_error_truncated(void **state)
{
	static const char prefix[] = "memtop: --group: '";
	char *argv[] = { (char *)"memtop", (char *)"--group", (char *)"\xc3\xa9", NULL };
	char small[sizeof(prefix) + 1];

	memset(small, 'X', sizeof(small));
	assert_int_equal(cli_parse(3, argv, &cfg, small, 16), MT_CLI_ERROR);
	assert_string_equal(small, "memtop: --group");
	/* Room for the prefix and one byte of the two-byte "é". */
	assert_int_equal(cli_parse(3, argv, &cfg, small, sizeof(small)), MT_CLI_ERROR);
	assert_string_equal(small, prefix);
	assert_int_equal(cli_parse(3, argv, &cfg, NULL, 0), MT_CLI_ERROR);
}

/* Each call starts from the defaults and from a fresh getopt state. */
static void test_repeated_calls(void **state)
{
	/* An error in the middle of "-bxv" leaves getopt inside the cluster;
	 * the next call must not continue with its "v". */
	ERR("memtop: unknown option '-x' (see memtop --help)", "-p", "1", "-bxv");
	OK("-p", "2");
	assert_int_equal(cfg.verbose, 0);
	assert_int_equal(cfg.pids[0], 2);
	ERR("memtop: -d: missing SECS", "-p", "1", "-bd");
	OK("-p", "2", "--ascii", "-d", "2");
	assert_true(cfg.ascii);
	assert_true(cfg.batch == false);
	OK("-p", "3");
	assert_false(cfg.ascii);
	assert_int_equal(cfg.npids, 1);
	assert_int_equal(cfg.pids[0], 3);
	assert_true(cfg.interval_s == 1.0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_help),
		cmocka_unit_test(test_help_truncated),
		cmocka_unit_test(test_version),
		cmocka_unit_test(test_pids),
		cmocka_unit_test(test_pid_limit),
		cmocka_unit_test(test_cgroup),
		cmocka_unit_test(test_command),
		cmocka_unit_test(test_argv_untouched),
		cmocka_unit_test(test_target_rules),
		cmocka_unit_test(test_batch_json),
		cmocka_unit_test(test_delay),
		cmocka_unit_test(test_iterations_top_verbose),
		cmocka_unit_test(test_rate),
		cmocka_unit_test(test_parse_size),
		cmocka_unit_test(test_group_probe_mode),
		cmocka_unit_test(test_skip),
		cmocka_unit_test(test_stack_copy_live_max),
		cmocka_unit_test(test_display),
		cmocka_unit_test(test_export),
		cmocka_unit_test(test_overhead),
		cmocka_unit_test(test_unknown_and_ambiguous),
		cmocka_unit_test(test_error_one_line),
		cmocka_unit_test(test_error_truncated),
		cmocka_unit_test(test_repeated_calls),
		cmocka_unit_test(test_record_replay_daemon_attach),
		cmocka_unit_test(test_same_file),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

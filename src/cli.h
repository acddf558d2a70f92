/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * cli.h - command line to struct mt_config (config.h). Pure: no I/O besides the
 * message buffer, so every error message is unit-tested.
 */
#ifndef MEMTOP_CLI_H
#define MEMTOP_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <linux/types.h>

#include "config.h"

enum mt_cli_result {
	MT_CLI_RUN = 0,     /* cfg is ready */
	MT_CLI_EXIT_OK = 1, /* --help or --version printed into out; exit 0 */
	MT_CLI_ERROR = -1,  /* one-line message in out; exit 2 */
	MT_CLI_MAN = 2,     /* --man (hidden): print the manual page, exit 0 */
};

/* Parse argv into cfg (which it initialises with the defaults). Messages
 * (help, version, or the error line without a trailing newline) go to out.
 * argv is not modified; cfg->cmd_argv points into it. */
enum mt_cli_result cli_parse(int argc, char **argv, struct mt_config *cfg, char *out, size_t outlen);

/* "512K" -> 524288. 0 or -EINVAL / -ERANGE. Accepts K, M, G (binary) and
 * an optional trailing B/iB. */
int cli_parse_size(const char *s, __u64 *out);

/* The option table, for the manual page (manpage.c): the i-th option
 * shown in --help, in --help's order; false past the last. */
struct cli_option_info {
	const char *long_name; /* NULL: the "-- CMD" line */
	char short_name;       /* 0: none */
	const char *arg;       /* NULL: takes no value */
	const char *section;   /* "Targets (exactly one):"... */
	const char *help;
};
bool cli_option_at(size_t i, struct cli_option_info *out);
/* The usage lines and the trailer (sizes, examples) of --help. */
const char *cli_usage_text(void);
const char *cli_trailer_text(void);

#endif /* MEMTOP_CLI_H */

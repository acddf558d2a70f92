// SPDX-License-Identifier: GPL-2.0-only
/*
 * fuzz_cli.c - libFuzzer harness for the command line (src/cli.c,
 * cli_parse and cli_parse_size). The input is an argument vector after
 * argv[0], arguments separated by NUL bytes (what a shell hands memtop:
 * any bytes but NUL), at most 64 of them. Checks the contract: the message
 * NUL-terminated in the buffer, and for an error one line starting
 * "memtop: "; a ready config names exactly one
 * target and -- CMD points into argv; a second parse (getopt state reset)
 * gives the same result and message; a tiny buffer changes nothing but the
 * message's length.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "memtop/abi.h"

#define MAX_ARGS 64

static char big_a[16384], big_b[16384];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *argv[MAX_ARGS + 2], *buf = malloc(size + 1);
	struct mt_config *cfg = malloc(sizeof(*cfg));
	enum mt_cli_result r, r2, r3;
	char tiny[8];
	int argc = 1;
	__u64 v;

	if (!buf || !cfg)
		abort();
	memcpy(buf, data, size);
	buf[size] = '\0';
	argv[0] = "memtop";
	for (char *p = buf; p < buf + size && argc <= MAX_ARGS; p += strlen(p) + 1)
		argv[argc++] = p;
	argv[argc] = NULL;

	r = cli_parse(argc, argv, cfg, big_a, sizeof(big_a));
	if (!memchr(big_a, '\0', sizeof(big_a)))
		abort();
	if (r == MT_CLI_ERROR && (strncmp(big_a, "memtop: ", 8) || strchr(big_a, '\n')))
		abort();
	if (r == MT_CLI_RUN) {
		int targets = (cfg->npids > 0) + (cfg->cgroup != NULL) + (cfg->cmd_argv != NULL);

		if (targets != 1 || cfg->npids < 0 || cfg->npids > MT_MAX_PIDS)
			abort();
		if (cfg->cmd_argv &&
		    (cfg->cmd_argv < argv + 1 || cfg->cmd_argv + cfg->cmd_argc != argv + argc))
			abort();
		if (cfg->stack_copy > MT_STACK_COPY_MAX || cfg->interval_s <= 0)
			abort();
	}

	r2 = cli_parse(argc, argv, cfg, big_b, sizeof(big_b));
	if (r2 != r || strcmp(big_a, big_b))
		abort();
	r3 = cli_parse(argc, argv, cfg, tiny, sizeof(tiny));
	if (r3 != r || !memchr(tiny, '\0', sizeof(tiny)) || strncmp(tiny, big_a, strlen(tiny)))
		abort();

	for (int i = 1; i < argc; i++)
		cli_parse_size(argv[i], &v);
	free(cfg);
	free(buf);
	return 0;
}

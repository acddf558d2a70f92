// SPDX-License-Identifier: GPL-2.0-only
/*
 * main.c - memtop's entry point: parse the command line, then run live,
 * replay a recording, attach to a session (or print help, the version or
 * the manual page).
 */
#include <stdio.h>

#include "app.h"
#include "cli.h"
#include "manpage.h"
#include "playback.h"
#include "viewer.h"

int main(int argc, char **argv)
{
	static char msg[16384];
	struct mt_config cfg;

	switch (cli_parse(argc, argv, &cfg, msg, sizeof(msg))) {
	case MT_CLI_EXIT_OK:
		fputs(msg, stdout);
		return 0;
	case MT_CLI_MAN:
		return manpage_write(stdout) || fflush(stdout) ? 1 : 0;
	case MT_CLI_ERROR:
		fprintf(stderr, "%s\n", msg);
		return 2;
	default:
		if (cfg.replay)
			return playback_file(&cfg);
		if (cfg.attach)
			return viewer_run(&cfg);
		return app_run(&cfg);
	}
}

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * cmd_log.h - where the output of a command memtop launches (-- CMD) goes:
 * a file, so that it never lands on the TUI or in memtop's own -b/--json
 * stdout, nor in the current directory unless asked. --cmd-log FILE names
 * it; by default it is memtop-cmd-<PID>.log (PID: the command's) in
 * cmd_log_dir(), which keeps the CMD_LOG_KEEP newest of them.
 */
#ifndef MEMTOP_CMD_LOG_H
#define MEMTOP_CMD_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* How many default logs the directory keeps: opening a new one removes
 * the oldest memtop-cmd-PID.log files beyond this number (by mtime). */
#define CMD_LOG_KEEP 20

/* The directory of the default logs into dir: $XDG_STATE_HOME/memtop,
 * else $HOME/.local/state/memtop (the XDG base directories' place for
 * logs; for root under sudo, /root's), else for root /var/log/memtop.
 * 0, -ENOENT when none applies, -ENAMETOOLONG. */
int cmd_log_dir(char *dir, size_t len);

/* Open the log for writing into path (pathlen bytes): file if given, else
 * the default name with memtop's own PID for now (cmd_log_rename() gives
 * it the command's once it is known), in cmd_log_dir(), made (0700) if
 * missing, after the oldest default logs there beyond CMD_LOG_KEEP - 1
 * are removed. A regular file is created (mode
 * 0600 & ~umask) or truncated, a symlink is not followed; a FIFO or
 * character device (/dev/null) is written through, a FIFO only when it
 * has a reader. *created says whether memtop made the file (so a failed
 * launch removes it). The descriptor (close-on-exec), or -errno with one
 * line in err. */
int cmd_log_open(const char *file, char *path, size_t pathlen, bool *created, char *err,
		 size_t errlen);

/* The default log, named after memtop's PID, takes the command's PID
 * (never replacing a file of that name; on failure it keeps its name). A
 * no-op for a name the user gave (explicit). */
void cmd_log_rename(char *path, size_t pathlen, bool explicit, pid_t pid);

#endif /* MEMTOP_CMD_LOG_H */

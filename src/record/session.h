/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * session.h - the socket a `--daemon` session serves its stream on, for
 * `memtop attach` (docs/recording.md, "Sessions"). A viewer that connects
 * gets the session's recording from its oldest segment, then every
 * interval as it is written: the same bytes as the file, so the viewer
 * rebuilds the same model.
 *
 * The socket is RUN_DIR/ID.sock, RUN_DIR /run/memtop (MEMTOP_RUN_DIR
 * overrides it): a directory owned by memtop's user and writable by no one
 * else, never reached through a symbolic link; the socket has mode 0600
 * and a viewer whose peer credentials are not memtop's user is refused.
 *
 * A thread serves the viewers, reading from the recording's files, so the
 * session never waits for one: a viewer that falls a whole segment behind
 * (what it has not read was rotated away) is dropped and told so by the
 * end of its stream. At most SESSION_MAX_VIEWERS at once.
 */
#ifndef MEMTOP_SESSION_H
#define MEMTOP_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "record/recorder.h"

#define SESSION_MAX_VIEWERS 16
#define SESSION_RUN_DIR "/run/memtop"

/* The run directory (MEMTOP_RUN_DIR or SESSION_RUN_DIR). */
const char *session_run_dir(void);
/* Make sure dir exists, is a directory (not a symlink), owned by this
 * user and writable by no one else. 0 or -errno with err. */
int session_check_dir(const char *dir, char *err, size_t errlen);

/* A session's files in RUN_DIR are named after its ID (its PID): ID.sock,
 * ID.rec and ID.rec.1 (its recording, unless --record named another),
 * and ID.pid, "PID STARTTIME\n": the process and its start time (clock
 * ticks after boot, the 22nd field of /proc/PID/stat), written before
 * the others, so that a later run tells a session that is gone from a
 * process that reused its PID. */

/* Write RUN_DIR/ID.pid for this process (id == getpid()). 0, or -errno
 * with err. */
int session_mark(const char *dir, pid_t id, char *err, size_t errlen);

/* Remove the session's files at its end: ID.pid, and its recording
 * ID.rec and ID.rec.1 when with_recording (it was the session's own,
 * not a --record FILE). The socket goes with session_close(). */
void session_remove_files(const char *dir, pid_t id, bool with_recording);

/* Sessions whose process is gone (killed with SIGKILL, crashed) leave
 * their files: remove those of every such session in dir, except self.
 * A session is gone when the process its ID.pid names no longer runs,
 * or runs with another start time (its PID was reused); without an
 * ID.pid (one still setting up, or of an older memtop), when no process
 * has its PID, or its socket is there and nobody listens on it. said
 * (may be NULL) is called once per session removed, with the bytes its
 * files held. The number of sessions removed. */
int session_sweep(const char *dir, pid_t self,
		  void (*said)(void *ctx, pid_t id, unsigned long long bytes), void *ctx);

struct session;

/* Listen on RUN_DIR/ID.sock and serve rec's stream. A socket of a
 * previous run with this ID (ours, not listened on) is replaced; any other
 * file there is refused. NULL with err. */
struct session *session_open(const char *dir, pid_t id, struct recorder *rec, char *err,
			     size_t errlen);
/* After each recorder_interval(): viewers get what was written. Main
 * thread only. */
void session_publish(struct session *s);
/* Viewers connected now, and dropped since the start. */
void session_counts(struct session *s, unsigned *viewers, unsigned long *dropped);
/* Stop serving, close every viewer, remove the socket. */
void session_close(struct session *s);

#endif /* MEMTOP_SESSION_H */

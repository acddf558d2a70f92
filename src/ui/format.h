/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * format.h - human-readable numbers and frame labels shared by the text
 * and terminal views. Every function writes a NUL-terminated string into
 * buf (truncating) and returns buf.
 */
#ifndef MEMTOP_FORMAT_H
#define MEMTOP_FORMAT_H

#include <stdbool.h>
#include <stddef.h>

#include "stacks/frame.h"

/* 1536 -> "1.5K", binary units, at most 6 characters. */
char *fmt_bytes(char *buf, size_t len, double bytes);
/* 12345 -> "12.3k", decimal units. */
char *fmt_count(char *buf, size_t len, double n);
/* A process's allocation rates, bytes and calls a second: as they are
 * when counted, after "~" when estimated (the budget had the probes off
 * part of the interval, or memtop counts nothing of the process). */
void fmt_process_rates(char *bytes, size_t bytes_len, char *calls, size_t calls_len,
		       double bytes_per_s, double calls_per_s, bool exact);
/* 245 -> "4m05s"; 5 -> "5s"; 0 -> "-". */
char *fmt_age(char *buf, size_t len, double seconds);
/* "function (module file:line)", with module+offset for unnamed frames.
 * This and fmt_frame_name() are sanitized for a terminal (the target
 * chose the names: util/sanitize.h). */
char *fmt_frame(char *buf, size_t len, const struct mt_frame *f);
/* The function name, or "module+0xoff" when unknown. */
char *fmt_frame_name(char *buf, size_t len, const struct mt_frame *f);
/* What the back-off costs in insight, the same words in every view:
 * "probes on 10%: sampling interval 51K" while duty-cycling, "" otherwise. */
char *fmt_backoff(char *buf, size_t len, bool backed_off, double duty, double interval_bytes);

/* Basename of a path (no copy). */
const char *fmt_basename(const char *path);

#endif /* MEMTOP_FORMAT_H */

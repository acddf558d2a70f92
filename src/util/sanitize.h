/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * sanitize.h - text that came from a target (its comm, mapped paths,
 * symbol names) made safe to show on a terminal. A target chooses these
 * bytes: an ESC sequence in a function name must not retitle, recolour or
 * clear the user's terminal, a newline must not fake an output line.
 *
 * The one rule, used by every view (-b tables, stderr lines, the TUI)
 * and the folded stacks (text, often /dev/stdout): valid UTF-8 is kept,
 * except control characters (C0 including TAB, CR, LF and ESC, DEL, C1
 * U+0080-U+009F), which become '?'; each byte of an invalid sequence
 * (overlong, surrogate, above U+10FFFF, truncated) becomes '?'. JSON
 * output escapes instead (util/json_writer.c: control characters, DEL
 * and C1 as \uXXXX), and pprof keeps the raw names (its string tables
 * are bytes, gzipped, never written to a terminal).
 */
#ifndef MEMTOP_UTIL_SANITIZE_H
#define MEMTOP_UTIL_SANITIZE_H

#include <stddef.h>

#define SANITIZE_REPLACEMENT '?'

/* The one strict UTF-8 decoder (RFC 3629: no overlongs, no surrogates,
 * nothing above U+10FFFF), also json_writer's: the length of the
 * well-formed sequence at s (at most left bytes, left >= 1) with its code
 * point in *cp, or 0 when s does not start one. */
size_t utf8_sequence(const char *s, size_t left, unsigned int *cp);

/* Decode the character at s (at most left bytes, left >= 1): its code
 * point into *cp, or SANITIZE_REPLACEMENT when it is a control character
 * or invalid. Returns the bytes it spans (1 for an invalid byte). */
size_t sanitize_decode(const char *s, size_t left, unsigned int *cp);

/* src as shown: copied into dst (dstlen > 0, always NUL-terminated, cut
 * at a character boundary) with the rule above. Returns dst. NULL src
 * gives "". */
char *sanitize_text(char *dst, size_t dstlen, const char *src);

/* Same, in place (the result is never longer). Returns s. */
char *sanitize_inplace(char *s);

#endif /* MEMTOP_UTIL_SANITIZE_H */

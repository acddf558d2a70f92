/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * pattern.h - the one matcher of patterns someone else wrote (--skip, the
 * --skip a recording's header carries, the wrapper table): a subset of
 * POSIX extended regular expressions with a bound on everything it costs.
 *
 * The language (docs/allocators.md, "--skip patterns"), over bytes:
 *   c        a byte that is not special matches itself; ']' and '}' alone
 *            are plain bytes
 *   \c       c itself, for any c that is not a letter or a digit (\. \( \\)
 *   .        any byte
 *   [...]    a bracket expression: bytes, ranges a-z (in byte order), the
 *            classes [:alpha:] [:digit:] [:alnum:] [:upper:] [:lower:]
 *            [:space:] [:blank:] [:punct:] [:print:] [:graph:] [:cntrl:]
 *            [:xdigit:]; [^...] its complement; ']' first and '-' first
 *            or last are plain bytes, '\' is a plain byte inside
 *   ^  $     the start and the end of the text
 *   (...)    a group;  a|b  either
 *   e* e+ e? zero or more, one or more, zero or one of e; they may stack
 *            (a+*?) as in glibc
 *   e{m} e{m,} e{m,n} e{,n}  m to n of e, counts at most PATTERN_MAX_REPEAT
 * Refused: back references and every other \letter or \digit (\1, \d,
 * \w), collating elements [. .] and equivalence classes [= =], a
 * repetition with nothing before it, an unmatched ( or ) or [, a bad
 * {m,n}. A pattern matches when it matches anywhere in the text (anchor it
 * with ^ and $ for the whole text), as regexec() does; which part matched
 * is not asked, so its leftmost-longest rule does not arise.
 *
 * Bounds, checked at compile and refused past them with one reason: the
 * pattern is at most PATTERN_MAX_LEN bytes and compiles to at most
 * PATTERN_MAX_STATES states (a Thompson NFA; {m,n} copies its operand,
 * which is where the states go). A compiled pattern takes at most about
 * 8 bytes per state plus 32 per bracket expression (under 12 KiB), and
 * compiling it is linear in the pattern plus its states. A match runs the
 * states side by side over the text (a Pike VM): each state is taken up at
 * most twice per byte of the text, so at most 2 x (text length + 1) x states
 * steps, whatever the pattern: no backtracking, no allocation, about 10 KiB
 * of stack.
 */
#ifndef MEMTOP_UTIL_PATTERN_H
#define MEMTOP_UTIL_PATTERN_H

#include <stdbool.h>
#include <stddef.h>

#define PATTERN_MAX_LEN 256     /* bytes of a pattern's text */
#define PATTERN_MAX_STATES 1024 /* states it compiles to */
#define PATTERN_MAX_REPEAT 255  /* m and n in {m,n} */

struct pattern;

/* Compile src (NUL-terminated). NULL with errno EINVAL and err (if errlen)
 * saying why in a few words ("at byte 3: '*' repeats nothing", "longer than
 * 256 bytes"), or ENOMEM. */
struct pattern *pattern_compile(const char *src, char *err, size_t errlen);
void pattern_free(struct pattern *p);

/* Whether p matches anywhere in text (NUL-terminated). Allocates nothing,
 * changes nothing: one pattern may be matched from several threads. */
bool pattern_match(const struct pattern *p, const char *text);

/* The states p compiled to (for tests and the bound's proof). */
size_t pattern_states(const struct pattern *p);

/* Steps the last pattern_match() of this thread took: state visits, each
 * constant time (for tests: the bound is 2 x (text length + 1) x states). */
unsigned long pattern_last_steps(void);

#endif /* MEMTOP_UTIL_PATTERN_H */

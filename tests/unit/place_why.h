/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * place_why.h - a probe placement (probe/probe_place.h) told in words for
 * the tests: where the probe goes, what stopped the walk, and the
 * instructions involved, printed by Capstone in AT&T syntax (memtop has no
 * printer of its own: only the tests need the words). Test-only; link with
 * -lcapstone.
 */
#ifndef MEMTOP_TEST_PLACE_WHY_H
#define MEMTOP_TEST_PLACE_WHY_H

#include <capstone/capstone.h>
#include <stdio.h>
#include <stdlib.h>

#include "probe/probe_place.h"

/* Capstone's AT&T text of the instruction at code[off] (of limit bytes),
 * with addresses as offsets from the function's start; ".byte 0x.." if it
 * does not decode. */
static inline void place_insn_text(const __u8 *code, size_t limit, __u32 off, char *buf, size_t n)
{
	static csh cs;
	static int opened;
	cs_insn *insn;
	size_t count;

	if (!opened) {
		if (cs_open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK ||
		    cs_option(cs, CS_OPT_SYNTAX, CS_OPT_SYNTAX_ATT) != CS_ERR_OK)
			abort();
		opened = 1;
	}
	if (off >= limit) {
		snprintf(buf, n, "(none)");
		return;
	}
	count = cs_disasm(cs, code + off, limit - off, off, 1, &insn);
	if (!count) {
		snprintf(buf, n, ".byte 0x%02x", code[off]);
		return;
	}
	snprintf(buf, n, "%s%s%s", insn->mnemonic, insn->op_str[0] ? " " : "", insn->op_str);
	cs_free(insn, count);
}

/* pp, chosen from code[0..limit), in one line: "entry: push %r12
 * (emulated)", "+3: je 0xa (emulated) after testq %rdi, %rdi", "entry:
 * testq %rdi, %rdi single-stepped (+3 is a jump target (loop head))". */
static inline void place_why(const struct probe_place *pp, const __u8 *code, size_t limit,
			     char *buf, size_t n)
{
	char text[200], first[200], last[200], reason[256];

	if (pp->reason == PLACE_NO_CODE) {
		snprintf(buf, n, "entry: no code bytes to decode (single-stepped unless emulated)");
		return;
	}
	if (pp->reason == PLACE_FOUND) {
		place_insn_text(code, limit, pp->offset, text, sizeof(text));
		if (!pp->offset) {
			snprintf(buf, n, "entry: %s (emulated)", text);
			return;
		}
		place_insn_text(code, limit, pp->walked_first, first, sizeof(first));
		place_insn_text(code, limit, pp->walked_last, last, sizeof(last));
		if (pp->walked == 1)
			snprintf(buf, n, "+%u: %s (emulated) after %s", pp->offset, text, first);
		else if (pp->walked == 2)
			snprintf(buf, n, "+%u: %s (emulated) after %s; %s", pp->offset, text, first,
				 last);
		else
			snprintf(buf, n, "+%u: %s (emulated) after %s ... %s (%u insns)",
				 pp->offset, text, first, last, pp->walked);
		return;
	}
	place_insn_text(code, limit, pp->at, text, sizeof(text));
	switch (pp->reason) {
	case PLACE_FUNC_END:
		snprintf(reason, sizeof(reason), "no emulated insn before the function's end");
		break;
	case PLACE_BYTES_END:
		snprintf(reason, sizeof(reason), "no emulated insn in the first %u bytes", pp->at);
		break;
	case PLACE_LOOP_HEAD:
		if (pp->at)
			snprintf(reason, sizeof(reason), "+%u is a jump target (loop head)", pp->at);
		else
			snprintf(reason, sizeof(reason), "the entry is a jump target (loop head)");
		break;
	case PLACE_UNDECODED:
		snprintf(reason, sizeof(reason), "+%u: bytes not decoded", pp->at);
		break;
	case PLACE_PAST_FUNC_END:
		snprintf(reason, sizeof(reason), "+%u: insn runs past the function's end", pp->at);
		break;
	case PLACE_PAST_BYTES:
		snprintf(reason, sizeof(reason), "+%u: insn runs past the bytes given", pp->at);
		break;
	case PLACE_BRANCH:
		snprintf(reason, sizeof(reason), "no emulated insn before the first branch");
		break;
	case PLACE_ARG_WRITTEN:
		snprintf(reason, sizeof(reason), "+%u: %s changes an argument register", pp->at,
			 text);
		break;
	case PLACE_LEAVES_ENTRY:
		snprintf(reason, sizeof(reason), "+%u: %s leaves entry state", pp->at, text);
		break;
	default:
		snprintf(reason, sizeof(reason), "reason %d", (int)pp->reason);
		break;
	}
	place_insn_text(code, limit, 0, text, sizeof(text));
	snprintf(buf, n, "entry: %s %s (%s)", text, pp->emulated ? "emulated" : "single-stepped",
		 reason);
}

#endif /* MEMTOP_TEST_PLACE_WHY_H */

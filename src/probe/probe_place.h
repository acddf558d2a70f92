/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * probe_place.h - where to put a uprobe inside a function so that the
 * kernel emulates the probed instruction (one trap) instead of
 * single-stepping it out of line (two traps and an XOL slot).
 *
 * Pure: takes the function's first bytes as read from the ELF file and
 * returns an offset; no I/O, no libbpf. The x86-64 length decoder it rests
 * on is exported for tests. The rules and the cost numbers
 * behind them are in docs/probes.md.
 */
#ifndef MEMTOP_PROBE_PLACE_H
#define MEMTOP_PROBE_PLACE_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

/* Longest x86 instruction. */
#define PROBE_INSN_MAX 15

/* SysV integer argument registers, in order: rdi, rsi, rdx, rcx, r8, r9. */
#define PROBE_MAX_ARGS 6

/* Why the walk stopped where it did. */
enum probe_place_reason {
	PLACE_FOUND,         /* offset is an emulated insn that qualifies */
	PLACE_NO_CODE,       /* no code bytes to decode */
	PLACE_FUNC_END,      /* no emulated insn before the function's end */
	PLACE_BYTES_END,     /* none in the bytes given */
	PLACE_LOOP_HEAD,     /* at is a jump target (loop head) */
	PLACE_UNDECODED,     /* the bytes at `at` are not decoded */
	PLACE_PAST_FUNC_END, /* the insn at `at` runs past the function's end */
	PLACE_PAST_BYTES,    /* the insn at `at` runs past the bytes given */
	PLACE_BRANCH,        /* at is the first branch, and it is not emulated */
	PLACE_ARG_WRITTEN,   /* the insn at `at` changes an argument register */
	PLACE_LEAVES_ENTRY,  /* the insn at `at` leaves entry state */
};

struct probe_place {
	__u32 offset;     /* bytes from function start; always an instruction boundary */
	bool emulated;    /* the kernel emulates the insn there: one trap per hit */
	bool entry_state; /* at offset, rsp is unchanged and [rsp] is still the
			   * return address (required where a return probe or a
			   * session is attached) */
	__s32 ra_off;     /* the return address is at [rsp + ra_off] at offset
			   * (0 at entry, 8 after one push), or -1 if unknown */
	enum probe_place_reason reason;
	__u32 at; /* the instruction (or end) the reason speaks of */
	/* The straight-line instructions walked past before the chosen one
	 * (PLACE_FOUND) or up to and including the one at `at`: how many,
	 * the first and the last one's offsets. */
	__u32 walked, walked_first, walked_last;
};

/*
 * Choose the probe point of one function.
 *   code, len    the function's first bytes, from the file (len may be 0;
 *                pass the whole function to see every backward jump: with
 *                only the first 64 bytes a loop closing further down is
 *                not seen)
 *   func_size    the symbol size; bytes past it are ignored
 *   need_return  a return probe or session shares the offset: the point
 *                must be in entry state
 *   need_args    rdi, rsi, rdx, rcx, r8 and r9 must still hold the
 *                arguments at the point
 * Walks straight-line code from the entry to the first branch (inclusive)
 * and picks the first instruction the kernel emulates (nop forms the 6.18
 * kernel accepts, jmp, call rel32, jcc, push reg) that runs exactly once
 * per call: no jump seen in the function lands on or before it. endbr64 is
 * skipped. If nothing qualifies, out is the entry with emulated=false
 * (true only for an emulated entry that is a loop head) and reason says what
 * stopped the walk. 0, or -EINVAL for NULL pointers.
 */
int probe_place_choose(const __u8 *code, size_t len, __u32 func_size, bool need_return,
		       bool need_args, struct probe_place *out);

/* As probe_place_choose(), but only the first nargs (0..6) argument
 * registers must be intact: free() needs 1, calloc() 2. -EINVAL for
 * nargs > 6. */
int probe_place_choose_nargs(const __u8 *code, size_t len, __u32 func_size, bool need_return,
			     unsigned int nargs, struct probe_place *out);

/* One length-decoded instruction (64-bit mode). */
struct probe_insn {
	__u8 len;   /* total length in bytes */
	__u8 map;   /* 0 one-byte, 1 0f, 2 0f38, 3 0f3a opcode map */
	__u8 op;    /* opcode byte within the map */
	__u8 rex;   /* REX byte, 0 if none */
	__u8 modrm; /* valid if has_modrm */
	__u8 sib;   /* valid if has_sib */
	bool has_modrm;
	bool has_sib;
	bool vex;        /* VEX or EVEX encoded: map/op set, semantics not modelled */
	bool p66;        /* operand-size prefix */
	bool p67;        /* address-size prefix */
	bool rep;        /* f3 */
	bool repne;      /* f2 */
	bool bad_prefix; /* es/cs/ss/ds segment or lock prefix: the kernel
			  * refuses to probe such an instruction */
	__u8 seg;        /* 0x64 (fs) or 0x65 (gs) segment prefix, else 0 */
	__u8 npfx;       /* legacy prefix bytes before REX/opcode */
	__u8 imm_size;   /* immediate (or branch displacement) bytes */
	__u8 disp_size;  /* ModRM displacement bytes */
	__s64 imm;       /* sign-extended immediate / branch displacement */
	__s32 disp;      /* sign-extended ModRM displacement */
};

/* Length-decode the instruction at code (at most len bytes readable).
 * 0; -ENODATA when the instruction runs past len; -ENOTSUP for an
 * encoding this decoder does not know (invalid in 64-bit mode, XOP,
 * 3DNow!, rare system forms); -EINVAL for NULL pointers. */
int probe_insn_decode(const __u8 *code, size_t len, struct probe_insn *out);

#endif /* MEMTOP_PROBE_PLACE_H */

// SPDX-License-Identifier: GPL-2.0-only
/*
 * probe_place.c - choose the instruction a uprobe goes on, from the bytes
 * of the function in the ELF file.
 *
 * The x86 kernel emulates a few instructions at a uprobe (one trap) and
 * single-steps every other one out of line (a second trap and an XOL
 * slot): on this kind of VM 0.7 us against 9.9 us per hit. This module
 * length-decodes the function from its entry, models what each
 * straight-line instruction writes (general registers, rsp, stores through
 * rsp), and returns the first instruction the 6.18 kernel emulates that
 * runs once per call and still sees what the caller needs (arguments,
 * entry state). The emulated set mirrors arch/x86/kernel/uprobes.c
 * (branch_setup_xol_ops, push_setup_xol_ops, is_prefix_bad) as of 6.18;
 * see docs/probes.md.
 *
 * Everything here is conservative: an instruction the decoder cannot
 * length-decode ends the walk, and one whose effects are not modelled
 * counts as writing every register and the stack. The module owns no
 * state and does no I/O.
 */
#include "probe/probe_place.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

/* ---- length decoder --------------------------------------------------- */

enum {
	A_MODRM = 1 << 0,
	A_IMM8 = 1 << 1,
	A_IMMZ = 1 << 2, /* 16 or 32 bits by operand size */
	A_IMM16 = 1 << 3,
	A_IMMV = 1 << 4, /* b8+r: 16, 32 or 64 bits */
	A_REL8 = 1 << 5,
	A_REL32 = 1 << 6,
	A_MOFFS = 1 << 7, /* a0-a3: 64-bit (32 with 67) address */
	A_ENTER = 1 << 8, /* c8: imm16 + imm8 */
	A_GRP3 = 1 << 9,  /* f6/f7: immediate only for /0 and /1 */
	A_BAD = 1 << 10,  /* invalid in 64-bit mode or not decoded here */
};

/* clang-format off */
static unsigned int map0_attr(__u8 op)
{
	switch (op) {
	case 0x00 ... 0x03: case 0x08 ... 0x0b: case 0x10 ... 0x13:
	case 0x18 ... 0x1b: case 0x20 ... 0x23: case 0x28 ... 0x2b:
	case 0x30 ... 0x33: case 0x38 ... 0x3b:
		return A_MODRM;
	case 0x04: case 0x0c: case 0x14: case 0x1c: case 0x24: case 0x2c:
	case 0x34: case 0x3c:
		return A_IMM8;
	case 0x05: case 0x0d: case 0x15: case 0x1d: case 0x25: case 0x2d:
	case 0x35: case 0x3d:
		return A_IMMZ;
	case 0x50 ... 0x5f: case 0x6c ... 0x6f: case 0x90 ... 0x99:
	case 0x9b ... 0x9f: case 0xa4 ... 0xa7: case 0xaa ... 0xaf:
	case 0xc3: case 0xc9: case 0xcb: case 0xcc: case 0xcf: case 0xd7:
	case 0xec ... 0xef: case 0xf1: case 0xf4: case 0xf5: case 0xf8 ... 0xfd:
		return 0;
	case 0x63: case 0x84 ... 0x8f: case 0xd0 ... 0xd3: case 0xd8 ... 0xdf:
	case 0xfe: case 0xff:
		return A_MODRM;
	case 0x68: return A_IMMZ;
	case 0x69: return A_MODRM | A_IMMZ;
	case 0x6a: return A_IMM8;
	case 0x6b: return A_MODRM | A_IMM8;
	case 0x70 ... 0x7f: return A_REL8;
	case 0x80: case 0x83: return A_MODRM | A_IMM8;
	case 0x81: return A_MODRM | A_IMMZ;
	case 0xa0 ... 0xa3: return A_MOFFS;
	case 0xa8: return A_IMM8;
	case 0xa9: return A_IMMZ;
	case 0xb0 ... 0xb7: return A_IMM8;
	case 0xb8 ... 0xbf: return A_IMMV;
	case 0xc0: case 0xc1: case 0xc6: return A_MODRM | A_IMM8;
	case 0xc7: return A_MODRM | A_IMMZ;
	case 0xc2: case 0xca: return A_IMM16;
	case 0xc8: return A_ENTER;
	case 0xcd: return A_IMM8;
	case 0xe0 ... 0xe3: case 0xeb: return A_REL8;
	case 0xe4 ... 0xe7: return A_IMM8;
	case 0xe8: case 0xe9: return A_REL32;
	case 0xf6: case 0xf7: return A_MODRM | A_GRP3;
	default:
		/* 06 07 0e 16 17 1e 1f 27 2f 37 3f 60 61 82 9a ce d4 d5 d6 ea */
		return A_BAD;
	}
}
/* clang-format on */

/* clang-format off */
static unsigned int map1_attr(__u8 op)
{
	switch (op) {
	case 0x00 ... 0x03: case 0x0d: case 0x10 ... 0x23: case 0x28 ... 0x2f:
	case 0x40 ... 0x6f: case 0x74 ... 0x76: case 0x7c ... 0x7f:
	case 0x90 ... 0x9f: case 0xa3: case 0xa5: case 0xab: case 0xad ... 0xb9:
	case 0xbb ... 0xc1: case 0xc3: case 0xc7: case 0xd0 ... 0xff:
		return A_MODRM;
	case 0x05 ... 0x09: case 0x0b: case 0x0e: case 0x30 ... 0x35: case 0x37:
	case 0x77: case 0xa0 ... 0xa2: case 0xa8 ... 0xaa: case 0xc8 ... 0xcf:
		return 0;
	case 0x70 ... 0x73: case 0xa4: case 0xac: case 0xba: case 0xc2:
	case 0xc4 ... 0xc6:
		return A_MODRM | A_IMM8;
	case 0x80 ... 0x8f:
		return A_REL32;
	default:
		/* 04 0a 0c 0f(3DNow!) 24-27 36 39 3b-3f 78 79 7a 7b a6 a7 */
		return A_BAD;
	}
}
/* clang-format on */

static bool is_legacy_prefix(__u8 b)
{
	switch (b) {
	case 0xf0:
	case 0xf2:
	case 0xf3:
	case 0x2e:
	case 0x36:
	case 0x3e:
	case 0x26:
	case 0x64:
	case 0x65:
	case 0x66:
	case 0x67:
		return true;
	default:
		return false;
	}
}

static __s64 read_le(const __u8 *p, unsigned int n)
{
	switch (n) {
	case 1:
		return (__s8)p[0];
	case 2:
		return (__s16)(p[0] | p[1] << 8);
	case 4:
		return (__s32)((__u32)p[0] | (__u32)p[1] << 8 | (__u32)p[2] << 16 | (__u32)p[3] << 24);
	case 8:
		return (__s64)((__u64)(__u32)read_le(p, 4) | (__u64)(__u32)read_le(p + 4, 4) << 32);
	default:
		return 0;
	}
}

/* VEX (c4/c5) and EVEX (62): prefix bytes, map, then opcode and ModRM. */
static int decode_vex(const __u8 *code, size_t len, size_t i, struct probe_insn *in,
		      unsigned int *attr)
{
	__u8 lead = code[i];
	size_t plen = lead == 0xc5 ? 2 : lead == 0xc4 ? 3 : 4;

	if (in->rex || in->p66 || in->rep || in->repne)
		return -ENOTSUP; /* #UD before a VEX prefix */
	if (i + plen >= len)
		return -ENODATA;
	if (lead == 0xc5)
		in->map = 1;
	else if (lead == 0xc4)
		in->map = code[i + 1] & 0x1f;
	else
		in->map = code[i + 1] & 0x07;
	if (in->map < 1 || in->map > 3)
		return -ENOTSUP;
	in->vex = true;
	in->op = code[i + plen];
	if (in->map == 1 && in->op == 0x77 && lead != 0x62)
		*attr = 0; /* vzeroupper/vzeroall */
	else if (in->map == 3)
		*attr = A_MODRM | A_IMM8;
	else if (in->map == 1 && (map1_attr(in->op) & A_IMM8))
		*attr = A_MODRM | A_IMM8;
	else
		*attr = A_MODRM;
	return (int)(i + plen + 1);
}

int probe_insn_decode(const __u8 *code, size_t len, struct probe_insn *in)
{
	unsigned int attr, imm = 0;
	size_t i = 0;
	__u8 op;
	int r;

	if (!code || !in)
		return -EINVAL;
	memset(in, 0, sizeof(*in));
	if (len > PROBE_INSN_MAX)
		len = PROBE_INSN_MAX;

	for (; i < len && is_legacy_prefix(code[i]); i++) {
		switch (code[i]) {
		case 0x66:
			in->p66 = true;
			break;
		case 0x67:
			in->p67 = true;
			break;
		case 0xf3:
			in->rep = true;
			break;
		case 0xf2:
			in->repne = true;
			break;
		case 0x64:
		case 0x65:
			in->seg = code[i];
			break;
		default:
			in->bad_prefix = true;
			break; /* es cs ss ds lock */
		}
	}
	in->npfx = (__u8)i;
	if (i >= len)
		return len == PROBE_INSN_MAX ? -ENOTSUP : -ENODATA;
	if ((code[i] & 0xf0) == 0x40) {
		in->rex = code[i++];
		if (i >= len)
			return -ENODATA;
		if (is_legacy_prefix(code[i]))
			return -ENOTSUP; /* REX not last: ignored by the CPU, rare */
	}
	op = code[i++];
	if (op == 0xc4 || op == 0xc5 || op == 0x62) {
		r = decode_vex(code, len, i - 1, in, &attr);
		if (r < 0)
			return r;
		i = (size_t)r;
	} else if (op == 0x0f) {
		if (i >= len)
			return -ENODATA;
		op = code[i++];
		if (op == 0x38 || op == 0x3a) {
			in->map = op == 0x38 ? 2 : 3;
			if (i >= len)
				return -ENODATA;
			op = code[i++];
			attr = in->map == 2 ? A_MODRM : A_MODRM | A_IMM8;
		} else {
			in->map = 1;
			attr = map1_attr(op);
		}
		in->op = op;
	} else {
		in->map = 0;
		in->op = op;
		attr = map0_attr(op);
	}
	if (attr & A_BAD)
		return -ENOTSUP;
	/* A 66-prefixed rel32 branch is rel16 on AMD and rel32 on Intel. */
	if ((attr & A_REL32) && in->p66 && !(in->rex & 8))
		return -ENOTSUP;

	if (attr & A_MODRM) {
		__u8 mod, rm;

		if (i >= len)
			return -ENODATA;
		in->modrm = code[i++];
		in->has_modrm = true;
		/* mov to/from control and debug registers ignores mod */
		mod = in->map == 1 && op >= 0x20 && op <= 0x23 ? 3 : in->modrm >> 6;
		rm = in->modrm & 7;
		if (in->map == 0 && op == 0x8f && ((in->modrm >> 3) & 7))
			return -ENOTSUP; /* XOP */
		if (mod != 3 && rm == 4) {
			if (i >= len)
				return -ENODATA;
			in->sib = code[i++];
			in->has_sib = true;
			if (mod == 0 && (in->sib & 7) == 5)
				in->disp_size = 4;
		}
		if (mod == 0 && rm == 5)
			in->disp_size = 4;
		else if (mod == 1)
			in->disp_size = 1;
		else if (mod == 2)
			in->disp_size = 4;
		if (i + in->disp_size > len)
			return -ENODATA;
		in->disp = (__s32)read_le(code + i, in->disp_size);
		i += in->disp_size;
	}

	if (attr & A_IMM8)
		imm = 1;
	else if (attr & A_IMMZ)
		imm = (in->rex & 8) ? 4 : in->p66 ? 2 : 4;
	else if (attr & A_IMM16)
		imm = 2;
	else if (attr & A_IMMV)
		imm = (in->rex & 8) ? 8 : in->p66 ? 2 : 4;
	else if (attr & A_REL8)
		imm = 1;
	else if (attr & A_REL32)
		imm = 4;
	else if (attr & A_MOFFS)
		imm = in->p67 ? 4 : 8;
	else if (attr & A_ENTER)
		imm = 3;
	else if ((attr & A_GRP3) && ((in->modrm >> 3) & 7) < 2)
		imm = op == 0xf6 ? 1 : (in->rex & 8) ? 4 : in->p66 ? 2 : 4;
	if (i + imm > len)
		return len == PROBE_INSN_MAX ? -ENOTSUP : -ENODATA;
	in->imm_size = (__u8)imm;
	in->imm = imm == 3 ? read_le(code + i, 2) : read_le(code + i, imm);
	i += imm;
	in->len = (__u8)i;
	return 0;
}

/* ---- what an instruction does ---------------------------------------- */

enum reg {
	R_AX,
	R_CX,
	R_DX,
	R_BX,
	R_SP,
	R_BP,
	R_SI,
	R_DI,
	R_8,
	R_9,
	R_10,
	R_11,
	R_12,
	R_13,
	R_14,
	R_15,
};

#define BIT(r) (1u << (r))
#define ALL_REGS 0xffffu

static const __u16 arg_regs[PROBE_MAX_ARGS] = {
	BIT(R_DI), BIT(R_SI), BIT(R_DX), BIT(R_CX), BIT(R_8), BIT(R_9),
};

enum kind {
	K_PLAIN, /* straight-line */
	K_NOP,
	K_ENDBR,
	K_PUSH,
	K_JCC,
	K_JMP,
	K_CALL,
	K_BRANCH, /* any other control transfer or trap: ret, indirect, int3 */
};

/* Larger rsp moves in a prologue are not modelled: rsp is then unknown. */
#define SP_MOVE_MAX (1LL << 30)

struct fx {
	enum kind kind;
	bool unknown;     /* effects not modelled: assume all registers and stack */
	bool stack_store; /* stores through an rsp-based address */
	bool sp_unknown;  /* rsp changes by an amount not known here */
	__u16 wr;         /* general registers written (rsp excluded) */
	__s64 sp_down;    /* bytes rsp moves down (push 8, pop -8, sub $n n) */
	bool has_target;
	__s64 target; /* branch target, relative to the insn's start */
};

static unsigned int modrm_reg(const struct probe_insn *in)
{
	return ((in->modrm >> 3) & 7) | ((in->rex & 4) << 1);
}

static unsigned int modrm_rm(const struct probe_insn *in)
{
	return (in->modrm & 7) | ((in->rex & 1) << 3);
}

static bool modrm_is_reg(const struct probe_insn *in)
{
	return in->has_modrm && (in->modrm >> 6) == 3;
}

/* Base register of the memory operand, or -1 (none, rip-relative). */
static int mem_base(const struct probe_insn *in)
{
	__u8 mod = in->modrm >> 6;

	if (!in->has_modrm || mod == 3)
		return -1;
	if (in->has_sib) {
		if (mod == 0 && (in->sib & 7) == 5)
			return -1;
		return (in->sib & 7) | ((in->rex & 1) << 3);
	}
	if (mod == 0 && (in->modrm & 7) == 5)
		return -1;
	return (int)modrm_rm(in);
}

static void write_reg(struct fx *f, unsigned int r)
{
	f->wr |= (__u16)BIT(r);
}

/* The r/m operand is a destination. */
static void write_rm(struct fx *f, const struct probe_insn *in)
{
	if (modrm_is_reg(in))
		write_reg(f, modrm_rm(in));
	else if (mem_base(in) == R_SP)
		f->stack_store = true;
}

/* clang-format off */
static void fx_map0(const struct probe_insn *in, struct fx *f)
{
	unsigned int reg = modrm_reg(in) & 7;
	__u8 op = in->op;

	switch (op) {
	case 0x00 ... 0x3f:
		if ((op & 7) >= 6)
			break; /* invalid, never decoded */
		if ((op >> 3) == 7)
			break; /* cmp */
		if ((op & 7) <= 1)
			write_rm(f, in);
		else if ((op & 7) <= 3)
			write_reg(f, modrm_reg(in));
		else
			write_reg(f, R_AX);
		break;
	case 0x50 ... 0x57: case 0x68: case 0x6a: case 0x9c:
		f->kind = op <= 0x57 ? K_PUSH : K_PLAIN;
		f->sp_down = in->p66 ? 2 : 8;
		break;
	case 0x58 ... 0x5f:
		if (((op & 7) | ((in->rex & 1) << 3)) == R_SP)
			f->sp_unknown = true;
		else
			write_reg(f, (op & 7) | ((in->rex & 1) << 3));
		f->sp_down = in->p66 ? -2 : -8;
		break;
	case 0x9d:
		f->sp_down = in->p66 ? -2 : -8;
		break;
	case 0x63: case 0x69: case 0x6b: case 0x8a: case 0x8b: case 0x8d:
		write_reg(f, modrm_reg(in));
		break;
	case 0x80 ... 0x83:
		if (reg == 7)
			break; /* cmp */
		if (modrm_is_reg(in) && modrm_rm(in) == R_SP && (reg == 0 || reg == 5)) {
			/* add/sub $imm,%rsp */
			f->sp_down = reg == 5 ? in->imm : -in->imm;
			break;
		}
		write_rm(f, in);
		break;
	case 0x84: case 0x85: case 0xa8: case 0xa9:
		break; /* test */
	case 0x86: case 0x87:
		write_reg(f, modrm_reg(in));
		write_rm(f, in);
		break;
	case 0x88: case 0x89: case 0x8c:
		write_rm(f, in);
		break;
	case 0x90 ... 0x97:
		if (op == 0x90 && !(in->rex & 1)) {
			f->kind = K_NOP;
			break;
		}
		write_reg(f, R_AX);
		write_reg(f, (op & 7) | ((in->rex & 1) << 3));
		break;
	case 0x98: case 0x9f: case 0xa0: case 0xa1: case 0xd7:
		write_reg(f, R_AX);
		break;
	case 0x99:
		write_reg(f, R_DX);
		break;
	case 0x9e: case 0xa2: case 0xa3: case 0xf5: case 0xf8 ... 0xfd:
		break; /* sahf, stores to absolute addresses, flag ops */
	case 0xa4 ... 0xa7: case 0xaa ... 0xaf:
		f->wr |= BIT(R_AX) | BIT(R_CX) | BIT(R_SI) | BIT(R_DI); /* string ops */
		break;
	case 0xb0 ... 0xbf:
		write_reg(f, (op & 7) | ((in->rex & 1) << 3));
		break;
	case 0xc0: case 0xc1: case 0xd0 ... 0xd3:
		write_rm(f, in);
		break;
	case 0xc6: case 0xc7:
		if (in->modrm == 0xf8 && op == 0xc7) {
			f->kind = K_BRANCH; /* xbegin: abort path jumps */
			f->has_target = true;
			f->target = in->len + in->imm;
		} else if (reg == 0) {
			write_rm(f, in);
		} else {
			f->unknown = true;
		}
		break;
	case 0xc2: case 0xc3: case 0xca: case 0xcb: case 0xcc: case 0xcd:
	case 0xcf: case 0xf1: case 0xf4:
		f->kind = K_BRANCH;
		break;
	case 0xe0 ... 0xe3:
		f->kind = K_BRANCH; /* loop*, jrcxz: not emulated */
		f->has_target = true;
		f->target = in->len + in->imm;
		break;
	case 0x70 ... 0x7f: case 0xe8: case 0xe9: case 0xeb:
		f->kind = op == 0xe8 ? K_CALL : op >= 0xe9 ? K_JMP : K_JCC;
		f->has_target = true;
		f->target = in->len + in->imm;
		break;
	case 0xf6: case 0xf7:
		if (reg <= 1)
			break; /* test */
		if (reg <= 3) {
			write_rm(f, in); /* not, neg */
		} else {
			write_reg(f, R_AX); /* mul, imul, div, idiv */
			if (op == 0xf7)
				write_reg(f, R_DX);
		}
		break;
	case 0xfe: case 0xff:
		if (reg <= 1) {
			write_rm(f, in); /* inc, dec */
		} else if (op == 0xff && reg <= 5) {
			f->kind = K_BRANCH; /* indirect call/jmp */
		} else if (op == 0xff && reg == 6) {
			f->sp_down = 8; /* push r/m */
		} else {
			f->unknown = true;
		}
		break;
	default:
		f->unknown = true; /* enter, leave, x87, in/out, pop r/m, segments */
		break;
	}
}
/* clang-format on */

/* The SSE store forms (r/m is the destination). */
static bool sse_store(__u8 op)
{
	switch (op) {
	case 0x11:
	case 0x13:
	case 0x17:
	case 0x29:
	case 0x2b:
	case 0x7f:
	case 0xd6:
	case 0xe7:
		return true;
	default:
		return false;
	}
}

/* clang-format off */
static void fx_map1(const struct probe_insn *in, struct fx *f)
{
	unsigned int reg = modrm_reg(in) & 7;
	__u8 op = in->op;

	switch (op) {
	case 0x1e:
		if (in->rep && (in->modrm == 0xfa || in->modrm == 0xfb)) {
			f->kind = K_ENDBR;
		} else if (in->rep && modrm_is_reg(in) && reg == 1) {
			write_rm(f, in); /* rdssp */
		}
		break;
	case 0x1f:
		f->kind = reg == 0 ? K_NOP : K_PLAIN;
		break;
	case 0x0d: case 0x18 ... 0x1d:
		break; /* prefetch, hint nops */
	case 0x05: case 0x07: case 0x0b: case 0x34: case 0x35: case 0xb9: case 0xff:
	case 0x01:
		f->kind = K_BRANCH; /* syscall, sysret, ud*, system group */
		break;
	case 0x80 ... 0x8f:
		f->kind = K_JCC;
		f->has_target = true;
		f->target = in->len + in->imm;
		break;
	case 0x10 ... 0x17: case 0x28 ... 0x2b: case 0x2e: case 0x2f:
	case 0x51 ... 0x6f: case 0x70 ... 0x76: case 0x7c: case 0x7d: case 0x7f: case 0xc2:
	case 0xc4: case 0xc6: case 0xd0 ... 0xd6: case 0xd8 ... 0xfe:
		if (sse_store(op))
			write_rm(f, in);
		break; /* xmm/mm destinations */
	case 0x2c: case 0x2d: case 0x50: case 0xc5: case 0xd7:
	case 0x40 ... 0x4f: case 0xaf: case 0xb6: case 0xb7: case 0xbe: case 0xbf:
	case 0xb8: case 0xbc: case 0xbd:
		write_reg(f, modrm_reg(in)); /* cvt*2si, movmsk, pextrw, cmov, imul, movzx... */
		break;
	case 0x7e:
		if (!in->rep)
			write_rm(f, in); /* movd/movq to r/m */
		break;
	case 0x90 ... 0x9f: case 0xa4: case 0xa5: case 0xab: case 0xac: case 0xad:
	case 0xb3: case 0xbb:
		write_rm(f, in); /* setcc, shld/shrd, bts/btr/btc */
		break;
	case 0xa3:
		break; /* bt */
	case 0xba:
		if (reg >= 5)
			write_rm(f, in);
		break;
	case 0xb0: case 0xb1:
		write_reg(f, R_AX);
		write_rm(f, in);
		break;
	case 0xc0: case 0xc1:
		write_reg(f, modrm_reg(in));
		write_rm(f, in);
		break;
	case 0xc8 ... 0xcf:
		write_reg(f, (op & 7) | ((in->rex & 1) << 3));
		break;
	case 0x31:
		f->wr |= BIT(R_AX) | BIT(R_DX);
		break;
	case 0xa2:
		f->wr |= BIT(R_AX) | BIT(R_BX) | BIT(R_CX) | BIT(R_DX);
		break;
	case 0xae:
		if (!in->p66 && !in->rep && !in->repne && in->modrm >= 0xe8)
			break; /* lfence, mfence, sfence */
		f->unknown = true;
		break;
	default:
		f->unknown = true;
		break;
	}
}
/* clang-format on */

static void insn_fx(const struct probe_insn *in, struct fx *f)
{
	memset(f, 0, sizeof(*f));
	if (in->vex)
		f->unknown = true;
	else if (in->map == 0)
		fx_map0(in, f);
	else if (in->map == 1)
		fx_map1(in, f);
	else if (in->map == 2)
		f->unknown = in->op >= 0xf0; /* movbe, crc32, BMI: GPR writes */
	else if ((in->op >= 0x14 && in->op <= 0x17) || (in->op >= 0x60 && in->op <= 0x63))
		f->unknown = true; /* pextr*, extractps, pcmpXstrX */
	if (f->wr & BIT(R_SP)) {
		f->wr &= (__u16)~BIT(R_SP);
		f->sp_unknown = true;
	}
	if (f->unknown) {
		f->wr = ALL_REGS & (__u16)~BIT(R_SP);
		f->sp_unknown = true;
		f->stack_store = true;
	}
}

/* x86_nops[] of the 6.18 kernel (arch/x86/include/asm/nops.h, 64-bit). */
static const __u8 kernel_nops[9][8] = {
	[1] = { 0x90 },
	[2] = { 0x66, 0x90 },
	[3] = { 0x0f, 0x1f, 0x00 },
	[4] = { 0x0f, 0x1f, 0x40, 0x00 },
	[5] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 },
	[6] = { 0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00 },
	[7] = { 0x0f, 0x1f, 0x80, 0x00, 0x00, 0x00, 0x00 },
	[8] = { 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00 },
};

/* Does arch_uprobe_analyze_insn() give this insn an ->emulate op? */
static bool kernel_emulates(const struct probe_insn *in, const __u8 *code, enum kind kind)
{
	if (in->bad_prefix || in->vex)
		return false; /* is_prefix_bad(): the probe is refused outright */
	if (in->len <= 8 && !memcmp(code, kernel_nops[in->len], in->len))
		return true;
	if (in->map == 0 && in->op == 0x90)
		return !(in->rex & 1); /* 41 90 is xchg %r8,%rax, not a nop */
	switch (kind) {
	case K_JCC:
	case K_JMP:
	case K_CALL:
		return !in->p66;
	case K_PUSH:
		return in->len == 1 || (in->len == 2 && in->rex == 0x41 && in->npfx == 0);
	default:
		return false;
	}
}

/* ---- the chooser ------------------------------------------------------ */

/* Lowest offset in [0, func_size) that a relative branch among the
 * decodable bytes lands on, or UINT32_MAX. */
static __u32 lowest_jump_target(const __u8 *code, size_t limit, __u32 func_size)
{
	__u32 lowest = UINT32_MAX;
	struct probe_insn in;
	struct fx f;
	size_t off;

	for (off = 0; off < limit; off += in.len) {
		if (probe_insn_decode(code + off, limit - off, &in))
			break;
		insn_fx(&in, &f);
		if (f.has_target) {
			__s64 t = (__s64)off + f.target;

			if (t >= 0 && t < (__s64)func_size && t < (__s64)lowest)
				lowest = (__u32)t;
		}
	}
	return lowest;
}

int probe_place_choose_nargs(const __u8 *code, size_t len, __u32 func_size, bool need_return,
			     unsigned int nargs, struct probe_place *out)
{
	size_t limit = len < func_size ? len : func_size;
	bool sp_unknown = false, stack_store = false;
	__u16 argmask = 0, wr = 0;
	struct probe_insn in;
	__s64 sp_down = 0; /* within +-SP_MOVE_MAX, else sp_unknown */
	__u32 loop_head;
	struct fx f;
	size_t off;
	unsigned int i;

	if (!out || (!code && len) || nargs > PROBE_MAX_ARGS)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	out->entry_state = true;
	if (limit == 0) {
		out->reason = PLACE_NO_CODE;
		return 0;
	}
	for (i = 0; i < nargs; i++)
		argmask |= arg_regs[i];
	loop_head = lowest_jump_target(code, limit, func_size);

	for (off = 0;; off += in.len) {
		int r;

		out->at = (__u32)off;
		if (off >= limit) {
			out->reason = off >= func_size ? PLACE_FUNC_END : PLACE_BYTES_END;
			break;
		}
		if (off >= loop_head) {
			out->reason = PLACE_LOOP_HEAD;
			out->at = loop_head;
			break;
		}
		r = probe_insn_decode(code + off, limit - off, &in);
		if (r) {
			out->reason = r != -ENODATA        ? PLACE_UNDECODED
				      : limit == func_size ? PLACE_PAST_FUNC_END
							   : PLACE_PAST_BYTES;
			break;
		}
		insn_fx(&in, &f);
		if (f.kind != K_ENDBR && kernel_emulates(&in, code + off, f.kind)) {
			out->reason = PLACE_FOUND;
			out->offset = (__u32)off;
			out->emulated = true;
			out->entry_state = !sp_unknown && !stack_store && sp_down == 0;
			out->ra_off = sp_unknown || stack_store ? -1 : (__s32)sp_down;
			return 0;
		}
		if (f.kind == K_BRANCH || f.kind == K_JCC || f.kind == K_JMP || f.kind == K_CALL) {
			out->reason = PLACE_BRANCH;
			break;
		}
		wr |= f.wr;
		sp_unknown |= f.sp_unknown;
		stack_store |= f.stack_store;
		/* Each step moves rsp by at most 2^31: bounded, the sum cannot
		 * overflow (nor wrap back to 0 and fake entry state). */
		if (!sp_unknown) {
			sp_down += f.sp_down;
			if (sp_down > SP_MOVE_MAX || sp_down < -SP_MOVE_MAX)
				sp_unknown = true;
		}
		if (!out->walked++)
			out->walked_first = (__u32)off;
		out->walked_last = (__u32)off;
		if (wr & argmask) {
			out->reason = PLACE_ARG_WRITTEN;
			break;
		}
		if (need_return && (sp_unknown || stack_store || sp_down)) {
			out->reason = PLACE_LEAVES_ENTRY;
			break;
		}
	}

	/* Nothing qualifies: the entry, which the kernel single-steps unless it
	 * is emulated and was only disqualified as a loop head. */
	if (!probe_insn_decode(code, limit, &in)) {
		insn_fx(&in, &f);
		out->emulated = f.kind != K_ENDBR && kernel_emulates(&in, code, f.kind);
	}
	return 0;
}

int probe_place_choose(const __u8 *code, size_t len, __u32 func_size, bool need_return,
		       bool need_args, struct probe_place *out)
{
	return probe_place_choose_nargs(code, len, func_size, need_return,
					need_args ? PROBE_MAX_ARGS : 0, out);
}

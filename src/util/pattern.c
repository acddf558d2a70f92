// SPDX-License-Identifier: GPL-2.0-only
/*
 * pattern.c - bounded patterns (pattern.h): parsed into a small tree,
 * compiled to a Thompson NFA, matched by running every state side by side
 * (a Pike VM), so neither the pattern nor the text can make it backtrack,
 * allocate or take more than 2 x (text length + 1) x states steps.
 *
 * Compiling takes two passes over bounded arrays on the stack: the parser
 * builds at most 3 nodes per byte of the pattern; the emitter writes the
 * program, copying the operand of {m,n} m or n times, and stops at the
 * first state past PATTERN_MAX_STATES, so an expansion that would be huge
 * costs no more than one that fits. The program and its bracket sets are
 * then copied into one allocation of the size they need.
 */
#include "util/pattern.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ==== The program ========================================================= */

enum op {
	OP_BYTE,  /* the text's byte is .byte */
	OP_ANY,   /* any byte */
	OP_CLASS, /* a byte in set .x */
	OP_SPLIT, /* go on at .x and at .y */
	OP_JMP,   /* go on at .x */
	OP_BOL,   /* only at the text's start */
	OP_EOL,   /* only at the text's end */
	OP_MATCH,
};

struct inst {
	unsigned char op;
	unsigned char byte;
	uint16_t x, y;
};

#define MAX_SETS (PATTERN_MAX_LEN / 3 + 1) /* "[a]" is the shortest */

struct pattern {
	size_t n, nsets;
	const unsigned char (*sets)[32]; /* bitmaps, after the program */
	struct inst prog[];
};

/* ==== Parsing ============================================================= */

enum node_kind { N_EMPTY, N_BYTE, N_ANY, N_SET, N_BOL, N_EOL, N_CAT, N_ALT, N_REP };

#define REP_INF 0xffff
#define MAX_NODES (3 * PATTERN_MAX_LEN + 4)

struct node {
	unsigned char kind, byte;
	uint16_t a, b;     /* children, or a set's index */
	uint16_t min, max; /* N_REP */
};

struct compiler {
	const char *src;
	size_t pos, len;
	struct node nodes[MAX_NODES];
	size_t nnodes;
	unsigned char sets[MAX_SETS][32];
	size_t nsets;
	struct inst prog[PATTERN_MAX_STATES];
	size_t n;
	bool failed;
	char *err;
	size_t errlen;
};

static int __attribute__((format(printf, 2, 3))) fail(struct compiler *c, const char *fmt, ...)
{
	va_list ap;

	if (c->failed)
		return -1;
	c->failed = true;
	if (c->err && c->errlen) {
		va_start(ap, fmt);
		vsnprintf(c->err, c->errlen, fmt, ap);
		va_end(ap);
	}
	return -1;
}

/* A new node, or -1 (cannot happen within MAX_NODES; checked anyway). */
static int node(struct compiler *c, unsigned kind, int a, int b)
{
	struct node *nd;

	if (c->nnodes >= MAX_NODES)
		return fail(c, "too many parts");
	nd = &c->nodes[c->nnodes];
	memset(nd, 0, sizeof(*nd));
	nd->kind = (unsigned char)kind;
	nd->a = (uint16_t)(a < 0 ? 0 : a);
	nd->b = (uint16_t)(b < 0 ? 0 : b);
	return (int)c->nnodes++;
}

static int peek(const struct compiler *c)
{
	return c->pos < c->len ? (unsigned char)c->src[c->pos] : -1;
}

static const struct {
	const char *name;
	int (*is)(int);
} classes[] = {
	{ "alpha", isalpha }, { "digit", isdigit }, { "alnum", isalnum }, { "upper", isupper },
	{ "lower", islower }, { "space", isspace }, { "blank", isblank }, { "punct", ispunct },
	{ "print", isprint }, { "graph", isgraph }, { "cntrl", iscntrl }, { "xdigit", isxdigit },
};

/* [:name:] at c->pos (just after the '['), into set. 0 or -1. */
static int parse_class(struct compiler *c, unsigned char *set)
{
	size_t start = c->pos + 2, end = start, i;
	int ch;

	while (end + 1 < c->len && !(c->src[end] == ':' && c->src[end + 1] == ']'))
		end++;
	if (end + 1 >= c->len)
		return fail(c, "at byte %zu: '[:' without ':]'", c->pos + 1);
	for (i = 0; i < sizeof(classes) / sizeof(classes[0]); i++) {
		if (strlen(classes[i].name) == end - start &&
		    !memcmp(classes[i].name, c->src + start, end - start))
			break;
	}
	if (i == sizeof(classes) / sizeof(classes[0]))
		return fail(c, "at byte %zu: unknown class [:%.*s:]", c->pos + 1,
			    (int)(end - start), c->src + start);
	/* the C locale's classes, whatever the process's locale: ASCII */
	for (ch = 0; ch < 128; ch++)
		if (classes[i].is(ch))
			set[ch / 8] |= (unsigned char)(1u << (ch % 8));
	c->pos = end + 2;
	return 0;
}

/* A bracket expression; c->pos is at its '['. */
static int parse_set(struct compiler *c)
{
	size_t open = c->pos;
	unsigned char *set;
	bool negate = false, first = true;
	int i;

	if (c->nsets >= MAX_SETS)
		return fail(c, "too many bracket expressions");
	set = c->sets[c->nsets];
	memset(set, 0, 32);
	c->pos++;
	if (peek(c) == '^') {
		negate = true;
		c->pos++;
	}
	for (;;) {
		int lo = peek(c), hi;

		if (lo < 0)
			return fail(c, "at byte %zu: '[' without ']'", open + 1);
		if (lo == ']' && !first)
			break;
		first = false;
		if (lo == '[' && c->pos + 1 < c->len) {
			char k = c->src[c->pos + 1];

			if (k == ':') {
				if (parse_class(c, set))
					return -1;
				continue;
			}
			if (k == '.' || k == '=')
				return fail(c, "at byte %zu: [%c %c] is not supported", c->pos + 1,
					    k, k);
		}
		c->pos++;
		hi = lo;
		if (peek(c) == '-' && c->pos + 1 < c->len && c->src[c->pos + 1] != ']') {
			hi = (unsigned char)c->src[c->pos + 1];
			if (hi == '[' && c->pos + 2 < c->len && strchr(":.=", c->src[c->pos + 2]))
				return fail(c, "at byte %zu: a range ending in a class", c->pos + 2);
			if (hi < lo)
				return fail(c, "at byte %zu: range %c-%c goes backwards", c->pos,
					    lo, hi);
			c->pos += 2;
		}
		for (i = lo; i <= hi; i++)
			set[i / 8] |= (unsigned char)(1u << (i % 8));
	}
	c->pos++; /* ']' */
	if (negate)
		for (i = 0; i < 32; i++)
			set[i] = (unsigned char)~set[i];
	set[0] &= (unsigned char)~1u; /* NUL ends the text: never matched */
	return node(c, N_SET, (int)c->nsets++, 0);
}

static int parse_alt(struct compiler *c, int depth);

/* One atom, or -1. */
static int parse_atom(struct compiler *c, int depth)
{
	size_t at = c->pos;
	int ch = peek(c), n;

	switch (ch) {
	case '(':
		c->pos++;
		n = parse_alt(c, depth + 1);
		if (n < 0)
			return -1;
		if (peek(c) != ')')
			return fail(c, "at byte %zu: '(' without ')'", at + 1);
		c->pos++;
		return n;
	case ')':
		return fail(c, "at byte %zu: ')' without '(' (write \\) for the byte)", at + 1);
	case '*':
	case '+':
	case '?':
	case '{':
		return fail(c, "at byte %zu: '%c' repeats nothing", at + 1, ch);
	case '[':
		return parse_set(c);
	case '.':
		c->pos++;
		return node(c, N_ANY, 0, 0);
	case '^':
		c->pos++;
		return node(c, N_BOL, 0, 0);
	case '$':
		c->pos++;
		return node(c, N_EOL, 0, 0);
	case '\\':
		if (c->pos + 1 >= c->len)
			return fail(c, "at byte %zu: '\\' ends the pattern", at + 1);
		ch = (unsigned char)c->src[c->pos + 1];
		if (isalnum(ch))
			return fail(c,
				    "at byte %zu: \\%c is not supported (no back references "
				    "or escapes such as \\d, \\w)",
				    at + 1, ch);
		c->pos += 2;
		break;
	default:
		c->pos++;
		break;
	}
	n = node(c, N_BYTE, 0, 0);
	if (n >= 0)
		c->nodes[n].byte = (unsigned char)ch;
	return n;
}

/* A count of {m,n}: decimal, at most PATTERN_MAX_REPEAT. -1 when absent,
 * -2 past the bound. */
static long parse_count(struct compiler *c)
{
	long v = -1;

	while (peek(c) >= '0' && peek(c) <= '9') {
		v = (v < 0 ? 0 : v) * 10 + (peek(c) - '0');
		if (v > PATTERN_MAX_REPEAT) {
			fail(c, "at byte %zu: a count above %d", c->pos + 1, PATTERN_MAX_REPEAT);
			return -2;
		}
		c->pos++;
	}
	return v;
}

/* The repetitions after an atom. */
static int parse_repeat(struct compiler *c, int depth)
{
	int n = parse_atom(c, depth);

	while (n >= 0) {
		int ch = peek(c), r;
		size_t at = c->pos;
		long min, max;

		if (ch == '*')
			min = 0, max = REP_INF;
		else if (ch == '+')
			min = 1, max = REP_INF;
		else if (ch == '?')
			min = 0, max = 1;
		else if (ch == '{') {
			c->pos++;
			min = parse_count(c);
			max = min;
			if (min == -2)
				return -1;
			if (peek(c) == ',') {
				c->pos++;
				max = parse_count(c);
				if (max == -2)
					return -1;
				if (max < 0)
					max = REP_INF;
				if (min < 0)
					min = 0;
			}
			if (min < 0 || peek(c) != '}')
				return fail(c,
					    "at byte %zu: '{' is not {m}, {m,}, {m,n} or {,n} "
					    "(write \\{ for the byte)",
					    at + 1);
			if (max < min)
				return fail(c, "at byte %zu: {%ld,%ld} counts backwards", at + 1,
					    min, max);
		} else {
			break;
		}
		c->pos++;
		if (c->nodes[n].kind == N_BOL || c->nodes[n].kind == N_EOL)
			return fail(c, "at byte %zu: '%c' repeats an anchor", at + 1, ch);
		r = node(c, N_REP, n, 0);
		if (r < 0)
			return -1;
		c->nodes[r].min = (uint16_t)min;
		c->nodes[r].max = (uint16_t)max;
		n = r;
	}
	return n;
}

/* A branch: atoms one after another, up to '|', ')' or the end. */
static int parse_cat(struct compiler *c, int depth)
{
	int n = -1;

	while (peek(c) >= 0 && peek(c) != '|' && !(peek(c) == ')' && depth > 0)) {
		int m = parse_repeat(c, depth);

		if (m < 0)
			return -1;
		n = n < 0 ? m : node(c, N_CAT, n, m);
		if (n < 0)
			return -1;
	}
	return n < 0 ? node(c, N_EMPTY, 0, 0) : n;
}

static int parse_alt(struct compiler *c, int depth)
{
	int n = parse_cat(c, depth);

	while (n >= 0 && peek(c) == '|') {
		int m;

		c->pos++;
		m = parse_cat(c, depth);
		if (m < 0)
			return -1;
		n = node(c, N_ALT, n, m);
	}
	return n;
}

/* ==== Emitting ============================================================ */

/* The next state, or -1 past the bound. */
static int emit(struct compiler *c, unsigned op, unsigned x, unsigned y)
{
	struct inst *i;

	if (c->n >= PATTERN_MAX_STATES)
		return fail(c, "more than %d states (a {m,n} or a long pattern expands too far)",
			    PATTERN_MAX_STATES);
	i = &c->prog[c->n];
	i->op = (unsigned char)op;
	i->byte = 0;
	i->x = (uint16_t)x;
	i->y = (uint16_t)y;
	return (int)c->n++;
}

static int gen(struct compiler *c, int n);

/* e*: L0: split L1, L3; L1: e; jmp L0; L3: */
static int gen_star(struct compiler *c, int e)
{
	int l0 = emit(c, OP_SPLIT, 0, 0);

	if (l0 < 0 || gen(c, e) || emit(c, OP_JMP, (unsigned)l0, 0) < 0)
		return -1;
	c->prog[l0].x = (uint16_t)(l0 + 1);
	c->prog[l0].y = (uint16_t)c->n;
	return 0;
}

/* e?: split L1, L2; L1: e; L2: */
static int gen_quest(struct compiler *c, int e)
{
	int l0 = emit(c, OP_SPLIT, 0, 0);

	if (l0 < 0 || gen(c, e))
		return -1;
	c->prog[l0].x = (uint16_t)(l0 + 1);
	c->prog[l0].y = (uint16_t)c->n;
	return 0;
}

static int gen_rep(struct compiler *c, const struct node *nd)
{
	unsigned i;

	for (i = 0; i + 1 < nd->min; i++)
		if (gen(c, nd->a))
			return -1;
	if (nd->min) {
		size_t l1 = c->n;

		if (gen(c, nd->a))
			return -1;
		if (nd->max == REP_INF) /* e+: L1: e; split L1, L3; L3: */
			return emit(c, OP_SPLIT, (unsigned)l1, (unsigned)c->n + 1) < 0 ? -1 : 0;
	} else if (nd->max == REP_INF) {
		return gen_star(c, nd->a);
	}
	for (i = nd->min; i < nd->max; i++)
		if (gen_quest(c, nd->a))
			return -1;
	return 0;
}

/* Append node n's program. 0 or -1. Depth is bounded by the tree's, which
 * the pattern's length bounds. */
static int gen(struct compiler *c, int n)
{
	const struct node *nd = &c->nodes[n];
	int l0, j;

	switch (nd->kind) {
	case N_EMPTY:
		return 0;
	case N_BYTE:
		l0 = emit(c, OP_BYTE, 0, 0);
		if (l0 >= 0)
			c->prog[l0].byte = nd->byte;
		return l0 < 0 ? -1 : 0;
	case N_ANY:
		return emit(c, OP_ANY, 0, 0) < 0 ? -1 : 0;
	case N_SET:
		return emit(c, OP_CLASS, nd->a, 0) < 0 ? -1 : 0;
	case N_BOL:
		return emit(c, OP_BOL, 0, 0) < 0 ? -1 : 0;
	case N_EOL:
		return emit(c, OP_EOL, 0, 0) < 0 ? -1 : 0;
	case N_CAT:
		return gen(c, nd->a) || gen(c, nd->b) ? -1 : 0;
	case N_ALT: /* split L1, L2; L1: a; jmp L3; L2: b; L3: */
		l0 = emit(c, OP_SPLIT, 0, 0);
		if (l0 < 0 || gen(c, nd->a))
			return -1;
		j = emit(c, OP_JMP, 0, 0);
		if (j < 0)
			return -1;
		c->prog[l0].x = (uint16_t)(l0 + 1);
		c->prog[l0].y = (uint16_t)c->n;
		if (gen(c, nd->b))
			return -1;
		c->prog[j].x = (uint16_t)c->n;
		return 0;
	case N_REP:
	default:
		return gen_rep(c, nd);
	}
}

struct pattern *pattern_compile(const char *src, char *err, size_t errlen)
{
	struct compiler *c;
	struct pattern *p = NULL;
	size_t len = strnlen(src, PATTERN_MAX_LEN + 1);
	int root;

	if (err && errlen)
		err[0] = '\0';
	if (len > PATTERN_MAX_LEN) {
		if (err && errlen)
			snprintf(err, errlen, "longer than %d bytes", PATTERN_MAX_LEN);
		errno = EINVAL;
		return NULL;
	}
	c = calloc(1, sizeof(*c)); /* about 20 KiB: not on the caller's stack */
	if (!c) {
		errno = ENOMEM;
		return NULL;
	}
	c->src = src;
	c->len = len;
	c->err = err;
	c->errlen = errlen;
	root = parse_alt(c, 0);
	if (root >= 0 && c->pos < c->len) /* only a ')' at depth 0 stops it */
		fail(c, "at byte %zu: ')' without '(' (write \\) for the byte)", c->pos + 1);
	if (!c->failed && !gen(c, root))
		emit(c, OP_MATCH, 0, 0);
	if (c->failed) {
		errno = EINVAL;
		goto out;
	}
	p = malloc(sizeof(*p) + c->n * sizeof(struct inst) + c->nsets * 32);
	if (!p) {
		errno = ENOMEM;
		goto out;
	}
	p->n = c->n;
	p->nsets = c->nsets;
	memcpy(p->prog, c->prog, c->n * sizeof(struct inst));
	p->sets = (const unsigned char(*)[32])(void *)(p->prog + c->n);
	memcpy((void *)(p->prog + c->n), c->sets, c->nsets * 32);
out:
	free(c);
	return p;
}

void pattern_free(struct pattern *p)
{
	free(p);
}

size_t pattern_states(const struct pattern *p)
{
	return p->n;
}

/* ==== Matching ============================================================ */

static __thread unsigned long last_steps;

unsigned long pattern_last_steps(void)
{
	return last_steps;
}

struct vm {
	const struct pattern *p;
	const unsigned char *text;
	uint16_t list[2][PATTERN_MAX_STATES];
	size_t nlist[2];
	uint16_t stack[PATTERN_MAX_STATES];
	uint32_t seen[PATTERN_MAX_STATES]; /* the step a state was last added in */
	uint32_t step;
	unsigned long steps;
};

/* Add state s and what it leads to without reading a byte to list l, as
 * of text position pos. Every state is marked before it is pushed, so it
 * is pushed once a step and the stack never holds more than the states.
 * True when the match state was reached. */
static bool add(struct vm *v, int l, unsigned s, size_t pos)
{
	size_t top = 0;

	if (v->seen[s] == v->step)
		return false;
	v->seen[s] = v->step;
	v->stack[top++] = (uint16_t)s;
	while (top) {
		const struct inst *i = &v->p->prog[v->stack[--top]];
		unsigned next[2], nn = 0, k;

		v->steps++;
		switch (i->op) {
		case OP_MATCH:
			return true;
		case OP_JMP:
			next[nn++] = i->x;
			break;
		case OP_SPLIT:
			next[nn++] = i->y;
			next[nn++] = i->x;
			break;
		case OP_BOL:
			if (pos == 0)
				next[nn++] = (unsigned)(i - v->p->prog) + 1;
			break;
		case OP_EOL:
			if (!v->text[pos])
				next[nn++] = (unsigned)(i - v->p->prog) + 1;
			break;
		default:
			v->list[l][v->nlist[l]++] = (uint16_t)(i - v->p->prog);
			break;
		}
		for (k = 0; k < nn; k++) {
			if (v->seen[next[k]] == v->step)
				continue;
			v->seen[next[k]] = v->step;
			v->stack[top++] = (uint16_t)next[k];
		}
	}
	return false;
}

static bool takes(const struct pattern *p, const struct inst *i, unsigned char b)
{
	switch (i->op) {
	case OP_BYTE:
		return i->byte == b;
	case OP_ANY:
		return true;
	case OP_CLASS:
		return p->sets[i->x][b / 8] & (1u << (b % 8));
	default:
		return false;
	}
}

bool pattern_match(const struct pattern *p, const char *text)
{
	struct vm v;
	size_t pos = 0;
	int cur = 0;
	bool hit;

	v.p = p;
	v.text = (const unsigned char *)text;
	v.nlist[0] = v.nlist[1] = 0;
	memset(v.seen, 0, p->n * sizeof(v.seen[0]));
	v.step = 1;
	v.steps = 0;
	hit = add(&v, cur, 0, 0);
	while (!hit && v.text[pos]) {
		unsigned char b = v.text[pos];
		int nxt = !cur;
		size_t k;

		if (v.step == UINT32_MAX) { /* 4 GiB of text: start the marks over */
			memset(v.seen, 0, p->n * sizeof(v.seen[0]));
			v.step = 0;
		}
		v.step++;
		v.nlist[nxt] = 0;
		for (k = 0; k < v.nlist[cur] && !hit; k++) {
			const struct inst *i = &p->prog[v.list[cur][k]];

			v.steps++;
			if (takes(p, i, b))
				hit = add(&v, nxt, v.list[cur][k] + 1u, pos + 1);
		}
		/* a match may start at every position: the start state again */
		if (!hit)
			hit = add(&v, nxt, 0, pos + 1);
		cur = nxt;
		pos++;
	}
	last_steps = v.steps;
	return hit;
}

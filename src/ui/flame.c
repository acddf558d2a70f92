// SPDX-License-Identifier: GPL-2.0-only
/*
 * flame.c - the call tree behind the flame view and its column layout.
 *
 * Owns the nodes and their labels (one arena per tree, freed at once) and
 * a (parent, label) hash map (util/hmap) so adding a stack costs one lookup per frame.
 * Knows nothing about terminals: a layout is a list of boxes with integer
 * columns, computed so that a child's columns always lie within its
 * parent's (both edges are rounded from exact positions with the same
 * monotonic rounding) and boxes of one row never overlap.
 */
#include "ui/flame.h"
#include "util/grow.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ui/format.h"
#include "util/hmap.h"

#define ARENA_BLOCK (64 * 1024)

struct arena_block {
	struct arena_block *next;
	size_t used;
	size_t cap;
	_Alignas(16) char data[];
};

struct flame_tree {
	struct flame_node *root;
	int depth;
	struct arena_block *arena;
	struct hmap children; /* struct flame_node, by (parent, label) */
};

static void *arena_alloc(struct flame_tree *t, size_t size)
{
	struct arena_block *b = t->arena;

	size = (size + 15) & ~(size_t)15;
	if (!b || b->cap - b->used < size) {
		size_t cap = size > ARENA_BLOCK ? size : ARENA_BLOCK;

		b = malloc(sizeof(*b) + cap);
		if (!b)
			return NULL;
		b->next = t->arena;
		b->used = 0;
		b->cap = cap;
		t->arena = b;
	}
	b->used += size;
	return b->data + b->used - size;
}

struct child_key {
	const struct flame_node *parent;
	const char *label;
};

static __u64 child_hash(const struct flame_node *parent, const char *label)
{
	__u64 h = hmap_mix(0, (__u64)(uintptr_t)parent);

	return hmap_mix(hmap_fnv1a(h, label, strlen(label)), 0);
}

static bool child_eq(const void *val, const void *key)
{
	const struct flame_node *n = val;
	const struct child_key *k = key;

	return n->parent == k->parent && strcmp(n->label, k->label) == 0;
}

static struct flame_node *child_find(const struct flame_tree *t, const struct flame_node *parent,
				     const char *label, __u64 hash)
{
	struct child_key k = { parent, label };

	return hmap_get(&t->children, hash, child_eq, &k);
}

static struct flame_node *node_new(struct flame_tree *t, struct flame_node *parent,
				   const char *label, const struct mt_frame *frame)
{
	size_t len = strlen(label);
	struct flame_node *n = arena_alloc(t, sizeof(*n) + len + 1);

	if (!n)
		return NULL;
	memset(n, 0, sizeof(*n));
	memcpy((char *)(n + 1), label, len + 1);
	n->label = (const char *)(n + 1);
	n->frame = frame;
	n->parent = parent;
	if (parent) {
		n->depth = parent->depth + 1;
		n->next = parent->children;
		parent->children = n;
		parent->nchildren++;
		if (n->depth > t->depth)
			t->depth = n->depth;
	}
	return n;
}

struct flame_tree *flame_tree_new(const char *root_label)
{
	struct flame_tree *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	hmap_init(&t->children);
	t->root = node_new(t, NULL, root_label ? root_label : "all", NULL);
	if (!t->root)
		goto fail;
	return t;
fail:
	flame_tree_free(t);
	errno = ENOMEM;
	return NULL;
}

void flame_tree_free(struct flame_tree *t)
{
	if (!t)
		return;
	while (t->arena) {
		struct arena_block *b = t->arena;

		t->arena = b->next;
		free(b);
	}
	hmap_fini(&t->children);
	free(t);
}

/* The child of parent labelled label, created when missing. */
static struct flame_node *child_get(struct flame_tree *t, struct flame_node *parent,
				    const char *label, const struct mt_frame *frame)
{
	__u64 h = child_hash(parent, label);
	struct flame_node *n = child_find(t, parent, label, h);

	if (n)
		return n;
	n = node_new(t, parent, label, frame);
	if (n && hmap_put(&t->children, h, n)) {
		/* Unlink it again (the arena frees it with the tree). */
		parent->children = n->next;
		parent->nchildren--;
		return NULL;
	}
	return n;
}

int flame_tree_add(struct flame_tree *t, const char *const *prefix, int nprefix,
		   const struct mt_frame *frames, __u32 nframes, double weight)
{
	struct flame_node *n = t->root;
	char label[512];

	if (!(weight > 0) || isinf(weight))
		return 0;
	/* Find or create the whole path first, so a failed allocation leaves
	 * the totals consistent. */
	for (int i = 0; i < nprefix; i++) {
		n = child_get(t, n, prefix[i], NULL);
		if (!n)
			return -ENOMEM;
	}
	for (__u32 i = nframes; i-- > 0;) {
		n = child_get(t, n, fmt_frame_name(label, sizeof(label), &frames[i]), &frames[i]);
		if (!n)
			return -ENOMEM;
	}
	n->self += weight;
	for (; n; n = n->parent)
		n->total += weight;
	return 0;
}

static int node_cmp(const void *a, const void *b)
{
	const struct flame_node *x = *(const struct flame_node *const *)a;
	const struct flame_node *y = *(const struct flame_node *const *)b;

	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	return strcmp(x->label, y->label);
}

static void node_sort(struct flame_node *n, struct flame_node **scratch)
{
	unsigned k = 0;

	for (struct flame_node *c = n->children; c; c = c->next)
		scratch[k++] = c;
	if (k > 1) {
		qsort(scratch, k, sizeof(*scratch), node_cmp);
		for (unsigned i = 0; i < k; i++)
			scratch[i]->next = i + 1 < k ? scratch[i + 1] : NULL;
		n->children = scratch[0];
	}
	for (struct flame_node *c = n->children; c; c = c->next)
		node_sort(c, scratch);
}

void flame_tree_sort(struct flame_tree *t)
{
	/* One scratch array serves every level: a node's children are
	 * relinked before recursing into them. */
	struct flame_node **scratch = malloc((t->children.len + 1) * sizeof(*scratch));

	if (!scratch)
		return; /* unsorted is still a valid tree */
	node_sort(t->root, scratch);
	free(scratch);
}

const struct flame_node *flame_tree_root(const struct flame_tree *t)
{
	return t->root;
}

int flame_tree_depth(const struct flame_tree *t)
{
	return t->depth;
}

const struct flame_node *flame_tree_match(const struct flame_tree *t, const struct flame_node *other)
{
	const struct flame_node *path[1024];
	int n = 0;
	struct flame_node *cur = t->root;

	if (!other || other->depth >= (int)(sizeof(path) / sizeof(path[0])))
		return cur;
	for (const struct flame_node *o = other; o->parent; o = o->parent)
		path[n++] = o;
	while (n-- > 0) {
		struct flame_node *c =
			child_find(t, cur, path[n]->label, child_hash(cur, path[n]->label));

		if (!c)
			break;
		cur = c;
	}
	return cur;
}

bool flame_node_matches(const struct flame_node *n, const char *pattern)
{
	return pattern && *pattern && strcasestr(n->label, pattern);
}

double flame_match_total(const struct flame_node *node, const char *pattern)
{
	double sum = 0;

	if (flame_node_matches(node, pattern))
		return node->total;
	for (const struct flame_node *c = node->children; c; c = c->next)
		sum += flame_match_total(c, pattern);
	return sum;
}

static int box_push(struct flame_layout *l, const struct flame_node *n, int x, int width,
		    bool ancestor)
{
	if (grow_array(&l->box, &l->cap, l->n + 1, sizeof(*l->box)))
		return -ENOMEM;
	l->box[l->n++] = (struct flame_box){
		.depth = n->depth,
		.x = x,
		.width = width,
		.ancestor = ancestor,
		.label = n->label,
		.node = n,
	};
	if (n->depth + 1 > l->rows)
		l->rows = n->depth + 1;
	return 0;
}

/* Same rounding for both edges of every box: monotonic, so nested exact
 * intervals give nested columns. */
static int col_of(double pos)
{
	return (int)floor(pos + 0.5);
}

static int place(struct flame_layout *l, const struct flame_node *n, double start, double scale,
		 int min_width)
{
	int x0 = col_of(start), x1 = col_of(start + n->total * scale);
	int err;

	if (x1 - x0 < min_width)
		return 0;
	err = box_push(l, n, x0, x1 - x0, false);
	if (err)
		return err;
	for (const struct flame_node *c = n->children; c; c = c->next) {
		err = place(l, c, start, scale, min_width);
		if (err)
			return err;
		start += c->total * scale;
	}
	return 0;
}

static int box_cmp(const void *a, const void *b)
{
	const struct flame_box *x = a, *y = b;

	if (x->depth != y->depth)
		return x->depth - y->depth;
	return x->x - y->x;
}

int flame_layout(const struct flame_tree *t, const struct flame_node *zoom, int width,
		 int min_width, struct flame_layout *out)
{
	int err;

	out->n = 0;
	out->rows = 0;
	if (width < 1)
		return -EINVAL;
	if (min_width < 1)
		min_width = 1;
	if (!zoom)
		zoom = t->root;
	for (const struct flame_node *a = zoom->parent; a; a = a->parent) {
		err = box_push(out, a, 0, width, true);
		if (err)
			return err;
	}
	if (zoom->total > 0) {
		err = place(out, zoom, 0, width / zoom->total, min_width);
	} else {
		err = box_push(out, zoom, 0, width, false);
	}
	if (err)
		return err;
	qsort(out->box, out->n, sizeof(*out->box), box_cmp);
	return 0;
}

void flame_layout_fini(struct flame_layout *l)
{
	free(l->box);
	l->box = NULL;
	l->n = l->cap = 0;
	l->rows = 0;
}

ssize_t flame_layout_find(const struct flame_layout *l, const struct flame_node *node)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->box[i].node == node)
			return (ssize_t)i;
	return -1;
}

size_t flame_layout_move(const struct flame_layout *l, size_t i, enum flame_dir d)
{
	const struct flame_box *b;
	ssize_t j;

	if (i >= l->n)
		return i;
	b = &l->box[i];
	switch (d) {
	case FLAME_UP:
		if (!b->node->parent)
			return i;
		j = flame_layout_find(l, b->node->parent);
		return j < 0 ? i : (size_t)j;
	case FLAME_DOWN: {
		size_t best = i;
		int best_w = 0;

		for (size_t k = i + 1; k < l->n && l->box[k].depth <= b->depth + 1; k++) {
			if (l->box[k].depth == b->depth + 1 && l->box[k].node->parent == b->node &&
			    l->box[k].width > best_w) {
				best = k;
				best_w = l->box[k].width;
			}
		}
		return best;
	}
	case FLAME_LEFT:
		return i > 0 && l->box[i - 1].depth == b->depth ? i - 1 : i;
	case FLAME_RIGHT:
		return i + 1 < l->n && l->box[i + 1].depth == b->depth ? i + 1 : i;
	}
	return i;
}

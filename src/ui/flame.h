/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * flame.h - flame graph geometry, with no terminal in sight: stacks and
 * weights go in, a call tree (root -> leaf) is built, and a layout of boxes
 * {depth, x, width, label, node} comes out for a given width, zoom root and
 * minimum box width. view_flame.c draws the boxes; the unit tests check the
 * arithmetic on synthetic trees.
 *
 * Rows grow downwards from the root (an icicle graph): row 0 is the root,
 * row d the frames d calls below it. Siblings are ordered by total weight,
 * largest first (ties by label), so the widest box of a row is leftmost.
 */
#ifndef MEMTOP_FLAME_H
#define MEMTOP_FLAME_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <linux/types.h>

#include "stacks/frame.h"

struct flame_node {
	const char *label;            /* owned by the tree */
	const struct mt_frame *frame; /* first frame seen with this label; NULL for
				       * the root and prefix nodes. Borrowed. */
	double total;                 /* weight of this node and everything below it */
	double self;                  /* weight of the stacks that end here */
	int depth;                    /* 0 for the root */
	unsigned nchildren;
	struct flame_node *parent;   /* NULL for the root */
	struct flame_node *children; /* first child; after flame_tree_sort() the largest */
	struct flame_node *next;     /* next sibling */
};

struct flame_tree;

/* An empty tree whose root is labelled root_label (copied). NULL with errno
 * set on failure. */
struct flame_tree *flame_tree_new(const char *root_label);
void flame_tree_free(struct flame_tree *t);

/* Add one stack of the given weight. The path from the root is the prefix
 * labels (outermost first; e.g. "[truncated]" or one node per process),
 * then frames[nframes-1] down to frames[0]: frames are innermost first, as
 * in struct mt_stack. A frame's label is fmt_frame_name() (format.h);
 * frames with equal labels under the same parent merge.
 * A weight <= 0 or NaN is ignored. 0 or -ENOMEM (the tree stays valid). */
int flame_tree_add(struct flame_tree *t, const char *const *prefix, int nprefix,
		   const struct mt_frame *frames, __u32 nframes, double weight);

/* Order every node's children: total descending, then label ascending.
 * Call once after the last flame_tree_add() and before laying out. */
void flame_tree_sort(struct flame_tree *t);

const struct flame_node *flame_tree_root(const struct flame_tree *t);
/* Deepest depth of any node (0 for a lone root). */
int flame_tree_depth(const struct flame_tree *t);

/* The node of t whose label path from the root equals that of other (a node
 * of another tree, e.g. the previous refresh's), or, when t lacks it, the
 * deepest node of t on that path. Never NULL: at worst t's root. */
const struct flame_node *flame_tree_match(const struct flame_tree *t, const struct flame_node *other);

/* Case-insensitive substring match of pattern in the node's label. An
 * empty or NULL pattern matches nothing. */
bool flame_node_matches(const struct flame_node *n, const char *pattern);
/* Weight under node covered by matching frames: the sum of the totals of
 * the matching nodes that have no matching ancestor below node (so
 * recursion is not counted twice). */
double flame_match_total(const struct flame_node *node, const char *pattern);

struct flame_box {
	int depth;     /* row; the tree root is row 0 */
	int x;         /* first column */
	int width;     /* columns, >= min_width */
	bool ancestor; /* a node above the zoom root, drawn full width */
	const char *label;
	const struct flame_node *node;
};

struct flame_layout {
	struct flame_box *box; /* ordered by depth, then x */
	size_t n;
	size_t cap;
	int rows; /* deepest row with a box, plus one */
};

/* Lay out the subtree of zoom (NULL: the root) across width columns. The
 * zoom node's ancestors come first as full-width rows; the zoom node spans
 * the full width; each descendant gets the columns its share of the zoom
 * node's total rounds to, nested within its parent's columns. Boxes
 * narrower than min_width (at least 1) are left out with everything below
 * them. out is reset and reused (initialise it to zeros before first use).
 * 0, -EINVAL (width < 1, zoom from another tree is not detected) or
 * -ENOMEM. */
int flame_layout(const struct flame_tree *t, const struct flame_node *zoom, int width,
		 int min_width, struct flame_layout *out);
void flame_layout_fini(struct flame_layout *l);

/* Index of the box showing node, or -1. */
ssize_t flame_layout_find(const struct flame_layout *l, const struct flame_node *node);

enum flame_dir {
	FLAME_UP,    /* to the caller (the row above) */
	FLAME_DOWN,  /* to the widest callee */
	FLAME_LEFT,  /* to the box on the left in the same row */
	FLAME_RIGHT, /* to the box on the right in the same row */
};
/* The box next to box i in direction d; i itself when there is none. */
size_t flame_layout_move(const struct flame_layout *l, size_t i, enum flame_dir d);

#endif /* MEMTOP_FLAME_H */

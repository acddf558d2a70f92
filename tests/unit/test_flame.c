// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_flame.c - flame tree building and layout: totals and merging, the
 * column arithmetic (proportional, nested, never overlapping, at every
 * width), min-width pruning, zoom, keyboard navigation, search totals and
 * matching nodes across refreshes.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ui/flame.h"

/* Frames innermost first, as the model stores them. */
static struct mt_frame fr(const char *fn)
{
	return (struct mt_frame){ .function = fn, .module = "prog" };
}

/* Add a stack given outermost first, which reads like a call chain. */
static void add(struct flame_tree *t, double w, int n, ...)
{
	struct mt_frame f[16];
	va_list ap;

	va_start(ap, n);
	for (int i = 0; i < n; i++)
		f[n - 1 - i] = fr(va_arg(ap, const char *));
	va_end(ap);
	assert_int_equal(flame_tree_add(t, NULL, 0, f, n, w), 0);
}

static const struct flame_node *child(const struct flame_node *n, const char *label)
{
	for (const struct flame_node *c = n->children; c; c = c->next)
		if (strcmp(c->label, label) == 0)
			return c;
	return NULL;
}

/* main -> {serve -> {leak 60, cache 20}, init 15, 5 self in main} */
static struct flame_tree *sample_tree(void)
{
	struct flame_tree *t = flame_tree_new("all");

	assert_non_null(t);
	add(t, 60, 3, "main", "serve", "leak_site");
	add(t, 20, 3, "main", "serve", "cache_put");
	add(t, 15, 2, "main", "init");
	add(t, 5, 1, "main");
	flame_tree_sort(t);
	return t;
}

static void test_totals_and_merge(void **state)
{
	struct flame_tree *t = sample_tree();
	const struct flame_node *root = flame_tree_root(t), *main_, *serve;

	assert_string_equal(root->label, "all");
	assert_true(root->total == 100);
	assert_int_equal(root->nchildren, 1);
	main_ = child(root, "main");
	assert_non_null(main_);
	assert_true(main_->total == 100);
	assert_true(main_->self == 5);
	assert_int_equal(main_->nchildren, 2);
	serve = child(main_, "serve");
	assert_true(serve->total == 80);
	assert_int_equal(serve->depth, 2);
	/* Sorted: largest first. */
	assert_string_equal(main_->children->label, "serve");
	assert_string_equal(serve->children->label, "leak_site");
	assert_string_equal(serve->children->next->label, "cache_put");
	assert_int_equal(flame_tree_depth(t), 3);
	flame_tree_free(t);
}

static void test_bad_weights_ignored(void **state)
{
	struct flame_tree *t = flame_tree_new(NULL);

	add(t, 0, 1, "a");
	add(t, -3, 1, "a");
	add(t, 0.0 / 0.0, 1, "a");
	add(t, 1.0 / 0.0, 1, "a");
	assert_true(flame_tree_root(t)->total == 0);
	assert_null(flame_tree_root(t)->children);
	assert_string_equal(flame_tree_root(t)->label, "all");
	flame_tree_free(t);
}

static void test_prefix_and_labels(void **state)
{
	struct flame_tree *t = flame_tree_new("all");
	const char *prefix[] = { "[truncated]" };
	struct mt_frame f[2] = {
		{ .module = "libfoo.so", .rel_addr = 0x1234 },
		{ .function = NULL, .module = NULL },
	};
	const struct flame_node *p, *u, *m;

	assert_int_equal(flame_tree_add(t, prefix, 1, f, 2, 7), 0);
	p = child(flame_tree_root(t), "[truncated]");
	assert_non_null(p);
	assert_null(p->frame);
	u = child(p, "?+0x0"); /* fmt_frame_name() of a frame with nothing known */
	assert_non_null(u);
	m = child(u, "libfoo.so+0x1234");
	assert_non_null(m);
	assert_true(m->self == 7);
	/* Frames are borrowed: the node points at the caller's frame. */
	assert_ptr_equal(m->frame, &f[0]);
	assert_ptr_equal(u->frame, &f[1]);
	flame_tree_free(t);
}

static const struct flame_box *box_of(const struct flame_layout *l, const char *label)
{
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->box[i].label, label) == 0)
			return &l->box[i];
	return NULL;
}

static void test_layout_proportional(void **state)
{
	struct flame_tree *t = sample_tree();
	struct flame_layout l = { 0 };
	const struct flame_box *b;

	assert_int_equal(flame_layout(t, NULL, 100, 1, &l), 0);
	assert_int_equal(l.rows, 4);
	assert_int_equal(l.n, 6);
	b = box_of(&l, "all");
	assert_int_equal(b->x, 0);
	assert_int_equal(b->width, 100);
	assert_false(b->ancestor);
	b = box_of(&l, "serve");
	assert_int_equal(b->x, 0);
	assert_int_equal(b->width, 80);
	b = box_of(&l, "init");
	assert_int_equal(b->x, 80);
	assert_int_equal(b->width, 15);
	b = box_of(&l, "leak_site");
	assert_int_equal(b->x, 0);
	assert_int_equal(b->width, 60);
	assert_int_equal(b->depth, 3);
	b = box_of(&l, "cache_put");
	assert_int_equal(b->x, 60);
	assert_int_equal(b->width, 20);
	/* Ordered by depth, then x. */
	for (size_t i = 1; i < l.n; i++)
		assert_true(l.box[i - 1].depth < l.box[i].depth ||
			    (l.box[i - 1].depth == l.box[i].depth && l.box[i - 1].x < l.box[i].x));
	flame_layout_fini(&l);
	flame_tree_free(t);
}

static void test_layout_min_width_prunes(void **state)
{
	struct flame_tree *t = sample_tree();
	struct flame_layout l = { 0 };

	/* At 20 columns: serve 16, init 3, leak 12, cache 4. */
	assert_int_equal(flame_layout(t, NULL, 20, 4, &l), 0);
	assert_null(box_of(&l, "init"));
	assert_non_null(box_of(&l, "cache_put"));
	assert_int_equal(box_of(&l, "cache_put")->width, 4);
	assert_int_equal(flame_layout(t, NULL, 20, 5, &l), 0);
	assert_null(box_of(&l, "cache_put"));
	assert_non_null(box_of(&l, "leak_site"));
	/* Pruning a box prunes what is below it. */
	assert_int_equal(flame_layout(t, NULL, 4, 4, &l), 0);
	assert_non_null(box_of(&l, "main"));
	assert_null(box_of(&l, "serve"));
	assert_null(box_of(&l, "leak_site"));
	assert_int_equal(l.rows, 2);
	assert_int_equal(flame_layout(t, NULL, 0, 1, &l), -EINVAL);
	flame_layout_fini(&l);
	flame_tree_free(t);
}

static void test_layout_zoom(void **state)
{
	struct flame_tree *t = sample_tree();
	const struct flame_node *serve = child(child(flame_tree_root(t), "main"), "serve");
	struct flame_layout l = { 0 };
	const struct flame_box *b;

	assert_int_equal(flame_layout(t, serve, 80, 1, &l), 0);
	b = box_of(&l, "all");
	assert_true(b->ancestor);
	assert_int_equal(b->width, 80);
	b = box_of(&l, "main");
	assert_true(b->ancestor);
	assert_int_equal(b->width, 80);
	b = box_of(&l, "serve");
	assert_false(b->ancestor);
	assert_int_equal(b->x, 0);
	assert_int_equal(b->width, 80);
	assert_int_equal(box_of(&l, "leak_site")->width, 60);
	assert_int_equal(box_of(&l, "cache_put")->x, 60);
	assert_int_equal(box_of(&l, "cache_put")->width, 20);
	assert_null(box_of(&l, "init"));
	flame_layout_fini(&l);
	flame_tree_free(t);
}

static void test_navigation(void **state)
{
	struct flame_tree *t = sample_tree();
	struct flame_layout l = { 0 };
	size_t root, m, s, leak, cache, init;

	assert_int_equal(flame_layout(t, NULL, 100, 1, &l), 0);
	root = flame_layout_find(&l, flame_tree_root(t));
	assert_int_equal(root, 0);
	m = flame_layout_move(&l, root, FLAME_DOWN);
	assert_string_equal(l.box[m].label, "main");
	s = flame_layout_move(&l, m, FLAME_DOWN);
	assert_string_equal(l.box[s].label, "serve");
	init = flame_layout_move(&l, s, FLAME_RIGHT);
	assert_string_equal(l.box[init].label, "init");
	assert_int_equal(flame_layout_move(&l, init, FLAME_RIGHT), init);
	assert_int_equal(flame_layout_move(&l, init, FLAME_LEFT), s);
	assert_int_equal(flame_layout_move(&l, s, FLAME_LEFT), s);
	/* A leaf has nowhere to go down. */
	assert_int_equal(flame_layout_move(&l, init, FLAME_DOWN), init);
	leak = flame_layout_move(&l, s, FLAME_DOWN);
	assert_string_equal(l.box[leak].label, "leak_site");
	cache = flame_layout_move(&l, leak, FLAME_RIGHT);
	assert_string_equal(l.box[cache].label, "cache_put");
	assert_int_equal(flame_layout_move(&l, cache, FLAME_UP), s);
	assert_int_equal(flame_layout_move(&l, root, FLAME_UP), root);
	assert_int_equal(flame_layout_find(&l, NULL), -1);
	flame_layout_fini(&l);
	flame_tree_free(t);
}

static void test_match(void **state)
{
	struct flame_tree *t = flame_tree_new("all");
	const struct flame_node *root;

	/* Recursion: parse -> parse_expr -> parse must count 10 once. */
	add(t, 10, 3, "parse", "parse_expr", "parse");
	add(t, 5, 2, "main", "Parser_new");
	add(t, 7, 2, "main", "other");
	flame_tree_sort(t);
	root = flame_tree_root(t);
	assert_true(flame_match_total(root, "PARSE") == 15);
	assert_true(flame_match_total(root, "parse_expr") == 10);
	assert_true(flame_match_total(root, "nothing") == 0);
	assert_true(flame_match_total(root, "") == 0);
	assert_true(flame_match_total(root, NULL) == 0);
	assert_true(flame_node_matches(child(root, "main"), "AI"));
	assert_false(flame_node_matches(child(root, "main"), "xyz"));
	flame_tree_free(t);
}

static void test_tree_match_across_refresh(void **state)
{
	struct flame_tree *a = sample_tree(), *b = flame_tree_new("all");
	const struct flame_node *leak_a, *m;

	add(b, 3, 3, "main", "serve", "leak_site");
	add(b, 9, 2, "main", "init");
	flame_tree_sort(b);
	leak_a = child(child(child(flame_tree_root(a), "main"), "serve"), "leak_site");
	m = flame_tree_match(b, leak_a);
	assert_string_equal(m->label, "leak_site");
	assert_true(m->total == 3);
	/* Gone from b: the deepest ancestor that exists. */
	m = flame_tree_match(b,
			     child(child(child(flame_tree_root(a), "main"), "serve"), "cache_put"));
	assert_string_equal(m->label, "serve");
	assert_ptr_equal(flame_tree_match(b, flame_tree_root(a)), flame_tree_root(b));
	assert_ptr_equal(flame_tree_match(b, NULL), flame_tree_root(b));
	flame_tree_free(a);
	flame_tree_free(b);
}

/* Invariants on random trees at every width: boxes lie within their
 * parent's columns, rows never overlap, widths respect min_width. */
static void test_layout_invariants_random(void **state)
{
	static const char *names[] = { "a", "b", "c", "d", "e", "f", "g", "h" };
	struct flame_layout l = { 0 };
	unsigned seed = 12345;

	for (int round = 0; round < 20; round++) {
		struct flame_tree *t = flame_tree_new("all");

		for (int s = 0; s < 200; s++) {
			struct mt_frame f[10];
			int n = 1 + rand_r(&seed) % 10;

			for (int i = 0; i < n; i++)
				f[i] = fr(names[rand_r(&seed) % 8]);
			assert_int_equal(flame_tree_add(t, NULL, 0, f, n, 1 + rand_r(&seed) % 1000),
					 0);
		}
		flame_tree_sort(t);
		for (int width = 1; width <= 220; width += 7) {
			int minw = 1 + round % 3;

			assert_int_equal(flame_layout(t, NULL, width, minw, &l), 0);
			for (size_t i = 0; i < l.n; i++) {
				const struct flame_box *b = &l.box[i];
				ssize_t p;

				assert_true(b->width >= minw || b->depth == 0);
				assert_true(b->x >= 0 && b->x + b->width <= width);
				if (i + 1 < l.n && l.box[i + 1].depth == b->depth)
					assert_true(b->x + b->width <= l.box[i + 1].x);
				if (!b->node->parent)
					continue;
				p = flame_layout_find(&l, b->node->parent);
				assert_true(p >= 0);
				assert_true(l.box[p].x <= b->x);
				assert_true(b->x + b->width <= l.box[p].x + l.box[p].width);
			}
		}
		flame_tree_free(t);
	}
	flame_layout_fini(&l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_totals_and_merge),
		cmocka_unit_test(test_bad_weights_ignored),
		cmocka_unit_test(test_prefix_and_labels),
		cmocka_unit_test(test_layout_proportional),
		cmocka_unit_test(test_layout_min_width_prunes),
		cmocka_unit_test(test_layout_zoom),
		cmocka_unit_test(test_navigation),
		cmocka_unit_test(test_match),
		cmocka_unit_test(test_tree_match_across_refresh),
		cmocka_unit_test(test_layout_invariants_random),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

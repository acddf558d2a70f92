// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_hmap.c - the open-addressing map under insert/delete churn,
 * colliding hashes and wrap-around clusters, checked against a plain array.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <cmocka.h>

#include "util/hmap.h"

struct item {
	__u64 key;
};

static bool item_eq(const void *val, const void *key)
{
	return ((const struct item *)val)->key == *(const __u64 *)key;
}

/* A deliberately weak hash: many collisions and long clusters. */
static __u64 weak_hash(__u64 key)
{
	return key % 61;
}

static void test_basic(void **state)
{
	struct hmap m;
	struct item a = { 1 }, b = { 2 };
	__u64 k;

	hmap_init(&m);
	k = 1;
	assert_null(hmap_get(&m, hmap_mix(0, 1), item_eq, &k));
	assert_int_equal(hmap_put(&m, hmap_mix(0, 1), &a), 0);
	assert_int_equal(hmap_put(&m, hmap_mix(0, 2), &b), 0);
	assert_ptr_equal(hmap_get(&m, hmap_mix(0, 1), item_eq, &k), &a);
	k = 2;
	assert_ptr_equal(hmap_del(&m, hmap_mix(0, 2), item_eq, &k), &b);
	assert_null(hmap_get(&m, hmap_mix(0, 2), item_eq, &k));
	assert_null(hmap_del(&m, hmap_mix(0, 2), item_eq, &k));
	assert_int_equal(m.len, 1);
	hmap_fini(&m);
}

static void test_churn_against_reference(void **state)
{
	enum { N = 4000 };
	static struct item items[N];
	static bool present[N];
	struct hmap m;
	unsigned int seed = 42;
	int step, i;

	hmap_init(&m);
	for (i = 0; i < N; i++)
		items[i].key = i;
	for (step = 0; step < 200000; step++) {
		__u64 k = rand_r(&seed) % N;

		if (present[k]) {
			assert_ptr_equal(hmap_del(&m, weak_hash(k), item_eq, &k), &items[k]);
			present[k] = false;
		} else {
			assert_null(hmap_get(&m, weak_hash(k), item_eq, &k));
			assert_int_equal(hmap_put(&m, weak_hash(k), &items[k]), 0);
			present[k] = true;
		}
		if (step % 10007 == 0) {
			size_t n = 0;

			for (i = 0; i < N; i++) {
				__u64 kk = i;
				void *v = hmap_get(&m, weak_hash(kk), item_eq, &kk);

				assert_true(present[i] ? v == &items[i] : v == NULL);
				n += present[i];
			}
			assert_int_equal(m.len, n);
		}
	}
	hmap_fini(&m);
}

/* hmap_next visits every value once, whatever the table's size. */
static void test_next_visits_each_once(void **state)
{
	enum { N = 1000 };
	static struct item items[N];
	int seen[N] = { 0 };
	struct hmap m;
	struct item *it;
	size_t pos = 0, n = 0;
	int i;

	hmap_init(&m);
	assert_null(hmap_next(&m, &pos));
	for (i = 0; i < N; i++) {
		items[i].key = i;
		assert_int_equal(hmap_put(&m, weak_hash(i), &items[i]), 0);
	}
	for (i = 0; i < N; i += 3) {
		__u64 k = i;

		assert_ptr_equal(hmap_del(&m, weak_hash(k), item_eq, &k), &items[i]);
	}
	pos = 0;
	while ((it = hmap_next(&m, &pos))) {
		seen[it->key]++;
		n++;
	}
	assert_int_equal(n, m.len);
	for (i = 0; i < N; i++)
		assert_int_equal(seen[i], i % 3 ? 1 : 0);
	hmap_fini(&m);
}

/* Deleting the value just returned and stepping back misses none. */
static void test_delete_while_walking(void **state)
{
	enum { N = 3000 };
	static struct item items[N];
	int seen[N] = { 0 };
	struct hmap m;
	struct item *it;
	size_t pos = 0;
	int i;

	hmap_init(&m);
	for (i = 0; i < N; i++) {
		items[i].key = i;
		assert_int_equal(hmap_put(&m, weak_hash(i), &items[i]), 0);
	}
	while ((it = hmap_next(&m, &pos))) {
		__u64 k = it->key;

		seen[k]++;
		if (k % 2 == 0) {
			assert_ptr_equal(hmap_del(&m, weak_hash(k), item_eq, &k), it);
			pos--;
		}
	}
	for (i = 0; i < N; i++) {
		__u64 k = i;

		assert_true(seen[i] >= 1);
		assert_true(i % 2 ? hmap_get(&m, weak_hash(k), item_eq, &k) == &items[i]
				  : hmap_get(&m, weak_hash(k), item_eq, &k) == NULL);
	}
	assert_int_equal(m.len, N / 2);
	hmap_fini(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_basic),
		cmocka_unit_test(test_churn_against_reference),
		cmocka_unit_test(test_next_visits_each_once),
		cmocka_unit_test(test_delete_while_walking),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

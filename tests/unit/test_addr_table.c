// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_addr_table.c - the samplers' set of sampled addresses
 * (src/sampler/addr_table.h): insert, contains and remove agree through
 * tombstones and collisions, the filter and the live count follow, and a
 * full neighbourhood drops (counted); the handover's attach cookie
 * (include/memtop/abi.h, MT_COOKIE_RA) carries where the return address
 * is and nothing else changes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>
#include <linux/types.h>

#include "memtop/abi.h"
#include "sampler/addr_table.h"

static __u64 table[MT_INJECT_TABLE_SLOTS];
static unsigned short filter[MT_INJECT_FILTER_SLOTS];
static __u64 live, dropped;

static int setup(void **state)
{
	(void)state;
	memset(table, 0, sizeof(table));
	memset(filter, 0, sizeof(filter));
	live = dropped = 0;
	return 0;
}

static void test_insert_contains_remove(void **state)
{
	__u64 a = 0x7f0000001000, b = 0x7f0000002010;

	(void)state;
	assert_false(addr_table_contains(table, filter, a));
	assert_true(addr_table_insert(table, filter, &live, &dropped, a));
	assert_true(addr_table_insert(table, filter, &live, &dropped, b));
	assert_int_equal(live, 2);
	assert_true(addr_table_contains(table, filter, a));
	assert_true(addr_table_contains(table, filter, b));
	assert_int_equal(live, 2); /* contains takes nothing out */
	assert_true(addr_table_remove(table, filter, &live, a));
	assert_false(addr_table_contains(table, filter, a));
	assert_false(addr_table_remove(table, filter, &live, a));
	assert_true(addr_table_contains(table, filter, b));
	assert_int_equal(live, 1);
	assert_false(addr_table_maybe(filter, a) && addr_table_contains(table, filter, a));
}

/* Keys with the same home slot: found past each other and past the
 * tombstone one leaves, which a later insert reuses. */
static void test_collisions_and_tombstones(void **state)
{
	__u64 keys[8], home;
	int n = 0;
	__u64 k;

	(void)state;
	home = addr_table_home(0x10000);
	for (k = 0x10000; n < 8; k += 16)
		if (addr_table_home(k) == home)
			keys[n++] = k;
	for (n = 0; n < 8; n++)
		assert_true(addr_table_insert(table, filter, &live, &dropped, keys[n]));
	assert_true(addr_table_remove(table, filter, &live, keys[2]));
	for (n = 0; n < 8; n++)
		assert_int_equal(addr_table_contains(table, filter, keys[n]), n != 2);
	assert_true(addr_table_insert(table, filter, &live, &dropped, keys[2]));
	for (n = 0; n < 8; n++)
		assert_true(addr_table_contains(table, filter, keys[n]));
	assert_int_equal(live, 8);
	assert_int_equal(dropped, 0);
}

/* More keys on one home than a probe walks: the next is dropped, counted. */
static void test_full_neighbourhood_drops(void **state)
{
	__u64 home = addr_table_home(0x20000), k;
	int n = 0;

	(void)state;
	for (k = 0x20000; n < ADDR_MAX_PROBE; k += 16)
		if (addr_table_home(k) == home) {
			assert_true(addr_table_insert(table, filter, &live, &dropped, k));
			n++;
		}
	for (;; k += 16)
		if (addr_table_home(k) == home)
			break;
	assert_false(addr_table_insert(table, filter, &live, &dropped, k));
	assert_false(addr_table_contains(table, filter, k));
	assert_int_equal(dropped, 1);
}

static void test_cookie_return_address(void **state)
{
	__u64 c;

	(void)state;
	c = MT_COOKIE(MT_FN_FREE, MT_PF_FREE_DEDUPE) | MT_COOKIE_RA(0);
	assert_int_equal(MT_COOKIE_FN(c), MT_FN_FREE);
	assert_int_equal(MT_COOKIE_FLAGS(c), MT_PF_FREE_DEDUPE);
	assert_int_equal(MT_COOKIE_RA_AT(c), 1); /* on top of the stack */
	assert_int_equal(MT_COOKIE_RA_AT(MT_COOKIE(MT_FN_MALLOC, 0) | MT_COOKIE_RA(16)), 3);
	assert_int_equal(MT_COOKIE_RA_AT(MT_COOKIE_RA(-1)), 0); /* unknown */
	assert_int_equal(MT_COOKIE_RA_AT(MT_COOKIE_RA(4)), 0);  /* not a word */
	assert_int_equal(MT_COOKIE_RA_AT(MT_COOKIE_RA(8 * 300)), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_insert_contains_remove, setup),
		cmocka_unit_test_setup(test_collisions_and_tombstones, setup),
		cmocka_unit_test_setup(test_full_neighbourhood_drops, setup),
		cmocka_unit_test(test_cookie_return_address),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

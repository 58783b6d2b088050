/*
 * The internal hash table with an LRU list (libosd/lru/lru.c) behind the
 * osdfs block and inode caches and the target's capability key cache:
 * lookups (colliding hashes included), recency order, pinning, removal,
 * iteration.
 */
#include <check.h>
#include <stdlib.h>

#include "lru/lru.h"

struct item {
	int key;
	struct osd__lru_node node;
};

static int eq(const struct osd__lru_node *n, const void *key)
{
	return OSD__LRU_ENTRY(n, struct item, node)->key == *(const int *)key;
}

static struct item *find(struct osd__lru *l, int key, uint64_t hash)
{
	struct osd__lru_node *n = osd__lru_find(l, hash, eq, &key);

	return n ? OSD__LRU_ENTRY(n, struct item, node) : NULL;
}

static int oldest_key(struct osd__lru *l)
{
	struct osd__lru_node *n = osd__lru_oldest(l);

	return n ? OSD__LRU_ENTRY(n, struct item, node)->key : -1;
}

static void count_one(struct osd__lru_node *n, void *arg)
{
	(void)n;
	(*(int *)arg)++;
}

START_TEST(order_pin_remove)
{
	struct osd__lru l;
	struct item it[8];
	int seen = 0;

	ck_assert_int_eq(osd__lru_init(&l, 4), 0);
	ck_assert_uint_eq(l.mask + 1, 16);
	/* all in one hash: the key comparison tells them apart */
	for (int i = 0; i < 8; i++) {
		it[i].key = i;
		osd__lru_insert(&l, &it[i].node, i < 4 ? 7 : (uint64_t)i, 0);
	}
	ck_assert_uint_eq(l.count, 8);
	for (int i = 0; i < 8; i++)
		ck_assert_ptr_eq(find(&l, i, i < 4 ? 7 : (uint64_t)i), &it[i]);
	ck_assert_ptr_null(find(&l, 9, 7));
	ck_assert_ptr_null(find(&l, 2, 2)); /* right key, wrong hash */
	ck_assert_int_eq(oldest_key(&l), 0);
	osd__lru_touch(&l, &it[0].node);
	ck_assert_int_eq(oldest_key(&l), 1);
	osd__lru_pin(&l, &it[1].node);
	ck_assert_int_eq(oldest_key(&l), 2);
	ck_assert_ptr_eq(find(&l, 1, 7), &it[1]); /* pinned: still found */
	osd__lru_remove(&l, &it[2].node);
	ck_assert_ptr_null(find(&l, 2, 7));
	ck_assert_uint_eq(l.count, 7);
	ck_assert_int_eq(oldest_key(&l), 3);
	osd__lru_touch(&l, &it[1].node); /* unpinned, most recent */
	osd__lru_foreach(&l, count_one, &seen);
	ck_assert_int_eq(seen, 7);
	/* order from oldest: 3 4 5 6 7 0 1 */
	static const int want[] = { 3, 4, 5, 6, 7, 0, 1 };
	for (size_t i = 0; i < 7; i++) {
		ck_assert_int_eq(oldest_key(&l), want[i]);
		osd__lru_remove(&l, osd__lru_oldest(&l));
	}
	ck_assert_ptr_null(osd__lru_oldest(&l));
	ck_assert_ptr_null(osd__lru_any(&l));
	ck_assert_uint_eq(l.count, 0);
	osd__lru_destroy(&l);
}
END_TEST

START_TEST(pinned_only_found_by_any)
{
	struct osd__lru l;
	struct item a = { .key = 1 }, b = { .key = 2 };

	ck_assert_int_eq(osd__lru_init(&l, 0), 0);
	osd__lru_insert(&l, &a.node, 1, 1);
	osd__lru_insert(&l, &b.node, 2, 1);
	ck_assert_ptr_null(osd__lru_oldest(&l));
	for (int i = 0; i < 2; i++) {
		struct osd__lru_node *n = osd__lru_any(&l);

		ck_assert_ptr_nonnull(n);
		osd__lru_remove(&l, n);
	}
	ck_assert_ptr_null(osd__lru_any(&l));
	osd__lru_destroy(&l);
}
END_TEST

START_TEST(many)
{
	enum { N = 5000 };
	struct osd__lru l;
	struct item *it = calloc(N, sizeof(*it));

	ck_assert_ptr_nonnull(it);
	ck_assert_int_eq(osd__lru_init(&l, 0), 0); /* 16 buckets: it has to grow */
	for (int i = 0; i < N; i++) {
		it[i].key = i;
		osd__lru_insert(&l, &it[i].node, (uint64_t)i * 3, 0);
	}
	ck_assert_uint_ge(l.mask + 1, N / 2);
	for (int i = 0; i < N; i += 2)
		osd__lru_remove(&l, &it[i].node);
	for (int i = 0; i < N; i++)
		ck_assert_ptr_eq(find(&l, i, (uint64_t)i * 3), i % 2 ? &it[i] : NULL);
	ck_assert_int_eq(oldest_key(&l), 1);
	osd__lru_destroy(&l);
	free(it);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("lru");
	TCase *tc = tcase_create("lru");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, order_pin_remove);
	tcase_add_test(tc, pinned_only_found_by_any);
	tcase_add_test(tc, many);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

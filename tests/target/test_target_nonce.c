/*
 * The target's bounded nonce cache (osdtarget/security/nonce_cache.c, one
 * libosd osd_nonce_cache per partition): window, replay, eviction raising
 * the floor, restart floor, depth changes, many partitions.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "proto/byteorder.h"
#include "security/nonce_cache.h"

#define NOW 1000000000ULL
#define OLDEST 60000
#define NEWEST 10000

static void nonce(uint8_t n[OSD_NONCE_LEN], uint64_t t, uint8_t tag)
{
	osd__put_be48(n, t);
	memset(n + 6, tag, 6);
}

static enum osd__nonce_verdict check(struct osd__nonce_cache *c, uint64_t part, uint64_t t,
				     uint8_t tag, size_t depth)
{
	uint8_t n[OSD_NONCE_LEN];

	nonce(n, t, tag);
	return osd__nonce_check(c, part, n, NOW, OLDEST, NEWEST, depth);
}

START_TEST(window_and_replay)
{
	struct osd__nonce_cache c;

	ck_assert_int_eq(osd__nonce_cache_init(&c, NOW - 100000), 0);
	ck_assert_int_eq(check(&c, 1, NOW, 1, 8), OSD__NONCE_OK);
	ck_assert_int_eq(check(&c, 1, NOW, 1, 8), OSD__NONCE_REPLAY);
	ck_assert_int_eq(check(&c, 2, NOW, 1, 8), OSD__NONCE_OK); /* per partition */
	ck_assert_int_eq(check(&c, 1, NOW, 2, 8), OSD__NONCE_OK);
	ck_assert_int_eq(check(&c, 1, NOW - OLDEST, 3, 8), OSD__NONCE_OK);
	ck_assert_int_eq(check(&c, 1, NOW - OLDEST - 1, 4, 8), OSD__NONCE_STALE);
	ck_assert_int_eq(check(&c, 1, NOW + NEWEST, 5, 8), OSD__NONCE_OK);
	ck_assert_int_eq(check(&c, 1, NOW + NEWEST + 1, 6, 8), OSD__NONCE_STALE);
	osd__nonce_cache_destroy(&c);
}
END_TEST

START_TEST(eviction_keeps_replays_out)
{
	struct osd__nonce_cache c;

	ck_assert_int_eq(osd__nonce_cache_init(&c, NOW - 100000), 0);
	ck_assert_int_eq(check(&c, 1, NOW - 30, 1, 2), OSD__NONCE_OK);
	ck_assert_int_eq(check(&c, 1, NOW - 20, 2, 2), OSD__NONCE_OK);
	/* Full: the oldest (NOW - 30) is evicted and becomes the floor. */
	ck_assert_int_eq(check(&c, 1, NOW - 10, 3, 2), OSD__NONCE_OK);
	ck_assert_int_eq(check(&c, 1, NOW - 30, 1, 2), OSD__NONCE_STALE);
	ck_assert_int_eq(check(&c, 1, NOW - 31, 9, 2), OSD__NONCE_STALE);
	ck_assert_int_eq(check(&c, 1, NOW - 20, 2, 2), OSD__NONCE_REPLAY);
	/* Older than all a full list holds: refused, never remembered below
	 * the floor its eviction would raise. */
	ck_assert_int_eq(check(&c, 1, NOW - 29, 8, 2), OSD__NONCE_STALE);
	ck_assert_int_eq(check(&c, 1, NOW - 5, 8, 2), OSD__NONCE_OK);
	/* Shrinking the depth evicts the oldest too. */
	ck_assert_int_eq(check(&c, 1, NOW, 7, 1), OSD__NONCE_OK);
	ck_assert_int_eq(check(&c, 1, NOW - 10, 3, 1), OSD__NONCE_STALE);
	osd__nonce_cache_destroy(&c);
}
END_TEST

START_TEST(restart_floor)
{
	struct osd__nonce_cache c;

	ck_assert_int_eq(osd__nonce_cache_init(&c, NOW - 5), 0);
	ck_assert_int_eq(check(&c, 1, NOW - 6, 1, 8), OSD__NONCE_STALE);
	ck_assert_int_eq(check(&c, 1, NOW - 5, 1, 8), OSD__NONCE_OK);
	osd__nonce_cache_destroy(&c);
}
END_TEST

START_TEST(many_partitions)
{
	struct osd__nonce_cache c;

	ck_assert_int_eq(osd__nonce_cache_init(&c, NOW - 100000), 0);
	/* More partitions than remembered: dropped lists raise a global floor. */
	for (uint64_t p = 0; p < 1000; p++)
		ck_assert_int_eq(check(&c, p, NOW - 2000 + p, (uint8_t)p, 4), OSD__NONCE_OK);
	/* Partition 0's list was dropped: its nonce must still not replay. */
	ck_assert_int_ne(check(&c, 0, NOW - 2000, 0, 4), OSD__NONCE_OK);
	ck_assert_int_eq(check(&c, 0, NOW, 0, 4), OSD__NONCE_OK);
	osd__nonce_cache_destroy(&c);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("target_nonce");
	TCase *tc = tcase_create("nonce");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, window_and_replay);
	tcase_add_test(tc, eviction_keeps_replays_out);
	tcase_add_test(tc, restart_floor);
	tcase_add_test(tc, many_partitions);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

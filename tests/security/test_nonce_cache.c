/* The nonce replay cache (one per partition in the target): window,
 * uniqueness, bounded memory, horizon. */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <osd/security.h>

#define O_MS 60000 /* oldest valid nonce limit */
#define N_MS 10000 /* newest valid nonce limit */
#define NOW 1000000

/* A nonce with timestamp @t and a 6-byte tag @tag (big-endian). */
static void mk(uint8_t n[OSD_NONCE_LEN], uint64_t t, uint64_t tag)
{
	int i;

	for (i = 0; i < 6; i++) {
		n[5 - i] = (uint8_t)(t >> (8 * i));
		n[11 - i] = (uint8_t)(tag >> (8 * i));
	}
}

START_TEST(test_fresh_and_replay)
{
	osd_nonce_cache *c;
	uint8_t n[OSD_NONCE_LEN];

	ck_assert_int_eq(osd_nonce_cache_new(&c, 16, 0), 0);
	mk(n, NOW, 1);
	ck_assert_int_eq(osd_nonce_cache_check(c, n, NOW, O_MS, N_MS), 0);
	ck_assert_int_eq(osd_nonce_cache_check(c, n, NOW, O_MS, N_MS), -EEXIST);
	ck_assert_int_eq(osd_nonce_cache_check(c, n, NOW + 5, O_MS, N_MS), -EEXIST);
	/* same random part, other time: another nonce */
	mk(n, NOW + 1, 1);
	ck_assert_int_eq(osd_nonce_cache_check(c, n, NOW, O_MS, N_MS), 0);
	osd_nonce_cache_free(c);
}
END_TEST

START_TEST(test_window_edges)
{
	osd_nonce_cache *c;
	uint8_t n[OSD_NONCE_LEN];

	ck_assert_int_eq(osd_nonce_cache_new(&c, 16, 0), 0);
	mk(n, NOW - O_MS, 1);
	ck_assert_int_eq(osd_nonce_cache_check(c, n, NOW, O_MS, N_MS), 0);
	mk(n, NOW - O_MS - 1, 2);
	ck_assert_int_eq(osd_nonce_cache_check(c, n, NOW, O_MS, N_MS), -ERANGE);
	mk(n, NOW + N_MS, 3);
	ck_assert_int_eq(osd_nonce_cache_check(c, n, NOW, O_MS, N_MS), 0);
	mk(n, NOW + N_MS + 1, 4);
	ck_assert_int_eq(osd_nonce_cache_check(c, n, NOW, O_MS, N_MS), -ERANGE);
	/* a window reaching before the epoch does not wrap */
	mk(n, 5, 5);
	ck_assert_int_eq(osd_nonce_cache_check(c, n, 10, O_MS, N_MS), 0);
	osd_nonce_cache_free(c);
}
END_TEST

/* Nonces from before a restart are refused even inside the window. */
START_TEST(test_start_floor)
{
	osd_nonce_cache *c;
	uint8_t n[OSD_NONCE_LEN];

	ck_assert_int_eq(osd_nonce_cache_new(&c, 16, NOW), 0);
	mk(n, NOW - 1, 1);
	ck_assert_int_eq(osd_nonce_cache_check(c, n, NOW + 1, O_MS, N_MS), -ERANGE);
	mk(n, NOW, 2);
	ck_assert_int_eq(osd_nonce_cache_check(c, n, NOW + 1, O_MS, N_MS), -ERANGE);
	mk(n, NOW + 1, 3);
	ck_assert_int_eq(osd_nonce_cache_check(c, n, NOW + 1, O_MS, N_MS), 0);
	osd_nonce_cache_free(c);
}
END_TEST

START_TEST(test_full_cache_raises_floor)
{
	osd_nonce_cache *c;
	uint8_t n[OSD_NONCE_LEN];
	uint64_t t;

	ck_assert_int_eq(osd_nonce_cache_new(&c, 4, 0), 0);
	for (t = 1; t <= 4; t++) {
		mk(n, NOW + t, t);
		ck_assert_int_eq(osd_nonce_cache_check(c, n, NOW, O_MS, N_MS), 0);
	}
	/* older than everything remembered: it would be evicted first, refused */
	mk(n, NOW, 99);
	ck_assert_int_eq(osd_nonce_cache_check(c, n, NOW, O_MS, N_MS), -ERANGE);
	/* a newer one evicts NOW+1 and the floor becomes NOW+1 */
	mk(n, NOW + 5, 5);
	ck_assert_int_eq(osd_nonce_cache_check(c, n, NOW, O_MS, N_MS), 0);
	mk(n, NOW + 1, 1); /* the evicted nonce: refused, not forgotten */
	ck_assert_int_eq(osd_nonce_cache_check(c, n, NOW, O_MS, N_MS), -ERANGE);
	mk(n, NOW + 1, 77); /* anything at that time now is */
	ck_assert_int_eq(osd_nonce_cache_check(c, n, NOW, O_MS, N_MS), -ERANGE);
	mk(n, NOW + 2, 2); /* still remembered */
	ck_assert_int_eq(osd_nonce_cache_check(c, n, NOW, O_MS, N_MS), -EEXIST);
	osd_nonce_cache_free(c);
}
END_TEST

/* Aged-out entries stay refused even if the clock or the window moves back. */
/* A burst within one millisecond fills a small cache: the first newcomer
 * stamped like the oldest still gets in (evicting one, the floor rises to
 * that stamp); after that the stamp is at the floor, and nothing evicted
 * comes back. */
START_TEST(test_same_stamp_burst)
{
	osd_nonce_cache *c;
	uint8_t n[OSD_NONCE_LEN];

	ck_assert_int_eq(osd_nonce_cache_new(&c, 2, 0), 0);
	for (uint64_t tag = 1; tag <= 3; tag++) {
		mk(n, NOW + 1, tag);
		ck_assert_int_eq(osd_nonce_cache_check(c, n, NOW, O_MS, N_MS), 0);
	}
	mk(n, NOW + 1, 4); /* the floor is NOW + 1 now */
	ck_assert_int_eq(osd_nonce_cache_check(c, n, NOW, O_MS, N_MS), -ERANGE);
	for (uint64_t tag = 1; tag <= 3; tag++) { /* replays: all refused */
		mk(n, NOW + 1, tag);
		ck_assert_int_ne(osd_nonce_cache_check(c, n, NOW, O_MS, N_MS), 0);
	}
	mk(n, NOW + 2, 6);
	ck_assert_int_eq(osd_nonce_cache_check(c, n, NOW, O_MS, N_MS), 0);
	osd_nonce_cache_free(c);
}
END_TEST

START_TEST(test_aged_out_stays_refused)
{
	osd_nonce_cache *c;
	uint8_t a[OSD_NONCE_LEN], b[OSD_NONCE_LEN];

	ck_assert_int_eq(osd_nonce_cache_new(&c, 8, 0), 0);
	mk(a, NOW, 1);
	ck_assert_int_eq(osd_nonce_cache_check(c, a, NOW, O_MS, N_MS), 0);
	/* much later: a ages out when b is checked */
	mk(b, NOW + O_MS + 10, 2);
	ck_assert_int_eq(osd_nonce_cache_check(c, b, NOW + O_MS + 10, O_MS, N_MS), 0);
	/* clock stepped back to NOW: a is inside the window again, yet refused */
	ck_assert_int_eq(osd_nonce_cache_check(c, a, NOW, O_MS, N_MS), -ERANGE);
	/* a wider window does not resurrect it either */
	ck_assert_int_eq(osd_nonce_cache_check(c, a, NOW + O_MS + 10, 10 * O_MS, N_MS), -ERANGE);
	osd_nonce_cache_free(c);
}
END_TEST

/*
 * Long pseudo-random run with a small cache, evictions, ageing and many
 * repeats: no nonce is ever accepted twice, and the cache keeps accepting.
 */
START_TEST(test_never_accepted_twice)
{
	enum { DEPTH = 32, STEPS = 60000, TAGS = 64, BACK = 200 };
	/* one bit per (timestamp, tag) ever accepted; timestamps span at most
	 * BACK + STEPS ms from NOW - BACK */
	size_t nbits = (size_t)(BACK + STEPS + 1) * TAGS;
	uint8_t *accepted = calloc(nbits / 8 + 1, 1);
	osd_nonce_cache *c;
	uint64_t now = NOW, x = 12345;
	size_t naccepted = 0;
	int s;

	ck_assert_ptr_nonnull(accepted);
	ck_assert_int_eq(osd_nonce_cache_new(&c, DEPTH, 0), 0);
	for (s = 0; s < STEPS; s++) {
		uint8_t n[OSD_NONCE_LEN];
		uint64_t t, tag;
		size_t bit;
		int rc;

		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		now += (x >> 60) & 1; /* the clock creeps forward */
		/* timestamps near now, tags from a small set: lots of repeats */
		t = now - (x >> 20) % BACK;
		tag = (x >> 40) % TAGS;
		mk(n, t, tag);
		rc = osd_nonce_cache_check(c, n, now, 150, 20);
		bit = (size_t)(t - (NOW - BACK)) * TAGS + tag;
		if (rc == 0) {
			ck_assert_msg(!(accepted[bit / 8] & (1u << (bit % 8))),
				      "nonce accepted twice at step %d", s);
			accepted[bit / 8] |= (uint8_t)(1u << (bit % 8));
			naccepted++;
		} else {
			ck_assert(rc == -EEXIST || rc == -ERANGE);
		}
	}
	ck_assert_uint_gt(naccepted, 1000); /* the cache did accept plenty */
	free(accepted);
	osd_nonce_cache_free(c);
}
END_TEST

#define THREADS 4
#define PER_THREAD 5000

struct worker {
	osd_nonce_cache *c;
	int index;
	int accepted;
};

/* Threads submit overlapping nonce sets; each nonce must win exactly once. */
static void *worker_main(void *arg)
{
	struct worker *w = arg;
	uint8_t n[OSD_NONCE_LEN];
	int i;

	for (i = 0; i < PER_THREAD; i++) {
		/* half the tags are shared by all threads, half are private */
		uint64_t tag = (i % 2) ? (uint64_t)i : (uint64_t)(w->index + 1) << 32 | (uint64_t)i;

		mk(n, NOW, tag);
		if (osd_nonce_cache_check(w->c, n, NOW, O_MS, N_MS) == 0)
			w->accepted++;
	}
	return NULL;
}

START_TEST(test_threads)
{
	osd_nonce_cache *c;
	struct worker w[THREADS];
	pthread_t t[THREADS];
	int i, total = 0;

	ck_assert_int_eq(osd_nonce_cache_new(&c, THREADS * PER_THREAD, 0), 0);
	for (i = 0; i < THREADS; i++) {
		w[i] = (struct worker){ c, i, 0 };
		ck_assert_int_eq(pthread_create(&t[i], NULL, worker_main, &w[i]), 0);
	}
	for (i = 0; i < THREADS; i++) {
		ck_assert_int_eq(pthread_join(t[i], NULL), 0);
		total += w[i].accepted;
	}
	/* PER_THREAD/2 private per thread + PER_THREAD/2 shared ones, once each */
	ck_assert_int_eq(total, THREADS * (PER_THREAD / 2) + PER_THREAD / 2);
	osd_nonce_cache_free(c);
}
END_TEST

/* The horizon: the newest remembered timestamp, never below the floor; a
 * cache started from it refuses everything the first one remembered. */
START_TEST(test_horizon)
{
	osd_nonce_cache *c, *next;
	uint8_t n[OSD_NONCE_LEN];
	static const uint64_t ts[] = { NOW - 50, NOW + 70, NOW - 10, NOW + 20, NOW };

	ck_assert_int_eq(osd_nonce_cache_new(&c, 8, NOW - 100), 0);
	ck_assert_uint_eq(osd_nonce_cache_horizon(c), NOW - 100);
	for (size_t i = 0; i < sizeof(ts) / sizeof(ts[0]); i++) {
		mk(n, ts[i], i);
		ck_assert_int_eq(osd_nonce_cache_check(c, n, NOW, O_MS, N_MS), 0);
	}
	ck_assert_uint_eq(osd_nonce_cache_horizon(c), NOW + 70);
	ck_assert_int_eq(osd_nonce_cache_new(&next, 8, osd_nonce_cache_horizon(c)), 0);
	for (size_t i = 0; i < sizeof(ts) / sizeof(ts[0]); i++) {
		mk(n, ts[i], i);
		ck_assert_int_eq(osd_nonce_cache_check(next, n, NOW, O_MS, N_MS), -ERANGE);
	}
	mk(n, NOW + 71, 9);
	ck_assert_int_eq(osd_nonce_cache_check(next, n, NOW, O_MS, N_MS), 0);
	osd_nonce_cache_free(next);
	osd_nonce_cache_free(c);
}
END_TEST

START_TEST(test_bad_arguments)
{
	osd_nonce_cache *c = (osd_nonce_cache *)&c;
	uint8_t n[OSD_NONCE_LEN] = { 0 };

	ck_assert_int_eq(osd_nonce_cache_new(&c, 0, 0), -EINVAL);
	ck_assert_ptr_null(c);
	ck_assert_int_eq(osd_nonce_cache_new(NULL, 4, 0), -EINVAL);
	ck_assert_int_eq(osd_nonce_cache_check(NULL, n, NOW, O_MS, N_MS), -EINVAL);
	ck_assert_int_eq(osd_nonce_cache_new(&c, 1, 0), 0);
	ck_assert_int_eq(osd_nonce_cache_check(c, NULL, NOW, O_MS, N_MS), -EINVAL);
	osd_nonce_cache_free(c);
	osd_nonce_cache_free(NULL);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("security_nonce_cache");
	TCase *tc = tcase_create("nonce_cache");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_fresh_and_replay);
	tcase_add_test(tc, test_horizon);
	tcase_add_test(tc, test_same_stamp_burst);
	tcase_add_test(tc, test_window_edges);
	tcase_add_test(tc, test_start_floor);
	tcase_add_test(tc, test_full_cache_raises_floor);
	tcase_add_test(tc, test_aged_out_stays_refused);
	tcase_add_test(tc, test_never_accepted_twice);
	tcase_add_test(tc, test_threads);
	tcase_add_test(tc, test_bad_arguments);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

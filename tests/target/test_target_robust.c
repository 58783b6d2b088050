/*
 * Robustness of the target: random and mutated CDBs, garbage data-out,
 * garbage attribute lists and continuation segments never crash it and
 * always get a status; a refused list changes nothing; many threads may
 * execute at once.
 */
#include <check.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "proto/byteorder.h"

#define P1 0x10000ULL
#define O1 0x10000ULL
#define APP_PAGE 0x10003u
#define IN_CAP 8192

static struct h_target ht;
static uint64_t rng_state;

static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static void setup(void)
{
	h_target_open(&ht);
	/* OSD_TEST_SEED / OSD_TEST_ITERS explore further; the defaults are fixed. */
	const char *seed = getenv("OSD_TEST_SEED");

	rng_state = seed ? strtoull(seed, NULL, 0) | 1 : 0x9E3779B97F4A7C15ULL;
	h_create_partition(&ht, OSD_V2, P1);
	for (uint64_t i = 0; i < 4; i++)
		h_create_object(&ht, OSD_V2, P1, O1 + i);
	h_write(&ht, OSD_V2, P1, O1, 0, "original", 8);
}

static void teardown(void)
{
	h_target_close(&ht);
}

/* Execute raw bytes; the target must answer with a well-formed status. */
static void exec_raw(const uint8_t *cdb, size_t cdb_len, const uint8_t *out, size_t out_len)
{
	static uint8_t in[IN_CAP];
	struct iovec oi = { (void *)out, out_len }, ii = { in, sizeof(in) };
	struct osd_xfer x = { 0 };
	struct osd_sense s;

	x.cdb = cdb;
	x.cdb_len = cdb_len;
	x.out_iov = out_len ? &oi : NULL;
	x.out_iovcnt = out_len ? 1 : 0;
	x.out_len = out_len;
	x.in_iov = &ii;
	x.in_iovcnt = 1;
	x.in_len = sizeof(in);
	ck_assert_int_eq(osd_target_execute(ht.tgt, &x, NULL, 0), 0);
	ck_assert(x.status == OSD_STATUS_GOOD || x.status == OSD_STATUS_CHECK_CONDITION);
	ck_assert_uint_le(x.in_xferred, sizeof(in));
	if (x.status == OSD_STATUS_CHECK_CONDITION)
		ck_assert_int_eq(osd_sense_decode(x.sense, x.sense_len, &s), 0);
}

static void fill_random(uint8_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		b[i] = (uint8_t)rnd();
}

START_TEST(random_cdbs)
{
	static const uint16_t actions[] = { 0x8881, 0x8882, 0x8883, 0x8884, 0x8885, 0x8886, 0x8887,
					    0x8888, 0x8889, 0x888A, 0x888B, 0x888C, 0x888E, 0x888F,
					    0x8892, 0x8895, 0x8896, 0x8897, 0x8898, 0x8899, 0x889A,
					    0x889B, 0x889C, 0x88A0, 0x88A1, 0x88A2, 0x88A3 };
	uint8_t cdb[260], out[1024];
	const char *env = getenv("OSD_TEST_ITERS");
	int iters = env ? atoi(env) : 3000;

	for (int i = 0; i < iters; i++) {
		size_t len = rnd() % sizeof(cdb), olen = rnd() % sizeof(out);
		int v2 = (int)(rnd() & 1);

		fill_random(cdb, sizeof(cdb));
		fill_random(out, olen);
		if (i % 4) {
			/* Mostly well-framed OSD CDBs so the decoder lets them through. */
			uint16_t sa = actions[rnd() % (sizeof(actions) / sizeof(actions[0]))];

			len = v2 ? OSD_CDB_V2_LEN : OSD_CDB_V1_LEN;
			memset(cdb + 1, 0, 7);
			cdb[0] = 0x7F;
			cdb[7] = v2 ? 228 : 192;
			osd__put_be16(cdb + 8, v2 ? sa : (uint16_t)(sa & ~0x80));
			cdb[11] = (uint8_t)((cdb[11] & 0xCF) | 0x30);
			cdb[12] = 0;
			memset(cdb + 16, 0, 6);  /* partition ids near our partition */
			cdb[22] = 0x01;
			cdb[23] = (uint8_t)(rnd() & 1);
			memset(cdb + 24, 0, 6);
			cdb[30] = (uint8_t)(rnd() & 1);
			cdb[31] = (uint8_t)(rnd() & 3);
			memset(cdb + 80, 0, 4); /* no capability: NOSEC */
		}
		exec_raw(cdb, len, out, olen);
	}
}
END_TEST

/* Valid requests of several kinds, then their wire bytes mutated. */
START_TEST(mutated_requests)
{
	static const enum osd_action acts[] = { OSD_ACT_WRITE, OSD_ACT_READ, OSD_ACT_SET_ATTRIBUTES,
						OSD_ACT_GET_ATTRIBUTES, OSD_ACT_LIST, OSD_ACT_CREATE,
						OSD_ACT_APPEND };

	for (int v2 = 0; v2 < 2; v2++) {
		for (size_t a = 0; a < sizeof(acts) / sizeof(acts[0]); a++) {
			struct h_req r;

			h_req(&r, v2 ? OSD_V2 : OSD_V1, acts[a], P1,
			      acts[a] == OSD_ACT_LIST || acts[a] == OSD_ACT_CREATE ? 0 : O1 + 1);
			if (acts[a] == OSD_ACT_WRITE || acts[a] == OSD_ACT_APPEND) {
				r.payload = (const uint8_t *)"mutate-me";
				r.payload_len = 9;
			}
			if (acts[a] == OSD_ACT_READ || acts[a] == OSD_ACT_LIST) {
				r.cdb.length = 64;
				r.data_in = 64;
			}
			h_set(&r, APP_PAGE, 1, "value", 5);
			h_get(&r, APP_PAGE, OSD_ATTR_ALL);
			h_run(&ht, &r);
			for (int m = 0; m < 300; m++) {
				uint8_t cdb[OSD_CDB_MAX_LEN], *out = malloc(r.out_len + 1);

				memcpy(cdb, r.cdb_bytes, (size_t)r.cdb_len);
				memcpy(out, r.out, r.out_len);
				for (int k = 0; k < 1 + (int)(rnd() % 4); k++) {
					if (rnd() & 1)
						cdb[rnd() % (size_t)r.cdb_len] ^= (uint8_t)(1u << (rnd() % 8));
					else if (r.out_len)
						out[rnd() % r.out_len] = (uint8_t)rnd();
				}
				exec_raw(cdb, (size_t)r.cdb_len, out, r.out_len);
				free(out);
			}
			h_req_free(&r);
		}
	}
}
END_TEST

START_TEST(garbage_lists_change_nothing)
{
	for (int i = 0; i < 500; i++) {
		struct h_req r;
		uint8_t back[8];
		size_t off;

		h_req(&r, i & 1 ? OSD_V2 : OSD_V1, OSD_ACT_SET_ATTRIBUTES, P1, O1);
		h_set(&r, APP_PAGE, 1, "abc", 3);
		h_set(&r, APP_PAGE, 2, "defgh", 5);
		h_set_u64(&r, OSD_APAGE_USER_BASE + 1, OSD_ATTR_UI_OBJECT_ID, 5); /* read-only */
		h_run(&ht, &r);
		h_expect_sense(&r, OSD_SK_ILLEGAL_REQUEST, OSD_ASC_INVALID_FIELD_IN_PARAM_LIST);
		off = (size_t)r.cdb.attr.list.set_list_offset;
		fill_random(r.out + off + 1, r.out_len - off - 1);
		h_rerun(&ht, &r);
		ck_assert_uint_eq(r.x.status, OSD_STATUS_CHECK_CONDITION);
		h_req_free(&r);
		ck_assert_uint_eq(h_read(&ht, OSD_V2, P1, O1, 0, back, 8), 8);
		ck_assert_mem_eq(back, "original", 8);
	}
	/* Page 0x10003 never got a value from any of those lists. */
	{
		struct h_req r;
		const uint8_t *val;
		uint16_t len;

		h_req(&r, OSD_V2, OSD_ACT_GET_ATTRIBUTES, P1, O1);
		h_get(&r, APP_PAGE, 1);
		h_get(&r, APP_PAGE, 2);
		h_run(&ht, &r);
		h_expect_good(&r);
		ck_assert_int_eq(h_attr(&r, APP_PAGE, 1, &val, &len), 0);
		ck_assert_int_eq(h_attr(&r, APP_PAGE, 2, &val, &len), 0);
		h_req_free(&r);
	}
}
END_TEST

START_TEST(garbage_continuation)
{
	uint8_t seg[256];

	for (int i = 0; i < 500; i++) {
		struct h_req r;

		fill_random(seg, sizeof(seg));
		seg[0] = 1;
		osd__put_be16(seg + 2, i & 1 ? OSD_ACT_WRITE : OSD_ACT_QUERY);
		h_req(&r, OSD_V2, i & 1 ? OSD_ACT_WRITE : OSD_ACT_QUERY, P1, O1 + 1);
		r.cont = malloc(sizeof(seg));
		memcpy(r.cont, seg, sizeof(seg));
		r.cont_len = 8 * (5 + rnd() % 27);
		if (i & 1) {
			r.payload = (const uint8_t *)"data";
			r.payload_len = 4;
		}
		h_run(&ht, &r);
		ck_assert(r.x.status == OSD_STATUS_GOOD || r.x.status == OSD_STATUS_CHECK_CONDITION);
		h_req_free(&r);
	}
}
END_TEST

struct worker {
	uint64_t oid;
	int errors;
};

static void *work(void *arg)
{
	struct worker *w = arg;
	uint8_t buf[512], back[512];

	for (int i = 0; i < 100; i++) {
		struct h_req r;

		memset(buf, (int)(w->oid + (uint64_t)i), sizeof(buf));
		h_req(&r, OSD_V2, OSD_ACT_WRITE, P1, w->oid);
		r.payload = buf;
		r.payload_len = sizeof(buf);
		h_run(&ht, &r);
		w->errors += r.x.status != OSD_STATUS_GOOD;
		h_req_free(&r);
		h_req(&r, OSD_V2, OSD_ACT_READ, P1, w->oid);
		r.cdb.length = sizeof(back);
		r.data_in = sizeof(back);
		h_get(&r, OSD_APAGE_USER_BASE + 1, OSD_ATTR_UI_LOGICAL_LENGTH);
		h_run(&ht, &r);
		w->errors += r.x.status != OSD_STATUS_GOOD;
		memcpy(back, r.in, sizeof(back));
		w->errors += memcmp(back, buf, sizeof(buf)) != 0;
		h_req_free(&r);
		h_req(&r, OSD_V2, OSD_ACT_CREATE, P1, 0);
		h_run(&ht, &r);
		w->errors += r.x.status != OSD_STATUS_GOOD;
		h_req_free(&r);
	}
	return NULL;
}

START_TEST(concurrent_execute)
{
	pthread_t th[4];
	struct worker w[4];
	struct h_req r;

	for (int i = 0; i < 4; i++) {
		w[i].oid = O1 + (uint64_t)i;
		w[i].errors = 0;
		ck_assert_int_eq(pthread_create(&th[i], NULL, work, &w[i]), 0);
	}
	for (int i = 0; i < 4; i++) {
		ck_assert_int_eq(pthread_join(th[i], NULL), 0);
		ck_assert_int_eq(w[i].errors, 0);
	}
	/* 4 + 400 objects, all with distinct ids. */
	h_req(&r, OSD_V2, OSD_ACT_GET_ATTRIBUTES, P1, 0);
	h_get(&r, OSD_APAGE_PARTITION_BASE + 1, OSD_ATTR_PI_NUM_OBJECTS);
	h_run(&ht, &r);
	h_expect_good(&r);
	ck_assert_uint_eq(h_attr_u64(&r, OSD_APAGE_PARTITION_BASE + 1, OSD_ATTR_PI_NUM_OBJECTS), 404);
	h_req_free(&r);
}
END_TEST

static Suite *robust_suite(void)
{
	Suite *s = suite_create("target_robust");
	TCase *tc = tcase_create("robust");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 100);
	tcase_add_test(tc, random_cdbs);
	tcase_add_test(tc, mutated_requests);
	tcase_add_test(tc, garbage_lists_change_nothing);
	tcase_add_test(tc, garbage_continuation);
	tcase_add_test(tc, concurrent_execute);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(robust_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

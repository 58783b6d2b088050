/*
 * Attribute handling of the target in OSD-1 and OSD-2 (loop index 0 = OSD-1,
 * 1 = OSD-2): stored and standard pages, "all" requests, directory pages,
 * read-only refusals, logical length, page mode, CDB mode, timestamps and
 * TIMESTAMPS CONTROL bypass, and malformed lists.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "proto/byteorder.h"

#define P1 0x10000ULL
#define O1 0x10000ULL
#define CC OSD_APAGE_CURRENT_COMMAND
#define UINFO (OSD_APAGE_USER_BASE + OSD_APAGE_INFORMATION)
#define UTS (OSD_APAGE_USER_BASE + OSD_APAGE_TIMESTAMPS)
#define RINFO (OSD_APAGE_ROOT_BASE + OSD_APAGE_INFORMATION)
#define APP_PAGE 0x10003u

static struct h_target ht;

static enum osd_version ver(int i)
{
	return i ? OSD_V2 : OSD_V1;
}

static void setup(void)
{
	h_target_open(&ht);
}

static void teardown(void)
{
	h_target_close(&ht);
}

static void make_object(enum osd_version v)
{
	h_create_partition(&ht, v, P1);
	h_create_object(&ht, v, P1, O1);
}

START_TEST(stored_and_all)
{
	enum osd_version v = ver(_i);
	struct h_req r;
	struct osd_attr_reader rd;
	struct osd_attr a;
	int seen_app = 0, seen_len = 0, seen_dir = 0;

	make_object(v);
	h_req(&r, v, OSD_ACT_SET_ATTRIBUTES, P1, O1);
	h_set(&r, APP_PAGE, 1, "alpha", 5);
	h_set(&r, APP_PAGE, 2, "beta-value", 10);
	h_set(&r, OSD_APAGE_ANY_BASE + 3, 1, "any", 3);
	h_run(&ht, &r);
	h_expect_good(&r);
	h_req_free(&r);
	/* Every attribute of one page, in number order. */
	h_req(&r, v, OSD_ACT_GET_ATTRIBUTES, P1, O1);
	h_get(&r, APP_PAGE, OSD_ATTR_ALL);
	h_run(&ht, &r);
	h_expect_good(&r);
	ck_assert_int_eq(osd_attr_reader_init(&rd, v, r.in + r.ret_off, r.get_alloc), 0);
	ck_assert_int_eq(osd_attr_reader_next(&rd, &a), 1);
	ck_assert_uint_eq(a.number, 1);
	ck_assert_mem_eq(a.value, "alpha", 5);
	ck_assert_int_eq(osd_attr_reader_next(&rd, &a), 1);
	ck_assert_uint_eq(a.number, 2);
	ck_assert_uint_eq(a.length, 10);
	ck_assert_int_eq(osd_attr_reader_next(&rd, &a), 0);
	h_req_free(&r);
	/* Every page: standard attributes, stored pages and the directory. */
	h_req(&r, v, OSD_ACT_GET_ATTRIBUTES, P1, O1);
	h_get(&r, OSD_APAGE_ALL, OSD_ATTR_ALL);
	r.get_alloc = 65536;
	h_run(&ht, &r);
	h_expect_good(&r);
	ck_assert_int_eq(osd_attr_reader_init(&rd, v, r.in + r.ret_off, r.get_alloc), 0);
	while (osd_attr_reader_next(&rd, &a) == 1) {
		ck_assert(a.page < 0x30000000u || a.page >= OSD_APAGE_ANY_BASE);
		if (a.page == APP_PAGE && a.number == 2)
			seen_app++;
		if (a.page == UINFO && a.number == OSD_ATTR_UI_LOGICAL_LENGTH)
			seen_len++;
		if (a.page == 0 && a.number == APP_PAGE) {
			ck_assert_uint_eq(a.length, 40);
			seen_dir++;
		}
	}
	ck_assert_int_eq(seen_app, 1);
	ck_assert_int_eq(seen_len, 1);
	ck_assert_int_eq(seen_dir, 1);
	h_req_free(&r);
	/* The directory names standard pages with their identification. */
	h_req(&r, v, OSD_ACT_GET_ATTRIBUTES, P1, O1);
	h_get(&r, 0, UINFO);
	h_get(&r, UINFO, 0);
	h_get(&r, APP_PAGE, 7); /* undefined */
	h_run(&ht, &r);
	h_expect_good(&r);
	{
		const uint8_t *val;
		uint16_t len;
		uint8_t want[40] = "INCITS  T10 User Object Information";

		ck_assert(h_attr(&r, 0, UINFO, &val, &len));
		ck_assert_uint_eq(len, 40);
		ck_assert_mem_eq(val, want, 40);
		ck_assert(h_attr(&r, UINFO, 0, &val, &len));
		ck_assert_mem_eq(val, want, 40);
		ck_assert_int_eq(h_attr(&r, APP_PAGE, 7, &val, &len), 0);
	}
	/* The undefined entry is on the wire: 0xFFFF in OSD-1, length 0 in OSD-2. */
	{
		size_t hdr = v == OSD_V1 ? 4 : 8, e1 = v == OSD_V1 ? 10 + 40 : 16 + 40;
		const uint8_t *p = r.in + r.ret_off + hdr + 2 * e1;

		ck_assert_uint_eq(osd__get_be32(p), APP_PAGE);
		ck_assert_uint_eq(osd__get_be32(p + 4), 7);
		ck_assert_uint_eq(osd__get_be16(p + (v == OSD_V1 ? 8 : 14)), v == OSD_V1 ? 0xFFFF : 0);
	}
	h_req_free(&r);
}
END_TEST

START_TEST(read_only_refused)
{
	enum osd_version v = ver(_i);
	struct h_req r;
	const uint8_t *val;
	uint16_t len;

	make_object(v);
	h_req(&r, v, OSD_ACT_SET_ATTRIBUTES, P1, O1);
	h_set(&r, APP_PAGE, 1, "must-not-land", 13);
	h_set_u64(&r, UINFO, OSD_ATTR_UI_OBJECT_ID, 0x12345);
	h_run(&ht, &r);
	h_expect_sense(&r, OSD_SK_ILLEGAL_REQUEST, OSD_ASC_INVALID_FIELD_IN_PARAM_LIST);
	ck_assert_uint_eq(r.sense.num_attrs, 1);
	ck_assert_uint_eq(r.sense.attrs[0].page, UINFO);
	ck_assert_uint_eq(r.sense.attrs[0].number, OSD_ATTR_UI_OBJECT_ID);
	h_req_free(&r);
	/* Nothing of the refused list was applied. */
	h_req(&r, v, OSD_ACT_GET_ATTRIBUTES, P1, O1);
	h_get(&r, APP_PAGE, 1);
	h_run(&ht, &r);
	ck_assert_int_eq(h_attr(&r, APP_PAGE, 1, &val, &len), 0);
	h_req_free(&r);
	/* Other refusals: timestamps, the current-command page, a partition page. */
	static const uint32_t bad[][2] = {
		{ UTS, OSD_ATTR_TS_CREATED },
		{ CC, OSD_ATTR_CC_OBJECT_ID },
		{ OSD_APAGE_PARTITION_BASE + 1, 9 },
		{ OSD_APAGE_USER_BASE + 0x80, 1 },
		{ APP_PAGE, OSD_ATTR_ALL },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		h_req(&r, v, OSD_ACT_SET_ATTRIBUTES, P1, O1);
		h_set(&r, bad[i][0], bad[i][1], "123456", 6);
		h_run(&ht, &r);
		h_expect_sense(&r, OSD_SK_ILLEGAL_REQUEST, OSD_ASC_INVALID_FIELD_IN_PARAM_LIST);
		ck_assert_uint_eq(r.sense.attrs[0].page, bad[i][0]);
		h_req_free(&r);
	}
	/* A policy value outside its range. */
	h_req(&r, v, OSD_ACT_SET_ATTRIBUTES, P1, 0);
	h_set(&r, OSD_APAGE_PARTITION_BASE + OSD_APAGE_POLICY_SECURITY,
	      OSD_ATTR_PS_DEFAULT_METHOD, "\x07", 1);
	h_run(&ht, &r);
	h_expect_sense(&r, OSD_SK_ILLEGAL_REQUEST, OSD_ASC_INVALID_FIELD_IN_PARAM_LIST);
	h_req_free(&r);
}
END_TEST

START_TEST(logical_length)
{
	enum osd_version v = ver(_i);
	uint8_t data[64], back[100];
	struct h_req r;

	memset(data, 0x77, sizeof(data));
	make_object(v);
	h_write(&ht, v, P1, O1, 0, data, sizeof(data));
	h_req(&r, v, OSD_ACT_SET_ATTRIBUTES, P1, O1);
	h_set_u64(&r, UINFO, OSD_ATTR_UI_LOGICAL_LENGTH, 10);
	h_run(&ht, &r);
	h_expect_good(&r);
	h_req_free(&r);
	h_req(&r, v, OSD_ACT_SET_ATTRIBUTES, P1, O1);
	h_set_u64(&r, UINFO, OSD_ATTR_UI_LOGICAL_LENGTH, 100);
	h_get(&r, UINFO, OSD_ATTR_UI_LOGICAL_LENGTH); /* set before get */
	h_run(&ht, &r);
	h_expect_good(&r);
	ck_assert_uint_eq(h_attr_u64(&r, UINFO, OSD_ATTR_UI_LOGICAL_LENGTH), 100);
	h_req_free(&r);
	ck_assert_uint_eq(h_read(&ht, v, P1, O1, 0, back, 100), 100);
	for (size_t i = 0; i < 100; i++)
		ck_assert_uint_eq(back[i], i < 10 ? 0x77 : 0);
	/* GET ATTRIBUTES gets before it sets. */
	h_req(&r, v, OSD_ACT_GET_ATTRIBUTES, P1, O1);
	h_set_u64(&r, UINFO, OSD_ATTR_UI_LOGICAL_LENGTH, 5);
	h_get(&r, UINFO, OSD_ATTR_UI_LOGICAL_LENGTH);
	h_run(&ht, &r);
	h_expect_good(&r);
	ck_assert_uint_eq(h_attr_u64(&r, UINFO, OSD_ATTR_UI_LOGICAL_LENGTH), 100);
	h_req_free(&r);
	h_req(&r, v, OSD_ACT_GET_ATTRIBUTES, P1, O1);
	h_get(&r, UINFO, OSD_ATTR_UI_LOGICAL_LENGTH);
	h_run(&ht, &r);
	ck_assert_uint_eq(h_attr_u64(&r, UINFO, OSD_ATTR_UI_LOGICAL_LENGTH), 5);
	h_req_free(&r);
}
END_TEST

START_TEST(page_mode_current_command)
{
	enum osd_version v = ver(_i);
	struct h_req r;
	const uint8_t *p;
	size_t type_at = v == OSD_V1 ? 28 : 40;

	h_create_partition(&ht, v, P1);
	h_req(&r, v, OSD_ACT_CREATE, P1, 0);
	r.page_mode = 1;
	h_get(&r, CC, 0);
	h_run(&ht, &r);
	h_expect_good(&r);
	p = r.in + r.ret_off;
	ck_assert_uint_eq(osd__get_be32(p), CC);
	ck_assert_uint_eq(osd__get_be32(p + 4), v == OSD_V1 ? 48 : 60);
	for (size_t i = 8; i < type_at; i++)
		ck_assert_uint_eq(p[i], 0); /* NOSEC: no response ICV */
	ck_assert_uint_eq(p[type_at], OSD_OBJ_USER);
	ck_assert_uint_eq(osd__get_be64(p + type_at + 4), P1);
	ck_assert_uint_eq(osd__get_be64(p + type_at + 12), O1);
	h_req_free(&r);
}
END_TEST

START_TEST(page_mode_set_and_timestamps)
{
	enum osd_version v = ver(_i);
	struct h_req r;
	const uint8_t *p;
	uint64_t now = osd_now_ms(), created;

	make_object(v);
	h_req(&r, v, OSD_ACT_SET_ATTRIBUTES, P1, O1);
	r.page_mode = 1;
	h_set(&r, APP_PAGE, 4, "paged", 5);
	h_get(&r, UTS, 0);
	h_run(&ht, &r);
	h_expect_good(&r);
	p = r.in + r.ret_off;
	ck_assert_uint_eq(osd__get_be32(p), UTS);
	ck_assert_uint_eq(osd__get_be32(p + 4), 30);
	created = osd__get_be48(p + 8);
	ck_assert_uint_le(created, osd_now_ms());
	ck_assert_uint_ge(created + 60000, now);
	ck_assert_uint_ge(osd__get_be48(p + 8 + 12), created); /* attributes modified */
	h_req_free(&r);
	h_req(&r, v, OSD_ACT_GET_ATTRIBUTES, P1, O1);
	h_get(&r, APP_PAGE, 4);
	h_run(&ht, &r);
	{
		const uint8_t *val;
		uint16_t len;

		ck_assert(h_attr(&r, APP_PAGE, 4, &val, &len));
		ck_assert_uint_eq(len, 5);
		ck_assert_mem_eq(val, "paged", 5);
	}
	h_req_free(&r);
}
END_TEST

static uint64_t ts(enum osd_version v, uint32_t num)
{
	struct h_req r;
	uint64_t t;

	h_req(&r, v, OSD_ACT_GET_ATTRIBUTES, P1, O1);
	r.cdb.timestamps_control = OSD_TIMESTAMPS_BYPASS;
	h_get(&r, UTS, num);
	h_run(&ht, &r);
	h_expect_good(&r);
	t = h_attr_u64(&r, UTS, num);
	h_req_free(&r);
	return t;
}

START_TEST(timestamps_bypass)
{
	enum osd_version v = ver(_i);
	struct h_req r;
	uint64_t t0, t1;

	make_object(v);
	h_write(&ht, v, P1, O1, 0, "x", 1);
	t0 = ts(v, OSD_ATTR_TS_DATA_MODIFIED);
	/* Let the clock move on (a busy wait for the next millisecond, not a sleep). */
	while (osd_now_ms() <= t0 + 1)
		;
	h_req(&r, v, OSD_ACT_WRITE, P1, O1);
	r.payload = (const uint8_t *)"y";
	r.payload_len = 1;
	r.cdb.timestamps_control = OSD_TIMESTAMPS_BYPASS;
	h_run(&ht, &r);
	h_expect_good(&r);
	h_req_free(&r);
	ck_assert_uint_eq(ts(v, OSD_ATTR_TS_DATA_MODIFIED), t0);
	h_write(&ht, v, P1, O1, 0, "z", 1);
	t1 = ts(v, OSD_ATTR_TS_DATA_MODIFIED);
	ck_assert_uint_gt(t1, t0);
	/* A reserved TIMESTAMPS CONTROL value is an invalid field. */
	h_req(&r, v, OSD_ACT_GET_ATTRIBUTES, P1, O1);
	h_run(&ht, &r);
	h_expect_good(&r);
	r.cdb_bytes[12] = 0x12; /* the encoder refuses it: patch the wire bytes */
	h_rerun(&ht, &r);
	h_expect_field(&r, OSD_SK_ILLEGAL_REQUEST, OSD_ASC_INVALID_FIELD_IN_CDB, 12);
	h_req_free(&r);
}
END_TEST

START_TEST(cdb_mode_v2)
{
	struct h_req r;
	const uint8_t *val;
	uint16_t len;

	make_object(OSD_V2);
	h_req(&r, OSD_V2, OSD_ACT_SET_ATTRIBUTES, P1, O1);
	r.cdb.attr_mode = OSD_ATTR_MODE_CDB;
	r.cdb.attr.one.page = APP_PAGE;
	r.cdb.attr.one.number = 9;
	r.cdb.attr.one.length = 6;
	memcpy(r.cdb.attr.one.value, "in-cdb", 6);
	h_run(&ht, &r);
	h_expect_good(&r);
	h_req_free(&r);
	h_req(&r, OSD_V2, OSD_ACT_GET_ATTRIBUTES, P1, O1);
	h_get(&r, APP_PAGE, 9);
	h_run(&ht, &r);
	ck_assert(h_attr(&r, APP_PAGE, 9, &val, &len));
	ck_assert_uint_eq(len, 6);
	ck_assert_mem_eq(val, "in-cdb", 6);
	h_req_free(&r);
}
END_TEST

START_TEST(root_and_partition_info)
{
	enum osd_version v = ver(_i);
	struct h_req r;
	const uint8_t *val;
	uint16_t len;

	make_object(v);
	h_write(&ht, v, P1, O1, 0, "0123456789", 10);
	h_req(&r, v, OSD_ACT_GET_ATTRIBUTES, 0, 0);
	h_get(&r, RINFO, OSD_ATTR_RI_VENDOR_ID);
	h_get(&r, RINFO, OSD_ATTR_RI_PRODUCT_ID);
	h_get(&r, RINFO, OSD_ATTR_RI_TOTAL_CAPACITY);
	h_get(&r, RINFO, OSD_ATTR_RI_NUM_PARTITIONS);
	h_get(&r, RINFO, OSD_ATTR_RI_CLOCK);
	h_get(&r, OSD_APAGE_ROOT_BASE + OSD_APAGE_POLICY_SECURITY, OSD_ATTR_PS_OLDEST_NONCE);
	h_run(&ht, &r);
	h_expect_good(&r);
	ck_assert(h_attr(&r, RINFO, OSD_ATTR_RI_VENDOR_ID, &val, &len));
	ck_assert_uint_eq(len, 8);
	ck_assert_mem_eq(val, "OSDSUITE", 8);
	ck_assert(h_attr(&r, RINFO, OSD_ATTR_RI_PRODUCT_ID, &val, &len));
	ck_assert_uint_eq(len, 16);
	ck_assert_uint_gt(h_attr_u64(&r, RINFO, OSD_ATTR_RI_TOTAL_CAPACITY), 0);
	ck_assert_uint_eq(h_attr_u64(&r, RINFO, OSD_ATTR_RI_NUM_PARTITIONS), 1);
	{
		uint64_t clk = h_attr_u64(&r, RINFO, OSD_ATTR_RI_CLOCK), now = osd_now_ms();

		ck_assert_uint_le(clk, now);
		ck_assert_uint_ge(clk + 10000, now);
	}
	ck_assert_uint_eq(h_attr_u64(&r, OSD_APAGE_ROOT_BASE + OSD_APAGE_POLICY_SECURITY,
				     OSD_ATTR_PS_OLDEST_NONCE), 60000);
	h_req_free(&r);
	h_req(&r, v, OSD_ACT_GET_ATTRIBUTES, P1, 0);
	h_get(&r, OSD_APAGE_PARTITION_BASE + 1, OSD_ATTR_PI_PARTITION_ID);
	h_get(&r, OSD_APAGE_PARTITION_BASE + 1, OSD_ATTR_PI_NUM_OBJECTS);
	h_get(&r, OSD_APAGE_PARTITION_BASE + 1, OSD_ATTR_PI_USED_CAPACITY);
	h_run(&ht, &r);
	h_expect_good(&r);
	ck_assert_uint_eq(h_attr_u64(&r, OSD_APAGE_PARTITION_BASE + 1, OSD_ATTR_PI_PARTITION_ID), P1);
	ck_assert_uint_eq(h_attr_u64(&r, OSD_APAGE_PARTITION_BASE + 1, OSD_ATTR_PI_NUM_OBJECTS), 1);
	ck_assert_uint_ge(h_attr_u64(&r, OSD_APAGE_PARTITION_BASE + 1, OSD_ATTR_PI_USED_CAPACITY), 10);
	h_req_free(&r);
}
END_TEST

START_TEST(malformed_lists)
{
	enum osd_version v = ver(_i);
	struct h_req r;
	uint8_t junk[64];

	make_object(v);
	memset(junk, 0x09, sizeof(junk)); /* type 09h where a get list belongs */
	h_req(&r, v, OSD_ACT_GET_ATTRIBUTES, P1, O1);
	h_get(&r, APP_PAGE, 1);
	h_run(&ht, &r); /* a good request first, to know the layout */
	h_expect_good(&r);
	memcpy(r.out + (size_t)r.cdb.attr.list.get_list_offset, junk, 8);
	h_rerun(&ht, &r);
	h_expect_sense(&r, OSD_SK_ILLEGAL_REQUEST, OSD_ASC_INVALID_FIELD_IN_PARAM_LIST);
	h_req_free(&r);
	/* A set list whose LIST LENGTH promises more than was sent. */
	h_req(&r, v, OSD_ACT_SET_ATTRIBUTES, P1, O1);
	h_set(&r, APP_PAGE, 1, "abc", 3);
	h_run(&ht, &r);
	h_expect_good(&r);
	{
		uint8_t *l = r.out + (size_t)r.cdb.attr.list.set_list_offset;

		if (v == OSD_V1)
			osd__put_be16(l + 2, 200);
		else
			osd__put_be32(l + 4, 200);
	}
	h_rerun(&ht, &r);
	h_expect_sense(&r, OSD_SK_ILLEGAL_REQUEST, OSD_ASC_PARAM_LIST_LENGTH_ERROR);
	h_req_free(&r);
}
END_TEST

START_TEST(user_quota)
{
	enum osd_version v = ver(_i);
	uint8_t data[8192];
	struct h_req r;

	memset(data, 3, sizeof(data));
	make_object(v);
	h_req(&r, v, OSD_ACT_SET_ATTRIBUTES, P1, O1);
	h_set_u64(&r, OSD_APAGE_USER_BASE + OSD_APAGE_QUOTAS, OSD_ATTR_Q_MAX_OBJECT_LENGTH, 4096);
	h_run(&ht, &r);
	h_expect_good(&r);
	h_req_free(&r);
	h_req(&r, v, OSD_ACT_WRITE, P1, O1);
	r.payload = data;
	r.payload_len = sizeof(data);
	h_run(&ht, &r);
	h_expect_sense(&r, OSD_SK_DATA_PROTECT, OSD_ASC_QUOTA_ERROR);
	h_req_free(&r);
}
END_TEST

static Suite *attrs_suite(void)
{
	Suite *s = suite_create("target_attrs");
	TCase *tc = tcase_create("attrs");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, stored_and_all, 0, 2);
	tcase_add_loop_test(tc, read_only_refused, 0, 2);
	tcase_add_loop_test(tc, logical_length, 0, 2);
	tcase_add_loop_test(tc, page_mode_current_command, 0, 2);
	tcase_add_loop_test(tc, page_mode_set_and_timestamps, 0, 2);
	tcase_add_loop_test(tc, timestamps_bypass, 0, 2);
	tcase_add_test(tc, cdb_mode_v2);
	tcase_add_loop_test(tc, root_and_partition_info, 0, 2);
	tcase_add_loop_test(tc, malformed_lists, 0, 2);
	tcase_add_loop_test(tc, user_quota, 0, 2);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(attrs_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

/* LIST / LIST COLLECTION / QUERY results: hand-built data-in -> fields,
 * encoder output, bounds and malformed headers. */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <osd/list.h>
#include "proto/answer.h"

/* OSD-2 LIST of a partition: 3 user objects, 2 present, continuation 0x10007. */
static const uint8_t v2_list[] = {
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x28, /* 16 + 3 x 8 */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x07, /* continuation */
	0x00, 0x00, 0x00, 0x09,                         /* list id */
	0x00, 0x00, 0x00, 0x86,                         /* 21h << 2 | LSTCHG */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x05,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x06,
};

START_TEST(test_v2_decode)
{
	struct osd_list_result r;

	ck_assert_int_eq(osd_list_decode(OSD_V2, v2_list, sizeof(v2_list), &r), 0);
	ck_assert_uint_eq(r.additional_length, 40);
	ck_assert_uint_eq(r.continuation_id, 0x10007);
	ck_assert_uint_eq(r.list_id, 9);
	ck_assert_uint_eq(r.format, OSD_LIST_FMT_USER_OBJECTS);
	ck_assert_uint_eq(r.lstchg, 1);
	ck_assert_uint_eq(r.root, 0);
	ck_assert_uint_eq(r.num_ids, 2);
	ck_assert_uint_eq(osd_list_id(&r, 0), 0x10005);
	ck_assert_uint_eq(osd_list_id(&r, 1), 0x10006);
	/* a partial id is not counted */
	ck_assert_int_eq(osd_list_decode(OSD_V2, v2_list, sizeof(v2_list) - 1, &r), 0);
	ck_assert_uint_eq(r.num_ids, 1);
	/* ADDITIONAL LENGTH bounds the count too */
	{
		uint8_t b[sizeof(v2_list)];

		memcpy(b, v2_list, sizeof(b));
		b[7] = 0x18;
		ck_assert_int_eq(osd_list_decode(OSD_V2, b, sizeof(b), &r), 0);
		ck_assert_uint_eq(r.num_ids, 1);
		b[7] = 0x10;
		ck_assert_int_eq(osd_list_decode(OSD_V2, b, sizeof(b), &r), 0);
		ck_assert_uint_eq(r.num_ids, 0);
		ck_assert_ptr_null(r.ids);
	}
}
END_TEST

/* OSD-1 LIST of the root: ROOT bit, no format. */
START_TEST(test_v1_decode)
{
	static const uint8_t b[] = {
		0, 0, 0, 0, 0, 0, 0, 0x18,
		0, 0, 0, 0, 0, 0, 0, 0,
		0, 0, 0, 0,
		0, 0, 0, 0x01,
		0, 0, 0, 0, 0, 0x01, 0, 0,
	};
	struct osd_list_result r;

	ck_assert_int_eq(osd_list_decode(OSD_V1, b, sizeof(b), &r), 0);
	ck_assert_uint_eq(r.root, 1);
	ck_assert_uint_eq(r.lstchg, 0);
	ck_assert_uint_eq(r.format, 0);
	ck_assert_uint_eq(r.continuation_id, 0);
	ck_assert_uint_eq(r.num_ids, 1);
	ck_assert_uint_eq(osd_list_id(&r, 0), 0x10000);
}
END_TEST

START_TEST(test_malformed)
{
	uint8_t b[sizeof(v2_list)];
	struct osd_list_result r;

	ck_assert_int_eq(osd_list_decode(OSD_V2, v2_list, 23, &r), -EBADMSG);
	memcpy(b, v2_list, sizeof(b));
	b[7] = 0x29; /* not 16 + 8n */
	ck_assert_int_eq(osd_list_decode(OSD_V2, b, sizeof(b), &r), -EBADMSG);
	b[7] = 0x08; /* shorter than the header */
	ck_assert_int_eq(osd_list_decode(OSD_V2, b, sizeof(b), &r), -EBADMSG);
	memcpy(b, v2_list, sizeof(b));
	b[23] = 0x22 << 2; /* ids + attributes: not an ids-only format */
	ck_assert_int_eq(osd_list_decode(OSD_V2, b, sizeof(b), &r), -ENOTSUP);
	b[23] = 0x05 << 2; /* unknown format */
	ck_assert_int_eq(osd_list_decode(OSD_V2, b, sizeof(b), &r), -EBADMSG);
	b[23] = 0;
	ck_assert_int_eq(osd_list_decode(OSD_V2, b, sizeof(b), &r), -EBADMSG);
	ck_assert_int_eq(osd_list_decode((enum osd_version)5, v2_list, sizeof(v2_list), &r),
			 -EBADMSG);
	/* saturated ADDITIONAL LENGTH: bounded by the bytes present */
	memcpy(b, v2_list, sizeof(b));
	memset(b, 0xFF, 8);
	ck_assert_int_eq(osd_list_decode(OSD_V2, b, sizeof(b), &r), 0);
	ck_assert_uint_eq(r.num_ids, 2);
}
END_TEST

START_TEST(test_encode)
{
	static const uint64_t ids[3] = { 0x10005, 0x10006, 0x10007 };
	uint8_t b[64];
	struct osd_list_result r;

	/* the v2_list answer above: 3 ids in total, 2 fit, continue at the third */
	ck_assert_int_eq(osd_list_encode(OSD_V2, OSD_LIST_FMT_USER_OBJECTS, 0, 0x10007, 9, ids, 2, 3,
					 b, sizeof(b)), 40);
	b[23] |= 0x02; /* LSTCHG is not the encoder's business; set it as the vector has it */
	ck_assert_int_eq(memcmp(b, v2_list, sizeof(v2_list)), 0);
	/* only what fits is written */
	ck_assert_int_eq(osd_list_encode(OSD_V1, 0, 1, 0, 0, ids, 3, 3, b, 35), 32);
	ck_assert_uint_eq(b[7], 0x28);
	ck_assert_uint_eq(b[23], 0x01);
	ck_assert_int_eq(osd_list_decode(OSD_V1, b, 32, &r), 0);
	ck_assert_uint_eq(r.num_ids, 1);
	ck_assert_uint_eq(r.root, 1);
	ck_assert_int_eq(osd_list_encode(OSD_V1, 0, 0, 0, 0, ids, 3, 3, b, 23), -ENOBUFS);
	ck_assert_int_eq(osd_list_encode(OSD_V2, 0x40, 0, 0, 0, ids, 1, 1, b, 64), -EINVAL);
	ck_assert_int_eq(osd_list_encode(OSD_V2, 0x21, 0, 0, 0, ids, 2, 1, b, 64), -EINVAL);
}
END_TEST

/* QUERY: 12-byte header, format byte at 11. */
static const uint8_t query[] = {
	0, 0, 0, 0, 0, 0, 0, 0x14,  /* 4 + 2 x 8 */
	0, 0, 0, 0x84,              /* 21h << 2 */
	0, 0, 0, 0, 0, 0x01, 0, 0x05,
	0, 0, 0, 0, 0, 0x01, 0, 0x09,
};

START_TEST(test_query)
{
	static const uint64_t ids[2] = { 0x10005, 0x10009 };
	struct osd_list_result r;
	uint8_t b[40];

	ck_assert_int_eq(osd_query_result_decode(query, sizeof(query), &r), 0);
	ck_assert_uint_eq(r.additional_length, 20);
	ck_assert_uint_eq(r.format, OSD_LIST_FMT_USER_OBJECTS);
	ck_assert_uint_eq(r.num_ids, 2);
	ck_assert_uint_eq(osd_list_id(&r, 1), 0x10009);
	ck_assert_int_eq(osd_query_result_encode(ids, 2, 2, b, sizeof(b)), 28);
	ck_assert_int_eq(memcmp(b, query, sizeof(query)), 0);
	ck_assert_int_eq(osd_query_result_encode(ids, 2, 2, b, 11), -ENOBUFS);
	ck_assert_int_eq(osd_query_result_encode(ids, 2, 1, b, 40), -EINVAL);
	ck_assert_int_eq(osd_query_result_encode(ids, 2, 2, b, 19), 12);
	ck_assert_int_eq(osd_query_result_encode(ids, 2, 2, b, 20), 20);

	ck_assert_int_eq(osd_query_result_decode(query, 11, &r), -EBADMSG);
	memcpy(b, query, sizeof(query));
	b[11] = 0x11 << 2;
	ck_assert_int_eq(osd_query_result_decode(b, sizeof(query), &r), -EBADMSG);
	memcpy(b, query, sizeof(query));
	b[7] = 0x13;
	ck_assert_int_eq(osd_query_result_decode(b, sizeof(query), &r), -EBADMSG);
	b[7] = 0x03;
	ck_assert_int_eq(osd_query_result_decode(b, sizeof(query), &r), -EBADMSG);
	b[7] = 0x24; /* more announced than present */
	ck_assert_int_eq(osd_query_result_decode(b, sizeof(query), &r), 0);
	ck_assert_uint_eq(r.num_ids, 2);
}
END_TEST

/* ---- strict answer checks (proto/answer.h) ---------------------------- */

static char why[256];

START_TEST(test_answer_list)
{
	uint8_t b[sizeof(v2_list)];

	memcpy(b, v2_list, sizeof(b));
	/* 3 ids announced, 2 arrived and the 40-byte allocation is full:
	 * a cut list that says where to resume */
	ck_assert_int_eq(osd__list_answer_check(OSD_V2, 0, b, 40, 40, why, sizeof(why)), 0);
	ck_assert_int_eq(osd__list_answer_check(OSD_V2, 0, b, 40, 47, why, sizeof(why)), 0);
	/* the same with room for more: over-claim */
	ck_assert_int_eq(osd__list_answer_check(OSD_V2, 0, b, 40, 1024, why, sizeof(why)), -EBADMSG);
	ck_assert_str_eq(why, "LIST ADDITIONAL LENGTH 40 claims 3 object ids but the 40 bytes"
			      " received carry 2");
	/* cut, but nothing to resume from: the third id would be lost */
	memset(b + 8, 0, 8);
	ck_assert_int_eq(osd__list_answer_check(OSD_V2, 0, b, 40, 40, why, sizeof(why)), -EBADMSG);
	ck_assert_str_eq(why, "LIST ADDITIONAL LENGTH 40 claims 3 object ids, 2 fit in the"
			      " allocation and CONTINUATION OBJECT_ID is 0");
	/* complete */
	b[7] = 0x20;
	ck_assert_int_eq(osd__list_answer_check(OSD_V2, 0, b, 40, 1024, why, sizeof(why)), 0);
	ck_assert_int_eq(osd__list_answer_check(OSD_V1, 0, b, 40, 1024, why, sizeof(why)), 0);
	/* saturated (O): unknown total, what arrived counts */
	memset(b, 0xFF, 8);
	ck_assert_int_eq(osd__list_answer_check(OSD_V2, 0, b, 40, 1024, why, sizeof(why)), 0);
}
END_TEST

START_TEST(test_answer_list_malformed)
{
	uint8_t b[sizeof(v2_list)];

	memcpy(b, v2_list, sizeof(b));
	b[7] = 0x20;
	ck_assert_int_eq(osd__list_answer_check(OSD_V2, 0, b, 36, 1024, why, sizeof(why)), -EBADMSG);
	ck_assert_str_eq(why, "LIST answer of 36 bytes ends inside an object id");
	ck_assert_int_eq(osd__list_answer_check(OSD_V2, 0, b, 41, 40, why, sizeof(why)), -EPROTO);
	ck_assert_str_eq(why, "LIST answer: 41 bytes received for a 40-byte allocation");
	ck_assert_int_eq(osd__list_answer_check(OSD_V2, 0, b, 23, 1024, why, sizeof(why)), -EBADMSG);
	ck_assert_str_eq(why, "LIST answer of 23 bytes is shorter than its 24-byte header");
	b[7] = 0x21;
	ck_assert_int_eq(osd__list_answer_check(OSD_V2, 0, b, 40, 1024, why, sizeof(why)), -EBADMSG);
	ck_assert_str_eq(why, "LIST ADDITIONAL LENGTH 33 is not 16 plus 8 per object id");
	b[7] = 0x20;
	b[23] = 0x00;
	ck_assert_int_eq(osd__list_answer_check(OSD_V2, 0, b, 40, 1024, why, sizeof(why)), -EBADMSG);
	ck_assert_str_eq(why, "LIST object descriptor format 0x00 is unknown");
	/* formats with attributes are left to osd_req_list_result() */
	b[23] = 0x22 << 2;
	ck_assert_int_eq(osd__list_answer_check(OSD_V2, 0, b, 40, 1024, why, sizeof(why)), 0);
}
END_TEST

START_TEST(test_answer_query)
{
	static const uint8_t q[] = {
		0, 0, 0, 0, 0, 0, 0, 0x14, 0, 0, 0, 0x84, /* 4 + 2 x 8 */
		0, 0, 0, 0, 0, 0x01, 0, 0x05,
		0, 0, 0, 0, 0, 0x01, 0, 0x06,
	};

	ck_assert_int_eq(osd__list_answer_check(OSD_V2, 1, q, sizeof(q), 512, why, sizeof(why)), 0);
	/* 2 ids announced, none arrived, room for 62 */
	ck_assert_int_eq(osd__list_answer_check(OSD_V2, 1, q, 12, 512, why, sizeof(why)), -EBADMSG);
	ck_assert_str_eq(why, "QUERY ADDITIONAL LENGTH 20 claims 2 object ids but the 12 bytes"
			      " received carry 0");
	/* the allocation held one id: cut, QUERY has no continuation */
	ck_assert_int_eq(osd__list_answer_check(OSD_V2, 1, q, 20, 20, why, sizeof(why)), 0);
	ck_assert_int_eq(osd__list_answer_check(OSD_V2, 1, q, 11, 512, why, sizeof(why)), -EBADMSG);
	ck_assert_str_eq(why, "QUERY answer of 11 bytes is shorter than its 12-byte header");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("list");
	TCase *tc = tcase_create("list");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_v2_decode);
	tcase_add_test(tc, test_v1_decode);
	tcase_add_test(tc, test_malformed);
	tcase_add_test(tc, test_encode);
	tcase_add_test(tc, test_query);
	tcase_add_test(tc, test_answer_list);
	tcase_add_test(tc, test_answer_list_malformed);
	tcase_add_test(tc, test_answer_query);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

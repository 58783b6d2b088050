/* Attribute lists: hand-built byte vectors for every list type in both
 * versions, writer output, truncation and malformed lists. */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <osd/attr.h>
#include "proto/answer.h"

static int next_ok(struct osd_attr_reader *r, struct osd_attr *a)
{
	return osd_attr_reader_next(r, a) == 1;
}

/* The example of docs/protocol.md §8.3 (osd2r03 §7.1.3.1, §7.1.3.3): OSD-2 set
 * list, logical length (1/0x82) = 4096. */
static const uint8_t fs45[] = {
	0x09, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x18,
	0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x82,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x08,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10, 0x00,
};

START_TEST(test_fact_sheet_4_5_write)
{
	static const uint8_t v[8] = { 0, 0, 0, 0, 0, 0, 0x10, 0 };
	struct osd_attr a = { .page = 1, .number = 0x82, .length = 8, .value = v };
	struct osd_attr_writer w;
	uint8_t buf[64];

	memset(buf, 0xEE, sizeof(buf));
	ck_assert_int_eq(osd_attr_writer_init(&w, OSD_V2, OSD_LIST_SET, buf, sizeof(buf)), 0);
	ck_assert_int_eq(osd_attr_writer_add(&w, &a), 0);
	ck_assert_int_eq(osd_attr_writer_finish(&w), 32);
	ck_assert_int_eq(memcmp(buf, fs45, sizeof(fs45)), 0);
}
END_TEST

START_TEST(test_fact_sheet_4_5_read)
{
	struct osd_attr_reader r;
	struct osd_attr a;

	ck_assert_int_eq(osd_attr_reader_init(&r, OSD_V2, fs45, sizeof(fs45)), 0);
	ck_assert_int_eq(osd_attr_reader_next(&r, &a), 1);
	ck_assert_uint_eq(a.page, 1);
	ck_assert_uint_eq(a.number, 0x82);
	ck_assert_uint_eq(a.length, 8);
	ck_assert_ptr_eq(a.value, fs45 + 24);
	ck_assert_uint_eq(osd_attr_get_u64(&a, 0), 4096);
	ck_assert_uint_eq(osd_attr_get_u32(&a, 77), 77);
	ck_assert_int_eq(osd_attr_reader_next(&r, &a), 0);
	ck_assert_int_eq(osd_attr_reader_truncated(&r), 0);
}
END_TEST

/* OSD-1 set list: unpadded 10-byte entry headers. */
static const uint8_t v1_set[] = {
	0x09, 0x00, 0x00, 0x1A,                         /* type 09h, length 26 */
	0x00, 0x01, 0x00, 0x03, 0x00, 0x00, 0x00, 0x01, /* 0x10003 / 1 */
	0x00, 0x02, 'a', 'b',                           /* length 2, "ab" */
	0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x82, /* 1 / 0x82 */
	0x00, 0x04, 0x00, 0x00, 0x10, 0x00,             /* length 4, 4096 */
};

START_TEST(test_v1_set_list)
{
	struct osd_attr_writer w;
	struct osd_attr_reader r;
	struct osd_attr a;
	static const uint8_t n4096[4] = { 0, 0, 0x10, 0 };
	struct osd_attr in[2] = {
		{ .page = 0x10003, .number = 1, .length = 2, .value = "ab" },
		{ .page = 1, .number = 0x82, .length = 4, .value = n4096 },
	};
	uint8_t buf[64];

	ck_assert_int_eq(osd_attr_writer_init(&w, OSD_V1, OSD_LIST_SET, buf, sizeof(buf)), 0);
	ck_assert_int_eq(osd_attr_writer_add(&w, &in[0]), 0);
	ck_assert_int_eq(osd_attr_writer_add(&w, &in[1]), 0);
	ck_assert_int_eq(osd_attr_writer_finish(&w), (long)sizeof(v1_set));
	ck_assert_int_eq(memcmp(buf, v1_set, sizeof(v1_set)), 0);

	ck_assert_int_eq(osd_attr_reader_init(&r, OSD_V1, v1_set, sizeof(v1_set)), 0);
	ck_assert(next_ok(&r, &a));
	ck_assert_uint_eq(a.page, 0x10003);
	ck_assert_uint_eq(a.length, 2);
	ck_assert_int_eq(memcmp(a.value, "ab", 2), 0);
	ck_assert(next_ok(&r, &a));
	ck_assert_uint_eq(osd_attr_get_u32(&a, 0), 4096);
	ck_assert_int_eq(osd_attr_reader_next(&r, &a), 0);
}
END_TEST

/* Get lists: LIST LENGTH 0 as initiators send; the reader uses the buffer length. */
START_TEST(test_get_lists)
{
	static const uint8_t v1_get[] = {
		0x01, 0x00, 0x00, 0x00,
		0x00, 0x01, 0x00, 0x03, 0x00, 0x00, 0x00, 0x01,
		0xFF, 0xFF, 0xFF, 0xFE, 0x00, 0x00, 0x00, 0x04,
	};
	static const uint8_t v2_get[] = {
		0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
		0x00, 0x01, 0x00, 0x03, 0x00, 0x00, 0x00, 0x01,
		0xFF, 0xFF, 0xFF, 0xFE, 0x00, 0x00, 0x00, 0x04,
	};
	struct osd_attr in[2] = { { .page = 0x10003, .number = 1 },
				  { .page = 0xFFFFFFFE, .number = 4 } };
	for (int v = OSD_V1; v <= OSD_V2; v++) {
		const uint8_t *want = v == OSD_V1 ? v1_get : v2_get;
		size_t len = v == OSD_V1 ? sizeof(v1_get) : sizeof(v2_get);
		struct osd_attr_writer w;
		struct osd_attr_reader r;
		struct osd_attr a;
		uint8_t buf[32];

		ck_assert_int_eq(osd_attr_writer_init(&w, (enum osd_version)v, OSD_LIST_GET, buf,
						      sizeof(buf)), 0);
		ck_assert_int_eq(osd_attr_writer_add(&w, &in[0]), 0);
		ck_assert_int_eq(osd_attr_writer_add(&w, &in[1]), 0);
		ck_assert_int_eq(osd_attr_writer_finish(&w), (long)len);
		ck_assert_int_eq(memcmp(buf, want, len), 0);
		ck_assert_int_eq(osd_attr_reader_init(&r, (enum osd_version)v, want, len), 0);
		ck_assert(next_ok(&r, &a));
		ck_assert_uint_eq(a.page, 0x10003);
		ck_assert(next_ok(&r, &a));
		ck_assert_uint_eq(a.page, 0xFFFFFFFE);
		ck_assert_uint_eq(a.number, 4);
		ck_assert_int_eq(osd_attr_reader_next(&r, &a), 0);
		ck_assert_int_eq(osd_attr_reader_truncated(&r), 0);
		/* a partial get entry is malformed */
		ck_assert_int_eq(osd_attr_reader_init(&r, (enum osd_version)v, want, len - 3), 0);
		ck_assert(next_ok(&r, &a));
		ck_assert_int_eq(osd_attr_reader_next(&r, &a), -EBADMSG);
	}
}
END_TEST

/* Undefined attributes: 0xFFFF (OSD-1) and 0 (OSD-2) carry no value. */
START_TEST(test_undefined)
{
	static const uint8_t v1[] = {
		0x09, 0x00, 0x00, 0x16,
		0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x09, 0xFF, 0xFF,
		0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x02, 0x00, 0x02, 0x12, 0x34,
	};
	static const uint8_t v2[] = {
		0x09, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10,
		0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x09,
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	};
	struct osd_attr_reader r;
	struct osd_attr a;
	struct osd_attr_writer w;
	struct osd_attr undef = { .page = 1, .number = 9, .length = OSD_ATTR_LEN_UNDEFINED };
	uint8_t buf[32];

	ck_assert_int_eq(osd_attr_reader_init(&r, OSD_V1, v1, sizeof(v1)), 0);
	ck_assert(next_ok(&r, &a));
	ck_assert_uint_eq(a.number, 9);
	ck_assert_uint_eq(a.length, 0);
	ck_assert_ptr_null(a.value);
	ck_assert(next_ok(&r, &a));
	ck_assert_uint_eq(a.length, 2);
	ck_assert_int_eq(osd_attr_reader_next(&r, &a), 0);

	ck_assert_int_eq(osd_attr_reader_init(&r, OSD_V2, v2, sizeof(v2)), 0);
	ck_assert(next_ok(&r, &a));
	ck_assert_uint_eq(a.length, 0);
	ck_assert_ptr_null(a.value);
	ck_assert_uint_eq(osd_attr_get_u64(&a, 5), 5);
	ck_assert_int_eq(osd_attr_reader_next(&r, &a), 0);

	/* the writer's explicit undefined marker */
	ck_assert_int_eq(osd_attr_writer_init(&w, OSD_V1, OSD_LIST_SET, buf, sizeof(buf)), 0);
	ck_assert_int_eq(osd_attr_writer_add(&w, &undef), 0);
	ck_assert_int_eq(osd_attr_writer_finish(&w), 14);
	ck_assert_int_eq(memcmp(buf + 4, v1 + 4, 10), 0);
	ck_assert_int_eq(osd_attr_writer_init(&w, OSD_V2, OSD_LIST_SET, buf, sizeof(buf)), 0);
	ck_assert_int_eq(osd_attr_writer_add(&w, &undef), 0);
	ck_assert_int_eq(osd_attr_writer_finish(&w), 24);
	ck_assert_int_eq(memcmp(buf, v2, sizeof(v2)), 0);
}
END_TEST

/* LIST LENGTH promises 48 bytes; the allocation length let 36 through. */
START_TEST(test_truncated)
{
	uint8_t buf[56];
	struct osd_attr_reader r;
	struct osd_attr a;

	memcpy(buf, fs45, sizeof(fs45));
	buf[7] = 48;
	memcpy(buf + 32, fs45 + 8, 24); /* second entry, same shape */
	ck_assert_int_eq(osd_attr_reader_init(&r, OSD_V2, buf, 36), 0);
	ck_assert_int_eq(osd_attr_reader_truncated(&r), 1);
	ck_assert(next_ok(&r, &a));
	ck_assert_uint_eq(osd_attr_get_u64(&a, 0), 4096);
	ck_assert_int_eq(osd_attr_reader_next(&r, &a), 0);
	ck_assert_int_eq(osd_attr_reader_next(&r, &a), 0);
	/* the whole thing reads both entries and is not truncated */
	ck_assert_int_eq(osd_attr_reader_init(&r, OSD_V2, buf, 56), 0);
	ck_assert_int_eq(osd_attr_reader_truncated(&r), 0);
	ck_assert(next_ok(&r, &a));
	ck_assert(next_ok(&r, &a));
	ck_assert_int_eq(osd_attr_reader_next(&r, &a), 0);
	/* v1: the truncated value is not returned */
	ck_assert_int_eq(osd_attr_reader_init(&r, OSD_V1, v1_set, sizeof(v1_set) - 2), 0);
	ck_assert_int_eq(osd_attr_reader_truncated(&r), 1);
	ck_assert(next_ok(&r, &a));
	ck_assert_int_eq(osd_attr_reader_next(&r, &a), 0);
}
END_TEST

/* Bytes after LIST LENGTH (the rest of an allocation) are not part of the list. */
START_TEST(test_trailing_bytes_ignored)
{
	uint8_t buf[48];
	struct osd_attr_reader r;
	struct osd_attr a;

	memcpy(buf, fs45, sizeof(fs45));
	memset(buf + sizeof(fs45), 0xA5, sizeof(buf) - sizeof(fs45));
	ck_assert_int_eq(osd_attr_reader_init(&r, OSD_V2, buf, sizeof(buf)), 0);
	ck_assert_int_eq(osd_attr_reader_truncated(&r), 0);
	ck_assert(next_ok(&r, &a));
	ck_assert_int_eq(osd_attr_reader_next(&r, &a), 0);
}
END_TEST

START_TEST(test_malformed)
{
	uint8_t buf[64];
	struct osd_attr_reader r;
	struct osd_attr a;

	/* short header, unknown type, type of the other version */
	ck_assert_int_eq(osd_attr_reader_init(&r, OSD_V2, fs45, 7), -EBADMSG);
	ck_assert_int_eq(osd_attr_reader_init(&r, OSD_V1, fs45, 3), -EBADMSG);
	memcpy(buf, fs45, sizeof(fs45));
	buf[0] = 0x05;
	ck_assert_int_eq(osd_attr_reader_init(&r, OSD_V2, buf, sizeof(fs45)), -EBADMSG);
	buf[0] = 0x0F;
	ck_assert_int_eq(osd_attr_reader_init(&r, OSD_V2, buf, sizeof(fs45)), -EBADMSG);
	buf[0] = 0x0E;
	ck_assert_int_eq(osd_attr_reader_init(&r, OSD_V1, buf, sizeof(fs45)), -EBADMSG);
	/* entry value runs past LIST LENGTH (not a truncation) */
	memcpy(buf, fs45, sizeof(fs45));
	buf[23] = 100;
	ck_assert_int_eq(osd_attr_reader_init(&r, OSD_V2, buf, sizeof(fs45)), 0);
	ck_assert_int_eq(osd_attr_reader_next(&r, &a), -EBADMSG);
	/* entry header cut by LIST LENGTH */
	memcpy(buf, fs45, sizeof(fs45));
	buf[7] = 12;
	ck_assert_int_eq(osd_attr_reader_init(&r, OSD_V2, buf, sizeof(fs45)), 0);
	ck_assert_int_eq(osd_attr_reader_next(&r, &a), -EBADMSG);
	/* v2 padding missing: value of 9 bytes needs 7 pad bytes */
	memcpy(buf, fs45, sizeof(fs45));
	buf[7] = 25;
	buf[23] = 9;
	ck_assert_int_eq(osd_attr_reader_init(&r, OSD_V2, buf, 33), 0);
	ck_assert_int_eq(osd_attr_reader_next(&r, &a), -EBADMSG);
}
END_TEST

/* 0Eh, per-object headers: id 8, type 1, reserved 5, list length 2. */
static const uint8_t multi[] = {
	0x0E, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x68,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x05, 0x80, 0, 0, 0, 0, 0, 0x00, 0x30,
	0xFF, 0xFF, 0xFF, 0xFE, 0x00, 0x00, 0x00, 0x04, 0, 0, 0, 0, 0, 0, 0x00, 0x08,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x05,
	0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x09, 0, 0, 0, 0, 0, 0, 0x00, 0x01,
	'x', 0, 0, 0, 0, 0, 0, 0,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x06, 0x80, 0, 0, 0, 0, 0, 0x00, 0x18,
	0xFF, 0xFF, 0xFF, 0xFE, 0x00, 0x00, 0x00, 0x04, 0, 0, 0, 0, 0, 0, 0x00, 0x08,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x06,
};

START_TEST(test_multi_object)
{
	static const uint8_t id5[8] = { 0, 0, 0, 0, 0, 1, 0, 5 }, id6[8] = { 0, 0, 0, 0, 0, 1, 0, 6 };
	struct osd_attr in[3] = {
		{ .page = 0xFFFFFFFE, .number = 4, .length = 8, .value = id5, .object_id = 0x10005 },
		{ .page = 1, .number = 9, .length = 1, .value = "x", .object_id = 0x10005 },
		{ .page = 0xFFFFFFFE, .number = 4, .length = 8, .value = id6, .object_id = 0x10006 },
	};
	struct osd_attr_writer w;
	struct osd_attr_reader r;
	struct osd_attr a;
	uint8_t buf[128];

	ck_assert_int_eq(osd_attr_writer_init(&w, OSD_V2, OSD_LIST_MULTI, buf, sizeof(buf)), 0);
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(osd_attr_writer_add(&w, &in[i]), 0);
	ck_assert_int_eq(osd_attr_writer_finish(&w), (long)sizeof(multi));
	ck_assert_int_eq(memcmp(buf, multi, sizeof(multi)), 0);

	ck_assert_int_eq(osd_attr_reader_init(&r, OSD_V2, multi, sizeof(multi)), 0);
	for (int i = 0; i < 3; i++) {
		ck_assert(next_ok(&r, &a));
		ck_assert_uint_eq(a.object_id, in[i].object_id);
		ck_assert_uint_eq(a.page, in[i].page);
		ck_assert_uint_eq(a.length, in[i].length);
		ck_assert_int_eq(memcmp(a.value, in[i].value, a.length), 0);
	}
	ck_assert_int_eq(osd_attr_reader_next(&r, &a), 0);
	/* an object group longer than the list */
	memcpy(buf, multi, sizeof(multi));
	buf[23] = 0x70;
	ck_assert_int_eq(osd_attr_reader_init(&r, OSD_V2, buf, sizeof(multi)), 0);
	ck_assert_int_eq(osd_attr_reader_next(&r, &a), -EBADMSG);
	/* an entry longer than its object group */
	memcpy(buf, multi, sizeof(multi));
	buf[23] = 0x20;
	ck_assert_int_eq(osd_attr_reader_init(&r, OSD_V2, buf, sizeof(multi)), 0);
	ck_assert(next_ok(&r, &a));
	ck_assert_int_eq(osd_attr_reader_next(&r, &a), -EBADMSG);
	/* truncated inside the second group */
	ck_assert_int_eq(osd_attr_reader_init(&r, OSD_V2, multi, sizeof(multi) - 4), 0);
	ck_assert_int_eq(osd_attr_reader_truncated(&r), 1);
	ck_assert(next_ok(&r, &a));
	ck_assert(next_ok(&r, &a));
	ck_assert_int_eq(osd_attr_reader_next(&r, &a), 0);
}
END_TEST

/* 0Fh (OSD-1 CREATE of several objects): object id + v1 09h entry. */
START_TEST(test_create_multi)
{
	static const uint8_t want[] = {
		0x0F, 0x00, 0x00, 0x2C,
		0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x05,
		0xFF, 0xFF, 0xFF, 0xFE, 0x00, 0x00, 0x00, 0x04, 0x00, 0x08,
		0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x05,
		0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x06,
		0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x09, 0x00, 0x00,
	};
	static const uint8_t id5[8] = { 0, 0, 0, 0, 0, 1, 0, 5 };
	struct osd_attr in[2] = {
		{ .page = 0xFFFFFFFE, .number = 4, .length = 8, .value = id5, .object_id = 0x10005 },
		{ .page = 1, .number = 9, .length = 0, .value = NULL, .object_id = 0x10006 },
	};
	struct osd_attr_writer w;
	struct osd_attr_reader r;
	struct osd_attr a;
	uint8_t buf[64];

	ck_assert_int_eq(osd_attr_writer_init(&w, OSD_V1, OSD_LIST_CREATE_MULTI, buf,
					      sizeof(buf)), 0);
	ck_assert_int_eq(osd_attr_writer_add(&w, &in[0]), 0);
	ck_assert_int_eq(osd_attr_writer_add(&w, &in[1]), 0);
	ck_assert_int_eq(osd_attr_writer_finish(&w), (long)sizeof(want));
	ck_assert_int_eq(memcmp(buf, want, sizeof(want)), 0);
	ck_assert_int_eq(osd_attr_reader_init(&r, OSD_V1, want, sizeof(want)), 0);
	ck_assert(next_ok(&r, &a));
	ck_assert_uint_eq(a.object_id, 0x10005);
	ck_assert_uint_eq(osd_attr_get_u64(&a, 0), 0x10005);
	ck_assert(next_ok(&r, &a));
	ck_assert_uint_eq(a.object_id, 0x10006);
	ck_assert_uint_eq(a.number, 9);
	ck_assert_int_eq(osd_attr_reader_next(&r, &a), 0);
	/* the last entry cut in its id: malformed when the list is not truncated */
	memcpy(buf, want, sizeof(want));
	buf[3] = 0x2C - 8;
	ck_assert_int_eq(osd_attr_reader_init(&r, OSD_V1, buf, sizeof(want) - 8), 0);
	ck_assert(next_ok(&r, &a));
	ck_assert_int_eq(osd_attr_reader_next(&r, &a), -EBADMSG);
}
END_TEST

START_TEST(test_writer_errors)
{
	struct osd_attr_writer w;
	struct osd_attr a = { .page = 1, .number = 2, .length = 8, .value = "12345678" };
	uint8_t buf[40];

	ck_assert_int_eq(osd_attr_writer_init(&w, OSD_V2, OSD_LIST_SET, buf, 7), -ENOBUFS);
	ck_assert_int_eq(osd_attr_writer_init(&w, OSD_V1, OSD_LIST_MULTI, buf, 40), -EINVAL);
	ck_assert_int_eq(osd_attr_writer_init(&w, OSD_V2, OSD_LIST_CREATE_MULTI, buf, 40), -EINVAL);
	ck_assert_int_eq(osd_attr_writer_init(&w, OSD_V2, (enum osd_list_type)3, buf, 40), -EINVAL);
	ck_assert_int_eq(osd_attr_writer_init(&w, OSD_V2, OSD_LIST_SET, buf, sizeof(buf)), 0);
	ck_assert_int_eq(osd_attr_writer_add(&w, &a), 0);      /* 8 + 24 = 32 */
	ck_assert_int_eq(osd_attr_writer_add(&w, &a), -ENOBUFS);
	a.length = 0;
	ck_assert_int_eq(osd_attr_writer_add(&w, &a), -ENOBUFS); /* stays in error */
	ck_assert_int_eq(osd_attr_writer_finish(&w), -ENOBUFS);
	ck_assert_int_eq(osd_attr_writer_init(&w, OSD_V2, OSD_LIST_SET, buf, sizeof(buf)), 0);
	a.length = 0xFFFF;
	ck_assert_int_eq(osd_attr_writer_add(&w, &a), -EINVAL);  /* value longer than 0xFFFE */
	a.length = 4;
	a.value = NULL;
	ck_assert_int_eq(osd_attr_writer_add(&w, &a), -EINVAL);
	ck_assert_int_eq(osd_attr_writer_finish(&w), 8);
}
END_TEST

START_TEST(test_lengths)
{
	ck_assert_uint_eq(osd_attr_header_len(OSD_V1), 4);
	ck_assert_uint_eq(osd_attr_header_len(OSD_V2), 8);
	ck_assert_uint_eq(osd_attr_entry_len(OSD_V1, OSD_LIST_GET, 0), 8);
	ck_assert_uint_eq(osd_attr_entry_len(OSD_V2, OSD_LIST_GET, 0), 8);
	ck_assert_uint_eq(osd_attr_entry_len(OSD_V1, OSD_LIST_SET, 5), 15);
	ck_assert_uint_eq(osd_attr_entry_len(OSD_V2, OSD_LIST_SET, 0), 16);
	ck_assert_uint_eq(osd_attr_entry_len(OSD_V2, OSD_LIST_SET, 1), 24);
	ck_assert_uint_eq(osd_attr_entry_len(OSD_V2, OSD_LIST_SET, 8), 24);
	ck_assert_uint_eq(osd_attr_entry_len(OSD_V2, OSD_LIST_SET, 9), 32);
	ck_assert_uint_eq(osd_attr_entry_len(OSD_V1, OSD_LIST_CREATE_MULTI, 8), 26);
	ck_assert_uint_eq(osd_attr_entry_len(OSD_V2, OSD_LIST_MULTI, 8), 24);
}
END_TEST

/* ---- strict answer checks (proto/answer.h) ---------------------------- */

static char why[256];

/* One retrieved attribute, 1/0x82 = 4096 (the fs45 entry) under @p len. */
static void answer_v2(uint8_t *b, uint32_t len)
{
	memcpy(b, fs45, sizeof(fs45));
	b[4] = (uint8_t)(len >> 24);
	b[5] = (uint8_t)(len >> 16);
	b[6] = (uint8_t)(len >> 8);
	b[7] = (uint8_t)len;
}

#define ONE_ATTR_BOUND 65568 /* 0Eh header + a 0xFFFE-byte OSD-2 entry */

START_TEST(test_answer_good)
{
	static const uint8_t v1_undefined[] = {
		0x09, 0x00, 0x00, 0x0A,
		0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x82, 0xFF, 0xFF,
	};
	uint8_t b[32];

	answer_v2(b, 24);
	ck_assert_int_eq(osd__attr_answer_check(OSD_V2, b, 32, 512, ONE_ATTR_BOUND,
						why, sizeof(why)), 0);
	/* cut by the allocation: LIST LENGTH reports the full list */
	answer_v2(b, 48);
	ck_assert_int_eq(osd__attr_answer_check(OSD_V2, b, 32, 32, ONE_ATTR_BOUND,
						why, sizeof(why)), 0);
	/* the entry itself cut: stops before it, still not an error */
	ck_assert_int_eq(osd__attr_answer_check(OSD_V2, b, 28, 28, ONE_ATTR_BOUND,
						why, sizeof(why)), 0);
	/* OSD-1 undefined: length FFFFh and no value bytes */
	ck_assert_int_eq(osd__attr_answer_check(OSD_V1, v1_undefined, sizeof(v1_undefined),
						512, 65554, why, sizeof(why)), 0);
	/* an empty list */
	answer_v2(b, 0);
	ck_assert_int_eq(osd__attr_answer_check(OSD_V2, b, 8, 512, ONE_ATTR_BOUND,
						why, sizeof(why)), 0);
}
END_TEST

START_TEST(test_answer_overclaim)
{
	uint8_t b[32];

	/* the relay's LIST LENGTH FFFFFFF0h with room left in the allocation */
	answer_v2(b, 0xFFFFFFF0);
	ck_assert_int_eq(osd__attr_answer_check(OSD_V2, b, 32, 512, ONE_ATTR_BOUND,
						why, sizeof(why)), -EBADMSG);
	ck_assert_str_eq(why, "retrieved attributes list length 4294967280 exceeds the 32 bytes received");
	/* ... and with the allocation filled: more than one attribute can take */
	ck_assert_int_eq(osd__attr_answer_check(OSD_V2, b, 32, 32, ONE_ATTR_BOUND,
						why, sizeof(why)), -EBADMSG);
	ck_assert_str_eq(why, "retrieved attributes list length 4294967280 exceeds the 65568 bytes"
			      " the requested attributes can take");
	/* unbounded ("all"): a filled allocation is a cut list */
	ck_assert_int_eq(osd__attr_answer_check(OSD_V2, b, 32, 32, OSD__NO_LIST_BOUND,
						why, sizeof(why)), 0);
	/* 8 bytes more than arrived, room left */
	answer_v2(b, 32);
	ck_assert_int_eq(osd__attr_answer_check(OSD_V2, b, 32, 512, ONE_ATTR_BOUND,
						why, sizeof(why)), -EBADMSG);
	ck_assert_str_eq(why, "retrieved attributes list length 32 exceeds the 32 bytes received");
	answer_v2(b, 20);
	ck_assert_int_eq(osd__attr_answer_check(OSD_V2, b, 32, 512, ONE_ATTR_BOUND,
						why, sizeof(why)), -EBADMSG);
	ck_assert_str_eq(why, "retrieved attributes list length 20 is not a multiple of 8");
}
END_TEST

START_TEST(test_answer_bad_entries)
{
	static const uint8_t v1_long[] = {
		0x09, 0x00, 0x00, 0x0C,
		0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x82, 0xFF, 0xFE, 0x00, 0x00,
	};
	uint8_t b[32];

	/* ATTRIBUTE LENGTH FFFEh in a 24-byte list */
	answer_v2(b, 24);
	b[22] = 0xFF;
	b[23] = 0xFE;
	ck_assert_int_eq(osd__attr_answer_check(OSD_V2, b, 32, 512, ONE_ATTR_BOUND,
						why, sizeof(why)), -EBADMSG);
	ck_assert_str_eq(why, "retrieved attributes list entry at byte 8 runs past the list"
			      " (list length 24, 32 bytes received)");
	/* FFFFh reads as undefined (no value): the value bytes left behind
	 * are 8 bytes of an entry that needs 16 */
	b[23] = 0xFF;
	ck_assert_int_eq(osd__attr_answer_check(OSD_V2, b, 32, 512, ONE_ATTR_BOUND,
						why, sizeof(why)), -EBADMSG);
	ck_assert_str_eq(why, "retrieved attributes list entry at byte 24 runs past the list"
			      " (list length 24, 32 bytes received)");
	ck_assert_int_eq(osd__attr_answer_check(OSD_V1, v1_long, sizeof(v1_long), 512, 65554,
						why, sizeof(why)), -EBADMSG);
	ck_assert_str_eq(why, "retrieved attributes list entry at byte 4 runs past the list"
			      " (list length 12, 16 bytes received)");
}
END_TEST

START_TEST(test_answer_impossible)
{
	uint8_t b[32];

	answer_v2(b, 24);
	ck_assert_int_eq(osd__attr_answer_check(OSD_V2, b, 33, 32, ONE_ATTR_BOUND,
						why, sizeof(why)), -EPROTO);
	ck_assert_str_eq(why, "retrieved attributes: 33 bytes received for a 32-byte allocation");
	ck_assert_int_eq(osd__attr_answer_check(OSD_V2, b, 7, 512, ONE_ATTR_BOUND,
						why, sizeof(why)), -EBADMSG);
	ck_assert_str_eq(why, "retrieved attributes list of 7 bytes is shorter than its 8-byte header");
	b[0] = 0x01;
	ck_assert_int_eq(osd__attr_answer_check(OSD_V2, b, 32, 512, ONE_ATTR_BOUND,
						why, sizeof(why)), -EBADMSG);
	ck_assert_str_eq(why, "retrieved attributes list type 0x01 is not a retrieved-attributes list");
	b[0] = 0x0F; /* 0Fh is OSD-1 only */
	ck_assert_int_eq(osd__attr_answer_check(OSD_V2, b, 32, 512, ONE_ATTR_BOUND,
						why, sizeof(why)), -EBADMSG);
	ck_assert_str_eq(why, "retrieved attributes list type 0x0f is not a retrieved-attributes list");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("attr");
	TCase *tc = tcase_create("attr");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_fact_sheet_4_5_write);
	tcase_add_test(tc, test_fact_sheet_4_5_read);
	tcase_add_test(tc, test_v1_set_list);
	tcase_add_test(tc, test_get_lists);
	tcase_add_test(tc, test_undefined);
	tcase_add_test(tc, test_truncated);
	tcase_add_test(tc, test_trailing_bytes_ignored);
	tcase_add_test(tc, test_malformed);
	tcase_add_test(tc, test_multi_object);
	tcase_add_test(tc, test_create_multi);
	tcase_add_test(tc, test_writer_errors);
	tcase_add_test(tc, test_lengths);
	tcase_add_test(tc, test_answer_good);
	tcase_add_test(tc, test_answer_overclaim);
	tcase_add_test(tc, test_answer_bad_entries);
	tcase_add_test(tc, test_answer_impossible);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

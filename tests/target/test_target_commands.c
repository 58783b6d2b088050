/*
 * The target's OSD commands at CDB level, in both OSD-1 and OSD-2 (loop
 * index 0 = OSD-1, 1 = OSD-2): namespace commands, data commands, LIST,
 * collections, member commands, QUERY, FLUSH, FORMAT and persistence.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <osd/list.h>

#include "harness.h"
#include "proto/byteorder.h"

#define P1 0x10000ULL
#define O1 0x10000ULL
#define CC OSD_APAGE_CURRENT_COMMAND
#define UINFO (OSD_APAGE_USER_BASE + OSD_APAGE_INFORMATION)
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

static void fill_pattern(uint8_t *b, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		b[i] = (uint8_t)(i * 31 + seed);
}

START_TEST(create_partition_ids)
{
	enum osd_version v = ver(_i);
	struct h_req r;

	h_create_partition(&ht, v, P1);
	/* An existing id is an invalid PARTITION_ID. */
	h_req(&r, v, OSD_ACT_CREATE_PARTITION, P1, 0);
	h_run(&ht, &r);
	h_expect_field(&r, OSD_SK_ILLEGAL_REQUEST, OSD_ASC_INVALID_FIELD_IN_CDB, 16);
	ck_assert(r.sense.has_object);
	ck_assert_uint_eq(r.sense.object.partition, P1);
	h_req_free(&r);
	/* Reserved ids are refused. */
	h_req(&r, v, OSD_ACT_CREATE_PARTITION, 0x1234, 0);
	h_run(&ht, &r);
	h_expect_field(&r, OSD_SK_ILLEGAL_REQUEST, OSD_ASC_INVALID_FIELD_IN_CDB, 16);
	h_req_free(&r);
	/* Requested id 0: the target picks and reports it in current-command attr 3. */
	h_req(&r, v, OSD_ACT_CREATE_PARTITION, 0, 0);
	h_get(&r, CC, OSD_ATTR_CC_PARTITION_ID);
	h_get(&r, CC, OSD_ATTR_CC_OBJECT_TYPE);
	h_run(&ht, &r);
	h_expect_good(&r);
	ck_assert_uint_eq(h_attr_u64(&r, CC, OSD_ATTR_CC_PARTITION_ID), P1 + 1);
	ck_assert_uint_eq(h_attr_u64(&r, CC, OSD_ATTR_CC_OBJECT_TYPE), OSD_OBJ_PARTITION);
	h_req_free(&r);
}
END_TEST

START_TEST(create_object_ids)
{
	enum osd_version v = ver(_i);
	struct h_req r;

	h_create_partition(&ht, v, P1);
	h_create_object(&ht, v, P1, 0x10005);
	/* Existing, reserved, and in a missing partition. */
	h_req(&r, v, OSD_ACT_CREATE, P1, 0x10005);
	h_run(&ht, &r);
	h_expect_field(&r, OSD_SK_ILLEGAL_REQUEST, OSD_ASC_INVALID_FIELD_IN_CDB, 24);
	h_req_free(&r);
	h_req(&r, v, OSD_ACT_CREATE, P1, 0x42);
	h_run(&ht, &r);
	h_expect_field(&r, OSD_SK_ILLEGAL_REQUEST, OSD_ASC_INVALID_FIELD_IN_CDB, 24);
	h_req_free(&r);
	h_req(&r, v, OSD_ACT_CREATE, P1 + 7, 0x10001);
	h_run(&ht, &r);
	h_expect_field(&r, OSD_SK_ILLEGAL_REQUEST, OSD_ASC_INVALID_FIELD_IN_CDB, 16);
	h_req_free(&r);
	/* Id 0: next after the highest, reported in attr 4. */
	h_req(&r, v, OSD_ACT_CREATE, P1, 0);
	h_get(&r, CC, OSD_ATTR_CC_OBJECT_ID);
	h_run(&ht, &r);
	h_expect_good(&r);
	ck_assert_uint_eq(h_attr_u64(&r, CC, OSD_ATTR_CC_OBJECT_ID), 0x10006);
	h_req_free(&r);
	/* Three at once: attr 4 is the highest, each object has its own id attribute. */
	h_req(&r, v, OSD_ACT_CREATE, P1, 0);
	r.cdb.num_objects = 3;
	h_get(&r, UINFO, OSD_ATTR_UI_OBJECT_ID);
	h_run(&ht, &r);
	h_expect_good(&r);
	{
		struct osd_attr_reader rd;
		struct osd_attr a;
		uint64_t want = 0x10007;

		ck_assert_int_eq(osd_attr_reader_init(&rd, v, r.in + r.ret_off, r.get_alloc), 0);
		ck_assert_int_eq(rd.type, v == OSD_V1 ? OSD_LIST_CREATE_MULTI : OSD_LIST_MULTI);
		while (osd_attr_reader_next(&rd, &a) == 1) {
			ck_assert_uint_eq(a.object_id, want);
			ck_assert_uint_eq(osd_attr_get_u64(&a, 0), want);
			want++;
		}
		ck_assert_uint_eq(want, 0x1000A);
	}
	h_req_free(&r);
	/* More than one object with a requested id is invalid. */
	h_req(&r, v, OSD_ACT_CREATE, P1, 0x20000);
	r.cdb.num_objects = 2;
	h_run(&ht, &r);
	h_expect_field(&r, OSD_SK_ILLEGAL_REQUEST, OSD_ASC_INVALID_FIELD_IN_CDB, 24);
	h_req_free(&r);
}
END_TEST

START_TEST(write_read_bytes)
{
	enum osd_version v = ver(_i);
	uint8_t data[10000], back[10100];
	struct h_req r;

	fill_pattern(data, sizeof(data), 7);
	h_create_partition(&ht, v, P1);
	h_create_object(&ht, v, P1, O1);
	h_write(&ht, v, P1, O1, 100, data, sizeof(data));
	/* READ with a piggy-backed get: data at 0, attributes at their offset, zeros between. */
	h_req(&r, v, OSD_ACT_READ, P1, O1);
	r.cdb.length = sizeof(back);
	r.data_in = sizeof(back);
	r.in_fill = 0xEE;
	h_get(&r, UINFO, OSD_ATTR_UI_LOGICAL_LENGTH);
	h_run(&ht, &r);
	h_expect_good(&r);
	memcpy(back, r.in, sizeof(back));
	for (size_t i = 0; i < 100; i++)
		ck_assert_uint_eq(back[i], 0);
	ck_assert_mem_eq(back + 100, data, sizeof(data));
	for (size_t i = sizeof(back); i < r.ret_off; i++)
		ck_assert_uint_eq(r.in[i], 0);
	ck_assert_uint_eq(h_attr_u64(&r, UINFO, OSD_ATTR_UI_LOGICAL_LENGTH), 10100);
	h_req_free(&r);
}
END_TEST

START_TEST(short_read_recovered)
{
	enum osd_version v = ver(_i);
	uint8_t data[100];
	struct h_req r;

	fill_pattern(data, sizeof(data), 3);
	h_create_partition(&ht, v, P1);
	h_create_object(&ht, v, P1, O1);
	h_write(&ht, v, P1, O1, 0, data, sizeof(data));
	h_req(&r, v, OSD_ACT_READ, P1, O1);
	r.cdb.length = 300;
	r.cdb.start = 40;
	r.data_in = 300;
	r.in_fill = 0xEE;
	h_run(&ht, &r);
	h_expect_sense(&r, OSD_SK_RECOVERED_ERROR, OSD_ASC_READ_PAST_END_OF_OBJECT);
	ck_assert(r.sense.has_csi);
	ck_assert_uint_eq(r.sense.csi, 60);
	ck_assert_uint_eq(r.x.in_xferred, 300);
	ck_assert_mem_eq(r.in, data + 40, 60);
	for (size_t i = 60; i < 300; i++)
		ck_assert_uint_eq(r.in[i], 0);
	h_req_free(&r);
}
END_TEST

START_TEST(append_reports_address)
{
	enum osd_version v = ver(_i);
	uint8_t a[10] = "0123456789", b[5] = "abcde", back[15];
	struct h_req r;

	h_create_partition(&ht, v, P1);
	h_create_object(&ht, v, P1, O1);
	h_write(&ht, v, P1, O1, 0, a, sizeof(a));
	h_req(&r, v, OSD_ACT_APPEND, P1, O1);
	r.payload = b;
	r.payload_len = sizeof(b);
	h_get(&r, CC, OSD_ATTR_CC_APPEND_OFFSET);
	h_run(&ht, &r);
	h_expect_good(&r);
	ck_assert_uint_eq(h_attr_u64(&r, CC, OSD_ATTR_CC_APPEND_OFFSET), 10);
	h_req_free(&r);
	ck_assert_uint_eq(h_read(&ht, v, P1, O1, 0, back, sizeof(back)), sizeof(back));
	ck_assert_mem_eq(back, "0123456789abcde", 15);
}
END_TEST

START_TEST(clear_and_punch_v2)
{
	uint8_t data[4096], back[4096];
	struct h_req r;

	memset(data, 0x5A, sizeof(data));
	h_create_partition(&ht, OSD_V2, P1);
	h_create_object(&ht, OSD_V2, P1, O1);
	h_write(&ht, OSD_V2, P1, O1, 0, data, sizeof(data));
	h_req(&r, OSD_V2, OSD_ACT_CLEAR, P1, O1);
	r.cdb.start = 100;
	r.cdb.length = 100;
	h_run(&ht, &r);
	h_expect_good(&r);
	h_req_free(&r);
	h_req(&r, OSD_V2, OSD_ACT_PUNCH, P1, O1);
	r.cdb.start = 1000;
	r.cdb.length = 2000;
	h_run(&ht, &r);
	h_expect_good(&r);
	h_req_free(&r);
	ck_assert_uint_eq(h_read(&ht, OSD_V2, P1, O1, 0, back, sizeof(back)), sizeof(back));
	for (size_t i = 0; i < sizeof(back); i++) {
		int zero = (i >= 100 && i < 200) || (i >= 1000 && i < 3000);

		ck_assert_uint_eq(back[i], zero ? 0 : 0x5A);
	}
	/* The logical length is unchanged. */
	h_req(&r, OSD_V2, OSD_ACT_GET_ATTRIBUTES, P1, O1);
	h_get(&r, UINFO, OSD_ATTR_UI_LOGICAL_LENGTH);
	h_run(&ht, &r);
	ck_assert_uint_eq(h_attr_u64(&r, UINFO, OSD_ATTR_UI_LOGICAL_LENGTH), 4096);
	h_req_free(&r);
}
END_TEST

START_TEST(remove_and_missing)
{
	enum osd_version v = ver(_i);
	struct h_req r;

	h_create_partition(&ht, v, P1);
	h_create_object(&ht, v, P1, O1);
	h_req(&r, v, OSD_ACT_REMOVE, P1, O1);
	h_run(&ht, &r);
	h_expect_good(&r);
	h_req_free(&r);
	/* A missing object: 24h/00h, field pointer at the object id, 06h naming it. */
	h_req(&r, v, OSD_ACT_READ, P1, O1);
	r.cdb.length = 10;
	r.data_in = 10;
	h_run(&ht, &r);
	h_expect_field(&r, OSD_SK_ILLEGAL_REQUEST, OSD_ASC_INVALID_FIELD_IN_CDB, 24);
	ck_assert(r.sense.has_object);
	ck_assert_uint_eq(r.sense.object.partition, P1);
	ck_assert_uint_eq(r.sense.object.id, O1);
	ck_assert_int_eq(osd_sense_errno(&r.sense), -ENOENT);
	h_req_free(&r);
	h_req(&r, v, OSD_ACT_REMOVE, P1, O1);
	h_run(&ht, &r);
	h_expect_field(&r, OSD_SK_ILLEGAL_REQUEST, OSD_ASC_INVALID_FIELD_IN_CDB, 24);
	h_req_free(&r);
}
END_TEST

START_TEST(remove_partition_not_empty)
{
	enum osd_version v = ver(_i);
	struct h_req r;

	h_create_partition(&ht, v, P1);
	h_create_object(&ht, v, P1, O1);
	h_req(&r, v, OSD_ACT_REMOVE_PARTITION, P1, 0);
	h_run(&ht, &r);
	h_expect_sense(&r, OSD_SK_ILLEGAL_REQUEST, OSD_ASC_PARTITION_OR_COLLECTION_NOT_EMPTY);
	h_req_free(&r);
	h_req(&r, v, OSD_ACT_REMOVE, P1, O1);
	h_run(&ht, &r);
	h_expect_good(&r);
	h_req_free(&r);
	h_req(&r, v, OSD_ACT_REMOVE_PARTITION, P1, 0);
	h_run(&ht, &r);
	h_expect_good(&r);
	h_req_free(&r);
	h_req(&r, v, OSD_ACT_REMOVE_PARTITION, P1, 0);
	h_run(&ht, &r);
	h_expect_field(&r, OSD_SK_ILLEGAL_REQUEST, OSD_ASC_INVALID_FIELD_IN_CDB, 16);
	h_req_free(&r);
}
END_TEST

/* LIST (or with @p coll LIST COLLECTION of the partition's collections) in
 * pieces: header bytes, continuation id and list identifier. */
static void list_kind(enum osd_version v, int coll, uint64_t pid, const uint64_t *want,
		      size_t nwant)
{
	uint64_t start = 0;
	uint32_t list_id = 0;
	size_t got = 0;

	do {
		struct h_req r;
		struct osd_list_result res;

		h_req(&r, v, coll ? OSD_ACT_LIST_COLLECTION : OSD_ACT_LIST, pid, 0);
		r.cdb.length = 24 + 2 * 8; /* two ids per call */
		r.cdb.start = start;
		r.cdb.list_id = list_id;
		r.data_in = (size_t)r.cdb.length;
		h_run(&ht, &r);
		h_expect_good(&r);
		ck_assert_int_eq(osd_list_decode(v, r.in, r.x.in_xferred, &res), 0);
		/* ADDITIONAL LENGTH counts every remaining id, not only those that fit. */
		ck_assert_uint_eq(osd__get_be64(r.in), 16 + 8 * (nwant - got));
		if (v == OSD_V1)
			ck_assert_uint_eq(r.in[23] & 1, pid == 0 || coll);
		else
			ck_assert_uint_eq(r.in[23] >> 2, coll ? OSD_LIST_FMT_COLLECTIONS
							 : pid ? OSD_LIST_FMT_USER_OBJECTS
							       : OSD_LIST_FMT_PARTITIONS);
		ck_assert_uint_ne(res.list_id, 0);
		ck_assert(!res.lstchg);
		if (list_id)
			ck_assert_uint_eq(res.list_id, list_id);
		for (size_t i = 0; i < res.num_ids; i++)
			ck_assert_uint_eq(osd_list_id(&res, i), want[got++]);
		start = res.continuation_id;
		list_id = res.list_id;
		if (start)
			ck_assert_uint_eq(start, want[got]);
		h_req_free(&r);
	} while (start);
	ck_assert_uint_eq(got, nwant);
}

static void list_all(enum osd_version v, uint64_t pid, const uint64_t *want, size_t nwant)
{
	list_kind(v, 0, pid, want, nwant);
}

START_TEST(list_with_continuation)
{
	enum osd_version v = ver(_i);
	uint64_t parts[] = { P1, P1 + 1, P1 + 2 }, objs[] = { 0x10000, 0x10001, 0x10002, 0x10010, 0x10020 };

	for (size_t i = 0; i < 3; i++)
		h_create_partition(&ht, v, parts[i]);
	for (size_t i = 0; i < 5; i++)
		h_create_object(&ht, v, P1, objs[i]);
	list_all(v, 0, parts, 3);
	list_all(v, P1, objs, 5);
	list_all(v, P1 + 1, NULL, 0);
	list_kind(v, 1, P1, NULL, 0);
	/* Collections among the user objects: each LIST counts only its kind
	 * (the count of a kind scans when the partition holds both). */
	uint64_t colls[] = { 0x10003, 0x10011, 0x10030 };

	for (size_t i = 0; i < 3; i++) {
		struct h_req r;

		h_req(&r, v, OSD_ACT_CREATE_COLLECTION, P1, colls[i]);
		h_run(&ht, &r);
		h_expect_good(&r);
		h_req_free(&r);
	}
	list_all(v, P1, objs, 5);
	list_kind(v, 1, P1, colls, 3);
	list_kind(v, 1, P1 + 1, NULL, 0);
}
END_TEST

START_TEST(list_change_flag)
{
	enum osd_version v = ver(_i);
	struct h_req r;
	struct osd_list_result res;
	uint32_t id;

	h_create_partition(&ht, v, P1);
	for (uint64_t i = 0; i < 4; i++)
		h_create_object(&ht, v, P1, O1 + i);
	h_req(&r, v, OSD_ACT_LIST, P1, 0);
	r.cdb.length = 24 + 8;
	r.data_in = 32;
	h_run(&ht, &r);
	ck_assert_int_eq(osd_list_decode(v, r.in, r.x.in_xferred, &res), 0);
	id = res.list_id;
	h_req_free(&r);
	h_create_object(&ht, v, P1, O1 + 10);
	h_req(&r, v, OSD_ACT_LIST, P1, 0);
	r.cdb.length = 24 + 8;
	r.cdb.start = O1 + 1;
	r.cdb.list_id = id;
	r.data_in = 32;
	h_run(&ht, &r);
	h_expect_good(&r);
	ck_assert_int_eq(osd_list_decode(v, r.in, r.x.in_xferred, &res), 0);
	ck_assert(res.lstchg);
	h_req_free(&r);
}
END_TEST

START_TEST(flush_family)
{
	enum osd_version v = ver(_i);
	static const enum osd_action acts[] = { OSD_ACT_FLUSH, OSD_ACT_FLUSH_COLLECTION,
						OSD_ACT_FLUSH_PARTITION, OSD_ACT_FLUSH_OSD };
	const uint64_t ids[][2] = { { P1, O1 }, { P1, O1 + 1 }, { P1, 0 }, { 0, 0 } };
	struct h_req r;

	h_create_partition(&ht, v, P1);
	h_create_object(&ht, v, P1, O1);
	h_req(&r, v, OSD_ACT_CREATE_COLLECTION, P1, O1 + 1);
	h_run(&ht, &r);
	h_expect_good(&r);
	h_req_free(&r);
	for (size_t i = 0; i < 4; i++) {
		/* Scope 2 (a byte range) exists in OSD-2 only. */
		for (uint8_t scope = 0; scope < (v == OSD_V1 ? 2 : 3); scope++) {
			h_req(&r, v, acts[i], ids[i][0], ids[i][1]);
			r.cdb.flush_scope = scope;
			h_run(&ht, &r);
			h_expect_good(&r);
			h_req_free(&r);
		}
	}
	/* FLUSH of a collection id with the user-object command is refused. */
	h_req(&r, v, OSD_ACT_FLUSH, P1, O1 + 1);
	h_run(&ht, &r);
	h_expect_field(&r, OSD_SK_ILLEGAL_REQUEST, OSD_ASC_INVALID_FIELD_IN_CDB, 24);
	h_req_free(&r);
}
END_TEST

static void join(enum osd_version v, uint64_t oid, uint32_t num, uint64_t cid)
{
	struct h_req r;

	h_req(&r, v, OSD_ACT_SET_ATTRIBUTES, P1, oid);
	if (cid)
		h_set_u64(&r, OSD_APAGE_USER_BASE + OSD_APAGE_COLLECTIONS, num, cid);
	else
		h_set(&r, OSD_APAGE_USER_BASE + OSD_APAGE_COLLECTIONS, num, NULL, 0);
	h_run(&ht, &r);
	h_expect_good(&r);
	h_req_free(&r);
}

static size_t list_collection(enum osd_version v, uint64_t cid, uint64_t *ids, size_t max)
{
	struct h_req r;
	struct osd_list_result res;
	size_t n;

	h_req(&r, v, OSD_ACT_LIST_COLLECTION, P1, cid);
	r.cdb.length = 24 + 8 * max;
	r.data_in = (size_t)r.cdb.length;
	h_run(&ht, &r);
	h_expect_good(&r);
	ck_assert_int_eq(osd_list_decode(v, r.in, r.x.in_xferred, &res), 0);
	n = res.num_ids;
	for (size_t i = 0; i < n; i++)
		ids[i] = osd_list_id(&res, i);
	h_req_free(&r);
	return n;
}

START_TEST(collections_membership)
{
	enum osd_version v = ver(_i);
	uint64_t ids[8], coll = 0x20000;
	struct h_req r;

	h_create_partition(&ht, v, P1);
	h_create_object(&ht, v, P1, O1);
	h_create_object(&ht, v, P1, O1 + 1);
	h_req(&r, v, OSD_ACT_CREATE_COLLECTION, P1, coll);
	h_get(&r, CC, OSD_ATTR_CC_OBJECT_TYPE);
	h_run(&ht, &r);
	h_expect_good(&r);
	ck_assert_uint_eq(h_attr_u64(&r, CC, OSD_ATTR_CC_OBJECT_TYPE), OSD_OBJ_COLLECTION);
	h_req_free(&r);
	join(v, O1, 1, coll);
	join(v, O1 + 1, 7, coll);
	/* Joining a collection that does not exist names the attribute. */
	h_req(&r, v, OSD_ACT_SET_ATTRIBUTES, P1, O1);
	h_set_u64(&r, OSD_APAGE_USER_BASE + OSD_APAGE_COLLECTIONS, 2, 0x99999);
	h_run(&ht, &r);
	h_expect_sense(&r, OSD_SK_ILLEGAL_REQUEST, OSD_ASC_INVALID_FIELD_IN_PARAM_LIST);
	ck_assert_uint_eq(r.sense.num_attrs, 1);
	ck_assert_uint_eq(r.sense.attrs[0].page, OSD_APAGE_USER_BASE + OSD_APAGE_COLLECTIONS);
	ck_assert_uint_eq(r.sense.attrs[0].number, 2);
	h_req_free(&r);
	ck_assert_uint_eq(list_collection(v, 0, ids, 8), 1);
	ck_assert_uint_eq(ids[0], coll);
	ck_assert_uint_eq(list_collection(v, coll, ids, 8), 2);
	ck_assert_uint_eq(ids[0], O1);
	ck_assert_uint_eq(ids[1], O1 + 1);
	join(v, O1 + 1, 7, 0);
	ck_assert_uint_eq(list_collection(v, coll, ids, 8), 1);
	/* Not empty without FCR; FCR drops memberships, members survive. */
	h_req(&r, v, OSD_ACT_REMOVE_COLLECTION, P1, coll);
	h_run(&ht, &r);
	h_expect_sense(&r, OSD_SK_ILLEGAL_REQUEST, OSD_ASC_PARTITION_OR_COLLECTION_NOT_EMPTY);
	h_req_free(&r);
	h_req(&r, v, OSD_ACT_REMOVE_COLLECTION, P1, coll);
	r.cdb.cmd_options = 0x01;
	h_run(&ht, &r);
	h_expect_good(&r);
	h_req_free(&r);
	h_req(&r, v, OSD_ACT_GET_ATTRIBUTES, P1, O1);
	h_get(&r, OSD_APAGE_USER_BASE + OSD_APAGE_COLLECTIONS, 1);
	h_get(&r, UINFO, OSD_ATTR_UI_OBJECT_ID);
	h_run(&ht, &r);
	h_expect_good(&r);
	{
		const uint8_t *val;
		uint16_t len;

		ck_assert_int_eq(h_attr(&r, OSD_APAGE_USER_BASE + OSD_APAGE_COLLECTIONS, 1, &val, &len), 0);
	}
	ck_assert_uint_eq(h_attr_u64(&r, UINFO, OSD_ATTR_UI_OBJECT_ID), O1);
	h_req_free(&r);
}
END_TEST

START_TEST(member_commands_v2)
{
	uint64_t coll = 0x30000;
	uint8_t data[50];
	struct h_req r;
	struct osd_attr_reader rd;
	struct osd_attr a;
	size_t seen = 0;

	memset(data, 1, sizeof(data));
	h_create_partition(&ht, OSD_V2, P1);
	h_req(&r, OSD_V2, OSD_ACT_CREATE_COLLECTION, P1, coll);
	h_run(&ht, &r);
	h_expect_good(&r);
	h_req_free(&r);
	/* Page mode on a collection with no members yet (found by fuzz_target_exec:
	 * the engine indexed the empty member list). */
	h_req(&r, OSD_V2, OSD_ACT_GET_MEMBER_ATTRIBUTES, P1, coll);
	r.page_mode = 1;
	h_get(&r, OSD_APAGE_CURRENT_COMMAND, 0);
	h_run(&ht, &r);
	h_expect_good(&r);
	h_req_free(&r);
	for (uint64_t i = 0; i < 3; i++) {
		h_create_object(&ht, OSD_V2, P1, O1 + i);
		h_write(&ht, OSD_V2, P1, O1 + i, 0, data, 10 * (i + 1));
		join(OSD_V2, O1 + i, 1, coll);
	}
	h_create_object(&ht, OSD_V2, P1, O1 + 9); /* not a member */
	h_req(&r, OSD_V2, OSD_ACT_SET_MEMBER_ATTRIBUTES, P1, coll);
	h_set(&r, APP_PAGE, 1, "tag", 3);
	h_run(&ht, &r);
	h_expect_good(&r);
	h_req_free(&r);
	h_req(&r, OSD_V2, OSD_ACT_GET_MEMBER_ATTRIBUTES, P1, coll);
	h_get(&r, UINFO, OSD_ATTR_UI_LOGICAL_LENGTH);
	h_get(&r, APP_PAGE, 1);
	h_run(&ht, &r);
	h_expect_good(&r);
	ck_assert_int_eq(osd_attr_reader_init(&rd, OSD_V2, r.in + r.ret_off, r.get_alloc), 0);
	ck_assert_int_eq(rd.type, OSD_LIST_MULTI);
	while (osd_attr_reader_next(&rd, &a) == 1) {
		uint64_t idx = a.object_id - O1;

		ck_assert_uint_lt(idx, 3);
		if (a.page == UINFO)
			ck_assert_uint_eq(osd_attr_get_u64(&a, 0), 10 * (idx + 1));
		else
			ck_assert_mem_eq(a.value, "tag", 3);
		seen++;
	}
	ck_assert_uint_eq(seen, 6);
	h_req_free(&r);
	/* The non-member did not get the attribute. */
	h_req(&r, OSD_V2, OSD_ACT_GET_ATTRIBUTES, P1, O1 + 9);
	h_get(&r, APP_PAGE, 1);
	h_run(&ht, &r);
	{
		const uint8_t *val;
		uint16_t len;

		ck_assert_int_eq(h_attr(&r, APP_PAGE, 1, &val, &len), 0);
	}
	h_req_free(&r);
	h_req(&r, OSD_V2, OSD_ACT_REMOVE_MEMBER_OBJECTS, P1, coll);
	h_run(&ht, &r);
	h_expect_good(&r);
	h_req_free(&r);
	h_req(&r, OSD_V2, OSD_ACT_READ, P1, O1);
	r.cdb.length = 1;
	r.data_in = 1;
	h_run(&ht, &r);
	h_expect_field(&r, OSD_SK_ILLEGAL_REQUEST, OSD_ASC_INVALID_FIELD_IN_CDB, 24);
	h_req_free(&r);
	h_req(&r, OSD_V2, OSD_ACT_READ, P1, O1 + 9);
	r.cdb.length = 1;
	r.data_in = 1;
	h_run(&ht, &r);
	h_expect_sense(&r, OSD_SK_RECOVERED_ERROR, OSD_ASC_READ_PAST_END_OF_OBJECT);
	h_req_free(&r);
}
END_TEST

/* A query list continuation segment with one range criterion on APP_PAGE/2. */
static void query_segment(struct h_req *r, uint64_t lo, uint64_t hi)
{
	uint8_t *s = calloc(1, 96);
	size_t desc = 40, body = desc + 8, entry = body + 4;

	s[0] = 1;
	osd__put_be16(s + 2, OSD_ACT_QUERY);
	osd__put_be16(s + desc, 0x0002);
	s[body] = 1; /* match all */
	osd__put_be16(s + entry + 2, 4 + 4 + 2 + 8 + 2 + 8);
	osd__put_be32(s + entry + 4, APP_PAGE);
	osd__put_be32(s + entry + 8, 2);
	osd__put_be16(s + entry + 12, 8);
	osd__put_be64(s + entry + 14, lo);
	osd__put_be16(s + entry + 22, 8);
	osd__put_be64(s + entry + 24, hi);
	/* query header 4 + entry 32 = 36, zero padded inside to 40 (pad must be 0) */
	osd__put_be32(s + desc + 4, 40);
	r->cont = s;
	r->cont_len = 88;
}

START_TEST(query_v2)
{
	uint64_t coll = 0x30000, vals[] = { 5, 10, 20, 30 };
	struct h_req r;
	struct osd_list_result res;

	h_create_partition(&ht, OSD_V2, P1);
	h_req(&r, OSD_V2, OSD_ACT_CREATE_COLLECTION, P1, coll);
	h_run(&ht, &r);
	h_req_free(&r);
	for (uint64_t i = 0; i < 4; i++) {
		h_create_object(&ht, OSD_V2, P1, O1 + i);
		h_req(&r, OSD_V2, OSD_ACT_SET_ATTRIBUTES, P1, O1 + i);
		h_set_u64(&r, APP_PAGE, 2, vals[i]);
		h_set_u64(&r, OSD_APAGE_USER_BASE + OSD_APAGE_COLLECTIONS, 1, coll);
		h_run(&ht, &r);
		h_expect_good(&r);
		h_req_free(&r);
	}
	h_req(&r, OSD_V2, OSD_ACT_QUERY, P1, coll);
	query_segment(&r, 6, 20);
	r.cdb.length = 12 + 8 * 4;
	r.data_in = (size_t)r.cdb.length;
	h_run(&ht, &r);
	h_expect_good(&r);
	ck_assert_int_eq(osd_query_result_decode(r.in, r.x.in_xferred, &res), 0);
	ck_assert_uint_eq(res.num_ids, 2);
	ck_assert_uint_eq(osd_list_id(&res, 0), O1 + 1);
	ck_assert_uint_eq(osd_list_id(&res, 1), O1 + 2);
	h_req_free(&r);
	/* A continuation on a command that takes none is an invalid CDB field. */
	h_req(&r, OSD_V2, OSD_ACT_GET_ATTRIBUTES, P1, coll);
	query_segment(&r, 0, 1);
	h_run(&ht, &r);
	h_expect_field(&r, OSD_SK_ILLEGAL_REQUEST, OSD_ASC_INVALID_FIELD_IN_CDB, 48);
	h_req_free(&r);
}
END_TEST

START_TEST(create_and_write)
{
	enum osd_version v = ver(_i);
	uint8_t data[777], back[777];
	struct h_req r;

	fill_pattern(data, sizeof(data), 9);
	h_create_partition(&ht, v, P1);
	h_req(&r, v, OSD_ACT_CREATE_AND_WRITE, P1, 0);
	r.payload = data;
	r.payload_len = sizeof(data);
	h_get(&r, CC, OSD_ATTR_CC_OBJECT_ID);
	h_run(&ht, &r);
	h_expect_good(&r);
	ck_assert_uint_eq(h_attr_u64(&r, CC, OSD_ATTR_CC_OBJECT_ID), O1);
	h_req_free(&r);
	ck_assert_uint_eq(h_read(&ht, v, P1, O1, 0, back, sizeof(back)), sizeof(back));
	ck_assert_mem_eq(back, data, sizeof(data));
}
END_TEST

START_TEST(quota_enforced)
{
	enum osd_version v = ver(_i);
	uint8_t data[8192], back[16];
	struct h_req r;

	memset(data, 0x11, sizeof(data));
	h_create_partition(&ht, v, P1);
	h_create_object(&ht, v, P1, O1);
	h_write(&ht, v, P1, O1, 0, "original", 8);
	h_req(&r, v, OSD_ACT_SET_ATTRIBUTES, P1, 0);
	h_set_u64(&r, OSD_APAGE_PARTITION_BASE + OSD_APAGE_QUOTAS, OSD_ATTR_Q_PARTITION_CAPACITY, 4096);
	h_get(&r, OSD_APAGE_PARTITION_BASE + OSD_APAGE_QUOTAS, OSD_ATTR_Q_PARTITION_CAPACITY);
	h_run(&ht, &r);
	h_expect_good(&r);
	ck_assert_uint_eq(h_attr_u64(&r, OSD_APAGE_PARTITION_BASE + OSD_APAGE_QUOTAS,
				     OSD_ATTR_Q_PARTITION_CAPACITY), 4096);
	h_req_free(&r);
	h_req(&r, v, OSD_ACT_WRITE, P1, O1);
	r.payload = data;
	r.payload_len = sizeof(data);
	h_run(&ht, &r);
	h_expect_sense(&r, OSD_SK_DATA_PROTECT, OSD_ASC_QUOTA_ERROR);
	h_req_free(&r);
	ck_assert_uint_eq(h_read(&ht, v, P1, O1, 0, back, 8), 8);
	ck_assert_mem_eq(back, "original", 8);
}
END_TEST

START_TEST(format_wipes_keeps_identity)
{
	enum osd_version v = ver(_i);
	uint8_t before[OSD_SYSTEM_ID_LEN], after[OSD_SYSTEM_ID_LEN];
	struct h_req r;

	osd_target_system_id(ht.tgt, before);
	h_create_partition(&ht, v, P1);
	h_create_object(&ht, v, P1, O1);
	h_req(&r, v, OSD_ACT_FORMAT_OSD, 0, 0);
	h_set(&r, OSD_APAGE_ROOT_BASE + OSD_APAGE_INFORMATION, OSD_ATTR_RI_OSD_NAME, "osd-a", 5);
	h_run(&ht, &r);
	h_expect_good(&r);
	h_req_free(&r);
	h_req(&r, v, OSD_ACT_GET_ATTRIBUTES, 0, 0);
	h_get(&r, OSD_APAGE_ROOT_BASE + OSD_APAGE_INFORMATION, OSD_ATTR_RI_NUM_PARTITIONS);
	h_get(&r, OSD_APAGE_ROOT_BASE + OSD_APAGE_INFORMATION, OSD_ATTR_RI_SYSTEM_ID);
	h_get(&r, OSD_APAGE_ROOT_BASE + OSD_APAGE_INFORMATION, OSD_ATTR_RI_OSD_NAME);
	h_run(&ht, &r);
	h_expect_good(&r);
	ck_assert_uint_eq(h_attr_u64(&r, OSD_APAGE_ROOT_BASE + OSD_APAGE_INFORMATION,
				     OSD_ATTR_RI_NUM_PARTITIONS), 0);
	{
		const uint8_t *val;
		uint16_t len;

		ck_assert(h_attr(&r, OSD_APAGE_ROOT_BASE + 1, OSD_ATTR_RI_SYSTEM_ID, &val, &len));
		ck_assert_uint_eq(len, OSD_SYSTEM_ID_LEN);
		ck_assert_mem_eq(val, before, OSD_SYSTEM_ID_LEN);
		ck_assert(h_attr(&r, OSD_APAGE_ROOT_BASE + 1, OSD_ATTR_RI_OSD_NAME, &val, &len));
		ck_assert_uint_eq(len, 5);
		ck_assert_mem_eq(val, "osd-a", 5);
	}
	h_req_free(&r);
	osd_target_system_id(ht.tgt, after);
	ck_assert_mem_eq(before, after, OSD_SYSTEM_ID_LEN);
}
END_TEST

START_TEST(persistence_across_reopen)
{
	enum osd_version v = ver(_i);
	uint8_t data[5000], back[5000], id1[OSD_SYSTEM_ID_LEN], id2[OSD_SYSTEM_ID_LEN];
	struct h_req r;

	fill_pattern(data, sizeof(data), 5);
	osd_target_system_id(ht.tgt, id1);
	h_create_partition(&ht, v, P1);
	h_create_object(&ht, v, P1, O1);
	h_write(&ht, v, P1, O1, 0, data, sizeof(data));
	h_req(&r, v, OSD_ACT_SET_ATTRIBUTES, P1, O1);
	h_set(&r, APP_PAGE, 1, "persist", 7);
	h_run(&ht, &r);
	h_expect_good(&r);
	h_req_free(&r);
	h_target_reopen(&ht);
	osd_target_system_id(ht.tgt, id2);
	ck_assert_mem_eq(id1, id2, OSD_SYSTEM_ID_LEN);
	ck_assert_uint_eq(h_read(&ht, v, P1, O1, 0, back, sizeof(back)), sizeof(back));
	ck_assert_mem_eq(back, data, sizeof(data));
	h_req(&r, v, OSD_ACT_GET_ATTRIBUTES, P1, O1);
	h_get(&r, APP_PAGE, 1);
	h_run(&ht, &r);
	{
		const uint8_t *val;
		uint16_t len;

		ck_assert(h_attr(&r, APP_PAGE, 1, &val, &len));
		ck_assert_uint_eq(len, 7);
		ck_assert_mem_eq(val, "persist", 7);
	}
	h_req_free(&r);
}
END_TEST

START_TEST(object_count_quota)
{
	enum osd_version v = ver(_i);
	struct h_req r;

	h_create_partition(&ht, v, P1);
	h_create_object(&ht, v, P1, O1);
	h_req(&r, v, OSD_ACT_SET_ATTRIBUTES, P1, 0);
	h_set_u64(&r, OSD_APAGE_PARTITION_BASE + OSD_APAGE_QUOTAS,
		  OSD_ATTR_Q_PARTITION_OBJECT_COUNT, 2);
	h_run(&ht, &r);
	h_expect_good(&r);
	h_req_free(&r);
	h_req(&r, v, OSD_ACT_CREATE, P1, 0);
	r.cdb.num_objects = 2;
	h_run(&ht, &r);
	h_expect_sense(&r, OSD_SK_DATA_PROTECT, OSD_ASC_QUOTA_ERROR);
	ck_assert_ptr_nonnull(strstr(osd_target_error(ht.tgt), "CREATE"));
	h_req_free(&r);
	h_create_object(&ht, v, P1, O1 + 1);
	h_req(&r, v, OSD_ACT_CREATE, P1, 0);
	h_run(&ht, &r);
	h_expect_sense(&r, OSD_SK_DATA_PROTECT, OSD_ASC_QUOTA_ERROR);
	h_req_free(&r);
}
END_TEST

START_TEST(open_errors)
{
	struct osd_target_options o = OSD_TARGET_OPTIONS_INIT;
	osd_target *second = NULL;
	char empty[300];

	/* One opener at a time. */
	ck_assert_int_eq(osd_target_open(&second, ht.dir, NULL), -EBUSY);
	ck_assert_ptr_null(second);
	/* No store and create = 0. */
	snprintf(empty, sizeof(empty), "%s/none", ht.dir);
	o.create = 0;
	ck_assert_int_eq(osd_target_open(&second, empty, &o), -ENOENT);
	o.version = 99;
	ck_assert_int_eq(osd_target_open(&second, empty, &o), -EINVAL);
	ck_assert_int_eq(osd_target_execute(ht.tgt, NULL, NULL, 0), -EINVAL);
	osd_target_close(NULL);
}
END_TEST

START_TEST(set_master_key_refused)
{
	enum osd_version v = ver(_i);
	struct h_req r;

	h_req(&r, v, OSD_ACT_SET_MASTER_KEY, 0, 0);
	h_run(&ht, &r);
	h_expect_field(&r, OSD_SK_ILLEGAL_REQUEST, OSD_ASC_INVALID_FIELD_IN_CDB, 11);
	h_req_free(&r);
}
END_TEST

/* Execute hand-written CDB bytes (no encoder involved). */
static struct osd_xfer raw_exec(const uint8_t *cdb, size_t len, uint8_t *in, size_t in_len)
{
	struct iovec iov = { in, in_len };
	struct osd_xfer x = { 0 };

	x.cdb = cdb;
	x.cdb_len = len;
	x.in_iov = in_len ? &iov : NULL;
	x.in_iovcnt = in_len ? 1 : 0;
	x.in_len = in_len;
	ck_assert_int_eq(osd_target_execute(ht.tgt, &x, NULL, 0), 0);
	return x;
}

/* CDB fields at the offsets of docs/protocol.md §3.1; unused data offsets 0xFFFFFFFF,
 * no capability. */
static size_t hand_cdb(uint8_t *c, int v2, uint16_t sa, uint64_t pid, uint64_t alloc)
{
	size_t len = v2 ? 236 : 200;

	memset(c, 0, len);
	c[0] = 0x7F;
	c[7] = v2 ? 0xE4 : 0xC0;
	osd__put_be16(c + 8, v2 ? sa : (uint16_t)(sa & ~0x80));
	c[11] = 0x30; /* list mode, no lists */
	osd__put_be64(c + 16, pid);
	osd__put_be64(c + (v2 ? 32 : 36), alloc);
	osd__put_be32(c + 56, 0xFFFFFFFF);
	osd__put_be32(c + 64, 0xFFFFFFFF);
	osd__put_be32(c + 72, 0xFFFFFFFF);
	/* DATA-IN / DATA-OUT ICV OFFSET close the security parameters. */
	osd__put_be32(c + len - 8, 0xFFFFFFFF);
	osd__put_be32(c + len - 4, 0xFFFFFFFF);
	return len;
}

START_TEST(hand_written_vectors)
{
	int v2 = _i;
	uint8_t cdb[236], in[64];
	struct osd_xfer x;
	size_t len = hand_cdb(cdb, v2, 0x888B, 0x10000, 0);
	static const uint8_t id[8] = { 0, 0, 0, 0, 0, 1, 0, 0 };

	x = raw_exec(cdb, len, NULL, 0);
	ck_assert_uint_eq(x.status, OSD_STATUS_GOOD);
	len = hand_cdb(cdb, v2, 0x8883, 0, 32);
	memset(in, 0xEE, sizeof(in));
	x = raw_exec(cdb, len, in, 32);
	ck_assert_uint_eq(x.status, OSD_STATUS_GOOD);
	ck_assert_uint_eq(x.in_xferred, 32);
	/* ADDITIONAL LENGTH 24, no continuation, a list id, format/ROOT byte, one id. */
	ck_assert_uint_eq(osd__get_be64(in), 24);
	ck_assert_uint_eq(osd__get_be64(in + 8), 0);
	ck_assert_uint_ne(osd__get_be32(in + 16), 0);
	ck_assert_uint_eq(in[20] | in[21] | in[22], 0);
	ck_assert_uint_eq(in[23], v2 ? 0x04 : 0x01);
	ck_assert_mem_eq(in + 24, id, 8);
}
END_TEST

static Suite *commands_suite(void)
{
	Suite *s = suite_create("target_commands");
	TCase *tc = tcase_create("commands");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, create_partition_ids, 0, 2);
	tcase_add_loop_test(tc, create_object_ids, 0, 2);
	tcase_add_loop_test(tc, write_read_bytes, 0, 2);
	tcase_add_loop_test(tc, short_read_recovered, 0, 2);
	tcase_add_loop_test(tc, append_reports_address, 0, 2);
	tcase_add_test(tc, clear_and_punch_v2);
	tcase_add_loop_test(tc, remove_and_missing, 0, 2);
	tcase_add_loop_test(tc, remove_partition_not_empty, 0, 2);
	tcase_add_loop_test(tc, list_with_continuation, 0, 2);
	tcase_add_loop_test(tc, list_change_flag, 0, 2);
	tcase_add_loop_test(tc, flush_family, 0, 2);
	tcase_add_loop_test(tc, collections_membership, 0, 2);
	tcase_add_test(tc, member_commands_v2);
	tcase_add_test(tc, query_v2);
	tcase_add_loop_test(tc, create_and_write, 0, 2);
	tcase_add_loop_test(tc, quota_enforced, 0, 2);
	tcase_add_loop_test(tc, format_wipes_keeps_identity, 0, 2);
	tcase_add_loop_test(tc, persistence_across_reopen, 0, 2);
	tcase_add_loop_test(tc, object_count_quota, 0, 2);
	tcase_add_test(tc, open_errors);
	tcase_add_loop_test(tc, set_master_key_refused, 0, 2);
	tcase_add_loop_test(tc, hand_written_vectors, 0, 2);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(commands_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

/* Integration: every command to a real osd_target in a temporary
 * directory, in both OSD versions, through the transport named by the first
 * argument or $OSD_TEST_TRANSPORT: the loopback, or iSCSI to an in-process
 * osd_target_iscsi server on 127.0.0.1 with digests off or on (see
 * target_fixture.h). CTest runs the suite once per transport. */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <osd/sys/transport.h>
#include "target_fixture.h"

static struct tgt_fixture fx;
static osd_dev *dev;
static enum osd_version ver;

#define UI_PAGE (OSD_APAGE_USER_BASE + OSD_APAGE_INFORMATION)
#define APP_PAGE 0x10003u

static void up(int v)
{
	struct osd_dev_options o = OSD_DEV_OPTIONS_INIT;

	ver = (enum osd_version)v;
	o.osd_version = (enum osd_version_select)v;
	fixture_up(&fx, &o);
	dev = fx.dev;
}

static void down(void)
{
	fixture_down(&fx);
	dev = NULL;
}

/* Execute and free; the message names the failure. */
static int run(osd_req *req)
{
	int rc = osd_req_execute(req);

	if (rc && rc != -ENOENT && rc != -EEXIST && rc != -ENOTEMPTY && rc != -EACCES)
		fprintf(stderr, "unexpected: %s\n", osd_req_error(req));
	osd_req_free(req);
	return rc;
}

#define OK(call) do { osd_req *r_; ck_assert_int_eq((call), 0); \
	int rc_ = osd_req_execute(r_); \
	ck_assert_msg(rc_ == 0, "%s: %s", #call, osd_req_error(r_)); osd_req_free(r_); } while (0)
/* the macro's request variable */
#define R (&r_)

static void format_osd(void)
{
	OK(osd_req_format(R, dev, 0));
}

static uint64_t new_partition(void)
{
	struct osd_obj_id made;
	osd_req *req;

	ck_assert_int_eq(osd_req_create_partition(&req, dev, 0), 0);
	ck_assert_msg(osd_req_execute(req) == 0, "%s", osd_req_error(req));
	ck_assert_int_eq(osd_req_created_id(req, &made), 0);
	ck_assert_uint_ge(made.partition, OSD_FIRST_ID);
	osd_req_free(req);
	return made.partition;
}

static struct osd_obj_id new_object(uint64_t pid)
{
	struct osd_obj_id want = { pid, 0 }, made;
	osd_req *req;

	ck_assert_int_eq(osd_req_create(&req, dev, &want, 1), 0);
	ck_assert_msg(osd_req_execute(req) == 0, "%s", osd_req_error(req));
	ck_assert_int_eq(osd_req_created_id(req, &made), 0);
	ck_assert_uint_eq(made.partition, pid);
	ck_assert_uint_ge(made.id, OSD_FIRST_ID);
	osd_req_free(req);
	return made;
}

static void fill(uint8_t *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(i * 31 + seed);
}

START_TEST(write_read_scatter_gather)
{
	uint8_t data[10000], back[10100];
	struct iovec out[3] = { { data, 1 }, { data + 1, 4095 }, { data + 4096, 5904 } };
	struct iovec in[2] = { { back, 7 }, { back + 7, sizeof(back) - 7 } };
	struct osd_obj_id obj;
	uint64_t len;
	osd_req *req;

	up(_i);
	format_osd();
	obj = new_object(new_partition());
	fill(data, sizeof(data), 7);
	OK(osd_req_write(R, dev, &obj, 100, out, 3));
	ck_assert_int_eq(osd_get_attr_u64(dev, &obj, UI_PAGE, OSD_ATTR_UI_LOGICAL_LENGTH, &len), 0);
	ck_assert_uint_eq(len, 10100);
	/* read everything from 0: the first 100 bytes are a hole */
	memset(back, 0xEE, sizeof(back));
	ck_assert_int_eq(osd_req_read(&req, dev, &obj, 0, in, 2), 0);
	ck_assert_msg(osd_req_execute(req) == 0, "%s", osd_req_error(req));
	ck_assert_int_eq(osd_req_is_short(req), 0);
	ck_assert_uint_eq(osd_req_bytes_read(req), sizeof(back));
	osd_req_free(req);
	for (int i = 0; i < 100; i++)
		ck_assert_uint_eq(back[i], 0);
	ck_assert_mem_eq(back + 100, data, sizeof(data));
	/* a short read past the end */
	memset(back, 0xEE, sizeof(back));
	ck_assert_int_eq(osd_req_read(&req, dev, &obj, 10000, in, 2), 0);
	ck_assert_msg(osd_req_execute(req) == 0, "%s", osd_req_error(req));
	ck_assert_int_eq(osd_req_is_short(req), 1);
	ck_assert_uint_eq(osd_req_bytes_read(req), 100);
	ck_assert_mem_eq(back, data + 9900, 100);
	osd_req_free(req);
}
END_TEST

START_TEST(create_and_write_append_clear_punch)
{
	uint8_t a[3000], b[500], back[3500];
	struct iovec ia = { a, sizeof(a) }, ib = { b, sizeof(b) }, ir = { back, sizeof(back) };
	struct osd_obj_id obj, want;
	uint64_t at, pid;
	osd_req *req;

	up(_i);
	format_osd();
	pid = new_partition();
	fill(a, sizeof(a), 1);
	fill(b, sizeof(b), 2);
	want.partition = pid;
	want.id = 0x20000;
	ck_assert_int_eq(osd_req_create_and_write(&req, dev, &want, 0, &ia, 1), 0);
	ck_assert_msg(osd_req_execute(req) == 0, "%s", osd_req_error(req));
	ck_assert_int_eq(osd_req_created_id(req, &obj), 0);
	ck_assert_uint_eq(obj.id, 0x20000);
	osd_req_free(req);
	ck_assert_int_eq(osd_req_append(&req, dev, &obj, &ib, 1), 0);
	ck_assert_msg(osd_req_execute(req) == 0, "%s", osd_req_error(req));
	ck_assert_int_eq(osd_req_append_offset(req, &at), 0);
	ck_assert_uint_eq(at, sizeof(a));
	osd_req_free(req);
	OK(osd_req_read(R, dev, &obj, 0, &ir, 1));
	ck_assert_mem_eq(back, a, sizeof(a));
	ck_assert_mem_eq(back + sizeof(a), b, sizeof(b));
	if (ver == OSD_V2) {
		OK(osd_req_clear(R, dev, &obj, 10, 20));
		OK(osd_req_punch(R, dev, &obj, 1000, 100));
		OK(osd_req_read(R, dev, &obj, 0, &ir, 1));
		memset(a + 10, 0, 20);
		memset(a + 1000, 0, 100);
		ck_assert_mem_eq(back, a, sizeof(a));
	} else {
		ck_assert_int_eq(osd_req_clear(&req, dev, &obj, 10, 20), -ENOTSUP);
		ck_assert_int_eq(osd_req_punch(&req, dev, &obj, 10, 20), -ENOTSUP);
	}
	/* create with a requested id that exists */
	ck_assert_int_eq(osd_req_create(&req, dev, &obj, 1), 0);
	ck_assert_int_eq(run(req), -EEXIST);
}
END_TEST

START_TEST(attributes)
{
	struct osd_obj_id obj, root = { 0, 0 };
	uint8_t v[40], data[64];
	struct iovec iov = { data, sizeof(data) };
	struct osd_attr at;
	uint64_t n;
	size_t got;
	osd_req *req;
	int count = 0, rc;

	up(_i);
	format_osd();
	obj = new_object(new_partition());
	ck_assert_int_eq(osd_set_attr(dev, &obj, APP_PAGE, 1, "inode-bytes", 11), 0);
	ck_assert_int_eq(osd_get_attr(dev, &obj, APP_PAGE, 1, v, sizeof(v), &got), 0);
	ck_assert_uint_eq(got, 11);
	ck_assert_mem_eq(v, "inode-bytes", 11);
	ck_assert_int_eq(osd_set_attr_u64(dev, &obj, APP_PAGE, 2, 0x1122334455667788ull), 0);
	ck_assert_int_eq(osd_get_attr_u64(dev, &obj, APP_PAGE, 2, &n), 0);
	ck_assert_uint_eq(n, 0x1122334455667788ull);

	/* WRITE with piggy-backed set and get: the get sees the new values */
	fill(data, sizeof(data), 3);
	ck_assert_int_eq(osd_req_write(&req, dev, &obj, 0, &iov, 1), 0);
	ck_assert_int_eq(osd_req_add_set_attr(req, APP_PAGE, 3, "xyz", 3), 0);
	ck_assert_int_eq(osd_req_add_get_attr(req, APP_PAGE, 3), 0);
	ck_assert_int_eq(osd_req_add_get_attr(req, UI_PAGE, OSD_ATTR_UI_LOGICAL_LENGTH), 0);
	ck_assert_msg(osd_req_execute(req) == 0, "%s", osd_req_error(req));
	ck_assert_int_eq(osd_req_find_attr(req, APP_PAGE, 3, &at), 0);
	ck_assert_uint_eq(at.length, 3);
	ck_assert_mem_eq(at.value, "xyz", 3);
	ck_assert_int_eq(osd_req_find_attr(req, UI_PAGE, OSD_ATTR_UI_LOGICAL_LENGTH, &at), 0);
	ck_assert_uint_eq(osd_attr_get_u64(&at, 0), sizeof(data));
	osd_req_free(req);

	/* the whole application page */
	ck_assert_int_eq(osd_req_get_attributes(&req, dev, &obj), 0);
	ck_assert_int_eq(osd_req_add_get_attr(req, APP_PAGE, OSD_ATTR_ALL), 0);
	ck_assert_msg(osd_req_execute(req) == 0, "%s", osd_req_error(req));
	while ((rc = osd_req_next_attr(req, &at)) == 1)
		if (at.page == APP_PAGE && at.number >= 1 && at.number <= 3)
			count++;
	ck_assert_int_eq(rc, 0);
	ck_assert_int_eq(count, 3);
	osd_req_free(req);

	/* logical length is settable: truncate */
	ck_assert_int_eq(osd_set_attr_u64(dev, &obj, UI_PAGE, OSD_ATTR_UI_LOGICAL_LENGTH, 10), 0);
	ck_assert_int_eq(osd_get_attr_u64(dev, &obj, UI_PAGE, OSD_ATTR_UI_LOGICAL_LENGTH, &n), 0);
	ck_assert_uint_eq(n, 10);

	/* delete with length 0: then undefined */
	ck_assert_int_eq(osd_set_attr(dev, &obj, APP_PAGE, 1, NULL, 0), 0);
	ck_assert_int_eq(osd_get_attr(dev, &obj, APP_PAGE, 1, v, sizeof(v), &got), -ENOENT);
	ck_assert_ptr_nonnull(strstr(osd_dev_error(dev), "not defined"));

	/* root information */
	ck_assert_int_eq(osd_get_attr_u64(dev, &root, OSD_APAGE_ROOT_BASE + OSD_APAGE_INFORMATION,
					  OSD_ATTR_RI_NUM_PARTITIONS, &n), 0);
	ck_assert_uint_eq(n, 1);
	uint8_t sid[OSD_SYSTEM_ID_LEN], tsid[OSD_SYSTEM_ID_LEN];

	ck_assert_int_eq(osd_dev_system_id(dev, sid), 0);
	osd_target_system_id(fx.tgt, tsid);
	ck_assert_mem_eq(sid, tsid, OSD_SYSTEM_ID_LEN);
}
END_TEST

START_TEST(page_mode_current_command)
{
	struct osd_obj_id obj;
	const uint8_t *pg;
	size_t len;
	osd_req *req;

	up(_i);
	format_osd();
	obj = new_object(new_partition());
	/* page mode: set one value and fetch the user object timestamps page */
	ck_assert_int_eq(osd_req_set_attributes(&req, dev, &obj), 0);
	ck_assert_int_eq(osd_req_get_page(req, OSD_APAGE_USER_BASE + OSD_APAGE_TIMESTAMPS, 256), 0);
	ck_assert_int_eq(osd_req_add_set_attr(req, APP_PAGE, 9, "pm", 2), 0);
	ck_assert_msg(osd_req_execute(req) == 0, "%s", osd_req_error(req));
	ck_assert_int_eq(osd_req_page(req, &pg, &len), 0);
	ck_assert_uint_ge(len, 8);
	ck_assert_uint_eq((uint32_t)pg[0] << 24 | pg[1] << 16 | pg[2] << 8 | pg[3],
			  OSD_APAGE_USER_BASE + OSD_APAGE_TIMESTAMPS);
	osd_req_free(req);
	uint8_t v[4];
	size_t got;

	ck_assert_int_eq(osd_get_attr(dev, &obj, APP_PAGE, 9, v, sizeof(v), &got), 0);
	ck_assert_uint_eq(got, 2);
	ck_assert_mem_eq(v, "pm", 2);
}
END_TEST

struct collect {
	uint64_t ids[400];
	unsigned n;
};

static int collect_id(uint64_t id, void *p)
{
	struct collect *c = p;

	if (c->n < 400)
		c->ids[c->n] = id;
	c->n++;
	return 0;
}

START_TEST(list_with_continuations)
{
	struct osd_obj_id root = { 0, 0 }, part, want;
	struct osd_list_cursor cur = { 0, 0 };
	struct osd_list_result res;
	struct collect c = { .n = 0 };
	unsigned total = 0, rounds = 0;
	uint64_t pid, p2;
	osd_req *req;

	up(_i);
	format_osd();
	pid = new_partition();
	p2 = new_partition();
	want.partition = pid;
	want.id = 0;
	ck_assert_int_eq(osd_req_create(&req, dev, &want, 100), 0);
	ck_assert_msg(osd_req_execute(req) == 0, "%s", osd_req_error(req));
	osd_req_free(req);
	for (int i = 0; i < 20; i++)
		new_object(pid);
	/* 24 + 8 * 16: several rounds */
	part.partition = pid;
	part.id = 0;
	do {
		ck_assert_int_eq(osd_req_list(&req, dev, pid, &cur, 24 + 8 * 16), 0);
		ck_assert_msg(osd_req_execute(req) == 0, "%s", osd_req_error(req));
		ck_assert_int_eq(osd_req_list_result(req, &res, &cur), 0);
		total += (unsigned)res.num_ids;
		rounds++;
		osd_req_free(req);
	} while (cur.next_id && rounds < 100);
	ck_assert_uint_eq(total, 120);
	ck_assert_uint_ge(rounds, 8);
	ck_assert_int_eq(osd_list_foreach(dev, OSD_ACT_LIST, &part, collect_id, &c), 0);
	ck_assert_uint_eq(c.n, 120);
	for (unsigned i = 1; i < c.n; i++)
		ck_assert_uint_gt(c.ids[i], c.ids[i - 1]);
	c.n = 0;
	ck_assert_int_eq(osd_list_foreach(dev, OSD_ACT_LIST, &root, collect_id, &c), 0);
	ck_assert_uint_eq(c.n, 2);
	ck_assert_uint_eq(c.ids[0], pid);
	ck_assert_uint_eq(c.ids[1], p2);
}
END_TEST

START_TEST(collections_and_members)
{
	struct osd_obj_id coll, obj1, obj2, want;
	struct collect c = { .n = 0 };
	uint64_t pid, n;
	osd_req *req;

	up(_i);
	format_osd();
	pid = new_partition();
	obj1 = new_object(pid);
	obj2 = new_object(pid);
	want.partition = pid;
	want.id = 0;
	ck_assert_int_eq(osd_req_create_collection(&req, dev, &want), 0);
	ck_assert_msg(osd_req_execute(req) == 0, "%s", osd_req_error(req));
	ck_assert_int_eq(osd_req_created_id(req, &coll), 0);
	osd_req_free(req);
	/* membership: user-object collections page, one attribute per collection */
	ck_assert_int_eq(osd_set_attr_u64(dev, &obj1, OSD_APAGE_USER_BASE + OSD_APAGE_COLLECTIONS,
					  1, coll.id), 0);
	ck_assert_int_eq(osd_set_attr_u64(dev, &obj2, OSD_APAGE_USER_BASE + OSD_APAGE_COLLECTIONS,
					  1, coll.id), 0);
	ck_assert_int_eq(osd_list_foreach(dev, OSD_ACT_LIST_COLLECTION, &coll, collect_id, &c), 0);
	ck_assert_uint_eq(c.n, 2);
	OK(osd_req_flush_collection(R, dev, &coll, OSD_FLUSH_DATA_AND_ATTRS));
	if (ver == OSD_V2) {
		struct osd_list_result res;
		uint8_t lo[8] = { 0, 0, 0, 0, 0, 0, 0, 5 }, hi[8] = { 0, 0, 0, 0, 0, 0, 0, 5 };
		struct osd_query_criterion q = { APP_PAGE, 7, lo, 8, hi, 8 };

		ck_assert_int_eq(osd_req_set_member_attributes(&req, dev, &coll), 0);
		ck_assert_int_eq(osd_req_add_set_attr_u64(req, APP_PAGE, 5, 42), 0);
		ck_assert_msg(osd_req_execute(req) == 0, "%s", osd_req_error(req));
		osd_req_free(req);
		ck_assert_int_eq(osd_get_attr_u64(dev, &obj2, APP_PAGE, 5, &n), 0);
		ck_assert_uint_eq(n, 42);
		ck_assert_int_eq(osd_set_attr_u64(dev, &obj2, APP_PAGE, 7, 5), 0);
		ck_assert_int_eq(osd_req_query(&req, dev, &coll, OSD_QUERY_ALL, &q, 1, 0), 0);
		ck_assert_msg(osd_req_execute(req) == 0, "%s", osd_req_error(req));
		ck_assert_int_eq(osd_req_query_result(req, &res), 0);
		ck_assert_uint_eq(res.num_ids, 1);
		ck_assert_uint_eq(osd_list_id(&res, 0), obj2.id);
		osd_req_free(req);
	}
	if (ver == OSD_V2) {
		struct osd_attr at;
		int seen1 = 0, seen2 = 0, rc;

		ck_assert_int_eq(osd_req_get_member_attributes(&req, dev, &coll), 0);
		ck_assert_int_eq(osd_req_add_get_attr(req, APP_PAGE, 5), 0);
		ck_assert_msg(osd_req_execute(req) == 0, "%s", osd_req_error(req));
		while ((rc = osd_req_next_attr(req, &at)) == 1) {
			ck_assert_uint_eq(at.page, APP_PAGE);
			ck_assert_uint_eq(osd_attr_get_u64(&at, 0), 42);
			seen1 += at.object_id == obj1.id;
			seen2 += at.object_id == obj2.id;
		}
		ck_assert_int_eq(rc, 0);
		ck_assert_int_eq(seen1, 1);
		ck_assert_int_eq(seen2, 1);
		osd_req_free(req);
	}
	/* a non-empty collection needs FCR */
	ck_assert_int_eq(osd_req_remove_collection(&req, dev, &coll, 0), 0);
	ck_assert_int_eq(run(req), -ENOTEMPTY);
	OK(osd_req_remove_collection(R, dev, &coll, OSD_REMOVE_COLLECTION_FORCE));
	ck_assert_int_eq(osd_get_attr_u64(dev, &obj1, UI_PAGE, OSD_ATTR_UI_LOGICAL_LENGTH, &n), 0);
	if (ver == OSD_V2) {
		/* REMOVE MEMBER OBJECTS removes the members, not the others */
		ck_assert_int_eq(osd_req_create_collection(&req, dev, &want), 0);
		ck_assert_msg(osd_req_execute(req) == 0, "%s", osd_req_error(req));
		ck_assert_int_eq(osd_req_created_id(req, &coll), 0);
		osd_req_free(req);
		ck_assert_int_eq(osd_set_attr_u64(dev, &obj1,
						  OSD_APAGE_USER_BASE + OSD_APAGE_COLLECTIONS, 1, coll.id), 0);
		OK(osd_req_remove_member_objects(R, dev, &coll));
		ck_assert_int_eq(osd_get_attr_u64(dev, &obj1, UI_PAGE, OSD_ATTR_UI_LOGICAL_LENGTH, &n),
				 -ENOENT);
		ck_assert_int_eq(osd_get_attr_u64(dev, &obj2, UI_PAGE, OSD_ATTR_UI_LOGICAL_LENGTH, &n), 0);
	} else {
		ck_assert_int_eq(osd_req_remove_member_objects(&req, dev, &coll), -ENOTSUP);
		ck_assert_int_eq(osd_req_get_member_attributes(&req, dev, &coll), -ENOTSUP);
	}
}
END_TEST

START_TEST(flush_remove_and_errors)
{
	struct osd_obj_id obj, missing;
	uint8_t b[4] = { 1, 2, 3, 4 };
	struct iovec iov = { b, 4 };
	osd_req *req;
	uint64_t pid;

	up(_i);
	format_osd();
	pid = new_partition();
	obj = new_object(pid);
	OK(osd_req_write(R, dev, &obj, 0, &iov, 1));
	OK(osd_req_flush(R, dev, &obj, OSD_FLUSH_DATA_AND_ATTRS, 0, 0));
	OK(osd_req_flush(R, dev, &obj, OSD_FLUSH_ATTRS, 0, 0));
	if (ver == OSD_V2)
		OK(osd_req_flush(R, dev, &obj, OSD_FLUSH_RANGE, 0, 4));
	OK(osd_req_flush_partition(R, dev, pid, OSD_FLUSH_RANGE));
	OK(osd_req_flush_osd(R, dev, OSD_FLUSH_DATA_AND_ATTRS));
	/* a partition with objects cannot go */
	ck_assert_int_eq(osd_req_remove_partition(&req, dev, pid), 0);
	ck_assert_int_eq(run(req), -ENOTEMPTY);
	OK(osd_req_remove(R, dev, &obj));
	/* the object is gone: a readable -ENOENT */
	ck_assert_int_eq(osd_req_read(&req, dev, &obj, 0, &iov, 1), 0);
	ck_assert_int_eq(osd_req_execute(req), -ENOENT);
	ck_assert_ptr_nonnull(osd_req_sense(req));
	ck_assert_msg(strstr(osd_req_error(req), "READ") != NULL, "%s", osd_req_error(req));
	ck_assert_ptr_nonnull(strstr(osd_dev_error(dev), "READ"));
	osd_req_free(req);
	missing.partition = pid + 77;
	missing.id = 0x10000;
	ck_assert_int_eq(osd_req_write(&req, dev, &missing, 0, &iov, 1), 0);
	ck_assert_int_eq(run(req), -ENOENT);
	OK(osd_req_remove_partition(R, dev, pid));
	ck_assert_int_eq(osd_req_remove_partition(&req, dev, pid), 0);
	ck_assert_int_eq(run(req), -ENOENT);
	/* SET MASTER KEY is refused by this target: a clean error with sense */
	struct osd_set_master_key_params mk;

	memset(&mk, 0, sizeof(mk));
	mk.params = "dh";
	mk.params_len = 2;
	mk.alloc_len = 64;
	ck_assert_int_eq(osd_req_set_master_key(&req, dev, &mk), 0);
	ck_assert_int_eq(osd_req_execute(req), -EINVAL);
	ck_assert_ptr_nonnull(osd_req_sense(req));
	ck_assert_ptr_nonnull(strstr(osd_req_error(req), "SET MASTER KEY"));
	osd_req_free(req);
}
END_TEST

#define INFLIGHT 64

struct async_ctx {
	int done, failed;
};

static void async_cb(osd_req *req, int result, void *p)
{
	struct async_ctx *a = p;

	a->done++;
	if (result)
		a->failed++;
	osd_req_free(req);
}

START_TEST(async_many_in_flight)
{
	static uint8_t data[INFLIGHT][512], back[INFLIGHT][512];
	struct async_ctx a = { 0, 0 };
	struct osd_obj_id obj;
	osd_req *req;

	up(_i);
	format_osd();
	obj = new_object(new_partition());
	for (int i = 0; i < INFLIGHT; i++) {
		struct iovec iov = { data[i], 512 };

		fill(data[i], 512, (unsigned)i);
		ck_assert_int_eq(osd_req_write(&req, dev, &obj, (uint64_t)i * 512, &iov, 1), 0);
		ck_assert_int_eq(osd_req_submit(req, async_cb, &a), 0);
	}
	/* the loopback completes inline, iSCSI from service() after poll() */
	ck_assert_int_eq(fixture_drain(dev, 30000), 0);
	ck_assert_int_eq(a.done, INFLIGHT);
	ck_assert_int_eq(a.failed, 0);
	for (int i = 0; i < INFLIGHT; i++) {
		struct iovec iov = { back[i], 512 };

		ck_assert_int_eq(osd_req_read(&req, dev, &obj, (uint64_t)i * 512, &iov, 1), 0);
		ck_assert_int_eq(osd_req_submit(req, async_cb, &a), 0);
	}
	ck_assert_int_eq(fixture_drain(dev, 30000), 0);
	ck_assert_int_eq(a.done, 2 * INFLIGHT);
	ck_assert_int_eq(a.failed, 0);
	ck_assert_mem_eq(back, data, sizeof(data));
}
END_TEST

START_TEST(autodetect)
{
	struct osd_dev_options o = OSD_DEV_OPTIONS_INIT;
	struct osd_obj_id root = { 0, 0 };
	uint64_t n;

	fixture_up(&fx, &o);
	dev = fx.dev;
	/* the software target lists both versions in INQUIRY: OSD-2 wins */
	ck_assert_int_eq(osd_dev_version(dev), OSD_V2);
	ver = osd_dev_version(dev);
	format_osd();
	ck_assert_int_eq(osd_get_attr_u64(dev, &root, OSD_APAGE_ROOT_BASE + OSD_APAGE_INFORMATION,
					  OSD_ATTR_RI_NUM_PARTITIONS, &n), 0);
	ck_assert_uint_eq(n, 0);
}
END_TEST

/* ---- security through the credential cache ---- */

static const uint8_t ROOT_KEY[OSD_HMAC_LEN] = {
	1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20,
};

struct sec_ctx {
	osd_cred_issuer *iss;
	int calls;
	uint64_t expiration;   /* what the next credential gets (0 = never) */
};

static int sec_source(const struct osd_cred_request *want, struct osd_credential *out, void *p)
{
	struct sec_ctx *s = p;
	struct osd_cred_request r = *want;

	__atomic_add_fetch(&s->calls, 1, __ATOMIC_RELAXED); /* sources run on any submitting thread */
	r.expiration = s->expiration;
	return osd_cred_issue(s->iss, &r, out);
}

static void run_set_key(struct sec_ctx *s, enum osd_sec_method m,
			const struct osd_set_key_params *p)
{
	struct osd_cred_request r;
	struct osd_credential cr;
	osd_req *req;

	memset(&r, 0, sizeof(r));
	r.version = ver;
	r.obj.partition = p->partition;
	r.permissions = OSD_PERM_POL_SEC;
	r.method = m;
	ck_assert_int_eq(osd_cred_issue_set_key(s->iss, &r, (uint8_t)p->key_to_set, &cr), 0);
	ck_assert_int_eq(osd_req_set_key(&req, dev, p), 0);
	ck_assert_int_eq(osd_req_set_credential(req, &cr), 0);
	ck_assert_msg(osd_req_execute(req) == 0, "%s", osd_req_error(req));
	osd_req_free(req);
}

/* SET KEY partition then working key 0, mirrored into the issuer. */
static void key_partition(struct sec_ctx *s, enum osd_sec_method m, uint64_t pid)
{
	uint8_t pkey[OSD_HMAC_LEN], wkey[OSD_HMAC_LEN];
	struct osd_set_key_params p;
	osd_key *root, *pk;

	memset(&p, 0, sizeof(p));
	memset(p.seed, 0x5A, sizeof(p.seed));
	memcpy(p.key_id, "PKEY001", 7);
	p.partition = pid;
	p.key_to_set = OSD_KEY_PARTITION;
	ck_assert_int_eq(osd_key_new(&root, ROOT_KEY, OSD_HMAC_LEN), 0);
	ck_assert_int_eq(osd_key_derive(root, p.seed, p.key_id, OSD_KEY_PARTITION, 0, pkey), 0);
	run_set_key(s, m, &p);
	ck_assert_int_eq(osd_cred_issuer_set_partition_key(s->iss, pid, pkey), 0);

	p.key_to_set = OSD_KEY_WORKING;
	memcpy(p.key_id, "WKEY000", 7);
	ck_assert_int_eq(osd_key_new(&pk, pkey, OSD_HMAC_LEN), 0);
	ck_assert_int_eq(osd_key_derive(pk, p.seed, p.key_id, OSD_KEY_WORKING, 0, wkey), 0);
	run_set_key(s, m, &p);
	ck_assert_int_eq(osd_cred_issuer_set_working_key(s->iss, pid, 0, wkey), 0);
	osd_key_free(pk);
	osd_key_free(root);
}

/* A fresh target of OSD version @p v with the root key, and an issuer for
 * it in @p s. */
static void secure_target(struct sec_ctx *s, int v)
{
	uint8_t sid[OSD_SYSTEM_ID_LEN];

	ver = (enum osd_version)v;
	fixture_up(&fx, NULL);
	ck_assert_int_eq(osd_target_set_root_key(fx.tgt, ROOT_KEY), 0);
	osd_target_system_id(fx.tgt, sid);
	ck_assert_int_eq(osd_cred_issuer_new(&s->iss, sid), 0);
	ck_assert_int_eq(osd_cred_issuer_set_root_key(s->iss, ROOT_KEY), 0);
}

/* The device under method @p m with credentials from @p s (@p o: the
 * caller's other options), through @p tp or, when NULL, the fixture's
 * transport; then FORMAT (the root key set again) and a new partition keyed
 * for @p m, whose id is returned. */
static uint64_t secure_partition(struct sec_ctx *s, enum osd_sec_method m,
				 struct osd_dev_options *o, struct osd_transport *tp)
{
	uint64_t pid;

	o->osd_version = (enum osd_version_select)ver;
	o->security = m;
	o->cred_source = sec_source;
	o->cred_payload = s;
	if (tp)
		ck_assert_int_eq(osd_dev_open(&dev, tp, o), 0);
	else
		dev = fixture_dev(&fx, o);
	fx.dev = dev;
	format_osd();
	ck_assert_int_eq(osd_target_set_root_key(fx.tgt, ROOT_KEY), 0);
	pid = new_partition();
	key_partition(s, m, pid);
	return pid;
}

static void security_run(int v, enum osd_sec_method m)
{
	struct osd_dev_options o = OSD_DEV_OPTIONS_INIT;
	struct sec_ctx s = { NULL, 0, 0 };
	uint8_t data[3000], back[3000];
	struct iovec iov = { data, sizeof(data) }, in = { back, sizeof(back) };
	struct osd_credential cr;
	struct osd_cred_request cq;
	struct osd_obj_id obj;
	uint64_t pid, len;
	osd_req *req;

	secure_target(&s, v);
	o.cred_refresh_ms = 1000;
	pid = secure_partition(&s, m, &o, NULL);
	obj = new_object(pid);
	fill(data, sizeof(data), (unsigned)m);
	OK(osd_req_write(R, dev, &obj, 0, &iov, 1));
	ck_assert_int_eq(osd_req_read(&req, dev, &obj, 0, &in, 1), 0);
	ck_assert_int_eq(osd_req_add_get_attr(req, UI_PAGE, OSD_ATTR_UI_LOGICAL_LENGTH), 0);
	ck_assert_msg(osd_req_execute(req) == 0, "%s", osd_req_error(req));
	ck_assert_mem_eq(back, data, sizeof(data));
	if (m >= OSD_SEC_CMDRSP) {
		/* the response ICV came back (and was verified) */
		struct osd_attr at;

		ck_assert_int_eq(osd_req_find_attr(req, OSD_APAGE_CURRENT_COMMAND,
						   OSD_ATTR_CC_RESPONSE_ICV, &at), 0);
		ck_assert_uint_eq(at.length, ver == OSD_V1 ? 20 : 32);
	}
	osd_req_free(req);
	/* a failure's sense carries a verified response ICV too */
	struct osd_obj_id gone = { pid, 0x7777777 };

	ck_assert_int_eq(osd_req_read(&req, dev, &gone, 0, &in, 1), 0);
	ck_assert_int_eq(osd_req_execute(req), -ENOENT);
	ck_assert_int_eq(osd_req_sense(req)->has_ricv, m >= OSD_SEC_CMDRSP);
	osd_req_free(req);
	ck_assert_int_eq(osd_get_attr_u64(dev, &obj, UI_PAGE, OSD_ATTR_UI_LOGICAL_LENGTH, &len), 0);
	ck_assert_uint_eq(len, sizeof(data));

	/* The cache: the same object again costs no credential request. */
	int before = s.calls;

	OK(osd_req_read(R, dev, &obj, 0, &in, 1));
	ck_assert_int_eq(s.calls, before);

	/* An expired cached credential is refreshed before use. */
	memset(&cq, 0, sizeof(cq));
	cq.version = ver;
	cq.obj = obj;
	cq.permissions = OSD_PERM_READ | OSD_PERM_WRITE | OSD_PERM_GET_ATTR;
	cq.method = m;
	cq.expiration = osd_now_ms() - 5000;
	ck_assert_int_eq(osd_cred_issue(s.iss, &cq, &cr), 0);
	ck_assert_int_eq(osd_dev_add_credential(dev, &cr), 0);
	before = s.calls;
	OK(osd_req_read(R, dev, &obj, 0, &in, 1));
	ck_assert_int_eq(s.calls, before + 1);

	/* The same expired credential forced on a request: the target refuses it. */
	ck_assert_int_eq(osd_req_read(&req, dev, &obj, 0, &in, 1), 0);
	ck_assert_int_eq(osd_req_set_credential(req, &cr), 0);
	ck_assert_int_eq(run(req), -EACCES);

	/* A credential whose key does not match: refused. */
	cq.expiration = 0;
	ck_assert_int_eq(osd_cred_issue(s.iss, &cq, &cr), 0);
	cr.cap_key[0] ^= 0xFF;
	ck_assert_int_eq(osd_req_read(&req, dev, &obj, 0, &in, 1), 0);
	ck_assert_int_eq(osd_req_set_credential(req, &cr), 0);
	ck_assert_int_eq(run(req), -EACCES);

	/* A credential without WRITE: refused with -EACCES. */
	cq.permissions = OSD_PERM_READ;
	ck_assert_int_eq(osd_cred_issue(s.iss, &cq, &cr), 0);
	ck_assert_int_eq(osd_req_write(&req, dev, &obj, 0, &iov, 1), 0);
	ck_assert_int_eq(osd_req_set_credential(req, &cr), 0);
	ck_assert_int_eq(run(req), -EACCES);

	fixture_down(&fx);
	dev = NULL;
	osd_cred_issuer_free(s.iss);
}

START_TEST(security_capkey)
{
	security_run(_i, OSD_SEC_CAPKEY);
}
END_TEST

START_TEST(security_cmdrsp)
{
	security_run(_i, OSD_SEC_CMDRSP);
}
END_TEST

START_TEST(security_alldata)
{
	security_run(_i, OSD_SEC_ALLDATA);
}
END_TEST

/* ---- one device shared by threads, credentials through one cache ---- */

#define THREADS 4
#define PER_THREAD 200

struct worker {
	struct osd_obj_id obj;
	int failures;
};

/* run() for the workers: every failure is reported, with its message. */
static int run_loud(osd_req *req, const char *what, int i)
{
	int rc = osd_req_execute(req);

	if (rc)
		fprintf(stderr, "threads_share_device: %s %d: %d: %s\n", what, i, rc,
			osd_req_error(req));
	osd_req_free(req);
	return rc;
}

static void *worker_run(void *p)
{
	struct worker *w = p;
	uint8_t out[256], in[256];

	for (int i = 0; i < PER_THREAD; i++) {
		struct iovec o = { out, sizeof(out) }, n = { in, sizeof(in) };
		osd_req *req;

		fill(out, sizeof(out), (unsigned)(i + w->obj.id));
		if (osd_req_write(&req, dev, &w->obj, (uint64_t)i * 256, &o, 1) ||
		    run_loud(req, "WRITE", i) != 0)
			w->failures++;
		if (osd_req_read(&req, dev, &w->obj, (uint64_t)i * 256, &n, 1) ||
		    run_loud(req, "READ", i) != 0 || memcmp(in, out, sizeof(in)))
			w->failures++;
	}
	return NULL;
}

START_TEST(threads_share_device)
{
	struct osd_dev_options o = OSD_DEV_OPTIONS_INIT;
	struct sec_ctx s = { NULL, 0, 0 };
	struct worker w[THREADS];
	pthread_t th[THREADS];
	uint64_t pid;

	secure_target(&s, OSD_V2);
	pid = secure_partition(&s, OSD_SEC_CMDRSP, &o, NULL);
	for (int i = 0; i < THREADS; i++) {
		w[i].obj = new_object(pid);
		w[i].failures = 0;
		ck_assert_int_eq(pthread_create(&th[i], NULL, worker_run, &w[i]), 0);
	}
	for (int i = 0; i < THREADS; i++) {
		ck_assert_int_eq(pthread_join(th[i], NULL), 0);
		ck_assert_int_eq(w[i].failures, 0);
	}
	ck_assert_uint_eq(osd_dev_queue_length(dev), 0);
	fixture_down(&fx);
	dev = NULL;
	osd_cred_issuer_free(s.iss);
}
END_TEST

/* ---- a stale nonce: signed again and sent once more ---- */

/* A transport in front of the loopback one that holds the next command it
 * is given, when asked, until the test releases it. */
struct holder {
	struct osd_transport inner;
	int hold_next;
	struct osd_xfer *held;
	int sends;
	int old_tokens;   /* security_token() calls still answered with OLD_TOKEN */
};

static int holder_submit(void *impl, struct osd_xfer *x)
{
	struct holder *h = impl;

	h->sends++;
	if (h->hold_next) {
		h->hold_next = 0;
		h->held = x;
		return 0;
	}
	return h->inner.ops->submit(h->inner.impl, x);
}

#define OLD_TOKEN "an earlier session"

static size_t holder_token(void *impl, uint8_t *buf, size_t len)
{
	struct holder *h = impl;

	if (h->old_tokens > 0) { /* as if the channel were still the session before */
		h->old_tokens--;
		memcpy(buf, OLD_TOKEN, len < sizeof(OLD_TOKEN) ? len : sizeof(OLD_TOKEN));
		return sizeof(OLD_TOKEN);
	}
	return h->inner.ops->security_token(h->inner.impl, buf, len);
}

static void holder_destroy(void *impl)
{
	struct holder *h = impl;

	h->inner.ops->destroy(h->inner.impl);
}

static const struct osd_transport_ops holder_ops = {
	.version = OSD_TRANSPORT_VERSION,
	.submit = holder_submit,
	.security_token = holder_token,
	.destroy = holder_destroy,
};

static void record_result(osd_req *req, int result, void *p)
{
	(void)req;
	*(int *)p = result;
}

/* Wait for the next millisecond of the clock nonces are stamped with, so
 * that what follows is stamped later than anything before (bounded: 1 ms). */
static void next_ms(void)
{
	struct timespec ts;
	uint64_t t0, t;

	clock_gettime(CLOCK_REALTIME, &ts);
	t0 = (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
	do {
		clock_gettime(CLOCK_REALTIME, &ts);
		t = (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
	} while (t <= t0);
}

#define NONCE_DEPTH 4

/*
 * The partition remembers NONCE_DEPTH nonces. A WRITE is signed and held in
 * the transport while NONCE_DEPTH + 1 newer requests pass, so the target
 * evicts one stamped no earlier than the held one and its floor rises past
 * it: the held nonce is refused as stale (24h/07h, under a response ICV).
 * libosd signs the WRITE again with a fresh nonce and sends it once more,
 * and the caller sees success.
 */
START_TEST(stale_nonce_resent)
{
	static struct holder h;
	struct osd_dev_options o = OSD_DEV_OPTIONS_INIT;
	struct sec_ctx s = { NULL, 0, 0 };
	struct osd_transport tp = { &holder_ops, &h };
	struct osd_obj_id part, x, y;
	uint8_t data[64], back[64];
	struct iovec iov = { data, sizeof(data) }, in = { back, sizeof(back) };
	osd_req *held;
	int result = 1;

	secure_target(&s, OSD_V2);
	memset(&h, 0, sizeof(h));
	ck_assert_int_eq(osd_target_loopback(fx.tgt, &h.inner), 0);
	part = (struct osd_obj_id){ secure_partition(&s, OSD_SEC_CMDRSP, &o, &tp), 0 };
	ck_assert_int_eq(osd_req_set_attributes(&held, dev, &part), 0);
	ck_assert_int_eq(osd_req_add_set_attr(held, OSD_APAGE_PARTITION_BASE +
					      OSD_APAGE_POLICY_SECURITY,
					      OSD_ATTR_PS_NONCE_LIST_DEPTH, "\0\4", 2), 0);
	ck_assert_int_eq(run(held), 0);
	next_ms(); /* nothing evicted below may share a stamp with a later request */
	x = new_object(part.partition);
	y = new_object(part.partition);
	fill(data, sizeof(data), 7);
	next_ms();

	h.sends = 0;
	h.hold_next = 1;
	ck_assert_int_eq(osd_req_write(&held, dev, &x, 0, &iov, 1), 0);
	ck_assert_int_eq(osd_req_submit(held, record_result, &result), 0);
	ck_assert_ptr_nonnull(h.held);
	for (int i = 0; i <= NONCE_DEPTH; i++)
		OK(osd_req_write(R, dev, &y, (uint64_t)i * sizeof(data), &iov, 1));
	next_ms(); /* the fresh nonce is newer than the floor */
	ck_assert_int_eq(h.sends, NONCE_DEPTH + 2);
	ck_assert_int_eq(h.inner.ops->submit(h.inner.impl, h.held), 0);
	ck_assert_int_eq(result, 0);
	ck_assert_int_eq(h.sends, NONCE_DEPTH + 3); /* the WRITE went out again, once */
	osd_req_free(held);
	OK(osd_req_read(R, dev, &x, 0, &in, 1));
	ck_assert_mem_eq(back, data, sizeof(data));
	fixture_down(&fx);
	dev = NULL;
	osd_cred_issuer_free(s.iss);
}
END_TEST

/*
 * A CAPKEY request signed for the channel's previous session (the transport
 * logged in again between signing and sending: a new token) is refused at
 * its request ICV; libosd sees the token changed, signs it for the current
 * one and sends it once more. A request refused at its ICV while the token
 * is unchanged (a wrong key) is not sent again.
 */
START_TEST(capkey_resigned_for_new_session)
{
	static struct holder h;
	struct osd_dev_options o = OSD_DEV_OPTIONS_INIT;
	struct sec_ctx s = { NULL, 0, 0 };
	struct osd_transport tp = { &holder_ops, &h };
	struct osd_obj_id x;
	uint8_t data[64], back[64];
	struct iovec iov = { data, sizeof(data) }, in = { back, sizeof(back) };
	osd_req *req;

	secure_target(&s, OSD_V2);
	memset(&h, 0, sizeof(h));
	ck_assert_int_eq(osd_target_loopback(fx.tgt, &h.inner), 0);
	x = new_object(secure_partition(&s, OSD_SEC_CAPKEY, &o, &tp));
	fill(data, sizeof(data), 9);

	h.sends = 0;
	h.old_tokens = 1; /* signed for the old session; the target has the new one */
	ck_assert_int_eq(osd_req_write(&req, dev, &x, 0, &iov, 1), 0);
	ck_assert_msg(osd_req_execute(req) == 0, "%s", osd_req_error(req));
	osd_req_free(req);
	ck_assert_int_eq(h.sends, 2); /* refused once, signed again, sent once more */
	OK(osd_req_read(R, dev, &x, 0, &in, 1));
	ck_assert_mem_eq(back, data, sizeof(data));

	h.sends = 0;
	h.old_tokens = 1000; /* the token never changes: a wrong ICV stays refused */
	ck_assert_int_eq(osd_req_write(&req, dev, &x, 0, &iov, 1), 0);
	ck_assert_int_eq(osd_req_execute(req), -EACCES);
	ck_assert_int_eq(osd_req_sense(req)->field_pointer, osd_cdb_icv_offset(OSD_V2));
	osd_req_free(req);
	ck_assert_int_eq(h.sends, 1);
	fixture_down(&fx);
	dev = NULL;
	osd_cred_issuer_free(s.iss);
}
END_TEST

static void noop(void)
{
}

static void down_if_up(void)
{
	if (fx.tgt)
		down();
}

static Suite *suite(void)
{
	Suite *s = suite_create("initiator_integration");
	TCase *tc = tcase_create(fixture_transport_name());

	tcase_add_checked_fixture(tc, noop, down_if_up);
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, write_read_scatter_gather, 1, 3);
	tcase_add_loop_test(tc, create_and_write_append_clear_punch, 1, 3);
	tcase_add_loop_test(tc, attributes, 1, 3);
	tcase_add_loop_test(tc, page_mode_current_command, 1, 3);
	tcase_add_loop_test(tc, list_with_continuations, 1, 3);
	tcase_add_loop_test(tc, collections_and_members, 1, 3);
	tcase_add_loop_test(tc, flush_remove_and_errors, 1, 3);
	tcase_add_loop_test(tc, async_many_in_flight, 1, 3);
	tcase_add_test(tc, autodetect);
	tcase_add_loop_test(tc, security_capkey, 1, 3);
	tcase_add_loop_test(tc, security_cmdrsp, 1, 3);
	tcase_add_loop_test(tc, security_alldata, 1, 3);
	tcase_add_test(tc, threads_share_device);
	if (fixture_transport() == FIXTURE_LOOPBACK) {
		tcase_add_test(tc, stale_nonce_resent);
		tcase_add_test(tc, capkey_resigned_for_new_session);
	}
	suite_add_tcase(s, tc);
	return s;
}

int main(int argc, char **argv)
{
	SRunner *sr;
	int failed;

	if (argc > 2 || fixture_select_transport(argc == 2 ? argv[1] : NULL)) {
		fprintf(stderr, "usage: %s [loopback|iscsi|iscsi-digests] "
			"(default: $OSD_TEST_TRANSPORT, else loopback)\n", argv[0]);
		return EXIT_FAILURE;
	}
	sr = srunner_create(suite());

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

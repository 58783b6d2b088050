/* Unit tests of the request layer against a scripted fake transport: the
 * exact CDB and data-out bytes sent, and the decoding of canned answers. */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <osd/osd.h>
#include "fake_transport.h"

static struct fake fk;
static osd_dev *dev;

static void open_dev(enum osd_version_select v, enum osd_sec_method sec)
{
	struct osd_dev_options o = OSD_DEV_OPTIONS_INIT;
	struct osd_transport tp;

	memset(&fk, 0, sizeof(fk));
	fake_transport(&fk, &tp);
	o.osd_version = v;
	o.security = sec;
	ck_assert_int_eq(osd_dev_open(&dev, &tp, &o), 0);
}

static void teardown(void)
{
	osd_dev_close(dev);
	dev = NULL;
}

static const struct osd_obj_id OBJ = { 0x10000, 0x10003 };

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint64_t be64(const uint8_t *p)
{
	return (uint64_t)be32(p) << 32 | be32(p + 4);
}

/* WRITE of 10 bytes at 4096 with one set (3-byte value) and one get. */
static osd_req *write_with_lists(void)
{
	static const char data[] = "0123456789";
	struct iovec iov[2] = { { (void *)data, 4 }, { (void *)(data + 4), 6 } };
	osd_req *req;

	ck_assert_int_eq(osd_req_write(&req, dev, &OBJ, 4096, iov, 2), 0);
	ck_assert_int_eq(osd_req_add_set_attr(req, 0x10003, 1, "abc", 3), 0);
	ck_assert_int_eq(osd_req_add_get_attr(req, 0x1, 0x82), 0);
	return req;
}

START_TEST(write_lists_v2_bytes)
{
	static const uint8_t out[64] = {
		'0', '1', '2', '3', '4', '5', '6', '7', '8', '9', 0, 0, 0, 0, 0, 0,
		/* set list at 16: header, one entry page 0x10003 number 1 len 3 + pad */
		0x09, 0, 0, 0, 0, 0, 0, 0x18,
		0x00, 0x01, 0x00, 0x03, 0, 0, 0, 0x01, 0, 0, 0, 0, 0, 0, 0, 0x03,
		'a', 'b', 'c', 0, 0, 0, 0, 0,
		/* get list at 48: header (length 0), page 1 number 0x82 */
		0x01, 0, 0, 0, 0, 0, 0, 0,
		0, 0, 0, 0x01, 0, 0, 0, 0x82,
	};
	const uint8_t *c;
	osd_req *req;

	open_dev(OSD_VERSION_2, OSD_SEC_NOSEC);
	req = write_with_lists();
	ck_assert_int_eq(osd_req_execute(req), 0);
	ck_assert_uint_eq(fk.nsent, 1);
	c = fk.sent[0].cdb;
	ck_assert_uint_eq(fk.sent[0].cdb_len, 236);
	ck_assert_uint_eq(c[0], 0x7F);
	ck_assert_uint_eq(c[7], 0xE4);
	ck_assert_uint_eq(c[8], 0x88);
	ck_assert_uint_eq(c[9], 0x86);
	ck_assert_uint_eq(c[11] & 0x30, 0x30);       /* list mode */
	ck_assert_uint_eq(be64(c + 16), 0x10000);
	ck_assert_uint_eq(be64(c + 24), 0x10003);
	ck_assert_uint_eq(be64(c + 32), 10);         /* LENGTH */
	ck_assert_uint_eq(be64(c + 40), 4096);       /* STARTING BYTE ADDRESS */
	ck_assert_uint_eq(be32(c + 52), 16);         /* get list length */
	ck_assert_uint_eq(be32(c + 56), 0xB0000006); /* get list offset 48 */
	ck_assert_uint_eq(be32(c + 60), 280);        /* 8 + roundup8(16 + 256) */
	ck_assert_uint_eq(be32(c + 64), 0);          /* retrieved at data-in 0 */
	ck_assert_uint_eq(be32(c + 68), 32);         /* set list length */
	ck_assert_uint_eq(be32(c + 72), 0xB0000002); /* set list offset 16 */
	ck_assert_uint_eq(c[80] & 0x0F, 2);          /* capability format 2 */
	ck_assert_uint_eq(c[82] & 0x0F, 0);          /* NOSEC */
	ck_assert_uint_eq(c[128], 0x80);             /* user object */
	ck_assert_uint_eq(be64(c + 80 + 72), 0x10000);
	ck_assert_uint_eq(be64(c + 80 + 80), 0x10003);
	ck_assert_uint_eq(be32(c + 228), 0xFFFFFFFF); /* no data-in ICV */
	ck_assert_uint_eq(be32(c + 232), 0xFFFFFFFF); /* no data-out ICV */
	ck_assert_uint_eq(fk.sent[0].out_len, sizeof(out));
	ck_assert_mem_eq(fk.sent[0].out, out, sizeof(out));
	ck_assert_uint_eq(fk.sent[0].in_len, 280);
	osd_req_free(req);
}
END_TEST

START_TEST(write_lists_v1_bytes)
{
	uint8_t out[524];
	const uint8_t *c;
	osd_req *req;
	static const uint8_t set_list[17] = {
		0x09, 0, 0, 0x0D,
		0x00, 0x01, 0x00, 0x03, 0, 0, 0, 0x01, 0, 0x03, 'a', 'b', 'c',
	};
	static const uint8_t get_list[12] = {
		0x01, 0, 0, 0, 0, 0, 0, 0x01, 0, 0, 0, 0x82,
	};

	memset(out, 0, sizeof(out));
	memcpy(out, "0123456789", 10);
	memcpy(out + 256, set_list, sizeof(set_list));
	memcpy(out + 512, get_list, sizeof(get_list));
	open_dev(OSD_VERSION_1, OSD_SEC_NOSEC);
	req = write_with_lists();
	ck_assert_int_eq(osd_req_execute(req), 0);
	c = fk.sent[0].cdb;
	ck_assert_uint_eq(fk.sent[0].cdb_len, 200);
	ck_assert_uint_eq(c[7], 0xC0);
	ck_assert_uint_eq(c[8], 0x88);
	ck_assert_uint_eq(c[9], 0x06);
	ck_assert_uint_eq(be64(c + 36), 10);
	ck_assert_uint_eq(be64(c + 44), 4096);
	ck_assert_uint_eq(be32(c + 52), 12);
	ck_assert_uint_eq(be32(c + 56), 0x00000002); /* 512 */
	ck_assert_uint_eq(be32(c + 60), 4 + 10 + 256);
	ck_assert_uint_eq(be32(c + 64), 0);
	ck_assert_uint_eq(be32(c + 68), 17);
	ck_assert_uint_eq(be32(c + 72), 0x00000001); /* 256 */
	ck_assert_uint_eq(c[80] & 0x0F, 1);
	ck_assert_uint_eq(be64(c + 80 + 60), 0x10000); /* v1 allowed partition */
	ck_assert_uint_eq(be64(c + 80 + 68), 0x10003);
	ck_assert_uint_eq(fk.sent[0].out_len, sizeof(out));
	ck_assert_mem_eq(fk.sent[0].out, out, sizeof(out));
	osd_req_free(req);
}
END_TEST

/* READ with a get list: data first, retrieved attributes at the next
 * encodable offset; the attribute comes back decoded by value. */
START_TEST(read_with_get_v2)
{
	static const uint8_t retrieved[] = {
		0x09, 0, 0, 0, 0, 0, 0, 0x18,
		0, 0, 0, 0x01, 0, 0, 0, 0x82, 0, 0, 0, 0, 0, 0, 0, 0x08,
		0, 0, 0, 0, 0, 0, 0x10, 0x00,
	};
	uint8_t buf[13];
	struct iovec iov = { buf, sizeof(buf) };
	struct fake_answer *a;
	struct osd_attr at;
	osd_req *req;

	open_dev(OSD_VERSION_2, OSD_SEC_NOSEC);
	a = fake_next_answer(&fk);
	fake_answer_put(a, 0, "hello, world!", 13);
	fake_answer_put(a, 16, retrieved, sizeof(retrieved));
	ck_assert_int_eq(osd_req_read(&req, dev, &OBJ, 0, &iov, 1), 0);
	ck_assert_int_eq(osd_req_add_get_attr(req, 0x1, 0x82), 0);
	ck_assert_int_eq(osd_req_execute(req), 0);
	ck_assert_uint_eq(be32(fk.sent[0].cdb + 64), 0xB0000002); /* retrieved at 16 */
	ck_assert_uint_eq(fk.sent[0].out_len, 16);                /* only the get list */
	ck_assert_mem_eq(buf, "hello, world!", 13);
	ck_assert_uint_eq(osd_req_bytes_read(req), 13);
	ck_assert_int_eq(osd_req_is_short(req), 0);
	ck_assert_int_eq(osd_req_find_attr(req, 0x1, 0x82, &at), 0);
	ck_assert_uint_eq(osd_attr_get_u64(&at, 0), 4096);
	ck_assert_int_eq(osd_req_next_attr(req, &at), 1);
	ck_assert_int_eq(osd_req_next_attr(req, &at), 0);
	ck_assert_int_eq(osd_req_find_attr(req, 0x1, 0x81, &at), -ENOENT);
	osd_req_free(req);
}
END_TEST

START_TEST(short_read)
{
	static const uint8_t sense[] = {
		0x72, 0x01, 0x3B, 0x17, 0, 0, 0, 0x0C,
		0x01, 0x0A, 0, 0, 0, 0, 0, 0, 0, 0, 0, 40,
	};
	uint8_t buf[100];
	struct iovec iov = { buf, sizeof(buf) };
	struct fake_answer *a;
	osd_req *req;

	open_dev(OSD_VERSION_2, OSD_SEC_NOSEC);
	a = fake_next_answer(&fk);
	a->status = OSD_STATUS_CHECK_CONDITION;
	memcpy(a->sense, sense, sizeof(sense));
	a->sense_len = sizeof(sense);
	ck_assert_int_eq(osd_req_read(&req, dev, &OBJ, 0, &iov, 1), 0);
	ck_assert_int_eq(osd_req_execute(req), 0);
	ck_assert_int_eq(osd_req_is_short(req), 1);
	ck_assert_uint_eq(osd_req_bytes_read(req), 40);
	ck_assert_ptr_nonnull(osd_req_sense(req));
	ck_assert_uint_eq(osd_req_sense(req)->key, OSD_SK_RECOVERED_ERROR);
	osd_req_free(req);
}
END_TEST

/* A short READ: the caller's buffer beyond the bytes read is zeros, even
 * where the target sent (or left) something else. */
START_TEST(short_read_zero_fills)
{
	static const uint8_t sense[] = {
		0x72, 0x01, 0x3B, 0x17, 0, 0, 0, 0x0C,
		0x01, 0x0A, 0, 0, 0, 0, 0, 0, 0, 0, 0, 5,
	};
	uint8_t buf[24], want[24] = { 'h', 'e', 'l', 'l', 'o' };
	struct iovec iov[2] = { { buf, 10 }, { buf + 10, 14 } };
	struct fake_answer *a;
	osd_req *req;

	open_dev(OSD_VERSION_2, OSD_SEC_NOSEC);
	memset(buf, 0xAA, sizeof(buf));
	a = fake_next_answer(&fk);
	a->status = OSD_STATUS_CHECK_CONDITION;
	memcpy(a->sense, sense, sizeof(sense));
	a->sense_len = sizeof(sense);
	fake_answer_put(a, 0, "hello\x55\x55", 7); /* two bytes past the end */
	ck_assert_int_eq(osd_req_read(&req, dev, &OBJ, 0, iov, 2), 0);
	ck_assert_int_eq(osd_req_execute(req), 0);
	ck_assert_int_eq(osd_req_is_short(req), 1);
	ck_assert_uint_eq(osd_req_bytes_read(req), 5);
	ck_assert_mem_eq(buf, want, sizeof(buf));
	osd_req_free(req);
}
END_TEST

/* An unimplemented service action (20h/00h at the SERVICE ACTION field) is
 * -EOPNOTSUPP, and the message names the command. */
START_TEST(unsupported_service_action)
{
	static const uint8_t sense[] = {
		0x72, 0x05, 0x20, 0x00, 0, 0, 0, 0x08,
		0x02, 0x06, 0x00, 0x00, 0xC0, 0x00, 0x08, 0x00,
	};
	struct fake_answer *a;
	osd_req *req;

	open_dev(OSD_VERSION_2, OSD_SEC_NOSEC);
	a = fake_next_answer(&fk);
	a->status = OSD_STATUS_CHECK_CONDITION;
	memcpy(a->sense, sense, sizeof(sense));
	a->sense_len = sizeof(sense);
	ck_assert_int_eq(osd_req_flush_partition(&req, dev, 0x10000, OSD_FLUSH_RANGE), 0);
	ck_assert_int_eq(osd_req_execute(req), -EOPNOTSUPP);
	ck_assert_ptr_nonnull(strstr(osd_req_error(req), "FLUSH PARTITION"));
	ck_assert_ptr_nonnull(strstr(osd_req_error(req), "INVALID COMMAND OPERATION CODE"));
	osd_req_free(req);
}
END_TEST

/* The object is missing: 02h points at the OBJECT_ID (CDB byte 24). */
START_TEST(missing_object_error)
{
	static const uint8_t sense[] = {
		0x72, 0x05, 0x24, 0x00, 0, 0, 0, 0x28,
		0x02, 0x06, 0x00, 0x00, 0xC0, 0x00, 0x18, 0x00,
		0x06, 0x1E, 0, 0, 0, 0, 0, 0,
		0x80, 0, 0, 0, 0, 0, 0, 0,
		0, 0, 0, 0, 0, 0x01, 0, 0, 0, 0, 0, 0, 0, 0x01, 0, 0x03,
	};
	uint8_t buf[8];
	struct iovec iov = { buf, sizeof(buf) };
	struct fake_answer *a;
	osd_req *req;

	open_dev(OSD_VERSION_2, OSD_SEC_NOSEC);
	a = fake_next_answer(&fk);
	a->status = OSD_STATUS_CHECK_CONDITION;
	memcpy(a->sense, sense, sizeof(sense));
	a->sense_len = sizeof(sense);
	ck_assert_int_eq(osd_req_read(&req, dev, &OBJ, 0, &iov, 1), 0);
	ck_assert_int_eq(osd_req_execute(req), -ENOENT);
	ck_assert_int_eq(osd_req_result(req), -ENOENT);
	ck_assert_ptr_nonnull(strstr(osd_req_error(req), "READ of 0x10000/0x10003"));
	ck_assert_ptr_nonnull(strstr(osd_dev_error(dev), "0x10003"));
	ck_assert_uint_eq(osd_req_bytes_read(req), 0);
	osd_req_free(req);
}
END_TEST

START_TEST(transport_error_and_busy)
{
	uint8_t buf[8];
	struct iovec iov = { buf, sizeof(buf) };
	osd_req *req;

	open_dev(OSD_VERSION_2, OSD_SEC_NOSEC);
	fake_next_answer(&fk)->transport_err = -ECONNRESET;
	fake_next_answer(&fk)->status = OSD_STATUS_BUSY;
	ck_assert_int_eq(osd_req_read(&req, dev, &OBJ, 0, &iov, 1), 0);
	ck_assert_int_eq(osd_req_execute(req), -ECONNRESET);
	ck_assert_int_eq(osd_req_execute(req), -EBUSY); /* already sent */
	osd_req_free(req);
	ck_assert_int_eq(osd_req_read(&req, dev, &OBJ, 0, &iov, 1), 0);
	ck_assert_int_eq(osd_req_execute(req), -EBUSY);
	osd_req_free(req);
	fk.refuse = -ENOBUFS;
	ck_assert_int_eq(osd_req_read(&req, dev, &OBJ, 0, &iov, 1), 0);
	ck_assert_int_eq(osd_req_execute(req), -ENOBUFS);
	ck_assert_uint_eq(osd_dev_queue_length(dev), 0);
	osd_req_free(req);
}
END_TEST

START_TEST(create_reports_id)
{
	static const uint8_t retrieved[] = {
		0x09, 0, 0, 0, 0, 0, 0, 0x30,
		0xFF, 0xFF, 0xFF, 0xFE, 0, 0, 0, 0x03, 0, 0, 0, 0, 0, 0, 0, 0x08,
		0, 0, 0, 0, 0, 0x01, 0, 0x00,
		0xFF, 0xFF, 0xFF, 0xFE, 0, 0, 0, 0x04, 0, 0, 0, 0, 0, 0, 0, 0x08,
		0, 0, 0, 0, 0, 0x01, 0, 0x2A,
	};
	struct osd_obj_id want = { 0x10000, 0 }, got;
	const uint8_t *c;
	osd_req *req;

	open_dev(OSD_VERSION_2, OSD_SEC_NOSEC);
	fake_answer_put(fake_next_answer(&fk), 0, retrieved, sizeof(retrieved));
	ck_assert_int_eq(osd_req_create(&req, dev, &want, 1), 0);
	ck_assert_int_eq(osd_req_execute(req), 0);
	c = fk.sent[0].cdb;
	ck_assert_uint_eq(c[9], 0x82);
	ck_assert_uint_eq(c[32] << 8 | c[33], 1);   /* NUMBER OF USER OBJECTS */
	ck_assert_uint_eq(c[128], 0x02);            /* capability names the partition */
	ck_assert_int_eq(osd_req_created_id(req, &got), 0);
	ck_assert_uint_eq(got.partition, 0x10000);
	ck_assert_uint_eq(got.id, 0x1002A);
	osd_req_free(req);
}
END_TEST

START_TEST(list_result_and_cursor)
{
	static const uint8_t data[] = {
		0, 0, 0, 0, 0, 0, 0, 0x20,          /* ADDITIONAL LENGTH 16 + 2*8 */
		0, 0, 0, 0, 0, 0x01, 0, 0x05,       /* continuation */
		0, 0, 0, 0x07, 0, 0, 0, 0x21 << 2,  /* list id 7, user object ids */
		0, 0, 0, 0, 0, 0x01, 0, 0x03,
		0, 0, 0, 0, 0, 0x01, 0, 0x04,
	};
	struct osd_list_cursor from = { 0x10001, 3 }, next;
	struct osd_list_result res;
	const uint8_t *c;
	osd_req *req;

	open_dev(OSD_VERSION_2, OSD_SEC_NOSEC);
	fake_answer_put(fake_next_answer(&fk), 0, data, sizeof(data));
	ck_assert_int_eq(osd_req_list(&req, dev, 0x10000, &from, 1024), 0);
	ck_assert_int_eq(osd_req_execute(req), 0);
	c = fk.sent[0].cdb;
	ck_assert_uint_eq(be64(c + 32), 1024);
	ck_assert_uint_eq(be64(c + 40), 0x10001);
	ck_assert_uint_eq(be32(c + 48), 3);
	ck_assert_int_eq(osd_req_list_result(req, &res, &next), 0);
	ck_assert_uint_eq(res.num_ids, 2);
	ck_assert_uint_eq(osd_list_id(&res, 1), 0x10004);
	ck_assert_uint_eq(next.next_id, 0x10005);
	ck_assert_uint_eq(next.list_id, 7);
	osd_req_free(req);
}
END_TEST

static int last_result;

static void keep_result(osd_req *req, int result, void *priv)
{
	(void)req;
	(void)priv;
	last_result = result;
}

static int cb_count;
static int cb_results[FAKE_MAX];

static void count_cb(osd_req *req, int result, void *priv)
{
	ck_assert_ptr_eq(priv, &cb_count);
	cb_results[cb_count++] = result;
	osd_req_free(req);
}

/* Completion later, from service(): nothing may assume inline completion. */
START_TEST(async_deferred)
{
	uint8_t buf[3][8];
	osd_req *req;

	open_dev(OSD_VERSION_2, OSD_SEC_NOSEC);
	fk.deferred = 1;
	cb_count = 0;
	fake_next_answer(&fk);
	fake_next_answer(&fk)->status = OSD_STATUS_BUSY;
	fake_next_answer(&fk);
	for (int i = 0; i < 3; i++) {
		struct iovec iov = { buf[i], 8 };

		ck_assert_int_eq(osd_req_read(&req, dev, &OBJ, 0, &iov, 1), 0);
		ck_assert_int_eq(osd_req_submit(req, count_cb, &cb_count), 0);
	}
	ck_assert_int_eq(cb_count, 0);
	ck_assert_uint_eq(osd_dev_queue_length(dev), 3);
	ck_assert_int_eq(osd_dev_get_fd(dev), -1);
	ck_assert_int_eq(osd_dev_service(dev, 0), 0);
	ck_assert_int_eq(cb_count, 3);
	ck_assert_int_eq(cb_results[0], 0);
	ck_assert_int_eq(cb_results[1], -EBUSY);
	ck_assert_uint_eq(osd_dev_queue_length(dev), 0);

	/* A synchronous call on a deferred transport drives service() itself. */
	struct iovec iov = { buf[0], 8 };

	ck_assert_int_eq(osd_req_read(&req, dev, &OBJ, 0, &iov, 1), 0);
	ck_assert_int_eq(osd_req_execute(req), 0);
	osd_req_free(req);

	/* Freeing a request in flight detaches it; completion releases it. */
	ck_assert_int_eq(osd_req_read(&req, dev, &OBJ, 0, &iov, 1), 0);
	ck_assert_int_eq(osd_req_submit(req, count_cb, &cb_count), 0);
	osd_req_free(req);
	osd_dev_service(dev, 0);
	ck_assert_int_eq(cb_count, 3);
}
END_TEST


/* CHECK CONDITION, UNIT ATTENTION with @p asc, in fixed (70h) or
 * descriptor (72h) format. */
static void answer_ua(uint16_t asc, int fixed)
{
	struct fake_answer *a = fake_next_answer(&fk);

	a->status = OSD_STATUS_CHECK_CONDITION;
	if (fixed) {
		uint8_t s[18] = { 0x70, 0, 0x06, 0, 0, 0, 0, 10 };

		s[12] = (uint8_t)(asc >> 8);
		s[13] = (uint8_t)asc;
		memcpy(a->sense, s, sizeof(s));
		a->sense_len = sizeof(s);
	} else {
		uint8_t s[8] = { 0x72, 0x06, (uint8_t)(asc >> 8), (uint8_t)asc, 0, 0, 0, 0 };

		memcpy(a->sense, s, sizeof(s));
		a->sense_len = sizeof(s);
	}
}

/* A UNIT ATTENTION (new I_T nexus: 29h) is reported instead of executing
 * the command (SAM-5 5.14): a CREATE meeting one is sent again, unchanged,
 * and succeeds; the event shows in osd_dev_error(). */
START_TEST(unit_attention_resent)
{
	osd_req *req;

	open_dev(OSD_VERSION_2, OSD_SEC_NOSEC);
	answer_ua(0x2900, 1);
	fake_next_answer(&fk);
	ck_assert_int_eq(osd_req_create(&req, dev, &OBJ, 1), 0);
	ck_assert_int_eq(osd_req_execute(req), 0);
	ck_assert_int_eq(osd_req_result(req), 0);
	ck_assert_uint_eq(fk.nsent, 2);
	ck_assert_uint_eq(fk.sent[1].cdb_len, fk.sent[0].cdb_len);
	ck_assert_mem_eq(fk.sent[1].cdb, fk.sent[0].cdb, fk.sent[0].cdb_len);
	ck_assert_ptr_null(osd_req_sense(req));
	ck_assert_str_eq(osd_dev_error(dev),
			 "CREATE of 0x10000/0x10003: unit attention 29h/00h "
			 "(POWER ON, RESET, OR BUS DEVICE RESET OCCURRED), sent again (1 of 3)");
	osd_req_free(req);

	/* 2Ah (parameters changed) then 3Fh (REPORTED LUNS DATA CHANGED),
	 * descriptor format: sent twice more. */
	answer_ua(0x2A01, 0);
	answer_ua(0x3F0E, 0);
	ck_assert_int_eq(osd_req_create(&req, dev, &OBJ, 1), 0);
	ck_assert_int_eq(osd_req_execute(req), 0);
	ck_assert_uint_eq(fk.nsent, 5);
	ck_assert_ptr_nonnull(strstr(osd_dev_error(dev), "unit attention 3Fh/0Eh"));
	ck_assert_ptr_nonnull(strstr(osd_dev_error(dev), "(2 of 3)"));
	osd_req_free(req);
}
END_TEST

/* osd_dev_reset_count(): the 29h/xx that the first command meets (a new
 * I_T nexus, the first session, nothing ran yet) is not counted; once a
 * command was answered 29h/00h-04h are (the device may have lost its
 * volatile cache, spc4r37 Annex D), 29h/05h-07h and other unit attentions
 * are not. Every one is still sent again. */
START_TEST(test_reset_count)
{
	static const struct {
		uint16_t asc;
		unsigned counted;
	} ua[] = {
		{ 0x2901, 0 }, /* first: the first session's */
		{ 0x2900, 1 }, { 0x2901, 1 }, { 0x2902, 1 }, { 0x2903, 1 }, { 0x2904, 1 },
		{ 0x2905, 0 }, { 0x2906, 0 }, { 0x2907, 0 }, { 0x2A01, 0 }, { 0x2800, 0 },
		{ 0x3F0E, 0 }, { 0x2901, 1 },
	};
	uint64_t want = 0;
	osd_req *req;

	ck_assert_uint_eq(osd_dev_reset_count(NULL), 0);
	open_dev(OSD_VERSION_2, OSD_SEC_NOSEC);
	ck_assert_uint_eq(osd_dev_reset_count(dev), 0);
	for (size_t i = 0; i < sizeof(ua) / sizeof(ua[0]); i++) {
		memset(&fk.answers, 0, sizeof(fk.answers));
		fk.nanswers = fk.nsent = 0;
		answer_ua(ua[i].asc, (int)(i & 1));
		fake_next_answer(&fk);
		ck_assert_int_eq(osd_req_create(&req, dev, &OBJ, 1), 0);
		ck_assert_int_eq(osd_req_execute(req), 0);
		ck_assert_uint_eq(fk.nsent, 2); /* sent again, whatever it says */
		osd_req_free(req);
		want += ua[i].counted;
		ck_assert_msg(osd_dev_reset_count(dev) == want, "after %02Xh/%02Xh: %llu, want %llu",
			      ua[i].asc >> 8, ua[i].asc & 0xFF,
			      (unsigned long long)osd_dev_reset_count(dev), (unsigned long long)want);
	}
	ck_assert_uint_eq(want, 6);
}
END_TEST

/* A device whose first command is answered without a unit attention (its
 * session's was reported to another device on it): the first 29h/00h it
 * meets is a reset, counted. */
START_TEST(test_reset_count_first_answered)
{
	osd_req *req;

	open_dev(OSD_VERSION_2, OSD_SEC_NOSEC);
	for (int i = 0; i < 2; i++) {
		memset(&fk.answers, 0, sizeof(fk.answers));
		fk.nanswers = fk.nsent = 0;
		if (i)
			answer_ua(0x2900, 1);
		fake_next_answer(&fk);
		ck_assert_int_eq(osd_req_create(&req, dev, &OBJ, 1), 0);
		ck_assert_int_eq(osd_req_execute(req), 0);
		osd_req_free(req);
		ck_assert_uint_eq(osd_dev_reset_count(dev), (uint64_t)i);
	}
}
END_TEST

/* A target reporting a unit attention forever: the request is sent 1 + 3
 * times and ends with the last one (-EAGAIN). Other unit attentions are
 * not resent. */
START_TEST(unit_attention_bounded)
{
	uint8_t buf[8];
	struct iovec iov = { buf, sizeof(buf) };
	osd_req *req;

	open_dev(OSD_VERSION_2, OSD_SEC_NOSEC);
	for (int i = 0; i < 5; i++)
		answer_ua(0x2901, i & 1);
	ck_assert_int_eq(osd_req_read(&req, dev, &OBJ, 0, &iov, 1), 0);
	ck_assert_int_eq(osd_req_execute(req), -EAGAIN);
	ck_assert_uint_eq(fk.nsent, 4);
	ck_assert_uint_eq(osd_req_sense(req)->key, OSD_SK_UNIT_ATTENTION);
	ck_assert_uint_eq(osd_req_sense(req)->asc, 0x2901);
	ck_assert_ptr_nonnull(strstr(osd_req_error(req), "UNIT ATTENTION"));
	ck_assert_ptr_nonnull(strstr(osd_dev_error(dev), "UNIT ATTENTION"));
	osd_req_free(req);

	/* FAILURE PREDICTION THRESHOLD EXCEEDED (5Dh): not a cleared event. */
	memset(&fk.answers, 0, sizeof(fk.answers));
	fk.nanswers = fk.nsent = 0;
	answer_ua(0x5D00, 0);
	ck_assert_int_eq(osd_req_read(&req, dev, &OBJ, 0, &iov, 1), 0);
	ck_assert_int_eq(osd_req_execute(req), -EAGAIN);
	ck_assert_uint_eq(fk.nsent, 1);
	osd_req_free(req);
}
END_TEST

/* Asynchronously the resend happens in the completion path: the callback
 * runs once, with the second answer. A request given up on (freed in
 * flight) is not sent again. */
START_TEST(unit_attention_async_and_give_up)
{
	uint8_t buf[8];
	struct iovec iov = { buf, sizeof(buf) };
	osd_req *req;

	open_dev(OSD_VERSION_2, OSD_SEC_NOSEC);
	fk.deferred = 1;
	cb_count = 0;
	answer_ua(0x2900, 0);
	fake_next_answer(&fk);
	ck_assert_int_eq(osd_req_read(&req, dev, &OBJ, 0, &iov, 1), 0);
	ck_assert_int_eq(osd_req_submit(req, count_cb, &cb_count), 0);
	osd_dev_service(dev, 0);
	ck_assert_int_eq(cb_count, 0);
	ck_assert_uint_eq(fk.nsent, 2);
	ck_assert_uint_eq(osd_dev_queue_length(dev), 1);
	osd_dev_service(dev, 0);
	ck_assert_int_eq(cb_count, 1);
	ck_assert_int_eq(cb_results[0], 0);
	ck_assert_uint_eq(osd_dev_queue_length(dev), 0); /* count_cb freed it */

	answer_ua(0x2900, 0);
	ck_assert_int_eq(osd_req_read(&req, dev, &OBJ, 0, &iov, 1), 0);
	ck_assert_int_eq(osd_req_submit(req, count_cb, &cb_count), 0);
	osd_req_free(req); /* no cancel: detached, its answer is dropped */
	osd_dev_service(dev, 0);
	ck_assert_uint_eq(fk.nsent, 3);
	ck_assert_int_eq(cb_count, 1);
	ck_assert_uint_eq(osd_dev_queue_length(dev), 0);

	/* The bound is per session (channel token): after a reconnect the
	 * new nexus's unit attention counts afresh. 5 in a row, the token
	 * changing after the second: sent 6 times, and it succeeds. */
	fk.token_len = 8;
	memset(fk.token, 0xA1, 8);
	for (int i = 0; i < 5; i++)
		answer_ua(0x2900, 0);
	fake_next_answer(&fk);
	ck_assert_int_eq(osd_req_read(&req, dev, &OBJ, 0, &iov, 1), 0);
	ck_assert_int_eq(osd_req_submit(req, count_cb, &cb_count), 0);
	osd_dev_service(dev, 0);
	osd_dev_service(dev, 0);
	ck_assert_uint_eq(fk.nsent, 6);
	memset(fk.token, 0xB2, 8); /* a new session */
	for (int i = 0; i < 4; i++)
		osd_dev_service(dev, 0);
	ck_assert_uint_eq(fk.nsent, 9);
	ck_assert_int_eq(cb_count, 2);
	ck_assert_int_eq(cb_results[1], 0);
	ck_assert_ptr_nonnull(strstr(osd_dev_error(dev), "(3 of 3)"));
}
END_TEST

/* A target that does not answer: -ETIMEDOUT, and the request freed in
 * flight is released when the answer finally comes. */
START_TEST(timeout_then_late_completion)
{
	struct osd_dev_options o = OSD_DEV_OPTIONS_INIT;
	struct osd_transport tp;
	uint8_t buf[8];
	struct iovec iov = { buf, 8 };
	osd_req *req;

	memset(&fk, 0, sizeof(fk));
	fake_transport(&fk, &tp);
	o.osd_version = OSD_VERSION_2;
	o.timeout_ms = 30;
	ck_assert_int_eq(osd_dev_open(&dev, &tp, &o), 0);
	fk.deferred = 1;
	fk.hold = 1;
	ck_assert_int_eq(osd_req_read(&req, dev, &OBJ, 0, &iov, 1), 0);
	ck_assert_int_eq(osd_req_execute(req), -ETIMEDOUT);
	ck_assert_int_eq(osd_req_result(req), -EINPROGRESS);
	ck_assert_ptr_nonnull(strstr(osd_dev_error(dev), "no answer within 30 ms"));
	ck_assert_uint_eq(osd_dev_queue_length(dev), 1);
	osd_req_free(req);              /* detached: still owned by the transport */
	fk.hold = 0;
	osd_dev_service(dev, 0);        /* the late answer releases it */
	ck_assert_uint_eq(osd_dev_queue_length(dev), 0);
}
END_TEST

/* A transport that can cancel: a timed-out request is taken back and
 * completes with -ETIMEDOUT, and one freed in flight is taken back without
 * its callback. Either way the answer never comes into the buffer, and
 * nothing stays in flight. */
START_TEST(give_up_cancels)
{
	struct osd_dev_options o = OSD_DEV_OPTIONS_INIT;
	struct osd_transport tp;
	uint8_t buf[8], want[8];
	struct iovec iov = { buf, 8 };
	osd_req *req;

	memset(&fk, 0, sizeof(fk));
	fake_transport(&fk, &tp);
	o.osd_version = OSD_VERSION_2;
	o.timeout_ms = 30;
	ck_assert_int_eq(osd_dev_open(&dev, &tp, &o), 0);
	fk.deferred = 1;
	fk.hold = 1;
	fk.cancellable = 1;
	fake_answer_put(fake_next_answer(&fk), 0, "answered", 8);
	fake_answer_put(fake_next_answer(&fk), 0, "answered", 8);
	memset(buf, 0xA5, sizeof(buf));
	memcpy(want, buf, sizeof(want));

	ck_assert_int_eq(osd_req_read(&req, dev, &OBJ, 0, &iov, 1), 0);
	ck_assert_int_eq(osd_req_execute(req), -ETIMEDOUT);
	ck_assert_int_eq(osd_req_result(req), -ETIMEDOUT);
	ck_assert_uint_eq(osd_req_bytes_read(req), 0);
	ck_assert_str_eq(osd_req_error(req), "READ: no answer within 30 ms");
	ck_assert_uint_eq(fk.cancels, 1);
	ck_assert_uint_eq(osd_dev_queue_length(dev), 0);
	osd_req_free(req);
	fk.hold = 0;
	osd_dev_service(dev, 0); /* nothing is left to answer */
	ck_assert_mem_eq(buf, want, sizeof(buf));

	cb_count = 0;
	fk.hold = 1;
	ck_assert_int_eq(osd_req_read(&req, dev, &OBJ, 0, &iov, 1), 0);
	ck_assert_int_eq(osd_req_submit(req, count_cb, &cb_count), 0);
	osd_req_free(req);
	ck_assert_uint_eq(fk.cancels, 2);
	ck_assert_uint_eq(osd_dev_queue_length(dev), 0);
	fk.hold = 0;
	osd_dev_service(dev, 0);
	ck_assert_int_eq(cb_count, 0);
	ck_assert_mem_eq(buf, want, sizeof(buf));
}
END_TEST

/* Auto-detection: INQUIRY says nothing, OSD-2 is refused as an invalid
 * opcode, OSD-1 answers. */
START_TEST(autodetect_falls_back_to_v1)
{
	static const uint8_t invalid_opcode[] = { 0x72, 0x05, 0x20, 0x00, 0, 0, 0, 0 };
	struct osd_dev_options o = OSD_DEV_OPTIONS_INIT;
	struct osd_transport tp;
	struct fake_answer *a;

	memset(&fk, 0, sizeof(fk));
	fake_transport(&fk, &tp);
	for (int i = 0; i < 2; i++) {
		a = fake_next_answer(&fk);
		a->status = OSD_STATUS_CHECK_CONDITION;
		memcpy(a->sense, invalid_opcode, sizeof(invalid_opcode));
		a->sense_len = sizeof(invalid_opcode);
	}
	fake_next_answer(&fk);
	ck_assert_int_eq(osd_dev_open(&dev, &tp, &o), 0);
	ck_assert_int_eq(osd_dev_version(dev), OSD_V1);
	ck_assert_uint_eq(fk.nsent, 3);
	ck_assert_uint_eq(fk.sent[0].cdb[0], 0x12);  /* INQUIRY */
	ck_assert_uint_eq(fk.sent[1].cdb_len, 236);
	ck_assert_uint_eq(fk.sent[1].cdb[9], 0x8E);
	ck_assert_uint_eq(fk.sent[2].cdb_len, 200);
	ck_assert_uint_eq(fk.sent[2].cdb[9], 0x0E);
}
END_TEST

/* A malformed GOOD answer to the OSD-2 probe still came from a target that
 * parsed the OSD-2 CDB: no fallback to OSD-1 (docs/initiator.md section 1). */
START_TEST(autodetect_malformed_answer_is_v2)
{
	static const uint8_t overclaim[] = { 0x09, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xF0 };
	struct osd_dev_options o = OSD_DEV_OPTIONS_INIT;
	struct osd_transport tp;
	struct fake_answer *a;

	memset(&fk, 0, sizeof(fk));
	fake_transport(&fk, &tp);
	a = fake_next_answer(&fk);
	a->status = OSD_STATUS_CHECK_CONDITION; /* INQUIRY refused */
	memcpy(a->sense, (const uint8_t[]){ 0x72, 0x05, 0x20, 0x00, 0, 0, 0, 0 }, 8);
	a->sense_len = 8;
	fake_answer_put(fake_next_answer(&fk), 0, overclaim, sizeof(overclaim));
	ck_assert_int_eq(osd_dev_open(&dev, &tp, &o), 0);
	ck_assert_int_eq(osd_dev_version(dev), OSD_V2);
	ck_assert_uint_eq(fk.nsent, 2);
}
END_TEST

START_TEST(autodetect_inquiry_descriptor)
{
	struct osd_dev_options o = OSD_DEV_OPTIONS_INIT;
	struct osd_transport tp;
	struct fake_answer *a;
	uint8_t inq[96] = { 0x11 };

	memset(&fk, 0, sizeof(fk));
	fake_transport(&fk, &tp);
	inq[58] = 0x03;
	inq[59] = 0x56; /* ANSI INCITS 400-2004 */
	a = fake_next_answer(&fk);
	fake_answer_put(a, 0, inq, sizeof(inq));
	fake_next_answer(&fk);
	ck_assert_int_eq(osd_dev_open(&dev, &tp, &o), 0);
	ck_assert_int_eq(osd_dev_version(dev), OSD_V1);
	ck_assert_uint_eq(fk.sent[1].cdb_len, 200);
}
END_TEST

/* INQUIRY claims OSD-1 only (0340h) but the target refuses the OSD-1 CDB:
 * auto mode speaks OSD-2 and says why in osd_dev_error(). The refusal is
 * INVALID COMMAND OPERATION CODE, or INVALID FIELD IN CDB at byte 7 (the
 * ADDITIONAL CDB LENGTH) or without a field pointer. */
static void v1_claimed_refused(const uint8_t *sense, size_t sense_len, enum osd_version want,
			       unsigned want_sent)
{
	struct osd_dev_options o = OSD_DEV_OPTIONS_INIT;
	struct osd_transport tp;
	struct fake_answer *a;
	uint8_t inq[96] = { 0x11 };

	memset(&fk, 0, sizeof(fk));
	fake_transport(&fk, &tp);
	inq[58] = 0x03;
	inq[59] = 0x40;
	fake_answer_put(fake_next_answer(&fk), 0, inq, sizeof(inq));
	a = fake_next_answer(&fk);
	a->status = OSD_STATUS_CHECK_CONDITION;
	memcpy(a->sense, sense, sense_len);
	a->sense_len = sense_len;
	fake_next_answer(&fk); /* GOOD to whatever comes next */
	ck_assert_int_eq(osd_dev_open(&dev, &tp, &o), 0);
	ck_assert_int_eq(osd_dev_version(dev), want);
	ck_assert_uint_eq(fk.nsent, want_sent);
	ck_assert_uint_eq(fk.sent[1].cdb_len, 200);
	if (want_sent == 3)
		ck_assert_uint_eq(fk.sent[2].cdb_len, 236);
}

START_TEST(autodetect_claimed_v1_refused)
{
	static const uint8_t opcode[] = { 0x72, 0x05, 0x20, 0x00, 0, 0, 0, 0 };

	v1_claimed_refused(opcode, sizeof(opcode), OSD_V2, 3);
	ck_assert_str_eq(osd_dev_error(dev), "INQUIRY claims OSD-1 but the target refused an "
			 "OSD-1 CDB (20h/00h INVALID COMMAND OPERATION CODE): speaking OSD-2");
}
END_TEST

START_TEST(autodetect_claimed_v1_bad_length_field)
{
	static const uint8_t at7[] = { 0x72, 0x05, 0x24, 0x00, 0, 0, 0, 0x08,
				       0x02, 0x06, 0x00, 0x00, 0xC0, 0x00, 0x07, 0x00 };
	static const uint8_t nofield[] = { 0x72, 0x05, 0x24, 0x00, 0, 0, 0, 0 };

	v1_claimed_refused(at7, sizeof(at7), OSD_V2, 3);
	ck_assert_ptr_nonnull(strstr(osd_dev_error(dev), "24h/00h INVALID FIELD IN CDB"));
	osd_dev_close(dev);
	v1_claimed_refused(nofield, sizeof(nofield), OSD_V2, 3);
}
END_TEST

/* A refusal of something else (the partition id, a security field) is an
 * answer in the claimed version: no fallback, no message. */
START_TEST(autodetect_claimed_v1_other_refusal)
{
	static const uint8_t at16[] = { 0x72, 0x05, 0x24, 0x00, 0, 0, 0, 0x08,
					0x02, 0x06, 0x00, 0x00, 0xC0, 0x00, 0x10, 0x00 };

	v1_claimed_refused(at16, sizeof(at16), OSD_V1, 2);
	ck_assert_str_eq(osd_dev_error(dev), "");
}
END_TEST

/* Both versions refused: the claimed one stays. */
START_TEST(autodetect_claimed_v1_both_refused)
{
	static const uint8_t opcode[] = { 0x72, 0x05, 0x20, 0x00, 0, 0, 0, 0 };
	struct fake_answer *a;

	memset(&fk, 0, sizeof(fk));
	{
		struct osd_dev_options o = OSD_DEV_OPTIONS_INIT;
		struct osd_transport tp;
		uint8_t inq[96] = { 0x11, [58] = 0x03, [59] = 0x40 };

		fake_transport(&fk, &tp);
		fake_answer_put(fake_next_answer(&fk), 0, inq, sizeof(inq));
		for (int i = 0; i < 2; i++) {
			a = fake_next_answer(&fk);
			a->status = OSD_STATUS_CHECK_CONDITION;
			memcpy(a->sense, opcode, sizeof(opcode));
			a->sense_len = sizeof(opcode);
		}
		ck_assert_int_eq(osd_dev_open(&dev, &tp, &o), 0);
	}
	ck_assert_int_eq(osd_dev_version(dev), OSD_V1);
	ck_assert_uint_eq(fk.nsent, 3);
	ck_assert_str_eq(osd_dev_error(dev), "");
}
END_TEST

/* A target listing both versions (OSD-1 first) is spoken to in OSD-2. */
START_TEST(autodetect_inquiry_both)
{
	struct osd_dev_options o = OSD_DEV_OPTIONS_INIT;
	struct osd_transport tp;
	uint8_t inq[96] = { 0x11 };

	memset(&fk, 0, sizeof(fk));
	fake_transport(&fk, &tp);
	inq[58] = 0x03;
	inq[59] = 0x56;
	inq[60] = 0x04;
	inq[61] = 0x48;
	fake_answer_put(fake_next_answer(&fk), 0, inq, sizeof(inq));
	fake_next_answer(&fk);
	ck_assert_int_eq(osd_dev_open(&dev, &tp, &o), 0);
	ck_assert_int_eq(osd_dev_version(dev), OSD_V2);
	ck_assert_uint_eq(fk.sent[1].cdb_len, 236);
}
END_TEST

/* INQUIRY naming another device type: not an OSD. */
START_TEST(autodetect_not_osd)
{
	struct osd_dev_options o = OSD_DEV_OPTIONS_INIT;
	struct osd_transport tp;
	uint8_t inq[96] = { 0x00 };

	memset(&fk, 0, sizeof(fk));
	fake_transport(&fk, &tp);
	inq[58] = 0x04;
	inq[59] = 0x48;
	fake_answer_put(fake_next_answer(&fk), 0, inq, sizeof(inq));
	ck_assert_int_eq(osd_dev_open(&dev, &tp, &o), -ENODEV);
	ck_assert_ptr_null(dev);
	ck_assert_int_eq(fk.destroyed, 0); /* the caller keeps the transport */
}
END_TEST

START_TEST(bad_arguments)
{
	struct osd_obj_id root = { 0, 0 }, noid = { 0x10000, 0 };
	uint8_t buf[4];
	struct iovec iov = { buf, 4 };
	osd_req *req = NULL;

	open_dev(OSD_VERSION_1, OSD_SEC_NOSEC);
	ck_assert_int_eq(osd_req_clear(&req, dev, &OBJ, 0, 1), -ENOTSUP);
	ck_assert_ptr_null(req);
	ck_assert_int_eq(osd_req_write(&req, dev, &noid, 0, &iov, 1), -EINVAL);
	ck_assert_int_eq(osd_req_read(&req, dev, &root, 0, &iov, 1), -EINVAL);
	ck_assert_int_eq(osd_req_create_partition(&req, dev, 5), -EINVAL);
	ck_assert_int_eq(osd_req_create(&req, dev, &OBJ, 2), -EINVAL);
	ck_assert_int_eq(osd_req_flush(&req, dev, &OBJ, OSD_FLUSH_RANGE, 0, 1), -ENOTSUP);
	ck_assert_int_eq(osd_req_get_attributes(&req, dev, &OBJ), 0);
	ck_assert_int_eq(osd_req_add_set_attr(req, OSD_APAGE_ALL, 1, "x", 1), -EINVAL);
	ck_assert_int_eq(osd_req_set_flags(req, 0x100), -EINVAL);
	ck_assert_int_eq(osd_req_get_page(req, 0x3, 64), 0);
	ck_assert_int_eq(osd_req_add_get_attr(req, 1, 1), -EINVAL);
	osd_req_free(req);
	ck_assert_uint_eq(fk.nsent, 0);
	ck_assert_str_eq(osd_dev_error(dev), "CLEAR is not an OSD-1 command");
}
END_TEST

START_TEST(page_mode_and_flags)
{
	static const uint8_t page[] = { 0, 0, 0, 0x03, 0, 0, 0, 0x04, 1, 2, 3, 4 };
	const uint8_t *c, *pg;
	size_t len;
	osd_req *req;

	open_dev(OSD_VERSION_2, OSD_SEC_NOSEC);
	fake_answer_put(fake_next_answer(&fk), 0, page, sizeof(page));
	ck_assert_int_eq(osd_req_get_attributes(&req, dev, &OBJ), 0);
	ck_assert_int_eq(osd_req_get_page(req, 0x3, 64), 0);
	ck_assert_int_eq(osd_req_add_set_attr(req, 0x10003, 2, "zz", 2), 0);
	ck_assert_int_eq(osd_req_add_set_attr(req, 0x10003, 3, "zz", 2), -EINVAL);
	ck_assert_int_eq(osd_req_set_flags(req, OSD_REQ_FUA | OSD_REQ_BYPASS_TIMESTAMPS), 0);
	ck_assert_int_eq(osd_req_execute(req), 0);
	c = fk.sent[0].cdb;
	ck_assert_uint_eq(c[10] & 0x08, 0x08);
	ck_assert_uint_eq(c[11] & 0x30, 0x20);
	ck_assert_uint_eq(c[12], 0x7F);
	ck_assert_uint_eq(be32(c + 52), 3);
	ck_assert_uint_eq(be32(c + 56), 64);
	ck_assert_uint_eq(be32(c + 60), 0);
	ck_assert_uint_eq(be32(c + 64), 0x10003);
	ck_assert_uint_eq(be32(c + 68), 2);
	ck_assert_uint_eq(be32(c + 72), 2);
	ck_assert_uint_eq(be32(c + 76), 0);          /* raw value at data-out 0 */
	ck_assert_mem_eq(fk.sent[0].out, "zz", 2);
	ck_assert_int_eq(osd_req_page(req, &pg, &len), 0);
	ck_assert_uint_eq(len, 12);
	ck_assert_mem_eq(pg, page, 12);
	osd_req_free(req);
}
END_TEST

static struct osd_credential test_cred(enum osd_version v, enum osd_sec_method m,
				       const struct osd_obj_id *o, uint64_t expiration)
{
	struct osd_credential cr;

	memset(&cr, 0, sizeof(cr));
	cr.version = v;
	osd_capability_init(&cr.cap, v, o, 0, OSD_PERM_ALL_V2, m);
	cr.cap.icv_algorithm = OSD_ICV_ALG_HMAC_SHA1;
	cr.cap.expiration = expiration;
	for (int i = 0; i < OSD_HMAC_LEN; i++)
		cr.cap_key[i] = (uint8_t)(0xA0 + i);
	return cr;
}

static int src_calls;

static int cred_src(const struct osd_cred_request *want, struct osd_credential *out, void *p)
{
	(void)p;
	src_calls++;
	*out = test_cred(want->version, want->method, &want->obj, osd_now_ms() + 3600000);
	return 0;
}

START_TEST(cmdrsp_signed_and_cached)
{
	struct osd_dev_options o = OSD_DEV_OPTIONS_INIT;
	struct osd_transport tp;
	uint8_t buf[8];
	struct iovec iov = { buf, 8 };
	osd_key *key;
	osd_req *req;
	struct osd_credential cr;

	memset(&fk, 0, sizeof(fk));
	fake_transport(&fk, &tp);
	o.osd_version = OSD_VERSION_2;
	o.security = OSD_SEC_CMDRSP;
	o.cred_source = cred_src;
	src_calls = 0;
	ck_assert_int_eq(osd_dev_open(&dev, &tp, &o), 0);
	for (int i = 0; i < 2; i++) {
		ck_assert_int_eq(osd_req_read(&req, dev, &OBJ, 0, &iov, 1), 0);
		ck_assert_int_eq(osd_req_execute(req), 0);
		osd_req_free(req);
	}
	ck_assert_int_eq(src_calls, 1);
	ck_assert_uint_eq(osd_dev_credential_count(dev), 1);
	cr = test_cred(OSD_V2, OSD_SEC_CMDRSP, &OBJ, 0);
	ck_assert_int_eq(osd_key_new(&key, cr.cap_key, OSD_HMAC_LEN), 0);
	for (int i = 0; i < 2; i++) {
		ck_assert_uint_eq(fk.sent[i].cdb[82] & 0x0F, OSD_SEC_CMDRSP);
		ck_assert_int_eq(osd_sec_verify_cdb(key, OSD_SEC_CMDRSP, fk.sent[i].cdb, 236, NULL, 0), 0);
	}
	/* nonces differ */
	ck_assert_int_ne(memcmp(fk.sent[0].cdb + 216, fk.sent[1].cdb + 216, 12), 0);
	/* a forged CDB does not verify */
	fk.sent[0].cdb[40] ^= 1;
	ck_assert_int_eq(osd_sec_verify_cdb(key, OSD_SEC_CMDRSP, fk.sent[0].cdb, 236, NULL, 0), -EACCES);
	osd_key_free(key);

	/* An expired cached credential is refreshed from the source. */
	cr = test_cred(OSD_V2, OSD_SEC_CMDRSP, &OBJ, osd_now_ms() - 1000);
	ck_assert_int_eq(osd_dev_add_credential(dev, &cr), 0);
	ck_assert_int_eq(osd_req_read(&req, dev, &OBJ, 0, &iov, 1), 0);
	ck_assert_int_eq(osd_req_execute(req), 0);
	osd_req_free(req);
	ck_assert_int_eq(src_calls, 2);
	osd_dev_forget_credentials(dev, NULL);
	ck_assert_uint_eq(osd_dev_credential_count(dev), 0);
}
END_TEST

/* Read OBJ once and check the CDB sent is byte for byte what a fresh
 * osd_sec_sign_cdb() with @p key and the transport's current token writes. */
static void read_signed_as_fresh(osd_key *key)
{
	uint8_t buf[8], fresh[236];
	struct iovec iov = { buf, 8 };
	const struct fake_sent *s;
	osd_req *req;

	ck_assert_int_eq(osd_req_read(&req, dev, &OBJ, 0, &iov, 1), 0);
	ck_assert_int_eq(osd_req_execute(req), 0);
	osd_req_free(req);
	s = &fk.sent[fk.nsent - 1];
	ck_assert_uint_eq(s->cdb_len, 236);
	memcpy(fresh, s->cdb, 236);
	memset(fresh + 184, 0xEE, 32 + 12); /* ICV and nonce: must be rewritten */
	ck_assert_int_eq(osd_sec_sign_cdb(key, OSD_SEC_CAPKEY, fresh, 236,
					  fk.token_len ? fk.token : NULL, fk.token_len, 0), 0);
	ck_assert_int_eq(memcmp(fresh, s->cdb, 236), 0);
	ck_assert_int_eq(osd_sec_verify_cdb(key, OSD_SEC_CAPKEY, s->cdb, 236,
					    fk.token_len ? fk.token : NULL, fk.token_len), 0);
}

/* The CAPKEY request ICV is computed once per credential and token: the
 * cached bytes are exactly a fresh signature's, and a new token (iSCSI
 * reconnect) or a new credential is never signed with the old ICV. */
START_TEST(capkey_icv_cache)
{
	struct osd_credential a = test_cred(OSD_V2, OSD_SEC_CAPKEY, &OBJ, 0), b = a;
	static const uint8_t t1[20] = { 0x11, 0x22, 0x33 }, t2[20] = { 0x11, 0x22, 0x34 };
	osd_key *ka, *kb;

	b.cap_key[0] ^= 0x01;
	ck_assert_int_eq(osd_key_new(&ka, a.cap_key, OSD_HMAC_LEN), 0);
	ck_assert_int_eq(osd_key_new(&kb, b.cap_key, OSD_HMAC_LEN), 0);
	open_dev(OSD_VERSION_2, OSD_SEC_CAPKEY);
	memcpy(fk.token, t1, sizeof(t1));
	fk.token_len = sizeof(t1);
	ck_assert_int_eq(osd_dev_set_default_credential(dev, &a), 0);
	read_signed_as_fresh(ka);
	read_signed_as_fresh(ka); /* from the cache */
	ck_assert_int_eq(memcmp(fk.sent[0].cdb, fk.sent[1].cdb, 236), 0);

	/* Reconnect: same length, one bit differs. */
	memcpy(fk.token, t2, sizeof(t2));
	read_signed_as_fresh(ka);
	ck_assert_int_ne(memcmp(fk.sent[1].cdb + 184, fk.sent[2].cdb + 184, 20), 0);
	ck_assert_int_eq(osd_sec_verify_cdb(ka, OSD_SEC_CAPKEY, fk.sent[2].cdb, 236, t1, 20),
			 -EACCES);
	/* A shorter token, then none at all. */
	fk.token_len = 19;
	read_signed_as_fresh(ka);
	fk.token_len = 0;
	read_signed_as_fresh(ka);

	/* New credential (another key): not the old key's ICV. */
	memcpy(fk.token, t1, sizeof(t1));
	fk.token_len = sizeof(t1);
	ck_assert_int_eq(osd_dev_set_default_credential(dev, &b), 0);
	read_signed_as_fresh(kb);
	ck_assert_int_ne(memcmp(fk.sent[1].cdb + 184, fk.sent[5].cdb + 184, 20), 0);
	ck_assert_int_eq(osd_sec_verify_cdb(ka, OSD_SEC_CAPKEY, fk.sent[5].cdb, 236, t1, 20),
			 -EACCES);
	/* A per-object credential for the same object replaces nothing of the
	 * default's cache and is signed with its own key. */
	ck_assert_int_eq(osd_dev_add_credential(dev, &a), 0);
	read_signed_as_fresh(ka);
	osd_key_free(ka);
	osd_key_free(kb);
}
END_TEST

/* The cache stays within cred_cache_max; a request keeps its key even when
 * its credential is evicted while it is in flight. */
START_TEST(cred_cache_bounded)
{
	struct osd_dev_options o = OSD_DEV_OPTIONS_INIT;
	struct osd_transport tp;
	uint8_t buf[8];
	struct iovec iov = { buf, 8 };
	osd_req *req;

	memset(&fk, 0, sizeof(fk));
	fake_transport(&fk, &tp);
	o.osd_version = OSD_VERSION_2;
	o.security = OSD_SEC_CAPKEY;
	o.cred_source = cred_src;
	o.cred_cache_max = 3;
	src_calls = 0;
	ck_assert_int_eq(osd_dev_open(&dev, &tp, &o), 0);
	fk.deferred = 1;
	ck_assert_int_eq(osd_req_read(&req, dev, &OBJ, 0, &iov, 1), 0);
	ck_assert_int_eq(osd_req_submit(req, keep_result, NULL), 0);
	for (uint64_t id = 0x20000; id < 0x2000E; id++) {
		struct osd_obj_id o2 = { 0x10000, id };
		osd_req *r2;

		ck_assert_int_eq(osd_req_read(&r2, dev, &o2, 0, &iov, 1), 0);
		ck_assert_int_eq(osd_req_submit(r2, count_cb, &cb_count), 0);
		ck_assert_uint_le(osd_dev_credential_count(dev), 3);
	}
	ck_assert_int_eq(src_calls, 15);
	cb_count = 0;
	osd_dev_service(dev, 0);
	ck_assert_int_eq(cb_count, 14);
	ck_assert_int_eq(last_result, 0);
	osd_req_free(req);
}
END_TEST

/* A full cache evicts the least recently used credential: one just used
 * stays, one left alone goes. */
START_TEST(cred_cache_lru)
{
	struct osd_dev_options o = OSD_DEV_OPTIONS_INIT;
	struct osd_transport tp;
	uint8_t buf[8];
	struct iovec iov = { buf, 8 };
	static const struct {
		uint64_t id;
		int src_calls; /* after reading object id */
	} steps[] = {
		{ 0x20000, 1 }, { 0x20001, 2 }, /* A, B: both asked for */
		{ 0x20000, 2 },                 /* A again: cached, now most recent */
		{ 0x20002, 3 },                 /* C: the cache is full, B goes */
		{ 0x20000, 3 },                 /* A: still cached */
		{ 0x20001, 4 },                 /* B: asked for again */
	};

	memset(&fk, 0, sizeof(fk));
	fake_transport(&fk, &tp);
	o.osd_version = OSD_VERSION_2;
	o.security = OSD_SEC_CAPKEY;
	o.cred_source = cred_src;
	o.cred_cache_max = 2;
	src_calls = 0;
	ck_assert_int_eq(osd_dev_open(&dev, &tp, &o), 0);
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		struct osd_obj_id obj = { 0x10000, steps[i].id };
		osd_req *req;

		ck_assert_int_eq(osd_req_read(&req, dev, &obj, 0, &iov, 1), 0);
		ck_assert_int_eq(osd_req_execute(req), 0);
		osd_req_free(req);
		ck_assert_int_eq(src_calls, steps[i].src_calls);
		ck_assert_uint_le(osd_dev_credential_count(dev), 2);
	}
}
END_TEST

/* Script the data-in integrity block the target would send for exchange
 * @p i: DATA BYTES, RETRIEVED ATTRIBUTES BYTES, ICV bound to the request ICV. */
static void answer_din_block(osd_key *key, unsigned i, const void *data, size_t n,
			     size_t block_at, int corrupt)
{
	struct fake_answer *a = &fk.answers[i];
	uint8_t block[16 + 32] = { 0 };
	struct iovec seg[2] = { { block, 16 }, { (void *)data, n } };
	uint8_t icv[OSD_HMAC_LEN];

	block[7] = (uint8_t)n;
	ck_assert_int_eq(osd_sec_bound_icv(key, OSD_ICV_DATA_IN, fk.sent[i].cdb + 184, seg,
					   n ? 2 : 1, icv), 0);
	memcpy(block + 16, icv, OSD_HMAC_LEN);
	block[16] ^= (uint8_t)corrupt;
	memset(a, 0, sizeof(*a));
	a->status = OSD_STATUS_GOOD;
	if (n)
		fake_answer_put(a, 0, data, n);
	fake_answer_put(a, block_at, block, sizeof(block));
}

START_TEST(alldata_integrity_block)
{
	struct osd_credential cr = test_cred(OSD_V2, OSD_SEC_ALLDATA, &OBJ, 0);
	struct iovec iov = { (void *)"payload!", 8 }, seg[2];
	uint8_t icv[OSD_HMAC_LEN], buf[4];
	struct iovec in = { buf, 4 };
	const uint8_t *out, *c;
	osd_key *key;
	osd_req *req;

	open_dev(OSD_VERSION_2, OSD_SEC_ALLDATA);
	fk.deferred = 1;
	fk.nanswers = 4;
	ck_assert_int_eq(osd_key_new(&key, cr.cap_key, OSD_HMAC_LEN), 0);
	ck_assert_int_eq(osd_dev_set_default_credential(dev, &cr), 0);
	ck_assert_int_eq(osd_req_write(&req, dev, &OBJ, 0, &iov, 1), 0);
	ck_assert_int_eq(osd_req_submit(req, keep_result, NULL), 0);
	c = fk.sent[0].cdb;
	out = fk.sent[0].out;
	ck_assert_uint_eq(be32(c + 232), 0xB0000001);      /* data-out block at 8 */
	ck_assert_uint_eq(be32(c + 228), 0);               /* data-in block at 0 */
	ck_assert_uint_eq(fk.sent[0].out_len, 8 + 56);
	ck_assert_uint_eq(be64(out + 8), 8);
	ck_assert_uint_eq(be64(out + 16), 0);
	ck_assert_uint_eq(be64(out + 24), 0);
	seg[0].iov_base = (void *)(out + 8);
	seg[0].iov_len = 24;
	seg[1] = iov;
	ck_assert_int_eq(osd_sec_bound_icv(key, OSD_ICV_DATA_OUT, c + 184, seg, 2, icv), 0);
	ck_assert_mem_eq(out + 32, icv, OSD_HMAC_LEN);
	ck_assert_int_eq(osd_sec_verify_cdb(key, OSD_SEC_ALLDATA, c, 236, NULL, 0), 0);
	answer_din_block(key, 0, NULL, 0, 0, 0);
	osd_dev_service(dev, 0);
	ck_assert_int_eq(last_result, 0);
	osd_req_free(req);

	/* READ: a good data-in block is accepted, a wrong ICV or none refused */
	for (unsigned i = 1; i <= 3; i++) {
		ck_assert_int_eq(osd_req_read(&req, dev, &OBJ, 0, &in, 1), 0);
		ck_assert_int_eq(osd_req_submit(req, keep_result, NULL), 0);
		ck_assert_uint_eq(be32(fk.sent[i].cdb + 228), 0xB0000001);
		if (i < 3)
			answer_din_block(key, i, "data", 4, 8, i == 2);
		else
			memset(&fk.answers[i], 0, sizeof(fk.answers[i]));
		osd_dev_service(dev, 0);
		ck_assert_int_eq(last_result, i == 1 ? 0 : -EBADMSG);
		if (i == 1)
			ck_assert_mem_eq(buf, "data", 4);
		osd_req_free(req);
	}
	osd_key_free(key);
}
END_TEST

/* CMDRSP: the response ICV in sense descriptor 07h is checked. */
START_TEST(cmdrsp_response_icv_checked)
{
	struct osd_credential cr = test_cred(OSD_V2, OSD_SEC_CMDRSP, &OBJ, 0);
	uint8_t sense[8 + 32 + 34] = { 0x72, 0x05, 0x24, 0x00, 0, 0, 0, 32 + 34,
		0x06, 0x1E };
	uint8_t icv[OSD_HMAC_LEN], buf[4];
	struct iovec in = { buf, 4 };
	uint8_t status = OSD_STATUS_CHECK_CONDITION;
	osd_key *key;
	osd_req *req;

	sense[8 + 29] = 0x01; /* object 0x10003 of partition 0x10000 */
	sense[8 + 31] = 0x03;
	sense[8 + 21] = 0x01;
	sense[8 + 24 + 5] = 0x01;
	sense[40] = 0x07;
	sense[41] = 32;
	open_dev(OSD_VERSION_2, OSD_SEC_CMDRSP);
	fk.deferred = 1;
	fk.nanswers = 2;
	ck_assert_int_eq(osd_key_new(&key, cr.cap_key, OSD_HMAC_LEN), 0);
	ck_assert_int_eq(osd_dev_set_default_credential(dev, &cr), 0);
	for (unsigned i = 0; i < 2; i++) {
		struct iovec seg[2] = { { &status, 1 }, { sense, sizeof(sense) } };
		struct fake_answer *a = &fk.answers[i];

		ck_assert_int_eq(osd_req_read(&req, dev, &OBJ, 0, &in, 1), 0);
		ck_assert_int_eq(osd_req_submit(req, keep_result, NULL), 0);
		memset(sense + 42, 0, 32);
		ck_assert_int_eq(osd_sec_bound_icv(key, OSD_ICV_RESPONSE, fk.sent[i].cdb + 184, seg, 2,
						   icv), 0);
		memcpy(sense + 42, icv, OSD_HMAC_LEN);
		sense[42] ^= (uint8_t)i; /* the second answer is forged */
		memset(a, 0, sizeof(*a));
		a->status = OSD_STATUS_CHECK_CONDITION;
		memcpy(a->sense, sense, sizeof(sense));
		a->sense_len = sizeof(sense);
		osd_dev_service(dev, 0);
		/* 24h/00h without a field pointer: not a missing object */
		ck_assert_int_eq(last_result, i == 0 ? -EINVAL : -EBADMSG);
		if (i)
			ck_assert_ptr_nonnull(strstr(osd_req_error(req), "response integrity"));
		osd_req_free(req);
	}
	osd_key_free(key);
}
END_TEST

START_TEST(no_credential_fails_cleanly)
{
	uint8_t buf[4];
	struct iovec iov = { buf, 4 };
	osd_req *req;

	open_dev(OSD_VERSION_2, OSD_SEC_CAPKEY);
	ck_assert_int_eq(osd_req_read(&req, dev, &OBJ, 0, &iov, 1), 0);
	ck_assert_int_eq(osd_req_execute(req), -ENOKEY);
	ck_assert_ptr_nonnull(strstr(osd_dev_error(dev), "no credential"));
	ck_assert_uint_eq(fk.nsent, 0);
	osd_req_free(req);
}
END_TEST

START_TEST(query_continuation_bytes)
{
	static const uint8_t lo[2] = { 0x00, 0x10 };
	struct osd_query_criterion crit = { 0x10003, 1, lo, 2, NULL, 0 };
	struct osd_obj_id coll = { 0x10000, 0x10009 };
	const uint8_t *c, *o;
	osd_req *req;

	open_dev(OSD_VERSION_2, OSD_SEC_NOSEC);
	/* An empty result: ADDITIONAL LENGTH 4, format 21h. */
	fake_answer_put(fake_next_answer(&fk), 0,
			(const uint8_t[]){ 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0x84 }, 12);
	ck_assert_int_eq(osd_req_query(&req, dev, &coll, OSD_QUERY_ALL, &crit, 1, 512), 0);
	ck_assert_int_eq(osd_req_execute(req), 0);
	c = fk.sent[0].cdb;
	o = fk.sent[0].out;
	ck_assert_uint_eq(c[9], 0xA0);
	ck_assert_uint_eq(be32(c + 48), 80);        /* 40 + 8 + 24 + 8 */
	ck_assert_uint_eq(fk.sent[0].out_len, 80);
	ck_assert_uint_eq(o[0], 0x01);
	ck_assert_uint_eq(o[2] << 8 | o[3], 0x88A0);
	ck_assert_uint_eq(o[40] << 8 | o[41], 0x0002); /* query list descriptor */
	ck_assert_uint_eq(o[43], 0);                   /* no PAD LENGTH */
	ck_assert_uint_eq(be32(o + 44), 24);           /* 4 + 18, filled to 8 */
	ck_assert_uint_eq(o[48], OSD_QUERY_ALL);
	ck_assert_uint_eq(o[54] << 8 | o[55], 16);     /* 14 + the 2 fill bytes */
	ck_assert_uint_eq(be32(o + 56), 0x10003);
	ck_assert_uint_eq(be32(o + 60), 1);
	ck_assert_uint_eq(o[64] << 8 | o[65], 2);
	ck_assert_uint_eq(o[66], 0x00);
	ck_assert_uint_eq(o[67], 0x10);
	ck_assert_uint_eq(o[68] << 8 | o[69], 0);      /* no maximum */
	ck_assert_uint_eq(be64(o + 72), 0);            /* terminator */
	osd_req_free(req);
}
END_TEST

/* ---- malformed answers (a relay rewriting target-to-client PDUs) ------- */

/* GET ATTRIBUTES of 1/0x82 whose answer holds @p list (at data-in 0). */
static osd_req *get_with_answer(const uint8_t *list, size_t len)
{
	osd_req *req;

	fake_answer_put(fake_next_answer(&fk), 0, list, len);
	ck_assert_int_eq(osd_req_get_attributes(&req, dev, &OBJ), 0);
	ck_assert_int_eq(osd_req_add_get_attr(req, 0x1, 0x82), 0);
	ck_assert_int_eq(osd_req_set_get_alloc(req, 512), 0);
	return req;
}

static const uint8_t one_attr[] = {
	0x09, 0, 0, 0, 0, 0, 0, 0x18,
	0, 0, 0, 0x01, 0, 0, 0, 0x82, 0, 0, 0, 0, 0, 0, 0, 0x08,
	0, 0, 0, 0, 0, 0, 0x10, 0x00,
};

START_TEST(attr_answer_good_and_cut)
{
	uint8_t b[sizeof(one_attr)];
	struct osd_attr at;
	osd_req *req;

	open_dev(OSD_VERSION_2, OSD_SEC_NOSEC);
	req = get_with_answer(one_attr, sizeof(one_attr));
	ck_assert_int_eq(osd_req_execute(req), 0);
	ck_assert_int_eq(osd_req_find_attr(req, 0x1, 0x82, &at), 0);
	ck_assert_uint_eq(osd_attr_get_u64(&at, 0), 4096);
	ck_assert_int_eq(osd_req_attrs_truncated(req), 0);
	osd_req_free(req);
	/* LIST LENGTH 48 with a 32-byte allocation, filled: a cut list,
	 * reported as truncated, not an error (osd2r05 §7.1.3.1) */
	memcpy(b, one_attr, sizeof(b));
	b[7] = 0x30;
	req = get_with_answer(b, sizeof(b));
	ck_assert_int_eq(osd_req_set_get_alloc(req, 32), 0);
	ck_assert_int_eq(osd_req_execute(req), 0);
	ck_assert_int_eq(osd_req_attrs_truncated(req), 1);
	ck_assert_int_eq(osd_req_find_attr(req, 0x1, 0x82, &at), 0);
	osd_req_free(req);
}
END_TEST

START_TEST(attr_answer_overclaim)
{
	uint8_t b[sizeof(one_attr)];
	struct osd_attr at;
	osd_req *req;

	open_dev(OSD_VERSION_2, OSD_SEC_NOSEC);
	memcpy(b, one_attr, sizeof(b));
	b[4] = b[5] = b[6] = 0xFF;
	b[7] = 0xF0; /* LIST LENGTH FFFFFFF0h, 32 of 512 bytes sent */
	req = get_with_answer(b, sizeof(b));
	ck_assert_int_eq(osd_req_execute(req), -EBADMSG);
	ck_assert_int_eq(osd_req_result(req), -EBADMSG);
	ck_assert_str_eq(osd_req_error(req),
			 "GET ATTRIBUTES of 0x10000/0x10003: retrieved attributes list length"
			 " 4294967280 exceeds the 32 bytes received");
	ck_assert_int_eq(osd_req_find_attr(req, 0x1, 0x82, &at), -EBADMSG);
	ck_assert_int_eq(osd_req_next_attr(req, &at), -EBADMSG);
	osd_req_free(req);
	/* the same with the 32-byte allocation filled: one attribute cannot
	 * take 4 GiB, so it is no cut list either */
	req = get_with_answer(b, sizeof(b));
	ck_assert_int_eq(osd_req_set_get_alloc(req, 32), 0);
	ck_assert_int_eq(osd_req_execute(req), -EBADMSG);
	ck_assert_str_eq(osd_req_error(req),
			 "GET ATTRIBUTES of 0x10000/0x10003: retrieved attributes list length"
			 " 4294967280 exceeds the 65568 bytes the requested attributes can take");
	osd_req_free(req);
}
END_TEST

START_TEST(attr_answer_bad_entries)
{
	uint8_t b[sizeof(one_attr)];
	osd_req *req;

	open_dev(OSD_VERSION_2, OSD_SEC_NOSEC);
	memcpy(b, one_attr, sizeof(b));
	b[22] = b[23] = 0xFF; /* ATTRIBUTE LENGTH FFFFh, the value left behind */
	req = get_with_answer(b, sizeof(b));
	ck_assert_int_eq(osd_req_execute(req), -EBADMSG);
	ck_assert_str_eq(osd_req_error(req),
			 "GET ATTRIBUTES of 0x10000/0x10003: retrieved attributes list entry at"
			 " byte 24 runs past the list (list length 24, 32 bytes received)");
	osd_req_free(req);
	b[23] = 0xFE; /* a 65534-byte value in a 24-byte list */
	req = get_with_answer(b, sizeof(b));
	ck_assert_int_eq(osd_req_execute(req), -EBADMSG);
	ck_assert_str_eq(osd_req_error(req),
			 "GET ATTRIBUTES of 0x10000/0x10003: retrieved attributes list entry at"
			 " byte 8 runs past the list (list length 24, 32 bytes received)");
	osd_req_free(req);
	memcpy(b, one_attr, sizeof(b));
	b[15] = 0x81; /* an attribute nobody asked for */
	req = get_with_answer(b, sizeof(b));
	ck_assert_int_eq(osd_req_execute(req), -EBADMSG);
	ck_assert_str_eq(osd_req_error(req),
			 "GET ATTRIBUTES of 0x10000/0x10003: retrieved attribute 0x1/0x81 was"
			 " not requested");
	osd_req_free(req);
}
END_TEST

START_TEST(page_answer_overclaim)
{
	static const uint8_t page[] = { 0, 0, 0, 0x03, 0, 0, 0x10, 0, 1, 2, 3, 4 };
	osd_req *req;

	open_dev(OSD_VERSION_2, OSD_SEC_NOSEC);
	fake_answer_put(fake_next_answer(&fk), 0, page, sizeof(page));
	ck_assert_int_eq(osd_req_get_attributes(&req, dev, &OBJ), 0);
	ck_assert_int_eq(osd_req_get_page(req, 0x3, 64), 0);
	ck_assert_int_eq(osd_req_execute(req), -EBADMSG);
	ck_assert_str_eq(osd_req_error(req),
			 "GET ATTRIBUTES of 0x10000/0x10003: retrieved page 0x3 length 4096"
			 " exceeds the 12 bytes received");
	osd_req_free(req);
}
END_TEST

/* LIST answer: ADDITIONAL LENGTH for @p claimed ids, 2 present. */
static void list_answer(uint8_t *b, unsigned claimed, uint64_t cont)
{
	static const uint8_t two[] = {
		0, 0, 0, 0, 0, 0, 0, 0,
		0, 0, 0, 0, 0, 0, 0, 0,
		0, 0, 0, 0x07, 0, 0, 0, 0x21 << 2,
		0, 0, 0, 0, 0, 0x01, 0, 0x03,
		0, 0, 0, 0, 0, 0x01, 0, 0x04,
	};

	memcpy(b, two, sizeof(two));
	b[7] = (uint8_t)(16 + 8 * claimed);
	for (int i = 0; i < 8; i++)
		b[8 + i] = (uint8_t)(cont >> (56 - 8 * i));
}

static int count_ids(uint64_t id, void *p)
{
	(void)id;
	++*(unsigned *)p;
	return 0;
}

START_TEST(list_answer_overclaim)
{
	struct osd_list_cursor from = { 0, 0 };
	struct osd_list_result res;
	struct osd_obj_id part = { 0x10000, 0 };
	unsigned n = 0;
	uint8_t b[40];
	osd_req *req;

	open_dev(OSD_VERSION_2, OSD_SEC_NOSEC);
	list_answer(b, 5, 0);
	fake_answer_put(fake_next_answer(&fk), 0, b, sizeof(b));
	ck_assert_int_eq(osd_req_list(&req, dev, 0x10000, &from, 1024), 0);
	ck_assert_int_eq(osd_req_execute(req), -EBADMSG);
	ck_assert_str_eq(osd_req_error(req),
			 "LIST of 0x10000/0x0: LIST ADDITIONAL LENGTH 56 claims 5 object ids but"
			 " the 40 bytes received carry 2");
	ck_assert_int_eq(osd_req_list_result(req, &res, NULL), -ENODATA);
	osd_req_free(req);
	/* the helper the tools use fails with the same words */
	fake_answer_put(fake_next_answer(&fk), 0, b, sizeof(b));
	ck_assert_int_eq(osd_list_foreach(dev, OSD_ACT_LIST, &part, count_ids, &n), -EBADMSG);
	ck_assert_uint_eq(n, 0);
	ck_assert_str_eq(osd_dev_error(dev),
			 "LIST of 0x10000/0x0: LIST ADDITIONAL LENGTH 56 claims 5 object ids but"
			 " the 40 bytes received carry 2");
}
END_TEST

START_TEST(list_answer_cut_by_allocation)
{
	struct osd_list_cursor from = { 0, 0 }, next;
	struct osd_list_result res;
	uint8_t b[40];
	osd_req *req;

	open_dev(OSD_VERSION_2, OSD_SEC_NOSEC);
	/* 5 ids, room for 2, resume at 0x10005: fine */
	list_answer(b, 5, 0x10005);
	fake_answer_put(fake_next_answer(&fk), 0, b, sizeof(b));
	ck_assert_int_eq(osd_req_list(&req, dev, 0x10000, &from, 40), 0);
	ck_assert_int_eq(osd_req_execute(req), 0);
	ck_assert_int_eq(osd_req_list_result(req, &res, &next), 0);
	ck_assert_uint_eq(res.num_ids, 2);
	ck_assert_uint_eq(next.next_id, 0x10005);
	osd_req_free(req);
	/* the same without a continuation: ids 3 to 5 would be lost */
	list_answer(b, 5, 0);
	fake_answer_put(fake_next_answer(&fk), 0, b, sizeof(b));
	ck_assert_int_eq(osd_req_list(&req, dev, 0x10000, &from, 40), 0);
	ck_assert_int_eq(osd_req_execute(req), -EBADMSG);
	ck_assert_str_eq(osd_req_error(req),
			 "LIST of 0x10000/0x0: LIST ADDITIONAL LENGTH 56 claims 5 object ids, 2 fit"
			 " in the allocation and CONTINUATION OBJECT_ID is 0");
	osd_req_free(req);
}
END_TEST

START_TEST(query_answer_overclaim)
{
	static const uint8_t q[] = { 0, 0, 0, 0, 0, 0, 0, 0x14, 0, 0, 0, 0x84,
				     0, 0, 0, 0, 0, 0x01, 0, 0x05 };
	struct osd_obj_id coll = { 0x10000, 0x10009 };
	struct osd_list_result res;
	osd_req *req;

	open_dev(OSD_VERSION_2, OSD_SEC_NOSEC);
	fake_answer_put(fake_next_answer(&fk), 0, q, sizeof(q));
	ck_assert_int_eq(osd_req_query(&req, dev, &coll, OSD_QUERY_ALL, NULL, 0, 512), 0);
	ck_assert_int_eq(osd_req_execute(req), -EBADMSG);
	ck_assert_str_eq(osd_req_error(req),
			 "QUERY of 0x10000/0x10009: QUERY ADDITIONAL LENGTH 20 claims 2 object ids"
			 " but the 20 bytes received carry 1");
	ck_assert_int_eq(osd_req_query_result(req, &res), -ENODATA);
	osd_req_free(req);
}
END_TEST

START_TEST(sense_and_transport_lies)
{
	static const uint8_t sense[] = {
		0x72, 0x05, 0x24, 0x00, 0, 0, 0, 0x20, /* 32 more promised */
		0x01, 0x0A, 0, 0, 0, 0, 0, 0, 0, 0, 0, 40,
	};
	uint8_t buf[16];
	struct iovec iov = { buf, sizeof(buf) };
	struct fake_answer *a;
	osd_req *req;

	open_dev(OSD_VERSION_2, OSD_SEC_NOSEC);
	a = fake_next_answer(&fk);
	a->status = OSD_STATUS_CHECK_CONDITION;
	memcpy(a->sense, sense, sizeof(sense));
	a->sense_len = sizeof(sense);
	ck_assert_int_eq(osd_req_read(&req, dev, &OBJ, 0, &iov, 1), 0);
	ck_assert_int_eq(osd_req_execute(req), -EBADMSG);
	ck_assert_str_eq(osd_req_error(req),
			 "READ of 0x10000/0x10003: sense ADDITIONAL SENSE LENGTH 32 exceeds the"
			 " 20 bytes received");
	ck_assert_ptr_null(osd_req_sense(req));
	osd_req_free(req);
	/* a transport claiming more sense than struct osd_xfer holds */
	a = fake_next_answer(&fk);
	a->status = OSD_STATUS_CHECK_CONDITION;
	a->sense_len_report = 255;
	ck_assert_int_eq(osd_req_read(&req, dev, &OBJ, 0, &iov, 1), 0);
	ck_assert_int_eq(osd_req_execute(req), -EPROTO);
	ck_assert_str_eq(osd_req_error(req),
			 "READ of 0x10000/0x10003: sense of 255 bytes exceeds the 252-byte sense"
			 " buffer");
	osd_req_free(req);
	/* ... or more data-in than the command made room for */
	a = fake_next_answer(&fk);
	fake_answer_put(a, 0, "0123456789abcdef", 16);
	a->overreport = 1;
	ck_assert_int_eq(osd_req_read(&req, dev, &OBJ, 0, &iov, 1), 0);
	ck_assert_int_eq(osd_req_execute(req), -EPROTO);
	ck_assert_str_eq(osd_req_error(req),
			 "READ of 0x10000/0x10003: data-in of 17 bytes exceeds the 16 bytes asked for");
	ck_assert_uint_eq(osd_req_bytes_read(req), 0);
	osd_req_free(req);
}
END_TEST

/* Each request carries its resend class from the command descriptor, set
 * when it is built; the transport never reads the CDB for it. */
START_TEST(requests_carry_resend_class)
{
	static const struct {
		enum osd_action a;
		int resend;
	} want[] = {
		{ OSD_ACT_READ, OSD_XFER_RESEND_ALWAYS },
		{ OSD_ACT_WRITE, OSD_XFER_RESEND_REPEATABLE },
		{ OSD_ACT_APPEND, OSD_XFER_RESEND_NEVER },
		{ OSD_ACT_CREATE, OSD_XFER_RESEND_NEVER },
		{ OSD_ACT_REMOVE, OSD_XFER_RESEND_NEVER },
		{ OSD_ACT_PUNCH, OSD_XFER_RESEND_REPEATABLE },
		{ OSD_ACT_FLUSH, OSD_XFER_RESEND_ALWAYS },
		{ OSD_ACT_GET_ATTRIBUTES, OSD_XFER_RESEND_ALWAYS },
	};
	static char buf[8];
	struct iovec iov = { buf, sizeof(buf) };
	struct osd_obj_id part = { OBJ.partition, 0 };
	osd_req *req;

	open_dev(OSD_VERSION_2, OSD_SEC_NOSEC);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		int rc = -1;

		switch (want[i].a) {
		case OSD_ACT_READ: rc = osd_req_read(&req, dev, &OBJ, 0, &iov, 1); break;
		case OSD_ACT_WRITE: rc = osd_req_write(&req, dev, &OBJ, 0, &iov, 1); break;
		case OSD_ACT_APPEND: rc = osd_req_append(&req, dev, &OBJ, &iov, 1); break;
		case OSD_ACT_CREATE: rc = osd_req_create(&req, dev, &part, 1); break;
		case OSD_ACT_REMOVE: rc = osd_req_remove(&req, dev, &OBJ); break;
		case OSD_ACT_PUNCH: rc = osd_req_punch(&req, dev, &OBJ, 0, 8); break;
		case OSD_ACT_FLUSH:
			rc = osd_req_flush(&req, dev, &OBJ, OSD_FLUSH_DATA_AND_ATTRS, 0, 0);
			break;
		default: rc = osd_req_get_attributes(&req, dev, &OBJ); break;
		}
		ck_assert_int_eq(rc, 0);
		ck_assert_int_eq(osd_req_action(req), want[i].a);
		ck_assert_int_eq(osd_req_execute(req), 0);
		osd_req_free(req);
		ck_assert_uint_eq(fk.nsent, i + 1);
		ck_assert_uint_eq(fk.sent[i].xfer_size, sizeof(struct osd_xfer));
		ck_assert_msg(fk.sent[i].resend == want[i].resend, "%s: resend %d, want %d",
			      osd_action_name(want[i].a), fk.sent[i].resend, want[i].resend);
		ck_assert_int_eq(osd_action_resend(want[i].a), want[i].resend);
	}
	ck_assert_int_eq(osd_action_resend((enum osd_action)0x888D), OSD_XFER_RESEND_NEVER);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("initiator_unit");
	TCase *tc = tcase_create("request");

	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_add_test(tc, write_lists_v2_bytes);
	tcase_add_test(tc, requests_carry_resend_class);
	tcase_add_test(tc, write_lists_v1_bytes);
	tcase_add_test(tc, read_with_get_v2);
	tcase_add_test(tc, short_read);
	tcase_add_test(tc, missing_object_error);
	tcase_add_test(tc, short_read_zero_fills);
	tcase_add_test(tc, unsupported_service_action);
	tcase_add_test(tc, transport_error_and_busy);
	tcase_add_test(tc, create_reports_id);
	tcase_add_test(tc, list_result_and_cursor);
	tcase_add_test(tc, async_deferred);
	tcase_add_test(tc, timeout_then_late_completion);
	tcase_add_test(tc, give_up_cancels);
	tcase_add_test(tc, autodetect_falls_back_to_v1);
	tcase_add_test(tc, autodetect_inquiry_descriptor);
	tcase_add_test(tc, autodetect_malformed_answer_is_v2);
	tcase_add_test(tc, autodetect_inquiry_both);
	tcase_add_test(tc, autodetect_claimed_v1_refused);
	tcase_add_test(tc, autodetect_claimed_v1_bad_length_field);
	tcase_add_test(tc, autodetect_claimed_v1_other_refusal);
	tcase_add_test(tc, autodetect_claimed_v1_both_refused);
	tcase_add_test(tc, autodetect_not_osd);
	tcase_add_test(tc, bad_arguments);
	tcase_add_test(tc, page_mode_and_flags);
	tcase_add_test(tc, cmdrsp_signed_and_cached);
	tcase_add_test(tc, cred_cache_bounded);
	tcase_add_test(tc, cred_cache_lru);
	tcase_add_test(tc, capkey_icv_cache);
	tcase_add_test(tc, alldata_integrity_block);
	tcase_add_test(tc, cmdrsp_response_icv_checked);
	tcase_add_test(tc, no_credential_fails_cleanly);
	tcase_add_test(tc, query_continuation_bytes);
	tcase_add_test(tc, attr_answer_good_and_cut);
	tcase_add_test(tc, attr_answer_overclaim);
	tcase_add_test(tc, attr_answer_bad_entries);
	tcase_add_test(tc, page_answer_overclaim);
	tcase_add_test(tc, list_answer_overclaim);
	tcase_add_test(tc, list_answer_cut_by_allocation);
	tcase_add_test(tc, query_answer_overclaim);
	tcase_add_test(tc, sense_and_transport_lies);
	tcase_add_test(tc, unit_attention_resent);
	tcase_add_test(tc, unit_attention_bounded);
	tcase_add_test(tc, test_reset_count);
	tcase_add_test(tc, test_reset_count_first_answered);
	tcase_add_test(tc, unit_attention_async_and_give_up);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

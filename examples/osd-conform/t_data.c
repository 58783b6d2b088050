/*
 * User objects and their data: CREATE, CREATE AND WRITE, WRITE, READ,
 * APPEND, CLEAR, PUNCH, FLUSH, REMOVE, and the errors of a missing object
 * or partition. Every data test reads back exact bytes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "conform.h"
#include "tests.h"

#define DATA_LEN 8192

/* A pattern that differs per byte and per seed. */
static void fill(uint8_t *b, size_t len, unsigned seed)
{
	for (size_t i = 0; i < len; i++)
		b[i] = (uint8_t)(i * 131 + seed * 7 + (i >> 8));
}

/* Reads [off, off+len) of @p obj and compares with @p want. */
static int read_check(struct cf_ctx *c, const struct osd_obj_id *obj, uint64_t off,
		      const uint8_t *want, size_t len)
{
	uint8_t *got = malloc(len);
	uint64_t n = 0;
	int rc = -1;

	if (!got)
		return cf_set(c, CF_FAIL, "out of memory"), -1;
	memset(got, 0xA5, len);
	if (cf_read(c, obj, off, got, len, &n) == 0) {
		size_t i = 0;

		while (i < len && got[i] == want[i])
			i++;
		if (n != len)
			cf_set(c, CF_FAIL, "READ at %llu: %llu bytes, expected %zu",
			       (unsigned long long)off, (unsigned long long)n, len);
		else if (i < len)
			cf_set(c, CF_FAIL, "READ at %llu: byte %zu is %02Xh, expected %02Xh",
			       (unsigned long long)off, i, got[i], want[i]);
		else
			rc = 0;
	}
	free(got);
	return rc;
}

static int length_is(struct cf_ctx *c, const struct osd_obj_id *obj, uint64_t want)
{
	uint64_t v;

	if (cf_get_u64(c, obj, OSD_APAGE_USER_BASE + OSD_APAGE_INFORMATION,
		       OSD_ATTR_UI_LOGICAL_LENGTH, &v) < 0)
		return -1;
	if (v != want)
		return cf_set(c, CF_FAIL, "LOGICAL LENGTH %llu, expected %llu",
			      (unsigned long long)v, (unsigned long long)want), -1;
	return 0;
}

enum cf_result t_create(struct cf_ctx *c)
{
	struct osd_obj_id obj = cf_new_id(c), got;
	uint64_t v;
	osd_req *req = NULL;
	int rc = cf_exec(c, req, osd_req_create(&req, c->dev, &obj, 1), "CREATE");

	if (rc == 0 && osd_req_created_id(req, &got) == 0 &&
	    (got.partition != obj.partition || got.id != obj.id))
		cf_set(c, CF_FAIL, "current command page names 0x%llx/0x%llx, created 0x%llx/0x%llx",
		       (unsigned long long)got.partition, (unsigned long long)got.id,
		       (unsigned long long)obj.partition, (unsigned long long)obj.id), rc = -1;
	osd_req_free(req);
	if (rc < 0 || length_is(c, &obj, 0) < 0)
		return c->res;
	if (cf_get_u64(c, &obj, OSD_APAGE_USER_BASE + OSD_APAGE_INFORMATION,
		       OSD_ATTR_UI_OBJECT_ID, &v) < 0)
		return c->res;
	if (v != obj.id)
		return cf_set(c, CF_FAIL, "USER_OBJECT_ID attribute 0x%llx, expected 0x%llx",
			      (unsigned long long)v, (unsigned long long)obj.id);
	return cf_set(c, CF_PASS, "object 0x%llx, logical length 0", (unsigned long long)obj.id);
}

enum cf_result t_create_any_id(struct cf_ctx *c)
{
	struct osd_obj_id obj = { c->part, 0 }, got;
	osd_req *req = NULL;
	int rc = cf_exec(c, req, osd_req_create(&req, c->dev, &obj, 3), "CREATE of 3 objects");

	if (rc == 0 && osd_req_created_id(req, &got) < 0)
		cf_set(c, CF_FAIL, "no created object id in the current command page"), rc = -1;
	osd_req_free(req);
	if (rc < 0)
		return c->res;
	if (got.partition != c->part || got.id < OSD_FIRST_ID)
		return cf_set(c, CF_FAIL, "created 0x%llx/0x%llx: not a user object id of 0x%llx",
			      (unsigned long long)got.partition, (unsigned long long)got.id,
			      (unsigned long long)c->part);
	/* the ids it picked (the reported one is one of three) are not ours to reuse */
	if (c->next_id < got.id + 4)
		c->next_id = got.id + 4;
	if (length_is(c, &got, 0) < 0)
		return c->res;
	return cf_set(c, CF_PASS, "target picked 0x%llx", (unsigned long long)got.id);
}

enum cf_result t_create_existing(struct cf_ctx *c)
{
	struct osd_obj_id obj = { 0, 0 };
	osd_req *req = NULL;
	enum cf_result r;

	if (cf_create(c, &obj) < 0)
		return c->res;
	r = cf_expect(c, req, osd_req_create(&req, c->dev, &obj, 1), "CREATE of an existing id",
		      OSD_SK_ILLEGAL_REQUEST, OSD_ASC_INVALID_FIELD_IN_CDB, 16, 31);
	osd_req_free(req);
	return r;
}

enum cf_result t_write_read(struct cf_ctx *c)
{
	struct osd_obj_id obj = { 0, 0 };
	uint8_t d[DATA_LEN];

	fill(d, sizeof(d), 1);
	if (cf_create(c, &obj) < 0 || cf_write(c, &obj, 0, d, sizeof(d)) < 0 ||
	    read_check(c, &obj, 0, d, sizeof(d)) < 0 || read_check(c, &obj, 1000, d + 1000, 3000) < 0 ||
	    length_is(c, &obj, sizeof(d)) < 0)
		return c->res;
	return cf_set(c, CF_PASS, "%d bytes read back", DATA_LEN);
}

enum cf_result t_write_sparse(struct cf_ctx *c)
{
	struct osd_obj_id obj = { 0, 0 };
	uint8_t d[4096], z[4096];
	const uint64_t off = 1u << 20;

	fill(d, sizeof(d), 2);
	memset(z, 0, sizeof(z));
	if (cf_create(c, &obj) < 0 || cf_write(c, &obj, off, d, sizeof(d)) < 0 ||
	    read_check(c, &obj, off, d, sizeof(d)) < 0 || read_check(c, &obj, 4096, z, sizeof(z)) < 0 ||
	    length_is(c, &obj, off + sizeof(d)) < 0)
		return c->res;
	return cf_set(c, CF_PASS, "hole reads as zeros");
}

enum cf_result t_read_short(struct cf_ctx *c)
{
	struct osd_obj_id obj = { 0, 0 };
	uint8_t d[1000], got[4096];
	struct iovec iov = { got, sizeof(got) };
	osd_req *req = NULL;
	char code[16];
	size_t i;
	int rc;

	fill(d, sizeof(d), 3);
	if (cf_create(c, &obj) < 0 || cf_write(c, &obj, 0, d, sizeof(d)) < 0)
		return c->res;
	memset(got, 0xA5, sizeof(got));
	rc = cf_exec(c, req, osd_req_read(&req, c->dev, &obj, 0, &iov, 1), "READ past the end");
	if (rc == 0 && osd_req_bytes_read(req) != sizeof(d))
		cf_set(c, CF_FAIL, "READ past the end: %llu bytes read, expected %zu",
		       (unsigned long long)osd_req_bytes_read(req), sizeof(d)), rc = -1;
	else if (rc == 0 && (!c->have_sense || c->sense.key != OSD_SK_RECOVERED_ERROR ||
			     c->sense.asc != OSD_ASC_READ_PAST_END_OF_OBJECT))
		cf_set(c, CF_FAIL, "READ past the end: %s, expected 1/3B/17 READ PAST END OF USER "
		       "OBJECT", c->have_sense ? cf_sense_code(&c->sense, code, sizeof(code)) :
		       "GOOD"), rc = -1;
	osd_req_free(req);
	if (rc < 0)
		return c->res;
	if (memcmp(got, d, sizeof(d)) != 0)
		return cf_set(c, CF_FAIL, "READ past the end: the data differs");
	for (i = sizeof(d); i < sizeof(got) && got[i] == 0; i++)
		;
	if (i < sizeof(got))
		return cf_set(c, CF_FAIL, "READ past the end: byte %zu beyond the end is %02Xh, not "
			      "zero", i, got[i]);
	c->sense_checked = 1; /* the short READ's 1/3B/17, checked above */
	return cf_set(c, CF_PASS, "1/3B/17, %zu bytes, tail zero", sizeof(d));
}

enum cf_result t_read_missing(struct cf_ctx *c)
{
	struct osd_obj_id obj = cf_new_id(c);
	uint8_t b[16];
	struct iovec iov = { b, sizeof(b) };
	osd_req *req = NULL;
	enum cf_result r = cf_expect(c, req, osd_req_read(&req, c->dev, &obj, 0, &iov, 1),
				     "READ of a missing object", OSD_SK_ILLEGAL_REQUEST,
				     OSD_ASC_INVALID_FIELD_IN_CDB, 24, 31);

	osd_req_free(req);
	return r;
}

enum cf_result t_read_wrong_partition(struct cf_ctx *c)
{
	struct osd_obj_id obj = { 0, 0 }, other;
	uint8_t b[16];
	struct iovec iov = { b, sizeof(b) };
	osd_req *req = NULL;
	enum cf_result r;

	if (cf_create(c, &obj) < 0)
		return c->res;
	other = obj;
	other.partition = c->part + 0x1000; /* nothing the target picks this run */
	r = cf_expect(c, req, osd_req_read(&req, c->dev, &other, 0, &iov, 1),
		      "READ in a missing partition", OSD_SK_ILLEGAL_REQUEST,
		      OSD_ASC_INVALID_FIELD_IN_CDB, 0, 0);
	osd_req_free(req);
	return cf_missing_partition_field(c, r);
}

enum cf_result t_append(struct cf_ctx *c)
{
	struct osd_obj_id obj = { 0, 0 };
	uint8_t d[3000];
	struct iovec iov = { d + 1000, 2000 };
	uint64_t at = 0;
	osd_req *req = NULL;
	int rc;

	fill(d, sizeof(d), 4);
	if (cf_create(c, &obj) < 0 || cf_write(c, &obj, 0, d, 1000) < 0)
		return c->res;
	rc = cf_exec(c, req, osd_req_append(&req, c->dev, &obj, &iov, 1), "APPEND");
	if (rc == 0 && osd_req_append_offset(req, &at) == 0 && at != 1000)
		cf_set(c, CF_FAIL, "STARTING BYTE ADDRESS OF APPEND %llu, expected 1000",
		       (unsigned long long)at), rc = -1;
	osd_req_free(req);
	if (rc < 0 || read_check(c, &obj, 0, d, sizeof(d)) < 0 || length_is(c, &obj, 3000) < 0)
		return c->res;
	return cf_set(c, CF_PASS, "appended at 1000");
}

enum cf_result t_create_and_write(struct cf_ctx *c)
{
	struct osd_obj_id obj = cf_new_id(c), got;
	uint8_t d[5000];
	struct iovec iov = { d, sizeof(d) };
	osd_req *req = NULL;
	int rc;

	fill(d, sizeof(d), 5);
	rc = cf_exec(c, req, osd_req_create_and_write(&req, c->dev, &obj, 0, &iov, 1),
		     "CREATE AND WRITE");
	if (rc == 0 && osd_req_created_id(req, &got) == 0 && got.id != obj.id)
		cf_set(c, CF_FAIL, "current command page names object 0x%llx, created 0x%llx",
		       (unsigned long long)got.id, (unsigned long long)obj.id), rc = -1;
	osd_req_free(req);
	if (rc < 0 || read_check(c, &obj, 0, d, sizeof(d)) < 0 || length_is(c, &obj, sizeof(d)) < 0)
		return c->res;
	return cf_set(c, CF_PASS, "%zu bytes read back", sizeof(d));
}

/* CLEAR or PUNCH of [1000, 3000) in 6000 bytes: zeros there, the rest in place. */
static enum cf_result zero_range(struct cf_ctx *c, int punch)
{
	struct osd_obj_id obj = { 0, 0 };
	const char *what = punch ? "PUNCH" : "CLEAR";
	uint8_t d[6000];
	osd_req *req = NULL;
	int rc;

	fill(d, sizeof(d), 6);
	if (cf_create(c, &obj) < 0 || cf_write(c, &obj, 0, d, sizeof(d)) < 0)
		return c->res;
	rc = punch ? osd_req_punch(&req, c->dev, &obj, 1000, 2000) :
		     osd_req_clear(&req, c->dev, &obj, 1000, 2000);
	rc = cf_exec(c, req, rc, what);
	osd_req_free(req);
	memset(d + 1000, 0, 2000);
	if (rc < 0 || read_check(c, &obj, 0, d, sizeof(d)) < 0 || length_is(c, &obj, sizeof(d)) < 0)
		return c->res;
	return cf_set(c, CF_PASS, "range zero, data after it in place, length kept");
}

enum cf_result t_clear(struct cf_ctx *c)
{
	return zero_range(c, 0);
}

enum cf_result t_punch(struct cf_ctx *c)
{
	return zero_range(c, 1);
}

enum cf_result t_flush(struct cf_ctx *c)
{
	struct osd_obj_id obj = { 0, 0 };
	uint8_t d[512];
	osd_req *req = NULL;
	int rc;

	fill(d, sizeof(d), 7);
	if (cf_create(c, &obj) < 0 || cf_write(c, &obj, 0, d, sizeof(d)) < 0)
		return c->res;
	rc = cf_exec(c, req, osd_req_flush(&req, c->dev, &obj, OSD_FLUSH_DATA_AND_ATTRS, 0, 0),
		     "FLUSH");
	osd_req_free(req);
	req = NULL;
	if (rc == 0 && c->ver == OSD_V2) {
		rc = cf_exec(c, req, osd_req_flush(&req, c->dev, &obj, OSD_FLUSH_RANGE, 0, 512),
			     "FLUSH of a range");
		osd_req_free(req);
	}
	if (rc < 0 || read_check(c, &obj, 0, d, sizeof(d)) < 0)
		return c->res;
	return cf_set(c, CF_PASS, "GOOD");
}

enum cf_result t_flush_partition(struct cf_ctx *c)
{
	osd_req *req = NULL;
	int rc = cf_exec(c, req, osd_req_flush_partition(&req, c->dev, c->part,
							  OSD_FLUSH_DATA_AND_ATTRS),
			 "FLUSH PARTITION");

	osd_req_free(req);
	return rc < 0 ? c->res : cf_set(c, CF_PASS, "GOOD");
}

enum cf_result t_flush_osd(struct cf_ctx *c)
{
	osd_req *req = NULL;
	int rc = cf_exec(c, req, osd_req_flush_osd(&req, c->dev, OSD_FLUSH_DATA_AND_ATTRS),
			 "FLUSH OSD");

	osd_req_free(req);
	return rc < 0 ? c->res : cf_set(c, CF_PASS, "GOOD");
}

enum cf_result t_remove(struct cf_ctx *c)
{
	struct osd_obj_id obj = { 0, 0 };
	uint8_t b[16];
	struct iovec iov = { b, sizeof(b) };
	osd_req *req = NULL;
	enum cf_result r;

	if (cf_create(c, &obj) < 0 || cf_write(c, &obj, 0, "x", 1) < 0 || cf_remove(c, &obj) < 0)
		return c->res;
	r = cf_expect(c, req, osd_req_read(&req, c->dev, &obj, 0, &iov, 1),
		      "READ of a removed object", OSD_SK_ILLEGAL_REQUEST,
		      OSD_ASC_INVALID_FIELD_IN_CDB, 24, 31);
	osd_req_free(req);
	req = NULL;
	if (r != CF_PASS)
		return r;
	r = cf_expect(c, req, osd_req_remove(&req, c->dev, &obj), "REMOVE of a removed object",
		      OSD_SK_ILLEGAL_REQUEST, OSD_ASC_INVALID_FIELD_IN_CDB, 24, 31);
	osd_req_free(req);
	return r;
}

enum cf_result t_write_missing(struct cf_ctx *c)
{
	struct osd_obj_id obj = cf_new_id(c);
	struct iovec iov = { "x", 1 };
	osd_req *req = NULL;
	enum cf_result r = cf_expect(c, req, osd_req_write(&req, c->dev, &obj, 0, &iov, 1),
				     "WRITE to a missing object", OSD_SK_ILLEGAL_REQUEST,
				     OSD_ASC_INVALID_FIELD_IN_CDB, 24, 31);

	osd_req_free(req);
	return r;
}

enum cf_result t_write_read_large(struct cf_ctx *c)
{
	const size_t len = (1u << 20) + 17; /* several iSCSI bursts, not a multiple of anything */
	struct osd_obj_id obj = { 0, 0 };
	uint8_t *d = malloc(len);
	enum cf_result r;

	if (!d)
		return cf_set(c, CF_FAIL, "out of memory");
	fill(d, len, 8);
	if (cf_create(c, &obj) < 0 || cf_write(c, &obj, 0, d, len) < 0 ||
	    read_check(c, &obj, 0, d, len) < 0 || length_is(c, &obj, len) < 0)
		r = c->res;
	else
		r = cf_set(c, CF_PASS, "%zu bytes read back", len);
	free(d);
	return r;
}

enum cf_result t_write_piggyback(struct cf_ctx *c)
{
	const uint32_t ui = OSD_APAGE_USER_BASE + OSD_APAGE_INFORMATION;
	struct osd_obj_id obj = { 0, 0 };
	uint8_t d[300], v[16];
	struct iovec iov = { d, sizeof(d) };
	struct osd_attr a;
	osd_req *req = NULL;
	size_t got;
	int rc;

	fill(d, sizeof(d), 9);
	if (cf_create(c, &obj) < 0)
		return c->res;
	rc = osd_req_write(&req, c->dev, &obj, 0, &iov, 1);
	if (rc == 0)
		rc = osd_req_add_set_attr(req, OSD_APAGE_USER_BASE + OSD_APAGE_APP_FIRST, 3, "pig", 3);
	if (rc == 0)
		rc = osd_req_add_get_attr(req, ui, OSD_ATTR_UI_LOGICAL_LENGTH);
	rc = cf_exec(c, req, rc, "WRITE with attributes");
	if (rc == 0 && (osd_req_find_attr(req, ui, OSD_ATTR_UI_LOGICAL_LENGTH, &a) < 0 ||
			osd_attr_get_u64(&a, 0) != sizeof(d)))
		cf_set(c, CF_FAIL, "LOGICAL LENGTH returned with the WRITE is not %zu (the length "
		       "after it)", sizeof(d)), rc = -1;
	osd_req_free(req);
	if (rc < 0 || read_check(c, &obj, 0, d, sizeof(d)) < 0 ||
	    cf_get_attr(c, &obj, OSD_APAGE_USER_BASE + OSD_APAGE_APP_FIRST, 3, v, sizeof(v),
			&got) < 0)
		return c->res;
	if (got != 3 || memcmp(v, "pig", 3))
		return cf_set(c, CF_FAIL, "the attribute set with the WRITE reads back %zu bytes", got);
	return cf_set(c, CF_PASS, "set and get lists carried by a WRITE");
}

/* A timestamp attribute (6 bytes) of @p obj. */
static int timestamp(struct cf_ctx *c, const struct osd_obj_id *obj, uint32_t page,
		     uint32_t num, uint64_t *t)
{
	if (cf_get_u64(c, obj, page, num, t) < 0)
		return -1;
	return 0;
}

enum cf_result t_timestamps(struct cf_ctx *c)
{
	const uint32_t ts = OSD_APAGE_USER_BASE + OSD_APAGE_TIMESTAMPS;
	const struct osd_obj_id root = { 0, 0 };
	struct osd_obj_id obj = { 0, 0 };
	uint64_t created, before, after, clock;

	if (cf_create(c, &obj) < 0 || timestamp(c, &obj, ts, OSD_ATTR_TS_CREATED, &created) < 0 ||
	    timestamp(c, &obj, ts, OSD_ATTR_TS_DATA_MODIFIED, &before) < 0 ||
	    cf_write(c, &obj, 0, "t", 1) < 0 ||
	    timestamp(c, &obj, ts, OSD_ATTR_TS_DATA_MODIFIED, &after) < 0 ||
	    timestamp(c, &root, OSD_APAGE_ROOT_BASE + OSD_APAGE_INFORMATION, OSD_ATTR_RI_CLOCK,
		      &clock) < 0)
		return c->res;
	if (created == 0 || after < before || after < created || after > clock)
		return cf_set(c, CF_FAIL, "created %llu, data modified %llu then %llu after a WRITE, "
			      "OSD clock %llu: not in order", (unsigned long long)created,
			      (unsigned long long)before, (unsigned long long)after,
			      (unsigned long long)clock);
	return cf_set(c, CF_PASS, "created <= data modified <= clock");
}

enum cf_result t_create_with_attributes(struct cf_ctx *c)
{
	const uint32_t ui = OSD_APAGE_USER_BASE + OSD_APAGE_INFORMATION;
	struct osd_obj_id obj = cf_new_id(c);
	uint8_t v[16];
	size_t got;
	osd_req *req = NULL;
	int rc = osd_req_create(&req, c->dev, &obj, 1);

	if (rc == 0)
		rc = osd_req_add_set_attr(req, ui, OSD_ATTR_UI_USERNAME, "inode 7", 7);
	rc = cf_exec(c, req, rc, "CREATE with a set list");
	osd_req_free(req);
	if (rc < 0 || cf_get_attr(c, &obj, ui, OSD_ATTR_UI_USERNAME, v, sizeof(v), &got) < 0)
		return c->res;
	if (got != 7 || memcmp(v, "inode 7", 7))
		return cf_set(c, CF_FAIL, "USERNAME set with the CREATE reads back %zu bytes", got);
	return cf_set(c, CF_PASS, "USERNAME set by the CREATE");
}

enum cf_result t_append_missing(struct cf_ctx *c)
{
	struct osd_obj_id obj = cf_new_id(c);
	struct iovec iov = { "x", 1 };
	osd_req *req = NULL;
	enum cf_result r = cf_expect(c, req, osd_req_append(&req, c->dev, &obj, &iov, 1),
				     "APPEND to a missing object", OSD_SK_ILLEGAL_REQUEST,
				     OSD_ASC_INVALID_FIELD_IN_CDB, 24, 31);

	osd_req_free(req);
	return r;
}

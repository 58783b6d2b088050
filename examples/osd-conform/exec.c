/*
 * The test helpers: one outcome per test, decided from the command's status
 * and sense data (never from libosd's errno mapping, which may change), and
 * the few commands every test needs.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "conform.h"

enum cf_result cf_set(struct cf_ctx *c, enum cf_result r, const char *fmt, ...)
{
	va_list ap;

	c->res = r;
	va_start(ap, fmt);
	vsnprintf(c->detail, sizeof(c->detail), fmt, ap);
	va_end(ap);
	return r;
}

int cf_sense_unsupported(const struct osd_sense *s)
{
	if (s->key != OSD_SK_ILLEGAL_REQUEST)
		return 0;
	if (s->asc == OSD_ASC_INVALID_OPCODE || s->asc == OSD_ASC_NONE)
		return 1;
	/* spc4r37 §4.5.2.4.2: the field pointer names the byte of the offending field */
	return s->asc == OSD_ASC_INVALID_FIELD_IN_CDB && s->has_field && s->field_in_cdb &&
	       s->field_pointer <= 11;
}

const char *cf_sense_code(const struct osd_sense *s, char *buf, size_t len)
{
	snprintf(buf, len, "%X/%02X/%02X", s->key, s->asc >> 8, s->asc & 0xFF);
	return buf;
}

/* The outcome of a command that did not end GOOD. */
static int record_failure(struct cf_ctx *c, osd_req *req, int rc, const char *what)
{
	const struct osd_sense *s = req ? osd_req_sense(req) : NULL;
	char code[16];

	c->have_sense = s != NULL;
	if (s)
		c->sense = *s;
	if (!req && rc == -ENOTSUP)
		cf_set(c, CF_NA, "%s: not an OSD-%d command", what, c->ver);
	else if (!req)
		cf_set(c, CF_FAIL, "%s: cannot build the request: %s", what, strerror(-rc));
	else if (s && cf_sense_unsupported(s))
		cf_set(c, CF_UNSUPPORTED, "%s: %s (%s)", what, cf_sense_code(s, code, sizeof(code)),
		       osd_req_error(req));
	else
		cf_set(c, CF_FAIL, "%s: %s", what, *osd_req_error(req) ? osd_req_error(req) :
		       strerror(-rc));
	return -1;
}

int cf_exec(struct cf_ctx *c, osd_req *req, int build_rc, const char *what)
{
	int rc;

	if (build_rc < 0)
		return record_failure(c, NULL, build_rc, what);
	rc = osd_req_execute(req);
	if (rc == 0) {
		const struct osd_sense *s = osd_req_sense(req);

		/* GOOD, or RECOVERED ERROR (a short READ: the caller checks it) */
		c->have_sense = s != NULL;
		if (s)
			c->sense = *s;
		return 0;
	}
	return record_failure(c, req, rc, what);
}

enum cf_result cf_expect(struct cf_ctx *c, osd_req *req, int build_rc, const char *what,
			 uint8_t key, uint16_t asc, unsigned field_lo, unsigned field_hi)
{
	const struct osd_sense *s;
	char got[16];
	int rc;

	if (build_rc < 0)
		return record_failure(c, NULL, build_rc, what), c->res;
	rc = osd_req_execute(req);
	s = osd_req_sense(req);
	c->have_sense = s != NULL;
	if (s)
		c->sense = *s;
	if (rc == 0 && !s)
		return cf_set(c, CF_FAIL, "%s: GOOD, expected CHECK CONDITION %X/%02X/%02X", what,
			      key, asc >> 8, asc & 0xFF);
	if (!s)
		return cf_set(c, CF_FAIL, "%s: no sense data: %s", what, osd_req_error(req));
	if (cf_sense_unsupported(s) && !(s->key == key && s->asc == asc))
		return cf_set(c, CF_UNSUPPORTED, "%s: %s (%s)", what,
			      cf_sense_code(s, got, sizeof(got)), osd_req_error(req));
	if (s->key != key || s->asc != asc)
		return cf_set(c, CF_FAIL, "%s: %s, expected %X/%02X/%02X (%s)", what,
			      cf_sense_code(s, got, sizeof(got)), key, asc >> 8, asc & 0xFF,
			      osd_req_error(req));
	if (field_hi && s->has_field && s->field_in_cdb &&
	    (s->field_pointer < field_lo || s->field_pointer > field_hi))
		return cf_set(c, CF_FAIL, "%s: field pointer %u, expected %u..%u (%s)", what,
			      s->field_pointer, field_lo, field_hi, osd_req_error(req));
	c->sense_checked = 1;
	return cf_set(c, CF_PASS, "%s", cf_sense_code(s, got, sizeof(got)));
}

struct osd_obj_id cf_new_id(struct cf_ctx *c)
{
	struct osd_obj_id o = { c->part, c->next_id++ };

	return o;
}

int cf_create(struct cf_ctx *c, struct osd_obj_id *obj)
{
	osd_req *req = NULL;
	int rc;

	if (!obj->id)
		*obj = cf_new_id(c);
	rc = cf_exec(c, req, osd_req_create(&req, c->dev, obj, 1), "CREATE");
	osd_req_free(req);
	return rc;
}

int cf_create_collection(struct cf_ctx *c, struct osd_obj_id *col)
{
	osd_req *req = NULL;
	int rc;

	*col = cf_new_id(c);
	rc = cf_exec(c, req, osd_req_create_collection(&req, c->dev, col), "CREATE COLLECTION");
	osd_req_free(req);
	return rc;
}

int cf_write(struct cf_ctx *c, const struct osd_obj_id *obj, uint64_t off, const void *buf,
	     size_t len)
{
	struct iovec iov = { (void *)buf, len };
	osd_req *req = NULL;
	int rc = cf_exec(c, req, osd_req_write(&req, c->dev, obj, off, &iov, 1), "WRITE");

	osd_req_free(req);
	return rc;
}

int cf_read(struct cf_ctx *c, const struct osd_obj_id *obj, uint64_t off, void *buf,
	    size_t len, uint64_t *got)
{
	struct iovec iov = { buf, len };
	osd_req *req = NULL;
	int rc = cf_exec(c, req, osd_req_read(&req, c->dev, obj, off, &iov, 1), "READ");

	if (rc == 0 && got)
		*got = osd_req_bytes_read(req);
	osd_req_free(req);
	return rc;
}

int cf_remove(struct cf_ctx *c, const struct osd_obj_id *obj)
{
	osd_req *req = NULL;
	int rc = cf_exec(c, req, osd_req_remove(&req, c->dev, obj), "REMOVE");

	osd_req_free(req);
	return rc;
}

int cf_get_attr(struct cf_ctx *c, const struct osd_obj_id *obj, uint32_t page, uint32_t num,
		void *buf, size_t len, size_t *got)
{
	struct osd_attr a;
	osd_req *req = NULL;
	int rc = osd_req_get_attributes(&req, c->dev, obj);

	if (rc == 0)
		rc = osd_req_add_get_attr(req, page, num);
	rc = cf_exec(c, req, rc, "GET ATTRIBUTES");
	if (rc == 0) {
		*got = 0;
		if (osd_req_find_attr(req, page, num, &a) == 0 && a.value) {
			*got = a.length;
			memcpy(buf, a.value, a.length < len ? a.length : len);
		}
	}
	osd_req_free(req);
	return rc;
}

int cf_get_u64(struct cf_ctx *c, const struct osd_obj_id *obj, uint32_t page, uint32_t num,
	       uint64_t *v)
{
	uint8_t b[8];
	size_t got;

	if (cf_get_attr(c, obj, page, num, b, sizeof(b), &got) < 0)
		return -1;
	if (got == 0 || got > 8)
		return cf_set(c, CF_FAIL, "attribute %08Xh/%Xh of 0x%llx/0x%llx: %s", page, num,
			      (unsigned long long)obj->partition, (unsigned long long)obj->id,
			      got ? "longer than 8 bytes" : "not defined"), -1;
	*v = 0;
	for (size_t i = 0; i < got; i++)
		*v = *v << 8 | b[i];
	return 0;
}

int cf_set_attr(struct cf_ctx *c, const struct osd_obj_id *obj, uint32_t page, uint32_t num,
		const void *val, uint16_t len)
{
	osd_req *req = NULL;
	int rc = osd_req_set_attributes(&req, c->dev, obj);

	if (rc == 0)
		rc = osd_req_add_set_attr(req, page, num, val, len);
	rc = cf_exec(c, req, rc, "SET ATTRIBUTES");
	osd_req_free(req);
	return rc;
}

int cf_add_member(struct cf_ctx *c, const struct osd_obj_id *obj, const struct osd_obj_id *col)
{
	uint8_t id[8];

	for (int i = 0; i < 8; i++)
		id[i] = (uint8_t)(col->id >> (56 - 8 * i));
	return cf_set_attr(c, obj, OSD_APAGE_USER_BASE + OSD_APAGE_COLLECTIONS, 1, id, 8);
}

/* Appends @p id to c->ids. */
static int add_id(struct cf_ctx *c, uint64_t id)
{
	if (c->nids == c->ids_cap) {
		size_t cap = c->ids_cap ? 2 * c->ids_cap : 1024;
		uint64_t *v = realloc(c->ids, cap * sizeof(*v));

		if (!v)
			return cf_set(c, CF_FAIL, "out of memory"), -1;
		c->ids = v;
		c->ids_cap = cap;
	}
	c->ids[c->nids++] = id;
	return 0;
}

int cf_list_all(struct cf_ctx *c, enum osd_action action, const struct osd_obj_id *obj,
		uint32_t alloc)
{
	struct osd_list_cursor cur = { 0, 0 };
	const char *what = osd_action_name(action);
	uint64_t from = 0;

	c->nids = 0;
	for (unsigned rounds = 0; rounds < 1000000; rounds++) {
		struct osd_list_result res;
		osd_req *req = NULL;
		int rc = action == OSD_ACT_LIST ?
			 osd_req_list(&req, c->dev, obj->partition, &cur, alloc) :
			 osd_req_list_collection(&req, c->dev, obj, &cur, alloc);

		if (cf_exec(c, req, rc, what) < 0) {
			osd_req_free(req);
			return -1;
		}
		rc = osd_req_list_result(req, &res, &cur);
		for (size_t i = 0; rc == 0 && i < res.num_ids; i++)
			if (add_id(c, osd_list_id(&res, i)) < 0)
				rc = -ENOMEM;
		osd_req_free(req);
		if (rc == -ENOMEM)
			return -1;
		if (rc < 0)
			return cf_set(c, CF_FAIL, "%s: undecodable answer: %s", what,
				      strerror(-rc)), -1;
		if (cur.next_id == 0)
			return 0;
		/* ids are listed in ascending order: a continuation goes forward */
		if (cur.next_id <= from)
			return cf_set(c, CF_FAIL, "%s: CONTINUATION OBJECT_ID 0x%llx does not advance "
				      "past 0x%llx", what, (unsigned long long)cur.next_id,
				      (unsigned long long)from), -1;
		from = cur.next_id;
	}
	return cf_set(c, CF_FAIL, "%s: the continuation never ends", what), -1;
}

int cf_listed(const struct cf_ctx *c, uint64_t id)
{
	for (size_t i = 0; i < c->nids; i++)
		if (c->ids[i] == id)
			return 1;
	return 0;
}

int cf_credential(struct cf_ctx *c, const struct osd_obj_id *obj, int is_collection,
		  uint16_t perms, enum osd_sec_method method, struct osd_credential *cr)
{
	struct osd_cred_request r;
	int rc;

	memset(&r, 0, sizeof(r));
	r.version = c->ver;
	r.obj = *obj;
	r.is_collection = is_collection;
	r.permissions = perms;
	r.method = method;
	/* the tools' credential source derives the keys the partition was given */
	rc = osd_keyring_credential(&r, cr, c->d->kr);
	if (rc < 0)
		return cf_set(c, CF_FAIL, "cannot issue a credential: %s", strerror(-rc)), -1;
	return 0;
}

enum cf_result cf_missing_partition_field(struct cf_ctx *c, enum cf_result r)
{
	unsigned cap = (unsigned)osd_cdb_cap_offset(c->ver);
	unsigned icv = (unsigned)osd_cdb_icv_offset(c->ver);
	unsigned p;

	if (r != CF_PASS || !c->sense.has_field || !c->sense.field_in_cdb)
		return r;
	p = c->sense.field_pointer;
	if (p >= 16 && p <= 23)
		return r;
	/* a missing partition has no keys: the capability check fails first */
	if (c->method != OSD_SEC_NOSEC && ((p >= cap && p < cap + OSD_CAP_V2_LEN) ||
					   (p >= icv && p < icv + osd_cdb_icv_len(c->ver))))
		return r;
	return cf_set(c, CF_FAIL, "field pointer %u, expected PARTITION_ID (16)%s", p,
		      c->method != OSD_SEC_NOSEC ? " or the capability" : "");
}

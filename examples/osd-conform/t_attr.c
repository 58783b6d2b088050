/*
 * GET and SET ATTRIBUTES in list and page mode, the information pages of
 * the root, a partition and a user object, and the refusals of read-only
 * attributes.
 */
#include <stdio.h>
#include <string.h>
#include "conform.h"
#include "answers.h"
#include "tests.h"

#define APP_PAGE (OSD_APAGE_USER_BASE + OSD_APAGE_APP_FIRST) /* an application page */
#define UI_PAGE (OSD_APAGE_USER_BASE + OSD_APAGE_INFORMATION)

enum cf_result t_get_attr_list(struct cf_ctx *c)
{
	struct osd_obj_id obj = { 0, 0 };
	static const uint32_t nums[] = { OSD_ATTR_UI_PARTITION_ID, OSD_ATTR_UI_OBJECT_ID,
					 OSD_ATTR_UI_LOGICAL_LENGTH };
	uint64_t want[3];
	osd_req *req = NULL;
	int rc;

	if (cf_create(c, &obj) < 0 || cf_write(c, &obj, 0, "0123456789", 10) < 0)
		return c->res;
	want[0] = obj.partition;
	want[1] = obj.id;
	want[2] = 10;
	rc = osd_req_get_attributes(&req, c->dev, &obj);
	for (unsigned i = 0; rc == 0 && i < 3; i++)
		rc = osd_req_add_get_attr(req, UI_PAGE, nums[i]);
	rc = cf_exec(c, req, rc, "GET ATTRIBUTES (list)");
	for (unsigned i = 0; rc == 0 && i < 3; i++) {
		struct osd_attr a;

		if (osd_req_find_attr(req, UI_PAGE, nums[i], &a) < 0 || a.length != 8)
			cf_set(c, CF_FAIL, "attribute %Xh/%Xh missing or not 8 bytes", UI_PAGE,
			       nums[i]), rc = -1;
		else if (osd_attr_get_u64(&a, ~0ull) != want[i])
			cf_set(c, CF_FAIL, "attribute %Xh/%Xh is %llu, expected %llu", UI_PAGE, nums[i],
			       (unsigned long long)osd_attr_get_u64(&a, 0),
			       (unsigned long long)want[i]), rc = -1;
	}
	osd_req_free(req);
	return rc < 0 ? c->res : cf_set(c, CF_PASS, "three attributes in one list");
}

enum cf_result t_get_attr_page(struct cf_ctx *c)
{
	struct osd_obj_id obj = { 0, 0 };
	const uint32_t page = OSD_APAGE_USER_BASE + OSD_APAGE_TIMESTAMPS;
	const uint8_t *pg;
	char why[256];
	size_t len;
	osd_req *req = NULL;
	int rc;

	if (cf_create(c, &obj) < 0)
		return c->res;
	rc = osd_req_get_attributes(&req, c->dev, &obj);
	if (rc == 0)
		rc = osd_req_get_page(req, page, 256);
	rc = cf_exec(c, req, rc, "GET ATTRIBUTES (page)");
	if (rc == 0 && osd_req_page(req, &pg, &len) < 0)
		cf_set(c, CF_FAIL, "no page in the answer"), rc = -1;
	if (rc == 0 && cf_check_timestamps_page(pg, len, page, why, sizeof(why)) < 0)
		cf_set(c, CF_FAIL, "%s", why), rc = -1;
	osd_req_free(req);
	return rc < 0 ? c->res : cf_set(c, CF_PASS, "%s", why);
}

enum cf_result t_set_attr_list(struct cf_ctx *c)
{
	struct osd_obj_id obj = { 0, 0 };
	uint8_t v[64];
	size_t got;
	osd_req *req = NULL;
	int rc;

	if (cf_create(c, &obj) < 0)
		return c->res;
	rc = osd_req_set_attributes(&req, c->dev, &obj);
	if (rc == 0)
		rc = osd_req_add_set_attr(req, APP_PAGE, 1, "conformance", 11);
	if (rc == 0)
		rc = osd_req_add_set_attr(req, APP_PAGE, 2, "\x01\x02\x03", 3);
	if (rc == 0)
		rc = osd_req_add_set_attr(req, UI_PAGE, OSD_ATTR_UI_USERNAME, "name", 4);
	rc = cf_exec(c, req, rc, "SET ATTRIBUTES (list)");
	osd_req_free(req);
	if (rc < 0 || cf_get_attr(c, &obj, APP_PAGE, 1, v, sizeof(v), &got) < 0)
		return c->res;
	if (got != 11 || memcmp(v, "conformance", 11))
		return cf_set(c, CF_FAIL, "attribute %Xh/1 reads back %zu bytes, not the 11 set",
			      APP_PAGE, got);
	if (cf_get_attr(c, &obj, APP_PAGE, 2, v, sizeof(v), &got) < 0)
		return c->res;
	if (got != 3 || memcmp(v, "\x01\x02\x03", 3))
		return cf_set(c, CF_FAIL, "attribute %Xh/2 does not read back", APP_PAGE);
	if (cf_get_attr(c, &obj, UI_PAGE, OSD_ATTR_UI_USERNAME, v, sizeof(v), &got) < 0)
		return c->res;
	if (got != 4 || memcmp(v, "name", 4))
		return cf_set(c, CF_FAIL, "USERNAME does not read back");
	/* length 0 deletes: reads back undefined */
	if (cf_set_attr(c, &obj, APP_PAGE, 1, NULL, 0) < 0 ||
	    cf_get_attr(c, &obj, APP_PAGE, 1, v, sizeof(v), &got) < 0)
		return c->res;
	if (got != 0)
		return cf_set(c, CF_FAIL, "a deleted attribute reads back %zu bytes", got);
	return cf_set(c, CF_PASS, "set, read back, deleted");
}

enum cf_result t_set_attr_page(struct cf_ctx *c)
{
	struct osd_obj_id obj = { 0, 0 };
	uint8_t v[16];
	size_t got;
	osd_req *req = NULL;
	int rc;

	if (cf_create(c, &obj) < 0)
		return c->res;
	rc = osd_req_set_attributes(&req, c->dev, &obj);
	if (rc == 0)
		rc = osd_req_get_page(req, OSD_APAGE_USER_BASE + OSD_APAGE_TIMESTAMPS, 256);
	if (rc == 0)
		rc = osd_req_add_set_attr(req, APP_PAGE, 7, "page", 4);
	rc = cf_exec(c, req, rc, "SET ATTRIBUTES (page)");
	osd_req_free(req);
	if (rc < 0 || cf_get_attr(c, &obj, APP_PAGE, 7, v, sizeof(v), &got) < 0)
		return c->res;
	if (got != 4 || memcmp(v, "page", 4))
		return cf_set(c, CF_FAIL, "the value set in page mode reads back %zu bytes", got);
	return cf_set(c, CF_PASS, "set in page mode, read back");
}

enum cf_result t_set_attr_readonly(struct cf_ctx *c)
{
	struct osd_obj_id obj = { 0, 0 };
	osd_req *req = NULL;
	enum cf_result r;
	int rc;

	if (cf_create(c, &obj) < 0)
		return c->res;
	rc = osd_req_set_attributes(&req, c->dev, &obj);
	if (rc == 0)
		rc = osd_req_add_set_attr_u64(req, UI_PAGE, OSD_ATTR_UI_OBJECT_ID, obj.id + 1);
	r = cf_expect(c, req, rc, "SET ATTRIBUTES of USER_OBJECT_ID", OSD_SK_ILLEGAL_REQUEST,
		      OSD_ASC_INVALID_FIELD_IN_PARAM_LIST, 0, 0);
	osd_req_free(req);
	return r;
}

enum cf_result t_get_attr_undefined(struct cf_ctx *c)
{
	struct osd_obj_id obj = { 0, 0 };
	uint8_t v[16];
	size_t got;

	if (cf_create(c, &obj) < 0 || cf_get_attr(c, &obj, APP_PAGE, 0x1234, v, sizeof(v), &got) < 0)
		return c->res;
	if (got != 0)
		return cf_set(c, CF_FAIL, "an attribute never set reads back %zu bytes", got);
	return cf_set(c, CF_PASS, "reported undefined");
}

enum cf_result t_set_logical_length(struct cf_ctx *c)
{
	struct osd_obj_id obj = { 0, 0 };
	uint8_t d[4000], got[4000];
	uint64_t n = 0, v;

	memset(d, 0x5A, sizeof(d));
	if (cf_create(c, &obj) < 0 || cf_write(c, &obj, 0, d, sizeof(d)) < 0)
		return c->res;
	if (cf_set_attr(c, &obj, UI_PAGE, OSD_ATTR_UI_LOGICAL_LENGTH,
			"\0\0\0\0\0\0\x03\xE8", 8) < 0 || /* 1000 */
	    cf_get_u64(c, &obj, UI_PAGE, OSD_ATTR_UI_LOGICAL_LENGTH, &v) < 0)
		return c->res;
	if (v != 1000)
		return cf_set(c, CF_FAIL, "LOGICAL LENGTH %llu after setting 1000",
			      (unsigned long long)v);
	if (cf_read(c, &obj, 0, got, sizeof(got), &n) < 0)
		return c->res;
	if (n != 1000 || memcmp(got, d, 1000))
		return cf_set(c, CF_FAIL, "READ after truncation: %llu bytes",
			      (unsigned long long)n);
	return cf_set(c, CF_PASS, "truncated to 1000");
}

enum cf_result t_root_information(struct cf_ctx *c)
{
	const struct osd_obj_id root = { 0, 0 };
	const uint32_t ri = OSD_APAGE_ROOT_BASE + OSD_APAGE_INFORMATION;
	uint8_t id[OSD_SYSTEM_ID_LEN], v[64];
	uint64_t parts;
	size_t got;

	if (cf_get_attr(c, &root, ri, OSD_ATTR_RI_SYSTEM_ID, v, sizeof(v), &got) < 0)
		return c->res;
	if (got != OSD_SYSTEM_ID_LEN)
		return cf_set(c, CF_FAIL, "OSD SYSTEM ID of %zu bytes, expected 20", got);
	if (osd_dev_system_id(c->dev, id) == 0 && memcmp(id, v, sizeof(id)))
		return cf_set(c, CF_FAIL, "OSD SYSTEM ID changed since the device was opened");
	if (cf_get_attr(c, &root, ri, OSD_ATTR_RI_VENDOR_ID, v, sizeof(v), &got) < 0)
		return c->res;
	if (got != 8)
		return cf_set(c, CF_FAIL, "VENDOR IDENTIFICATION of %zu bytes, expected 8", got);
	if (cf_get_u64(c, &root, ri, OSD_ATTR_RI_NUM_PARTITIONS, &parts) < 0)
		return c->res;
	if (parts < 1)
		return cf_set(c, CF_FAIL, "NUMBER OF PARTITIONS 0 with the scratch partition present");
	if (cf_get_attr(c, &root, ri, OSD_ATTR_RI_CLOCK, v, sizeof(v), &got) < 0)
		return c->res;
	if (got != 6)
		return cf_set(c, CF_FAIL, "CLOCK of %zu bytes, expected 6", got);
	return cf_set(c, CF_PASS, "system id, vendor, %llu partitions, clock",
		      (unsigned long long)parts);
}

/* Whether the outcome is ILLEGAL REQUEST 26h/00h naming attribute @p page/@p num. */
static int attr_refused(const struct cf_ctx *c, uint32_t page, uint32_t num)
{
	if (!c->have_sense || c->sense.key != OSD_SK_ILLEGAL_REQUEST ||
	    c->sense.asc != OSD_ASC_INVALID_FIELD_IN_PARAM_LIST)
		return 0;
	for (unsigned i = 0; i < c->sense.num_attrs; i++)
		if (c->sense.attrs[i].page == page && c->sense.attrs[i].number == num)
			return 1;
	return 0;
}

/*
 * NUMBER OF OBJECTS of the scratch partition. A target that does not keep it
 * reports it undefined, or refuses it by name (26h/00h with the attribute
 * identification descriptor), as for any attribute it does not implement:
 * that is UNSUPPORTED, not a failure (osdfs then counts for itself).
 */
static int object_count(struct cf_ctx *c, uint64_t *v)
{
	const struct osd_obj_id part = { c->part, 0 };
	const uint32_t pi = OSD_APAGE_PARTITION_BASE + OSD_APAGE_INFORMATION;
	uint8_t b[8];
	size_t got;

	if (cf_get_attr(c, &part, pi, OSD_ATTR_PI_NUM_OBJECTS, b, sizeof(b), &got) < 0) {
		if (attr_refused(c, pi, OSD_ATTR_PI_NUM_OBJECTS))
			c->res = CF_UNSUPPORTED;
		return -1;
	}
	if (got == 0)
		return cf_set(c, CF_UNSUPPORTED, "NUMBER OF OBJECTS (%08Xh/%Xh) is not defined",
			      OSD_APAGE_PARTITION_BASE + OSD_APAGE_INFORMATION,
			      OSD_ATTR_PI_NUM_OBJECTS), -1;
	if (got != 8)
		return cf_set(c, CF_FAIL, "NUMBER OF OBJECTS of %zu bytes, expected 8", got), -1;
	*v = 0;
	for (int i = 0; i < 8; i++)
		*v = *v << 8 | b[i];
	return 0;
}

enum cf_result t_partition_information(struct cf_ctx *c)
{
	const struct osd_obj_id part = { c->part, 0 };
	const uint32_t pi = OSD_APAGE_PARTITION_BASE + OSD_APAGE_INFORMATION;
	struct osd_obj_id obj = { 0, 0 };
	uint64_t id, before, after;

	if (cf_get_u64(c, &part, pi, OSD_ATTR_PI_PARTITION_ID, &id) < 0)
		return c->res;
	if (id != c->part)
		return cf_set(c, CF_FAIL, "PARTITION_ID attribute 0x%llx, expected 0x%llx",
			      (unsigned long long)id, (unsigned long long)c->part);
	if (object_count(c, &before) < 0 || cf_create(c, &obj) < 0 ||
	    cf_get_u64(c, &part, pi, OSD_ATTR_PI_NUM_OBJECTS, &after) < 0)
		return c->res;
	if (after != before + 1)
		return cf_set(c, CF_FAIL, "NUMBER OF OBJECTS %llu after a CREATE, was %llu",
			      (unsigned long long)after, (unsigned long long)before);
	return cf_set(c, CF_PASS, "partition id, object count follows CREATE");
}

enum cf_result t_get_attr_missing(struct cf_ctx *c)
{
	struct osd_obj_id obj = cf_new_id(c);
	osd_req *req = NULL;
	enum cf_result r;
	int rc = osd_req_get_attributes(&req, c->dev, &obj);

	if (rc == 0)
		rc = osd_req_add_get_attr(req, UI_PAGE, OSD_ATTR_UI_LOGICAL_LENGTH);
	r = cf_expect(c, req, rc, "GET ATTRIBUTES of a missing object", OSD_SK_ILLEGAL_REQUEST,
		      OSD_ASC_INVALID_FIELD_IN_CDB, 24, 31);
	osd_req_free(req);
	return r;
}

enum cf_result t_set_attr_bad_length(struct cf_ctx *c)
{
	struct osd_obj_id obj = { 0, 0 };
	osd_req *req = NULL;
	enum cf_result r;
	uint64_t len;
	int rc;

	if (cf_create(c, &obj) < 0 || cf_write(c, &obj, 0, "0123", 4) < 0)
		return c->res;
	rc = osd_req_set_attributes(&req, c->dev, &obj);
	if (rc == 0) /* LOGICAL LENGTH is 8 bytes */
		rc = osd_req_add_set_attr(req, UI_PAGE, OSD_ATTR_UI_LOGICAL_LENGTH, "\0\0\0\x01", 4);
	r = cf_expect(c, req, rc, "SET ATTRIBUTES of a 4-byte LOGICAL LENGTH",
		      OSD_SK_ILLEGAL_REQUEST, OSD_ASC_INVALID_FIELD_IN_PARAM_LIST, 0, 0);
	osd_req_free(req);
	if (r != CF_PASS)
		return r;
	if (cf_get_u64(c, &obj, UI_PAGE, OSD_ATTR_UI_LOGICAL_LENGTH, &len) < 0)
		return c->res;
	if (len != 4)
		return cf_set(c, CF_FAIL, "the refused value changed LOGICAL LENGTH to %llu",
			      (unsigned long long)len);
	return cf_set(c, CF_PASS, "5/26/00, length unchanged");
}

/*
 * Partitions, keys, FORMAT OSD and the capability checks: a capability for
 * another object, missing permissions, a bad request ICV, an expired
 * capability, a weaker security method than the partition requires.
 */
#include <stdio.h>
#include <string.h>
#include "conform.h"
#include "tests.h"

#define PI_PAGE (OSD_APAGE_PARTITION_BASE + OSD_APAGE_INFORMATION)

/* The CDB bytes of the capability (osd-r10 §4.9.2.2; 80 bytes v1, 104 v2). */
static unsigned cap_last(const struct cf_ctx *c)
{
	return (unsigned)osd_cdb_cap_offset(c->ver) + (c->ver == OSD_V1 ? OSD_CAP_V1_LEN :
							OSD_CAP_V2_LEN) - 1;
}

enum cf_result t_create_partition_existing(struct cf_ctx *c)
{
	osd_req *req = NULL;
	enum cf_result r = cf_expect(c, req, osd_req_create_partition(&req, c->dev, c->part),
				     "CREATE PARTITION of an existing id", OSD_SK_ILLEGAL_REQUEST,
				     OSD_ASC_INVALID_FIELD_IN_CDB, 16, 23);

	osd_req_free(req);
	return r;
}

/* A second partition, target-picked and secured like the scratch one. 0 or -1. */
static int second_partition(struct cf_ctx *c, struct osd_obj_id *p2)
{
	osd_req *req = NULL;
	int rc = cf_exec(c, req, osd_req_create_partition(&req, c->dev, 0),
			 "CREATE PARTITION (target picks)");

	p2->partition = 0;
	p2->id = 0;
	if (rc == 0 && (osd_req_created_id(req, p2) < 0 || p2->partition < OSD_FIRST_ID))
		cf_set(c, CF_FAIL, "CREATE PARTITION reported no partition id"), rc = -1;
	osd_req_free(req);
	p2->id = 0;
	if (rc == 0 && (rc = tc_device_secure_partition(c->d, p2->partition)) < 0)
		cf_set(c, CF_FAIL, "securing partition 0x%llx: %s",
		       (unsigned long long)p2->partition, osd_dev_error(c->dev)), rc = -1;
	return rc;
}

/* Best effort, keeping the test's outcome: removes @p obj (if not NULL) and
 * partition @p p2. */
static void drop_partition(struct cf_ctx *c, const struct osd_obj_id *p2,
			   const struct osd_obj_id *obj)
{
	struct cf_ctx saved = *c;
	osd_req *req = NULL;

	if (obj)
		cf_remove(c, obj);
	if (osd_req_remove_partition(&req, c->dev, p2->partition) == 0)
		osd_req_execute(req);
	osd_req_free(req);
	c->res = saved.res;
	c->have_sense = saved.have_sense;
	c->sense = saved.sense;
	memcpy(c->detail, saved.detail, sizeof(c->detail));
}

/* REMOVE PARTITION of @p p2 holding @p obj, then of the empty one, then a GET. */
static enum cf_result remove_partition(struct cf_ctx *c, const struct osd_obj_id *p2,
				       const struct osd_obj_id *obj)
{
	osd_req *req = NULL;
	enum cf_result r;
	int rc;

	r = cf_expect(c, req, osd_req_remove_partition(&req, c->dev, p2->partition),
		      "REMOVE PARTITION of a non-empty partition", OSD_SK_ILLEGAL_REQUEST,
		      OSD_ASC_PARTITION_OR_COLLECTION_NOT_EMPTY, 0, 0);
	osd_req_free(req);
	req = NULL;
	if (r != CF_PASS || cf_remove(c, obj) < 0)
		return c->res;
	rc = cf_exec(c, req, osd_req_remove_partition(&req, c->dev, p2->partition),
		     "REMOVE PARTITION");
	osd_req_free(req);
	req = NULL;
	if (rc < 0)
		return c->res;
	rc = osd_req_get_attributes(&req, c->dev, p2);
	if (rc == 0)
		rc = osd_req_add_get_attr(req, PI_PAGE, OSD_ATTR_PI_PARTITION_ID);
	r = cf_expect(c, req, rc, "GET ATTRIBUTES of a removed partition", OSD_SK_ILLEGAL_REQUEST,
		      OSD_ASC_INVALID_FIELD_IN_CDB, 0, 0);
	osd_req_free(req);
	return cf_missing_partition_field(c, r);
}

enum cf_result t_remove_partition(struct cf_ctx *c)
{
	struct osd_obj_id p2, obj;
	enum cf_result r;

	if (second_partition(c, &p2) < 0) {
		if (p2.partition)
			drop_partition(c, &p2, NULL);
		return c->res;
	}
	obj.partition = p2.partition;
	obj.id = OSD_FIRST_ID;
	r = cf_create(c, &obj) < 0 ? c->res : remove_partition(c, &p2, &obj);
	if (r != CF_PASS)
		drop_partition(c, &p2, &obj);
	return r;
}

enum cf_result t_set_key(struct cf_ctx *c)
{
	struct osd_obj_id obj = { 0, 0 };
	const struct osd_obj_id part = { c->part, 0 };
	const uint32_t ps = OSD_APAGE_PARTITION_BASE + OSD_APAGE_POLICY_SECURITY;
	struct osd_cred_request w;
	struct osd_credential cr;
	uint8_t id[16];
	size_t got;
	osd_req *req = NULL;
	enum cf_result r;
	int rc;

	if (cf_create(c, &obj) < 0 || cf_write(c, &obj, 0, "key", 3) < 0)
		return c->res;
	if ((rc = tc_device_set_partition_keys(c->d, c->part, 1)) < 0)
		return cf_set(c, CF_FAIL, "SET KEY (partition key, working key 1): %s",
			      *osd_dev_error(c->dev) ? osd_dev_error(c->dev) : strerror(-rc));
	if (cf_get_attr(c, &part, ps, OSD_ATTR_PS_WORKING_KEY_ID(1), id, sizeof(id), &got) < 0)
		return c->res;
	if (got != OSD_KEY_ID_LEN)
		return cf_set(c, CF_FAIL, "working key 1 identifier of %zu bytes, expected 7", got);
	if (c->method == OSD_SEC_NOSEC)
		return cf_set(c, CF_PASS, "keys set, identifier published");
	/* a capability signed with the new working key is accepted */
	memset(&w, 0, sizeof(w));
	w.version = c->ver;
	w.obj = obj;
	w.permissions = OSD_PERM_WRITE;
	w.method = c->method;
	w.key_version = 1;
	if ((rc = osd_keyring_credential(&w, &cr, c->d->kr)) < 0)
		return cf_set(c, CF_FAIL, "credential for working key 1: %s", strerror(-rc));
	{
		struct iovec iov = { "k1", 2 };

		rc = osd_req_write(&req, c->dev, &obj, 0, &iov, 1);
		if (rc == 0)
			rc = osd_req_set_credential(req, &cr);
		rc = cf_exec(c, req, rc, "WRITE signed with working key 1");
		osd_req_free(req);
		req = NULL;
		if (rc < 0)
			return c->res;
	}
	/* a key version never set is refused (key selection, capability byte 1) */
	cr.cap.key_version = 9;
	rc = osd_req_get_attributes(&req, c->dev, &obj);
	if (rc == 0)
		rc = osd_req_set_credential(req, &cr);
	r = cf_expect(c, req, rc, "a capability naming an unset working key",
		      OSD_SK_ILLEGAL_REQUEST, OSD_ASC_INVALID_FIELD_IN_CDB,
		      (unsigned)osd_cdb_cap_offset(c->ver), cap_last(c));
	osd_req_free(req);
	memset(&cr, 0, sizeof(cr));
	return r;
}

enum cf_result t_set_master_key(struct cf_ctx *c)
{
	struct osd_set_master_key_params p;
	osd_req *req = NULL;
	int rc;

	memset(&p, 0, sizeof(p));
	p.dh_step = 0; /* SEED EXCHANGE */
	memcpy(p.key_id, "conform", OSD_KEY_ID_LEN);
	p.alloc_len = 512;
	rc = cf_exec(c, req, osd_req_set_master_key(&req, c->dev, &p), "SET MASTER KEY");
	osd_req_free(req);
	return rc < 0 ? c->res : cf_set(c, CF_PASS, "seed exchange answered");
}

enum cf_result t_format(struct cf_ctx *c)
{
	const struct osd_obj_id root = { 0, 0 };
	uint64_t parts;
	osd_req *req = NULL;
	int rc = cf_exec(c, req, osd_req_format(&req, c->dev, 0), "FORMAT OSD");

	osd_req_free(req);
	if (rc < 0 || cf_list_all(c, OSD_ACT_LIST, &root, 0) < 0)
		return c->res;
	if (c->nids != 0)
		return cf_set(c, CF_FAIL, "%zu partitions listed after FORMAT OSD", c->nids);
	if (cf_get_u64(c, &root, OSD_APAGE_ROOT_BASE + OSD_APAGE_INFORMATION,
		       OSD_ATTR_RI_NUM_PARTITIONS, &parts) < 0)
		return c->res;
	if (parts != 0)
		return cf_set(c, CF_FAIL, "NUMBER OF PARTITIONS %llu after FORMAT OSD",
			      (unsigned long long)parts);
	return cf_set(c, CF_PASS, "no partitions left");
}

/* A command on @p obj with credential @p cr must fail 5/24/00 in [lo, hi]. */
static enum cf_result refused(struct cf_ctx *c, const struct osd_obj_id *obj,
			      struct osd_credential *cr, const char *what, unsigned lo, unsigned hi)
{
	uint8_t b[8];
	struct iovec iov = { b, sizeof(b) };
	osd_req *req = NULL;
	enum cf_result r;
	int rc = osd_req_read(&req, c->dev, obj, 0, &iov, 1);

	if (rc == 0)
		rc = osd_req_set_credential(req, cr);
	r = cf_expect(c, req, rc, what, OSD_SK_ILLEGAL_REQUEST, OSD_ASC_INVALID_FIELD_IN_CDB, lo,
		      hi);
	osd_req_free(req);
	memset(cr, 0, sizeof(*cr));
	return r;
}

enum cf_result t_cap_wrong_object(struct cf_ctx *c)
{
	struct osd_obj_id a = { 0, 0 }, b = { 0, 0 };
	struct osd_credential cr;

	if (cf_create(c, &a) < 0 || cf_create(c, &b) < 0 ||
	    cf_credential(c, &b, 0, OSD_PERM_READ, c->method, &cr) < 0)
		return c->res;
	return refused(c, &a, &cr, "READ with a capability for another object",
		       (unsigned)osd_cdb_cap_offset(c->ver), cap_last(c));
}

enum cf_result t_cap_permissions(struct cf_ctx *c)
{
	struct osd_obj_id a = { 0, 0 };
	struct osd_credential cr;

	if (cf_create(c, &a) < 0 || cf_credential(c, &a, 0, OSD_PERM_GET_ATTR, c->method, &cr) < 0)
		return c->res;
	return refused(c, &a, &cr, "READ with a capability without READ permission",
		       (unsigned)osd_cdb_cap_offset(c->ver), cap_last(c));
}

enum cf_result t_cap_expired(struct cf_ctx *c)
{
	struct osd_obj_id a = { 0, 0 };
	struct osd_cred_request w;
	struct osd_credential cr;
	int rc;

	if (cf_create(c, &a) < 0)
		return c->res;
	memset(&w, 0, sizeof(w));
	w.version = c->ver;
	w.obj = a;
	w.permissions = OSD_PERM_READ;
	w.method = c->method;
	w.expiration = 1; /* 1970 */
	if ((rc = osd_keyring_credential(&w, &cr, c->d->kr)) < 0)
		return cf_set(c, CF_FAIL, "cannot issue a credential: %s", strerror(-rc));
	return refused(c, &a, &cr, "READ with an expired capability",
		       (unsigned)osd_cdb_cap_offset(c->ver), cap_last(c));
}

enum cf_result t_bad_request_icv(struct cf_ctx *c)
{
	struct osd_obj_id a = { 0, 0 };
	struct osd_credential cr;
	unsigned icv = (unsigned)osd_cdb_icv_offset(c->ver);

	if (cf_create(c, &a) < 0 || cf_credential(c, &a, 0, OSD_PERM_READ, c->method, &cr) < 0)
		return c->res;
	cr.cap_key[0] ^= 0x01; /* signs with a key the OSD does not have */
	return refused(c, &a, &cr, "READ with a wrong request ICV", icv,
		       icv + (unsigned)osd_cdb_icv_len(c->ver) - 1);
}

enum cf_result t_weaker_method(struct cf_ctx *c)
{
	struct osd_obj_id a = { 0, 0 };
	struct osd_credential cr;

	if (cf_create(c, &a) < 0 || cf_credential(c, &a, 0, OSD_PERM_READ, OSD_SEC_NOSEC, &cr) < 0)
		return c->res;
	return refused(c, &a, &cr, "READ under NOSEC in a partition that requires more",
		       (unsigned)osd_cdb_cap_offset(c->ver), cap_last(c));
}

/*
 * Plain SCSI commands every OSD logical unit answers, and OSD CDBs built by
 * hand: OBJECT STRUCTURE CHECK, an unknown service action, a replayed nonce.
 */
#include <stdio.h>
#include <string.h>
#include "conform.h"
#include "answers.h"
#include "tests.h"

#define SCSI_ALLOC 4096 /* data-in room for any answer below */

/* Runs the plain SCSI command @p cdb; 0 with its data-in in @p d (*n bytes),
 * or -1 with the outcome set. */
static int scsi_data(struct cf_ctx *c, const uint8_t *cdb, size_t cdb_len, uint8_t *d,
		     size_t alloc, size_t *n, const char *what)
{
	struct cf_raw r;

	memset(d, 0, alloc);
	if (cf_raw_exec(c, cdb, cdb_len, d, alloc, &r, what) < 0 || cf_raw_good(c, &r, what) < 0)
		return -1;
	*n = r.in_xferred < alloc ? r.in_xferred : alloc;
	return 0;
}

/* The outcome of an answer check (answers.c). */
static enum cf_result verdict(struct cf_ctx *c, int rc, const char *what, const char *why)
{
	return rc < 0 ? cf_set(c, CF_FAIL, "%s: %s", what, why) : cf_set(c, CF_PASS, "%s", why);
}

enum cf_result t_inquiry(struct cf_ctx *c)
{
	static const uint8_t cdb[6] = { 0x12, 0, 0, 0, 96, 0 };
	uint8_t d[SCSI_ALLOC];
	char why[256];
	size_t n;

	if (scsi_data(c, cdb, sizeof(cdb), d, 96, &n, "INQUIRY") < 0)
		return c->res;
	return verdict(c, cf_check_inquiry(d, n, c->ver, why, sizeof(why)), "INQUIRY", why);
}

enum cf_result t_inquiry_vpd(struct cf_ctx *c)
{
	static const uint8_t cdb[6] = { 0x12, 0x01, 0x00, 0, 255, 0 };
	uint8_t d[SCSI_ALLOC];
	char why[256];
	size_t n;

	if (scsi_data(c, cdb, sizeof(cdb), d, 255, &n, "INQUIRY VPD 00h") < 0)
		return c->res;
	return verdict(c, cf_check_vpd_pages(d, n, why, sizeof(why)), "INQUIRY VPD 00h", why);
}

enum cf_result t_report_luns(struct cf_ctx *c)
{
	/* ALLOCATION LENGTH (bytes 6-9) 4096 */
	static const uint8_t cdb[12] = { 0xA0, 0, 0, 0, 0, 0, 0, 0, 0x10, 0, 0, 0 };
	uint8_t d[SCSI_ALLOC];
	char why[256];
	size_t n;

	if (scsi_data(c, cdb, sizeof(cdb), d, SCSI_ALLOC, &n, "REPORT LUNS") < 0)
		return c->res;
	return verdict(c, cf_check_report_luns(d, n, why, sizeof(why)), "REPORT LUNS", why);
}

enum cf_result t_test_unit_ready(struct cf_ctx *c)
{
	static const uint8_t cdb[6] = { 0, 0, 0, 0, 0, 0 };
	struct cf_raw r;

	if (cf_raw_exec(c, cdb, sizeof(cdb), NULL, 0, &r, "TEST UNIT READY") < 0 ||
	    cf_raw_good(c, &r, "TEST UNIT READY") < 0)
		return c->res;
	return cf_set(c, CF_PASS, "GOOD");
}

enum cf_result t_object_structure_check(struct cf_ctx *c)
{
	/* A device management command: libosd signs it with a root capability
	 * (DEV_MGMT) and names the partition to check in the CDB. */
	struct osd_obj_id part = { c->part, 0 };
	osd_req *req = NULL;
	int rc = cf_exec(c, req, osd_req_object_structure_check(&req, c->dev, &part),
			 "OBJECT STRUCTURE CHECK");

	osd_req_free(req);
	return rc < 0 ? c->res : cf_set(c, CF_PASS, "GOOD");
}

enum cf_result t_unknown_service_action(struct cf_ctx *c)
{
	struct osd_obj_id part = { c->part, 0 };
	uint8_t cdb[OSD_CDB_MAX_LEN];
	uint16_t code = c->ver == OSD_V1 ? 0x887F : 0x88FF; /* assigned in neither version */
	struct cf_raw r;
	char got[16];
	int n = cf_raw_osd_cdb(c, OSD_ACT_GET_ATTRIBUTES, code, &part, OSD_PERM_GET_ATTR, cdb,
			       sizeof(cdb));

	if (n < 0 || cf_raw_exec(c, cdb, (size_t)n, NULL, 0, &r, "service action") < 0)
		return c->res;
	if (r.status == OSD_STATUS_GOOD)
		return cf_set(c, CF_FAIL, "service action %04Xh: GOOD, expected ILLEGAL REQUEST", code);
	if (!r.have_sense)
		return cf_set(c, CF_FAIL, "status %02Xh without sense data", r.status);
	c->have_sense = 1;
	c->sense = r.sense;
	cf_sense_code(&r.sense, got, sizeof(got));
	if (r.sense.key == OSD_SK_ILLEGAL_REQUEST &&
	    (r.sense.asc == OSD_ASC_INVALID_OPCODE ||
	     (r.sense.asc == OSD_ASC_INVALID_FIELD_IN_CDB &&
	      (!r.sense.has_field || r.sense.field_pointer == 8 || r.sense.field_pointer == 9)))) {
		c->sense_checked = 1;
		return cf_set(c, CF_PASS, "%s", got);
	}
	return cf_set(c, CF_FAIL, "service action %04Xh: %s, expected 5/20/00 (or 5/24/00 at "
		      "byte 8)", code, got);
}

enum cf_result t_nonce_replay(struct cf_ctx *c)
{
	struct osd_obj_id obj = { 0, 0 };
	uint8_t cdb[OSD_CDB_MAX_LEN];
	struct cf_raw r;
	char got[16];
	int n;

	if (cf_create(c, &obj) < 0)
		return c->res;
	n = cf_raw_osd_cdb(c, OSD_ACT_FLUSH, 0, &obj, osd_sec_required_permissions(OSD_ACT_FLUSH),
			   cdb, sizeof(cdb));
	if (n < 0 || cf_raw_exec(c, cdb, (size_t)n, NULL, 0, &r, "FLUSH") < 0 ||
	    cf_raw_good(c, &r, "FLUSH") < 0)
		return c->res;
	if (cf_raw_exec(c, cdb, (size_t)n, NULL, 0, &r, "FLUSH replayed") < 0)
		return c->res;
	if (r.status == OSD_STATUS_GOOD)
		return cf_set(c, CF_FAIL, "the same CDB (same nonce) ran twice");
	if (!r.have_sense)
		return cf_set(c, CF_FAIL, "replay: status %02Xh without sense data", r.status);
	c->have_sense = 1;
	c->sense = r.sense;
	cf_sense_code(&r.sense, got, sizeof(got));
	if (r.sense.key != OSD_SK_ILLEGAL_REQUEST || r.sense.asc != OSD_ASC_NONCE_NOT_UNIQUE)
		return cf_set(c, CF_FAIL, "replay: %s, expected 5/24/06 NONCE NOT UNIQUE", got);
	c->sense_checked = 1;
	return cf_set(c, CF_PASS, "%s", got);
}

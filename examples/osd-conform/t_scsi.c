/*
 * Plain SCSI commands every OSD logical unit answers, and OSD CDBs built by
 * hand: OBJECT STRUCTURE CHECK, an unknown service action, a replayed nonce.
 */
#include <stdio.h>
#include <string.h>
#include "conform.h"
#include "tests.h"

static uint16_t be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Whether version descriptor @p v names OSD version @p ver (SPC-4 version
 * descriptor table: 0340h-035Fh OSD-1, 0440h-045Fh OSD-2). */
static int descriptor_version(uint16_t v)
{
	if (v >= 0x0340 && v <= 0x035F)
		return OSD_V1;
	if (v >= 0x0440 && v <= 0x045F)
		return OSD_V2;
	return 0;
}

enum cf_result t_inquiry(struct cf_ctx *c)
{
	static const uint8_t cdb[6] = { 0x12, 0, 0, 0, 96, 0 };
	uint8_t d[96];
	struct cf_raw r;
	int any = 0, mine = 0;

	memset(d, 0, sizeof(d));
	if (cf_raw_exec(c, cdb, sizeof(cdb), d, sizeof(d), &r, "INQUIRY") < 0 ||
	    cf_raw_good(c, &r, "INQUIRY") < 0)
		return c->res;
	if (r.in_xferred < 36)
		return cf_set(c, CF_FAIL, "standard data of %zu bytes, at least 36 expected",
			      r.in_xferred);
	if ((d[0] & 0x1F) != 0x11 || (d[0] >> 5) != 0)
		return cf_set(c, CF_FAIL, "peripheral qualifier %u type %02Xh, expected 0 and 11h "
			      "(object-based storage)", d[0] >> 5, d[0] & 0x1F);
	if ((d[3] & 0x0F) != 2)
		return cf_set(c, CF_FAIL, "RESPONSE DATA FORMAT %u, expected 2", d[3] & 0x0F);
	if (d[4] < 31)
		return cf_set(c, CF_FAIL, "ADDITIONAL LENGTH %u, at least 31 expected", d[4]);
	for (size_t off = 58; off + 2 <= 74 && off + 2 <= r.in_xferred; off += 2) {
		int v = descriptor_version(be16(d + off));

		any |= v != 0;
		mine |= v == (int)c->ver;
	}
	if (any && !mine)
		return cf_set(c, CF_FAIL, "the version descriptors name OSD but not OSD-%d, the "
			      "version this run speaks", c->ver);
	return cf_set(c, CF_PASS, "type 11h%s", mine ? ", version descriptor present" :
		      ", no OSD version descriptor");
}

enum cf_result t_inquiry_vpd(struct cf_ctx *c)
{
	static const uint8_t cdb[6] = { 0x12, 0x01, 0x00, 0, 255, 0 };
	uint8_t d[255];
	struct cf_raw r;
	size_t n;

	memset(d, 0, sizeof(d));
	if (cf_raw_exec(c, cdb, sizeof(cdb), d, sizeof(d), &r, "INQUIRY VPD 00h") < 0 ||
	    cf_raw_good(c, &r, "INQUIRY VPD 00h") < 0)
		return c->res;
	if (r.in_xferred < 4 || (d[0] & 0x1F) != 0x11 || d[1] != 0x00)
		return cf_set(c, CF_FAIL, "VPD page 00h header: type %02Xh page %02Xh (%zu bytes)",
			      d[0] & 0x1F, d[1], r.in_xferred);
	n = be16(d + 2);
	if (n + 4 > r.in_xferred)
		return cf_set(c, CF_FAIL, "PAGE LENGTH %zu beyond the %zu bytes sent", n,
			      r.in_xferred);
	for (size_t i = 0; i < n; i++)
		if (d[4 + i] == 0x00)
			return cf_set(c, CF_PASS, "%zu pages listed", n);
	return cf_set(c, CF_FAIL, "page 00h does not list itself");
}

enum cf_result t_report_luns(struct cf_ctx *c)
{
	static const uint8_t cdb[12] = { 0xA0, 0, 0, 0, 0, 0, 0, 0, 0x10, 0, 0, 0 };
	uint8_t d[4096];
	struct cf_raw r;
	uint32_t len;

	memset(d, 0, sizeof(d));
	if (cf_raw_exec(c, cdb, sizeof(cdb), d, sizeof(d), &r, "REPORT LUNS") < 0 ||
	    cf_raw_good(c, &r, "REPORT LUNS") < 0)
		return c->res;
	len = be32(d);
	if (r.in_xferred < 16 || len < 8 || len % 8)
		return cf_set(c, CF_FAIL, "LUN LIST LENGTH %u in %zu bytes: a multiple of 8, at "
			      "least one LUN expected", len, r.in_xferred);
	return cf_set(c, CF_PASS, "%u LUNs", len / 8);
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
	struct osd_obj_id part = { c->part, 0 };
	uint8_t cdb[OSD_CDB_MAX_LEN];
	struct cf_raw r;
	int n = cf_raw_osd_cdb(c, OSD_ACT_OBJECT_STRUCTURE_CHECK, 0, &part,
			       osd_sec_required_permissions(OSD_ACT_OBJECT_STRUCTURE_CHECK), cdb,
			       sizeof(cdb));

	if (n < 0 || cf_raw_exec(c, cdb, (size_t)n, NULL, 0, &r, "OBJECT STRUCTURE CHECK") < 0 ||
	    cf_raw_good(c, &r, "OBJECT STRUCTURE CHECK") < 0)
		return c->res;
	return cf_set(c, CF_PASS, "GOOD");
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
	      (!r.sense.has_field || r.sense.field_pointer == 8 || r.sense.field_pointer == 9))))
		return cf_set(c, CF_PASS, "%s", got);
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
	return cf_set(c, CF_PASS, "%s", got);
}
